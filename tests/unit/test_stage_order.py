"""Depth-first preparation: the queue order the workflows ask Temporal for."""

from __future__ import annotations

from pathlib import Path

from backend.domain.stages import STAGES
from backend.supervision.embedded_temporal import dev_server_argv
from backend.temporal.workflows.common import STAGE_PRIORITY, stage_options


def test_every_later_stage_goes_ahead_of_the_earlier_ones():
    keys = [STAGE_PRIORITY[stage] for stage in STAGES]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    assert all(1 <= key <= 5 for key in keys)  # the server's default range


def test_a_stage_activity_carries_its_priority_and_other_activities_keep_the_default():
    assert stage_options(60, "pdf")["priority"].priority_key == STAGE_PRIORITY["pdf"]
    assert "priority" not in stage_options(60)


def test_the_dev_server_writes_each_queue_to_one_partition_and_reads_them_all(monkeypatch):
    monkeypatch.delenv("JOBCTRL_TEMPORAL_DYNAMIC_CONFIG", raising=False)
    argv = dev_server_argv(Path("temporal"), history_file=Path("h.db"), port=7233, ui_port=None)
    values = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--dynamic-config-value"]
    assert values == ["matching.numTaskqueueWritePartitions=1"]


def test_titles_nearest_the_targets_start_first_and_equals_keep_the_board_order():
    from backend.pipeline.fit.titles import likely_fit_first

    titles = {"a": "Account Executive", "b": "Senior Backend Engineer", "c": "Data Analyst",
              "d": "Backend Engineer (Python)", "e": "Site Reliability Engineer",
              "f": "Office Manager"}
    order = likely_fit_first(titles, ["Backend Engineer", "Platform Engineer"])
    assert order[:2] == ["b", "d"]  # the same line of work, every target word
    assert order.index("e") < order.index("a")  # next door before another line of work
    assert order.index("a") < order.index("f")  # far away: the board's order among equals


def test_without_targets_the_board_order_stands():
    from backend.pipeline.fit.titles import likely_fit_first

    titles = {"x": "Office Manager", "y": "Backend Engineer", "z": "Account Executive"}
    assert likely_fit_first(titles, []) == ["x", "y", "z"]
