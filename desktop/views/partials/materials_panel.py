"""The job detail's materials: why the writer's last output was refused, the résumé and the
letter as editors ("Save and re-render PDF", "Undo changes"), the PDF files ("Re-render
PDF", then Open / Show in folder / Save as… each; Save as… also offers the Word file), and
whether the résumé reads cleanly in applicant-tracking systems.

Edits are never lost to a refresh: a dirty editor is not reloaded (a newer version waits
until "Undo changes"), and unsaved edits of one job come back when the user returns to it.
Saving (``PUT /v1/jobs/{id}/materials/{kind}``) stores them server-side as the user's own
generation, so they survive restarts; the PDFs are rendered from it. The save goes through
the truthfulness gate: a claim the profile does not hold is named under the editor, with
"Keep it — I can back this up" (saved, and the kept claim is recorded) and "Edit again"
(nothing saved). After a save the status follows the PDF: "… done." when its
``PdfRendered`` event arrives, or a plain error when the PDF stage fails or takes too long.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient, ApiRequestError, ApiUnavailable, StreamedEvent
from desktop.formatting import describe_api_error, stage_reason_words
from desktop.plain_text import PlainLabel
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.partials.fit_checklist import is_below_threshold
from desktop.views.partials.materials_editor import DocEditor, LetterEditor, ResumeEditor
from desktop.views.partials.materials_words import (
    current_shape,
    rejection_text,
    validation_words,
)
from desktop.views.partials.pdf_files import PdfFiles, ats_check_text
from desktop.views.status_indicators import COLORS

# kind -> (job detail key, route kind, tab title, "not yet" words)
KINDS = {
    "resume": ("resume", "resume", "Tailored résumé", "No tailored résumé yet."),
    "cover_letter": ("coverLetter", "cover-letter", "Cover letter", "No cover letter yet."),
}
BELOW_THRESHOLD = "Not prepared: the fit is below your threshold."
NEWER_WAITING = ("A newer version was written while you were editing. Your changes are kept; "
                 "Undo changes shows the newer one.")
REJECTION_HINT = "If it is true, add it to your profile, then click Re-tailor."
SAVED_RENDERING = "Saved. The PDF is being made again from your version…"
RENDER_DONE = SAVED_RENDERING + " done."
RENDER_WAIT_MS = 180_000  # the PDF stage normally takes seconds
UNSUPPORTED_INTRO = "Not saved yet. Your profile does not hold this:"
UNSUPPORTED_KEEP = ("If you can back it up, keep it: it goes into the PDF, and JobCtrl notes "
                    "that you kept it.")
KEEP_WORDS = "Keep it — I can back this up"


def claim_words(claim: dict[str, Any]) -> str:
    """One claim the truthfulness gate named in the user's edit, and what to do about it."""
    said, why = str(claim.get("claim") or "").strip(), str(claim.get("why") or "").strip()
    named = f"“{said}”: {why}" if said else why or "something"
    return f"{named} — add it to your profile, or remove it here."


def unsupported_words(claims: list[dict[str, Any]]) -> str:
    return "\n".join([UNSUPPORTED_INTRO, *("• " + claim_words(c) for c in claims),
                      UNSUPPORTED_KEEP])


def kept_words(claims: list[dict[str, Any]]) -> str:
    """What the user kept in this version although the profile does not hold it."""
    named = "; ".join(f"“{c.get('claim')}” ({c.get('why')})" for c in claims)
    return f"You kept what your profile does not hold: {named}." if claims else ""


def render_failed_words(error_code: str | None) -> str:
    return (f"Saved, but the PDF was not made again: {stage_reason_words(error_code)}. "
            "Try Re-render PDF below.")


def render_timed_out_words(wait_ms: int) -> str:
    minutes = max(1, round(wait_ms / 60_000))
    return (f"Saved, but the PDF was not ready after {minutes} minute{'s' * (minutes != 1)}. "
            "It appears under PDF files when it is made; if not, try Re-render PDF below.")


def failure_words(error: Exception) -> str:
    """Why a save or a render did not happen, in plain words."""
    if isinstance(error, ApiUnavailable) or (
            isinstance(error, ApiRequestError) and error.code == "worker_runtime_unavailable"):
        return "JobCtrl's services are not ready yet. Try again in a moment."
    if isinstance(error, ApiRequestError) and error.code == "preparation_running":
        return "This job is being prepared right now. Try again when it is done."
    if isinstance(error, ApiRequestError) and error.status == 422:
        return "Some of it is not accepted:\n" + validation_words(error.message)
    return describe_api_error(error)


def has_user_edits(job: dict[str, Any] | None) -> list[str]:
    """The materials of ``job`` the user wrote (``resume``, ``cover_letter``)."""
    return [kind for kind, (key, *_rest) in KINDS.items()
            if (((job or {}).get(key) or {}).get("content") or {}).get("edited")]


class MaterialPage(QWidget):
    """One tab: an editor, its buttons and what happened under it."""

    dirty_changed = Signal()

    def __init__(self, kind: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.kind = kind
        self.setObjectName(f"materialPage_{kind}")
        self.pending: dict[str, Any] | None = None  # newer content kept back while dirty
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.empty = PlainLabel("", self)
        self.empty.setObjectName("materialEmpty")
        self.empty.setWordWrap(True)
        self.editor: DocEditor = ResumeEditor(self) if kind == "resume" else LetterEditor(self)
        self.editor.changed.connect(self._on_changed)
        buttons = QHBoxLayout()
        self.save_button = QPushButton("Save and re-render PDF", self)
        self.save_button.setObjectName(f"save_{kind}")
        self.save_button.setToolTip("Keep your version and make its PDF again")
        self.undo_button = QPushButton("Undo changes", self)
        self.undo_button.setObjectName(f"undo_{kind}")
        self.undo_button.clicked.connect(self.undo)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.undo_button)
        buttons.addStretch(1)
        self.status = PlainLabel("", self)
        self.status.setObjectName(f"status_{kind}")
        self.status.setWordWrap(True)
        self.kept = PlainLabel("", self)
        self.kept.setObjectName(f"kept_{kind}")
        self.kept.setWordWrap(True)
        self.kept.setStyleSheet(f"color: {COLORS['busy']};")
        self.kept.hide()
        self.claims = QFrame(self)
        self.claims.setObjectName(f"claims_{kind}")
        claims = QVBoxLayout(self.claims)
        claims.setContentsMargins(0, 4, 0, 4)
        self.claims_text = PlainLabel("", self.claims)
        self.claims_text.setObjectName(f"claimsText_{kind}")
        self.claims_text.setWordWrap(True)
        self.claims_text.setStyleSheet(f"color: {COLORS['bad']};")
        answers = QHBoxLayout()
        self.keep_button = QPushButton(KEEP_WORDS, self.claims)
        self.keep_button.setObjectName(f"keep_{kind}")
        self.edit_again_button = QPushButton("Edit again", self.claims)
        self.edit_again_button.setObjectName(f"editAgain_{kind}")
        self.edit_again_button.clicked.connect(self.edit_again)
        answers.addWidget(self.keep_button)
        answers.addWidget(self.edit_again_button)
        answers.addStretch(1)
        claims.addWidget(self.claims_text)
        claims.addLayout(answers)
        self.claims.hide()
        # After a save: the PDF stage's run to wait for (job, workflow id), and how long.
        self.rendering: tuple[str, str | None] | None = None
        self.render_timer = QTimer(self)
        self.render_timer.setSingleShot(True)
        layout.addWidget(self.empty)
        layout.addWidget(self.kept)
        layout.addWidget(self.editor)
        layout.addLayout(buttons)
        layout.addWidget(self.claims)
        layout.addWidget(self.status)
        self.clear("")

    # -- showing --------------------------------------------------------------------------

    def clear(self, empty_text: str) -> None:
        self.pending = None
        self.stop_waiting()
        self.hide_claims()
        self.show_kept([])
        self.editor.baseline = None
        self.editor.fields = []
        self.empty.setText(empty_text)
        self.say("", "idle")
        self._show_editor(False)

    def show_material(self, material: dict[str, Any] | None, empty_text: str) -> None:
        """The server's latest version, unless the user is editing (then it waits)."""
        if material is None:
            if not self.editor.is_dirty():
                self.clear(empty_text)
            return
        content = current_shape(self.kind, material.get("content") or {})
        if not self.editor.is_dirty():
            self.show_kept(material.get("keptClaims") or [])
        if content == self.editor.baseline:
            return
        if self.editor.is_dirty():
            self.pending = content
            self.say(NEWER_WAITING, "busy")
            return
        self.load(content)

    def load(self, content: dict[str, Any], draft: dict[str, Any] | None = None) -> None:
        self.pending = None
        self.editor.load(content)
        if draft is not None:
            self.editor.fill(draft)
        self._show_editor(True)

    def undo(self) -> None:
        if self.editor.baseline is not None:
            self.load(self.pending or self.editor.baseline)
            self.say("", "idle")

    def show_claims(self, claims: list[dict[str, Any]]) -> None:
        """What the gate named in the edit; nothing is saved until the user answers."""
        self.claims_text.setText(unsupported_words(claims))
        self.claims.show()
        self.say("", "idle")

    def show_kept(self, claims: list[dict[str, Any]]) -> None:
        self.kept.setText(kept_words(claims))
        self.kept.setVisible(bool(claims))

    def hide_claims(self) -> None:
        self.claims.hide()
        self.claims_text.setText("")

    def edit_again(self) -> None:
        self.hide_claims()
        self.say("Not saved. Change the text, then save again.", "idle")
        first = next((f.widget for f in self.editor.fields if f.changed()), None)
        if first is not None:
            first.setFocus()

    def wait_for_pdf(self, job_key: str, workflow_id: str | None) -> None:
        self.rendering = (job_key, workflow_id)
        self.render_timer.start(RENDER_WAIT_MS)

    def stop_waiting(self) -> None:
        self.rendering = None
        self.render_timer.stop()

    def pdf_event(self, event: StreamedEvent) -> None:
        """The PDF of the saved version is made (done) or its stage gave up (an error)."""
        if self.rendering is None:
            return
        job_key, workflow_id = self.rendering
        payload = event.payload
        run = payload.get("workflowId")
        if payload.get("jobId") != job_key or (workflow_id and run and run != workflow_id):
            return
        if event.type == "PdfRendered" and payload.get("kind") == f"{self.kind}_pdf":
            self.stop_waiting()
            self.say(RENDER_DONE, "ok")
        elif event.type in ("StageFailed", "StageExhausted") and payload.get("stage") == "pdf":
            self.stop_waiting()
            self.say(render_failed_words(payload.get("errorCode")), "bad")

    def render_timed_out(self) -> None:
        if self.rendering is not None:
            self.stop_waiting()
            self.say(render_timed_out_words(RENDER_WAIT_MS), "bad")

    def say(self, text: str, tone: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {COLORS[tone]};")
        self.status.setVisible(bool(text))

    def _show_editor(self, shown: bool) -> None:
        self.editor.setVisible(shown)
        self.empty.setVisible(not shown)
        self._on_changed()

    def _on_changed(self) -> None:
        if self.claims.isVisibleTo(self) and self.editor.is_dirty():
            self.hide_claims()  # the warning was about the text before this change
        dirty = self.editor.is_dirty()
        self.save_button.setVisible(self.editor.baseline is not None)
        self.undo_button.setVisible(self.editor.baseline is not None)
        self.save_button.setEnabled(dirty)
        self.undo_button.setEnabled(dirty or self.pending is not None)
        emit(self.dirty_changed)


class MaterialsPanel(QWidget):
    saved = Signal(str, object)       # kind, the answer or the error (tests wait on it)
    server_changed = Signal()         # something was saved or started: refetch the job
    rendered = Signal(object)         # "Re-render PDF": the answer or the error

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.job_key: str | None = None
        self.drafts: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.rejections = PlainLabel("", self)
        self.rejections.setObjectName("materialRejections")
        self.rejections.setWordWrap(True)
        self.rejections.setStyleSheet(f"color: {COLORS['bad']};")
        self.rejections.hide()
        # A tab bar over pages shown one at a time, not a QTabWidget: its stack is as tall
        # as the tallest page, and a short letter would sit on the résumé's height.
        self.tabs = QTabBar(self)
        self.tabs.setObjectName("materialTabs")
        self.tabs.setExpanding(False)
        self.stack = QFrame(self)
        self.stack.setFrameShape(QFrame.Shape.StyledPanel)
        stack = QVBoxLayout(self.stack)
        stack.setContentsMargins(0, 0, 0, 0)
        self.pages = {kind: MaterialPage(kind, self.stack) for kind in KINDS}
        for kind, page in self.pages.items():
            self.tabs.addTab(KINDS[kind][2])
            stack.addWidget(page)
            page.save_button.clicked.connect(lambda _checked=False, p=page: self.save(p))
            page.keep_button.clicked.connect(lambda _checked=False, p=page: self.save(p, keep=True))
            page.render_timer.timeout.connect(page.render_timed_out)
            page.dirty_changed.connect(lambda p=page: self._title_tab(p))
        self.tabs.currentChanged.connect(self.show_tab)
        self.show_tab(0)
        files_row = QHBoxLayout()
        files_title = QLabel("Files (PDF and Word)", self)
        files_title.setStyleSheet("font-weight: 600;")
        self.render_button = QPushButton("Re-render PDF", self)
        self.render_button.setObjectName("renderPdfButton")
        self.render_button.setToolTip("Make both PDFs and their Word files again from the résumé "
                                      "and letter above (e.g. after changing the template in "
                                      "Settings)")
        self.render_button.clicked.connect(self.render)
        files_row.addWidget(files_title)
        files_row.addStretch(1)
        files_row.addWidget(self.render_button)
        self.pdf_files = PdfFiles(self)
        # What did not come back names the résumé's own words: plain text, never markup.
        self.ats_check = PlainLabel("", self)
        self.ats_check.setObjectName("atsCheck")
        self.ats_check.setWordWrap(True)
        self.ats_check.hide()
        layout.addWidget(self.rejections)
        layout.addWidget(self.tabs)
        layout.addWidget(self.stack)
        layout.addLayout(files_row)
        layout.addWidget(self.pdf_files)
        layout.addWidget(self.ats_check)
        controller.event_received.connect(self._on_event)

    # -- showing --------------------------------------------------------------------------

    def set_job(self, job_key: str | None) -> None:
        """Another job: keep this one's unsaved edits for when the user comes back."""
        if job_key == self.job_key:
            return
        for kind, page in self.pages.items():
            if self.job_key is not None and page.editor.is_dirty():
                self.drafts[(self.job_key, kind)] = (page.editor.baseline,
                                                     page.editor.document())
            page.clear("")
        self.pdf_files.set_files([])
        self.pdf_files.say("")
        self._show_ats_check(None)
        self.job_key = job_key

    def show_job(self, job: dict[str, Any]) -> None:
        self._show_rejections(job.get("materialRejections") or [])
        below = is_below_threshold(job)
        for kind, page in self.pages.items():
            key, _route, _title, missing = KINDS[kind]
            material = job.get(key)
            draft = self.drafts.pop((self.job_key, kind), None)
            if draft is not None and material is not None:
                page.load(*draft)
            page.show_material(material, BELOW_THRESHOLD if below else missing)
        self.pdf_files.set_files(job.get("artifacts") or [])
        self._show_ats_check(job.get("atsCheck"))

    def _show_ats_check(self, check: dict[str, Any] | None) -> None:
        text = ats_check_text(check)
        self.ats_check.setText(text)
        tone = "ok" if check and check.get("ok") else "busy"  # amber: worth a look, not an error
        self.ats_check.setStyleSheet(f"color: {COLORS[tone]};")
        self.ats_check.setVisible(bool(text))

    def is_dirty(self) -> bool:
        return any(page.editor.is_dirty() for page in self.pages.values())

    def _show_rejections(self, rejections: list[dict[str, Any]]) -> None:
        lines = [rejection_text(rejection) for rejection in rejections]
        self.rejections.setText("\n".join([*lines, REJECTION_HINT]) if lines else "")
        self.rejections.setVisible(bool(lines))

    def _title_tab(self, page: MaterialPage) -> None:
        title = KINDS[page.kind][2]
        self.tabs.setTabText(list(self.pages.values()).index(page),
                             f"{title} (not saved)" if page.editor.is_dirty() else title)

    def show_tab(self, index: int) -> None:
        """Show one page, as tall as it is (the hidden one takes no height)."""
        self.tabs.setCurrentIndex(index)
        for number, page in enumerate(self.pages.values()):
            page.setVisible(number == index)

    # -- actions --------------------------------------------------------------------------

    def _on_event(self, event: StreamedEvent) -> None:
        for page in self.pages.values():
            page.pdf_event(event)

    def save(self, page: MaterialPage, *, keep: bool = False) -> None:
        """Save the page's edit; ``keep``: the user keeps what the gate named."""
        key, document = self.job_key, page.editor.document()
        if key is None or page.editor.baseline is None:
            return
        route = KINDS[page.kind][1]
        page.save_button.setEnabled(False)
        page.hide_claims()
        page.say("Saving…", "busy")

        def done(answer: dict[str, Any]) -> None:
            if key == self.job_key:
                page.load({**(answer.get("content") or document), "edited": True})
                page.show_kept(answer.get("keptClaims") or [])
                page.say(SAVED_RENDERING, "ok")
                page.wait_for_pdf(key, answer.get("workflowId"))
            emit(self.saved, page.kind, answer)
            emit(self.server_changed)

        def failed(error: Exception) -> None:
            if key == self.job_key:
                if isinstance(error, ApiRequestError) and error.code == "unsupported_claims":
                    page.show_claims(error.unsupported_claims or [{"why": error.message}])
                else:
                    page.say(f"Nothing was saved. {failure_words(error)}", "bad")
                page.save_button.setEnabled(page.editor.is_dirty())
            emit(self.saved, page.kind, error)

        async def request(client: ApiClient) -> dict[str, Any]:
            if keep:
                return await client.put_material(key, route, document, keep_unsupported=True)
            return await client.put_material(key, route, document)

        self.controller.call(request, done, failed, name=f"save-{route}")

    def render(self) -> None:
        key = self.job_key
        if key is None:
            return
        self.pdf_files.say("Starting…", "idle")

        async def request(client: ApiClient) -> dict[str, Any]:
            return await client.job_action(key, "render-pdf")

        def done(answer: dict[str, Any]) -> None:
            self.pdf_files.say("Making the PDFs again; they appear here when ready.", "ok")
            emit(self.rendered, answer)
            emit(self.server_changed)

        def failed(error: Exception) -> None:
            self.pdf_files.say(f"The PDFs were not made again. {failure_words(error)}", "bad")
            emit(self.rendered, error)

        self.controller.call(request, done, failed, name="render-pdf")
