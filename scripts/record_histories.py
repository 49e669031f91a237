"""Record real Temporal workflow histories for tests/unit/test_workflow_replay.py.

An upgrade replaces the workflow code while runs are open in the embedded Temporal server;
Temporal then replays their histories against the new code. The replay test keeps one or
two recorded histories per registered workflow type and replays them against the current
code, so a nondeterministic change (other commands, another order, a renamed activity, a
removed patch) fails a unit test instead of a user's open workflow.

This script makes those histories from real runs. It starts a real Supervisor (Temporal dev
server, worker, API) on a temporary app dir, with a small slice of the demo board and the
built-in offline model, and drives it through the API like the desktop does:

1. ``no-profile``: Discover with no profile yet (jobs stop at Score: ``profile_missing``).
2. ``profile-save``: saving the profile starts ``PreparationContinuationWorkflow`` for them
   (Score, Tailor, Cover and, behind its patch, PDF).
3. ``with-profile``: one more posting, Discover again: a full single-job preparation.
4. ``tailor-batch``: a selected Tailor batch of one job, one worker (``BatchStageWorkflow``).
5. ``dry-run``: approve one job whose apply URL is a loopback form page and apply with
   ``applyDryRun`` on (``ApplyWorkflow`` for one job).
6. ``posting-text``: contact research for one job (reads only the stored posting).
7. ``auto-apply-loop``: turn the standing auto-apply loop on, let it poll twice, turn it
   off (``ApplyWorkflow`` continuous, ending canceled).
8. ``canceled``: a posting whose page answers only when released; its preparation is
   canceled (``/v1/jobs/{key}/actions/cancel``) while Enrich waits on it.
9. ``batch-canceled``: a "paid model" on loopback that holds its answer; a one-job Tailor
   batch is canceled (``/v1/workflow-runs/{runId}/actions/cancel``) while it waits.
10. ``budget-exceeded``: a ceiling below one paid call: a new job's preparation and a
    one-job Tailor batch fail at the spend preflight, before any model call.

Then the closing paths the first set left out (``Steps.run_second_set``, added later):

11. ``budget-exceeded`` (again, still over the ceiling): contact research fails at its
    spend preflight (``ContactResearchWorkflow``).
12. ``discover-canceled``: a Greenhouse board on loopback that holds its answer; the
    Discover run of only that source is canceled (``/v1/workflow-runs/{runId}/actions/cancel``)
    while it crawls: ``finalize_discovery`` with ``canceled``.
13. ``discover-failed``: a Discover of only a board that answers 500: the family fails
    (``record_family_failure``), the sweep, then the run fails (every family failed).
14. ``stage-gave-up``: a posting whose page always answers 500: its preparation's Enrich
    exhausts its attempts, ``reconcile_stage_failure``, the job's workflow fails.
15. ``enrich-condition``: postings on hosts whose robots.txt refuses every crawler; resolving
    the condition for one host (``/v1/pipeline/conditions/enrich/resolve``) starts the
    continuation Enrich → Score → Tailor → Cover → PDF for its job (completed).
16. ``continuation-canceled``: the same on a second host whose page holds its answer; the
    continuation is canceled while its Enrich waits.
17. ``research-canceled``: a paid model on loopback that holds its answer; contact research
    is canceled while its extraction call waits.
18. ``budget-exceeded`` (again): the third host's continuation fails at its spend preflight.

And one more (``Steps.run_third_set``):

19. ``policy-rerun``: a changed profile makes the prepared jobs' scores stale; "Rescore
    stale" (``/v1/pipeline/actions/rescore-stale``) starts ``PolicyRerunWorkflow``, which
    starts one preparation child per stale job (completed). ``--only policy-rerun`` records
    just this step (after preparing two jobs, unrecorded).

And (``Steps.run_fourth_set``):

20. ``sent``: one job marked applied, its drafted follow-up email sent through a loopback
    SMTP server (``FollowUpEmailWorkflow``, completed). ``--only follow-up-email`` records
    just this step.

Not recorded: the auto-apply loop's continue-as-new (after ``POLLS_PER_RUN`` = 200 polls
of 3 s; no setting or API input lowers it).

The canceled and failed runs matter as much as the completed ones: the closing paths
(lifecycle activity, cancel bookkeeping, typed failure) are commands too.

After each step it waits until nothing runs, then writes the smallest history of every
workflow type that step produced (or of the types the step keeps) to
``<out>/<WorkflowType>.<step>.json`` (``history.to_json()``). Record from the code the
histories should pin: to guard a refactor, check out the commit before it, run this
there and copy the files over.

Usage (from the repository root, with the project's .venv)::

    .venv/bin/python scripts/record_histories.py [--out tests/unit/data/histories]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a plain script from a checkout

from backend.domain.ids import job_id_for_url  # noqa: E402
from backend.sources.board_file import demo_board_text  # noqa: E402
from backend.supervision.supervisor import Supervisor  # noqa: E402
from backend.temporal.client import connect_temporal  # noqa: E402
from backend.temporal.contracts import prep_workflow_id  # noqa: E402

DEFAULT_OUT = ROOT / "tests" / "unit" / "data" / "histories"
WAIT_S = 240.0
PROFILE = {
    "name": "Ada Example",
    "email": "ada@example.org",
    "headline": "Backend engineer",
    "targetTitles": ["Backend Engineer", "Platform Engineer", "Data Engineer"],
    "locations": ["Berlin", "Remote"],
    "remotePreference": "remote_or_hybrid",
    "salaryFloor": 70000,
    "salaryCurrency": "EUR",
    "skills": ["Python", "PostgreSQL", "Kubernetes", "AWS", "Terraform", "Go", "SQL"],
    "mustHaveKeywords": ["Python"],
    "dealBreakerKeywords": ["on-call 24/7"],
    "resumeText": "Ada Example\nBackend engineer with eight years of Python.\n\nEXPERIENCE\n"
                  "- Built a PostgreSQL-backed billing platform\n- Moved 40 services to"
                  " Kubernetes on AWS\n\nEDUCATION\n- BSc Computer Science, TU Berlin\n",
}
FORM_PAGE = (b"<!doctype html><html><body><h1>Apply</h1><form method='post'>"
             b"<input name='name'><input type='file' name='resume'><button>Submit</button>"
             b"</form></body></html>")
SLOW_PAGE = (b"<!doctype html><html><body><main><h1>Platform Engineer</h1><p>Python, Kubernetes"
             b" and AWS for a logistics platform. Hybrid in Berlin.</p></main></body></html>")


class Gate:
    """A loopback answer held until released: ``requested`` is set when it is asked for."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.release = threading.Event()

    def hold(self) -> None:
        self.requested.set()
        self.release.wait(timeout=WAIT_S)


class LoopbackPages:
    """Loopback pages: an application form (so the dry-run apply parks a packet), a
    robots.txt (allowing everything unless told otherwise), posting pages under ``/jobs/``,
    pages and a board API under ``/broken/`` that always answer 500, and answers held until
    released: a posting page under ``/slow/``, a board API under ``/held-board/``, a "paid
    model" (any POST; a second one under ``/llm2/``). So a preparation is still enriching, a
    batch still tailoring, a Discover still crawling... when it is canceled."""

    def __init__(self, robots: bytes = b"User-agent: *\nAllow: /\n") -> None:
        self.slow, self.model, self.board, self.model2 = Gate(), Gate(), Gate(), Gate()
        # The names the first steps use.
        self.slow_requested, self.release_slow = self.slow.requested, self.slow.release
        self.model_called, self.release_model = self.model.requested, self.model.release
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path == "/robots.txt":
                    self.reply(robots, "text/plain")
                    return
                if self.path.startswith("/broken/"):
                    self.reply(b"upstream broke", "text/plain", 500)
                    return
                if self.path.startswith("/held-board/"):
                    pages.board.hold()
                    self.reply(b'{"jobs": []}', "application/json")
                    return
                if self.path.startswith(("/slow/", "/jobs/")):
                    if self.path.startswith("/slow/"):
                        pages.slow.hold()
                    self.reply(SLOW_PAGE, "text/html")
                    return
                self.reply(FORM_PAGE, "text/html")

            def do_POST(self) -> None:  # noqa: N802 - the held "paid models" (/llm/v1/...)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                (pages.model2 if self.path.startswith("/llm2/") else pages.model).hold()
                self.reply(b'{"error": {"message": "released"}}', "application/json", 503)

            def reply(self, body: bytes, kind: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        for gate in (self.slow, self.model, self.board, self.model2):
            gate.release.set()
        self.server.shutdown()
        self.server.server_close()


def demo_postings(count: int) -> list[dict]:
    return json.loads(demo_board_text())["postings"][:count]


def write_board(path: Path, postings: list[dict]) -> None:
    path.write_text(json.dumps({"postings": postings}), encoding="utf-8")


async def wait_until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.5)


async def executions(client: Client) -> dict[tuple[str, str], object]:
    return {(e.id, e.run_id): e async for e in client.list_workflows()}


async def wait_all_closed(client: Client) -> None:
    """Nothing running, seen on three polls in a row (visibility lags a start a little)."""
    quiet = 0

    async def settled() -> bool:
        nonlocal quiet
        running = [e async for e in client.list_workflows("ExecutionStatus='Running'")]
        quiet = 0 if running else quiet + 1
        return quiet >= 3

    await wait_until(settled, "every workflow to close")


async def wait_closed(client: Client, workflow_id: str, run_id: str | None) -> None:
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)

    async def closed() -> bool:
        try:
            return (await handle.describe()).status != WorkflowExecutionStatus.RUNNING
        except RPCError as error:  # started by an outbox a moment after the API answered
            if error.status == RPCStatusCode.NOT_FOUND:
                return False
            raise

    await wait_until(closed, f"{workflow_id} to close")


class Recorder:
    """Runs the steps; after each, writes the smallest new history of each workflow type."""

    def __init__(self, client: Client, out: Path) -> None:
        self.client = client
        self.out = out
        self.written: list[Path] = []

    async def step(self, label: str, drive: Callable[[], Awaitable[None]],
                   keep: set[str] | None = None, ids: set[str] | None = None) -> None:
        """``keep``: only these workflow types (others the step starts are recorded
        elsewhere); ``ids``: only these workflow ids (one job among the ones it prepares)."""
        before = set(await executions(self.client))
        await drive()
        await wait_all_closed(self.client)
        new = [e for key, e in (await executions(self.client)).items()
               if key not in before and (keep is None or e.workflow_type in keep)
               and (ids is None or e.id in ids)]
        smallest: dict[str, object] = {}
        for execution in new:
            kept = smallest.get(execution.workflow_type)
            if kept is None or execution.history_length < kept.history_length:
                smallest[execution.workflow_type] = execution
        for workflow_type, execution in sorted(smallest.items()):
            await self._write(workflow_type, label, execution)

    async def _write(self, workflow_type: str, label: str, execution) -> None:
        handle = self.client.get_workflow_handle(execution.id, run_id=execution.run_id)
        history = await handle.fetch_history()
        path = self.out / f"{workflow_type}.{label}.json"
        path.write_text(history.to_json() + "\n", encoding="utf-8")
        self.written.append(path)
        print(f"{path.name}: {len(history.events)} events, {execution.status.name.lower()}")


async def record(out: Path, only: str | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    # The paid-model steps store an API key: keep it in the temporary app dir.
    os.environ.setdefault("JOBCTRL_SECRETS_BACKEND", "file")
    pages = LoopbackPages()
    # Hosts whose robots.txt refuses every crawler: their postings' Enrich is blocked until
    # the user resolves the condition for that host (one host per continuation recorded).
    refusing = {name: LoopbackPages(robots=b"User-agent: *\nDisallow: /\n")
                for name in ("completes", "canceled", "budget")}
    with tempfile.TemporaryDirectory(prefix="jobctrl-histories-") as tmp:
        app_dir = Path(tmp)
        postings = demo_postings(4)
        postings[0]["applyUrl"] = f"{pages.base}/apply/form"
        board = app_dir / "board.json"
        (app_dir / "settings.json").write_text(json.dumps({
            "sources": [{"kind": "json_file", "id": "demo-slice", "path": str(board)}],
            "applyDryRun": True, "minFitScore": 0}), encoding="utf-8")
        supervisor = Supervisor(app_dir, temporal_ui=False)
        await supervisor.start()
        try:
            info = supervisor.info
            client = await connect_temporal(supervisor.settings.temporal, info.temporal_address,
                                            app_dir=supervisor.paths.app_dir)
            async with httpx.AsyncClient(
                    base_url=info.api_base_url, timeout=30,
                    headers={"Authorization": f"Bearer {info.api_token}"}) as http:
                steps = Steps(client, http, board, postings, pages, refusing)
                if only == "policy-rerun":
                    await steps.prepare_quietly()
                    await steps.run_third_set(Recorder(client, out))
                elif only == "follow-up-email":
                    await steps.prepare_quietly()
                    await steps.run_fourth_set(Recorder(client, out))
                else:
                    await steps.run(Recorder(client, out))
        finally:
            await supervisor.stop()
            pages.stop()
            for host in refusing.values():
                host.stop()


def ok(response: httpx.Response) -> dict:
    if response.status_code >= 300:
        raise RuntimeError(f"{response.request.method} {response.request.url}:"
                           f" {response.status_code} {response.text}")
    return response.json() if response.content else {}


class Steps:
    """What the user does, through the API, in the order the recordings need."""

    def __init__(self, client: Client, http: httpx.AsyncClient, board: Path,
                 postings: list[dict], pages: LoopbackPages,
                 refusing: dict[str, LoopbackPages]) -> None:
        self.client, self.http, self.board, self.pages = client, http, board, pages
        self.refusing = refusing
        self.demo_source = {"kind": "json_file", "id": "demo-slice", "path": str(board)}
        self.dead_posting = page_posting("dead-1", f"{pages.base}/broken/data-engineer",
                                         "Data Engineer")
        self.refused_postings = {
            name: page_posting(f"refused-{name}", f"{host.base}/{path}/backend-engineer",
                               "Backend Engineer")
            for (name, host), path in zip(refusing.items(), ("jobs", "slow", "jobs"),
                                          strict=True)}
        self.postings = postings[:3]
        self.budget_posting = postings[3]
        self.slow_posting = {"id": "slow-1", "url": f"{pages.base}/slow/platform-engineer",
                             "title": "Platform Engineer", "company": "Harborlight Logistics",
                             "location": "Berlin", "remote": "hybrid"}
        self.applying = job_id_for_url(postings[0]["url"])
        self.newest = job_id_for_url(postings[2]["url"])

    async def run(self, recorder: Recorder) -> None:
        write_board(self.board, self.postings[:2])
        # Its preparations issue the same commands as the with-profile one: not kept.
        await recorder.step("no-profile", self.discover, keep={"DiscoverWorkflow"})
        await recorder.step("profile-save", self.save_profile)
        self.postings_on_board(self.postings)
        await recorder.step("with-profile", self.discover)
        await recorder.step("tailor-batch", self.tailor_batch)
        await recorder.step("dry-run", self.apply_dry_run)
        await recorder.step("posting-text", self.research_contacts)
        await recorder.step("auto-apply-loop", self.auto_apply_loop)
        self.postings_on_board([*self.postings, self.slow_posting])
        await recorder.step("canceled", self.cancel_enriching_job,
                            keep={"JobPreparationWorkflow"})
        await recorder.step("batch-canceled", self.cancel_tailoring_batch,
                            keep={"BatchStageWorkflow"})
        self.postings_on_board([*self.postings, self.slow_posting, self.budget_posting])
        await recorder.step("budget-exceeded", self.exceed_budget,
                            keep={"JobPreparationWorkflow", "BatchStageWorkflow"})
        await self.run_second_set(recorder)
        await self.run_third_set(recorder)
        await self.run_fourth_set(recorder)

    async def prepare_quietly(self) -> None:
        """What the third set needs when it runs alone: a profile and prepared jobs."""
        write_board(self.board, self.postings[:2])
        await self.save_profile()
        await self.discover()
        await wait_all_closed(self.client)

    async def run_third_set(self, recorder: Recorder) -> None:
        """The bulk policy actions' batch (added with it; see the README)."""
        ok(await self.http.patch("/v1/settings", json={
            "dailyBudgetUsd": 25, "llm": {"provider": "offline"}}))
        changed = {**PROFILE, "targetTitles": ["Staff Backend Engineer"]}
        saved = ok(await self.http.put("/v1/profile", json=changed))
        await wait_closed(self.client, f"profile-continuation-{saved['revision']}", None)
        await wait_all_closed(self.client)
        await recorder.step("policy-rerun", self.rescore_stale, keep={"PolicyRerunWorkflow"})

    async def run_fourth_set(self, recorder: Recorder) -> None:
        """After applying: a follow-up email through a loopback SMTP server."""
        from tests.fakes.smtp_server import FakeSmtpServer

        smtp = FakeSmtpServer().start()
        try:
            ok(await self.http.patch("/v1/settings", json={"smtp": smtp.smtp_settings()}))
            ok(await self.http.post(f"/v1/jobs/{self.applying}/actions/mark",
                                    json={"userStatus": "applied"}))
            await recorder.step("sent", self.send_follow_up, keep={"FollowUpEmailWorkflow"})
        finally:
            smtp.stop()

    async def send_follow_up(self) -> None:
        draft = ok(await self.http.get(f"/v1/applications/{self.applying}/follow-up/email"))
        await self.started(await self.http.post(
            f"/v1/applications/{self.applying}/follow-up/email",
            json={"recipient": "jobs@example.org", "subject": draft["subject"],
                  "body": draft["body"]}))

    async def rescore_stale(self) -> None:
        await self.started(await self.http.post("/v1/pipeline/actions/rescore-stale"))

    async def run_second_set(self, recorder: Recorder) -> None:
        """The closing paths the first set did not reach (added later; see the README)."""
        # Still over the budget: contact research fails at its spend preflight.
        await recorder.step("budget-exceeded", self.research_contacts_over_budget,
                            keep={"ContactResearchWorkflow"})
        ok(await self.http.patch("/v1/settings", json={
            "dailyBudgetUsd": 25, "llm": {"provider": "offline"}}))
        await recorder.step("discover-canceled", self.cancel_crawling_discover,
                            keep={"DiscoverWorkflow"})
        await recorder.step("discover-failed", self.discover_failing_source,
                            keep={"DiscoverWorkflow"})
        self.postings_on_board([*self.postings, self.slow_posting, self.budget_posting,
                                self.dead_posting, *self.refused_postings.values()])
        await recorder.step("stage-gave-up", self.discover,
                            ids={prep_workflow_id(job_id_for_url(self.dead_posting["url"]))})
        await recorder.step("enrich-condition", partial(self.resolve_refused_host, "completes"))
        await recorder.step("continuation-canceled", self.cancel_resumed_enrich)
        await recorder.step("research-canceled", self.cancel_contact_research,
                            keep={"ContactResearchWorkflow"})
        ok(await self.http.patch("/v1/settings", json={"dailyBudgetUsd": 0.0001}))
        await recorder.step("budget-exceeded", partial(self.resolve_refused_host, "budget"),
                            keep={"PreparationContinuationWorkflow"})

    def postings_on_board(self, postings: list[dict]) -> None:
        write_board(self.board, postings)

    async def started(self, response: httpx.Response) -> None:
        body = ok(response)
        await wait_closed(self.client, body["workflowId"], body["firstExecutionRunId"])

    async def discover(self, source_ids: list[str] | None = None) -> None:
        await self.started(await self.start_discover(source_ids))

    async def start_discover(self, source_ids: list[str] | None) -> httpx.Response:
        extra = {"sourceIds": source_ids} if source_ids else {}
        return await self.http.post("/v1/pipeline/actions/run-stage",
                                    json={"stage": "discover", **extra})

    async def save_profile(self) -> None:
        saved = ok(await self.http.put("/v1/profile", json=PROFILE))
        await wait_closed(self.client, f"profile-continuation-{saved['revision']}", None)

    async def tailor_batch(self) -> None:
        await self.started(await self.http.post("/v1/pipeline/actions/run-stage", json={
            "stage": "tailor", "jobKeys": [self.newest], "workers": 1}))

    async def apply_dry_run(self) -> None:
        ok(await self.http.post(f"/v1/apply/{self.applying}/approve", json={}))
        await self.started(await self.http.post(f"/v1/apply/{self.applying}/start"))

    async def research_contacts(self) -> None:
        await self.started(await self.http.post(
            f"/v1/jobs/{self.newest}/actions/research-contacts"))

    async def auto_apply_loop(self) -> None:
        ok(await self.http.patch("/v1/settings", json={"autoApply": True}))

        async def polled_twice() -> bool:
            loop = ok(await self.http.get("/v1/apply/loop"))
            if loop.get("state") != "running" or not loop.get("runId"):
                return False
            handle = self.client.get_workflow_handle(loop["workflowId"], run_id=loop["runId"])
            timers = [e async for e in handle.fetch_history_events()
                      if e.HasField("timer_fired_event_attributes")]
            return len(timers) >= 2

        await wait_until(polled_twice, "the auto-apply loop to poll twice")
        ok(await self.http.patch("/v1/settings", json={"autoApply": False}))

    async def cancel_enriching_job(self) -> None:
        """The slow posting's Enrich waits on its page: cancel the job's preparation then."""
        await self.discover()

        async def enriching() -> bool:
            return self.pages.slow_requested.is_set()

        await wait_until(enriching, "the slow posting to be fetched")
        job_id = job_id_for_url(self.slow_posting["url"])
        ok(await self.http.post(f"/v1/jobs/{job_id}/actions/cancel"))
        await wait_closed(self.client, f"prep-{job_id}", None)
        self.pages.release_slow.set()

    async def cancel_tailoring_batch(self) -> None:
        """A paid model that holds its answer: cancel a one-job Tailor batch while it waits."""
        ok(await self.http.put("/v1/secrets/openai", json={"value": "sk-never-charged"}))
        ok(await self.http.patch("/v1/settings", json={"llm": {
            "provider": "openai_compat", "baseUrl": f"{self.pages.base}/llm/v1",
            "model": "gpt-4o", "apiKeySecret": "openai"}}))
        body = ok(await self.http.post("/v1/pipeline/actions/run-stage", json={
            "stage": "tailor", "jobKeys": [self.newest], "workers": 1}))

        async def tailoring() -> bool:
            return self.pages.model_called.is_set()

        await wait_until(tailoring, "the batch's Tailor call")
        run_id = body["firstExecutionRunId"]
        ok(await self.http.post(f"/v1/workflow-runs/{run_id}/actions/cancel"))
        await wait_closed(self.client, body["workflowId"], run_id)
        self.pages.release_model.set()

    async def exceed_budget(self) -> None:
        """A ceiling below one paid call: the spend preflight fails a new job's preparation
        and a selected batch before any model call."""
        ok(await self.http.patch("/v1/settings", json={"dailyBudgetUsd": 0.0001}))
        await self.discover()
        await wait_all_closed(self.client)
        await self.tailor_batch()


    async def research_contacts_over_budget(self) -> None:
        await self.started(await self.http.post(
            f"/v1/jobs/{self.applying}/actions/research-contacts"))

    async def with_source(self, source: dict, drive: Callable[[], Awaitable[None]]) -> None:
        """One more source next to the demo slice while ``drive`` runs, then only the slice."""
        ok(await self.http.patch("/v1/settings", json={"sources": [self.demo_source, source]}))
        try:
            await drive()
        finally:
            ok(await self.http.patch("/v1/settings", json={"sources": [self.demo_source]}))

    async def cancel_crawling_discover(self) -> None:
        """The user's "Cancel run" while a board (loopback, held) is being crawled."""
        source = {"kind": "greenhouse", "id": "held-board", "boardToken": "harborlight",
                  "baseUrl": f"{self.pages.base}/held-board"}

        async def drive() -> None:
            body = ok(await self.start_discover([source["id"]]))

            async def crawling() -> bool:
                return self.pages.board.requested.is_set()

            await wait_until(crawling, "the held board to be crawled")
            run_id = body["firstExecutionRunId"]
            ok(await self.http.post(f"/v1/workflow-runs/{run_id}/actions/cancel"))
            await wait_closed(self.client, body["workflowId"], run_id)
            self.pages.board.release.set()

        await self.with_source(source, drive)

    async def discover_failing_source(self) -> None:
        """Every source of the run answers 500: the family fails, so does the run."""
        source = {"kind": "greenhouse", "id": "broken-board", "boardToken": "harborlight",
                  "baseUrl": f"{self.pages.base}/broken"}
        await self.with_source(source, partial(self.discover, [source["id"]]))

    async def resolve(self, name: str) -> dict:
        """The user allows JobCtrl to fetch the refusing host's pages: a continuation."""
        return ok(await self.http.post("/v1/pipeline/conditions/enrich/resolve", json={
            "code": "ENRICH_ROBOTS_DISALLOWED", "host": self.refusing[name].host}))

    async def resolve_refused_host(self, name: str) -> None:
        body = await self.resolve(name)
        await wait_closed(self.client, body["workflowId"], body["firstExecutionRunId"])

    async def cancel_resumed_enrich(self) -> None:
        """The continuation's Enrich waits on the host's (held) page: cancel the run then."""
        host = self.refusing["canceled"]
        body = await self.resolve("canceled")

        async def enriching() -> bool:
            return host.slow.requested.is_set()

        await wait_until(enriching, "the resumed Enrich to fetch its page")
        run_id = body["firstExecutionRunId"]
        ok(await self.http.post(f"/v1/workflow-runs/{run_id}/actions/cancel"))
        await wait_closed(self.client, body["workflowId"], run_id)
        host.slow.release.set()

    async def cancel_contact_research(self) -> None:
        """A paid model that holds its answer: cancel contact research while it waits."""
        ok(await self.http.patch("/v1/settings", json={"llm": {
            "provider": "openai_compat", "baseUrl": f"{self.pages.base}/llm2/v1",
            "model": "gpt-4o", "apiKeySecret": "openai"}}))
        body = ok(await self.http.post(f"/v1/jobs/{self.applying}/actions/research-contacts"))

        async def extracting() -> bool:
            return self.pages.model2.requested.is_set()

        await wait_until(extracting, "the research's extraction call")
        run_id = body["firstExecutionRunId"]
        ok(await self.http.post(f"/v1/workflow-runs/{run_id}/actions/cancel"))
        await wait_closed(self.client, body["workflowId"], run_id)
        self.pages.model2.release.set()


def page_posting(key: str, url: str, title: str) -> dict:
    """A file-imported posting with no description: Enrich must fetch its page."""
    return {"id": key, "url": url, "title": title, "company": "Harborlight Logistics",
            "location": "Berlin", "remote": "hybrid"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="folder for the <WorkflowType>.<step>.json files")
    parser.add_argument("--only", choices=["policy-rerun", "follow-up-email"],
                        help="record just this step (its prerequisites run unrecorded)")
    args = parser.parse_args()
    asyncio.run(record(args.out, args.only))


if __name__ == "__main__":
    main()
