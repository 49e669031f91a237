"""The Applications board against the real services: an applied job appears as a card,
dragging it to another column records the move, Undo takes it back, and the card's menu
moves it too; the words on the cards are a job seeker's."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from desktop.views.applications_view import ApplicationsView
from desktop.views.partials.application_board import BoardColumn
from tests.app_db import connect_db
from tests.desktop.discover_helpers import api

pytestmark = [pytest.mark.desktop, pytest.mark.integration]

_numbers = itertools.count(0xA0_0000)
# A description long enough for Enrich to trust it without fetching the page: the worker
# prepares this job like any other, and it must leave no stage failed behind it (the
# desktop tests share one app, and a later Discover would finish "with issues").
_DESCRIPTION = "".join(
    f"<p>Paragraph {n}: we build reliable backend services in Python, review each other's"
    " code, write tests first, deploy small changes often and look after what we run.</p>"
    for n in range(1, 7))


def add_applied_job(live_services, title: str) -> str:
    """A stored job (straight into the app's database, as Discover would leave it), marked
    applied through the API like the Jobs view's "Mark applied"."""
    n = next(_numbers)
    key = f"job_{n:024x}"
    path = Path(live_services.info.app_dir) / "jobctrl.db"
    with connect_db(path) as conn:
        conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " description_html, first_source, first_seen_at, last_seen_at) VALUES (?, 'local',"
            " ?, ?, ?, 'Board Test Co', ?, 'demo_board',"
            " '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
            (key, f"https://board.example/{n}", f"https://board.example/{n}", title, _DESCRIPTION))
    with api(live_services) as http:
        http.post(f"/v1/jobs/{key}/actions/mark", json={"userStatus": "applied"}
                  ).raise_for_status()
    return key


def stage_of(live_services, key: str) -> str:
    with api(live_services) as http:
        return http.get(f"/v1/applications/{key}").json()["stage"]


def drag_card(source: BoardColumn, target: BoardColumn, key: str) -> None:
    """A real drag's events on the target column: enter, move, drop, carrying the mime data
    the source column makes for the card."""
    mime = source.mimeData([source.item_for(key)])
    where = target.viewport().rect().center()
    actions = Qt.DropAction.MoveAction | Qt.DropAction.CopyAction
    buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    for event in (QDragEnterEvent(where, actions, mime, buttons, modifiers),
                  QDragMoveEvent(where, actions, mime, buttons, modifiers),
                  QDropEvent(QPointF(where), actions, mime, buttons, modifiers)):
        QApplication.sendEvent(target.viewport(), event)


@pytest.fixture
def board_view(live_controller, qtbot):
    view = ApplicationsView(live_controller)
    qtbot.addWidget(view)
    view.resize(1240, 760)
    view.show()
    return view


def test_dragging_a_card_records_the_move_and_undo_takes_it_back(live_services, board_view,
                                                                 qtbot):
    key = add_applied_job(live_services, "Drag Tester")
    view = board_view
    view.refresh()
    qtbot.waitUntil(lambda: view.board.column_of(key) == "applied", timeout=20_000)
    drag_card(view.board.columns["applied"], view.board.columns["heard_back"], key)
    qtbot.waitUntil(lambda: view.board.column_of(key) == "heard_back", timeout=20_000)
    assert stage_of(live_services, key) == "heard_back"
    assert view.message.text() == "Moved to Heard back."
    qtbot.waitUntil(view.undo_button.isEnabled, timeout=10_000)
    qtbot.mouseClick(view.undo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.board.column_of(key) == "applied", timeout=20_000)
    assert stage_of(live_services, key) == "applied"
    with api(live_services) as http:
        moves = http.get(f"/v1/applications/{key}").json()["moves"]
    assert [(m["stage"], m["undone"]) for m in moves] == [("heard_back", True)]


def test_a_refused_move_says_why_and_moves_nothing(live_services, board_view, qtbot):
    key = add_applied_job(live_services, "Cleared Mark Tester")
    view = board_view
    view.refresh()
    qtbot.waitUntil(lambda: view.board.column_of(key) == "applied", timeout=20_000)
    with api(live_services) as http:  # cleared elsewhere (the Jobs view) meanwhile
        http.post(f"/v1/jobs/{key}/actions/mark", json={"userStatus": None}).raise_for_status()
    drag_card(view.board.columns["applied"], view.board.columns["offer"], key)
    qtbot.waitUntil(lambda: "never applied" in view.message.text(), timeout=20_000)
    assert "job_" not in view.message.text()
    qtbot.waitUntil(lambda: view.board.column_of(key) is None, timeout=20_000)


def test_the_card_menu_moves_and_the_cards_speak_plainly(live_services, board_view, qtbot):
    key = add_applied_job(live_services, "Menu Tester")
    view = board_view
    view.refresh()
    qtbot.waitUntil(lambda: view.board.column_of(key) == "applied", timeout=20_000)
    text = view.board.columns["applied"].item_for(key).text()
    assert text.startswith("Menu Tester\nBoard Test Co · applied ")
    assert "Follow up on " in text
    assert not re.search(r"[a-z]+_[a-z]+|job_[0-9a-f]", text), text
    view.run_menu_action(key, "move:offer")
    qtbot.waitUntil(lambda: view.board.column_of(key) == "offer", timeout=20_000)
    assert view.board.titles["offer"].text().startswith("Offer (")
    assert view.board.select(key)
    qtbot.waitUntil(lambda: "Menu Tester" in view.panel.title.text(), timeout=20_000)
    assert "Paragraph 1: we build reliable backend services" in view.panel.posting.toPlainText()
    assert "Offer" in view.panel.history.text()


def test_the_follow_up_email_opens_as_a_draft_and_a_refused_send_keeps_the_text(
        live_services, board_view, qtbot):
    from PySide6.QtCore import QTimer

    from tests.integration.test_preparation import PROFILE

    key = add_applied_job(live_services, "Email Tester")
    with api(live_services) as http:
        http.put("/v1/profile", json=PROFILE).raise_for_status()
    view = board_view
    view.refresh()
    qtbot.waitUntil(lambda: view.board.column_of(key) == "applied", timeout=20_000)
    assert view.board.select(key)
    qtbot.waitUntil(lambda: "Email Tester" in view.panel.title.text(), timeout=20_000)
    seen: list[str] = []

    def send_from_dialog(edit: str) -> None:
        dialog = view.email_dialog
        if dialog is None:  # the draft is still on its way
            QTimer.singleShot(100, lambda: send_from_dialog(edit))
            return
        seen.append(dialog.body.toPlainText())
        dialog.recipient.setText("jobs@boardtest.example")
        dialog.body.setPlainText(dialog.body.toPlainText() + edit)
        dialog.send_button.click()

    QTimer.singleShot(100, lambda: send_from_dialog("\n\nP.S. Thanks again."))
    qtbot.mouseClick(view.panel.draft_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "No email account set up" in view.panel.email_state.text(),
                    timeout=20_000)
    assert seen[0].startswith("Dear Board Test Co hiring team,\n\nI recently applied for the"
                              " Email Tester position at Board Test Co")
    # The refused email is kept: writing again opens the user's own text, not a new draft.
    QTimer.singleShot(100, lambda: send_from_dialog(""))
    qtbot.mouseClick(view.panel.draft_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=20_000)
    assert seen[1].endswith("P.S. Thanks again.")
    # The dialogs never run a nested event loop inside an API callback: the event stream
    # is still alive, so a move made elsewhere shows without a manual refresh.
    with api(live_services) as http:
        http.post(f"/v1/applications/{key}/moves", json={"stage": "heard_back"}
                  ).raise_for_status()
    qtbot.waitUntil(lambda: view.board.column_of(key) == "heard_back", timeout=20_000)
