"""The schedule picker and the source link field as widgets, without services: what the
user picks or pastes, what would be saved, and what they read."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt, QTime
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QComboBox, QScrollArea, QVBoxLayout, QWidget

from desktop.views.partials.schedule_picker import SchedulePicker
from desktop.views.partials.settings_form import WheelGuard
from desktop.views.partials.settings_sources import SourcesEditor
from tests.plain_words import findings

pytestmark = pytest.mark.desktop

KOLKATA = ZoneInfo("Asia/Kolkata")
WINTER = datetime(2027, 1, 12, 12, 0, tzinfo=UTC)


@pytest.fixture
def picker(qtbot):
    widget = SchedulePicker(zone=KOLKATA, at=WINTER)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def test_a_saved_cron_shows_as_local_weekdays_and_saves_back_unchanged(picker):
    picker.set_cron("30 2 * * MON-FRI")
    assert picker.days_choice.currentData() == "weekdays"
    assert picker.time.time() == QTime(8, 0)
    assert picker.summary.text() == "Weekdays at 08:00, your time."
    assert picker.cron() == "30 2 * * MON-FRI"  # untouched: exactly what was read
    assert not picker.days_box.isVisible()
    assert picker.technical.text() == "Saved as (cron, UTC): 30 2 * * MON-FRI"


def test_picking_days_and_a_time_makes_the_utc_cron(qtbot, picker):
    edits = []
    picker.edited.connect(lambda: edits.append(1))
    picker.days_choice.setCurrentIndex(picker.days_choice.findData("chosen"))
    assert picker.days_box.isVisible()
    for name in ("Tue", "Wed", "Thu"):  # Mon–Fri were ticked: keep Mon and Fri
        qtbot.mouseClick(picker.findChild(type(picker.day_buttons[0]), f"scheduleDay{name}"),
                         Qt.MouseButton.LeftButton)
    picker.time.setTime(QTime(3, 0))
    assert picker.summary.text() == "Mon and Fri at 03:00, your time."
    assert picker.cron() == "30 21 * * 0,4"  # 03:00 in Kolkata is 21:30 UTC the day before
    assert edits


def test_the_last_chosen_day_cannot_be_unticked(qtbot, picker):
    picker.set_cron("30 2 * * 1")  # Mondays
    assert picker.days_choice.currentData() == "chosen"
    monday = picker.day_buttons[0]
    qtbot.mouseClick(monday, Qt.MouseButton.LeftButton)
    assert monday.isChecked() and picker.cron() == "30 2 * * 1"


def test_a_custom_cron_is_described_and_kept_until_something_else_is_picked(picker):
    picker.set_cron("0 8,18 * * *")
    assert picker.days_choice.currentData() == "custom"
    assert not picker.time.isVisible()
    assert picker.summary.text() == ("Custom schedule: next runs Tue 12 Jan 23:30, "
                                     "Wed 13 Jan 13:30 and Wed 13 Jan 23:30 (your time).")
    assert picker.cron() == "0 8,18 * * *"
    picker.days_choice.setCurrentIndex(picker.days_choice.findData("every_day"))
    assert picker.time.time() == QTime(13, 30)  # what the inputs showed before
    assert picker.cron() == "0 8 * * *"  # that time, every day
    picker.days_choice.setCurrentIndex(picker.days_choice.findData("custom"))
    assert picker.cron() == "0 8,18 * * *"  # back to the saved one, unchanged
    picker.set_cron("30 2 * * *")
    assert picker.days_choice.findData("custom") == -1  # only offered for a custom cron


@pytest.fixture
def editor(qtbot):
    widget = SourcesEditor()
    qtbot.addWidget(widget)
    widget.show()
    widget.set_sources([{"kind": "demo_board", "id": "demo_board", "enabled": True},
                        {"kind": "greenhouse", "id": "gh-acme", "boardToken": "acme"}])
    return widget


def paste(qtbot, editor, link: str) -> None:
    editor.value.setText(link)
    qtbot.mouseClick(editor.add_button, Qt.MouseButton.LeftButton)


def test_a_pasted_board_link_adds_the_family_and_a_generated_id(qtbot, editor):
    changes = []
    editor.changed.connect(lambda: changes.append(1))
    assert "Paste a careers-page or job-board link" in editor.value.placeholderText()
    paste(qtbot, editor, "https://job-boards.greenhouse.io/acme/jobs/4567")
    added = editor.sources()[-1]
    assert added == {"kind": "greenhouse", "id": "gh-acme-2", "boardToken": "acme",
                     "enabled": True}
    assert editor.table.item(2, 1).text() == "Greenhouse board"
    assert editor.table.item(2, 2).text() == "acme"
    assert editor.feedback.text() == "Added acme (Greenhouse). Save settings to keep it."
    assert editor.error is None and changes == [1] and editor.value.text() == ""
    assert "gh-acme-2" in editor.technical.text()  # ids only under Technical details


def test_a_link_it_cannot_read_is_refused_with_what_to_paste(qtbot, editor):
    changes = []
    editor.changed.connect(lambda: changes.append(1))
    paste(qtbot, editor, "https://www.example.com/careers")
    assert len(editor.sources()) == 2 and changes == []
    assert editor.error.startswith("JobCtrl cannot read jobs from www.example.com yet.")
    assert editor.feedback.isVisible()
    assert editor.value.text() == "https://www.example.com/careers"  # kept, to correct it
    qtbot.keyClicks(editor.value, "x")  # typing again clears the message
    assert not editor.feedback.isVisible()


def test_the_table_speaks_plain_words(editor):
    headers = [editor.table.horizontalHeaderItem(c).text() for c in range(editor.table.columnCount())]
    assert headers == ["On", "Source", "Where"]
    cells = [editor.table.item(r, c).text() for r in range(editor.table.rowCount())
             for c in range(1, editor.table.columnCount())]
    assert cells == ["Demo board", "bundled sample postings", "Greenhouse board", "acme"]
    assert all(findings(text) == [] for text in cells + headers)


def wheel(widget, steps: int = -1) -> None:
    """A real wheel event over the middle of ``widget`` (through the app, like a mouse)."""
    center = QPointF(widget.rect().center())
    event = QWheelEvent(center, QPointF(widget.mapToGlobal(center.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_form_instead_of_changing_a_setting(qtbot):
    area = QScrollArea()
    qtbot.addWidget(area)
    body = QWidget()
    layout = QVBoxLayout(body)
    combo = QComboBox(body)
    combo.addItems(["Classic", "Compact"])
    layout.addWidget(combo)
    layout.addSpacing(2000)  # taller than the area: it scrolls
    area.setWidget(body)
    area.resize(300, 200)
    WheelGuard(area).guard_all(body)
    area.show()
    wheel(combo)
    assert combo.currentIndex() == 0  # unchanged
    assert area.verticalScrollBar().value() > 0  # the form scrolled
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus)
    wheel(combo)
    assert combo.currentIndex() == 1  # clicked into, it takes the wheel
