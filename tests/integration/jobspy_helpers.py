"""A private Supervisor whose worker crawls the fake jobspy scraper
(tests/fakes/jobspy_scraper.py, loaded through JOBCTRL_JOBSPY_SCRAPER)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.fakes import jobspy_scraper as fake
from tests.integration.env_helpers import override_environ

ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def jobspy_supervisor(app_dir: Path, *, scraper: str, control: Path
                            ) -> AsyncIterator[tuple[Supervisor, httpx.AsyncClient]]:
    """The running services of ``app_dir`` and an authorized API client. ``scraper`` names
    the fake's entry point (e.g. ``scrape``); ``control`` is its control file."""
    # Children inherit os.environ at start: set the fake up before the supervisor starts.
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    overrides = {"JOBCTRL_JOBSPY_SCRAPER": f"tests.fakes.jobspy_scraper:{scraper}",
                 fake.CONTROL_ENV: str(control), "PYTHONPATH": pythonpath}
    restore_environ = override_environ(**overrides)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    try:
        await supervisor.start()
        http = api_http(supervisor.info)
        try:
            yield supervisor, http
        finally:
            await http.aclose()
    finally:
        await supervisor.stop()
        restore_environ()
