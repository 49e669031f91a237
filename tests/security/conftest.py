"""The security tests reuse the fixtures of the unit and desktop suites by name."""

from tests.desktop.conftest import qloop  # noqa: F401 - a fixture, found by its name
from tests.unit.conftest import db  # noqa: F401 - a fixture, found by its name
