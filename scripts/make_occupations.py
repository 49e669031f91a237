"""Writes resources/occupations/esco_titles.json.gz: every occupation title of ESCO (the
European Skills, Competences, Qualifications and Occupations classification, v1.0, 2,942
occupations) in English, American English, French and Spanish, each with the ISCO-08 unit
group its occupation belongs to, and the English names of the ISCO-08 groups.

The fit rules read the file to tell which line of work a job title names ("Ward Sister"
and "infirmier" are nurses, ISCO 2221); nothing is downloaded at run time. ESCO is
published by the European Commission and may be reused with attribution (Commission
Decision 2011/833/EU); ISCO-08 is the ILO's classification.

Input: a folder with the ESCO CSV export (``occupations_en.csv``, ``occupations_en-us.csv``,
``occupations_fr.csv``, ``occupations_es.csv``, ``ISCOGroups_en.csv``; the columns
``iscoGroup``, ``preferredLabel``, ``altLabels``, ``code``). Any other language's
``occupations_<lang>.csv`` in the folder is read too.

    .venv/bin/python scripts/make_occupations.py /path/to/esco-csv
"""

from __future__ import annotations

import csv
import gzip
import json
import sys
from collections import Counter
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "resources" / "occupations" / "esco_titles.json.gz"


def _labels(row: dict[str, str]) -> list[str]:
    """The occupation's names; French and Spanish ones come as "masculine/feminine"."""
    names = [row["preferredLabel"], *row["altLabels"].split("\n")]
    out = []
    for name in names:
        for part in name.split("/"):
            part = " ".join(part.split()).lower()
            if 2 <= len(part) <= 80:
                out.append(part)
    return out


def read_language(path: Path) -> dict[str, list[str]]:
    """Folded title → the ISCO unit groups of the occupations that carry it, the one
    whose preferred label it is first, then by how many occupations share it."""
    preferred: dict[str, str] = {}
    votes: dict[str, Counter[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            code = (row.get("iscoGroup") or "").strip()
            if not (code.isdigit() and len(code) == 4):
                continue
            names = _labels(row)
            for name in _labels({"preferredLabel": row["preferredLabel"], "altLabels": ""}):
                preferred.setdefault(name, code)
            for name in names:
                votes.setdefault(name, Counter())[code] += 1
    return {name: sorted(counts, key=lambda c: (c != preferred.get(name), -counts[c], c))
            for name, counts in votes.items()}


def read_groups(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as handle:
        return {row["code"].strip(): row["preferredLabel"].strip() for row in csv.DictReader(handle)
                if row.get("code", "").strip().isdigit()}


def main(folder: Path) -> None:
    titles: dict[str, dict[str, list[str]]] = {}
    for path in sorted(folder.glob("occupations_*.csv")):
        language = path.stem.split("_", 1)[1]
        titles[language] = read_language(path)
    document = {
        "source": "ESCO v1.0 occupations (European Commission, reuse with attribution, "
                  "Decision 2011/833/EU); ISCO-08 groups (ILO)",
        "groups": read_groups(folder / "ISCOGroups_en.csv"),
        "titles": titles,
    }
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(gzip.compress(data.encode("utf-8"), 9, mtime=0))
    counts = ", ".join(f"{lang} {len(names):,}" for lang, names in titles.items())
    print(f"{OUT}: {OUT.stat().st_size / 1024:.0f} KiB; titles: {counts}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
