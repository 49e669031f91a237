"""``jobctrl desktop | serve | worker | api``.

``desktop`` (the default) is the Qt shell; ``serve`` runs the same three services
headless; ``worker`` and ``api`` are the children the shell and ``serve`` start.
"""

from __future__ import annotations

import argparse
import os
import sys

from backend.paths import AppPaths, resolve_app_dir
from backend.supervision import startup_gc
from backend.supervision.display_probe import PROBE_COMMAND
from backend.supervision.private_files import make_private, restrict_umask


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobctrl", description=__doc__.split("\n\n")[0])
    parser.add_argument("--app-dir", help="data folder (default: JOBCTRL_APP_DIR or the "
                        "platform's app-data folder)")
    parser.add_argument("-v", "--verbose", action="store_true")
    commands = parser.add_subparsers(dest="command")
    desktop = commands.add_parser("desktop", help="the desktop app (default)")
    serve = commands.add_parser("serve", help="Temporal, worker and API without a window")
    for sub in (desktop, serve):
        sub.add_argument("--api-port", type=int, help="fixed API port (default: a free one)")
        sub.add_argument("--temporal-port", type=int, help="fixed Temporal port (embedded)")
        sub.add_argument("--no-temporal-ui", action="store_true", help="no Temporal Web UI, even if "
                         "Settings → Advanced turns it on (it is off by default)")
    commands.add_parser("worker", help="the Temporal worker (started by serve/desktop)")
    commands.add_parser(PROBE_COMMAND, help=argparse.SUPPRESS)  # can Qt open a window here?
    # One résumé import, bounded (backend/profile_import/isolated.py starts it; the name is
    # its IMPORT_COMMAND, spelled out here so the launch does not import the readers).
    commands.add_parser("import-resume", help=argparse.SUPPRESS)
    api = commands.add_parser("api", help="the HTTP API (started by serve/desktop)")
    api.add_argument("--port", type=int, required=True)
    for sub in (desktop, serve, commands.choices["worker"], api):
        sub.add_argument("--app-dir", dest="sub_app_dir", help=argparse.SUPPRESS)
    return parser


def _has_display() -> bool:
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("QT_QPA_PLATFORM"))


def _window_problem(probe, app_dir) -> str | None:
    """Why the desktop cannot open a window here (in words to print), or None."""
    if not _has_display():
        return "No display found."
    if probe is None:
        return None
    from backend.supervision.display_probe import advice, remember_passed

    problem = probe.result()
    if problem is None:
        remember_passed(app_dir)
        return None
    return advice(problem)


def _start_display_probe(app_dir):
    """On Linux a child first checks that Qt can open a window (Qt aborts the process that
    tries when a system library is missing); it runs while this process imports Qt, and
    not at all when it passed before under the same conditions."""
    if not (sys.platform.startswith("linux") and _has_display()):
        return None
    from backend.supervision.display_probe import DisplayProbe, passed_before

    return None if passed_before(app_dir) else DisplayProbe()


def _fall_back_to_serve(args: argparse.Namespace, reason: str) -> None:
    print(f"{reason}\nRunning headless instead (`jobctrl serve`): the API address follows.",
          file=sys.stderr, flush=True)
    # ``jobctrl`` without a subcommand parsed no desktop options: serve's defaults then.
    args.api_port = getattr(args, "api_port", None)
    args.temporal_port = getattr(args, "temporal_port", None)
    args.no_temporal_ui = getattr(args, "no_temporal_ui", False)


def main(argv: list[str] | None = None) -> None:
    if getattr(sys, "frozen", False):  # only a frozen build can be a multiprocessing child
        import multiprocessing

        multiprocessing.freeze_support()
    # First, so the app dir, its logs and everything the children write are private.
    restrict_umask()
    args = _parser().parse_args(argv)
    if args.command in ("worker", "api"):
        startup_gc.pause()  # until the child is ready (entrypoints resumes it)
    if args.command == PROBE_COMMAND:  # before the app dir: the probe touches no files
        from backend.supervision.display_probe import run_probe_child

        run_probe_child()
        return
    if args.command == "import-resume":  # no app dir either: bytes in on stdin, answer out
        from backend.profile_import.isolated import run_child

        run_child()
        return
    paths = AppPaths(resolve_app_dir(getattr(args, "sub_app_dir", None) or args.app_dir))
    command = args.command or "desktop"
    if command in ("desktop", "serve"):
        make_private(paths.app_dir)  # an older version's 0644 files, before the first log line
    if command == "desktop":
        probe = _start_display_probe(paths.app_dir)
        try:
            from desktop.app import run_desktop  # Qt and the window's modules, meanwhile
        except ImportError as error:  # a broken Qt install: the probe says more, if it can
            problem = (_window_problem(probe, paths.app_dir)
                       or f"The window's libraries did not load: {error}")
        else:
            problem = _window_problem(probe, paths.app_dir)
        if problem is not None:
            _fall_back_to_serve(args, problem)
            command = "serve"
    if command == "desktop":
        run_desktop(paths, args)
    elif command == "serve":
        from backend.supervision.serve import run_serve

        run_serve(paths, args)
    elif command == "worker":
        from backend.supervision.entrypoints import run_worker_process

        run_worker_process(paths, verbose=args.verbose)
    elif command == "api":
        from backend.supervision.entrypoints import run_api_process

        run_api_process(paths, port=args.port, verbose=args.verbose)


if __name__ == "__main__":
    main()
