"""The Insights tab shows the route's figures as a chart and a table: a group of 5 or more
with its rates, a smaller one with "not enough applications yet" (never a percentage), the
ghosting caption, and plain words throughout. The figures come from the real route over a
real database (FastAPI TestClient)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths
from desktop.shell import ShellController
from desktop.views.insights_view import InsightsView
from tests.unit.application_helpers import job_key
from tests.unit.test_applications_api import TOKEN, insert_job

pytestmark = pytest.mark.desktop


@pytest.fixture
def insights(tmp_path) -> dict:
    app = create_app(AppPaths(tmp_path), api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        titles = ["Backend Engineer"] * 5 + ["Product Designer"] * 2
        for n, title in enumerate(titles, start=1):
            insert_job(tmp_path / "jobctrl.db", n, title)
            client.post(f"/v1/jobs/{job_key(n)}/actions/mark",
                        json={"userStatus": "applied"}).raise_for_status()
        for n, stage in ((1, "heard_back"), (2, "interviewing"), (3, "rejected")):
            client.post(f"/v1/applications/{job_key(n)}/moves",
                        json={"stage": stage}).raise_for_status()
        return client.get("/v1/insights").json()


def test_the_chart_and_table_show_figures_only_for_groups_of_five(qapp, qtbot, tmp_path,
                                                                  insights):
    view = InsightsView(ShellController(tmp_path))
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.apply(insights)
    assert ("7 applications: 43 % got a reply, 14 % led to an interview; the first reply "
            "came the same day (median)") in view.headline.text()
    assert "no reply after 30 days" in view.caption.text()
    view.dimension.setCurrentIndex(view.dimension.findData("roleFamily"))
    bars = {label: (rate, words) for label, rate, words in view.chart.bars}
    assert bars["Engineering"] == (0.6, "60 %")
    assert bars["Design"] == (None, "not enough applications yet")
    rows = {view.table.item(r, 0).text(): [view.table.item(r, c).text()
                                           for c in range(1, 6) if view.table.item(r, c)]
            for r in range(view.table.rowCount())}
    assert rows["Engineering"] == ["5", "60 %", "20 %", "same day", "0 %"]
    assert rows["Design"][:2] == ["2", "not enough applications yet"]
    view.dimension.setCurrentIndex(view.dimension.findData("source"))
    assert [b[0] for b in view.chart.bars] == ["Demo board"]
    view.rate.setCurrentIndex(view.rate.findData("ghostedRate"))
    assert view.chart.title == "Ghosted by source"
    shown = " ".join([view.headline.text(), view.caption.text(), view.chart.toolTip()])
    assert not re.search(r"\b[a-z]+_[a-z_]+\b|Rate\b", shown), shown
