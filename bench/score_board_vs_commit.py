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
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.5


def one_turn(tree: Path, rounds: int) -> float:
    """The median CPU seconds of the ledger scorer over ``rounds`` board rounds in ``tree``."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "bench/score_board.py", "--rounds", str(rounds), "--json", str(out)],
                   cwd=tree, env=env, check=True, capture_output=True)
    result = json.loads(out.read_text(encoding="utf-8"))
    out.unlink()
    return statistics.median(result["cpu_s"]["ledger (new)"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commit")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        old_tree = Path(folder) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(old_tree), args.commit],
                       cwd=ROOT, check=True, capture_output=True)
        try:
            old, new = [], []
            for _ in range(args.turns):
                old.append(one_turn(old_tree, args.rounds))
                new.append(one_turn(ROOT, args.rounds))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, check=False)
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
