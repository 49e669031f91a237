"""Async client of the local API: typed REST calls and an SSE stream that reconnects
with ``Last-Event-ID`` and backoff. Qt-free, so scripts and tests use it too."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import aconnect_sse

from backend.desktop_contract import RuntimeInfo

RECONNECT_MIN_S = 0.25
RECONNECT_MAX_S = 10.0
# A request whose connection is refused never reached a server: it is sent again, for this
# long in any case (an API that a crash took away is back within about a second)...
REFUSED_RETRY_S = 2.0
# ... and for this long while the API is away on purpose (a planned restart: the
# supervisor's API_READY_TIMEOUT_S), waiting for it to be back rather than polling.
PLANNED_RESTART_WAIT_S = 30.0
RETRY_PAUSE_S = 0.1
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD"})


class ApiRequestError(RuntimeError):
    """A typed error answer from the API: ``{"error": {"code", "message"}}``."""

    def __init__(self, status: int, code: str, message: str,
                 fields: list[str] | None = None,
                 unsupported_claims: list[dict[str, str]] | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.fields = list(fields or [])  # the settings/body fields a 422 names
        # ``unsupported_claims``: {"claim", "why"} each, the edit's claims the profile lacks
        self.unsupported_claims = list(unsupported_claims or [])


class ApiUnavailable(RuntimeError):
    """A call was asked for while the API is not running (starting, failed or stopping)."""

    def __init__(self) -> None:
        super().__init__("JobCtrl's services are not running yet.")


@dataclass(frozen=True)
class StreamedEvent:
    id: int
    type: str
    payload: dict[str, Any]


class PlannedRestart:
    """Whether the API is away on purpose (the supervisor said "recycling"), and a way to
    wait until it is back ("ready") or no longer expected back (any other state)."""

    def __init__(self) -> None:
        self._back = asyncio.Event()
        self._back.set()

    @property
    def away(self) -> bool:
        return not self._back.is_set()

    def note(self, state: str) -> None:
        """The API service's latest state, as the supervisor reports it."""
        if state == "recycling":
            self._back.clear()
        else:
            self._back.set()

    async def until_back(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._back.wait(), timeout)


def may_send_again(method: str, error: httpx.TransportError, *, planned: bool) -> bool:
    """A refused connection never reached a server: any request may go again. Anything
    else may have reached a live API, so only a read goes again, and only while the API is
    away on purpose (its old process closed the connection as it stopped); a command is
    never sent twice."""
    if isinstance(error, httpx.ConnectError):
        return True
    return planned and method.upper() in IDEMPOTENT_METHODS


class ApiClient:
    def __init__(self, base_url: str, token: str):
        self.base_url = base_url
        self.planned_restart = PlannedRestart()
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            # No read timeout: an SSE stream is quiet between keepalives by design.
            timeout=httpx.Timeout(10, read=None),
            # The API is plain HTTP on loopback (runtime.json): no TLS context to build.
            # Loading certifi's CA bundle for it was ~40 ms of CPU on the way to "Ready".
            verify=base_url.startswith("https:"),
        )

    @classmethod
    def from_runtime(cls, info: RuntimeInfo) -> ApiClient:
        return cls(info.api_base_url, info.api_token)

    async def close(self) -> None:
        await self._http.aclose()

    async def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        """One request; sent again while the API restarts (``may_send_again``), so a call
        made during a planned restart waits for the new API and then succeeds."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            try:
                return await self._http.request(method, path, **kwargs)
            except httpx.TransportError as error:
                planned = self.planned_restart.away
                bound = PLANNED_RESTART_WAIT_S if planned else REFUSED_RETRY_S
                left = started + bound - loop.time()
                if left <= 0 or not may_send_again(method, error, planned=planned):
                    raise
            if self.planned_restart.away:
                await self.planned_restart.until_back(left)
            else:
                await asyncio.sleep(min(RETRY_PAUSE_S, left))

    async def _json(self, method: str, path: str, **kwargs) -> Any:
        response = await self._send(method, path, **kwargs)
        if response.status_code >= 400:
            raise _typed_error(response)
        return response.json()

    async def health(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/health")

    async def run_stage(self, stage: str, **extra: Any) -> dict[str, Any]:
        return await self._json("POST", "/v1/pipeline/actions/run-stage",
                                json={"stage": stage, **extra})

    async def jobs(self, *, limit: int = 50, offset: int = 0, **filters: Any) -> dict[str, Any]:
        params = {"limit": limit, "offset": offset,
                  **{key: value for key, value in filters.items() if value is not None}}
        return await self._json("GET", "/v1/jobs", params=params)

    async def job(self, job_key: str) -> dict[str, Any]:
        return await self._json("GET", f"/v1/jobs/{job_key}")

    async def job_action(self, job_key: str, action: str, **body: Any) -> dict[str, Any]:
        """``run-stage``, ``retry-stage``, ``rescore``, ``retailor`` (``discardEdits``),
        ``render-pdf``, ``prepare-anyway``, ``mark``, ``cancel``."""
        return await self._json("POST", f"/v1/jobs/{job_key}/actions/{action}", json=body)

    async def put_material(self, job_key: str, kind: str, document: dict[str, Any], *,
                           keep_unsupported: bool = False) -> dict[str, Any]:
        """``kind`` ``resume`` or ``cover-letter``: the user's version, the whole document,
        kept as a new generation; the PDFs are rendered from it (202, the pdf dispatch).
        A claim the profile does not hold is a 409 ``unsupported_claims`` (nothing saved)
        unless ``keep_unsupported``: the user can back it up, and it is recorded."""
        params = {"keepUnsupported": "true"} if keep_unsupported else None
        return await self._json("PUT", f"/v1/jobs/{job_key}/materials/{kind}", json=document,
                                params=params)

    async def settings(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/settings")

    async def patch_settings(self, **changes: Any) -> dict[str, Any]:
        return await self._json("PATCH", "/v1/settings", json=changes)

    async def profile(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/profile")

    async def put_profile(self, profile: dict[str, Any]) -> dict[str, Any]:
        return await self._json("PUT", "/v1/profile", json=profile)

    async def import_profile(self, source: Path | str | bytes,
                             file_name: str | None = None) -> dict[str, Any]:
        """A résumé file (a path, or its bytes and name) turned into a draft profile for
        review: ``{"profile", "unplaced", "source"}``. Nothing is saved."""
        if isinstance(source, bytes):
            data, name = source, file_name or "resume"
        else:
            path = Path(source)
            data, name = await asyncio.to_thread(path.read_bytes), file_name or path.name
        # Uploads and PDF parsing take longer than the default timeout allows.
        return await self._json("POST", "/v1/profile/import", files={"file": (name, data)},
                                timeout=httpx.Timeout(60))

    async def import_sample_profile(self) -> dict[str, Any]:
        """The bundled sample résumé as a draft (``profile.sample`` is true)."""
        return await self._json("POST", "/v1/profile/import", params={"sample": "true"},
                                timeout=httpx.Timeout(60))

    async def improve_offer(self) -> dict[str, Any]:
        """Whether "Improve with AI" is offered: ``{"available", "provider", "model",
        "paid", "reason"}``."""
        return await self._json("GET", "/v1/profile/import/improve")

    async def improve_import(self, body: dict[str, Any]) -> dict[str, Any]:
        """The draft read again by the configured model, every value checked against the
        file's text (``{"text", "draft", "unplaced", "source"}``); the import answer's
        shape plus ``dropped`` and ``model``. Nothing is saved. No read timeout: a model
        may take a minute or two (the API bounds each call)."""
        return await self._json("POST", "/v1/profile/import/improve", json=body,
                                timeout=httpx.Timeout(10, read=None))

    async def export_profile(self) -> dict[str, Any]:
        """The saved résumé as a JSON Resume document."""
        return await self._json("GET", "/v1/profile/export", params={"format": "jsonresume"})

    async def spend(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/spend")

    async def workflow_runs(self, **filters: Any) -> dict[str, Any]:
        params = {key: value for key, value in filters.items() if value is not None}
        return await self._json("GET", "/v1/workflow-runs", params=params)

    async def workflow_run(self, run_id: str) -> dict[str, Any]:
        return await self._json("GET", f"/v1/workflow-runs/{run_id}")

    async def cancel_run(self, run_id: str, reason: str | None = None) -> dict[str, Any]:
        return await self._json("POST", f"/v1/workflow-runs/{run_id}/actions/cancel",
                                json={"reason": reason} if reason else {})

    async def discovery_runs(self, *, limit: int = 20) -> list[dict[str, Any]]:
        return await self._json("GET", "/v1/discovery-runs", params={"limit": limit})

    async def pipeline_operations(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/pipeline/operations")

    async def discovery_schedule(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/discovery-schedule")

    async def secret_names(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/secrets")

    async def put_secret(self, name: str, value: str) -> None:
        response = await self._send("PUT", f"/v1/secrets/{name}", json={"value": value})
        if response.status_code >= 400:
            raise _typed_error(response)

    async def test_llm(self, llm: dict[str, Any] | None = None,
                       timeout_s: float | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if llm is not None:
            body["llm"] = llm
        if timeout_s is not None:
            body["timeoutS"] = timeout_s
        return await self._json("POST", "/v1/settings/llm/test", json=body)

    async def research_contacts(self, job_key: str) -> dict[str, Any]:
        """Start supervised contact research for one job (202 with task and workflow id)."""
        return await self._json("POST", f"/v1/jobs/{job_key}/actions/research-contacts")

    async def contacts(self, job_key: str) -> dict[str, Any]:
        """``{"tasks": [...], "candidates": [...]}`` of one job's contact research."""
        return await self._json("GET", f"/v1/jobs/{job_key}/contacts")

    async def apply_queue(self, **filters: Any) -> dict[str, Any]:
        """``{"items": [ApplyItem], "total": n}``; filters: ``status``, ``limit``, ``offset``."""
        params = {key: value for key, value in filters.items() if value is not None}
        return await self._json("GET", "/v1/apply/queue", params=params)

    async def apply_action(self, job_key: str, action: str, **body: Any) -> dict[str, Any]:
        """``approve`` (recipient, attachments), ``reject`` (reason), ``mark-applied``,
        ``start``."""
        return await self._json("POST", f"/v1/apply/{job_key}/{action}", json=body)

    async def apply_loop(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/apply/loop")

    async def applications(self) -> dict[str, Any]:
        """The application board: ``{"items", "total", "columns", "followUpsDue", "today",
        "ghostAfterDays"}``."""
        return await self._json("GET", "/v1/applications")

    async def application(self, job_key: str) -> dict[str, Any]:
        return await self._json("GET", f"/v1/applications/{job_key}")

    async def application_action(self, job_key: str, path: str, **body: Any) -> dict[str, Any]:
        """``moves`` (stage, date, note), ``undo``, ``follow-up/snooze`` (days | until),
        ``follow-up/done``, ``follow-up/email`` (recipient, subject, body), ``interviews``
        (startsAt, durationMinutes, location, notes), ``interviews/<id>/cancel``."""
        return await self._json("POST", f"/v1/applications/{job_key}/{path}", json=body)

    async def follow_up_draft(self, job_key: str) -> dict[str, Any]:
        """A follow-up email drafted from the profile and the letter sent (nothing sent)."""
        return await self._json("GET", f"/v1/applications/{job_key}/follow-up/email")

    async def interviews_ics(self, job_key: str) -> str:
        response = await self._send("GET", f"/v1/applications/{job_key}/interviews.ics")
        if response.status_code >= 400:
            raise _typed_error(response)
        return response.text

    async def insights(self) -> dict[str, Any]:
        return await self._json("GET", "/v1/insights")

    async def run_batch(self, stage: str, job_keys: list[str], workers: int) -> dict[str, Any]:
        """A selected Tailor / Cover batch: 202 with the run, or 200 with ``noopReason``
        (and ``busyJobKeys``) when every selected job is being prepared right now."""
        return await self.run_stage(stage, jobKeys=list(job_keys), workers=workers)

    async def rerun_stale(self, action: str) -> dict[str, Any]:
        """``rescore-stale`` or ``retailor-stale``: 202 at once with ``staleJobs``,
        ``startedWorkflows`` (the preparations the batch starts), ``jobKeys`` and the batch
        run (``workflowId``, ``firstExecutionRunId``), or 200 with ``noopReason:
        nothing_stale``."""
        return await self._json("POST", f"/v1/pipeline/actions/{action}")

    async def resolve_enrich_condition(self, code: str, host: str) -> dict[str, Any]:
        """Allow JobCtrl to read postings on ``host`` (``ENRICH_ROBOTS_DISALLOWED``): the
        jobs blocked there resume (202), or 200 ``noopReason: no_blocked_jobs``."""
        return await self._json("POST", "/v1/pipeline/conditions/enrich/resolve",
                                json={"code": code, "host": host})

    async def events(
        self,
        last_event_id: int | None = None,
        *,
        on_state: Callable[[str], None] | None = None,
    ) -> AsyncIterator[StreamedEvent]:
        """Yields events forever, reconnecting after drops without losing or repeating one.

        A drop while the API restarts on purpose is reported "resuming", not
        "reconnecting": the stream waits for the new API and resumes at once, no backoff."""
        backoff = RECONNECT_MIN_S
        report = on_state or (lambda state: None)
        while True:
            headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
            try:
                async with aconnect_sse(self._http, "GET", "/v1/events/stream",
                                        headers=headers) as source:
                    if source.response.status_code >= 400:
                        await source.response.aread()
                        raise _typed_error(source.response)
                    report("live")
                    backoff = RECONNECT_MIN_S
                    async with contextlib.aclosing(source.aiter_sse()) as stream:
                        async for sse in stream:
                            if sse.retry:
                                backoff = max(RECONNECT_MIN_S, sse.retry / 1000)
                            # Keepalive comments surface as unnamed, empty "message"
                            # events that repeat the last id: not ours, skip them.
                            if sse.event == "message" or not sse.data or not sse.id:
                                continue
                            last_event_id = int(sse.id)
                            yield StreamedEvent(last_event_id, sse.event, json.loads(sse.data))
            except (httpx.TransportError, httpx.StreamError):
                pass
            if self.planned_restart.away:
                report("resuming")
                await self.planned_restart.until_back(PLANNED_RESTART_WAIT_S)
                continue
            report("reconnecting")
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, RECONNECT_MAX_S)


def _typed_error(response: httpx.Response) -> ApiRequestError:
    try:
        error = response.json()["error"]
        return ApiRequestError(response.status_code, error["code"], error["message"],
                               error.get("fields"), error.get("unsupportedClaims"))
    except (ValueError, KeyError, TypeError):
        return ApiRequestError(response.status_code, "http_error", response.text[:200])
