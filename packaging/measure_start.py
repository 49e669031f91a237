"""Cold start of the frozen app against the same start from the source tree.

    .venv/bin/python packaging/measure_start.py [--bundle dist/jobctrl] [--rounds 5] [--json out.json]

Each round launches ``serve --no-temporal-ui`` on a fresh temporary app dir twice — once
as ``<bundle>/jobctrl``, once as ``python -m backend.cli`` from this checkout (the order
alternates between rounds so drifting machine load hits both) — and times launch →
``GET /v1/health`` says ``"ok"`` (Temporal reachable, worker heartbeat fresh), polling
every 20 ms. Then SIGINT and a wait for a clean exit. Prints the medians and the ratio
frozen / source. Run it on an idle machine: parallel builds or test suites skew both sides.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
POLL_S = 0.02
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0


def time_to_healthy(argv: list[str], app_dir: Path) -> float:
    runtime_file = app_dir / "runtime.json"
    started = time.perf_counter()
    process = subprocess.Popen([*argv, "--app-dir", str(app_dir), "serve", "--no-temporal-ui"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        base_url = None
        while time.perf_counter() - started < START_TIMEOUT_S:
            if process.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited with {process.returncode} while starting")
            try:
                if base_url is None and runtime_file.exists():
                    base_url = json.loads(runtime_file.read_text())["apiBaseUrl"]
                if base_url and httpx.get(f"{base_url}/v1/health", timeout=2).json()["status"] == "ok":
                    return time.perf_counter() - started
            except (ValueError, KeyError, httpx.TransportError):
                pass  # runtime.json half written, or the API not listening yet
            time.sleep(POLL_S)
        raise RuntimeError(f"{argv[0]} not healthy within {START_TIMEOUT_S:.0f}s")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(ROOT / "dist" / "jobctrl"), help="the onedir folder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", metavar="PATH", help="also write every round as JSON")
    args = parser.parse_args(argv)
    variants = {
        "frozen": [str(Path(args.bundle).resolve() / "jobctrl")],
        "source": [sys.executable, "-m", "backend.cli"],
    }
    rounds: list[dict[str, float]] = []
    for index in range(args.rounds):
        order = ["frozen", "source"] if index % 2 == 0 else ["source", "frozen"]
        result: dict[str, float] = {}
        for name in order:
            with tempfile.TemporaryDirectory(prefix=f"jobctrl-start-{name}-") as tmp:
                result[name] = time_to_healthy(variants[name], Path(tmp) / "app")
        rounds.append(result)
        print(f"round {index + 1}: frozen {result['frozen']:.2f} s, source {result['source']:.2f} s",
              flush=True)
    frozen = statistics.median(r["frozen"] for r in rounds)
    source = statistics.median(r["source"] for r in rounds)
    summary = {"rounds": rounds, "median_frozen_s": frozen, "median_source_s": source,
               "ratio_frozen_to_source": frozen / source}
    print(f"median cold start to healthy: frozen {frozen:.2f} s, source tree {source:.2f} s, "
          f"ratio {frozen / source:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
