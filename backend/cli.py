"""``jobctrl desktop | serve | worker | api``.

``desktop`` (the default) is the Qt shell; ``serve`` runs the same three services
headless; ``worker`` and ``api`` are the children the shell and ``serve`` start.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys

from backend.config import AppPaths, resolve_app_dir
from backend.runtime.private_files import make_private, restrict_umask


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
        sub.add_argument("--no-temporal-ui", action="store_true", help="no Temporal Web UI")
    commands.add_parser("worker", help="the Temporal worker (started by serve/desktop)")
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


def main(argv: list[str] | None = None) -> None:
    multiprocessing.freeze_support()
    # First, so the app dir, its logs and everything the children write are private.
    restrict_umask()
    args = _parser().parse_args(argv)
    paths = AppPaths(resolve_app_dir(getattr(args, "sub_app_dir", None) or args.app_dir))
    command = args.command or "desktop"
    if command in ("desktop", "serve"):
        make_private(paths.app_dir)  # an older version's 0644 files, before the first log line
    if command == "desktop" and not _has_display():
        print("No display found: running headless (`jobctrl serve`).", file=sys.stderr)
        command = "serve"
        args.api_port = args.temporal_port = None
        args.no_temporal_ui = False
    if command == "desktop":
        from desktop.app import run_desktop

        run_desktop(paths, args)
    elif command == "serve":
        from backend.runtime.serve import run_serve

        run_serve(paths, args)
    elif command == "worker":
        from backend.runtime.entrypoints import run_worker_process

        run_worker_process(paths, verbose=args.verbose)
    elif command == "api":
        from backend.runtime.entrypoints import run_api_process

        run_api_process(paths, port=args.port, verbose=args.verbose)


if __name__ == "__main__":
    main()
