"""The Qt fixtures of the desktop tests (offscreen Qt, the qasync loop)."""

from tests.desktop.conftest import qloop  # noqa: F401
