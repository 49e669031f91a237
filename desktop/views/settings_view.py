"""Settings: sources, profile, AI model (with "Test connection"), keys, budget, schedule,
applying, the PDFs' template and paper size, email account and an external Temporal.

The API is the validator: Save sends ``PATCH /v1/settings`` with what the form shows; a 422
names the fields, and each message appears under its input while nothing is saved. Keys
and the SMTP password are written to the keyring (``PUT /v1/secrets/{name}``) only after the
settings were accepted, and are never shown again.

Two pages, each with one Save: "Your profile" (``ProfilePage``: the résumé and the
preferences, ``PUT /v1/profile``) and "App settings" (everything else). A refetch never
overwrites edits that are not saved yet.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient, ApiRequestError
from desktop.event_router import PIPELINES, SETTINGS, SPEND
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.theme import primary_button_style
from desktop.views.live_view import LiveView
from desktop.views.partials.profile_page import ProfilePage
from desktop.views.partials.schedule_picker import SchedulePicker
from desktop.views.partials.scroll_column import scroll_column
from desktop.views.partials.settings_form import (
    ErrorLabel,
    WheelGuard,
    field_messages,
    hint,
    match_fields,
)
from desktop.views.partials.settings_sources import SourcesEditor
from desktop.views.status_indicators import COLORS

PROVIDERS = (("offline", "Offline (no key, no network, $0)"),
             ("openai_compat", "OpenAI-compatible (OpenAI, Ollama, LM Studio, …)"),
             ("anthropic", "Anthropic"))
SMTP_SECURITY = (("starttls", "STARTTLS"), ("ssl", "SSL/TLS"), ("none", "None"))
TEMPLATES = (("classic", "Classic"), ("compact", "Compact"))
PAPERS = (("auto", "Automatic (from your country)"), ("a4", "A4"), ("letter", "US Letter"))
LETTER_LANGUAGES = (("profile", "Your résumé's language"), ("posting", "The posting's language"))
SMTP_PASSWORD_SECRET = "smtp-password"


def budget_reset_local_time(now: datetime | None = None) -> str:
    """The spend day is the UTC day: the local clock time its next midnight falls on."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    midnight = datetime.combine(moment.date() + timedelta(days=1), time(), tzinfo=UTC)
    return f"{midnight.astimezone():%H:%M}"


def key_secret_name(provider: str) -> str:
    return f"{provider.replace('_', '-')}-key"


def schedule_text(schedule: dict[str, Any] | None, error: str | None) -> str:
    """The next run in local time, or why it is not known (never a made-up time)."""
    if schedule is None:
        return f"Next run: unknown ({error or 'not read yet'})"
    if not schedule.get("enabled"):
        return "Scheduled discovery is off."
    times = schedule.get("nextRunTimes") or []
    if schedule.get("state") != "active" or not times:
        reason = schedule.get("reason") or schedule.get("state") or "unknown"
        return f"Next run: unknown ({str(reason).replace('_', ' ')})"
    local = datetime.fromisoformat(str(times[0]).replace("Z", "+00:00")).astimezone()
    return f"Next run: {local:%a %d %b %H:%M} (your time)"


INSECURE_TRANSPORT = "insecure_transport_not_confirmed"
CONFIRMATION = "insecureTransportConfirmed"
UNENCRYPTED_WORDS = {
    "smtp": ("Your e-mail password would travel unencrypted to {where}: the security choice"
             " is “None”, so anyone on the network between this computer and the mail server"
             " could read it. Choose STARTTLS or SSL/TLS if your mail provider offers it.\n\n"
             "Send it anyway?"),
    "llm": ("Your API key would travel unencrypted to {where} (an http:// address, not"
            " https://), so anyone on the network between this computer and that server"
            " could read it and use it at your cost. Use an https:// address if the server"
            " has one.\n\nSend it anyway?"),
}


def ask_to_send_unencrypted(parent: QWidget | None, section: str, where: str,
                            answered: Callable[[bool], None]) -> QMessageBox:
    """Ask, in plain words, whether the password (``smtp``) or the API key (``llm``) may
    travel unencrypted; ``answered(True)`` only for an explicit "Send it anyway".

    Window-modal but never ``exec()``: the question is asked from the save's callback, and
    a nested event loop there would stall every other background task (qasync cannot
    enter a task while the save's own is still executing)."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Send it unencrypted?",
                      UNENCRYPTED_WORDS[section].format(where=where or "the server"),
                      QMessageBox.StandardButton.NoButton, parent)
    anyway = box.addButton("Send it anyway", QMessageBox.ButtonRole.AcceptRole)
    keep = box.addButton("Don't save", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.finished.connect(lambda _result: answered(box.clickedButton() is anyway))
    box.open()
    return box


class SettingsView(LiveView):
    view_keys = frozenset({SETTINGS})
    saved = Signal()          # after a save the API accepted
    save_failed = Signal(object)
    llm_tested = Signal(object)  # the answer dict, or the error

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.loaded: dict[str, Any] | None = None
        self.secrets: dict[str, Any] | None = None
        self.dirty = False
        self._filling = False
        self.errors: dict[str, ErrorLabel] = {}
        self._build()
        self._watch_edits()

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.pages = QTabWidget(self)
        self.pages.setObjectName("settingsPages")
        self.pages.setDocumentMode(True)
        self.profile_page = ProfilePage(self.controller, self.pages)
        self.profile_editor = self.profile_page.editor
        self.profile_page.draft_opened.connect(lambda: self.show_page("profile"))
        self.pages.addTab(self.profile_page, "Your profile")
        self.pages.addTab(self._build_app_settings(), "App settings")
        outer.addWidget(self.pages, 1)

    def _build_app_settings(self) -> QWidget:
        page = QWidget(self.pages)
        page.setObjectName("appSettingsPage")
        self.app_settings_page = page
        outer = QVBoxLayout(page)
        outer.setContentsMargins(0, 0, 0, 0)
        self.scroll, body, column = scroll_column(page, margins=(4, 8, 12, 8), spacing=12)
        self.body = body
        outer.addWidget(self.scroll, 1)

        save_row = QHBoxLayout()
        save_row.setContentsMargins(4, 6, 12, 2)
        self.status = PlainLabel(page)
        self.status.setObjectName("settingsStatus")
        self.status.setWordWrap(True)
        self.save_button = QPushButton("Save settings", page)
        self.save_button.setObjectName("saveSettings")
        self.save_button.setStyleSheet(primary_button_style())
        self.save_button.clicked.connect(self.save)
        self.revert_button = QPushButton("Undo changes", page)
        self.revert_button.setObjectName("revertSettings")
        self.revert_button.clicked.connect(self.revert)
        save_row.addWidget(self.status, 1)
        save_row.addWidget(self.revert_button)
        save_row.addWidget(self.save_button)
        outer.addLayout(save_row)

        for box in (self._sources_box(), self._llm_box(), self._budget_box(),
                    self._schedule_box(), self._apply_box(), self._documents_box(),
                    self._smtp_box(),
                    self._advanced_box()):
            column.addWidget(box)
        column.addStretch(1)
        return page

    def show_page(self, page: str) -> None:
        """``profile`` or ``settings``."""
        self.pages.setCurrentWidget(self.profile_page if page == "profile"
                                    else self.app_settings_page)

    def _group(self, title: str) -> tuple[QGroupBox, QFormLayout]:
        box = QGroupBox(title, self.body)
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        return box, form

    def _field(self, form: QFormLayout, label: str, widget: QWidget, field: str,
               note: str | None = None) -> None:
        """One input with its inline error (and an optional hint) under it."""
        box = QWidget(self.body)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(widget)
        if note:
            layout.addWidget(hint(note, box))
        error = ErrorLabel(field, box)
        self.errors[field] = error
        layout.addWidget(error)
        form.addRow(label, box)

    def _line(self, name: str, placeholder: str = "", password: bool = False) -> QLineEdit:
        edit = QLineEdit(self.body)
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        if password:
            edit.setEchoMode(QLineEdit.EchoMode.Password)
        return edit

    def _sources_box(self) -> QGroupBox:
        box, form = self._group("Job sources")
        self.sources = SourcesEditor(box)
        self._field(form, "", self.sources, "sources",
                    "Company boards (Greenhouse, Lever, Ashby), feeds and files. "
                    "Unticked sources are kept but not searched.")
        return box

    def _llm_box(self) -> QGroupBox:
        box, form = self._group("AI model")
        self.provider = QComboBox(box)
        self.provider.setObjectName("llm.provider")
        for value, text in PROVIDERS:
            self.provider.addItem(text, value)
        self._field(form, "Provider", self.provider, "llm.provider")
        self.base_url = self._line("llm.baseUrl", "http://localhost:11434/v1")
        self._field(form, "Address", self.base_url, "llm.baseUrl")
        self.model = self._line("llm.model", "e.g. gpt-4o-mini, llama3.1, claude-3-5-haiku")
        self._field(form, "Model", self.model, "llm.model")
        self.api_key = self._line("llm.apiKey", "", password=True)
        self._field(form, "API key", self.api_key, "llm.apiKeySecret")
        test_row = QWidget(box)
        row = QHBoxLayout(test_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.test_button = QPushButton("Test connection", test_row)
        self.test_button.setObjectName("testLlm")
        self.test_button.clicked.connect(self.test_connection)
        self.test_result = PlainLabel(test_row)
        self.test_result.setObjectName("testLlmResult")
        self.test_result.setWordWrap(True)
        row.addWidget(self.test_button)
        row.addWidget(self.test_result, 1)
        form.addRow("", test_row)
        self.provider.currentIndexChanged.connect(self._update_llm_inputs)
        return box

    def _budget_box(self) -> QGroupBox:
        box, form = self._group("Spending")
        self.budget = self._line("dailyBudgetUsd", "25")
        self._field(form, "Daily budget (US$)", self.budget, "dailyBudgetUsd",
                    "0 means no limit. At the limit, new scoring and writing waits until "
                    f"the budget starts again at {budget_reset_local_time()} your time.")
        # "No single job board may use more than [50]% of a day's budget."
        self.source_share = self._spin("maxSourceShareOfDailyBudget", 1, 100)
        self.source_share.setSuffix("%")
        self.source_share.setValue(50)
        self._field(form, "Share one job board may use", self.source_share,
                    "maxSourceShareOfDailyBudget",
                    "No single job board may use more than this much of a day's budget, so "
                    "one very large board cannot spend it all. With one board turned on, it "
                    "may use the whole budget. 100% means no limit per board.")
        return box

    def _schedule_box(self) -> QGroupBox:
        box, form = self._group("Scheduled discovery")
        self.schedule_enabled = QCheckBox("Run Discover on a schedule", box)
        self.schedule_enabled.setObjectName("discoverySchedule.enabled")
        self._field(form, "", self.schedule_enabled, "discoverySchedule.enabled")
        self.schedule = SchedulePicker(box)
        self.schedule.setObjectName("discoverySchedule.cron")
        self._field(form, "When", self.schedule, "discoverySchedule.cron")
        self.next_run = PlainLabel(box)
        self.next_run.setObjectName("nextRun")
        form.addRow("", self.next_run)
        return box

    def _apply_box(self) -> QGroupBox:
        box, form = self._group("Applying")
        self.auto_apply = QCheckBox("Keep applying automatically (standing apply loop)", box)
        self.auto_apply.setObjectName("autoApply")
        self._field(form, "", self.auto_apply, "autoApply")
        self.approval = QCheckBox("Only apply to jobs I approved in Apply Review", box)
        self.approval.setObjectName("applyApprovalRequired")
        self._field(form, "", self.approval, "applyApprovalRequired")
        self.concurrency = self._spin("applyConcurrency", 1, 8)
        self._field(form, "Applications at once", self.concurrency, "applyConcurrency")
        self.min_fit = self._spin("minFitScore", 0, 100)
        self._field(form, "Minimum fit score", self.min_fit, "minFitScore",
                    "Jobs scored below this get no tailored resume or letter.")
        return box

    def _documents_box(self) -> QGroupBox:
        box, form = self._group("Résumé and letter files (PDF and Word)")
        self.template = self._choice("materials.template", TEMPLATES)
        self._field(form, "Résumé template", self.template, "materials.template")
        self.paper = self._choice("materials.paper", PAPERS)
        self._field(form, "Paper size", self.paper, "materials.paper",
                    "Applies to PDFs made from now on. To update a job's PDFs, open the job "
                    "and click Re-render PDF.")
        self.letter_language = self._choice("materials.letterLanguage", LETTER_LANGUAGES)
        self._field(form, "Letter language", self.letter_language, "materials.letterLanguage",
                    "With a model. Without one, the letter is in your résumé's language: it quotes it.")
        return box

    def _choice(self, name: str, choices: tuple[tuple[str, str], ...]) -> QComboBox:
        combo = QComboBox(self.body)
        combo.setObjectName(name)
        for value, text in choices:
            combo.addItem(text, value)
        return combo

    def _spin(self, name: str, low: int, high: int) -> QSpinBox:
        spin = QSpinBox(self.body)
        spin.setObjectName(name)
        spin.setRange(low, high)
        spin.setButtonSymbols(QAbstractSpinBox.ButtonSymbols.UpDownArrows)
        spin.setMaximumWidth(120)
        return spin

    def _smtp_box(self) -> QGroupBox:
        box, form = self._group("Email account (for applications by email)")
        self.smtp_host = self._line("smtp.host", "smtp.example.org")
        self._field(form, "Server", self.smtp_host, "smtp.host")
        self.smtp_port = self._spin("smtp.port", 1, 65535)
        self._field(form, "Port", self.smtp_port, "smtp.port")
        self.smtp_security = self._choice("smtp.security", SMTP_SECURITY)
        self._field(form, "Security", self.smtp_security, "smtp.security")
        self.smtp_user = self._line("smtp.username", "you@example.org")
        self._field(form, "User name", self.smtp_user, "smtp.username")
        self.smtp_password = self._line("smtp.password", "", password=True)
        self._field(form, "Password", self.smtp_password, "smtp.passwordSecret")
        self.smtp_from = self._line("smtp.fromAddress", "you@example.org")
        self._field(form, "From address", self.smtp_from, "smtp.fromAddress")
        return box

    def _advanced_box(self) -> QGroupBox:
        box, form = self._group("Advanced")
        self.temporal_address = self._line("temporal.address", "blank: built in")
        self._field(form, "External Temporal", self.temporal_address, "temporal.address",
                    "host:7233 of a Temporal cluster. Takes effect when JobCtrl restarts.")
        self.temporal_web_ui = QCheckBox("Temporal Web UI (for developers)", box)
        self.temporal_web_ui.setObjectName("temporal.webUi")
        self._field(form, "", self.temporal_web_ui, "temporal.webUi",
                    "Off by default. It has no login: anyone on this computer who finds its "
                    "port can see and change your runs. Takes effect when JobCtrl restarts.")
        return box

    def focus_profile(self) -> None:
        """"Your profile" with its top in view and the cursor in Name: the first-run panel
        and an imported draft bring the user here."""
        self.show_page("profile")
        self.profile_page.focus()

    def _watch_edits(self) -> None:
        """Any edit of a setting marks the settings dirty (a refetch keeps them)."""
        for widget in self.body.findChildren(QWidget):
            if isinstance(widget, QLineEdit):
                widget.textEdited.connect(self._mark_dirty)
            elif isinstance(widget, QCheckBox):
                widget.toggled.connect(self._mark_dirty)
            elif isinstance(widget, QComboBox):
                widget.currentIndexChanged.connect(self._mark_dirty)
            elif isinstance(widget, QSpinBox):
                widget.valueChanged.connect(self._mark_dirty)
            elif isinstance(widget, QPlainTextEdit | QTableWidget):
                pass  # the sources table reports through SourcesEditor.changed
        self.sources.changed.connect(self._mark_dirty)
        self.schedule.edited.connect(self._mark_dirty)
        self.wheel_guard = WheelGuard(self)
        self.wheel_guard.guard_all(self.body)

    def _mark_dirty(self, *_args) -> None:
        if not self._filling:
            self.dirty = True
            self._set_status("Unsaved changes.", "busy")

    # -- LiveView -------------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> dict[str, Any]:
        result: dict[str, Any] = {"settings": await client.settings(),
                                  "profile": await client.profile()}
        try:
            result["secrets"] = await client.secret_names()
        except ApiRequestError as error:
            result["secretsError"] = describe_api_error(error)
        try:
            result["schedule"] = await client.discovery_schedule()
        except ApiRequestError as error:  # an older API without the route: unknown
            result["scheduleError"] = ("not available" if error.status == 404
                                       else describe_api_error(error))
        return result

    def apply(self, result: dict[str, Any]) -> None:
        self.secrets = result.get("secrets")
        self.next_run.setText(schedule_text(result.get("schedule"), result.get("scheduleError")))
        if not self.dirty:
            self.fill(result["settings"])
        self.profile_page.show_saved(result["profile"])
        self._show_key_hints()

    def show_error(self, error: Exception) -> None:
        self._set_status(f"Could not read the settings: {describe_api_error(error)}", "bad")

    # -- the form -------------------------------------------------------------------------

    def fill(self, settings: dict[str, Any]) -> None:
        self._filling = True
        try:
            self.loaded = settings
            self.sources.set_sources(settings.get("sources") or [])
            llm = settings.get("llm") or {}
            self.provider.setCurrentIndex(max(self.provider.findData(llm.get("provider")), 0))
            self.base_url.setText(llm.get("baseUrl") or "")
            self.model.setText(llm.get("model") or "")
            self.api_key.clear()
            self.budget.setText(budget_field_text(settings.get("dailyBudgetUsd")))
            self.source_share.setValue(share_percent(settings.get("maxSourceShareOfDailyBudget")))
            schedule = settings.get("discoverySchedule") or {}
            self.schedule_enabled.setChecked(bool(schedule.get("enabled")))
            self.schedule.set_cron(schedule.get("cron"))
            self.auto_apply.setChecked(bool(settings.get("autoApply")))
            self.approval.setChecked(bool(settings.get("applyApprovalRequired", True)))
            self.concurrency.setValue(int(settings.get("applyConcurrency") or 1))
            self.min_fit.setValue(int(settings.get("minFitScore") or 0))
            materials = settings.get("materials") or {}
            self.template.setCurrentIndex(max(self.template.findData(materials.get("template")), 0))
            self.paper.setCurrentIndex(max(self.paper.findData(materials.get("paper")), 0))
            self.letter_language.setCurrentIndex(
                max(self.letter_language.findData(materials.get("letterLanguage")), 0))
            smtp = settings.get("smtp") or {}
            self.smtp_host.setText(smtp.get("host") or "")
            self.smtp_port.setValue(int(smtp.get("port") or 587))
            self.smtp_security.setCurrentIndex(
                max(self.smtp_security.findData(smtp.get("security") or "starttls"), 0))
            self.smtp_user.setText(smtp.get("username") or "")
            self.smtp_password.clear()
            self.smtp_from.setText(smtp.get("fromAddress") or "")
            temporal = settings.get("temporal") or {}
            self.temporal_address.setText(temporal.get("address") or "")
            self.temporal_web_ui.setChecked(temporal.get("webUi") is True)
            self.dirty = False
            self._update_llm_inputs()
        finally:
            self._filling = False

    def changes(self) -> dict[str, Any]:
        """The PATCH body: everything this form shows, as typed (the API validates)."""
        loaded = self.loaded or {}
        provider = self.provider.currentData()
        llm: dict[str, Any] = {"provider": provider,
                               "baseUrl": self.base_url.text().strip() or None,
                               "model": self.model.text().strip() or None}
        if self.api_key.text():
            llm["apiKeySecret"] = key_secret_name(provider)
        # Never the saved confirmation of an unencrypted password: only the user's answer
        # to the question Save asks (a confirmation is for the server it was given for).
        saved_smtp = {key: value for key, value in (loaded.get("smtp") or {}).items()
                      if key != CONFIRMATION}
        smtp = {**saved_smtp,
                "host": self.smtp_host.text().strip() or None,
                "port": self.smtp_port.value(),
                "security": self.smtp_security.currentData(),
                "username": self.smtp_user.text().strip() or None,
                "fromAddress": self.smtp_from.text().strip() or None}
        if self.smtp_password.text():
            smtp["passwordSecret"] = SMTP_PASSWORD_SECRET
        return {
            "sources": self.sources.sources(),
            "llm": llm,
            "dailyBudgetUsd": _budget_value(self.budget.text()),
            "maxSourceShareOfDailyBudget": share_value(
                self.source_share.value(), loaded.get("maxSourceShareOfDailyBudget")),
            "discoverySchedule": {"enabled": self.schedule_enabled.isChecked(),
                                  "cron": self.schedule.cron()},
            "autoApply": self.auto_apply.isChecked(),
            "applyApprovalRequired": self.approval.isChecked(),
            "applyConcurrency": self.concurrency.value(),
            "minFitScore": self.min_fit.value(),
            "materials": {"template": self.template.currentData(),
                          "paper": self.paper.currentData(),
                          "letterLanguage": self.letter_language.currentData()},
            "smtp": smtp,
            "temporal": {"address": self.temporal_address.text().strip() or None,
                         "webUi": self.temporal_web_ui.isChecked()},
        }

    def revert(self) -> None:
        self.dirty = False
        self.show_field_errors({})
        if self.loaded is not None:
            self.fill(self.loaded)
        self._set_status("", "idle")

    def show_field_errors(self, messages: dict[str, str]) -> None:
        for field, label in self.errors.items():
            label.show_message(match_fields(messages, field))

    # -- save -----------------------------------------------------------------------------

    def save(self) -> None:
        """Send the form (the Save button; its ``clicked(bool)`` is not ours to pass on)."""
        self._send(frozenset())

    def _send(self, confirmed: frozenset[str]) -> None:
        """Send the form. ``confirmed``: the sections ("smtp", "llm") whose unencrypted
        password or key the user agreed to send when asked."""
        changes = self.changes()
        for section in confirmed:
            changes[section][CONFIRMATION] = True
        keys = [(changes["llm"].get("apiKeySecret"), self.api_key.text()),
                (changes["smtp"].get("passwordSecret"), self.smtp_password.text())]
        keys = [(name, value) for name, value in keys if name and value]
        self.save_button.setEnabled(False)
        self._set_status("Saving…", "busy")

        async def request(client: ApiClient) -> dict[str, Any]:
            saved = await client.patch_settings(**changes)
            for name, value in keys:  # only once the settings were accepted
                await client.put_secret(name, value)
            return saved

        self.controller.call(request, self._on_saved,
                             lambda error: self._on_save_failed(error, confirmed),
                             name="settings-save")

    def _on_saved(self, saved: dict[str, Any]) -> None:
        self.save_button.setEnabled(True)
        self.show_field_errors({})
        self.dirty = False
        self.fill(saved)
        self._set_status("Saved.", "ok")
        emit(self.saved)
        # Settings changes are not events: tell the views that read them (the tray's
        # spend ring follows the budget, Pipelines its ETA) and refetch ours.
        emit(self.controller.views_invalidated, frozenset({SETTINGS, SPEND, PIPELINES}))

    def _on_save_failed(self, error: Exception, confirmed: frozenset[str] = frozenset()) -> None:
        self.save_button.setEnabled(True)
        if isinstance(error, ApiRequestError) and error.code == INSECURE_TRANSPORT:
            section = "llm" if any(field.startswith("llm.") for field in error.fields) else "smtp"
            where = (self.smtp_host.text().strip() if section == "smtp"
                     else self.base_url.text().strip())
            if section not in confirmed:
                self._set_status("Waiting for your answer…", "busy")
                ask_to_send_unencrypted(self, section, where, lambda yes: (
                    self._unencrypted_answered(yes, error, confirmed | {section})))
                return
            self._refuse_unencrypted(error)
            return
        elif isinstance(error, ApiRequestError) and error.status == 422:
            messages = field_messages(error)
            self.show_field_errors(messages)
            self._set_status("Nothing was saved: fix the highlighted fields.", "bad")
        else:
            self._set_status(f"Nothing was saved: {describe_api_error(error)}", "bad")
        emit(self.save_failed, error)

    def _unencrypted_answered(self, yes: bool, error: ApiRequestError,
                              confirmed: frozenset[str]) -> None:
        if yes:
            self._send(confirmed)  # the same form, with the user's yes
        else:
            self._refuse_unencrypted(error)

    def _refuse_unencrypted(self, error: ApiRequestError) -> None:
        # The status says why; the fields hold allowed values, so none is marked wrong.
        self._set_status("Nothing was saved: the password or key would travel "
                         "unencrypted.", "bad")
        emit(self.save_failed, error)

    # -- test connection ------------------------------------------------------------------

    def test_connection(self) -> None:
        llm = self.changes()["llm"]
        key = self.api_key.text()
        self.test_button.setEnabled(False)
        self.test_result.setText("Testing…")
        self.test_result.setStyleSheet(f"color: {COLORS['busy']};")

        async def request(client: ApiClient) -> dict[str, Any]:
            if key:  # a typed key is tried (and kept in the keyring) before saving
                await client.put_secret(llm["apiKeySecret"], key)
            return await client.test_llm(llm)

        def done(answer: dict[str, Any]) -> None:
            self.test_button.setEnabled(True)
            cost = "" if answer.get("offline") else f" Test cost ≈ ${answer['costUsd']:.4f}."
            self._test_said(answer["message"] + cost, "ok")
            self.show_field_errors({})
            emit(self.llm_tested, answer)

        def failed(error: Exception) -> None:
            self.test_button.setEnabled(True)
            if isinstance(error, ApiRequestError):
                self._test_said(error.message, "bad")
                self.show_field_errors(field_messages(error) if error.status == 422
                                       else {field: "Check this." for field in error.fields})
            else:
                self._test_said(describe_api_error(error), "bad")
            emit(self.llm_tested, error)

        self.controller.call(request, done, failed, name="llm-test")

    def _test_said(self, text: str, tone: str) -> None:
        self.test_result.setText(text)
        self.test_result.setStyleSheet(f"color: {COLORS[tone]};")

    # -- small things ---------------------------------------------------------------------

    def _update_llm_inputs(self) -> None:
        offline = self.provider.currentData() == "offline"
        for widget in (self.base_url, self.model, self.api_key):
            widget.setEnabled(not offline)
        self._show_key_hints()

    def _show_key_hints(self) -> None:
        names = set((self.secrets or {}).get("names") or [])
        where = (self.secrets or {}).get("backend") or "the keyring"
        llm = (self.loaded or {}).get("llm") or {}
        stored = llm.get("apiKeySecret") in names
        self.api_key.setPlaceholderText(
            f"stored in {where}; type to replace" if stored
            else f"kept in {where}, never shown again")
        smtp = (self.loaded or {}).get("smtp") or {}
        self.smtp_password.setPlaceholderText(
            f"stored in {where}; type to replace" if smtp.get("passwordSecret") in names
            else f"kept in {where}, never shown again")

    def _set_status(self, text: str, tone: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {COLORS[tone]};")
        self.status.setTextFormat(Qt.TextFormat.PlainText)


def budget_field_text(value: Any) -> str:
    """The ceiling as saved, every digit kept: rounding it to cents here would make the
    next save of any other setting change the budget (0.132 -> 0.13) unasked."""
    if value is None:
        return ""
    amount = Decimal(str(value))
    return f"{amount.normalize():f}" if amount % 1 else f"{amount:.0f}"


def share_percent(value: Any) -> int:
    """The saved share of the day's budget one source may use, as a whole percent (50)."""
    try:
        share = float(value) if value is not None else 0.5
    except (TypeError, ValueError):
        share = 0.5
    return min(max(round(share * 100), 1), 100)


def share_value(percent: int, saved: Any) -> float:
    """The share to save: the saved one as it was when the field still shows it (0.333
    shows as 33%, and saving another setting must not change it unasked), else the
    percent shown."""
    if saved is not None and share_percent(saved) == percent:
        return float(saved)
    return percent / 100


def _budget_value(text: str) -> Any:
    """A number when it reads as one (``12,50`` too), else the text, for the API to refuse
    with a message under the field."""
    cleaned = text.strip().replace("$", "").replace(" ", "")
    if cleaned.count(",") == 1 and "." not in cleaned:
        cleaned = cleaned.replace(",", ".")
    try:
        return str(Decimal(cleaned)) if cleaned else text
    except InvalidOperation:
        return text
