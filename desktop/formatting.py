"""Readable text for events, API answers and errors. Qt-free, so tests read it directly.

One describer per registered event type (a test checks every type in
``backend.domain.events.EVENT_TYPES`` has one); an unknown type still gets a generic row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from desktop.client import ApiRequestError, StreamedEvent

Tone = Literal["info", "success", "warning", "error"]
Payload = dict[str, Any]


def short_id(value: str | None, length: int = 8) -> str:
    """Run ids are long UUIDs; the first characters identify one in a list."""
    if not value:
        return "?"
    return value if len(value) <= length else f"{value[:length]}…"


def _families_failed(payload: Payload) -> str:
    failed = payload.get("familiesFailed") or []
    return ", ".join(f"{item.get('family')} ({item.get('errorCode')})" for item in failed)


def _discovery_started(p: Payload) -> tuple[str, Tone]:
    families = ", ".join(p.get("families") or []) or "no sources"
    return f"Discover run {short_id(p.get('discoverRunId'))} started — {families}", "info"


def _job_discovered(p: Payload) -> tuple[str, Tone]:
    where = p.get("location") or p.get("remote") or "location unknown"
    return f"{p.get('title') or 'Untitled'} at {p.get('company') or '?'} ({where})", "info"


def _discovery_completed(p: Payload) -> tuple[str, Tone]:
    text = f"{p.get('jobsNew', 0)} new of {p.get('jobsObserved', 0)} seen"
    failed = _families_failed(p)
    if failed:
        return f"{text}; failed: {failed}", "warning"
    return text, "success"


def _discovery_failed(p: Payload) -> tuple[str, Tone]:
    text = f"{p.get('status', 'failed')}: {p.get('errorCode', '?')}"
    failed = _families_failed(p)
    return (f"{text}; failed: {failed}" if failed else text), "error"


def _workflow(p: Payload, verb: str) -> str:
    return (f"{p.get('workflowType', 'Workflow')} {p.get('workflowId', '?')} {verb}"
            f" (run {short_id(p.get('runId'))})")


def _workflow_started(p: Payload) -> tuple[str, Tone]:
    return _workflow(p, "started"), "info"


def _workflow_completed(p: Payload) -> tuple[str, Tone]:
    return _workflow(p, "completed"), "success"


def _workflow_failed(p: Payload) -> tuple[str, Tone]:
    return f"{_workflow(p, 'failed')}: {p.get('errorCode', '?')}", "error"


def _workflow_canceled(p: Payload) -> tuple[str, Tone]:
    return _workflow(p, "canceled"), "warning"


def _cancellation_requested(p: Payload) -> tuple[str, Tone]:
    text = f"{_workflow(p, 'cancellation requested')} by {p.get('requester', '?')}"
    if p.get("reason"):
        text += f": {p['reason']}"
    return text, "warning"


DESCRIBERS: dict[str, Callable[[Payload], tuple[str, Tone]]] = {
    "DiscoveryRunStarted": _discovery_started,
    "JobDiscovered": _job_discovered,
    "DiscoveryRunCompleted": _discovery_completed,
    "DiscoveryRunFailed": _discovery_failed,
    "WorkflowStarted": _workflow_started,
    "WorkflowCompleted": _workflow_completed,
    "WorkflowFailed": _workflow_failed,
    "WorkflowCanceled": _workflow_canceled,
    "WorkflowCancellationRequested": _cancellation_requested,
}


@dataclass(frozen=True)
class EventText:
    text: str
    tone: Tone


def describe_event(event: StreamedEvent) -> EventText:
    """``#123 JobDiscovered — Senior Backend Engineer at Acme Robotics (Berlin)``."""
    describer = DESCRIBERS.get(event.type)
    if describer is None:
        return EventText(f"#{event.id} {event.type}", "info")
    try:
        summary, tone = describer(event.payload)
    except Exception:  # noqa: BLE001 - a malformed payload must not break the list
        return EventText(f"#{event.id} {event.type} (unreadable payload)", "warning")
    return EventText(f"#{event.id} {event.type} — {summary}", tone)


# -- API answers ---------------------------------------------------------------------------

ERROR_TITLES = {
    "worker_runtime_unavailable": "Worker not running",
    "unauthorized": "Not authorized",
    "forbidden": "Not authorized",
}


def describe_api_error(error: BaseException) -> str:
    if isinstance(error, ApiRequestError):
        title = ERROR_TITLES.get(error.code) or error.code.replace("_", " ").capitalize()
        return f"{title}: {error.message}"
    if isinstance(error, httpx.TransportError):
        return f"API not reachable ({type(error).__name__}); is it running?"
    return f"Unexpected error: {error}"


def describe_accepted(accepted: Payload) -> str:
    run = accepted.get("firstExecutionRunId") or accepted.get("runId")
    if accepted.get("alreadyRunning"):
        return f"Discover is already running — run {run}"
    return f"Discover started — run {run}"
