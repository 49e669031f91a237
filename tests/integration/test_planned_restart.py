"""A child that exits with the recycle code is started again at once, and no one is told
of a fault (it is "recycling", not "restarting", and no crash is counted); any other
exit still is."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap

import pytest

from backend.supervision.children import ChildRegistry
from backend.supervision.process import PARENT_PID_ENV, console_log_file
from backend.supervision.recycle import RECYCLE_EXIT_CODE
from backend.supervision.services import ManagedService, ServiceSpec

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

# Each run appends a line and marks itself ready; the first run leaves with ``first_exit``.
CHILD = textwrap.dedent("""
    import pathlib, sys, time
    folder, first_exit = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    runs = folder / "runs"
    count = len(runs.read_text().splitlines()) if runs.exists() else 0
    with runs.open("a") as f:
        f.write("run\\n")
    (folder / f"ready-{count}").touch()
    time.sleep(0.3)
    if count == 0:
        sys.exit(first_exit)
    time.sleep(60)
""")


def child_spec(folder, first_exit: int) -> ServiceSpec:
    runs = {"n": 0}

    async def ready(_pid: int) -> bool:
        return (folder / f"ready-{runs['n']}").exists()

    def argv() -> list[str]:
        runs["n"] = len((folder / "runs").read_text().splitlines()) if (folder / "runs").exists() else 0
        return [sys.executable, "-c", CHILD, str(folder), str(first_exit)]

    return ServiceSpec(name="child", argv=argv,
                       env={**os.environ, PARENT_PID_ENV: str(os.getpid())}, ready=ready,
                       ready_timeout=30, console_log=console_log_file(folder, "child"),
                       poll_s=0.05)


async def run_until_second_start(tmp_path, first_exit: int):
    statuses = []
    service = ManagedService(child_spec(tmp_path, first_exit),
                             ChildRegistry(tmp_path / "children.json"), statuses.append)
    try:
        await service.start()
        for _ in range(400):
            if service.planned_restarts or service.restarts:  # back after the first exit
                break
            await asyncio.sleep(0.05)
        return service, [(s.state, s.detail) for s in statuses]
    finally:
        await service.stop()


async def test_a_planned_exit_restarts_at_once_without_a_fault(tmp_path):
    service, statuses = await run_until_second_start(tmp_path, RECYCLE_EXIT_CODE)
    assert (service.planned_restarts, service.restarts) == (1, 0)
    assert [state for state, _ in statuses] == ["starting", "ready", "recycling", "ready"]
    assert statuses[2][1] == "restarting while idle to give memory back"
    assert statuses[3][1] == "restarted while idle to give memory back"


async def test_any_other_exit_is_still_a_crash(tmp_path):
    service, statuses = await run_until_second_start(tmp_path, 1)
    assert (service.planned_restarts, service.restarts) == (0, 1)
    assert [state for state, _ in statuses][:3] == ["starting", "ready", "restarting"]
