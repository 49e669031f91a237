"""Time to first value: a fresh clone, the README's run command, a sample profile,
Discover, the first scored job and the first PDF.

Source run (default): ``git clone`` of this checkout's HEAD into a temporary folder (no
``.venv``), then the README's command for a headless machine, ``scripts/run serve``, with
a fresh app dir (``JOBCTRL_APP_DIR``) and a clean environment (no ``PYTHONPATH``, no
active virtualenv, bytecode caching on, as for a user). ``--desktop`` runs ``scripts/run``
(the window; needs a display) instead. ``--bundle DIR`` runs a frozen build's
``DIR/jobctrl`` the same way (nothing to install). Milestones, in seconds after the run
command started:

- ``venv_ready``: ``scripts/bootstrap.sh`` wrote its install stamp (source runs only);
  every later milestone is also reported after this one, i.e. after the app itself started;
- ``window_painted`` (``--desktop``): the window's first frame, from its start-up trace;
- ``healthy``: ``GET /v1/health`` says ``ok`` (Temporal, worker and API up);
- ``profile_saved``: the bundled sample résumé imported (``POST /v1/profile/import?sample=true``,
  the first-run panel's "Try it with a sample profile") and the draft saved (``PUT /v1/profile``);
- ``discover_accepted``: ``POST /v1/pipeline/actions/run-stage`` answered 202;
- ``first_scored``: a job's Score stage succeeded;
- ``first_pdf``: a job's PDF stage succeeded (its résumé and letter rendered).

Targets (issue 18): first scored job < 30 s and first PDF < 60 s after launch.

    .venv/bin/python bench/ttfv.py [--desktop] [--bundle dist/jobctrl] [--json out.json] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    REPO,
    BenchError,
    hard_exit,
    machine_info,
    owned_popen_options,
    sigterm_raises_interrupt,
    stop_process,
    write_json,
)

TIMEOUT_S = 1800.0  # a first install on a slow machine included
POLL_S = 0.1
TRACE_ENV = "JOBCTRL_STARTUP_TRACE"
# Variables of the benchmark's own environment a user's shell would not have.
NOT_A_USERS = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE", "PYTHONHOME")


class Milestones:
    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.at: dict[str, float] = {}

    def mark(self, name: str, at: float | None = None) -> None:
        if name not in self.at:
            self.at[name] = round((at if at is not None else time.perf_counter())
                                  - self.started, 2)
            print(f"  {name:<18} {self.at[name]:7.2f} s", flush=True)

    def after_launch(self) -> dict[str, float]:
        base = self.at.get("venv_ready", 0.0)
        return {name: round(value - base, 2) for name, value in self.at.items()
                if value >= base and name != "venv_ready"}


def user_env(app_dir: Path, trace: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in NOT_A_USERS}
    env["JOBCTRL_APP_DIR"] = str(app_dir)
    env[TRACE_ENV] = str(trace)
    return env


def clone(into: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(into)], check=True)
    return round(time.perf_counter() - started, 2)


def traced(trace: Path, name: str) -> float | None:
    """The perf_counter of milestone ``name`` in the app's start-up trace, if written."""
    with contextlib.suppress(OSError, ValueError):
        for line in trace.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry["milestone"] == name:
                return entry["perf_counter"]
    return None


def wait(condition, what: str, process: subprocess.Popen, deadline: float):
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise BenchError(f"the app exited with {process.returncode} before {what}")
        with contextlib.suppress(httpx.HTTPError, OSError, ValueError, KeyError):
            value = condition()
            if value:
                return value
        time.sleep(POLL_S)
    raise BenchError(f"no {what} within {TIMEOUT_S:.0f}s")


def stage_done(http: httpx.Client, stage: str) -> bool:
    page = http.get("/v1/jobs", params={"stage": stage, "stageStatus": "succeeded",
                                        "limit": 1})
    return page.status_code == 200 and page.json()["total"] > 0


def first_value(argv: list[str], cwd: Path, app_dir: Path, desktop: bool,
                stamp: Path | None) -> dict:
    trace = app_dir.parent / "startup-trace.jsonl"
    marks = Milestones()
    process = subprocess.Popen(argv, cwd=cwd, env=user_env(app_dir, trace),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=open(app_dir.parent / "launcher.log", "wb"),  # noqa: SIM115
                               **owned_popen_options())
    deadline = marks.started + TIMEOUT_S
    runtime_file = app_dir / "runtime.json"
    try:
        if stamp is not None:
            wait(stamp.exists, "installed environment", process, deadline)
            marks.mark("venv_ready")
        if desktop:
            marks.mark("window_painted", wait(lambda: traced(trace, "first_paint"),
                                              "window", process, deadline))
        info = wait(lambda: json.loads(runtime_file.read_text(encoding="utf-8")),
                    "runtime.json", process, deadline)
        headers = {"Authorization": f"Bearer {info['apiToken']}"}
        with httpx.Client(base_url=info["apiBaseUrl"], headers=headers, timeout=30) as http:
            wait(lambda: http.get("/v1/health").json()["status"] == "ok", "health",
                 process, deadline)
            marks.mark("healthy")
            draft = http.post("/v1/profile/import", params={"sample": "true"})
            draft.raise_for_status()
            http.put("/v1/profile", json=draft.json()["profile"]).raise_for_status()
            marks.mark("profile_saved")
            http.post("/v1/pipeline/actions/run-stage",
                      json={"stage": "discover"}).raise_for_status()
            marks.mark("discover_accepted")
            wait(lambda: stage_done(http, "score"), "scored job", process, deadline)
            marks.mark("first_scored")
            wait(lambda: stage_done(http, "pdf"), "PDF", process, deadline)
            marks.mark("first_pdf")
    finally:
        stop_process(process, sig="int", timeout=60)
    return {"since_command_s": marks.at, "since_launch_s": marks.after_launch()}


def run(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix="jobctrl-ttfv-"))
    app_dir = work / "app"
    result: dict = {"kind": "bundle" if args.bundle else "source",
                    "desktop": args.desktop, "work": str(work)}
    try:
        if args.bundle:
            bundle = Path(args.bundle).resolve()
            argv = [str(bundle / "jobctrl"), *([] if args.desktop else ["serve"])]
            result.update(first_value(argv, bundle, app_dir, args.desktop, stamp=None))
        else:
            checkout = work / "clone"
            result["clone_s"] = clone(checkout)
            result["commit"] = subprocess.run(["git", "-C", str(checkout), "rev-parse",
                                               "--short", "HEAD"], capture_output=True,
                                              text=True, check=True).stdout.strip()
            argv = [str(checkout / "scripts" / "run"), *([] if args.desktop else ["serve"])]
            result.update(first_value(argv, checkout, app_dir, args.desktop,
                                      stamp=checkout / ".venv" / ".jobctrl-installed"))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--desktop", action="store_true", help="the window (needs a display)")
    parser.add_argument("--bundle", help="a frozen build's folder (holding ./jobctrl)")
    parser.add_argument("--json")
    parser.add_argument("--keep", action="store_true", help="keep the clone and the app dir")
    args = parser.parse_args()
    sigterm_raises_interrupt()
    try:
        result = run(args)
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    result["machine"] = machine_info()
    launch = result["since_launch_s"]
    for name, target in (("first_scored", 30), ("first_pdf", 60)):
        value = launch.get(name)
        verdict = "met" if value is not None and value < target else "MISSED"
        print(f"{name} {value} s after launch: target < {target} s {verdict}")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except Exception:  # noqa: BLE001 - print it, then leave without finalization
        traceback.print_exc()
    hard_exit(code)
