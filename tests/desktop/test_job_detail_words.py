"""The job detail's Fit box names the scorer in plain words, not internal ids."""

from __future__ import annotations

import pytest

from desktop.shell import ShellController
from desktop.views.job_detail import JobDetail, scored_by_text

pytestmark = pytest.mark.desktop


def test_the_offline_scorer_is_the_built_in_offline_model():
    assert scored_by_text({"provider": "offline", "model": "offline-heuristic"}) == (
        "scored by the built-in offline model")


def test_a_real_provider_is_named_with_its_model_and_unknown_stays_unknown():
    assert scored_by_text({"provider": "anthropic", "model": "claude-3-5-haiku"}) == (
        "scored by Anthropic claude-3-5-haiku")
    assert scored_by_text({"provider": "openai_compat", "model": "llama3.1"}) == (
        "scored by llama3.1")
    assert scored_by_text({"provider": None, "model": None}) == "scorer unknown"


def test_the_fit_box_shows_no_internal_names(qtbot, tmp_path):
    detail = JobDetail(ShellController(tmp_path))
    qtbot.addWidget(detail)
    detail._show_score({"version": 1, "score": 25, "rationale": "Title fits.", "matched": ["Go"],
                        "missing": [], "provider": "offline", "model": "offline-heuristic"})
    text = detail.score_label.text()
    assert "built-in offline model" in text
    assert "offline-heuristic" not in text and "version" not in text
    assert "offline-heuristic" in detail.score_label.toolTip()
