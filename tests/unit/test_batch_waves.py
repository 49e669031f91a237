"""Selected batches: waves of at most ``workers`` jobs, 30 minutes per wave capped at 6 h."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend.pipeline.batch import (
    BATCH_CAP,
    WAVE_DEADLINE,
    batch_deadline,
    batch_stages,
    batch_workflow_id,
    wave_count,
    wave_timeout,
    waves,
)

JOBS = [f"job-{n}" for n in range(7)]


def test_waves_hold_at_most_the_requested_workers_in_order():
    planned = waves(JOBS, 3)
    assert planned == [JOBS[0:3], JOBS[3:6], JOBS[6:7]]
    assert waves(JOBS, 1) == [[job] for job in JOBS]
    assert waves(JOBS, 50) == [JOBS]
    assert waves([], 2) == []


def test_zero_workers_is_refused():
    with pytest.raises(ValueError):
        waves(JOBS, 0)


def test_a_batch_starts_at_tailor_or_cover_and_runs_downstream():
    assert batch_stages("tailor") == ["tailor", "cover", "pdf"]
    assert batch_stages("cover") == ["cover", "pdf"]
    with pytest.raises(ValueError):
        batch_stages("score")


def test_the_deadline_is_thirty_minutes_per_wave_capped_at_six_hours():
    assert wave_count(7, 3, stages=3) == 9
    assert batch_deadline(wave_count(7, 3, stages=3)) == timedelta(hours=4, minutes=30)
    assert batch_deadline(wave_count(100, 2, stages=3)) == BATCH_CAP == timedelta(hours=6)
    assert batch_deadline(1) == WAVE_DEADLINE == timedelta(minutes=30)


def test_a_wave_gets_thirty_minutes_or_what_is_left_and_none_after_the_budget():
    deadline = timedelta(hours=6)
    assert wave_timeout(timedelta(0), deadline) == timedelta(minutes=30)
    assert wave_timeout(timedelta(hours=5, minutes=50), deadline) == timedelta(minutes=10)
    assert wave_timeout(timedelta(hours=6), deadline) is None
    assert wave_timeout(timedelta(hours=7), deadline) is None


def test_the_workflow_id_names_the_selection_not_its_order():
    assert batch_workflow_id("tailor", JOBS) == batch_workflow_id("tailor", JOBS[::-1])
    assert batch_workflow_id("tailor", JOBS) != batch_workflow_id("cover", JOBS)
    assert batch_workflow_id("tailor", JOBS) != batch_workflow_id("tailor", JOBS[1:])
    assert batch_workflow_id("tailor", JOBS).startswith("batch-tailor-")
