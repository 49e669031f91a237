"""One job's detail: stages, the fit (score, the checklist of what the posting asks against
what the profile proves, the minimum-fit threshold with "Prepare anyway"), the tailored
materials (``MaterialsPanel``: the résumé and letter to edit, their PDF files) and the
per-job actions. Refetches when an event names this job; the actions answer in plain words.
Materials written from the bundled sample profile say so. Re-tailor asks first when the user
edited the résumé or letter (it would replace their version).

The "Contacts" group at the bottom is a slot (``contacts_slot``) for ``ContactsPanel``
(``desktop/views/contacts_panel.py``): embedded when that module exists.
"""

from __future__ import annotations

import asyncio
import html
import importlib.util
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient, ApiRequestError, StreamedEvent
from desktop.formatting import describe_api_error, stage_reason_words
from desktop.plain_text import PlainLabel, plain_tooltip, rich_label
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.live_view import LiveView
from desktop.views.partials.blocked_site_notice import BlockedSiteNotice
from desktop.views.partials.fit_checklist import (
    FitChecklist,
    cap_text,
    coverage_text,
    has_materials,
    offers_prepare_anyway,
    threshold_text,
)
from desktop.views.partials.jobs_table_model import (
    ATTENTION,
    STAGE_ORDER,
    STAGE_TITLES,
    STATUS_TONES,
    STATUS_WORDS,
    current_stage,
)
from desktop.views.partials.materials_panel import MaterialsPanel, has_user_edits
from desktop.views.partials.scroll_column import fill_with_scroll_column
from desktop.views.status_indicators import COLORS

RETRYABLE = frozenset({"failed", "exhausted", "blocked", "canceled"})
ACTIVE = frozenset({"queued", "running"})
NOOP_WORDS = {
    "preparation_running": "This job is already being prepared.",
    "already_succeeded": "That stage is already done.",
    "nothing_running": "Nothing is running for this job.",
    "not_scored": "Score this job first: its fit decides what gets prepared.",
}
SAMPLE_MARK = "from the sample profile, not yours"
ROBOTS_CODE = "ENRICH_ROBOTS_DISALLOWED"
EDITED_NAMES = {("resume",): "this résumé", ("cover_letter",): "this cover letter",
                ("resume", "cover_letter"): "this résumé and letter"}
EDITS_KEPT = "Not re-tailored: your edits are kept."


def reason_words(stage: str, reason: str, enrich_status: str | None = None) -> str:
    """A stage's block reason in plain words. Downstream stages of a robots block wait for
    Enrich (the notice above the stages explains the block itself); once Enrich is done,
    one the resumed work did not reach is left for the user's Run."""
    if reason != ROBOTS_CODE:
        return stage_reason_words(reason)
    if stage == "enrich":
        return "the site asks tools not to read it"
    if enrich_status == "succeeded":
        return "stopped by the block; Run finishes it"
    return "waiting for Enrich"


def stages_by_name(detail: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["stage"]: row for row in detail.get("stages") or []}


def retailor_question(edited: list[str]) -> str:
    """The question before a re-tailor replaces the user's own version."""
    what = EDITED_NAMES.get(tuple(edited), "this résumé or letter")
    return f"You edited {what}. Re-tailoring replaces your edits. Re-tailor anyway?"


def describe_action(action: str, answer: dict[str, Any]) -> str:
    if answer.get("noopReason"):
        return NOOP_WORDS.get(answer["noopReason"], answer["noopReason"].replace("_", " "))
    if action == "mark":
        mark = answer.get("userStatus")
        return f"Marked {mark}." if mark else "Mark cleared."
    if action == "cancel":
        return "Cancellation requested; stages stop shortly."
    if action == "prepare-anyway":
        return "Preparing it anyway: the résumé, letter and PDFs are being written."
    if action == "retailor" and answer.get("workflowId"):
        return "Re-tailoring: the résumé, letter and PDFs are being written again."
    if answer.get("alreadyRunning"):
        return "Already running."
    if answer.get("workflowId"):
        return "Started."
    return "Done."


PROVIDER_NAMES = {"anthropic": "Anthropic", "openai_compat": ""}  # the model names itself


def scored_by_text(score: dict[str, Any]) -> str:
    """Who scored, in plain words: "scored by the built-in offline model", else
    "scored by <provider> <model>"; unknown stays unknown."""
    provider, model = score.get("provider"), score.get("model")
    if provider == "offline" or model == "offline-heuristic":
        return "scored by the built-in offline model"
    name = PROVIDER_NAMES.get(provider, provider) if provider else ""
    words = " ".join(part for part in (name, model) if part)
    return f"scored by {words}" if words else "scorer unknown"


async def _profile_or_none(client: ApiClient) -> dict[str, Any] | None:
    """The profile, only to mark materials written from the sample; never blocks the job."""
    try:
        return await client.profile()
    except ApiRequestError:
        return None


class JobDetail(LiveView):
    """Not bound to a view key: it refetches only for events that name its job."""

    action_finished = Signal(str, object)  # action, answer dict or the exception

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.job_key: str | None = None
        self.detail: dict[str, Any] | None = None
        self.profile_sample = False
        self._build()
        controller.event_received.connect(self._on_event)

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        _scroll, body, layout = fill_with_scroll_column(self, margins=(10, 4, 6, 6), spacing=10,
                                                        wrap_width=True)

        self.placeholder = QLabel("Select a job to see its stages, score and materials.", body)
        self.placeholder.setObjectName("emptyHint")
        self.placeholder.setStyleSheet("color: palette(placeholder-text);")
        layout.addWidget(self.placeholder)

        self.content = QWidget(body)
        content = QVBoxLayout(self.content)
        content.setContentsMargins(0, 0, 0, 0)
        content.setSpacing(10)
        layout.addWidget(self.content)
        layout.addStretch(1)

        self.title_label = rich_label(QLabel(self.content))
        self.title_label.setObjectName("jobTitle")
        self.title_label.setWordWrap(True)
        self.title_label.setOpenExternalLinks(True)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        content.addWidget(self.title_label)

        self.blocked_notice = BlockedSiteNotice(self.controller, self.content)
        self.blocked_notice.resolved.connect(lambda _answer: self.invalidate())
        content.addWidget(self.blocked_notice)
        content.addWidget(self._build_stages())
        content.addWidget(self._build_actions())
        content.addWidget(self._build_score())
        content.addWidget(self._build_materials())
        self.contacts_group = QGroupBox("Contacts", self.content)
        self.contacts_slot = QVBoxLayout(self.contacts_group)  # ContactsPanel goes here
        self.contacts_panel = self._make_contacts_panel()
        if self.contacts_panel is None:
            self.contacts_group.hide()
        else:
            self.contacts_slot.addWidget(self.contacts_panel)
        content.addWidget(self.contacts_group)
        self.content.hide()

    def _build_stages(self) -> QGroupBox:
        group = QGroupBox("Stages", self.content)
        grid = QGridLayout(group)
        grid.setHorizontalSpacing(14)
        self.stage_labels: dict[str, QLabel] = {}
        for row, stage in enumerate(STAGE_ORDER):
            grid.addWidget(QLabel(STAGE_TITLES[stage], group), row, 0)
            label = rich_label(QLabel("—", group))
            label.setObjectName(f"stage_{stage}")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setWordWrap(True)  # a reason never widens the pane
            grid.addWidget(label, row, 1)
            self.stage_labels[stage] = label
        grid.setColumnStretch(1, 1)
        return group

    def _build_actions(self) -> QGroupBox:
        group = QGroupBox("Actions", self.content)
        layout = QVBoxLayout(group)
        run_row = QHBoxLayout()
        self.stage_combo = QComboBox(group)
        self.stage_combo.setObjectName("runStageCombo")
        for stage in STAGE_ORDER:
            self.stage_combo.addItem(f"from {STAGE_TITLES[stage]}", stage)
        self.run_button = self._button("Run", "runStageButton", group, self._run_stage,
                                       "Run this stage and the ones after it")
        self.retry_button = self._button("Retry", "retryButton", group, self._retry,
                                         "Reset the stage that stopped and run it again")
        self.cancel_button = self._button("Cancel", "cancelJobButton", group,
                                          lambda: self._act("cancel"),
                                          "Stop this job's preparation")
        run_row.addWidget(QLabel("Prepare", group))
        run_row.addWidget(self.stage_combo)
        for button in (self.run_button, self.retry_button):
            run_row.addWidget(button)
        run_row.addStretch(1)
        rerun_row = QHBoxLayout()
        self.rescore_button = self._button("Rescore", "rescoreButton", group,
                                           lambda: self._act("rescore"),
                                           "Score this job again against your profile")
        self.retailor_button = self._button("Re-tailor", "retailorButton", group,
                                            self._retailor,
                                            "Write the resume, cover letter and PDFs again")
        rerun_row.addWidget(self.rescore_button)
        rerun_row.addWidget(self.retailor_button)
        rerun_row.addWidget(self.cancel_button)
        rerun_row.addStretch(1)
        mark_row = QHBoxLayout()
        self.applied_button = self._button("Mark applied", "markAppliedButton", group,
                                           lambda: self._act("mark", userStatus="applied"))
        self.skipped_button = self._button("Skip", "markSkippedButton", group,
                                           lambda: self._act("mark", userStatus="skipped"),
                                           "Hide this job from what needs doing")
        self.clear_button = self._button("Clear mark", "clearMarkButton", group,
                                         lambda: self._act("mark", userStatus=None))
        for button in (self.applied_button, self.skipped_button, self.clear_button):
            mark_row.addWidget(button)
        mark_row.addStretch(1)
        self.action_result = PlainLabel("", group)
        self.action_result.setObjectName("actionResult")
        self.action_result.setWordWrap(True)
        layout.addLayout(run_row)
        layout.addLayout(rerun_row)
        layout.addLayout(mark_row)
        layout.addWidget(self.action_result)
        return group

    def _build_score(self) -> QGroupBox:
        group = QGroupBox("Fit", self.content)
        layout = QVBoxLayout(group)
        self.score_label = rich_label(QLabel("—", group))
        self.score_label.setObjectName("scoreLabel")
        self.cap_label = self._fit_note(group, "capLabel")
        threshold_row = QHBoxLayout()
        self.threshold_label = self._fit_note(group, "thresholdLabel")
        self.prepare_anyway_button = self._button(
            "Prepare anyway", "prepareAnywayButton", group, lambda: self._act("prepare-anyway"),
            "Write the résumé, cover letter and PDFs for this job despite its low fit")
        threshold_row.addWidget(self.threshold_label, 1)
        threshold_row.addWidget(self.prepare_anyway_button, 0, Qt.AlignmentFlag.AlignTop)
        self.checklist = FitChecklist(group)
        self.coverage_label = PlainLabel("", group)
        self.coverage_label.setObjectName("coverageLabel")
        self.coverage_label.setWordWrap(True)
        self.coverage_label.hide()
        self.rationale_label = rich_label(QLabel("", group))
        self.rationale_label.setObjectName("rationaleLabel")
        self.rationale_label.setWordWrap(True)
        self.rationale_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.score_label)
        layout.addWidget(self.cap_label)
        layout.addLayout(threshold_row)
        layout.addWidget(self.checklist)
        layout.addWidget(self.coverage_label)
        layout.addWidget(self.rationale_label)
        return group

    def _fit_note(self, parent: QWidget, name: str) -> QLabel:
        label = PlainLabel("", parent)
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setStyleSheet(f"color: {COLORS['busy']}; font-weight: 600;")
        label.hide()
        return label

    def _build_materials(self) -> QGroupBox:
        group = QGroupBox("Materials", self.content)
        self.materials_group = group
        layout = QVBoxLayout(group)
        self.materials = MaterialsPanel(self.controller, group)
        self.materials.server_changed.connect(self.invalidate)
        self.pdf_buttons = self.materials.pdf_files.open_buttons
        layout.addWidget(self.materials)
        return group

    def _button(self, text: str, name: str, parent: QWidget, slot: Callable[..., Any],
                tip: str | None = None) -> QPushButton:
        button = QPushButton(text, parent)
        button.setObjectName(name)
        if tip:
            button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    def _make_contacts_panel(self) -> QWidget | None:
        if importlib.util.find_spec("desktop.views.contacts_panel") is None:
            return None
        from desktop.views.contacts_panel import ContactsPanel  # another helper's module
        return ContactsPanel(self.controller)

    # -- data -----------------------------------------------------------------------------

    def set_job(self, job_key: str | None) -> None:
        if job_key == self.job_key:
            return
        self.job_key = job_key
        self.detail = None
        self.action_result.setText("")
        self.materials.set_job(job_key)
        self.blocked_notice.show_job(None)
        if self.contacts_panel is not None and hasattr(self.contacts_panel, "set_job"):
            self.contacts_panel.set_job(job_key)
        if job_key is None:
            self.content.hide()
            self.placeholder.show()
            return
        self.invalidate()
        if self.active:
            self.refresh()

    async def fetch(self, client: ApiClient) -> dict[str, Any] | None:
        key = self.job_key
        if key is None:
            return None
        job, profile = await asyncio.gather(client.job(key), _profile_or_none(client))
        sample = bool(((profile or {}).get("profile") or {}).get("sample"))
        return {"job": job, "profileSample": sample}

    def apply(self, answer: dict[str, Any] | None) -> None:
        result = (answer or {}).get("job")
        if result is None or result.get("jobId") != self.job_key:
            return  # the selection moved on while this was in flight
        self.detail = result
        self.profile_sample = answer["profileSample"]
        self.placeholder.hide()
        self.content.show()
        self._show_title(result)
        self.blocked_notice.show_job(result)
        self._show_stages(result)
        self._show_score(result.get("score"))
        self._show_coverage(result.get("keywordCoverage"))
        self._show_threshold(result)
        self._show_materials(result)
        self._update_buttons()

    def show_error(self, error: Exception) -> None:
        self._say(describe_api_error(error), "bad")

    def _on_event(self, event: StreamedEvent) -> None:
        if self.job_key is not None and event.payload.get("jobId") == self.job_key:
            self.invalidate()

    # -- showing --------------------------------------------------------------------------

    def _show_title(self, job: dict[str, Any]) -> None:
        where = job.get("location") or "location unknown"
        url = html.escape(job.get("url") or "")
        link = f" · <a href='{url}'>posting</a>" if url else ""
        self.title_label.setText(
            f"<span style='font-size:13pt'><b>{html.escape(job.get('title') or 'Untitled')}"
            f"</b></span><br>{html.escape(job.get('company') or '?')} · {html.escape(where)}"
            f"{link}")

    def _show_stages(self, job: dict[str, Any]) -> None:
        rows = stages_by_name(job)
        enrich_status = (rows.get("enrich") or {}).get("status")
        for stage, label in self.stage_labels.items():
            row = rows.get(stage)
            status = row["status"] if row else "pending"
            words = STATUS_WORDS.get(status, status)
            reason = (row or {}).get("errorCode") or (row or {}).get("blockedReason")
            if reason:
                words += f" ({reason_words(stage, reason, enrich_status)})"
            if row and row.get("attempt", 0) > 1:
                words += f", attempt {row['attempt']}"
            tone = STATUS_TONES.get(status)
            color = COLORS[tone] if tone else "palette(text)"
            label.setText(f"<span style='color:{color}'>{html.escape(words)}</span>")

    def _show_score(self, score: dict[str, Any] | None) -> None:
        if not score:
            self.score_label.setText("Not scored yet")
            self.rationale_label.setText("")
            self.checklist.set_ledger(None)
            self.cap_label.hide()
            return
        self.score_label.setText(
            f"<span style='font-size:15pt'><b>{score['score']}</b></span> / 100"
            f" <span style='color:{COLORS['idle']}'>({html.escape(scored_by_text(score))})"
            "</span>")
        # The score's version and its model in words (the slugs are the API's).
        self.score_label.setToolTip(plain_tooltip(f"Score version {score.get('version')}, "
                                                  f"{scored_by_text(score)}"))
        ledger = score.get("ledger")
        self.checklist.set_ledger(ledger)
        cap = cap_text(ledger)
        self.cap_label.setText(cap or "")
        self.cap_label.setVisible(cap is not None)
        self.rationale_label.setText(self._rationale_html(score, with_lists=ledger is None))

    def _show_coverage(self, items: list[dict[str, Any]] | None) -> None:
        text = coverage_text(items)  # terms come from postings: plain text only
        self.coverage_label.setText(text or "")
        self.coverage_label.setVisible(text is not None)

    @staticmethod
    def _rationale_html(score: dict[str, Any], *, with_lists: bool) -> str:
        """The scorer's sentence; before the checklist existed, the matched / missing lists."""
        lines = [html.escape(score.get("rationale") or "")]
        if with_lists and score.get("matched"):
            lines.append("<b>Matches:</b> " + html.escape(", ".join(score["matched"])))
        if with_lists and score.get("missing"):
            lines.append("<b>Missing:</b> " + html.escape(", ".join(score["missing"])))
        return "<br>".join(line for line in lines if line)

    def _show_threshold(self, job: dict[str, Any]) -> None:
        text = threshold_text(job)
        self.threshold_label.setText(text or "")
        self.threshold_label.setVisible(text is not None)
        self.prepare_anyway_button.setVisible(offers_prepare_anyway(job))

    def _show_materials(self, job: dict[str, Any]) -> None:
        marked = self.profile_sample and (job.get("resume") or job.get("coverLetter"))
        self.materials_group.setTitle(f"Materials — {SAMPLE_MARK}" if marked else "Materials")
        self.materials.show_job(job)

    def _update_buttons(self) -> None:
        job = self.detail or {}
        rows = stages_by_name(job)
        statuses = {stage: row["status"] for stage, row in rows.items()}
        busy = any(status in ACTIVE for status in statuses.values())
        stage, status = current_stage(statuses)
        self.run_button.setEnabled(not busy)
        self.stage_combo.setEnabled(not busy)
        if stage is not None:
            self.stage_combo.setCurrentIndex(STAGE_ORDER.index(stage))
        self.retry_button.setEnabled(not busy and status in RETRYABLE)
        self.cancel_button.setEnabled(busy)
        scored = statuses.get("score") == "succeeded"
        self.rescore_button.setEnabled(not busy and scored)
        self.prepare_anyway_button.setEnabled(not busy and scored)
        self.retailor_button.setEnabled(not busy and statuses.get("tailor") == "succeeded")
        self.materials.render_button.setEnabled(not busy and has_materials(job))
        mark = job.get("userStatus")
        self.applied_button.setEnabled(mark != "applied")
        self.skipped_button.setEnabled(mark != "skipped")
        self.clear_button.setEnabled(mark is not None)

    def _say(self, text: str, tone: str) -> None:
        self.action_result.setText(text)
        self.action_result.setStyleSheet(f"color: {COLORS[tone]};")

    # -- actions --------------------------------------------------------------------------

    def _run_stage(self) -> None:
        self._act("run-stage", stage=self.stage_combo.currentData())

    def _retry(self) -> None:
        statuses = {s: r["status"] for s, r in stages_by_name(self.detail or {}).items()}
        stage = next((s for s in STAGE_ORDER if statuses.get(s) in ATTENTION), None)
        if stage is not None:
            self._act("retry-stage", stage=stage, runAfter=True)

    def _act(self, action: str, **body: Any) -> None:
        key = self.job_key
        if key is None:
            return
        self._say("Working…", "idle")

        def done(answer: dict[str, Any]) -> None:
            self._say(describe_action(action, answer), "ok")
            emit(self.action_finished, action, answer)
            self.invalidate()

        def failed(error: Exception) -> None:
            if isinstance(error, ApiRequestError) and error.code == "materials_edited":
                self._retailor(edited=["unknown"], error=error)  # the detail did not know
                return
            known = isinstance(error, ApiRequestError) and error.code in NOOP_WORDS
            self._say(NOOP_WORDS[error.code] if known else describe_api_error(error), "bad")
            emit(self.action_finished, action, error)

        self.controller.call(lambda client: client.job_action(key, action, **body), done,
                             failed, name=f"job-{action}")

    def _retailor(self, _checked: bool = False, *, edited: list[str] | None = None,
                  error: Exception | None = None) -> None:
        """Re-tailor; first ask when that replaces the user's own résumé or letter (known
        from the detail, or told by the API's 409 ``materials_edited``)."""
        edited = has_user_edits(self.detail) if edited is None else edited
        if not edited:
            self._act("retailor")
            return
        asked = QMessageBox.question(
            self, "Re-tailor?", retailor_question(edited),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        if asked == QMessageBox.StandardButton.Yes:
            self._act("retailor", discardEdits=True)
            return
        self._say(EDITS_KEPT, "idle")
        if error is not None:
            emit(self.action_finished, "retailor", error)

    def open_pdf(self, kind: str) -> bool:
        return self.materials.pdf_files.open(kind)
