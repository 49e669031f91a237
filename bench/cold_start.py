"""Cold and warm start of ``jobctrl serve`` against a bare Temporal dev server.

Each round uses a fresh temporary folder and measures four launches:

- baseline cold: ``temporal server start-dev`` (the same binary and the same arguments the
  supervisor uses: free port, ``--headless``, an in-tmp ``--db-filename`` with the WAL
  pragmas), from launch until a ``temporalio`` client connects and
  ``service_client.check_health()`` succeeds; then SIGTERM.
- baseline warm: the same again on the history file the cold launch left behind.
- jobctrl cold: ``jobctrl serve --no-temporal-ui --app-dir <fresh dir>``, from launch until
  ``GET /v1/health`` says ``"ok"`` (worker ready and Temporal reachable), reading
  ``apiBaseUrl`` from ``runtime.json`` as soon as it appears; then SIGINT, and a check that
  no pid recorded in ``runtime.json`` survives.
- jobctrl warm: the same again on that app dir (existing database and history).

The order baseline/jobctrl alternates between rounds so slow drift in machine load hits
both sides alike. Readiness is polled every 10 ms on both sides.

    .venv/bin/python bench/cold_start.py [--rounds 5] [--json out.json] [--no-compile]

The app's bytecode is compiled first, as every install has it (``--no-compile``: as it is).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import timedelta
from pathlib import Path

from _common import (
    POLL_S,
    BenchError,
    ServeProcess,
    compile_bytecode,
    hard_exit,
    machine_info,
    owned_popen_options,
    sigterm_raises_interrupt,
    stop_process,
    summary,
    write_json,
)
from temporalio.client import Client

from backend.supervision.embedded_temporal import dev_server_argv, temporal_binary
from backend.supervision.ports import LOOPBACK, free_port

TEMPORAL_START_TIMEOUT_S = 60.0
TEMPORAL_STOP_TIMEOUT_S = 15.0


async def _temporal_answers(address: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while True:
        if process.poll() is not None:
            raise BenchError(f"temporal exited with {process.returncode} while starting")
        try:
            client = await Client.connect(address, connect_timeout=timedelta(seconds=2))
            await client.service_client.check_health()
            return
        except Exception:  # noqa: BLE001 - not up yet
            if time.perf_counter() > deadline:
                raise BenchError(
                    f"temporal at {address} not healthy after {timeout:.0f}s"
                ) from None
            await asyncio.sleep(POLL_S)


def baseline_launch(history: Path, log_file: Path) -> dict:
    """Bare dev server: launch → connected client with a passing health check."""
    port = free_port()
    argv = dev_server_argv(temporal_binary(), history_file=history, port=port, ui_port=None)
    with open(log_file, "ab") as log:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, **owned_popen_options())
    try:
        asyncio.run(_temporal_answers(f"{LOOPBACK}:{port}", process, TEMPORAL_START_TIMEOUT_S))
        ready = time.perf_counter() - started
    finally:
        stop_s = stop_process(process, sig="term", timeout=TEMPORAL_STOP_TIMEOUT_S)
    return {"ready_s": ready, "stop_s": stop_s, "exit_code": process.returncode}


def jobctrl_launch(app_dir: Path) -> dict:
    """``jobctrl serve``: launch → ``/v1/health`` ok; then SIGINT and the orphan check."""
    serve = ServeProcess(app_dir)
    stopped: dict = {}
    try:
        ready = serve.start()
    finally:
        stopped = serve.stop()
    if stopped.get("survivors"):
        raise BenchError(f"children survived jobctrl serve: {stopped['survivors']} (killed)")
    if stopped.get("exit_code") != 0:
        raise BenchError(f"jobctrl serve exited with {stopped.get('exit_code')}")
    return {"ready_s": ready, "milestones": dict(serve.milestones), **stopped,
            "pids": dict(serve.info.pids) if serve.info else {}}


def run_round(index: int, keep: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"jobctrl-cold-start-{index}-"))
    result: dict = {"round": index + 1, "dir": str(tmp)}
    try:
        base_dir = tmp / "baseline"
        base_dir.mkdir()
        history = base_dir / "history.db"
        app_dir = tmp / "app"

        def baseline() -> None:
            result["baseline_cold"] = baseline_launch(history, base_dir / "temporal.log")
            result["baseline_warm"] = baseline_launch(history, base_dir / "temporal.log")

        def jobctrl() -> None:
            result["jobctrl_cold"] = jobctrl_launch(app_dir)
            result["jobctrl_warm"] = jobctrl_launch(app_dir)

        order = (baseline, jobctrl) if index % 2 == 0 else (jobctrl, baseline)
        for step in order:
            step()
        return result
    finally:
        if not keep:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


def report(rounds: list[dict]) -> dict:
    out: dict = {}
    for kind in ("cold", "warm"):
        base = summary([r[f"baseline_{kind}"]["ready_s"] for r in rounds])
        ours = summary([r[f"jobctrl_{kind}"]["ready_s"] for r in rounds])
        phases = {}
        for name in ("temporal_ready", "worker_ready", "api_ready", "runtime_json", "health_ok"):
            values = [r[f"jobctrl_{kind}"]["milestones"].get(name) for r in rounds]
            values = [v for v in values if v is not None]
            if values:
                phases[name] = summary(values)["median"]
        out[kind] = {
            "baseline_s": base,
            "jobctrl_s": ours,
            "ratio_median": ours["median"] / base["median"],
            "jobctrl_milestones_median_s": phases,
            "jobctrl_stop_s": summary([r[f"jobctrl_{kind}"]["stop_s"] for r in rounds]),
            "baseline_stop_s": summary([r[f"baseline_{kind}"]["stop_s"] for r in rounds]),
        }
    return out


def print_report(results: dict) -> None:
    print()
    print(f"{'':<22}{'median':>9}{'min':>9}{'max':>9}   (seconds, {results['rounds']} rounds)")
    for kind in ("cold", "warm"):
        row = results["summary"][kind]
        for label, key in (("bare dev server", "baseline_s"), ("jobctrl serve", "jobctrl_s")):
            s = row[key]
            print(f"{kind + ' ' + label:<22}{s['median']:>9.3f}{s['min']:>9.3f}{s['max']:>9.3f}")
        print(f"{kind + ' ratio':<22}{row['ratio_median']:>9.2f}   (jobctrl / bare, medians)")
        phases = ", ".join(f"{k} {v:.2f}" for k, v in row["jobctrl_milestones_median_s"].items())
        print(f"  jobctrl milestones (median s after launch): {phases}")
        print(f"  stop: jobctrl SIGINT {row['jobctrl_stop_s']['median']:.2f} s,"
              f" bare SIGTERM {row['baseline_stop_s']['median']:.2f} s (medians);"
              " no surviving child pids")
        print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    parser.add_argument("--no-compile", action="store_true",
                        help="leave the app's bytecode as it is (before session 6)")
    args = parser.parse_args()
    if not args.no_compile:
        compile_bytecode()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    sigterm_raises_interrupt()

    results: dict = {"benchmark": "cold_start", "rounds": args.rounds,
                     "machine": machine_info(), "per_round": []}
    try:
        for index in range(args.rounds):
            round_result = run_round(index, args.keep)
            results["per_round"].append(round_result)
            b, j = round_result["baseline_cold"], round_result["jobctrl_cold"]
            bw, jw = round_result["baseline_warm"], round_result["jobctrl_warm"]
            print(f"round {index + 1}/{args.rounds}: cold bare {b['ready_s']:.3f} s,"
                  f" jobctrl {j['ready_s']:.3f} s | warm bare {bw['ready_s']:.3f} s,"
                  f" jobctrl {jw['ready_s']:.3f} s", flush=True)
    except KeyboardInterrupt:
        print("interrupted; children stopped", file=sys.stderr)
        return 130
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    results["summary"] = report(results["per_round"])
    print_report(results)
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    exit_code = 1
    try:
        exit_code = main()
    except KeyboardInterrupt:
        exit_code = 130
    except Exception:  # noqa: BLE001 - print it, then leave without finalization
        traceback.print_exc()
    finally:
        hard_exit(exit_code)
