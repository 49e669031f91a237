"""The structured profile editor, its draft review and the résumé drop, driven as a user
would: typing, clicking Add / Move / Remove, dropping a file. No services needed: these
widgets take a profile (``set_profile``) and give the PUT body (``profile()``)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from desktop.shell import ShellController
from desktop.views.main_window import MainWindow
from desktop.views.partials.profile_import import draft_banner_text, dropped_resume
from desktop.views.partials.profile_page import SAMPLE_BANNER, ProfilePage
from desktop.views.partials.profile_prompt import ProfilePrompt
from desktop.views.partials.settings_profile import ProfileEditor

pytestmark = pytest.mark.desktop

SAVED = {
    "resume": {
        "basics": {"name": "Ada Example", "label": "Backend Engineer", "email": None,
                   "summary": "Eight years of Python.", "location": {"city": "Berlin"},
                   "profiles": [{"network": "GitHub", "url": "https://github.com/ada"}]},
        "work": [{"name": "Northwind", "position": "Senior Backend Engineer",
                  "startDate": "2021-04", "endDate": None, "highlights": ["Built billing"],
                  "keywords": ["kept as it came"]}],
        "education": [], "skills": [{"name": "Backend", "keywords": ["Python", "SQL"]}],
        "languages": [], "certificates": [],
        "projects": [{"name": "An open-source thing"}], "meta": {"theme": "even"},
    },
    "resumeText": "Ada Example\nBackend engineer", "importedFrom": None, "sample": False,
    "targetTitles": ["Backend Engineer"], "locations": [], "remotePreference": "any",
    "salaryFloor": None, "salaryCurrency": None, "workAuthorization": [],
    "mustHaveKeywords": [], "dealBreakerKeywords": [],
}


@pytest.fixture
def editor(qtbot):
    widget = ProfileEditor()
    qtbot.addWidget(widget)
    widget.set_profile(SAVED)
    widget.resize(900, 1800)
    widget.show()
    return widget


def click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def type_into(qtbot, widget, text: str) -> None:
    widget.setFocus()
    qtbot.keyClicks(widget, text)


def test_an_untouched_profile_saves_back_exactly_with_its_extras(editor):
    assert editor.profile() == SAVED
    assert not editor.is_dirty()
    assert editor.input("resume.basics.name").text() == "Ada Example"
    assert editor.entry_editors["work"].titles() == ["Senior Backend Engineer, Northwind (2021–)"]


def test_the_old_flat_fields_are_never_sent(editor):
    legacy = {**copy.deepcopy(SAVED), "name": "Ada", "skills": ["Python"], "jsonResume": {}}
    editor.set_profile(legacy)
    body = editor.profile()
    assert not {"name", "skills", "jsonResume", "email", "headline"} & body.keys()
    assert body["resume"]["basics"]["name"] == "Ada Example"


def test_work_entries_are_added_moved_and_removed_and_extras_survive(qtbot, editor):
    work = editor.entry_editors["work"]
    click(qtbot, work.add_button)
    type_into(qtbot, work.form.widgets["name"], "Contoso")
    type_into(qtbot, work.form.widgets["position"], "Backend Engineer")
    type_into(qtbot, work.form.widgets["startDate"], "2016")
    type_into(qtbot, work.form.widgets["highlights"], "Wrote the Kafka pipeline")
    qtbot.keyClick(work.form.widgets["highlights"], Qt.Key.Key_Return)
    qtbot.keyClicks(work.form.widgets["highlights"], "Ran the warehouse")
    assert work.titles()[1] == "Backend Engineer, Contoso (2016–)"  # the list follows typing
    assert editor.is_dirty()

    click(qtbot, work.up_button)
    entries = editor.profile()["resume"]["work"]
    assert [entry["name"] for entry in entries] == ["Contoso", "Northwind"]
    assert entries[0]["highlights"] == ["Wrote the Kafka pipeline", "Ran the warehouse"]
    assert entries[1]["keywords"] == ["kept as it came"]  # a key the editor does not show

    work.list.setCurrentRow(1)  # Northwind
    click(qtbot, work.remove_button)
    body = editor.profile()
    assert [entry["name"] for entry in body["resume"]["work"]] == ["Contoso"]
    assert body["resume"]["projects"] == SAVED["resume"]["projects"]
    assert body["resume"]["meta"] == {"theme": "even"}
    assert body["resumeText"] == SAVED["resumeText"]


def test_basics_skills_and_preferences_are_typed_into_their_sections(qtbot, editor):
    type_into(qtbot, editor.input("resume.basics.email"), "ada@example.org")
    type_into(qtbot, editor.input("resume.basics.location.countryCode"), "DE")
    skills = editor.entry_editors["skills"]
    click(qtbot, skills.add_button)
    type_into(qtbot, skills.form.widgets["name"], "Infrastructure")
    type_into(qtbot, skills.form.widgets["keywords"], "Kubernetes, AWS ,Terraform")
    type_into(qtbot, editor.input("salaryFloor"), "85,000")
    type_into(qtbot, editor.input("salaryCurrency"), "eur")
    remote = editor.input("remotePreference")
    remote.setCurrentIndex(remote.findData("remote_only"))
    body = editor.profile()
    basics = body["resume"]["basics"]
    assert basics["email"] == "ada@example.org"
    assert basics["location"] == {"city": "Berlin", "countryCode": "DE"}
    assert body["resume"]["skills"][1] == {"name": "Infrastructure",
                                           "keywords": ["Kubernetes", "AWS", "Terraform"]}
    assert (body["salaryFloor"], body["salaryCurrency"]) == (85000, "EUR")
    assert body["remotePreference"] == "remote_only"


def test_an_entry_title_from_a_file_is_never_markup_in_its_tooltip(editor):
    """A job title an imported file wrote as markup shows as written; Qt would load the
    image of a rich-text tooltip (a read of /dev/zero without end)."""
    profile = copy.deepcopy(SAVED)
    profile["resume"]["work"][0]["position"] = '<img src="/dev/zero">Nurse'
    editor.set_profile(profile)
    tip = editor.entry_editors["work"].list.item(0).toolTip()
    assert "<img" not in tip and "&lt;img src=&quot;/dev/zero&quot;&gt;Nurse" in tip


def test_a_folded_section_says_what_it_holds(qtbot, editor):
    work = editor.sections["work"]
    click(qtbot, work.header)
    assert not work.content.isVisible()
    assert work.header.text() == "Work — 1 position"
    click(qtbot, work.header)
    assert work.content.isVisible() and work.header.text() == "Work"


def test_api_messages_land_under_their_field_or_section(editor):
    editor.sections["work"].set_expanded(False)
    unshown = editor.show_errors({
        "resume.basics.email": "Not an email address",
        "resume.work.0.startDate": "String should have at most 40 characters",
        "salaryFloor": "Input should be a valid integer",
        "somethingNew": "Unknown field",
    })
    email_error = editor.basics.errors["resume.basics.email"]
    assert email_error.isVisible() and email_error.text() == "Not an email address"
    assert editor.preferences.errors["salaryFloor"].isVisible()
    work = editor.sections["work"]
    assert work.expanded  # unfolded to show its message
    assert work.error.text() == "Entry 1, Start: String should have at most 40 characters"
    assert unshown == ["somethingNew: Unknown field"]
    editor.show_errors({})
    assert not email_error.isVisible() and not work.error.isVisible()


# -- the draft under review -----------------------------------------------------------------

DRAFT = {
    "profile": {**copy.deepcopy(SAVED), "resume": {
        "basics": {"name": "Grace Hopper", "label": "Compiler Engineer"},
        "work": [{"name": "Remington Rand", "position": "Programmer", "startDate": "1949"}],
    }, "importedFrom": {"fileName": "resume.pdf", "format": "pdf"}},
    "unplaced": ["Hobbies: sailing", "References on request", "Page 2 of 2"],
    "source": {"fileName": "resume.pdf", "format": "pdf", "pages": 2, "characters": 2400},
}


@pytest.fixture
def page(qtbot, tmp_path):
    widget = ProfilePage(ShellController(tmp_path))
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    widget.show_saved({"revision": 3, "profile": SAVED})
    return widget


def test_a_draft_opens_for_review_with_its_unplaced_lines_and_discard_restores(qtbot, page):
    assert draft_banner_text(DRAFT) == ("Imported from resume.pdf — check each section, then "
                                        "Save. Not placed: 3 lines")
    with qtbot.waitSignal(page.draft_opened, timeout=1_000):
        page.review_draft(DRAFT)
    assert page.draft_banner.isVisible()
    assert "Imported from resume.pdf" in page.draft_banner.message.text()
    assert page.editor.input("resume.basics.name").text() == "Grace Hopper"
    assert page.editor.input("resume.basics.name").hasFocus()
    assert page.status.text().startswith("Not saved yet")
    assert page.dirty and page.discard_button.isEnabled()

    assert not page.draft_banner.unplaced.isVisible()
    click(qtbot, page.draft_banner.toggle)
    assert page.draft_banner.unplaced.isVisible()
    assert page.draft_banner.unplaced.toPlainText().splitlines() == DRAFT["unplaced"]

    # A refetch while reviewing keeps the draft.
    page.show_saved({"revision": 3, "profile": SAVED})
    assert page.editor.input("resume.basics.name").text() == "Grace Hopper"

    click(qtbot, page.discard_button)
    assert not page.draft_banner.isVisible()
    assert page.editor.profile() == SAVED
    assert not page.discard_button.isEnabled()


def test_the_sample_profile_is_marked_until_a_real_one_replaces_it(qtbot, page):
    assert not page.sample_banner.isVisible()
    page.show_saved({"revision": 4, "profile": {**SAVED, "sample": True}})
    assert page.sample_banner.isVisible()
    assert SAMPLE_BANNER in page.sample_text.text()
    page.review_draft(DRAFT)  # a real import (sample false): the marker goes with it
    assert not page.sample_banner.isVisible()


def test_the_first_run_prompt_offers_three_ways_then_marks_the_sample(qtbot):
    prompt = ProfilePrompt()
    qtbot.addWidget(prompt)
    prompt.show()
    prompt.show_state(None)
    assert not prompt.isVisible()  # not read yet is not "missing"
    prompt.show_state(False)
    assert prompt.isVisible()
    assert [b.text() for b in (prompt.import_button, prompt.sample_button, prompt.type_button)] \
        == ["Import your résumé…", "Try it with a sample profile", "Type it in myself"]
    assert "PDF, Word, text or JSON Resume" in prompt.text.text()
    with qtbot.waitSignal(prompt.sample_requested, timeout=1_000):
        click(qtbot, prompt.sample_button)
    prompt.show_state(True, sample=True, name="Sam Sample")
    assert prompt.isVisible() and not prompt.sample_button.isVisible()
    assert "Using the sample profile (Sam Sample) — not yours" in prompt.text.text()
    prompt.show_state(True, sample=False, name="Ada")
    assert not prompt.isVisible()


# -- drag and drop onto the window -------------------------------------------------------------


def _mime(*paths: Path) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    return mime


def _drag(target, mime: QMimeData, *, drop: bool) -> bool:
    pos = QPoint(60, 60)
    enter = QDragEnterEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    if drop:
        event = QDropEvent(QPointF(pos), Qt.DropAction.CopyAction, mime,
                           Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(target, event)
    return enter.isAccepted()


def test_only_one_resume_file_counts_as_a_drop(tmp_path):
    assert dropped_resume(_mime(tmp_path / "cv.PDF")) == tmp_path / "cv.PDF"
    assert dropped_resume(_mime(tmp_path / "photo.png")) is None
    assert dropped_resume(_mime(tmp_path / "a.pdf", tmp_path / "b.pdf")) is None
    web = QMimeData()
    web.setUrls([QUrl("https://example.org/cv.pdf")])
    assert dropped_resume(web) is None


def test_a_resume_dropped_anywhere_on_the_window_is_imported(qtbot, tmp_path):
    window = MainWindow(ShellController(tmp_path, temporal_ui=False))
    qtbot.addWidget(window)
    window.resize(900, 600)
    window.show()
    qtbot.waitUntil(lambda: window.painted)  # drags are watched from the first frame on
    started: list[tuple[Path, str]] = []
    window.importer.import_file = lambda path, origin: started.append((path, origin))
    resume = tmp_path / "resume.docx"
    resume.write_bytes(b"PK")
    # Over a text input of the profile editor: the file is an import, not pasted text.
    settings = window.show_view("settings")
    settings.show_page("profile")
    name_input = settings.profile_editor.input("resume.basics.name")
    assert _drag(name_input, _mime(resume), drop=False)
    assert window.drop_hint.isVisible()
    assert "Drop resume.docx to import your résumé" in window.drop_hint.text()
    _drag(name_input, _mime(resume), drop=True)
    assert not window.drop_hint.isVisible()
    assert started == [(resume, "drop")]
    assert name_input.text() == ""

    # Another kind of file is not taken: no hint, no import.
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG")
    assert not _drag(window.views["pipelines"], _mime(picture), drop=True)
    assert not window.drop_hint.isVisible()
    assert started == [(resume, "drop")]


def test_a_refused_drop_says_why_in_the_banner(qtbot, tmp_path):
    window = MainWindow(ShellController(tmp_path, temporal_ui=False))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.painted)  # drags are watched from the first frame on
    resume = tmp_path / "resume.pdf"
    resume.write_bytes(b"%PDF")
    _drag(window.views["pipelines"], _mime(resume), drop=True)  # no services: refused at once
    assert window.banner.isVisible()
    assert window.banner.message.text().startswith("Could not import resume.pdf:")
