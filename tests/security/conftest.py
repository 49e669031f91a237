"""Fixtures of the security tests: the unit tests' real migrated SQLite database and the
loopback job boards, by name (pytest collects the fixtures a conftest imports)."""

from tests.fakes.job_boards import fast_retries_fixture, job_boards_fixture  # noqa: F401
from tests.unit.conftest import db  # noqa: F401
