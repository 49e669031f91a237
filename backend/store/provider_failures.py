"""Failed LLM provider calls (table ``llm_provider_failures``) and the bounded
``failureDiagnostics.providerFailures`` summary of one exact workflow run.

Only bounded fields are kept: provider, model, operation (the activity kind), the typed
error code, the provider's safe error *type* (a short identifier or nothing), the HTTP
status, retryability, the activity attempt and the workflow / run / activity ids that
correlate the call. Never a message, prompt, job or resume content, body, URL or secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from backend.domain.clock import utc_now_iso

_IDENT = re.compile(r"^[A-Za-z0-9_.:/-]{1,128}$")
_OPERATION = re.compile(r"^[a-z0-9_]{1,64}$")

# The typed LlmError codes, grouped into the categories the run detail shows.
CATEGORIES = {
    "provider_unavailable": "transient",
    "provider_response_invalid": "response",
    "authentication": "authentication",
    "configuration": "configuration",
    "llm_error": "other",
}
OUTSIDE_ACTIVITY = "outside_activity"


def _bounded(value: Any, pattern: re.Pattern[str], fallback: str | None) -> str | None:
    return value if isinstance(value, str) and pattern.fullmatch(value) else fallback


@dataclass(frozen=True)
class ProviderFailure:
    provider: str
    model: str
    operation: str
    code: str
    retryable: bool
    error_type: str | None = None
    http_status: int | None = None
    workflow_id: str | None = None
    run_id: str | None = None
    activity_id: str | None = None
    attempt: int | None = None

    def bounded(self) -> ProviderFailure:
        """Everything clipped to its bounded form before it touches the database."""
        status = self.http_status if isinstance(self.http_status, int) \
            and 100 <= self.http_status <= 599 else None
        return ProviderFailure(
            provider=_bounded(self.provider, _IDENT, "unknown"),
            model=_bounded(self.model, _IDENT, "unknown"),
            operation=_bounded(self.operation, _OPERATION, "other"),
            code=self.code if self.code in CATEGORIES else "llm_error",
            retryable=bool(self.retryable),
            error_type=_bounded(self.error_type, re.compile(r"^[A-Za-z0-9_.-]{1,48}$"), None),
            http_status=status,
            workflow_id=_bounded(self.workflow_id, _IDENT, None),
            run_id=_bounded(self.run_id, _IDENT, None),
            activity_id=_bounded(self.activity_id, _IDENT, None),
            attempt=self.attempt if isinstance(self.attempt, int) and self.attempt > 0 else None,
        )


async def record_provider_failure(conn, tenant_id: str, failure: ProviderFailure) -> None:
    f = failure.bounded()
    await conn.execute(
        "INSERT INTO llm_provider_failures (tenant_id, workflow_id, run_id, activity_id,"
        " attempt, provider, model, operation, category, error_type, http_status, retryable,"
        " occurred_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (tenant_id, f.workflow_id, f.run_id, f.activity_id, f.attempt, f.provider, f.model,
         f.operation, f.code, f.error_type, f.http_status, int(f.retryable), utc_now_iso()),
    )


async def provider_failures_for_run(db, tenant_id: str, workflow_id: str,
                                    run_id: str) -> dict[str, Any] | None:
    """Counts per provider / model with their codes, plus the latest safe diagnostic, for
    the exact (workflow id, run id); None when the run recorded no provider failure."""
    groups = await db.fetchall(
        "SELECT provider, model, category, COUNT(*) AS n FROM llm_provider_failures"
        " WHERE tenant_id = ? AND run_id = ? AND workflow_id = ?"
        " GROUP BY provider, model, category ORDER BY provider, model, category",
        (tenant_id, run_id, workflow_id))
    if not groups:
        return None
    by_provider: dict[tuple[str, str], dict[str, Any]] = {}
    for record in groups:
        entry = by_provider.setdefault(
            (record["provider"], record["model"]),
            {"provider": record["provider"], "model": record["model"], "count": 0, "codes": {}})
        entry["count"] += record["n"]
        entry["codes"][record["category"]] = record["n"]
    latest = await db.fetchone(
        "SELECT provider, model, operation, category, error_type, http_status, retryable,"
        " attempt, activity_id, workflow_id, run_id, occurred_at FROM llm_provider_failures"
        " WHERE tenant_id = ? AND run_id = ? AND workflow_id = ? ORDER BY id DESC LIMIT 1",
        (tenant_id, run_id, workflow_id))
    return {
        "source": "recorded",
        "total": sum(entry["count"] for entry in by_provider.values()),
        "byProvider": list(by_provider.values()),
        "latest": {
            "provider": latest["provider"], "model": latest["model"],
            "operation": latest["operation"],
            "category": CATEGORIES.get(latest["category"], "other"),
            "code": latest["category"], "type": latest["error_type"],
            "httpStatus": latest["http_status"], "retryable": bool(latest["retryable"]),
            "attempt": latest["attempt"], "activityId": latest["activity_id"],
            "workflowId": latest["workflow_id"], "runId": latest["run_id"],
            "occurredAt": latest["occurred_at"],
        },
    }
