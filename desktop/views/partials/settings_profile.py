"""The profile editor: the résumé as sections (Basics, Summary, Work, Education, Skills,
Languages, Certifications) and the job seeker's preferences.

``set_profile`` shows a profile as ``GET /v1/profile`` answers it; ``profile()`` is the
``PUT /v1/profile`` body: the loaded document with every section's edits overlaid, so keys
this editor does not show (JSON Resume ``projects``, ``meta``, an entry's extras, the
original résumé text) are saved back untouched. The API validates; its 422 messages land
under the input (or the section) they name.
"""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from desktop.presenters.profile_import import SUGGESTED_MARK, section_notes, suggested_fields
from desktop.theme import COLORS
from desktop.views.partials.profile_sections import (
    CollapsibleSection,
    EntryListEditor,
    FieldForm,
    FieldSpec,
    get_path,
    overlay,
)
from desktop.views.partials.settings_form import ErrorLabel, hint, match_fields

REMOTE_CHOICES = (("any", "Any"), ("remote_only", "Remote only"),
                  ("remote_or_hybrid", "Remote or hybrid"), ("onsite", "On-site"))
# Flat fields of the first profile shape: the API still reads them, the desktop never sends them.
LEGACY_KEYS = ("name", "email", "phone", "headline", "skills", "jsonResume")
DATE_HINT = "YYYY or YYYY-MM"

BASICS_FIELDS = (
    FieldSpec("name", "Name"),
    FieldSpec("label", "Headline", placeholder="e.g. Senior Backend Engineer"),
    FieldSpec("email", "Email"),
    FieldSpec("phone", "Phone"),
    FieldSpec("location.city", "City"),
    FieldSpec("location.countryCode", "Country", placeholder="e.g. DE, US"),
    FieldSpec("url", "Website"),
)
SUMMARY_FIELDS = (FieldSpec("summary", "Summary", "text",
                            "Two or three sentences about you and the work you want"),)
LINK_FIELDS = (FieldSpec("network", "Site", placeholder="LinkedIn, GitHub, …"),
               FieldSpec("username", "User name"), FieldSpec("url", "Address"))
WORK_FIELDS = (
    FieldSpec("name", "Employer"),
    FieldSpec("position", "Title"),
    FieldSpec("location", "Location"),
    FieldSpec("startDate", "Start", placeholder=DATE_HINT),
    FieldSpec("endDate", "End", placeholder=f"{DATE_HINT}; blank: still there"),
    FieldSpec("highlights", "Bullets", "lines", "What you did and achieved, one per line"),
)
EDUCATION_FIELDS = (
    FieldSpec("institution", "School"),
    FieldSpec("studyType", "Degree", placeholder="e.g. BSc, MSc"),
    FieldSpec("area", "Subject"),
    FieldSpec("startDate", "Start", placeholder=DATE_HINT),
    FieldSpec("endDate", "End", placeholder=DATE_HINT),
)
SKILL_FIELDS = (FieldSpec("name", "Group", placeholder="e.g. Backend"),
                FieldSpec("level", "Level", placeholder="optional"),
                FieldSpec("keywords", "Skills", "csv", "Python, PostgreSQL, …"))
LANGUAGE_FIELDS = (FieldSpec("language", "Language"),
                   FieldSpec("fluency", "Level", placeholder="e.g. Native, C1, Fluent"))
CERTIFICATE_FIELDS = (FieldSpec("name", "Name"), FieldSpec("issuer", "Issuer"),
                      FieldSpec("date", "Date", placeholder=DATE_HINT),
                      FieldSpec("url", "Address"))
PREFERENCE_FIELDS = (
    FieldSpec("targetTitles", "Target titles", "csv", "Backend Engineer, Platform Engineer"),
    FieldSpec("locations", "Locations", "csv", "Berlin, Remote"),
    FieldSpec("remotePreference", "Remote", "choice", choices=REMOTE_CHOICES),
    FieldSpec("salaryFloor", "Salary floor", "number", "yearly, e.g. 85000 (blank: none)"),
    FieldSpec("salaryCurrency", "Currency", "code", "EUR"),
    FieldSpec("workAuthorization", "May work in", "csv", "countries or regions, no visa needed"),
    FieldSpec("mustHaveKeywords", "Must-have words", "csv"),
    FieldSpec("dealBreakerKeywords", "Deal-breaker words", "csv"),
)


def _join(*parts: Any, separator: str = ", ") -> str:
    return separator.join(str(part) for part in parts if part)


def _years(entry: dict[str, Any]) -> str:
    start, end = (entry.get("startDate") or "")[:4], (entry.get("endDate") or "")[:4]
    return f" ({start}–{end})" if start else ""


def work_title(entry: dict[str, Any]) -> str:
    return _join(entry.get("position"), entry.get("name")) + _years(entry)


def education_title(entry: dict[str, Any]) -> str:
    return _join(_join(entry.get("studyType"), entry.get("area"), separator=" "),
                 entry.get("institution"))


def skill_title(entry: dict[str, Any]) -> str:
    keywords = entry.get("keywords") or []
    return f"{entry.get('name') or 'Skills'}: {', '.join(keywords)}" if keywords else \
        entry.get("name") or ""


def language_title(entry: dict[str, Any]) -> str:
    return _join(entry.get("language"), entry.get("fluency"), separator=" · ")


def certificate_title(entry: dict[str, Any]) -> str:
    return _join(entry.get("name"), entry.get("issuer"))


def link_title(entry: dict[str, Any]) -> str:
    return _join(entry.get("network"), entry.get("url") or entry.get("username"), separator=": ")


# (resume key, section title, fields, entry title, noun)
ENTRY_SECTIONS = (
    ("work", "Work", WORK_FIELDS, work_title, "positions"),
    ("education", "Education", EDUCATION_FIELDS, education_title, "schools"),
    ("skills", "Skills", SKILL_FIELDS, skill_title, "skill groups"),
    ("languages", "Languages", LANGUAGE_FIELDS, language_title, "languages"),
    ("certificates", "Certifications", CERTIFICATE_FIELDS, certificate_title, "certifications"),
)


def _count(items: list, noun: str) -> str:
    if not items:
        return f"no {noun}"
    return f"{len(items)} {noun if len(items) != 1 else noun.rstrip('s')}"


class ProfileEditor(QWidget):
    edited = Signal()  # the user changed something (not a load)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._loaded: dict[str, Any] = {}
        self.has_loaded = False  # until the first profile is shown, nothing can be an edit
        self.sections: dict[str, CollapsibleSection] = {}
        self.entry_editors: dict[str, EntryListEditor] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        self.basics = FieldForm(BASICS_FIELDS, self, error_prefix="resume.basics.")
        self.links = EntryListEditor("profile.links", LINK_FIELDS, link_title, "links", self)
        self._add_section(layout, "basics", "Basics", self._basics_box(), "resume.basics")
        self.summary = FieldForm(SUMMARY_FIELDS, self, error_prefix="resume.basics.")
        self._add_section(layout, "summary", "Summary", self.summary, "resume.basics.summary")
        for key, title, specs, title_of, noun in ENTRY_SECTIONS:
            editor = EntryListEditor(f"profile.{key}", specs, title_of, noun, self)
            self.entry_editors[key] = editor
            self._add_section(layout, key, title, editor, f"resume.{key}")
        self.preferences = FieldForm(PREFERENCE_FIELDS, self)
        self._add_section(layout, "preferences", "Preferences", self._preferences_box(),
                          "preferences")
        self.original_text = QPlainTextEdit(self)
        self.original_text.setObjectName("profile.resumeText")
        self.original_text.setReadOnly(True)
        self.original_text.setMinimumHeight(140)
        self._add_section(layout, "original", "Original résumé text", self.original_text,
                          "resumeText", expanded=False)
        for form in self._forms():
            form.edited.connect(self._on_edited)

    def _basics_box(self) -> QWidget:
        box = QWidget(self)
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.basics)
        column.addWidget(hint("Links (LinkedIn, GitHub, portfolio):", box))
        column.addWidget(self.links)
        return box

    def _preferences_box(self) -> QWidget:
        box = QWidget(self)
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.preferences)
        column.addWidget(hint("Lists are comma-separated. Must-have and deal-breaker words "
                              "are matched in the posting's text.", box))
        return box

    def _add_section(self, layout: QVBoxLayout, key: str, title: str, content: QWidget,
                     error_field: str, *, expanded: bool = True) -> None:
        section = CollapsibleSection(title, content, self, expanded=expanded,
                                     error_field=error_field)
        self.sections[key] = section
        layout.addWidget(section)

    def _forms(self) -> list[Any]:
        return [self.basics, self.links, self.summary, *self.entry_editors.values(),
                self.preferences]

    def _on_edited(self) -> None:
        self._show_summaries()
        self.edited.emit()

    # -- data -----------------------------------------------------------------------------

    def set_profile(self, profile: dict[str, Any]) -> None:
        self.has_loaded = True
        self._loaded = copy.deepcopy(profile)
        resume = self._loaded.get("resume") or {}
        basics = resume.get("basics") or {}
        self.basics.load(basics)
        self.summary.load(basics)
        self.links.set_entries(basics.get("profiles"))
        for key, editor in self.entry_editors.items():
            editor.set_entries(resume.get(key))
        self.preferences.load(self._loaded)
        self.original_text.setPlainText(self._loaded.get("resumeText") or "")
        self.show_errors({})
        self._show_summaries()
        self.show_review(None)

    def show_review(self, answer: dict[str, Any] | None) -> None:
        """An import answer's confidence notes beside their sections and its suggested
        preferences marked; ``None`` clears them (a saved profile has neither)."""
        notes = {note.section: note for note in section_notes(answer or {})}
        for key, section in self.sections.items():
            note = notes.get(key)
            section.set_note(note.text if note else "", COLORS[note.tone] if note else None,
                             note.tip if note else "")
        self.preferences.set_marks(suggested_fields(answer or {}), SUGGESTED_MARK)

    def loaded(self) -> dict[str, Any]:
        return copy.deepcopy(self._loaded)

    def profile(self) -> dict[str, Any]:
        """The PUT body: the loaded profile with the edits overlaid."""
        result = copy.deepcopy(self._loaded)
        for key in LEGACY_KEYS:
            result.pop(key, None)
        resume = result.get("resume") if isinstance(result.get("resume"), dict) else {}
        basics = resume.get("basics") if isinstance(resume.get("basics"), dict) else {}
        self.basics.store(basics)
        self.summary.store(basics)
        overlay(basics, "profiles", self.links.value())
        overlay(resume, "basics", basics)
        for key, editor in self.entry_editors.items():
            overlay(resume, key, editor.value())
        overlay(result, "resume", resume)
        self.preferences.store(result)
        return result

    def is_dirty(self) -> bool:
        if not self.has_loaded:
            return False
        expected = copy.deepcopy(self._loaded)
        for key in LEGACY_KEYS:
            expected.pop(key, None)
        return self.profile() != expected

    # -- errors ---------------------------------------------------------------------------

    def _field_errors(self) -> list[ErrorLabel]:
        return [label for form in (self.basics, self.summary, self.preferences)
                for label in form.errors.values()]

    def show_errors(self, messages: dict[str, str]) -> list[str]:
        """Each message under its input, else over its section (unfolded to show it);
        returns the messages no label shows, for the caller's status line."""
        shown: set[str] = set()
        for label in self._field_errors():
            label.show_message(match_fields(messages, label.field))
            shown |= {field for field in messages if _under(field, label.field)}
        for section in self.sections.values():
            owner = section.error.field
            found = {field: text for field, text in messages.items()
                     if field not in shown and _under(field, owner)}
            section.error.show_message(" ".join(entry_error_words(field, text)
                                                for field, text in found.items()) or None)
            shown |= set(found)
        for section in self.sections.values():
            if section.error.text() and not section.expanded:
                section.set_expanded(True)
        return [f"{field}: {text}" for field, text in messages.items() if field not in shown]

    # -- small things ---------------------------------------------------------------------

    def _show_summaries(self) -> None:
        name = self.basics.widgets["name"].text().strip()
        self.sections["basics"].set_summary(name or "no name yet")
        summary = get_path(self.summary.store({}), "summary") or ""
        self.sections["summary"].set_summary(summary[:60] + ("…" if len(summary) > 60 else "")
                                             or "empty")
        for key, _title, _specs, _title_of, noun in ENTRY_SECTIONS:
            self.sections[key].set_summary(_count(self.entry_editors[key].entries, noun))
        titles = ", ".join(self.preferences.store({}).get("targetTitles") or [])
        self.sections["preferences"].set_summary(titles or "no target titles")

    def focus_first(self) -> None:
        self.sections["basics"].set_expanded(True)
        self.basics.first_input().setFocus(Qt.FocusReason.OtherFocusReason)

    def input(self, path: str) -> QWidget:
        """The input of a basics (``resume.basics.name``) or preference (``salaryFloor``)
        field, for tests and focus."""
        for form, prefix in ((self.basics, "resume.basics."), (self.summary, "resume.basics."),
                             (self.preferences, "")):
            key = path.removeprefix(prefix) if prefix and path.startswith(prefix) else path
            if key in form.widgets:
                return form.widgets[key]
        raise KeyError(path)

    @staticmethod
    def note() -> QWidget:
        return hint("Saving a changed profile re-scores and re-writes materials for jobs "
                    "that need it; an unchanged save does nothing.")


ENTRY_FIELD_LABELS = {key: {spec.key: spec.label for spec in specs}
                      for key, _title, specs, _title_of, _noun in ENTRY_SECTIONS}


def entry_error_words(field: str, text: str) -> str:
    """``resume.work.1.startDate`` → "Entry 2, Start: <text>" (where the user looks)."""
    parts = field.split(".")
    if len(parts) >= 4 and parts[0] == "resume" and parts[2].isdigit():
        label = ENTRY_FIELD_LABELS.get(parts[1], {}).get(parts[3], parts[3])
        return f"Entry {int(parts[2]) + 1}, {label}: {text}"
    return text


def _under(field: str, owner: str) -> bool:
    return field == owner or field.startswith(owner + ".")
