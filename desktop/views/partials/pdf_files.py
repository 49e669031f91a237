"""The rendered PDFs as files a person can use: for each, its name, "Open", "Show in folder"
and "Save as…" (a copy wherever they like, under the file's own name, as the PDF or as the
Word file rendered beside it). Also the words for the résumé's applicant-tracking-system
check.

``QDesktopServices.openUrl`` answers False when the computer has no program for the file
(no PDF viewer, no file manager): then the row says so in plain words instead of doing
nothing. The file actions are plain functions answering ``(worked, what to tell the
user)`` (tests call them); ``PdfFiles`` shows them.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QGridLayout, QHBoxLayout, QLabel, QPushButton, QWidget

from desktop.plain_text import PlainLabel, plain_tooltip
from desktop.views.status_indicators import COLORS

KIND_TITLES = {"resume_pdf": "Résumé", "cover_letter_pdf": "Cover letter"}
PDF_FILTER = "PDF files (*.pdf)"
WORD_FILTER = "Word documents (*.docx)"
ATS_OK = "Reads cleanly in applicant-tracking systems ✓"
ATS_MISSING = "Applicant-tracking systems may not read all of the résumé. Not read back:"
ATS_SHOWN = 8  # items named; the rest are counted
NO_VIEWER = "No PDF viewer is set up on this computer. Use Save as… or Show in folder."
NO_FOLDER_VIEWER = ("No program to show folders is set up on this computer. Use Save as…; "
                    "the file is here: {path}")
GONE = "The file is no longer there. Click Re-render PDF to make it again."


def file_line(kind: str, artifact: dict[str, Any] | None) -> str:
    """"Résumé: Ada Example - Resume - Northwind.pdf · 2 pages" (or not rendered yet)."""
    title = KIND_TITLES.get(kind, "PDF")
    path = (artifact or {}).get("path")
    if not path:
        return f"{title}: not rendered yet"
    pages = (artifact or {}).get("pages")
    count = f" · {pages} page{'s' if pages != 1 else ''}" if pages else ""
    return f"{title}: {Path(path).name}{count}"


def word_kind(kind: str) -> str:
    """The Word file rendered beside a PDF: ``resume_pdf`` → ``resume_docx``."""
    return kind.removesuffix("_pdf") + "_docx"


def ats_check_text(check: dict[str, Any] | None) -> str:
    """The résumé's check in words ("" before a check was made): ✓, or what did not come
    back ("the dates of 'Analyst at Shopify' (PDF, plain text)"), one per line."""
    if not check:
        return ""
    missing = [str(item) for item in check.get("missing") or []]
    if check.get("ok") and not missing:
        return ATS_OK
    lines = [f"• {item}" for item in missing[:ATS_SHOWN]]
    if len(missing) > ATS_SHOWN:
        lines.append(f"… and {len(missing) - ATS_SHOWN} more")
    return "\n".join([ATS_MISSING, *lines])


Outcome = tuple[bool, str]  # (it worked, what to tell the user; "" for nothing)


def open_file(path: str) -> Outcome:
    """Open the PDF in the user's viewer."""
    if not Path(path).is_file():
        return False, GONE
    opened = QDesktopServices.openUrl(QUrl.fromLocalFile(path))
    return opened, "" if opened else NO_VIEWER


def show_in_folder(path: str) -> Outcome:
    """Open the folder that holds the PDF."""
    if not Path(path).is_file():
        return False, GONE
    opened = QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(path).parent)))
    return opened, "" if opened else NO_FOLDER_VIEWER.format(path=path)


def save_copy(path: str, parent: QWidget | None = None, word_path: str | None = None) -> Outcome:
    """Ask where, then copy the PDF there (canceling says nothing). With a Word file beside
    it, the dialog offers both: choosing "Word documents" (or a ``.docx`` name) copies that."""
    source = Path(path)
    if not source.is_file():
        return False, GONE
    word = Path(word_path) if word_path and Path(word_path).is_file() else None
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    target, chosen = QFileDialog.getSaveFileName(
        parent, "Save a copy of the PDF or the Word file" if word else "Save a copy of the PDF",
        str(Path(folder or Path.home()) / source.name),
        ";;".join([PDF_FILTER, WORD_FILTER] if word else [PDF_FILTER]))
    if not target:
        return True, ""
    if word is not None and (chosen == WORD_FILTER or Path(target).suffix.lower() == ".docx"):
        source = word
        if Path(target).suffix.lower() != ".docx":
            target = str(Path(target).with_suffix(".docx"))
    try:
        if Path(target).resolve() != source.resolve():
            shutil.copyfile(source, target)
    except OSError as error:
        return False, f"Could not save the copy: {error.strerror or error}."
    return True, f"Saved a copy as {target}."


class PdfFiles(QWidget):
    """One line per PDF (its name) with its three buttons, and one line for what happened."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("pdfFiles")
        self.paths: dict[str, str] = {}
        self.word_paths: dict[str, str] = {}  # PDF kind → the Word file beside it
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(2)
        self.name_labels: dict[str, QLabel] = {}
        self.open_buttons: dict[str, QPushButton] = {}
        self._buttons: dict[str, list[QPushButton]] = {}
        for row, kind in enumerate(KIND_TITLES):
            self._add_file_row(grid, row * 2, kind)
        self.message = PlainLabel("", self)
        self.message.setObjectName("pdfMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()
        grid.addWidget(self.message, len(KIND_TITLES) * 2, 0)
        self.set_files([])

    def _add_file_row(self, grid: QGridLayout, line: int, kind: str) -> None:
        name = PlainLabel(self)
        name.setObjectName(f"file_{kind}")
        name.setWordWrap(True)
        name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.name_labels[kind] = name
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 6)
        row.setSpacing(6)
        actions = (("Open", "open", open_file), ("Show in folder", "folder", show_in_folder),
                   ("Save as…", "saveAs",
                    lambda path, k=kind: save_copy(path, self, self.word_paths.get(k))))
        self._buttons[kind] = []
        for text, name_part, action in actions:
            button = QPushButton(text, self)
            button.setObjectName(f"{name_part}_{kind}")
            button.clicked.connect(lambda _checked=False, k=kind, a=action: self._run(k, a))
            row.addWidget(button)
            self._buttons[kind].append(button)
        row.addStretch(1)
        self.open_buttons[kind] = self._buttons[kind][0]
        grid.addWidget(name, line, 0)
        grid.addLayout(row, line + 1, 0)

    def set_files(self, artifacts: list[dict[str, Any]]) -> None:
        """``[{kind, path, pages, …}]``: the latest PDF of each kind, and the Word files
        rendered beside them (offered by Save as…)."""
        by_kind = {a.get("kind"): a for a in artifacts if a.get("path")}
        self.paths = {kind: by_kind[kind]["path"] for kind in KIND_TITLES if kind in by_kind}
        self.word_paths = {kind: by_kind[word_kind(kind)]["path"] for kind in KIND_TITLES
                           if word_kind(kind) in by_kind}
        for kind, label in self.name_labels.items():
            label.setText(file_line(kind, by_kind.get(kind)))
            path = self.paths.get(kind)
            ready = path is not None and Path(path).is_file()
            for button in self._buttons[kind]:
                button.setEnabled(ready)
                button.setToolTip(plain_tooltip(path) or "Not rendered yet")

    def open(self, kind: str) -> bool:
        """Open one PDF (the job detail's ``open_pdf``); False when it did not open."""
        return self._run(kind, open_file)

    def _run(self, kind: str, action) -> bool:
        path = self.paths.get(kind)
        if not path:
            return False
        worked, words = action(path)
        self.say(words, "ok" if worked else "bad")
        return worked

    def say(self, text: str, tone: str = "ok") -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {COLORS[tone]};")
        self.message.setVisible(bool(text))
