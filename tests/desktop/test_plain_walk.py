"""The plain-language walker itself: it reads what a user sees, skips what is hidden or
folded under Technical details, and reports each code-like word. No services."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QTableView, QVBoxLayout, QWidget

from desktop.views.partials.technical_disclosure import TechnicalDisclosure
from tests.desktop.plain_walk import read, scan
from tests.plain_words import findings

pytestmark = pytest.mark.desktop


def test_the_walker_reports_codes_outside_technical_details_only(qtbot):
    root = QWidget()
    qtbot.addWidget(root)
    layout = QVBoxLayout(root)
    layout.addWidget(QLabel("PipelineStepCompleted — enrichment_pass enrichment_pass", root))
    button = QPushButton("Retry", root)
    button.setToolTip("run 0192f3a4-5b6c-7d8e-9f00-112233445566")
    layout.addWidget(button)
    combo = QComboBox(root)
    combo.addItems(["Every day", "offline/offline-heuristic"])
    layout.addWidget(combo)
    model = QStandardItemModel(1, 1, root)
    model.setHorizontalHeaderLabels(["Where"])
    model.setItem(0, 0, QStandardItem("ENRICH_ROBOTS_DISALLOWED"))
    table = QTableView(root)
    table.setModel(model)
    layout.addWidget(table)
    hidden = QLabel("job_0123456789abcdef01234567", root)
    layout.addWidget(hidden)
    hidden.hide()
    technical = TechnicalDisclosure(root)
    technical.set_rows([("Workflow id", "discover-local")])
    technical.set_expanded(True)
    layout.addWidget(technical)
    root.show()

    problems = scan(root)
    assert problems == [
        "QLabel: event or workflow type name 'PipelineStepCompleted' in "
        "'PipelineStepCompleted — enrichment_pass enrichment_pass'",
        "QLabel: snake_case code 'enrichment_pass' in "
        "'PipelineStepCompleted — enrichment_pass enrichment_pass'",
        "QPushButton: uuid '0192f3a4-5b6c-7d8e-9f00-112233445566' in "
        "'run 0192f3a4-5b6c-7d8e-9f00-112233445566'",
        "QComboBox: provider/model slug 'offline/offline-heuristic' in "
        "'offline/offline-heuristic'",
        "QTableView: UPPER_SNAKE code 'ENRICH_ROBOTS_DISALLOWED' in 'ENRICH_ROBOTS_DISALLOWED'",
    ]
    texts = [text for _name, text in read(root)]
    assert "Where" in texts and "Retry" in texts
    assert not any("discover-local" in text for text in texts)  # folded away on purpose


def test_paths_links_and_addresses_are_the_users_words():
    assert findings("App folder: <a href='file:///tmp/my_app'>/tmp/my_app</a>") == []
    assert findings("Mail to jane_doe@example.org or see https://x.org/a_b?c_d=1") == []
    assert findings("Scored Senior Backend Engineer at Northwind: fit 82") == []
    assert findings("Workflow discover-local, run 01a2b3c4e5, job job_0123456789abcdef") == [
        "workflow id 'discover-local'", "snake_case code 'job_0123456789abcdef'",
        "hex id '01a2b3c4e5'"]
