"""The frozen JobCtrl, end to end: build this platform's installer, install it on a fresh
account, start it, Discover over the API with the SSE stream watching, stop it, upgrade it
(the data and the Temporal history stay), and start the desktop offscreen.

The same test on every platform: ``tests/packaging/frozen_app.py`` knows how each one's
installer runs (Linux here; Windows and macOS on the runners of ``packaging/release.yml``).

Slow (it builds the bundle): marked ``packaging``, left out of the normal run, and run
with ``scripts/package-smoke`` (``JOBCTRL_SMOKE_ARTIFACT=dist/JobCtrl-...tar.gz`` reuses a
build).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from pathlib import Path

import pytest
import pytest_asyncio

from desktop.client import ApiClient
from tests.integration.events_helpers import start_and_watch
from tests.packaging.frozen_app import (
    FrozenProcess,
    Installation,
    build_artifact,
    installation_for,
    kill_all,
    processes_from,
)

# Async tests run on the session loop (asyncio_default_test_loop_scope in pyproject.toml).
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(1800)]

DEMO_DISTINCT_JOBS = 234  # the bundled demo board: 240 postings, 234 distinct jobs
# What a user types into Settings before the first Discover: with a profile, every job runs
# on through Enrich, Score, Tailor, Cover and the PDFs (Typst, frozen).
PROFILE = {
    "name": "Ada Example", "email": "ada@example.org", "headline": "Backend engineer",
    "targetTitles": ["Backend Engineer", "Platform Engineer"], "locations": ["Berlin", "Remote"],
    "remotePreference": "remote_or_hybrid", "skills": ["Python", "PostgreSQL", "Kubernetes"],
    "resumeText": "Ada Example\nBackend engineer with eight years of Python.\n",
}
PREPARATION_TIMEOUT_S = 900


@pytest.fixture(scope="module")
def artifact() -> Path:
    return build_artifact()


@pytest.fixture(scope="module")
def installation(artifact, tmp_path_factory) -> Installation:
    installed = installation_for(artifact, tmp_path_factory.mktemp("frozen"))
    result = installed.run_installer()
    assert result.returncode == 0, result.stderr
    yield installed
    leftovers = processes_from(installed.prefix.resolve())
    kill_all(leftovers)
    assert leftovers == [], f"processes of the bundle were still running: {leftovers}"


def start_serve(installed: Installation, name: str) -> FrozenProcess:
    """``jobctrl serve`` through the command the installer put on the user's PATH."""
    return FrozenProcess(
        installed.command_link, ["serve", "--no-temporal-ui"], env=installed.env(),
        app_dir=installed.default_app_dir, output=installed.home.parent / f"{name}.txt",
    )


def stop_cleanly(process: FrozenProcess, installed: Installation, sig: int = signal.SIGINT) -> None:
    """Stopped the platform's way: nothing of the bundle left running; where a signal can
    ask (not a windowed Windows app), exit 0 and ``runtime.json`` removed."""
    pids = dict(process.info.pids) if process.info else {}
    code = installed.stop(process, sig)
    if installed.stops_gracefully:
        assert code == 0, process.diagnostics()
    survivors = processes_from(installed.prefix.resolve())
    kill_all(survivors)
    assert survivors == [], f"left running after the stop: {survivors} (pids were {pids})"
    if installed.stops_gracefully:
        assert not (process.app_dir / "runtime.json").exists()


async def discover_over_sse(info) -> tuple[dict, list]:
    api = ApiClient.from_runtime(info)
    try:
        await api.put_profile(PROFILE)
        # Below the default minimum fit (50) most demo jobs stop after Score; a fit floor of 0
        # (Settings) sends every job on through Tailor, Cover and the PDFs.
        await api.patch_settings(minFitScore=0)
        accepted, events = await start_and_watch(
            api, lambda: api.run_stage("discover"), live_timeout=30)
        return {"accepted": accepted, "runs": await api.discovery_runs(),
                "jobs": (await api.jobs(limit=1))["total"], "secrets": await api.secret_names(),
                "pdfs": await every_job_rendered(api)}, events
    finally:
        await api.close()


async def every_job_rendered(api: ApiClient) -> dict:
    """Waits until every job's PDF stage succeeded; the artifacts of the best-scored job."""
    deadline = asyncio.get_running_loop().time() + PREPARATION_TIMEOUT_S
    rendered = 0
    while asyncio.get_running_loop().time() < deadline:
        rendered = (await api.jobs(limit=1, stage="pdf", stageStatus="succeeded"))["total"]
        if rendered == DEMO_DISTINCT_JOBS:
            best = (await api.jobs(limit=1, sort="score"))["items"][0]
            return {"rendered": rendered, "artifacts": (await api.job(best["jobId"]))["artifacts"]}
        await asyncio.sleep(1)
    return {"rendered": rendered, "artifacts": []}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def first_start(installation):
    """The first start on the fresh account, one Discover, a clean stop."""
    assert not installation.default_app_dir.exists()  # nothing made before the first start
    serve = start_serve(installation, "first-start")
    try:
        info = serve.wait_healthy()
        result, events = await discover_over_sse(info)
    finally:
        if serve.process.poll() is None:
            stop_cleanly(serve, installation)
    return {**result, "events": events, "info": info, "output": serve.output}


def test_installer_puts_a_launcher_icon_and_command_in_the_user_folders(installation):
    # Linux: the freedesktop entry, icon and ~/.local/bin link; Windows: the Start-menu
    # shortcut, the uninstaller and the Installed-apps entry; macOS: the bundle's Info.plist.
    assert installation.launcher_problems() == []
    assert installation.executable.is_file()
    assert installation.temporal_cli.is_file()
    # The data folder is the platform's app-data folder, outside the program folder.
    assert not installation.default_app_dir.is_relative_to(installation.prefix)


async def test_first_start_creates_the_app_dir_and_discover_runs_to_the_end(first_start, installation):
    app_dir = installation.default_app_dir
    assert (app_dir / "jobctrl.db").is_file()
    assert any((app_dir / "temporal").iterdir())  # the Temporal history file
    assert {"serve.log", "worker.log", "api.log"} <= {p.name for p in (app_dir / "logs").iterdir()}
    assert first_start["accepted"]["workflowId"] == "discover-local"
    run_id = first_start["accepted"]["firstExecutionRunId"]
    run = next(r for r in first_start["runs"] if r["discoverRunId"] == run_id)
    assert run["status"] == "completed"
    assert run["jobsNew"] == DEMO_DISTINCT_JOBS
    assert first_start["jobs"] == DEMO_DISTINCT_JOBS
    # Where provider keys go: the OS keyring, or (a headless Linux account has none) a 0600 file.
    assert installation.secret_store_words in first_start["secrets"]["backend"]


async def test_first_start_prepares_every_job_through_its_pdfs(first_start, installation):
    pdfs = first_start["pdfs"]
    assert pdfs["rendered"] == DEMO_DISTINCT_JOBS
    assert {artifact["kind"] for artifact in pdfs["artifacts"]} == {
        "resume_pdf", "cover_letter_pdf", "resume_docx", "cover_letter_docx"}
    for artifact in pdfs["artifacts"]:
        path = Path(artifact["path"])
        assert path.is_relative_to(installation.default_app_dir / "artifacts")
        data = path.read_bytes()
        if artifact["kind"].endswith("_docx"):  # written from python-docx's bundled template
            assert data.startswith(b"PK")
        else:
            assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")


async def test_first_start_streams_the_run_over_sse(first_start):
    events = first_start["events"]
    run_id = first_start["accepted"]["firstExecutionRunId"]
    # The profile save before the run streams its own events (and its continuation's):
    # keep the Discover workflow's lifecycle and the discovery events (one Discover ran).
    of_the_run = [event for event in events
                  if event.payload.get("runId") == run_id
                  or event.type.startswith("DiscoveryRun") or event.type == "JobDiscovered"]
    types = [event.type for event in of_the_run]
    assert types[:2] == ["WorkflowStarted", "DiscoveryRunStarted"]
    assert types.count("JobDiscovered") == DEMO_DISTINCT_JOBS
    assert types[-2:] == ["DiscoveryRunCompleted", "WorkflowCompleted"]
    assert of_the_run[-2].payload["status"] == "completed"
    assert events[-1] is of_the_run[-1]  # the stream was followed to the run's very end
    ids = [event.id for event in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


async def test_upgrade_keeps_the_database_and_the_temporal_history(first_start, installation):
    marker = installation.library_dir / "from-the-old-version"
    marker.write_text("the upgrade replaces the program folder", encoding="utf-8")
    database_before = (installation.default_app_dir / "jobctrl.db").stat().st_size

    result = installation.run_installer()  # the same installer again, as an upgrade would
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert (installation.default_app_dir / "jobctrl.db").stat().st_size == database_before

    serve = start_serve(installation, "after-upgrade")
    try:
        info = serve.wait_healthy()
        api = ApiClient.from_runtime(info)
        try:
            assert (await api.jobs(limit=1))["total"] == DEMO_DISTINCT_JOBS
            runs = await api.discovery_runs()
        finally:
            await api.close()
        run_id = first_start["accepted"]["firstExecutionRunId"]
        assert [r["status"] for r in runs if r["discoverRunId"] == run_id] == ["completed"]
        # Temporal itself still has the run: ask the bundled CLI, as an operator would.
        described = subprocess.run(
            [str(installation.temporal_cli), "workflow", "describe", "--workflow-id", "discover-local",
             "--run-id", run_id, "--address", info.temporal_address, "--output", "json"],
            capture_output=True, text=True, timeout=60, env=installation.env(),
        )
        assert described.returncode == 0, described.stderr
        execution = json.loads(described.stdout)["workflowExecutionInfo"]
        assert execution["status"] == "WORKFLOW_EXECUTION_STATUS_COMPLETED"
    finally:
        if serve.process.poll() is None:
            stop_cleanly(serve, installation)


def test_frozen_desktop_starts_offscreen_and_quits_cleanly(installation, tmp_path):
    app_dir = tmp_path / "desktop-app-dir"
    desktop = FrozenProcess(
        installation.executable, ["--app-dir", str(app_dir), "desktop", "--no-temporal-ui"],
        env=installation.env(QT_QPA_PLATFORM="offscreen"), app_dir=app_dir,
        output=tmp_path / "desktop.txt",
    )
    try:
        desktop.wait_healthy()  # the window is up and its supervisor started every service
        assert desktop.process.poll() is None
    finally:
        if desktop.process.poll() is None:
            stop_cleanly(desktop, installation, signal.SIGTERM)
    assert "Traceback" not in desktop.output, desktop.output
