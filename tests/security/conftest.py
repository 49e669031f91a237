"""Security tests run real services, as tests/integration does: the same fixtures, by name."""

from __future__ import annotations

from tests.integration.conftest import api, running, session_app_dir  # noqa: F401
