"""One tracked application's state (a row of ``application_projections``), folded from
the Application* / FollowUp* / Interview* events.

The fold is pure domain logic. The projection builder runs it in the same transaction as
each append (``backend.projections.applications``), so a command reads its own write;
``backend.store.applications.rebuild_applications`` rebuilds every row from event 0 with
the same function, which is what makes the board reproducible from the log.

Fold rules:

* ``ApplicationTracked`` opens the card at ``applied`` (or shows a card that was
  untracked again, with its history); ``ApplicationUntracked`` hides it.
* ``ApplicationOutcomeRecorded`` appends a move; the stage is the last move not undone.
  ``ApplicationOutcomeUndone`` marks the named move undone (never removes it).
* ``FollowUpScheduled`` / ``FollowUpSnoozed`` set the next step's day; ``FollowUpDone``
  closes it.
* ``FollowUpEmailRequested`` / ``Sent`` / ``Failed`` keep each round's outcome.
* ``InterviewScheduled`` adds or replaces an interview by id; ``InterviewCanceled``
  marks it canceled.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from backend.domain.applications import FollowUp, Interview, Move, current_stage

APPLICATION_EVENT_TYPES = (
    "ApplicationTracked", "ApplicationUntracked", "ApplicationOutcomeRecorded",
    "ApplicationOutcomeUndone", "FollowUpScheduled", "FollowUpSnoozed", "FollowUpDone",
    "FollowUpEmailRequested", "FollowUpEmailSent", "FollowUpEmailFailed",
    "InterviewScheduled", "InterviewCanceled",
)


@dataclass(frozen=True)
class EmailRound:
    round: int
    recipient: str
    status: str  # requested | sent | failed
    message_id: str | None = None
    error_code: str | None = None
    at: str | None = None


@dataclass(frozen=True)
class ApplicationState:
    job_id: str
    title: str = ""
    company: str = ""
    via: str = ""
    applied_at: str = ""
    applied_on: str = ""
    tracked: bool = False
    moves: tuple[Move, ...] = ()
    follow_up: FollowUp | None = None
    interviews: tuple[Interview, ...] = ()
    emails: tuple[EmailRound, ...] = ()
    updated_at: str | None = None
    last_event_id: int = 0

    @property
    def stage(self) -> str:
        return current_stage(self.moves)


def fold(state: ApplicationState | None, job_id: str, event_type: str,
         payload: dict[str, Any], *, event_id: int) -> ApplicationState:
    current = state or ApplicationState(job_id=job_id)
    if event_id and event_id <= current.last_event_id:
        return current  # already folded
    stamped = replace(current, updated_at=payload.get("occurredAt") or current.updated_at,
                      last_event_id=max(event_id, current.last_event_id))
    return _apply(stamped, event_type, payload, event_id)


def _apply(state: ApplicationState, event_type: str, p: dict[str, Any],
           event_id: int) -> ApplicationState:
    if event_type == "ApplicationTracked":
        # A re-tracked card keeps the day it was first applied to.
        return replace(state, tracked=True, via=state.via or p["via"],
                       applied_at=state.applied_at or p["appliedAt"],
                       applied_on=state.applied_on or p["appliedOn"],
                       title=p.get("title") or state.title,
                       company=p.get("company") or state.company)
    if event_type == "ApplicationUntracked":
        return replace(state, tracked=False)
    if event_type == "ApplicationOutcomeRecorded":
        move = Move(event_id=event_id, stage=p["stage"], on=p["date"], note=p.get("note"))
        return replace(state, moves=(*state.moves, move))
    if event_type == "ApplicationOutcomeUndone":
        undone = p["undoneEventId"]
        return replace(state, moves=tuple(replace(m, undone=True) if m.event_id == undone
                                          else m for m in state.moves))
    if event_type == "FollowUpScheduled":
        return replace(state, follow_up=FollowUp(p["dueOn"], "after_applying", "scheduled"))
    if event_type == "FollowUpSnoozed":
        return replace(state, follow_up=FollowUp(p["dueOn"], "snoozed", "scheduled"))
    if event_type == "FollowUpDone":
        reason = state.follow_up.reason if state.follow_up else "after_applying"
        return replace(state, follow_up=FollowUp(None, reason, "done"))
    if event_type.startswith("FollowUpEmail"):
        return replace(state, emails=_email_rounds(state.emails, event_type, p))
    if event_type == "InterviewScheduled":
        return replace(state, interviews=_with_interview(state.interviews, p))
    if event_type == "InterviewCanceled":
        return replace(state, interviews=tuple(
            replace(i, canceled=True) if i.interview_id == p["interviewId"] else i
            for i in state.interviews))
    return state


def _email_rounds(rounds: tuple[EmailRound, ...], event_type: str,
                  p: dict[str, Any]) -> tuple[EmailRound, ...]:
    number = p["round"]
    existing = next((r for r in rounds if r.round == number), None)
    at = p.get("occurredAt")
    if event_type == "FollowUpEmailRequested":
        updated = existing or EmailRound(number, p["recipient"], "requested", at=at)
    elif event_type == "FollowUpEmailSent":
        updated = EmailRound(number, p["recipient"], "sent", message_id=p["messageId"], at=at)
    else:
        recipient = existing.recipient if existing else ""
        updated = EmailRound(number, recipient, "failed", error_code=p["errorCode"], at=at)
    others = tuple(r for r in rounds if r.round != number)
    return tuple(sorted((*others, updated), key=lambda r: r.round))


def _with_interview(interviews: tuple[Interview, ...], p: dict[str, Any]) -> tuple[Interview, ...]:
    interview = Interview(interview_id=p["interviewId"], round=p["round"],
                          starts_at=p["startsAt"], duration_minutes=p["durationMinutes"],
                          location=p.get("location"), notes=p.get("notes"))
    others = tuple(i for i in interviews if i.interview_id != interview.interview_id)
    return tuple(sorted((*others, interview), key=lambda i: (i.starts_at, i.interview_id)))


# --- (de)serialization of the row ---------------------------------------------------------


def state_to_json(state: ApplicationState) -> str:
    return json.dumps(asdict(state), sort_keys=True)


def state_from_json(text: str) -> ApplicationState:
    raw = json.loads(text)
    follow_up = raw.get("follow_up")
    return ApplicationState(
        **{key: raw[key] for key in ("job_id", "title", "company", "via", "applied_at",
                                     "applied_on", "tracked", "updated_at", "last_event_id")},
        moves=tuple(Move(**m) for m in raw.get("moves") or []),
        follow_up=FollowUp(**follow_up) if follow_up else None,
        interviews=tuple(Interview(**i) for i in raw.get("interviews") or []),
        emails=tuple(EmailRound(**e) for e in raw.get("emails") or []))
