"""Offline Score over the demo board: this tree's rules against another commit's, in one
run. ``score_board.py`` times the rules against the pre-ledger keyword scorer; a change to
the rules is judged against the rules it replaces, so this script checks the other commit
out into a temporary worktree and runs ``score_board.py`` there and here in turns (old,
new, old, new, …), so machine load drifts over both alike. Reported: each side's median
CPU time per board round and the ratio new / old (issue 30's target: ≤ 1.5×).

    .venv/bin/python bench/score_board_vs_commit.py 4232c78          # 3 turns of 15 rounds
    .venv/bin/python bench/score_board_vs_commit.py 4232c78 --turns 5 --json vs.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit_tree, interleaved, machine_info, run_in_tree, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.5


def one_turn(tree: Path, rounds: int) -> float:
    """The median CPU seconds of the ledger scorer over ``rounds`` board rounds in ``tree``."""
    result = run_in_tree(tree, ["bench/score_board.py", "--rounds", str(rounds)])
    return statistics.median(result["cpu_s"]["ledger (new)"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json")
    args = parser.parse_args()
    with commit_tree(args.commit) as old_tree:
        old, new = interleaved(lambda tree: one_turn(tree, args.rounds), old_tree, ROOT, args.turns)
    ratio = statistics.median(new) / statistics.median(old)
    print(f"{args.commit} (old)  cpu per board round: {[f'{s * 1000:.0f} ms' for s in old]}")
    print(f"this tree (new) cpu per board round: {[f'{s * 1000:.0f} ms' for s in new]}")
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"ratio new / old (medians): {ratio:.2f}× — target ≤ {TARGET}× {verdict}")
    write_json(args.json, {"machine": machine_info(), "commit": args.commit, "old_cpu_s": old,
                           "new_cpu_s": new, "ratio": ratio, "target": TARGET})
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
