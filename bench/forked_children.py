"""``services_floor.py``'s fork variant: one process imports what JobCtrl's worker and API
both import, once, then forks each of them into ``jobctrl worker`` / ``jobctrl api``.

    forked_children.py APP_DIR API_PORT

The environment is the one the supervisor would give (set by the benchmark). This process
stays the children's parent and passes SIGTERM on to them. POSIX only: it measures what a
fork server would give, it is not one.
"""

from __future__ import annotations

import gc

gc.disable()  # as the cli does for its children, until they are ready

import contextlib  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402

import uvicorn  # noqa: E402, F401 - the API's server, imported before the fork

import backend.api.app  # noqa: E402, F401
import backend.supervision.entrypoints  # noqa: E402, F401
import backend.temporal.worker  # noqa: E402, F401
from backend import cli  # noqa: E402


def fork_child(argv: list[str]) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            cli.main(argv)  # hard-exits when the child stops
        finally:
            os._exit(1)
    return pid


def main() -> None:
    app_dir, api_port = sys.argv[1], sys.argv[2]
    os.environ["JOBCTRL_PARENT_PID"] = str(os.getpid())  # the children's parent is this one
    children = [fork_child(["--app-dir", app_dir, "worker"]),
                fork_child(["--app-dir", app_dir, "api", "--port", api_port])]

    def forward(signum, _frame) -> None:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    signal.signal(signal.SIGTERM, forward)
    for pid in children:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
