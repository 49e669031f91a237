"""Résumé import accuracy: every corpus file, field by field, ours beside a peer parser.

Each file of ``tests/fixtures/resumes`` (a résumé made by a real tool, with its ground
truth ``<id>.truth.json``) is read by ``backend.profile_import.import_resume`` and scored
by ``tests/resume_scoring.py``: name, e-mail, phone, links, city / region / country; each
work entry's employer, title, location, start, end and every bullet exactly once;
education; skills; languages; the draft's suggested preferences; work entries the
parser made up. The peer, in the same run on the same files: ``openresume-parser``
(PyPI; a Python port of OpenResume's heuristics, PDF only), its output mapped to JSON
Resume shape (its preference fields, filled only by its optional AI step, are scored
like our draft's suggestions). It joins an entry's bullets into one ``description``, so
besides the strict score it gets a lenient one ("contained": a bullet counts when its
text is inside that description exactly once).

Time: the median of ``--rounds`` imports of each file (after one warm-up import of the
first file), p50/p95 over the files. Memory: the tracemalloc peak of one more import
per file (traced separately; tracing slows everything down).

    .venv/bin/python bench/resume_import_accuracy.py
    .venv/bin/python bench/resume_import_accuracy.py --misses            # every missed field
    .venv/bin/python bench/resume_import_accuracy.py --misses --worst 5 --no-peer
    .venv/bin/python bench/resume_import_accuracy.py --only moderncv --misses
    .venv/bin/python bench/resume_import_accuracy.py --rounds 5 --json accuracy.json

Targets (issue 29): ≥ 97 % of fields overall, no file under 90 %, 0 invented work
entries, 0 bullets lost or doubled, p95 < 1 s for files of up to three pages. The peer
is installed with ``pip install -e '.[bench]'`` (``--no-peer`` skips it).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import re
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine_info, percentile, write_json  # noqa: E402

from backend.profile_import import import_resume  # noqa: E402
from tests.resume_scoring import ScoreResult, draft_preferences, score_resume  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "resumes"

OVERALL_TARGET = 0.97
FILE_TARGET = 0.90
P95_TARGET_S = 1.0
MAX_PAGES_FOR_TIME_TARGET = 3


# --------------------------------------------------------------------------- corpus


def corpus_files(folder: Path, only: str | None) -> list[Path]:
    files = sorted(path for path in folder.iterdir()
                   if path.is_file() and not path.name.endswith(".truth.json") and path.name != "README.md"
                   and path.with_name(path.stem + ".truth.json").is_file())
    return [path for path in files if not only or only.lower() in path.name.lower()]


def load_truth(path: Path) -> dict:
    return json.loads(path.with_name(path.stem + ".truth.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- the peer

_MONTHS = {name: index for index, names in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
    for name in (names,)}


def _iso(text: Any) -> str | None:
    """The peer's raw dates ("Jan 2020", "2019", "Sept. 2021") as ISO prefixes."""
    if text is None:
        return None
    text = str(text).strip()
    year = re.search(r"(19|20)\d{2}", text)
    if not year:
        return text or None
    month = re.search(r"[A-Za-z]{3}", text)
    number = _MONTHS.get(month.group(0).lower()) if month else None
    return f"{year.group(0)}-{number:02d}" if number else year.group(0)


def openresume_to_json_resume(resume: dict) -> dict:
    """openresume-parser's resume dict → the JSON Resume dict the scorer reads."""
    location = resume.get("location") or {}
    work = []
    for entry in (resume.get("experience") or {}).get("work_history") or []:
        description = (entry.get("description") or "").strip()
        work.append({
            "name": entry.get("company") or None,
            "position": entry.get("title") or None,
            "startDate": _iso(entry.get("start_date")),
            "endDate": None if entry.get("current") else _iso(entry.get("end_date")),
            "highlights": [description] if description else [],
        })
    education = resume.get("education") or {}
    return {
        "basics": {
            "name": resume.get("full_name") or None,
            "email": resume.get("email") or None,
            "phone": resume.get("phone") or None,
            "url": resume.get("url") or None,
            "location": {"city": location.get("city") or None, "region": location.get("state") or None},
        },
        "work": work,
        "education": [{"studyType": education.get("degree_course") or None,
                       "area": education.get("specialization") or None,
                       "endDate": str(education["passing_year"]) if education.get("passing_year") else None}]
        if education.get("degree_course") else [],
        "skills": [{"keywords": list(resume.get("skills") or [])}],
    }


def openresume_preferences(resume: dict) -> dict:
    """Its preference fields (filled only by its optional AI step, so empty offline)."""
    modes = [str(mode).lower() for mode in resume.get("work_modes") or []]
    remote = ("remote_only" if modes == ["remote"] else "onsite" if modes == ["onsite"]
              else "remote_or_hybrid" if modes and "onsite" not in modes else "any" if modes else None)
    return {"targetTitles": list(resume.get("preferred_roles") or []),
            "locations": list(resume.get("preferred_cities") or []), "remote": remote}


def peer_parser() -> Callable[[Path], tuple[dict, dict]] | None:
    """``path → (JSON Resume dict, preferences)`` through openresume-parser, or None."""
    try:
        from openresume import parse_resume_from_pdf
    except ImportError:
        return None

    def parse(path: Path) -> tuple[dict, dict]:
        out = parse_resume_from_pdf(str(path))
        if not out.get("ok"):
            raise RuntimeError(f"{out['error']['code']}: {out['error']['message']}")
        return openresume_to_json_resume(out["resume"]), openresume_preferences(out["resume"])

    return parse


def peer_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openresume-parser")
    except PackageNotFoundError:
        return None


# --------------------------------------------------------------------------- measuring


def _timed(call: Callable[[], Any], rounds: int) -> tuple[Any, list[float], str | None]:
    """(first result, seconds per round, error); a parser that raises scores an empty draft."""
    times, first, error = [], None, None
    for index in range(rounds):
        gc.collect()
        start = time.perf_counter()
        try:
            out = call()
        except Exception as exc:  # noqa: BLE001 - a failing import is a result, not a crash
            out, error = None, f"{type(exc).__name__}: {exc}"
        times.append(time.perf_counter() - start)
        if index == 0:
            first = out
    return first, times, error


def _heap_peak_mb(call: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        with contextlib.suppress(Exception):  # a failure is measured in _timed already
            call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _side(score: ScoreResult, times: list[float], heap: float, error: str | None, **extra) -> dict:
    ordered = sorted(times)
    return {"score": score, "seconds": ordered[len(ordered) // 2], "rounds_s": times,
            "heap_peak_mb": heap, "error": error, **extra}


def measure_file(path: Path, truth: dict, rounds: int, peer: Callable[[Path], dict] | None) -> dict:
    data = path.read_bytes()

    def ours():
        return import_resume(data, file_name=path.name, content_type=None)

    result, times, error = _timed(ours, rounds)
    parsed = result.resume.export() if result is not None else {}
    row: dict = {
        "file": path.name,
        "tool": truth.get("tool"),
        "language": truth.get("language"),
        "line_of_work": truth.get("lineOfWork"),
        "pages": (result.pages if result is not None and result.pages else None) or truth.get("pages"),
        "ours": _side(score_resume(truth, parsed, preferences=draft_preferences(result) if result else None),
                      times, _heap_peak_mb(ours), error,
                      unplaced=len(result.unplaced) if result is not None else None),
    }
    if peer is not None and path.suffix.lower() == ".pdf":
        peer_out, peer_times, peer_error = _timed(lambda: peer(path), rounds)
        peer_parsed, peer_preferences = peer_out or ({}, {})
        row["peer"] = _side(score_resume(truth, peer_parsed, preferences=peer_preferences), peer_times,
                            _heap_peak_mb(lambda: peer(path)), peer_error,
                            lenient=score_resume(truth, peer_parsed, preferences=peer_preferences,
                                                 bullet_mode="contained"))
    return row


# --------------------------------------------------------------------------- summaries


def overall(rows: list[dict], side: str, *, pdf_only: bool = False, lenient: bool = False) -> dict | None:
    picked = [row for row in rows if side in row and (not pdf_only or row["file"].lower().endswith(".pdf"))]
    if not picked:
        return None
    scores = [row[side]["lenient" if lenient else "score"] for row in picked]
    hits, total = sum(s.hits for s in scores), sum(s.total for s in scores)
    timed = [row[side]["seconds"] for row in picked
             if (row["pages"] or 1) <= MAX_PAGES_FOR_TIME_TARGET]
    groups: dict[str, list[int]] = {}
    for score in scores:
        for name, (h, t) in score.by_group().items():
            counts = groups.setdefault(name, [0, 0])
            counts[0] += h
            counts[1] += t
    return {
        "files": len(picked),
        "hits": hits,
        "total": total,
        "accuracy": hits / total if total else float("nan"),
        "worst_file_accuracy": min(s.accuracy for s in scores),
        "files_under_target": sum(1 for s in scores if s.accuracy < FILE_TARGET),
        "invented_work_entries": sum(s.invented_count for s in scores),
        "bullets_lost": sum(s.bullets_lost for s in scores),
        "bullets_doubled": sum(s.bullets_doubled for s in scores),
        "errors": sum(1 for row in picked if row[side]["error"]),
        "time_p50_s": percentile(timed, 50),
        "time_p95_s": percentile(timed, 95),
        "time_max_s": max(timed) if timed else float("nan"),
        "heap_peak_p50_mb": percentile([row[side]["heap_peak_mb"] for row in picked], 50),
        "heap_peak_max_mb": max(row[side]["heap_peak_mb"] for row in picked),
        "groups": {name: {"hits": h, "total": t} for name, (h, t) in sorted(groups.items())},
    }


def targets(summary: dict) -> list[tuple[str, str, bool]]:
    return [
        (f"fields overall ≥ {OVERALL_TARGET:.0%}", f"{summary['accuracy']:.1%}",
         summary["accuracy"] >= OVERALL_TARGET),
        (f"no file under {FILE_TARGET:.0%}", f"{summary['files_under_target']} under "
         f"(worst {summary['worst_file_accuracy']:.1%})", summary["files_under_target"] == 0),
        ("0 invented work entries", str(summary["invented_work_entries"]),
         summary["invented_work_entries"] == 0),
        ("0 bullets lost or doubled", f"{summary['bullets_lost']} lost, {summary['bullets_doubled']} doubled",
         summary["bullets_lost"] + summary["bullets_doubled"] == 0),
        (f"p95 < {P95_TARGET_S:.0f} s (≤ {MAX_PAGES_FOR_TIME_TARGET} pages)",
         f"{summary['time_p95_s'] * 1000:.0f} ms", summary["time_p95_s"] < P95_TARGET_S),
    ]


# --------------------------------------------------------------------------- printing


def _pct(score: ScoreResult | None) -> str:
    return f"{score.accuracy:6.1%}" if score is not None else "     –"


def print_table(report: dict) -> None:
    rows = report["rows"]
    peer = report["peer_version"] or "not run"
    print(f"résumé import accuracy: {len(rows)} corpus files, {report['rounds']} timed rounds each "
          f"(ours: backend.profile_import; peer: openresume-parser {peer}, PDF only)")
    header = (f"{'file':<44}{'pg':>3}{'ours':>8}{'fields':>9}{'inv':>4}{'lost':>5}{'dbl':>4}{'ms':>7}"
              f"{'MB':>6}  {'peer':>7}{'lenient':>8}{'inv':>4}{'ms':>7}")
    print(header)
    print("-" * len(header))
    for row in sorted(rows, key=lambda r: r["ours"]["score"].accuracy):
        ours, peer = row["ours"], row.get("peer")
        score = ours["score"]
        flag = "!" if score.accuracy < FILE_TARGET else " "
        line = (f"{row['file'][:43]:<43}{flag}{row['pages'] or '-':>3}{_pct(score):>8}"
                f"{score.hits:>4}/{score.total:<4}{score.invented_count:>4}{score.bullets_lost:>5}"
                f"{score.bullets_doubled:>4}{ours['seconds'] * 1000:>7.0f}{ours['heap_peak_mb']:>6.1f}  ")
        if peer is not None:
            line += (f"{_pct(peer['score']):>7}{_pct(peer['lenient']):>8}{peer['score'].invented_count:>4}"
                     f"{peer['seconds'] * 1000:>7.0f}")
        if ours["error"]:
            line += f"  ERROR {ours['error'][:60]}"
        print(line)

    print()
    summaries = report["summary"]
    columns = [(label, summaries[key]) for key, label in (
        ("ours", "ours, all files"), ("ours_pdf", "ours, PDFs"), ("peer_pdf", "peer, PDFs"),
        ("peer_pdf_lenient", "peer, PDFs, lenient bullets")) if summaries.get(key)]
    print(f"{'':<30}" + "".join(f"{label:>30}" for label, _ in columns))
    for label, render in (
        ("files", lambda s: str(s["files"])),
        ("fields right", lambda s: f"{s['hits']}/{s['total']} = {s['accuracy']:.1%}"),
        ("worst file", lambda s: f"{s['worst_file_accuracy']:.1%}"),
        (f"files under {FILE_TARGET:.0%}", lambda s: str(s["files_under_target"])),
        ("invented work entries", lambda s: str(s["invented_work_entries"])),
        ("bullets lost / doubled", lambda s: f"{s['bullets_lost']} / {s['bullets_doubled']}"),
        ("errors", lambda s: str(s["errors"])),
        (f"time p50 / p95 (≤{MAX_PAGES_FOR_TIME_TARGET} pg)",
         lambda s: f"{s['time_p50_s'] * 1000:.0f} / {s['time_p95_s'] * 1000:.0f} ms"),
        ("heap peak p50 / max", lambda s: f"{s['heap_peak_p50_mb']:.1f} / {s['heap_peak_max_mb']:.1f} MB"),
    ):
        print(f"{label:<30}" + "".join(f"{render(s):>30}" for _, s in columns))

    print("\nper field (hits/total):")
    names = sorted({name for _, s in columns for name in s["groups"]})
    for name in names:
        cells = []
        for _, s in columns:
            group = s["groups"].get(name)
            cells.append(f"{group['hits']}/{group['total']} = {group['hits'] / group['total']:.0%}"
                         if group else "–")
        print(f"  {name:<28}" + "".join(f"{cell:>30}" for cell in cells))

    print("\ntargets (ours, all files):")
    for label, value, passed in targets(summaries["ours"]):
        print(f"  {'PASS' if passed else 'FAIL'}  {label:<34} {value}")


def print_misses(report: dict, side: str, worst: int | None = None) -> None:
    rows = [row for row in report["rows"] if side in row]
    print(f"\nmisses ({side}), worst file first:")
    for row in sorted(rows, key=lambda r: r[side]["score"].accuracy)[:worst]:
        score: ScoreResult = row[side]["score"]
        if not score.misses and not score.invented:
            continue
        print(f"\n== {row['file']} ({row['tool']}): {score.report()}")
        if row[side].get("error"):
            print(f"  ERROR {row[side]['error']}")


# --------------------------------------------------------------------------- main


def run(folder: Path, rounds: int, only: str | None, with_peer: bool) -> dict:
    files = corpus_files(folder, only)
    if not files:
        raise SystemExit(f"no corpus files (with a .truth.json) in {folder}")
    peer = peer_parser() if with_peer else None
    if with_peer and peer is None:
        print("openresume-parser is not installed (pip install -e '.[bench]'); running without the peer")
    # warm-up: module imports, font tables, regex compilation
    import_resume(files[0].read_bytes(), file_name=files[0].name, content_type=None)
    first_pdf = next((path for path in files if path.suffix.lower() == ".pdf"), None)
    if peer is not None and first_pdf is not None:
        with contextlib.suppress(Exception):  # scored as an error per file later
            peer(first_pdf)
    rows = []
    for path in files:
        rows.append(measure_file(path, load_truth(path), rounds, peer))
        print(".", end="", flush=True, file=sys.stderr)
    print(file=sys.stderr)
    return {
        "rounds": rounds,
        "peer_version": peer_version() if peer is not None else None,
        "rows": rows,
        "summary": {
            "ours": overall(rows, "ours"),
            "ours_pdf": overall(rows, "ours", pdf_only=True),
            "peer_pdf": overall(rows, "peer", pdf_only=True),
            "peer_pdf_lenient": overall(rows, "peer", pdf_only=True, lenient=True),
        },
        "machine": machine_info(),
    }


def to_json(report: dict) -> dict:
    def side(data: dict) -> dict:
        out = {key: value for key, value in data.items() if key not in ("score", "lenient")}
        out["score"] = data["score"].to_dict()
        if "lenient" in data:
            out["lenient"] = data["lenient"].to_dict()
        return out

    rows = [{**{k: v for k, v in row.items() if k not in ("ours", "peer")}, "ours": side(row["ours"]),
             **({"peer": side(row["peer"])} if "peer" in row else {})} for row in report["rows"]]
    passed = targets(report["summary"]["ours"])
    return {**report, "rows": rows,
            "targets": [{"target": label, "value": value, "pass": ok} for label, value, ok in passed]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus folder")
    parser.add_argument("--rounds", type=int, default=3, help="timed imports per file (median kept)")
    parser.add_argument("--only", help="only files whose name contains this")
    parser.add_argument("--misses", action="store_true", help="print every missed field per file")
    parser.add_argument("--peer-misses", action="store_true", help="the same for the peer parser")
    parser.add_argument("--worst", type=int, help="with --misses: only the N worst files")
    parser.add_argument("--no-peer", action="store_true", help="skip openresume-parser")
    parser.add_argument("--json", help="also write the raw results here")
    args = parser.parse_args()
    report = run(args.corpus, max(1, args.rounds), args.only, not args.no_peer)
    print_table(report)
    if args.misses:
        print_misses(report, "ours", args.worst)
    if args.peer_misses:
        print_misses(report, "peer", args.worst)
    write_json(args.json, to_json(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
