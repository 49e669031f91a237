"""Importing a résumé: the one path every entry point takes (the first-run panel, Settings'
"Import résumé…", a file dropped on the window), and the banners of the review.

``ProfileImporter`` uploads (``POST /v1/profile/import``) and hands back the *draft*: the
profile editor shows it for review and nothing is saved until the user presses Save. A
refused file (too large, not a résumé type, unreadable, encrypted) is said in the API's
own words where the import was started, and nothing changes.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiRequestError
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel, rich_label
from desktop.presenters.profile_import import LOW_MARK, warning_lines, warning_title
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.theme import notice_colors

IMPORT_SUFFIXES = (".pdf", ".docx", ".txt", ".md", ".json")
FILE_FILTER = "Résumés (*.pdf *.docx *.txt *.md *.json);;All files (*)"
IMPORT_KINDS = "PDF, Word, text or JSON Resume"


def choose_resume_file(parent: QWidget | None) -> Path | None:
    """The file the user picked, or None (tests replace this function)."""
    chosen, _filter = QFileDialog.getOpenFileName(parent, "Import your résumé",
                                                  str(Path.home()), FILE_FILTER)
    return Path(chosen) if chosen else None


def choose_export_path(parent: QWidget | None, suggested: str) -> Path | None:
    chosen, _filter = QFileDialog.getSaveFileName(
        parent, "Export as JSON Resume", str(Path.home() / suggested),
        "JSON Resume (*.json)")
    return Path(chosen) if chosen else None


def is_resume_file(path: Path) -> bool:
    return path.suffix.lower() in IMPORT_SUFFIXES


def dropped_resume(mime: QMimeData | None) -> Path | None:
    """The one local résumé file being dragged, else None (a folder, a web link, several
    files or another type is not an import)."""
    if mime is None or not mime.hasUrls():
        return None
    paths = [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]
    if len(paths) != 1 or not is_resume_file(paths[0]):
        return None
    return paths[0]


def import_error_words(error: Exception, file_name: str) -> str:
    if isinstance(error, ApiRequestError):
        return f"Could not import {file_name}: {error.message} Nothing was changed."
    if isinstance(error, OSError):
        return f"Could not read {file_name}: {error.strerror or error}. Nothing was changed."
    return f"Could not import {file_name}: {describe_api_error(error)}"


def draft_banner_text(answer: dict[str, Any]) -> str:
    """"Imported from resume.pdf — check each section, then Save. Not placed: 3 lines"."""
    unplaced = len(answer.get("unplaced") or [])
    if (answer.get("profile") or {}).get("sample"):
        head = ("Sample profile loaded — not yours. Save it to try JobCtrl, "
                "or import your résumé instead.")
    else:
        name = (answer.get("source") or {}).get("fileName") or "your file"
        head = f"Imported from {name} — check each section, then Save."
    if unplaced:
        head += f" Not placed: {unplaced} line{'s' if unplaced != 1 else ''}"
    return head


class ProfileImporter(QObject):
    """Uploads a résumé (or asks for the sample) and reports by signal. ``origin`` names
    the surface that started it ("settings", "first-run", "drop") so its answer lands there."""

    drafted = Signal(object)            # the import answer: profile, unplaced, source
    progress = Signal(str, str, str)    # origin, words, tone ("busy", "bad", "ok")

    def __init__(self, controller: ShellController, parent: QObject | None = None):
        super().__init__(parent)
        self.controller = controller
        self.busy = False
        # Asked before every import, whatever started it: (new file's name, start). The
        # profile page asks before an unsaved draft would be replaced; by default, start.
        self.confirm: Callable[[str, Callable[[], None]], None] = lambda _name, start: start()

    def import_file(self, path: Path, origin: str) -> None:
        self.confirm(path.name, lambda: self._start(
            lambda client: client.import_profile(path), path.name, origin))

    def import_sample(self, origin: str) -> None:
        name = "the sample profile"
        self.confirm(name, lambda: self._start(
            lambda client: client.import_sample_profile(), name, origin))

    def _start(self, request, file_name: str, origin: str) -> None:
        if self.busy:
            emit(self.progress, origin, "An import is already being read…", "busy")
            return
        self.busy = True
        emit(self.progress, origin, f"Reading {file_name}…", "busy")

        def done(answer: dict[str, Any]) -> None:
            self.busy = False
            emit(self.progress, origin, "", "ok")
            emit(self.drafted, answer)

        def failed(error: Exception) -> None:
            self.busy = False
            emit(self.progress, origin, import_error_words(error, file_name), "bad")

        self.controller.call(request, done, failed, name="profile-import")


def notice_frame(name: str, tone: str, parent: QWidget) -> QFrame:
    frame = QFrame(parent)
    frame.setObjectName(name)
    background, border, text = notice_colors(tone)
    frame.setStyleSheet(f"#{name} {{ background: {background}; border: 1px solid {border};"
                        f" border-radius: 6px; }} #{name} QLabel {{ border: none;"
                        f" background: transparent; color: {text}; }}")
    return frame


def notice_label(parent: QWidget, name: str, *, rich: bool = False) -> QLabel:
    """A wrapping notice line, plain text unless ``rich`` (its text escaped)."""
    label = rich_label(QLabel(parent)) if rich else PlainLabel(parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    return label


class DraftBanner(QFrame):
    """Over the editor while a draft is reviewed: where it came from, what to do, and the
    lines the import could not place (to copy where they belong)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        frame = notice_frame("draftBanner", "warning", self)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(frame)
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(12, 8, 8, 8)
        row = QHBoxLayout()
        self.message = notice_label(frame, "draftMessage", rich=True)
        self.toggle = QPushButton("Show lines", frame)
        self.toggle.setObjectName("showUnplaced")
        self.toggle.setCheckable(True)
        self.toggle.toggled.connect(self._show_lines)
        row.addWidget(self.message, 1)
        row.addWidget(self.toggle)
        layout.addLayout(row)
        self.unplaced = QPlainTextEdit(frame)
        self.unplaced.setObjectName("unplacedLines")
        self.unplaced.setReadOnly(True)
        self.unplaced.setMaximumHeight(84)
        self.unplaced.setToolTip("Copy these where they belong in the sections below")
        self.unplaced.hide()
        layout.addWidget(self.unplaced)
        outer.addWidget(self._build_warnings())
        self.hide()

    def _build_warnings(self) -> QFrame:
        """What looks wrong with the draft, each with what to do (plain text: the words
        name lines of the file)."""
        frame = notice_frame("draftWarnings", "error", self)
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.setSpacing(4)
        self.warnings_title = notice_label(frame, "draftWarningsTitle")
        self.warnings_title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.warnings_title.font()
        font.setBold(True)
        self.warnings_title.setFont(font)
        layout.addWidget(self.warnings_title)
        self.warnings_text = notice_label(frame, "draftWarningsText")
        self.warnings_text.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.warnings_text)
        self.warnings = frame
        frame.hide()
        return frame

    def show_draft(self, answer: dict[str, Any]) -> None:
        lines = [str(line) for line in answer.get("unplaced") or []]
        self.message.setText(f"<b>{html.escape(draft_banner_text(answer))}</b>")
        self.unplaced.setPlainText("\n".join(lines))
        self.toggle.setVisible(bool(lines))
        self.toggle.setChecked(False)
        self._show_lines(False)
        warnings = warning_lines(answer)
        self.warnings_title.setText(warning_title(len(warnings)))
        self.warnings_text.setText("\n".join(f"{LOW_MARK} {line}" for line in warnings))
        self.warnings.setVisible(bool(warnings))
        self.show()

    def _show_lines(self, shown: bool) -> None:
        self.unplaced.setVisible(shown)
        self.toggle.setText("Hide lines" if shown else "Show lines")

