"""The security tests reuse other suites' fixtures by name (pytest collects the fixtures a
conftest imports): the unit tests' real migrated SQLite database, the desktop tests' Qt
loop, the loopback job boards and the integration tests' running services."""

from __future__ import annotations

from tests.desktop.conftest import qloop  # noqa: F401
from tests.fakes.job_boards import fast_retries_fixture, job_boards_fixture  # noqa: F401
from tests.integration.conftest import api, running, session_app_dir  # noqa: F401
from tests.unit.conftest import db  # noqa: F401
