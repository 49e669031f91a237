import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# No idle recycle unless a test asks for one (tests/integration/test_idle_recycle.py): a
# worker or dev server restarted between two tests of a long shared session would change
# pids and drop Temporal connections under tests that do not expect it.
os.environ.setdefault("JOBCTRL_RECYCLE_QUIET_S", "0")

# Every read model registers its fold with the projection builder when backend.projections
# is imported, as the API and the worker do at start: tests that write through the store
# directly get the same fold-at-write, whichever test file runs first (or alone).
import backend.projections  # noqa: E402, F401

_exit_status = {"code": 0}


def pytest_sessionfinish(session, exitstatus):
    _exit_status["code"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    # The Temporal SDK's Rust runtime can abort the interpreter at exit
    # (sdk-python issue 300): leave with pytest's own status once it has reported.
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_exit_status["code"])
