""""Improve with AI" in the draft review: shown only with a configured model (its name, and
"may cost money" when it is paid), run in the background, the improved draft shown for
review with a plain note of what was removed; nothing saved until Save.

The API is stood in for by a fake client behind the controller's ``call`` (the route
itself is tested against the real API in tests/integration/test_profile_improve.py)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop.client import ApiRequestError
from desktop.presenters.profile_improve import offer_words, result_note
from desktop.shell import ShellController
from desktop.views.partials.profile_page import ProfilePage

pytestmark = pytest.mark.desktop

TEXT = "Jane Doe\nSenior Data Engineer, Northwind Analytics  Mar. 2021 – Present\n"
DRAFT = {
    "profile": {
        "resume": {"basics": {"name": "Jane Doe"},
                   "work": [{"name": "Senior Data Engineer, Northwind Analytics Mar. 2021"}]},
        "resumeText": TEXT, "importedFrom": {"fileName": "jane.pdf", "format": "pdf"},
        "sample": False, "targetTitles": ["Data Engineer"], "locations": ["Berlin"],
        "remotePreference": "any",
    },
    "unplaced": ["Hobbies: sailing"],
    "source": {"fileName": "jane.pdf", "format": "pdf", "pages": 1, "characters": len(TEXT)},
    "sections": [{"section": "work", "level": "low"}],
}
PAID = {"available": True, "provider": "openai_compat", "model": "gpt-4o", "paid": True,
        "reason": None}
FREE = {**PAID, "model": "llama3.1", "paid": False}
OFFLINE = {"available": False, "provider": "offline", "model": None, "paid": False,
           "reason": "No AI model is set up"}
IMPROVED = {
    "profile": {"resume": {"basics": {"name": "Jane Doe"},
                           "work": [{"name": "Northwind Analytics",
                                     "position": "Senior Data Engineer",
                                     "startDate": "2021-03"}]},
                "resumeText": TEXT, "targetTitles": ["Senior Data Engineer"]},
    "unplaced": ["Hobbies: sailing"],
    "source": DRAFT["source"],
    "dropped": [
        {"path": "work[1].name", "value": "Initech", "reason": "not_in_file"},
        {"path": "work[1].position", "value": "Principal Rust Engineer",
         "reason": "not_in_file"},
        {"path": "work[1].startDate", "value": "2008-01", "reason": "entry_dropped"},
    ],
    "model": {"provider": "openai_compat", "model": "gpt-4o", "calls": 1, "costUsd": 0.02},
}


class FakeClient:
    def __init__(self, offer: dict[str, Any], answer: dict[str, Any] | Exception = IMPROVED):
        self.offer, self.answer = offer, answer
        self.bodies: list[dict[str, Any]] = []

    async def improve_offer(self) -> dict[str, Any]:
        return self.offer

    async def improve_import(self, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(copy.deepcopy(body))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class Calls:
    """The controller's ``call``: runs the request on the fake client; the improve call's
    answer is held until ``release()`` (the background request still running)."""

    def __init__(self, client: FakeClient):
        self.client = client
        self.names: list[str] = []
        self.held: list = []

    def __call__(self, request, on_done, on_error=None, *, name: str = "shell-call"):
        self.names.append(name)

        def finish() -> None:
            try:
                result = asyncio.run(request(self.client))
            except Exception as error:  # noqa: BLE001 - handed to the callback, like the shell
                on_error(error)
                return
            on_done(result)

        if name == "profile-improve":
            self.held.append(finish)
        else:
            finish()

    def release(self) -> None:
        while self.held:
            self.held.pop(0)()


def make_page(qtbot, tmp_path, client: FakeClient) -> tuple[ProfilePage, Calls]:
    controller = ShellController(tmp_path)
    calls = Calls(client)
    controller.call = calls
    page = ProfilePage(controller)
    qtbot.addWidget(page)
    page.resize(900, 700)
    page.show()
    page.show_saved({"revision": 0, "profile": {}})
    return page, calls


def test_the_button_shows_only_with_a_configured_model(qtbot, tmp_path):
    page, calls = make_page(qtbot, tmp_path, FakeClient(OFFLINE))
    panel = page.improve_panel
    page.review_draft(copy.deepcopy(DRAFT))
    assert "profile-improve-offer" in calls.names
    assert not panel.isVisible()  # offline: the rules are all there is

    calls.client.offer = PAID
    page.review_draft(copy.deepcopy(DRAFT))
    assert panel.isVisible() and panel.button.isVisible()
    assert panel.button.text() == "Improve with AI"
    assert "gpt-4o" in panel.words.text() and "may cost money" in panel.words.text()
    assert panel.words.text() == offer_words(PAID)

    calls.client.offer = FREE
    page.review_draft(copy.deepcopy(DRAFT))
    assert "llama3.1" in panel.words.text() and "costs nothing" in panel.words.text()

    # A JSON Resume import has no text to check a reading against: no offer at all.
    calls.names.clear()
    structured = copy.deepcopy(DRAFT)
    structured["profile"]["resumeText"] = None
    page.review_draft(structured)
    assert not panel.isVisible() and calls.names == []

    # Saving or discarding the draft withdraws it.
    page.review_draft(copy.deepcopy(DRAFT))
    assert panel.isVisible()
    page.discard()
    assert not panel.isVisible()


def test_improving_shows_the_new_draft_and_what_was_removed_and_saves_nothing(qtbot, tmp_path):
    page, calls = make_page(qtbot, tmp_path, FakeClient(PAID))
    panel = page.improve_panel
    page.review_draft(copy.deepcopy(DRAFT))
    page.editor.input("resume.basics.name").setText("Jane Q. Doe")  # edited during review

    qtbot.mouseClick(panel.button, Qt.MouseButton.LeftButton)
    assert not panel.button.isEnabled()  # running in the background
    assert "gpt-4o is reading your résumé" in panel.words.text()
    with qtbot.waitSignal(panel.improved, timeout=1_000):
        calls.release()
    body = calls.client.bodies[0]
    assert body["text"] == TEXT
    assert body["draft"]["basics"]["name"] == "Jane Q. Doe"  # the draft as reviewed now
    assert body["unplaced"] == ["Hobbies: sailing"]
    assert body["source"] == DRAFT["source"]  # only the keys the route takes
    assert page.editor.entry_editors["work"].titles() == [
        "Senior Data Engineer, Northwind Analytics (2021–)"]
    note = panel.words.text()
    assert note == result_note(IMPROVED)
    assert note.startswith("Improved by gpt-4o — check each section, then Save profile.")
    assert "Removed as not found in your file (2): “Initech”, “Principal Rust Engineer”." \
        in note
    assert "2008-01" not in note  # dropped only with its invented entry
    assert not panel.button.isVisible() and panel.isVisible()
    # The preferences as reviewed stay; the draft is still unsaved.
    assert page.editor.profile()["targetTitles"] == ["Data Engineer"]
    assert page.dirty and page.draft_banner.isVisible()
    assert page.status.text().startswith("Not saved yet")
    assert "profile-save" not in calls.names


def test_a_failure_says_so_and_leaves_the_draft(qtbot, tmp_path):
    error = ApiRequestError(409, "budget_exceeded", "Today's AI budget does not cover this.")
    page, calls = make_page(qtbot, tmp_path, FakeClient(PAID, error))
    panel = page.improve_panel
    page.review_draft(copy.deepcopy(DRAFT))
    before = page.editor.profile()
    qtbot.mouseClick(panel.button, Qt.MouseButton.LeftButton)
    calls.release()
    assert panel.button.isEnabled() and panel.button.isVisible()
    assert panel.words.text().startswith("Improve with AI did not work:")
    assert "Your draft is unchanged." in panel.words.text()
    assert page.editor.profile() == before


def test_an_answer_after_discard_is_ignored(qtbot, tmp_path):
    page, calls = make_page(qtbot, tmp_path, FakeClient(PAID))
    page.review_draft(copy.deepcopy(DRAFT))
    qtbot.mouseClick(page.improve_panel.button, Qt.MouseButton.LeftButton)
    page.discard()
    calls.release()
    assert not page.improve_panel.isVisible()
    assert not page.draft_banner.isVisible()
    assert page.editor.profile().get("resume", {}).get("work") in (None, [])


def test_the_note_without_removals_says_everything_is_in_the_file():
    clean = {**IMPROVED, "dropped": []}
    assert result_note(clean).endswith("Everything it read is in your file.")
    many = {**IMPROVED, "dropped": [{"path": f"skills[0].keywords[{i}]", "value": f"Skill {i}",
                                     "reason": "not_in_file"} for i in range(8)]}
    assert result_note(many).endswith("“Skill 4” and 3 more.")
