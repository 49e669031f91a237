"""The Jobs list's rows: columns, the job's current stage in plain words, event patches.

A row scored below the user's minimum fit (``minFitScore``, which the view copies into
each row) never reads "ready": its status says it was not prepared, or prepared anyway.

Qt-light and mostly plain functions, so tests call them directly. A row is an item of
``GET /v1/jobs`` (camelCase). ``event_changes`` says how an event changes a shown row
when the event itself carries the canonical value (it is appended in the same transaction
as the canonical row); it returns None when only a refetch can tell.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtGui import QColor

from desktop.formatting import salary_range_text
from desktop.models.keyed_table_model import Column, KeyedTableModel, Row, field
from desktop.views.status_indicators import COLORS

STAGE_ORDER = ("enrich", "score", "tailor", "cover", "pdf")
STAGE_TITLES = {"enrich": "Enrich", "score": "Score", "tailor": "Tailor resume",
                "cover": "Cover letter", "pdf": "PDFs"}
STATUS_WORDS = {
    "pending": "waiting", "queued": "queued", "running": "running", "succeeded": "done",
    "failed": "failed", "exhausted": "gave up after retries", "blocked": "blocked",
    "skipped": "skipped", "canceled": "canceled",
}
STATUS_TONES = {
    "running": "busy", "queued": "busy", "failed": "bad", "exhausted": "bad", "blocked": "bad",
    "succeeded": "ok", "ready": "ok", "applied": "ok",
}
USER_STATUS_WORDS = {"applied": "Applied", "skipped": "Skipped by you"}
BELOW_WORDS = {"ready": "prepared anyway", "other": "below threshold"}
FIT_REASONS_SHOWN = 5
ATTENTION = frozenset({"failed", "exhausted", "blocked", "canceled"})
NOT_BLOCKING = frozenset({"succeeded"})

# Stage events -> the status the stage row has once the event is committed.
STAGE_EVENT_STATUS = {
    "StageStarted": "running", "StageCompleted": "succeeded", "StageExhausted": "exhausted",
    "StageReset": "pending", "StageBlocked": "blocked", "StageSkipped": "skipped",
    "StageCanceled": "canceled",
}


def current_stage(stages: Mapping[str, str] | None) -> tuple[str | None, str]:
    """(stage, status) that describes where the job is: a stage at work first, then the
    first one that is not done. ``(None, "ready")`` when every stage is done;
    ``(None, "new")`` before any stage has a row."""
    stages = stages or {}
    if not stages:
        return None, "new"
    for stage in STAGE_ORDER:
        if stages.get(stage) in ("queued", "running"):
            return stage, stages[stage]
    for stage in STAGE_ORDER:
        status = stages.get(stage, "pending")
        if status not in NOT_BLOCKING:
            return stage, status
    return None, "ready"


def stage_text(row: Row) -> str:
    stage, status = current_stage(row.get("stages"))
    if stage is None:
        return "Materials ready" if status == "ready" else "Discovered"
    return STAGE_TITLES[stage]


def below_threshold(row: Row) -> bool:
    score, floor = row.get("score"), row.get("minFitScore")
    return score is not None and floor is not None and int(score) < int(floor)


def status_key(row: Row) -> str:
    """The one word the Status column is colored and sorted by."""
    if row.get("userStatus"):
        return str(row["userStatus"])
    status = current_stage(row.get("stages"))[1]
    if below_threshold(row) and status not in ("queued", "running"):
        return "below"
    return status


def status_text(row: Row) -> str:
    mark = row.get("userStatus")
    if mark:
        return USER_STATUS_WORDS.get(mark, str(mark))
    _stage, status = current_stage(row.get("stages"))
    if status_key(row) == "below":
        return BELOW_WORDS["ready" if status == "ready" else "other"]
    if status == "ready":
        return "ready to apply"
    if status == "new":
        return "not started"
    return STATUS_WORDS.get(status, status)


def stages_tooltip(row: Row) -> str:
    stages = row.get("stages") or {}
    if not stages:
        return "No stage has run yet."
    lines = [f"{STAGE_TITLES[s]}: {STATUS_WORDS.get(stages.get(s, 'pending'), '?')}"
             for s in STAGE_ORDER]
    if below_threshold(row):
        lines.insert(0, f"Fit {row['score']} is below your minimum of {row['minFitScore']}: "
                        "no résumé or letter unless you choose Prepare anyway.")
    return "\n".join(lines)


def location_text(row: Row) -> str:
    location, remote = row.get("location"), row.get("remote")
    if location and remote and remote != "unknown" and remote.lower() not in location.lower():
        return f"{location} · {remote}"
    return location or (remote if remote and remote != "unknown" else "—")


def score_text(row: Row) -> str:
    score = row.get("score")
    return "—" if score is None else str(score)


def score_tooltip(row: Row) -> str | None:
    """The fit's top reasons ("✓ Python — Senior Backend Engineer, Northwind (2021–)")."""
    if row.get("score") is None:
        return "Not scored yet"
    reasons = [str(reason) for reason in row.get("fitReasons") or []][:FIT_REASONS_SHOWN]
    return "\n".join(reasons) or None


def salary_text(row: Row) -> str:
    return salary_range_text(row.get("salaryMin"), row.get("salaryMax"), row.get("salaryCurrency"))


def salary_sort(row: Row) -> int:
    return int(row.get("salaryMax") or row.get("salaryMin") or -1)


def score_sort(row: Row) -> int:
    score = row.get("score")
    return -1 if score is None else int(score)  # unscored last when sorted high to low


def _tone(row: Row) -> QColor | None:
    tone = STATUS_TONES.get(status_key(row))
    return QColor(COLORS[tone]) if tone else None


def status_rank(row: Row) -> tuple[int, str]:
    """Sort by progress: attention first, then at work, then by stage reached."""
    key = status_key(row)
    stage, _status = current_stage(row.get("stages"))
    order = STAGE_ORDER.index(stage) if stage else len(STAGE_ORDER)
    group = 0 if key in ATTENTION else 1 if key in ("queued", "running") else 2
    return group * 10 + order, key


def whole(display):
    """The cell's whole text as its tooltip: a narrow column elides it."""
    def tooltip(row: Row) -> str | None:
        text = display(row)
        return None if text in (None, "", "—") else str(text)
    return tooltip


COLUMNS = (
    Column("Title", field("title"), tooltip=whole(field("title"))),
    Column("Company", field("company"), tooltip=whole(field("company"))),
    Column("Location", location_text, tooltip=whole(location_text)),
    Column("Salary", salary_text, sort_value=salary_sort, tooltip=whole(salary_text)),
    Column("Fit", score_text, sort_value=score_sort, align_right=True, tooltip=score_tooltip),
    Column("Stage", stage_text, sort_value=lambda row: status_rank(row)[0],
           tooltip=stages_tooltip),
    Column("Status", status_text, sort_value=lambda row: status_rank(row)[1],
           tooltip=stages_tooltip, foreground=_tone),
)
TITLE, COMPANY, LOCATION, SALARY, FIT, STAGE, STATUS = range(len(COLUMNS))
# Column -> the API's sort key, so a truncated list holds the top rows of that order.
SERVER_SORT = {TITLE: "title", COMPANY: "company", LOCATION: "location", FIT: "score"}


def event_changes(row: Row, event_type: str, payload: Mapping[str, Any]) -> dict | None:
    """The fields ``event`` sets on ``row``, or None when the event does not carry them."""
    if event_type == "JobScored":
        return {"score": payload["score"]}
    if event_type == "JobUserStatusChanged":
        return {"userStatus": payload.get("userStatus")}
    status = STAGE_EVENT_STATUS.get(event_type)
    if event_type == "StageFailed" and payload.get("retryable") is False:
        status = "failed"  # a retryable failure may still be retrying: refetch instead
    if status is None or "stage" not in payload:
        return None
    return {"stages": {**(row.get("stages") or {}), payload["stage"]: status}}


# Fields a patch changes, per server filter that depends on them.
FILTER_FIELDS = {"minScore": "score", "stage": "stages", "stageStatus": "stages",
                 "userStatus": "userStatus"}
SORT_FIELDS = {"score": "score"}


def _shown(column: Column, row: Row) -> tuple:
    """Everything a cell shows or sorts by."""
    return (column.display(row), column.sort_value(row) if column.sort_value else None,
            column.tooltip(row) if column.tooltip else None,
            column.foreground(row) if column.foreground else None)


class JobsTableModel(KeyedTableModel):
    def __init__(self, parent=None):
        super().__init__(COLUMNS, key=lambda row: row["jobId"], parent=parent)

    def patch(self, key: str, changes: Mapping[str, Any]) -> bool:
        """Like the base, but announces only the cells whose text changed: a one-cell
        ``dataChanged`` lets the view repaint that cell instead of its whole viewport."""
        position = self.row_of(key)
        if position is None:
            return False
        before = self._rows[key]
        merged = {**before, **changes}
        if merged == before:
            return True
        old = [_shown(column, before) for column in self.columns]
        self._rows[key] = merged
        for column, (was, spec) in enumerate(zip(old, self.columns, strict=True)):
            if _shown(spec, merged) != was:
                index = self.index(position, column)
                self.dataChanged.emit(index, index)
        return True
