"""Tailor + Cover + gate + PDF + Word offline over the demo board: this tree's preparation
stages against another commit's, in one run. ``materials_stages.py`` runs one side as the
tree it runs in does it (a commit before the Word files renders PDFs only); this script
checks the other commit out into a temporary worktree and runs it there and here in turns
(old, new, old, new, …), so machine load drifts over both alike. Reported: each side's
median CPU time per board round and the ratio new / old (the target: ≤ 1.3×).

    .venv/bin/python bench/materials_vs_commit.py 958e0f8              # 3 turns of 2 rounds
    .venv/bin/python bench/materials_vs_commit.py 958e0f8 --turns 5 --json vs.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit_tree, interleaved, machine_info, run_in_tree, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SIDE = Path(__file__).resolve().parent / "materials_stages.py"  # this tree's copy, run in both
TARGET = 1.3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=60, help="at most this many jobs a round")
    parser.add_argument("--json")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"old": [], "new": []}

    def turn(tree: Path) -> float:
        result = run_in_tree(tree, [str(SIDE), "--rounds", str(args.rounds), "--limit", str(args.limit)])
        runs["old" if tree != ROOT else "new"].append(result)
        return statistics.median(result["cpu_s"])

    with commit_tree(args.commit) as old_tree:
        old, new = interleaved(turn, old_tree, ROOT, args.turns)
    ratio = statistics.median(new) / statistics.median(old)
    jobs = runs["new"][0]["jobs"]
    print(f"{jobs} demo jobs at or above fit 50, {args.turns} turns of {args.rounds} rounds")
    for name, label, cpu in (("old", f"{args.commit} (old)", old), ("new", "this tree (new)", new)):
        wall = [statistics.median(r["wall_s"]) for r in runs[name]]
        print(f"{label:16s} cpu per board round: {[f'{s:.2f} s' for s in cpu]}, "
              f"wall {[f'{s:.2f} s' for s in wall]} — {runs[name][0]['renders']}")
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"ratio new / old (medians): {ratio:.2f}× — target ≤ {TARGET}× {verdict}")
    write_json(args.json, {"machine": machine_info(), "commit": args.commit, "jobs": jobs,
                           "old_cpu_s": old, "new_cpu_s": new, "runs": runs, "ratio": ratio,
                           "target": TARGET})
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
