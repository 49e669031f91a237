"""After applying: the application board's stages, which moves are allowed, follow-up
scheduling, ghosting and the "what is working" figures. Plain functions, no I/O.

Dates the user sees (the day they applied, a move's date, a follow-up's due day) are
calendar days in the user's local time zone, passed in explicitly: the UTC day would turn
over in the middle of a Californian afternoon. Instants (``appliedAt``, an interview's
start) stay UTC ISO strings.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Literal

from backend.domain.clock import parse_iso

# The longest follow-up email body accepted (the API's request model and the writer).
MAX_FOLLOW_UP_BODY_CHARS = 5000

ApplicationStage = Literal["applied", "heard_back", "interviewing", "offer", "rejected",
                           "withdrawn", "ghosted"]
# The board's columns, in order: the way forward, then the ways an application ends.
STAGES: tuple[ApplicationStage, ...] = ("applied", "heard_back", "interviewing", "offer",
                                        "rejected", "withdrawn", "ghosted")
STAGE_LABELS: dict[str, str] = {
    "applied": "Applied", "heard_back": "Heard back", "interviewing": "Interviewing",
    "offer": "Offer", "rejected": "Rejected", "withdrawn": "Withdrawn", "ghosted": "Ghosted",
}
# A reply from the employer: any answer, a rejection included.
REPLY_STAGES = frozenset({"heard_back", "interviewing", "offer", "rejected"})
INTERVIEW_STAGES = frozenset({"interviewing", "offer"})
# Nothing to follow up on any more.
CLOSED_STAGES = frozenset({"rejected", "withdrawn"})
ApplyVia = Literal["email", "apply_review", "job_action"]

DEFAULT_FOLLOW_UP_DAYS = 7
DEFAULT_GHOST_AFTER_DAYS = 30
MIN_GROUP_SIZE = 5  # below this a group's figures are withheld, never "50 % of 2"
NOT_ENOUGH = "not enough applications yet"
# A move may be dated a day ahead of the local today: the employer's time zone may be.
FUTURE_SLACK_DAYS = 1


# --- calendar days -----------------------------------------------------------------------


def local_day(instant: str | datetime, zone: tzinfo) -> date:
    """The user's calendar day of a UTC instant."""
    moment = parse_iso(instant) if isinstance(instant, str) else instant
    return moment.astimezone(zone).date()


def follow_up_due_on(applied_at: str, zone: tzinfo,
                     days: int = DEFAULT_FOLLOW_UP_DAYS) -> date:
    """The default next step: follow up ``days`` after the local day of applying."""
    return local_day(applied_at, zone) + timedelta(days=days)


def snoozed_until(today: date, *, days: int | None = None, until: date | None = None) -> date:
    return until if until is not None else today + timedelta(days=days or 1)


def check_snooze(due_on: date, today: date) -> None:
    if due_on < today:
        raise MoveRefused("snooze_in_past", "Choose today or a later day.", field="until")


# --- moves -------------------------------------------------------------------------------


class MoveRefused(ValueError):
    """A move the board does not take; ``code`` is the API's typed error code."""

    def __init__(self, code: str, message: str, field: str = "date"):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field  # the request field a date refusal is about


def check_move(current: str, target: str, *, on: date, applied_on: date, today: date) -> None:
    """Any stage may follow any other (the board is the user's record, not a workflow),
    but not the stage it is in, and not dated before applying or in the future."""
    if target not in STAGES:
        raise MoveRefused("unknown_stage", f"No board column {target!r}.")
    if target == current:
        raise MoveRefused("application_same_stage",
                          f"The application is already in {STAGE_LABELS[target]}.")
    if on < applied_on:
        raise MoveRefused("outcome_before_applying",
                          f"{on.isoformat()} is before you applied ({applied_on.isoformat()}).")
    if on > today + timedelta(days=FUTURE_SLACK_DAYS):
        raise MoveRefused("outcome_in_future", f"{on.isoformat()} is in the future.")


# --- one application's folded facts ------------------------------------------------------


@dataclass(frozen=True)
class Move:
    event_id: int
    stage: str
    on: str  # the local day the user says it happened
    note: str | None = None
    undone: bool = False


@dataclass(frozen=True)
class FollowUp:
    due_on: str | None  # local day; None once done
    reason: str         # after_applying | snoozed
    status: str         # scheduled | done


@dataclass(frozen=True)
class Interview:
    interview_id: str
    round: int
    starts_at: str      # UTC ISO instant
    duration_minutes: int
    location: str | None = None
    notes: str | None = None
    canceled: bool = False


def effective_moves(moves: Sequence[Move]) -> list[Move]:
    return [move for move in moves if not move.undone]


def current_stage(moves: Sequence[Move]) -> str:
    effective = effective_moves(moves)
    return effective[-1].stage if effective else "applied"


def last_undoable(moves: Sequence[Move]) -> Move | None:
    effective = effective_moves(moves)
    return effective[-1] if effective else None


def first_reply_on(moves: Sequence[Move]) -> date | None:
    """The earliest day of a reply the user recorded (and did not undo)."""
    days = [date.fromisoformat(m.on) for m in effective_moves(moves) if m.stage in REPLY_STAGES]
    return min(days) if days else None


def reached_interview(moves: Sequence[Move]) -> bool:
    return any(m.stage in INTERVIEW_STAGES for m in effective_moves(moves))


def days_without_reply(moves: Sequence[Move], applied_on: date, today: date) -> int | None:
    """Days since applying while nothing was heard; None once there is a reply or the
    application was withdrawn."""
    stage = current_stage(moves)
    if first_reply_on(moves) is not None or stage == "withdrawn":
        return None
    return max((today - applied_on).days, 0)


def follow_up_is_due(follow_up: FollowUp | None, moves: Sequence[Move], today: date) -> bool:
    """Due on and after its day, while it is open. The default one ("follow up if nothing
    was heard") lapses once there is a reply or the user called it ghosted; a date the
    user chose holds at any open stage."""
    if follow_up is None or follow_up.status != "scheduled" or follow_up.due_on is None:
        return False
    stage = current_stage(moves)
    if stage in CLOSED_STAGES:
        return False
    if follow_up.reason == "after_applying" and (first_reply_on(moves) is not None
                                                 or stage == "ghosted"):
        return False
    return date.fromisoformat(follow_up.due_on) <= today


def no_reply_text(days: int | None, ghost_after_days: int) -> str | None:
    """``no reply yet (31 days)`` once the threshold has passed; None before or after a
    reply."""
    if days is None or days < ghost_after_days:
        return None
    return f"no reply yet ({days} day{'s' if days != 1 else ''})"


def counts_as_ghosted(moves: Sequence[Move], applied_on: date, today: date,
                      ghost_after_days: int) -> bool:
    """Ghosted in Insights: the user said so, or no reply after the threshold."""
    if current_stage(moves) == "ghosted":
        return True
    days = days_without_reply(moves, applied_on, today)
    return days is not None and days >= ghost_after_days


# --- what is working ---------------------------------------------------------------------

ROLE_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Whole words; the first family that matches wins: a "Data Engineer" does data work,
    # a "Product Designer" designs, a "Product Manager" is product, an "Engineering
    # Manager" manages.
    ("Data & analytics", ("data", "analyst", "analytics", "machine learning", "ml",
                          "scientist", "bi")),
    ("Design", ("designer", "design", "ux", "ui")),
    ("Product", ("product",)),
    ("Management", ("manager", "head of", "director", "vp", "chief")),
    ("Engineering", ("engineer", "engineering", "developer", "programmer", "sre", "devops",
                     "architect", "software")),
)
OTHER_ROLES = "Other roles"


def role_family(title: str) -> str:
    words = f" {re.sub(r'[^a-z0-9]+', ' ', title.lower()).strip()} "
    for family, keywords in ROLE_FAMILIES:
        if any(f" {keyword} " in words for keyword in keywords):
            return family
    return OTHER_ROLES


FIT_BANDS: tuple[tuple[int, str], ...] = ((85, "85–100"), (70, "70–84"), (50, "50–69"),
                                          (0, "Below 50"))
NOT_SCORED = "Not scored"


def fit_band(score: int | None) -> str:
    if score is None:
        return NOT_SCORED
    return next(label for floor, label in FIT_BANDS if score >= floor)


@dataclass(frozen=True)
class ApplicationFacts:
    """What Insights knows about one application (its snapshot and folded moves)."""

    applied_on: date
    moves: tuple[Move, ...]
    source: str
    fit_score: int | None
    resume_template: str | None
    title: str


@dataclass(frozen=True)
class GroupFigures:
    """One group's figures; all None (with ``withheld`` set) below the minimum size."""

    label: str
    applications: int
    reply_rate: float | None
    interview_rate: float | None
    median_days_to_first_reply: float | None
    ghosted_rate: float | None
    withheld: str | None = None


def group_figures(label: str, facts: Sequence[ApplicationFacts], today: date,
                  ghost_after_days: int) -> GroupFigures:
    n = len(facts)
    if n < MIN_GROUP_SIZE:
        return GroupFigures(label, n, None, None, None, None, withheld=NOT_ENOUGH)
    replies = [(f, first_reply_on(f.moves)) for f in facts]
    waits = [(day - f.applied_on).days for f, day in replies if day is not None]
    return GroupFigures(
        label, n,
        reply_rate=len(waits) / n,
        interview_rate=sum(reached_interview(f.moves) for f in facts) / n,
        # Unknown stays unknown: no reply yet is no median, never "0 days".
        median_days_to_first_reply=float(statistics.median(waits)) if waits else None,
        ghosted_rate=sum(counts_as_ghosted(f.moves, f.applied_on, today, ghost_after_days)
                         for f in facts) / n)


DIMENSIONS: dict[str, str] = {
    "source": "Source", "fitBand": "Fit score", "roleFamily": "Role",
    "resumeTemplate": "Résumé template",
}


def dimension_key(dimension: str, facts: ApplicationFacts) -> str:
    if dimension == "source":
        return facts.source
    if dimension == "fitBand":
        return fit_band(facts.fit_score)
    if dimension == "roleFamily":
        return role_family(facts.title)
    if dimension == "resumeTemplate":
        return facts.resume_template or "unknown"
    raise ValueError(f"unknown dimension {dimension!r}")


def grouped_figures(dimension: str, facts: Iterable[ApplicationFacts], today: date,
                    ghost_after_days: int) -> list[GroupFigures]:
    """One group per value of the dimension, the largest first."""
    groups: dict[str, list[ApplicationFacts]] = {}
    for item in facts:
        groups.setdefault(dimension_key(dimension, item), []).append(item)
    ordered = sorted(groups.items(), key=lambda pair: (-len(pair[1]), pair[0]))
    return [group_figures(label, members, today, ghost_after_days) for label, members in ordered]


def ghosting_caption(ghost_after_days: int) -> str:
    return (f"Ghosted counts the applications you marked as ghosted and those with no "
            f"reply after {ghost_after_days} days. Figures appear once a group has "
            f"{MIN_GROUP_SIZE} applications.")
