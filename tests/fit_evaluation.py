"""The fit evaluation set (``tests/fixtures/fit_eval``) and its measures.

Twelve job seekers and a board of postings from their lines of work; every seeker–posting
pair carries the label a person in that job would give it (good, acceptable, no) and the
reason. A pair the set leaves unlabelled is "no — another line of work". The measures:

- precision and recall at the threshold: a job is *prepared* when its score reaches the
  threshold; good and acceptable jobs should be, no jobs should not;
- NDCG@10 of each seeker's ranking (gains: good 2, acceptable 1, no 0), averaged;
- deal-breaker leaks: a *no* job at or above the threshold whose reason is a deal-breaker.

``bench/fit_eval.py`` prints them; ``tests/unit/test_fit_eval.py`` asserts the targets.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from backend.domain.fit import FitLedger
from backend.domain.fit_reasons import top_reasons
from backend.domain.profile import CandidateProfile
from backend.pipeline.text import JobText

ROOT = Path(__file__).resolve().parent / "fixtures" / "fit_eval"
TODAY = date(2026, 12, 1)
THRESHOLD = 50  # Settings.min_fit_score's default
LABELS = ("good", "acceptable", "no")
GAIN = {"good": 2, "acceptable": 1, "no": 0}
DEAL_BREAKERS = frozenset(("line_of_work", "place", "remote_mode", "work_authorization", "licence",
                           "language", "internship", "level", "salary"))
DEFAULT_LABEL = {"label": "no", "reason": "another line of work", "dealBreaker": "line_of_work"}


@dataclass(frozen=True)
class Seeker:
    id: str
    line_of_work: str
    country: str
    profile: CandidateProfile


@dataclass(frozen=True)
class Posting:
    id: str
    line: str
    language: str
    job: JobText
    labels: dict[str, dict]


@dataclass(frozen=True)
class Pair:
    seeker: str
    posting: str
    title: str
    label: str
    reason: str
    deal_breaker: str | None
    score: int
    reasons: tuple[str, ...]

    @property
    def prepared(self) -> bool:
        return self.score >= THRESHOLD

    @property
    def wanted(self) -> bool:
        return self.label != "no"


@dataclass
class Report:
    pairs: list[Pair] = field(default_factory=list)

    def precision(self) -> float:
        prepared = [p for p in self.pairs if p.prepared]
        return sum(p.wanted for p in prepared) / len(prepared) if prepared else 1.0

    def recall(self) -> float:
        wanted = [p for p in self.pairs if p.wanted]
        return sum(p.prepared for p in wanted) / len(wanted) if wanted else 1.0

    def ndcg(self, k: int = 10) -> float:
        by_seeker: dict[str, list[Pair]] = {}
        for pair in self.pairs:
            by_seeker.setdefault(pair.seeker, []).append(pair)
        values = [_ndcg(pairs, k) for pairs in by_seeker.values()]
        return sum(values) / len(values) if values else 1.0

    def wrong(self) -> list[Pair]:
        return [p for p in self.pairs if p.prepared != p.wanted]

    def deal_breaker_leaks(self) -> list[Pair]:
        return [p for p in self.pairs if p.prepared and not p.wanted and p.deal_breaker in DEAL_BREAKERS]


def _ndcg(pairs: list[Pair], k: int) -> float:
    ranked = sorted(pairs, key=lambda p: (-p.score, p.posting))[:k]
    dcg = sum((2 ** GAIN[p.label] - 1) / math.log2(i + 2) for i, p in enumerate(ranked))
    ideal = sorted((GAIN[p.label] for p in pairs), reverse=True)[:k]
    best = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 1.0


def load_seekers(root: Path = ROOT) -> list[Seeker]:
    seekers = []
    for path in sorted((root / "seekers").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        seekers.append(Seeker(data["id"], data["lineOfWork"], data["country"],
                              CandidateProfile.model_validate(data["profile"])))
    return seekers


def load_postings(root: Path = ROOT) -> list[Posting]:
    postings = []
    for path in sorted((root / "postings").glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            salary = item.get("salary") or {}
            job = JobText(title=item["title"], company=item["company"], location=item.get("location"),
                          remote=item.get("remote"), description=item["description"],
                          salary_min=salary.get("min"), salary_max=salary.get("max"),
                          salary_currency=salary.get("currency"))
            postings.append(Posting(item["id"], path.stem, item.get("language", "en"), job,
                                    item.get("labels") or {}))
    return postings


def label_of(posting: Posting, seeker_id: str) -> dict:
    return posting.labels.get(seeker_id) or DEFAULT_LABEL


Scorer = Callable[[CandidateProfile, JobText], tuple[int, FitLedger | None]]


def evaluate(score: Scorer, seekers: list[Seeker] | None = None,
             postings: list[Posting] | None = None) -> Report:
    seekers = seekers if seekers is not None else load_seekers()
    postings = postings if postings is not None else load_postings()
    report = Report()
    for seeker in seekers:
        for posting in postings:
            value, ledger = score(seeker.profile, posting.job)
            label = label_of(posting, seeker.id)
            breaker = label.get("dealBreaker") if label["label"] == "no" else None
            reasons = tuple(top_reasons(ledger, 3)) if ledger is not None else ()
            report.pairs.append(Pair(seeker.id, posting.id, posting.job.title, label["label"],
                                     label.get("reason", ""), breaker, value, reasons))
    return report


def offline_scorer(profile: CandidateProfile, job: JobText) -> tuple[int, FitLedger | None]:
    from backend.pipeline.score import offline_score

    result = offline_score(profile, job, today=TODAY)
    return result.score, result.ledger
