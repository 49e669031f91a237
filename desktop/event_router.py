"""Which views an event makes stale. Qt-free.

Every event type in ``backend.domain.events.EVENT_TYPES`` must have a route (the
every-event-has-handler rule; ``tests/desktop/test_event_router.py`` enforces it). When a
later issue registers a new event type, add it to ``ROUTES`` with the views it changes.

Views refetch what they show when invalidated; the Activity list appends every event
itself. An unknown type (e.g. a newer backend) is flagged: logged once and kept in
``EventRouter.unknown_types``, routed to the Activity list only; ``strict=True`` raises.

Routing needs only the type names below, so importing this module (every view does, for
the view keys) loads no event model: the registry (pydantic models of every event) is
imported by the checks that compare the routes with it, not while the services start.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.desktop_contract import DomainEvent
    from desktop.client import StreamedEvent

log = logging.getLogger(__name__)

ACTIVITY = "activity"
JOBS = "jobs"
RUNS = "runs"
PIPELINES = "pipelines"
SPEND = "spend"
SETTINGS = "settings"
APPLY = "apply"  # Apply Review: the approval queue and the standing loop
APPLICATIONS = "applications"  # the application board (and the tray's due follow-ups)
INSIGHTS = "insights"  # what is working: figures folded from the board
VIEW_KEYS = frozenset({ACTIVITY, JOBS, RUNS, PIPELINES, SPEND, SETTINGS, APPLY, APPLICATIONS,
                       INSIGHTS})


def _views(*keys: str) -> frozenset[str]:
    return frozenset({ACTIVITY, *keys})


ROUTES: Mapping[str, frozenset[str]] = {
    "DiscoveryRunStarted": _views(RUNS, PIPELINES),
    "JobDiscovered": _views(JOBS, PIPELINES),
    "DiscoveryRunCompleted": _views(RUNS, PIPELINES, JOBS),
    "DiscoveryRunFailed": _views(RUNS, PIPELINES),
    "WorkflowStarted": _views(RUNS, PIPELINES),
    "WorkflowCompleted": _views(RUNS, PIPELINES),
    "WorkflowFailed": _views(RUNS, PIPELINES),
    "WorkflowCanceled": _views(RUNS, PIPELINES),
    "WorkflowCancellationRequested": _views(RUNS),
    "WorkflowReconciled": _views(RUNS, PIPELINES),
    "PipelineStepQueued": _views(PIPELINES),
    "PipelineStepStarted": _views(PIPELINES),
    "PipelineStepCompleted": _views(PIPELINES, RUNS),
    "PipelineStepFailed": _views(PIPELINES, RUNS),
    # Per-job stages: the job's row and detail, the stage counts, the run's timeline;
    # a stage that ends may have spent on a model call.
    "StageStarted": _views(JOBS, PIPELINES, RUNS),
    "StageCompleted": _views(JOBS, PIPELINES, RUNS, SPEND, APPLY),
    "StageFailed": _views(JOBS, PIPELINES, RUNS, SPEND),
    "StageExhausted": _views(JOBS, PIPELINES, RUNS, SPEND),
    "StageReset": _views(JOBS, PIPELINES, RUNS),
    "StageBlocked": _views(JOBS, PIPELINES, RUNS),
    "StageSkipped": _views(JOBS, PIPELINES, RUNS),
    "StageCanceled": _views(JOBS, PIPELINES, RUNS),
    "JobEnriched": _views(JOBS, PIPELINES),
    "EnrichmentFailed": _views(JOBS, PIPELINES),
    "JobScored": _views(JOBS, PIPELINES, SPEND, APPLY),
    "ResumeApproved": _views(JOBS, PIPELINES, SPEND),
    "ResumeFailed": _views(JOBS, PIPELINES),
    "CoverLetterGenerated": _views(JOBS, PIPELINES, SPEND),
    "PdfRendered": _views(JOBS, APPLY),
    "JobUserStatusChanged": _views(JOBS, PIPELINES, APPLY, APPLICATIONS, INSIGHTS),
    "CandidateProfileUpdated": _views(SETTINGS, PIPELINES),  # eligibility may change
    # Condition-driven preparation: a continuation is about to run for these jobs.
    "ProfileContinuationIntended": _views(RUNS, PIPELINES),
    "EnrichConditionResolved": _views(RUNS, PIPELINES, JOBS),
    # A budget-halted job's preparation starts again now that the budget has room.
    "PreparationBudgetResumed": _views(RUNS, PIPELINES, JOBS),
    "BatchBudgetResumed": _views(RUNS, PIPELINES, JOBS),
    "ContactResearchBudgetResumed": _views(JOBS, RUNS),
    "PreparationInterruptedResumed": _views(RUNS, PIPELINES, JOBS),
    # Apply lifecycle: the job (and its Apply Review row); a claim or its end is run news.
    "ApplyApproved": _views(JOBS),
    "ApplyRejected": _views(JOBS),
    "ApplyStarted": _views(JOBS, RUNS),
    "ApplyAwaitingApproval": _views(JOBS, RUNS),
    "ApplyPacketReady": _views(JOBS, RUNS),
    "ApplySubmitted": _views(JOBS, RUNS),
    "ApplyMarkedApplied": _views(JOBS, PIPELINES),
    "ApplyFailed": _views(JOBS, RUNS),
    "ApplyCanceled": _views(JOBS, RUNS),
    # Contact research: the job's contacts panel; the run list; an extraction may spend.
    "ContactResearchRequested": _views(JOBS, RUNS),
    "ContactResearchStarted": _views(JOBS, RUNS),
    "ContactCandidateFound": _views(JOBS),
    "ContactResearchCompleted": _views(JOBS, RUNS, SPEND),
    "ContactResearchFailed": _views(JOBS, RUNS, SPEND),
    # After applying: the board and Insights; a follow-up email is a run of its own.
    "ApplicationTracked": _views(APPLICATIONS, INSIGHTS, JOBS),
    "ApplicationUntracked": _views(APPLICATIONS, INSIGHTS, JOBS),
    "ApplicationOutcomeRecorded": _views(APPLICATIONS, INSIGHTS),
    "ApplicationOutcomeUndone": _views(APPLICATIONS, INSIGHTS),
    "FollowUpScheduled": _views(APPLICATIONS),
    "FollowUpSnoozed": _views(APPLICATIONS),
    "FollowUpDone": _views(APPLICATIONS),
    "FollowUpEmailRequested": _views(APPLICATIONS, RUNS),
    "FollowUpEmailSent": _views(APPLICATIONS, RUNS),
    "FollowUpEmailFailed": _views(APPLICATIONS, RUNS),
    "InterviewScheduled": _views(APPLICATIONS, INSIGHTS),
    "InterviewCanceled": _views(APPLICATIONS),
}


class UnknownEventType(LookupError):
    def __init__(self, event_type: str):
        super().__init__(f"no route for event type {event_type!r}")
        self.event_type = event_type


def registered_event_names(types: Iterable[type[DomainEvent]] | None = None) -> set[str]:
    """The event types of ``types`` (default: every registered one)."""
    if types is None:
        from backend.desktop_contract import EVENT_TYPES as types
    return {cls.event_type for cls in types}


class EventRouter:
    def __init__(self, routes: Mapping[str, Iterable[str]] | None = None, *, strict: bool = False):
        chosen = ROUTES if routes is None else routes
        self.routes: dict[str, frozenset[str]] = {
            name: frozenset(views) for name, views in chosen.items()
        }
        bad = {name: views - VIEW_KEYS for name, views in self.routes.items() if views - VIEW_KEYS}
        if bad:
            raise ValueError(f"routes name unknown views: {bad}")
        self.strict = strict
        self.unknown_types: set[str] = set()

    def route(self, event: StreamedEvent | str) -> frozenset[str]:
        """The view keys this event invalidates."""
        event_type = event if isinstance(event, str) else event.type
        try:
            return self.routes[event_type]
        except KeyError:
            if self.strict:
                raise UnknownEventType(event_type) from None
            if event_type not in self.unknown_types:
                log.warning("event type %r has no route; showing it in Activity only",
                            event_type)
                self.unknown_types.add(event_type)
            return frozenset({ACTIVITY})

    def unrouted(self, types: Iterable[type[DomainEvent]] | None = None) -> set[str]:
        """Registered event types without a route (must be empty)."""
        return registered_event_names(types) - set(self.routes)

    def stale_routes(self, types: Iterable[type[DomainEvent]] | None = None) -> set[str]:
        """Routes for types that are not registered (renamed or removed events)."""
        return set(self.routes) - registered_event_names(types)
