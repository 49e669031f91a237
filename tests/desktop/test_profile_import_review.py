"""An imported draft's review as the job seeker sees it: how sure the import is of each
section (the unsure ones marked), the warning banner with what to do, the preferences
marked "suggested from your résumé", and the question before a second import would
replace an unsaved draft (Replace / Keep editing). No services: the page takes the import
answer (``review_draft``) and the import's start is recorded instead of uploaded."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.presenters.profile_import import (
    SUGGESTED_MARK,
    replace_question,
    section_notes,
    warning_lines,
)
from desktop.shell import ShellController
from desktop.theme import COLORS
from desktop.views.main_window import MainWindow
from desktop.views.partials.profile_page import ProfilePage

pytestmark = pytest.mark.desktop

SAVED = {
    "resume": {"basics": {"name": "Ada Example", "email": "ada@example.org"}, "work": []},
    "sample": False, "targetTitles": ["Backend Engineer"], "locations": [],
    "remotePreference": "any", "salaryFloor": None, "salaryCurrency": None,
}
ANSWER = {
    "profile": {**copy.deepcopy(SAVED), "resume": {
        "basics": {"name": "Priya Raman"},
        "work": [{"name": "Northwind", "position": "Senior Data Analyst", "startDate": "2021-03"},
                 {"name": "Contoso", "position": "Data Analyst"}]},
        "remotePreference": "remote_or_hybrid", "salaryFloor": 95000, "salaryCurrency": "CAD",
        "locations": ["Toronto"]},
    "unplaced": ["<b>Hobbies</b>: sailing"],
    "source": {"fileName": "priya.pdf", "format": "pdf", "pages": 2, "characters": 5400},
    "sections": [
        {"section": "contact", "level": "low", "note": "No e-mail or phone number found"},
        {"section": "work", "level": "medium", "note": "1 of 2 jobs has no dates"},
        {"section": "education", "level": "high", "note": "1 school found"},
        {"section": "skills", "level": "high", "note": "12 skills found, in 3 groups"},
        {"section": "languages", "level": "medium", "note": "No languages found"},
    ],
    "warnings": [{"code": "work_without_dates",
                  "message": "1 of 2 jobs has no dates — your years of experience are counted "
                             "from them.",
                  "suggestion": "Type the start (and end) date of each job under Work. If your "
                                "résumé is also a Word file, importing that usually reads better."},
                 {"code": "many_unplaced", "message": "<i>9 lines</i> could not be placed.",
                  "suggestion": "Open “Show lines” and copy them where they belong."}],
    "suggestedPreferences": {"targetTitles": [], "locations": ["Toronto"],
                             "remotePreference": "remote_or_hybrid", "salaryFloor": 95000,
                             "salaryCurrency": "CAD"},
}
SECOND = {**copy.deepcopy(ANSWER), "source": {"fileName": "priya.docx", "format": "docx"},
          "sections": [], "warnings": [], "suggestedPreferences": {}}


@pytest.fixture
def page(qtbot, tmp_path):
    widget = ProfilePage(ShellController(tmp_path))
    qtbot.addWidget(widget)
    widget.resize(900, 700)
    widget.show()
    widget.show_saved({"revision": 3, "profile": SAVED})
    return widget


@pytest.fixture
def started(page) -> list[tuple[str, str]]:
    """The imports that really started (file name, origin), instead of uploading."""
    record: list[tuple[str, str]] = []
    page.importer._start = lambda _request, name, origin: record.append((name, origin))
    return record


def click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def question(qtbot, page) -> QMessageBox:
    qtbot.waitUntil(lambda: page.replace_box is not None and page.replace_box.isVisible(),
                    timeout=2_000)
    return page.replace_box


def button(box: QMessageBox, name: str):
    return next(b for b in box.buttons() if b.objectName() == name)


# -- the words (Qt-free) ----------------------------------------------------------------------


def test_the_notes_and_warning_words():
    notes = {note.section: note for note in section_notes(ANSWER)}
    assert notes["basics"].text == "⚠ No e-mail or phone number found — check this section"
    assert notes["basics"].tone == "bad"
    assert notes["work"].text == "1 of 2 jobs has no dates"
    assert notes["education"].text == "✓ 1 school found"
    assert warning_lines(ANSWER)[0].startswith("1 of 2 jobs has no dates — your years")
    assert replace_question("a.pdf", "b.docx", edited=False).text == \
        "Replace the unsaved draft from a.pdf with b.docx?"
    assert replace_question(None, "b.docx", edited=True).text == \
        "Replace your unsaved changes with a draft from b.docx?"


# -- the review -----------------------------------------------------------------------------


def test_each_section_shows_how_sure_the_import_is_and_low_ones_are_marked(qtbot, page):
    page.review_draft(ANSWER)
    sections = page.editor.sections
    contact = sections["basics"].note
    assert contact.isVisible()
    assert contact.text() == "⚠ No e-mail or phone number found — check this section"
    assert COLORS["bad"] in contact.styleSheet()
    assert sections["work"].note.text() == "1 of 2 jobs has no dates"
    assert COLORS["bad"] not in sections["work"].note.styleSheet()
    assert sections["education"].note.text() == "✓ 1 school found"
    assert not sections["certificates"].note.isVisible()  # not judged: no note
    assert all(s.note.textFormat() == Qt.TextFormat.PlainText for s in sections.values())

    # Discarding the draft shows the saved profile: no notes any more.
    click(qtbot, page.discard_button)
    assert not any(s.note.isVisible() for s in sections.values())


def test_the_warnings_are_a_banner_with_what_to_do_in_plain_text(qtbot, page):
    page.review_draft(ANSWER)
    banner = page.draft_banner
    assert banner.warnings.isVisible()
    assert banner.warnings_title.text() == "This draft looks incomplete (2 things to check):"
    text = banner.warnings_text.text()
    assert "⚠ 1 of 2 jobs has no dates" in text
    assert "If your résumé is also a Word file, importing that usually reads better." in text
    assert "<i>9 lines</i>" in text  # the file's words are shown as they are, not as markup
    assert banner.warnings_text.textFormat() == Qt.TextFormat.PlainText
    page.review_draft(SECOND)  # a draft that looks right has no warning banner
    assert not banner.warnings.isVisible()


def test_preferences_taken_from_the_resume_are_marked_until_edited(qtbot, page):
    page.review_draft(ANSWER)
    form = page.editor.preferences
    assert sorted(form.marked()) == ["locations", "remotePreference", "salaryCurrency",
                                     "salaryFloor"]
    mark = form.marks["salaryFloor"]
    assert mark.isVisible() and mark.text() == SUGGESTED_MARK
    assert not form.marks["targetTitles"].isVisible()  # the user's own, kept
    assert page.editor.input("salaryFloor").text() == "95000"
    floor = page.editor.input("salaryFloor")
    floor.setFocus()
    qtbot.keyClicks(floor, "0")
    assert not mark.isVisible()  # typed over: the user's value now
    assert form.marks["locations"].isVisible()


# -- a second import never silently replaces an unsaved draft ----------------------------------


def test_keep_editing_changes_nothing(qtbot, page, started, tmp_path):
    page.review_draft(ANSWER)
    name = page.editor.input("resume.basics.name")
    name.setFocus()
    qtbot.keyClicks(name, " R.")
    page.importer.import_file(tmp_path / "priya.docx", "drop")
    box = question(qtbot, page)
    assert box.text() == "Replace the unsaved draft from priya.pdf with priya.docx?"
    assert box.informativeText() == "Your edits to it have not been saved and would be lost."
    assert sorted(b.text() for b in box.buttons()) == ["Keep editing", "Replace"]
    assert box.defaultButton() is button(box, "replaceDraftKeep")  # Enter keeps the draft
    click(qtbot, button(box, "replaceDraftKeep"))
    qtbot.waitUntil(lambda: not box.isVisible())
    assert started == []
    assert name.text() == "Priya Raman R."
    assert page.reviewing and page.draft_banner.isVisible()


def test_replace_starts_the_new_import(qtbot, page, started, tmp_path):
    page.review_draft(ANSWER)
    page.importer.import_file(tmp_path / "priya.docx", "settings")
    box = question(qtbot, page)
    assert box.informativeText() == "It has not been saved; it would be lost."
    click(qtbot, button(box, "replaceDraftReplace"))
    assert started == [("priya.docx", "settings")]
    page.review_draft(SECOND)
    assert page.editor.input("resume.basics.name").text() == "Priya Raman"
    assert "Imported from priya.docx" in page.draft_banner.message.text()


def test_no_question_without_unsaved_work_and_one_for_edits_of_the_saved_profile(
        qtbot, page, started, tmp_path):
    page.importer.import_file(tmp_path / "cv.pdf", "settings")
    assert started == [("cv.pdf", "settings")] and page.replace_box is None
    name = page.editor.input("resume.basics.name")
    name.setFocus()
    qtbot.keyClicks(name, "x")
    page.importer.import_file(tmp_path / "cv.pdf", "settings")
    box = question(qtbot, page)
    assert box.text() == "Replace your unsaved changes with a draft from cv.pdf?"
    click(qtbot, button(box, "replaceDraftKeep"))
    assert started == [("cv.pdf", "settings")]


def test_the_first_run_sample_asks_too_when_a_draft_is_open(qtbot, tmp_path):
    window = MainWindow(ShellController(tmp_path, temporal_ui=False))
    qtbot.addWidget(window)
    window.resize(900, 600)
    window.show()
    page = window.views["settings"].profile_page
    record: list[str] = []
    page.importer._start = lambda _request, name, origin: record.append(origin)
    page.review_draft(ANSWER)
    window.importer.import_sample("first-run")
    box = question(qtbot, page)
    assert box.text() == "Replace the unsaved draft from priya.pdf with the sample profile?"
    assert box.parent() is window  # over the window, wherever the import was started
    click(qtbot, button(box, "replaceDraftReplace"))
    assert record == ["first-run"]


def test_a_file_name_in_the_question_is_plain_text(qtbot, page, started):
    page.review_draft({**ANSWER, "source": {"fileName": "<b>cv</b>.pdf"}})
    page.importer.import_file(Path("/tmp") / "<i>x.pdf", "settings")
    box = question(qtbot, page)
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert box.text() == "Replace the unsaved draft from <b>cv</b>.pdf with <i>x.pdf?"
    click(qtbot, button(box, "replaceDraftKeep"))
