"""The window's one status line (Qt-free): what a job seeker needs to know about the
background service — starting, ready, reconnecting, stopping — in plain words. Which
service is in which state, their process ids and the Temporal Web UI link are in
Pipelines → Details → Services, for whoever wants them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SERVICES = ("temporal", "worker", "api")
UP_STATES = frozenset({"ready", "external"})
DETAILS_HINT = "Which service is doing what: Pipelines → Details → Services"


@dataclass(frozen=True)
class StatusLine:
    tone: str  # a desktop.theme COLORS key: ok | busy | bad | idle
    text: str


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
    if all(state in UP_STATES for state in states) and stream == "live":
        return READY
    return RECONNECTING if was_ready else STARTING
