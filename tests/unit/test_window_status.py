"""The window's one status line (desktop/presenters/window_status.py): plain words for
the background service as a whole; which service is in which state is in Details."""

from __future__ import annotations

from desktop.presenters.window_status import (
    NOT_RUNNING,
    PLANNED_RESTART_WORDS,
    READY,
    RECONNECTING,
    STARTING,
    STOPPED,
    STOPPING,
    status_line,
)

UP = {"temporal": "ready", "worker": "ready", "api": "ready"}


def test_ready_only_when_every_service_is_up_and_the_stream_is_live():
    assert status_line(UP, "live", was_ready=False) == READY
    assert status_line({**UP, "temporal": "external"}, "live", was_ready=False) == READY
    assert status_line(UP, "connecting", was_ready=False) == STARTING
    assert status_line({**UP, "worker": "starting"}, "live", was_ready=False) == STARTING
    assert status_line({}, "offline", was_ready=False) == STARTING  # nothing reported yet


def test_a_gap_after_being_ready_is_a_reconnection_not_a_start():
    assert status_line(UP, "reconnecting", was_ready=True) == RECONNECTING
    assert status_line({**UP, "api": "restarting"}, "live", was_ready=True) == RECONNECTING


def test_a_planned_restart_stays_calm_and_says_what_happens():
    recycling = status_line({**UP, "api": "recycling"}, "resuming", was_ready=True)
    assert recycling == READY and recycling.details == PLANNED_RESTART_WORDS
    assert status_line({**UP, "worker": "recycling"}, "live", was_ready=True) == READY
    assert status_line(UP, "resuming", was_ready=True) == READY  # back, stream resumes
    assert status_line(UP, "live", was_ready=True).details is None
    # The restart did not go as planned: that one is a reconnection again.
    assert status_line({**UP, "api": "restarting"}, "resuming", was_ready=True) == RECONNECTING
    assert "_" not in PLANNED_RESTART_WORDS and "API" not in PLANNED_RESTART_WORDS


def test_failure_stopping_and_stopped():
    assert status_line({**UP, "worker": "failed"}, "live", was_ready=True) == NOT_RUNNING
    assert status_line({}, "offline", was_ready=False, start_failed=True) == NOT_RUNNING
    assert status_line(UP, "live", was_ready=True, stopping=True) == STOPPING
    stopped = dict.fromkeys(UP, "stopped")
    assert status_line(stopped, "offline", was_ready=True, stopping=True) == STOPPED


def test_the_words_are_a_job_seekers():
    for line in (READY, STARTING, RECONNECTING, STOPPING, STOPPED, NOT_RUNNING):
        assert "Temporal" not in line.text and "API" not in line.text and "_" not in line.text
