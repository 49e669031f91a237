"""Do the operations snapshot's ETAs hold? Every ETA it shows, checked against the finish.

Scenarios: the demo board (234 distinct jobs) and a larger board made by
``scripts/generate_demo_board.py``'s generator (``--large-jobs``, default 600), each with
the offline model and with a slowed paid-model stand-in (the loopback OpenAI-compatible
server of ``tests/fakes/llm_servers.py``, answering every call after
``--paid-delay-s`` ± 50 %, seeded). Each scenario is one ``jobctrl serve`` on a fresh
app dir with a profile and an unlimited budget, and ``--rounds`` Discover runs one after
the other; every round crawls new postings (the same board under new URLs), so durations
from earlier rounds calibrate later ones, as for a user who discovers every day.

While a round runs, ``GET /v1/pipeline/operations`` is sampled every ``--interval-s``.
When everything has settled, the truth comes from the database: the round's members
(``discovery_execution_jobs``, with ``linked_at``) and when each of their stage rows
reached its final state. For each sample taken at ``t`` (the snapshot's ``computedAt``):

- the overall ETA's finish is the last stage row of every member settling;
- a stage ETA's finish is the last row of that stage settling among the members already
  linked at ``t`` (the "already-known scoped backlog" it prices).

Reported per scenario (first round and later rounds apart: the first starts with no
samples, so "calibrating" is the honest answer there):

- **contained**: share of numeric ETAs with ``t + low <= finish <= t + high``
  (goal >= 90 %), with the share finishing before the range (too pessimistic) and
  after it (too optimistic);
- **shown**: share of the run (Discover request -> overall finish) during which the
  overall ETA was numeric, each sample holding until the next (goal >= 70 %); the same
  for "the overall or the PDF stage's ETA" (the PDF stage prices every job known so far,
  which the spec allows while membership is open); and the share of time per withheld
  reason of the overall ETA;
- **width**: median of ``(high - low) / (finish - t)`` over numeric ETAs.

    .venv/bin/python bench/eta_calibration.py [--quick] [--rounds 3] [--boards demo,large]
        [--providers offline,paid] [--large-jobs 600] [--paid-delay-s 1.0]
        [--interval-s 1.0] [--json out.json] [--keep]

``--quick``: the demo board only, 2 rounds, paid delay 0.5 s (about 5 minutes here).
Results and their reading: bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    REPO,
    BenchError,
    ServeProcess,
    hard_exit,
    machine_info,
    sigterm_raises_interrupt,
    write_json,
)
from soak import busy_counts, connect_ro  # noqa: E402

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
import generate_demo_board as generator  # noqa: E402

from backend.domain.clock import parse_iso, utc_now  # noqa: E402
from backend.domain.stages import STAGES  # noqa: E402
from backend.sources.board_file import demo_board_text  # noqa: E402
from tests.fakes.llm_servers import FakeLlmServer  # noqa: E402
from tests.integration.test_paid_pipeline import scripted_reply  # noqa: E402
from tests.integration.test_preparation import PROFILE  # noqa: E402

SETTLE_QUIET_S = 3.0   # nothing running and no new event for this long: the round is over
ROUND_TIMEOUT_S = 3600.0
LIVE_PHASES = ("discovering", "draining")
GOAL_CONTAINED = 0.90
GOAL_SHOWN = 0.70


# -- boards -------------------------------------------------------------------------------


def demo_postings() -> list[dict]:
    return json.loads(demo_board_text())["postings"]


def generated_postings(count: int, seed: int) -> list[dict]:
    """``count`` postings from the demo-board generator (its companies, roles, prose)."""
    rng = random.Random(seed)
    companies = generator.build_companies()
    schedule = generator.company_schedule(rng, companies, count)
    used: set[str] = set()
    return [generator.make_posting(rng, number, company, used)
            for number, company in enumerate(schedule, start=1)]


def round_board(postings: list[dict], round_number: int) -> dict:
    """The same postings under new ids and URLs: new jobs for this round."""
    suffix = f"r{round_number}"
    renamed = [{**p, "id": f"{p['id']}-{suffix}", "url": f"{p['url']}-{suffix}",
                "applyUrl": f"{p['url']}-{suffix}/apply"} for p in postings]
    return {"postings": renamed}


# -- the slowed paid-model stand-in -------------------------------------------------------


def slowed_reply(delay_s: float, seed: int):
    """The scripted paid replies, each after ``delay_s`` +- 50 % (seeded, thread-safe)."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def reply(request) -> str:
        with lock:
            wait = delay_s * rng.uniform(0.5, 1.5)
        threading.Event().wait(wait)
        return scripted_reply(request)

    return reply


# -- one round ----------------------------------------------------------------------------


@dataclass
class Sample:
    at: datetime                # the snapshot's generatedAt
    phase: str | None
    membership_open: bool | None
    overall: dict | None
    stages: dict[str, dict]
    remaining: dict[str, int]   # per stage, both selected cohorts: waiting+processing+checking
    configured_slots: int | None
    active_slots: int | None


def sample_from(snapshot: dict) -> Sample:
    execution = snapshot.get("execution") or {}
    scopes = snapshot.get("scopes") or {}
    remaining = {}
    for stage in STAGES:
        remaining[stage] = sum(
            (scopes.get(scope) or {}).get(stage, {}).get(key, 0)
            for scope in ("current_execution", "execution_sweep")
            for key in ("waiting", "processing", "needsVerification"))
    capacity = snapshot.get("capacity") or {}
    return Sample(
        at=parse_iso(snapshot["generatedAt"]), phase=execution.get("phase"),
        membership_open=execution.get("membershipOpen"), overall=snapshot.get("overallEta"),
        stages=snapshot.get("stageEtas") or {}, remaining=remaining,
        configured_slots=capacity.get("configuredSlots"),
        active_slots=capacity.get("activeSlots"))


def failed_sample(status: int) -> Sample:
    """A snapshot read that failed (HTTP ``status``): no ETA was shown."""
    return Sample(at=utc_now(), phase=None, membership_open=None,
                  overall={"state": "unavailable", "reason": f"snapshot_http_{status}"},
                  stages={}, remaining={}, configured_slots=None, active_slots=None)


@dataclass
class Truth:
    requested_at: datetime
    overall_finish: datetime
    members: list[tuple[datetime, dict[str, datetime]]]  # (linked_at, stage -> settled at)

    def stage_finish(self, stage: str, at: datetime) -> datetime | None:
        """When the stage's rows of the members linked by ``at`` had all settled."""
        times = [settled[stage] for linked, settled in self.members
                 if linked <= at and stage in settled]
        return max(times) if times else None


def read_truth(database: Path, run_id: str, requested_at: datetime) -> Truth:
    with contextlib.closing(connect_ro(database)) as conn:
        rows = conn.execute(
            "SELECT m.job_id, m.linked_at, s.stage, COALESCE(s.finished_at, s.updated_at)"
            " FROM discovery_execution_jobs m JOIN job_stage_states s"
            " ON s.tenant_id = m.tenant_id AND s.job_id = m.job_id"
            " WHERE m.discover_run_id = ?", (run_id,)).fetchall()
    by_job: dict[str, tuple[datetime, dict[str, datetime]]] = {}
    for job_id, linked_at, stage, settled in rows:
        entry = by_job.setdefault(job_id, (parse_iso(linked_at), {}))
        entry[1][stage] = parse_iso(settled)
    if not by_job:
        raise BenchError(f"run {run_id} has no members")
    finish = max(t for _, settled in by_job.values() for t in settled.values())
    return Truth(requested_at=requested_at, overall_finish=finish,
                 members=list(by_job.values()))


def run_round(http: httpx.Client, database: Path, interval_s: float) -> tuple[list[Sample], Truth]:
    requested_at = utc_now()
    accepted = http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    accepted.raise_for_status()
    body = accepted.json()
    if body.get("alreadyRunning"):
        raise BenchError(f"a Discover was still running: {body}")
    run_id = body["firstExecutionRunId"]
    samples: list[Sample] = []
    deadline = time.perf_counter() + ROUND_TIMEOUT_S
    last_event, quiet_since = -1, time.perf_counter()
    while True:
        tick = time.perf_counter()
        response = http.get("/v1/pipeline/operations")
        if response.status_code >= 500:
            # What a user would see: no snapshot at all. Counted, and the run goes on.
            samples.append(failed_sample(response.status_code))
        else:
            response.raise_for_status()
            snapshot = response.json()
            if (snapshot.get("execution") or {}).get("discoverRunId") == run_id:
                samples.append(sample_from(snapshot))
        with contextlib.closing(connect_ro(database)) as conn:
            busy = busy_counts(conn)
        if busy["newest_event"] != last_event:
            last_event, quiet_since = busy["newest_event"], time.perf_counter()
        idle = busy["running_runs"] == 0 and busy["busy_stages"] == 0
        if idle and time.perf_counter() - quiet_since >= SETTLE_QUIET_S:
            break
        if time.perf_counter() > deadline:
            raise BenchError(f"round not settled after {ROUND_TIMEOUT_S:.0f}s: {busy}")
        time.sleep(max(0.0, interval_s - (time.perf_counter() - tick)))
    return samples, read_truth(database, run_id, requested_at)


# -- scoring ------------------------------------------------------------------------------


@dataclass
class Tally:
    """Numeric ETAs checked against their finish."""

    contained: int = 0
    early: int = 0          # finished before the range's low end (too pessimistic)
    late: int = 0           # finished after the high end (too optimistic)
    widths: list[float] = field(default_factory=list)
    misses: list[dict] = field(default_factory=list)  # the first few, for the report

    @property
    def total(self) -> int:
        return self.contained + self.early + self.late

    def add(self, eta: dict, at: datetime, finish: datetime, label: str) -> None:
        left = (finish - at).total_seconds()
        low, high = eta["lowSeconds"], eta["highSeconds"]
        if left < low:
            self.early += 1
        elif left > high:
            self.late += 1
        else:
            self.contained += 1
        if left > 0:
            self.widths.append((high - low) / left)
        if not low <= left <= high and len(self.misses) < 8:
            self.misses.append({"eta": label, "range_s": [low, high], "left_s": round(left, 1),
                                "confidence": eta.get("confidence")})

    def merge(self, other: Tally) -> None:
        self.contained += other.contained
        self.early += other.early
        self.late += other.late
        self.widths += other.widths
        self.misses += other.misses[: max(0, 8 - len(self.misses))]

    def summary(self) -> dict:
        total = self.total
        return {
            "numeric": total,
            "contained": self.contained / total if total else None,
            "early": self.early / total if total else None,
            "late": self.late / total if total else None,
            "median_width_rel": statistics.median(self.widths) if self.widths else None,
            "misses": self.misses,
        }


@dataclass
class RoundScore:
    overall: Tally
    stages: Tally
    duration_s: float
    shown_s: float                       # overall ETA numeric
    backlog_shown_s: float               # overall or the pdf stage ETA (every known job) numeric
    withheld_s: dict[str, float]         # overall ETA withheld, by reason
    phase_lag_s: float | None            # phase left discovering/draining after the finish
    samples: int


def _available(eta: dict | None) -> bool:
    return bool(eta) and eta.get("state") == "available"


def score_round(samples: list[Sample], truth: Truth) -> RoundScore:
    overall, stages = Tally(), Tally()
    shown = backlog_shown = 0.0
    withheld: dict[str, float] = {}
    end = truth.overall_finish
    for index, sample in enumerate(samples):
        if sample.at <= end:
            following = samples[index + 1].at if index + 1 < len(samples) else end
            held = max(0.0, (min(following, end) - sample.at).total_seconds())
            numeric = _available(sample.overall)
            shown += held if numeric else 0.0
            backlog_shown += held if numeric or _available(sample.stages.get("pdf")) else 0.0
            if not numeric:
                reason = (sample.overall or {}).get("reason") or "absent"
                withheld[reason] = withheld.get(reason, 0.0) + held
        if _available(sample.overall):
            overall.add(sample.overall, sample.at, end, "overall")
        for stage, eta in sample.stages.items():
            finish = truth.stage_finish(stage, sample.at)
            if _available(eta) and finish is not None:
                stages.add(eta, sample.at, finish, stage)
    settled = next((s.at for s in samples
                    if s.phase is not None and s.phase not in LIVE_PHASES and s.at >= end), None)
    return RoundScore(
        overall=overall, stages=stages,
        duration_s=(end - truth.requested_at).total_seconds(), shown_s=shown,
        backlog_shown_s=backlog_shown, withheld_s=withheld,
        phase_lag_s=(settled - end).total_seconds() if settled else None,
        samples=len(samples))


def summarize(rounds: list[RoundScore]) -> dict:
    overall, stages = Tally(), Tally()
    withheld: dict[str, float] = {}
    for score in rounds:
        overall.merge(score.overall)
        stages.merge(score.stages)
        for reason, seconds in score.withheld_s.items():
            withheld[reason] = withheld.get(reason, 0.0) + seconds
    duration = sum(r.duration_s for r in rounds)
    return {
        "rounds": len(rounds),
        "duration_s": duration,
        "overall": overall.summary(),
        "stages": stages.summary(),
        "shown": sum(r.shown_s for r in rounds) / duration if duration else None,
        "backlog_shown": sum(r.backlog_shown_s for r in rounds) / duration if duration else None,
        "withheld_share": {reason: seconds / duration for reason, seconds in
                           sorted(withheld.items(), key=lambda item: -item[1])},
    }


# -- one scenario -------------------------------------------------------------------------


@dataclass
class Scenario:
    board: str      # demo | large
    provider: str   # offline | paid

    @property
    def name(self) -> str:
        return f"{self.board}/{self.provider}"


def settings_for(scenario: Scenario, board_path: Path, fake: FakeLlmServer | None) -> dict:
    settings: dict = {
        "sources": [{"kind": "json_file", "id": "bench_board", "path": str(board_path)}],
        "dailyBudgetUsd": 0,  # unlimited: the bench measures ETAs, not the ceiling
    }
    if fake is not None:
        settings["llm"] = {"provider": "openai_compat", "baseUrl": fake.openai_base_url,
                           "model": "gpt-4o", "apiKeySecret": "openai"}
    return settings


def wait_settled(database: Path) -> None:
    """The profile save may start a continuation run: let it finish before round 1."""
    last, quiet_since = -1, time.perf_counter()
    deadline = time.perf_counter() + ROUND_TIMEOUT_S
    while time.perf_counter() < deadline:
        with contextlib.closing(connect_ro(database)) as conn:
            busy = busy_counts(conn)
        if busy["newest_event"] != last:
            last, quiet_since = busy["newest_event"], time.perf_counter()
        if (busy["running_runs"] == 0 and busy["busy_stages"] == 0
                and time.perf_counter() - quiet_since >= SETTLE_QUIET_S):
            return
        time.sleep(0.25)
    raise BenchError("the app did not settle after the profile save")


def run_scenario(scenario: Scenario, args, work: Path) -> dict:
    app_dir = work / scenario.name.replace("/", "-")
    app_dir.mkdir(parents=True)
    board_path = app_dir / "bench-board.json"
    postings = (demo_postings() if scenario.board == "demo"
                else generated_postings(args.large_jobs, seed=20261201))
    if args.limit_jobs:
        postings = postings[: args.limit_jobs]
    fake = None
    if scenario.provider == "paid":
        fake = FakeLlmServer().start()
        fake.reply_with(slowed_reply(args.paid_delay_s, seed=7))
        fake.set_usage(4000, 1200)
    (app_dir / "settings.json").write_text(
        json.dumps(settings_for(scenario, board_path, fake)), encoding="utf-8")
    serve = ServeProcess(app_dir, env={**os.environ, "JOBCTRL_SECRETS_BACKEND": "file"})
    rounds: list[RoundScore] = []
    raw: list[dict] = []
    try:
        serve.start()
        info = serve.info
        with httpx.Client(base_url=info.api_base_url, timeout=60,
                          headers={"Authorization": f"Bearer {info.api_token}"}) as http:
            if fake is not None:
                http.put("/v1/secrets/openai", json={"value": "sk-bench"}).raise_for_status()
            http.put("/v1/profile", json=PROFILE).raise_for_status()
            wait_settled(app_dir / "jobctrl.db")
            for number in range(1, args.rounds + 1):
                board_path.write_text(json.dumps(round_board(postings, number)), encoding="utf-8")
                samples, truth = run_round(http, app_dir / "jobctrl.db", args.interval_s)
                score = score_round(samples, truth)
                rounds.append(score)
                raw.append(_raw_round(number, samples, truth, score))
                print_round(scenario, number, score, len(truth.members))
                failures = sum(1 for sample in samples if sample.phase is None
                               and (sample.overall or {}).get("reason", "").startswith("snapshot_http"))
                if failures:
                    print(f"{failures} snapshot reads failed; service logs:{serve.log_tails(40)}",
                          file=sys.stderr)
    except BaseException:
        if serve.process is not None:
            print(serve.log_tails(20), file=sys.stderr)
        raise
    finally:
        stopped = serve.stop()
        if stopped.get("survivors"):
            print(f"killed survivors after stop: {stopped['survivors']}", file=sys.stderr)
        if fake is not None:
            fake.stop()
    return {"scenario": scenario.name, "jobs_per_round": len(postings),
            "first_round": summarize(rounds[:1]), "later_rounds": summarize(rounds[1:]),
            "all_rounds": summarize(rounds), "rounds": raw}


def _raw_round(number: int, samples: list[Sample], truth: Truth, score: RoundScore) -> dict:
    """Every sample, for reading a miss afterwards (and recording unit-test inputs)."""
    return {
        "round": number, "members": len(truth.members),
        "requested_at": truth.requested_at.isoformat(),
        "overall_finish": truth.overall_finish.isoformat(),
        "duration_s": round(score.duration_s, 2), "phase_lag_s": score.phase_lag_s,
        "samples": [{"at": s.at.isoformat(), "phase": s.phase,
                     "membershipOpen": s.membership_open, "remaining": s.remaining,
                     "configuredSlots": s.configured_slots, "activeSlots": s.active_slots,
                     "overallEta": s.overall, "stageEtas": s.stages} for s in samples],
    }


# -- output -------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "   —" if value is None else f"{100 * value:3.0f}%"


def print_round(scenario: Scenario, number: int, score: RoundScore, members: int) -> None:
    o, s = score.overall.summary(), score.stages.summary()
    reasons = ", ".join(f"{reason} {seconds:.0f}s" for reason, seconds in
                        sorted(score.withheld_s.items(), key=lambda item: -item[1]))
    print(f"{scenario.name:14s} round {number}: {members} jobs in {score.duration_s:6.1f}s,"
          f" {score.samples} samples; overall shown {_pct(score.shown_s / score.duration_s)},"
          f" contained {_pct(o['contained'])} of {o['numeric']};"
          f" stages contained {_pct(s['contained'])} of {s['numeric']}"
          f" (early {_pct(s['early'])}, late {_pct(s['late'])});"
          f" withheld: {reasons or '—'}", flush=True)


def print_table(results: list[dict]) -> None:
    print()
    print("| scenario | rounds | overall shown | overall or PDF-stage shown"
          " | overall contained (n) | stage contained (n)"
          " | too early / too late (stages) | median width / remaining (overall, stages)"
          " | main withheld reasons (overall) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for result in results:
        for label in ("first_round", "later_rounds"):
            part = result[label]
            if not part["rounds"]:
                continue
            o, s = part["overall"], part["stages"]
            reasons = ", ".join(f"{reason} {_pct(share).strip()}" for reason, share
                                in list(part["withheld_share"].items())[:3])
            width = " / ".join("—" if w is None else f"{w:.2f}"
                               for w in (o["median_width_rel"], s["median_width_rel"]))
            print(f"| {result['scenario']} | {label.replace('_', ' ')} ({part['rounds']})"
                  f" | {_pct(part['shown'])} | {_pct(part['backlog_shown'])}"
                  f" | {_pct(o['contained'])} ({o['numeric']})"
                  f" | {_pct(s['contained'])} ({s['numeric']})"
                  f" | {_pct(s['early'])} / {_pct(s['late'])} | {width} | {reasons or '—'} |")
    print(f"\nGoals: contained >= {GOAL_CONTAINED:.0%}, overall shown >= {GOAL_SHOWN:.0%}"
          " of the run.")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="demo board only, 2 rounds, paid delay 0.5 s")
    parser.add_argument("--rounds", type=int, default=None, help="Discover runs per scenario (3)")
    parser.add_argument("--boards", default=None, help="demo,large")
    parser.add_argument("--providers", default="offline,paid", help="offline,paid")
    parser.add_argument("--large-jobs", type=int, default=600)
    parser.add_argument("--paid-delay-s", type=float, default=None,
                        help="the stand-in's mean answer time (1.0)")
    parser.add_argument("--limit-jobs", type=int, default=0,
                        help="only the first N postings of each board (a smoke test)")
    parser.add_argument("--interval-s", type=float, default=1.0, help="snapshot sampling")
    parser.add_argument("--json", help="write every sample and the summaries here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary app dirs")
    args = parser.parse_args()
    args.rounds = args.rounds or (2 if args.quick else 3)
    args.boards = args.boards or ("demo" if args.quick else "demo,large")
    args.paid_delay_s = args.paid_delay_s or (0.5 if args.quick else 1.0)
    sigterm_raises_interrupt()
    machine = machine_info()
    scenarios = [Scenario(board, provider) for board in args.boards.split(",")
                 for provider in args.providers.split(",")]
    work = Path(tempfile.mkdtemp(prefix="jobctrl-bench-eta-"))
    started = time.perf_counter()
    results = []
    try:
        for scenario in scenarios:
            results.append(run_scenario(scenario, args, work))
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print_table(results)
    print(f"\nwall time {time.perf_counter() - started:.0f}s")
    write_json(args.json, {"machine": machine, "mode": "quick" if args.quick else "full",
                           "options": {k: v for k, v in vars(args).items() if k != "json"},
                           "results": results})
    return 0


if __name__ == "__main__":
    code = 0
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # noqa: BLE001 - report, then leave without SDK finalization
        traceback.print_exc()
        code = 1
    hard_exit(code)
