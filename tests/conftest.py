import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

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
