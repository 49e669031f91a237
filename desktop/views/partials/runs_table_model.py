"""The Runs table: one row per workflow run, keyed by its exact Temporal run id.

Sorting is the API's (``sort`` / ``order``), so each column names the server sort key it
stands for; the related-job column is not sortable. Rows are diffed in place by
``KeyedTableModel``, so the selected run and the scroll position survive refetches.
"""

from __future__ import annotations

from PySide6.QtGui import QBrush, QColor

from desktop.models.keyed_table_model import Column, KeyedTableModel
from desktop.presenters import runs as present
from desktop.views.status_indicators import COLORS


def _status_color(row) -> QBrush:
    return QBrush(QColor(COLORS[present.status_tone(row)]))


RUN_COLUMNS = [
    Column("Status", present.status_text, foreground=_status_color),
    # The workflow id is in the run's Technical details, not in a tooltip.
    Column("Run", present.run_name),
    Column("Started", lambda r: present.local_time_text(r.get("startedAt")),
           tooltip=lambda r: r.get("startedAt")),
    Column("Duration", lambda r: present.duration_text(r.get("durationMs"),
                                                       running=r.get("status") == "running"),
           align_right=True),
    Column("Related job", present.related_job_text),
]
# Column index -> the API's sort key (None: the server cannot sort by it).
SORT_KEYS: list[present.SortKey | None] = ["status", "workflowType", "startedAt", "durationMs",
                                           None]


class RunsTableModel(KeyedTableModel):
    def __init__(self, parent=None):
        super().__init__(RUN_COLUMNS, key=lambda row: row["runId"], parent=parent)
