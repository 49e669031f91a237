"""Settings → Your profile: the structured editor with the page's one Save.

Top to bottom: "Import résumé…" and "Export as JSON Resume…"; the sample-profile banner
(while the saved profile is the bundled sample); the review banner of an imported draft;
the editor (a scroll column); the status, "Discard changes" and "Save profile".

Nothing is saved but by "Save profile" (``PUT /v1/profile``). An imported draft replaces
what the editor shows until it is saved or discarded; "Discard changes" shows the saved
profile again. A refetch never overwrites edits or a draft under review.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QPushButton, QVBoxLayout, QWidget

from desktop.client import ApiRequestError
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel
from desktop.presenters.profile_import import draft_name, replace_question
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.theme import primary_button_style
from desktop.views.partials import profile_import
from desktop.views.partials.profile_import import (
    IMPORT_KINDS,
    DraftBanner,
    ProfileImporter,
    notice_frame,
    notice_label,
)
from desktop.views.partials.profile_improve import ImprovePanel
from desktop.views.partials.scroll_column import scroll_column
from desktop.views.partials.settings_form import field_messages, hint
from desktop.views.partials.settings_profile import ProfileEditor
from desktop.views.status_indicators import COLORS

SAMPLE_BANNER = "Sample profile — not yours. Import your résumé to replace it."


class ProfilePage(QWidget):
    saved = Signal(object)         # the PUT answer, or the error
    draft_opened = Signal()        # a draft is shown for review (the window shows this page)
    exported = Signal(object)      # the written path, or the error

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.saved_revision: int | None = None
        self.saved_profile: dict[str, Any] | None = None
        self.reviewing = False
        self.draft_from: str | None = None  # what the draft under review came from
        self._draft_profile: dict[str, Any] | None = None  # the draft as it was imported
        self.replace_box: QMessageBox | None = None
        self.importer = ProfileImporter(controller, self)
        self.importer.confirm = self.confirm_replace
        self.importer.drafted.connect(self.review_draft)
        self.importer.progress.connect(self._on_import_progress)
        self._build()
        self._update_buttons()

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(self._build_tools())
        outer.addWidget(self._build_sample_banner())
        self.draft_banner = DraftBanner(self)
        outer.addWidget(self.draft_banner)
        self.improve_panel = ImprovePanel(self.controller, self)
        self.improve_panel.improved.connect(self.review_improved)
        outer.addWidget(self.improve_panel)
        self.scroll, body, column = scroll_column(self, margins=(4, 4, 12, 8), spacing=8,
                                                  wrap_width=True)
        self.editor = ProfileEditor(body)
        self.editor.edited.connect(self._on_edited)
        column.addWidget(self.editor)
        column.addStretch(1)
        outer.addWidget(self.scroll, 1)
        outer.addLayout(self._build_save_row())

    def _build_tools(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.setContentsMargins(4, 6, 12, 0)
        self.import_button = self._button("Import résumé…", "importResume", self.choose_import,
                                          f"Read your résumé ({IMPORT_KINDS}) into a draft "
                                          "to check before saving")
        self.export_button = self._button("Export as JSON Resume…", "exportResume",
                                          self.choose_export,
                                          "Save the saved profile's résumé as a JSON Resume file")
        row.addWidget(self.import_button)
        row.addWidget(self.export_button)
        row.addWidget(hint("or drop a résumé file anywhere on this window", self), 1)
        return row

    def _build_sample_banner(self) -> QWidget:
        frame = notice_frame("sampleBanner", "info", self)
        layout = QHBoxLayout(frame)
        layout.setContentsMargins(12, 6, 8, 6)
        self.sample_text = notice_label(frame, "sampleBannerText", rich=True)
        self.sample_text.setText(f"<b>{SAMPLE_BANNER}</b>")
        layout.addWidget(self.sample_text, 1)
        layout.addWidget(self._button("Import résumé…", "sampleImport", self.choose_import))
        self.sample_banner = frame
        frame.hide()
        return frame

    def _build_save_row(self) -> QVBoxLayout:
        column = QVBoxLayout()
        column.setContentsMargins(4, 0, 12, 2)
        row = QHBoxLayout()
        self.status = PlainLabel(self)
        self.status.setObjectName("profileStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.discard_button = self._button("Discard changes", "discardProfile", self.discard,
                                           "Show the saved profile again")
        self.save_button = self._button("Save profile", "saveProfile", self.save)
        self.save_button.setStyleSheet(primary_button_style())
        row.addWidget(self.status, 1)
        row.addWidget(self.discard_button)
        row.addWidget(self.save_button)
        column.addLayout(row)
        column.addWidget(ProfileEditor.note())
        return column

    def _button(self, text: str, name: str, slot, tip: str | None = None) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        if tip:
            button.setToolTip(tip)
        button.clicked.connect(slot)
        return button

    # -- the saved profile ----------------------------------------------------------------

    def show_saved(self, envelope: dict[str, Any]) -> None:
        """``GET /v1/profile``'s answer; shown unless the user is editing or reviewing."""
        self.saved_revision = envelope.get("revision")
        self.saved_profile = envelope.get("profile") or {}
        if not (self.reviewing or self.editor.is_dirty()):
            self.editor.set_profile(self.saved_profile)
        self._update_buttons()

    @property
    def dirty(self) -> bool:
        return self.reviewing or self.editor.is_dirty()

    # -- import ---------------------------------------------------------------------------

    def choose_import(self) -> None:
        path = profile_import.choose_resume_file(self)
        if path is not None:
            self.importer.import_file(path, "settings")

    def confirm_replace(self, new: str, start: Callable[[], None]) -> None:
        """Start an import, but never over unsaved work without asking: while the editor
        holds an unsaved draft (imported or edited), "Replace the unsaved draft from X
        with Y?" — Replace starts it, Keep editing changes nothing."""
        if not self.dirty:
            start()
            return
        edited = self.reviewing and self.editor.profile() != self._draft_profile
        words = replace_question(self.draft_from if self.reviewing else None, new,
                                 edited=edited)
        if self.replace_box is not None:
            self.replace_box.deleteLater()  # the newest question is the one that counts
        box = QMessageBox(QMessageBox.Icon.Question, words.title, words.text,
                          QMessageBox.StandardButton.NoButton, self.window())
        box.setObjectName("replaceDraft")
        box.setStyleSheet("QLabel#qt_msgbox_label { min-width: 420px; }")  # a name on one line
        box.setTextFormat(Qt.TextFormat.PlainText)  # file names are not markup
        box.setInformativeText(words.detail)
        replace = box.addButton(words.replace, QMessageBox.ButtonRole.AcceptRole)
        replace.setObjectName("replaceDraftReplace")
        keep = box.addButton(words.keep, QMessageBox.ButtonRole.RejectRole)
        keep.setObjectName("replaceDraftKeep")
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.finished.connect(lambda _result: start() if box.clickedButton() is replace else None)
        self.replace_box = box
        box.open()

    def review_draft(self, answer: dict[str, Any]) -> None:
        self.reviewing = True
        self.draft_from = draft_name(answer)
        self.editor.set_profile(answer.get("profile") or {})
        self._draft_profile = self.editor.profile()
        self.editor.show_review(answer)
        self.draft_banner.show_draft(answer)
        self.improve_panel.offer_for(answer, self.editor.profile)
        self._say("Not saved yet: check the draft, then Save profile (or Discard changes).",
                  "busy")
        self._update_buttons()
        emit(self.draft_opened)
        self.focus()

    def review_improved(self, answer: dict[str, Any]) -> None:
        """"Improve with AI" answered: its résumé replaces the one under review (the
        preferences as reviewed stay). Still a draft: nothing is saved but by Save."""
        profile = self.editor.profile()
        profile["resume"] = (answer.get("profile") or {}).get("resume") or {}
        self.reviewing = True
        self.editor.set_profile(profile)
        self._draft_profile = self.editor.profile()
        # The sections' notes are the new reading's; the preferences marked as suggested
        # stay the import's (the reviewed preferences are kept).
        imported = self.improve_panel.import_answer
        self.editor.show_review({**answer, "suggestedPreferences":
                                 imported.get("suggestedPreferences")})
        self.draft_banner.show_draft(answer)
        self._say("Not saved yet: check the improved draft, then Save profile "
                  "(or Discard changes).", "busy")
        self._update_buttons()

    def _on_import_progress(self, origin: str, text: str, tone: str) -> None:
        if origin == "settings" and text:
            self._say(text, tone)

    # -- save / discard -------------------------------------------------------------------

    def save(self) -> None:
        profile = self.editor.profile()
        self.save_button.setEnabled(False)
        self._say("Saving…", "busy")
        self.controller.call(lambda client: client.put_profile(profile), self._on_saved,
                             self._on_save_failed, name="profile-save")

    def _on_saved(self, answer: dict[str, Any]) -> None:
        self.reviewing = False
        self.improve_panel.withdraw()
        self.draft_banner.hide()
        self.saved_revision = answer.get("revision")
        self.saved_profile = answer.get("profile") or {}
        self.editor.set_profile(self.saved_profile)
        self._say("Profile saved." if answer.get("changed")
                  else "Profile saved (nothing had changed).", "ok")
        self._update_buttons()
        emit(self.saved, answer)

    def _on_save_failed(self, error: Exception) -> None:
        self._update_buttons()
        if isinstance(error, ApiRequestError) and error.status == 422:
            unshown = self.editor.show_errors(field_messages(error))
            extra = f" {'; '.join(unshown)}" if unshown else ""
            self._say(f"The profile was not saved: fix the marked fields.{extra}", "bad")
        else:
            self._say(f"The profile was not saved: {describe_api_error(error)}", "bad")
        emit(self.saved, error)

    def discard(self) -> None:
        self.reviewing = False
        self.improve_panel.withdraw()
        self.draft_banner.hide()
        self.editor.set_profile(self.saved_profile or {})
        self._say("Changes discarded: this is the saved profile.", "idle")
        self._update_buttons()

    # -- export ---------------------------------------------------------------------------

    def choose_export(self) -> None:
        name = ((self.saved_profile or {}).get("resume") or {}).get("basics", {}).get("name")
        stem = "-".join((name or "resume").lower().split())
        path = profile_import.choose_export_path(self, f"{stem}-{date.today():%Y-%m-%d}.json")
        if path is not None:
            self.export_to(path)

    def export_to(self, path: Path) -> None:
        def done(document: dict[str, Any]) -> None:
            try:
                path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                                encoding="utf-8")
            except OSError as error:
                self._say(f"Could not write {path.name}: {error.strerror or error}", "bad")
                emit(self.exported, error)
                return
            self._say(f"Exported the saved profile to {path}.", "ok")
            emit(self.exported, path)

        def failed(error: Exception) -> None:
            self._say(f"Nothing was exported: {describe_api_error(error)}", "bad")
            emit(self.exported, error)

        self.controller.call(lambda client: client.export_profile(), done, failed,
                             name="profile-export")

    # -- small things ---------------------------------------------------------------------

    def focus(self) -> None:
        """The page's top in view, the cursor in Name."""
        self.scroll.widget().layout().activate()
        self.scroll.verticalScrollBar().setValue(0)
        self.editor.focus_first()

    def _on_edited(self) -> None:
        if not self.reviewing and self.editor.is_dirty():
            self._say("Unsaved changes.", "busy")
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.save_button.setEnabled(True)
        self.discard_button.setEnabled(self.dirty)
        self.export_button.setEnabled(bool(self.saved_revision))
        sample = bool((self.saved_profile or {}).get("sample")) and not self.reviewing
        self.sample_banner.setVisible(sample)

    def _say(self, text: str, tone: str) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {COLORS[tone]};")
