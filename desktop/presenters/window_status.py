"""The window's one status line (Qt-free): what a job seeker needs to know about the
background service — starting, ready, reconnecting, stopping — in plain words (a
planned restart to free memory reads as ready: nothing waits on it, nothing is lost). Which
service is in which state, their process ids and the Temporal Web UI link are in
Pipelines → Details → Services, for whoever wants them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

SERVICES = ("temporal", "worker", "api")
UP_STATES = frozenset({"ready", "external"})
# A planned restart (the idle recycle, backend/supervision/recycle.py) is not a fault, and
# nothing is lost by it: the line stays calm while a service is "recycling" and while the
# event stream is "resuming" after it (desktop/client.py), and calls wait for the API.
CALM_STATES = UP_STATES | {"recycling"}
CALM_STREAMS = frozenset({"live", "resuming"})
PLANNED_RESTART_WORDS = "Restarting the background service to free memory; nothing is lost"
DETAILS_HINT = "Which service is doing what: Pipelines → Details → Services"


@dataclass(frozen=True)
class StatusLine:
    tone: str  # a desktop.theme COLORS key: ok | busy | bad | idle
    text: str
    # What is happening meanwhile, for the tooltip (not part of the state: READY during a
    # planned restart is still READY).
    details: str | None = field(default=None, compare=False)


READY = StatusLine("ok", "Ready")
STARTING = StatusLine("busy", "Starting…")
RECONNECTING = StatusLine("busy", "Reconnecting to the background service…")
STOPPING = StatusLine("busy", "Stopping…")
STOPPED = StatusLine("idle", "Stopped")
NOT_RUNNING = StatusLine("bad", "The background service is not running (see the message above)")


def status_line(services: Mapping[str, str], stream: str, *, was_ready: bool,
                stopping: bool = False, start_failed: bool = False) -> StatusLine:
    """``services``: each service's latest state (a missing one is still waiting);
    ``stream``: the event stream's state; ``was_ready``: the window has been ready once
    (a later gap is a reconnection, not a start)."""
    states = [services.get(name, "waiting") for name in SERVICES]
    if all(state == "stopped" for state in states):
        return STOPPED
    if stopping:
        return STOPPING
    if start_failed or "failed" in states:
        return NOT_RUNNING  # the banner says why and offers Retry
    if all(state in CALM_STATES for state in states) and stream in CALM_STREAMS:
        planned = "recycling" in states or stream == "resuming"
        return replace(READY, details=PLANNED_RESTART_WORDS) if planned else READY
    return RECONNECTING if was_ready else STARTING
