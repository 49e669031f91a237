"""The Activity list's empty-state hint."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTabWidget, QWidget

from desktop.client import StreamedEvent
from desktop.views.activity_view import ActivityView

pytestmark = pytest.mark.desktop


def test_the_empty_hint_is_gone_when_events_arrived_while_the_tab_was_hidden(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QWidget(), "Pipelines")
    activity = ActivityView(tabs)
    tabs.addTab(activity, "Activity")
    tabs.show()
    assert not activity.isVisible()  # another tab is current, as at start-up
    activity.append(StreamedEvent(1, "DiscoveryRunStarted",
                                  {"discoverRunId": "run-1", "families": ["demo_board"]}))

    tabs.setCurrentWidget(activity)
    assert activity.isVisible()
    assert activity.model.rowCount() == 1
    assert not activity.empty_label.isVisible()


def test_the_empty_hint_explains_an_empty_list(qtbot):
    activity = ActivityView()
    qtbot.addWidget(activity)
    activity.show()
    assert activity.empty_label.isVisible()
    assert "Events appear here live" in activity.empty_label.text()
