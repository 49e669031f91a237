"""The tailored résumé and the cover letter as text the job seeker edits before it goes out.

Each editor is built from one document (``ResumeDoc`` / ``CoverLetterDoc`` JSON) and keeps
it as its baseline. Every input is a ``Field``: a path into the document and how the value
reads as text (a line, lines, a comma list). ``document()`` is a copy of the baseline with
only the fields whose text changed written back, so every other field, and keys this
editor does not know, stay exactly as they came. ``is_dirty()`` compares the texts with
what was loaded; a refetch (``MaterialsPanel``) never reloads a dirty editor.

The résumé: name, headline and contact; the summary; skills per group; each experience
entry's bullets, one per line, under its fixed "Title — Employer · dates" heading; education
(read-only); languages; certifications; and, folded, what tailoring left out and why. The
letter: the salutation, each paragraph (with the profile items it rests on), the closing
and the signature.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.plain_text import PlainLabel
from desktop.views.partials.materials_words import (
    dropped_lines,
    dropped_summary,
    education_line,
    entry_heading,
)
from desktop.views.partials.settings_form import HINT_STYLE, hint
from desktop.views.partials.technical_disclosure import TechnicalDisclosure
from desktop.views.status_indicators import COLORS

Path = tuple[str | int, ...]
RESTS_ON_PENDING = "Rests on: worked out again from your words when you save."


def rests_on_words(evidence: list[str]) -> str:
    """The profile items a letter paragraph rests on, as its note under the paragraph."""
    return "Rests on: " + "; ".join(evidence)


@dataclass(frozen=True)
class Codec:
    """How a document value reads as the text of an input, and back."""

    show: Callable[[Any], str]
    parse: Callable[[str], Any]


def _split(text: str, separator: str | None) -> list[str]:
    parts = text.splitlines() if separator is None else text.split(separator)
    return [part.strip() for part in parts if part.strip()]


TEXT = Codec(lambda value: value or "", str.strip)
OPTIONAL = Codec(lambda value: value or "", lambda text: text.strip() or None)
LINES = Codec(lambda value: "\n".join(value or []), lambda text: _split(text, None))
COMMAS = Codec(lambda value: ", ".join(value or []), lambda text: _split(text, ","))


def get_path(document: Any, path: Path) -> Any:
    for step in path:
        try:
            document = document[step]
        except (KeyError, IndexError, TypeError):
            return None
    return document


def set_path(document: dict[str, Any], path: Path, value: Any) -> None:
    for step in path[:-1]:
        if isinstance(step, str) and not isinstance(document.get(step), dict | list):
            document[step] = {}
        document = document[step]
    document[path[-1]] = value


class GrowingText(QTextEdit):
    """Plain text as tall as its content: the page scrolls, never a box inside it."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAcceptRichText(False)
        self.setTabChangesFocus(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit()

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:  # noqa: N802 - QLineEdit's name, one interface
        self.setPlainText(text)

    def _fit(self, *_args) -> None:
        lines = max(int(self.document().size().height()), self.fontMetrics().lineSpacing() + 8)
        margins = self.contentsMargins()
        self.setFixedHeight(lines + margins.top() + margins.bottom() + 2)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()


@dataclass
class Field:
    path: Path
    codec: Codec
    widget: QLineEdit | GrowingText
    shown: str  # the text as loaded

    def changed(self) -> bool:
        return self.widget.text() != self.shown

    def write(self, document: dict[str, Any]) -> None:
        if self.changed():
            set_path(document, self.path, self.codec.parse(self.widget.text()))


class DocEditor(QWidget):
    """The part both editors share: fields over a baseline document."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.baseline: dict[str, Any] | None = None
        self.fields: list[Field] = []
        self.outer = QVBoxLayout(self)
        self.outer.setContentsMargins(0, 0, 0, 0)
        self.body: QWidget | None = None
        self.form: QFormLayout | None = None

    # -- the document ---------------------------------------------------------------------

    def load(self, document: dict[str, Any]) -> None:
        """Show ``document`` as the new baseline (nothing is dirty afterwards)."""
        self.baseline = copy.deepcopy(document)
        self.fields = []
        if self.body is not None:
            self.body.setParent(None)  # gone at once, not at the next event loop turn
            self.body.deleteLater()
        self.body = QWidget(self)
        self.form = QFormLayout(self.body)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self._build(document)
        self.outer.addWidget(self.body)
        self.changed.emit()

    def fill(self, document: dict[str, Any]) -> None:
        """Put ``document``'s texts into the inputs, keeping the baseline (a draft back)."""
        for field in self.fields:
            field.widget.setText(field.codec.show(get_path(document, field.path)))

    def is_dirty(self) -> bool:
        return any(field.changed() for field in self.fields)

    def document(self) -> dict[str, Any]:
        """The baseline with what the user changed, and nothing else."""
        document = copy.deepcopy(self.baseline or {})
        for field in self.fields:
            field.write(document)
        return self._finish(document)

    def _build(self, document: dict[str, Any]) -> None:
        raise NotImplementedError

    def _finish(self, document: dict[str, Any]) -> dict[str, Any]:
        return document

    # -- building blocks ------------------------------------------------------------------

    def _input(self, document: dict[str, Any], path: Path, codec: Codec = TEXT, *,
               multiline: bool = False, placeholder: str = "") -> QLineEdit | GrowingText:
        widget: QLineEdit | GrowingText = GrowingText(self.body) if multiline else QLineEdit(
            self.body)
        widget.setObjectName("edit:" + ".".join(str(step) for step in path))
        widget.setPlaceholderText(placeholder)
        shown = codec.show(get_path(document, path))
        widget.setText(shown)
        widget.textChanged.connect(lambda *_args: self.changed.emit())
        self.fields.append(Field(path, codec, widget, shown))
        return widget

    def _row(self, label: str, widget: QWidget) -> None:
        self.form.addRow(label, widget)

    def _title(self, text: str) -> None:
        title = PlainLabel(text, self.body)
        title.setContentsMargins(0, 8, 0, 0)
        title.setStyleSheet(f"color: {COLORS['idle']}; font-weight: 600;")
        self.form.addRow(title)

    def _read_only(self, text: str, name: str = "", *, bold: bool = False) -> QLabel:
        label = PlainLabel(text, self.body)
        label.setObjectName(name)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if bold:
            label.setStyleSheet("font-weight: 600;")
        self.form.addRow(label)
        return label

    def _spanning(self, widget: QWidget) -> None:
        self.form.addRow(widget)

    def _edited_note(self, document: dict[str, Any]) -> None:
        if document.get("edited"):
            note = QLabel("Edited by you", self.body)
            note.setObjectName("editedByYou")
            note.setStyleSheet(f"color: {COLORS['ok']}; font-weight: 600;")
            self.form.addRow(note)


class ResumeEditor(DocEditor):
    def _build(self, document: dict[str, Any]) -> None:
        self._edited_note(document)
        self._row("Name", self._input(document, ("name",)))
        self._row("Headline", self._input(document, ("headline",)))
        self._row("Email", self._input(document, ("contact", "email"), OPTIONAL))
        self._row("Phone", self._input(document, ("contact", "phone"), OPTIONAL))
        self._row("Locations", self._input(document, ("contact", "locations"), LINES,
                                           multiline=True, placeholder="one per line"))
        self._row("Links", self._input(document, ("contact", "links"), LINES, multiline=True,
                                       placeholder="one per line"))
        self._title("Summary")
        self._spanning(self._input(document, ("summary",), multiline=True))
        self._skills(document)
        self._experience(document)
        self._education(document)
        self._title("Languages")
        self._spanning(self._input(document, ("languages",), COMMAS,
                                   placeholder="comma-separated"))
        self._title("Certifications")
        self._spanning(self._input(document, ("certifications",), LINES, multiline=True,
                                   placeholder="one per line"))
        self._dropped(document.get("dropped") or [])

    def _skills(self, document: dict[str, Any]) -> None:
        if not document.get("skills"):
            return
        self._title("Skills")
        for index, line in enumerate(document["skills"]):
            self._row(line.get("group") or "Skills",
                      self._input(document, ("skills", index, "items"), COMMAS,
                                  placeholder="comma-separated"))

    def _experience(self, document: dict[str, Any]) -> None:
        if not document.get("experience"):
            return
        self._title("Experience")
        self._spanning(hint("One bullet per line. The headings come from your profile.",
                            self.body))
        for index, entry in enumerate(document["experience"]):
            self._read_only(entry_heading(entry), f"entryHeading{index}", bold=True)
            self._spanning(self._input(document, ("experience", index, "bullets"), LINES,
                                       multiline=True, placeholder="one bullet per line"))

    def _education(self, document: dict[str, Any]) -> None:
        if not document.get("education"):
            return
        self._title("Education")
        for line in document["education"]:
            self._read_only(education_line(line))

    def _dropped(self, dropped: list[dict[str, Any]]) -> None:
        summary = dropped_summary(dropped)
        if summary is None:
            return
        self.dropped_disclosure = TechnicalDisclosure(self.body, title=summary)
        self.dropped_disclosure.setObjectName("droppedDisclosure")
        self.dropped_disclosure.details.setText("<br>".join(
            "• " + html.escape(line) for line in dropped_lines(dropped)))
        self._spanning(self.dropped_disclosure)


class LetterEditor(DocEditor):
    def _build(self, document: dict[str, Any]) -> None:
        self._edited_note(document)
        heading = [*(document.get("recipientLines") or []), document.get("dateLine") or ""]
        if any(heading):
            to = self._read_only("\n".join(line for line in heading if line), "letterHeading")
            to.setStyleSheet(f"color: {COLORS['idle']};")
        self._row("Salutation", self._input(document, ("salutation",)))
        for index, paragraph in enumerate(document.get("paragraphs") or []):
            text = self._input(document, ("paragraphs", index, "text"), multiline=True)
            self._spanning(text)
            note = PlainLabel(rests_on_words(paragraph.get("evidence") or []), self.body)
            note.setObjectName(f"restsOn{index}")
            note.setStyleSheet(HINT_STYLE)
            note.setWordWrap(True)
            note.setVisible(bool(paragraph.get("evidence")))
            self._spanning(note)
            field = self.fields[-1]
            text.textChanged.connect(lambda f=field, n=note, e=paragraph.get("evidence") or []:
                                     self._rests_on_changed(f, n, e))
        self._row("Closing", self._input(document, ("closing",)))
        self._row("Signature", self._input(document, ("signature",)))

    @staticmethod
    def _rests_on_changed(field: Field, note: QLabel, evidence: list[str]) -> None:
        """An edited paragraph's note would name what its old words rested on: until the
        save works it out again from the new words, it says so."""
        note.setText(RESTS_ON_PENDING if field.changed() else rests_on_words(evidence))
        note.setVisible(field.changed() or bool(evidence))

    def _finish(self, document: dict[str, Any]) -> dict[str, Any]:
        """A paragraph emptied by the user is taken out (a letter has no empty ones)."""
        paragraphs = document.get("paragraphs")
        if isinstance(paragraphs, list):
            document["paragraphs"] = [p for p in paragraphs
                                      if not isinstance(p, dict) or str(p.get("text")).strip()]
        return document
