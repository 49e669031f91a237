"""Field-by-field scoring of a parsed JSON Resume against a corpus file's ground truth.

The ground truth is ``tests/fixtures/resumes/<id>.truth.json`` (schema in that folder's
README). :func:`score_resume` compares every field the truth holds with what the parser
gave and returns a :class:`ScoreResult`: one :class:`FieldResult` per compared field
(expected vs got, for debugging), the work entries the parser made up (``invented``) and
the bullets it lost or doubled. Plain functions, no I/O; used by
``bench/resume_import_accuracy.py`` and ``tests/unit/test_resume_corpus.py``.

Rules:

- Text: Unicode NFKC, casefolded, whitespace collapsed, outer punctuation stripped
  (:func:`norm`). Nothing else is forgiven: a soft hyphen, a leftover bullet glyph or a
  date glued to a title is a miss.
- A truth string field may be a list of strings: any of them is right.
- A truth field that is ``null`` must be absent or empty in the parse (``endDate`` of a
  current job); a field the truth omits is not scored.
- Phone numbers compare their digits only; links compare without scheme, ``www.`` and
  trailing slash, found in ``basics.url`` or any ``basics.profiles[].url``.
- Work entries are paired one-to-one, best pair first: employer + title similarity
  (either field order, or the two glued), then shared bullets, then dates. A pair needs
  a similar heading, half the truth entry's bullets, or both its dates. A parsed entry
  paired with no truth entry is *invented*; a truth entry paired with nothing misses
  every field (a ``null`` end date too) and loses every bullet.
- Every truth bullet must be in its entry's ``highlights`` exactly once and nowhere
  else: absent from its entry is *lost* (even if it sits in another entry), more than
  once anywhere is *doubled*; both are misses.
- ``degree`` is compared with ``studyType`` and ``area`` joined by a space.
- Skills: the parse's keywords flattened across groups (a group without keywords counts
  with its name), each truth keyword looked up case-insensitively.
- Languages: each truth language by name; its fluency when the truth has one.
- Preferences: only when the truth has them and a ``preferences`` dict is passed.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

# Work/education entries whose heading similarity is under this are not the same entry,
# unless the bullets say they are (BULLET_PAIRING) or, for work, both dates do.
HEADING_PAIRING = 0.5
BULLET_PAIRING = 0.5
NO_MATCH = "no matching entry"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class FieldResult:
    field: str  # "basics.email", "work[1].startDate", "work[0].highlights[3]", "skills[SQL]"
    expected: Any
    got: Any
    hit: bool
    note: str = ""  # "lost", "doubled", "not found", "no matching entry"...

    def to_dict(self) -> dict:
        return {"field": self.field, "expected": self.expected, "got": self.got,
                "hit": self.hit, **({"note": self.note} if self.note else {})}

    def describe(self) -> str:
        note = f" [{self.note}]" if self.note else ""
        got = repr(self.got)
        got = got if len(got) <= 240 else got[:237] + "..."
        return f"{self.field}{note}: expected {self.expected!r}, got {got}"


@dataclass
class ScoreResult:
    fields: list[FieldResult] = field(default_factory=list)
    invented: list[dict] = field(default_factory=list)  # parsed work entries no truth entry matched
    bullets_lost: int = 0
    bullets_doubled: int = 0
    extra_bullets: int = 0  # parsed bullets of matched entries that are no truth bullet (info)
    extra_skills: list[str] = field(default_factory=list)  # parsed keywords not in the truth (info)
    work_pairs: list[tuple[int, int]] = field(default_factory=list)  # (truth index, parsed index)

    @property
    def hits(self) -> int:
        return sum(1 for f in self.fields if f.hit)

    @property
    def total(self) -> int:
        return len(self.fields)

    @property
    def accuracy(self) -> float:
        return self.hits / self.total if self.total else 1.0

    @property
    def invented_count(self) -> int:
        return len(self.invented)

    @property
    def misses(self) -> list[FieldResult]:
        return [f for f in self.fields if not f.hit]

    def by_group(self) -> dict[str, tuple[int, int]]:
        """(hits, total) per field group: basics.email, work.position, work.highlights..."""
        groups: dict[str, list[int]] = {}
        for f in self.fields:
            counts = groups.setdefault(field_group(f.field), [0, 0])
            counts[0] += f.hit
            counts[1] += 1
        return {name: (hits, total) for name, (hits, total) in groups.items()}

    def to_dict(self, *, with_hits: bool = False) -> dict:
        return {
            "hits": self.hits,
            "total": self.total,
            "accuracy": self.accuracy,
            "invented_work_entries": self.invented_count,
            "invented": self.invented,
            "bullets_lost": self.bullets_lost,
            "bullets_doubled": self.bullets_doubled,
            "extra_bullets": self.extra_bullets,
            "extra_skills": self.extra_skills,
            "groups": {k: {"hits": h, "total": t} for k, (h, t) in self.by_group().items()},
            "misses": [f.to_dict() for f in self.misses],
            **({"fields": [f.to_dict() for f in self.fields]} if with_hits else {}),
        }

    def report(self) -> str:
        """Every miss on its own line (what a failing test prints)."""
        lines = [f"{self.hits}/{self.total} fields ({self.accuracy:.1%}), "
                 f"{self.invented_count} invented work entries, "
                 f"{self.bullets_lost} bullets lost, {self.bullets_doubled} doubled"]
        lines += [f"  MISS {f.describe()}" for f in self.misses]
        lines += [f"  INVENTED work entry: {_short(entry)}" for entry in self.invented]
        return "\n".join(lines)


def field_group(name: str) -> str:
    """"work[2].highlights[0]" → "work.highlights"; "skills[SQL]" → "skills"."""
    return re.sub(r"\[[^\]]*\]", "", name)


# --------------------------------------------------------------------------- text


def norm(value: Any) -> str:
    """NFKC, casefold, whitespace collapsed, outer punctuation stripped."""
    if value is None:
        return ""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    text = " ".join(text.split())
    start, end = 0, len(text)
    while start < end and _outer(text[start]):
        start += 1
    while end > start and _outer(text[end - 1]):
        end -= 1
    return text[start:end]


def _outer(char: str) -> bool:
    return char.isspace() or unicodedata.category(char).startswith("P")


def digits(value: Any) -> str:
    return "".join(ch for ch in str(value or "") if ch.isdigit())


def norm_url(value: Any) -> str:
    """Without scheme, ``www.``, trailing slash; casefolded."""
    text = norm(value)
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text)
    text = text.removeprefix("www.")
    return text.rstrip("/")


def alternatives(expected: Any) -> list[Any]:
    return list(expected) if isinstance(expected, list) else [expected]


def _same(expected: Any, got: Any, key=norm) -> bool:
    """Any of the truth's alternatives equals ``got``; ``None`` expects nothing."""
    if expected is None:
        return key(got) == ""
    got_key = key(got)
    return got_key != "" and any(key(option) == got_key for option in alternatives(expected))


def similarity(expected: Any, got: Any) -> float:
    """Best SequenceMatcher ratio of ``got`` against any alternative (0 when either is empty)."""
    got_text = norm(got)
    best = 0.0
    for option in alternatives(expected):
        option_text = norm(option)
        if option_text and got_text:
            best = max(best, SequenceMatcher(None, option_text, got_text, autojunk=False).ratio())
    return best


def _short(entry: dict) -> str:
    parts = [f"{key}={entry.get(key)!r}" for key in ("name", "position", "startDate", "endDate")
             if entry.get(key)]
    if entry.get("highlights"):
        parts.append(f"{len(entry['highlights'])} bullets, first {entry['highlights'][0][:60]!r}")
    return ", ".join(parts) or "(empty entry)"


# --------------------------------------------------------------------------- scoring


def score_resume(truth: dict, parsed: dict, *, preferences: dict | None = None,
                 bullet_mode: str = "exact") -> ScoreResult:
    """Score ``parsed`` (a JSON Resume dict, as ``JsonResume.export()``) against ``truth``.

    ``bullet_mode="contained"`` is a lenient reading for parsers that join an entry's
    bullets into one text: a truth bullet counts when its text occurs exactly once in
    the entry's highlights joined by spaces. The corpus targets use ``"exact"``.
    """
    if bullet_mode not in ("exact", "contained"):
        raise ValueError(f"bullet_mode {bullet_mode!r}")
    result = ScoreResult()
    _score_basics(result, truth.get("basics") or {}, parsed.get("basics") or {})
    _score_work(result, truth.get("work") or [], parsed.get("work") or [], bullet_mode)
    _score_education(result, truth.get("education") or [], parsed.get("education") or [])
    _score_skills(result, truth.get("skills") or [], parsed.get("skills") or [])
    _score_languages(result, truth.get("languages") or [], parsed.get("languages") or [])
    if truth.get("preferences") and preferences is not None:
        _score_preferences(result, truth["preferences"], preferences)
    return result


def _check(result: ScoreResult, name: str, expected: Any, got: Any, key=norm, note: str = "") -> None:
    """``note="no matching entry"``: the truth entry has no parsed entry, so even a field
    the truth wants empty (``endDate: null``) is a miss."""
    hit = _same(expected, got, key) and note != NO_MATCH
    result.fields.append(FieldResult(name, expected, got, hit, note))


def _score_basics(result: ScoreResult, truth: dict, parsed: dict) -> None:
    for key in ("name", "email"):
        if key in truth:
            _check(result, f"basics.{key}", truth[key], parsed.get(key))
    if "phone" in truth:
        _check(result, "basics.phone", truth["phone"], parsed.get("phone"), key=digits)
    urls = [parsed.get("url")] + [p.get("url") for p in parsed.get("profiles") or [] if isinstance(p, dict)]
    urls = [u for u in urls if u]
    found = {norm_url(u) for u in urls}
    for link in truth.get("links") or []:
        hit = any(norm_url(option) in found for option in alternatives(link))
        result.fields.append(FieldResult(f"basics.links[{alternatives(link)[0]}]", link, urls, hit,
                                         "" if hit else "not found"))
    location_truth = truth.get("location") or {}
    location = parsed.get("location") or {}
    for key in ("city", "region", "countryCode"):
        if key in location_truth:
            _check(result, f"basics.location.{key}", location_truth[key], location.get(key))


def _pair(truth_entries: list[dict], parsed_entries: list[dict], score) -> list[tuple[int, int]]:
    """One-to-one pairs, best score first; ``score`` returns None when a pair is impossible."""
    candidates = []
    for t_index, t_entry in enumerate(truth_entries):
        for p_index, p_entry in enumerate(parsed_entries):
            value = score(t_entry, p_entry)
            if value is not None:
                candidates.append((value, -t_index, -p_index, t_index, p_index))
    candidates.sort(reverse=True)
    used_t: set[int] = set()
    used_p: set[int] = set()
    pairs = []
    for _, _, _, t_index, p_index in candidates:
        if t_index not in used_t and p_index not in used_p:
            used_t.add(t_index)
            used_p.add(p_index)
            pairs.append((t_index, p_index))
    return sorted(pairs)


def _heading_similarity(truth_a: Any, truth_b: Any, got_a: Any, got_b: Any) -> float:
    """Similarity of (employer, title) pairs: field by field, or the two joined in
    either order (a parser that swaps or glues them still pairs with the right entry)."""
    present = [(t, g) for t, g in ((truth_a, got_a), (truth_b, got_b)) if t]
    if not present:
        return 0.0
    straight = sum(similarity(t, g) for t, g in present) / len(present)
    truths = [norm(alternatives(t)[0]) for t, _ in present]
    truth_joined = [" ".join(truths), " ".join(reversed(truths))]
    got_joined = " ".join(norm(g) for g in (got_a, got_b) if norm(g))
    return max(straight, similarity(truth_joined, got_joined))


def _bullet_overlap(truth_bullets: list[str], got_bullets: list[str]) -> float:
    if not truth_bullets:
        return 0.0
    got = {norm(b) for b in got_bullets}
    return sum(1 for b in truth_bullets if norm(b) in got) / len(truth_bullets)


def _work_pair_score(truth: dict, parsed: dict) -> float | None:
    heading = _heading_similarity(truth.get("name"), truth.get("position"),
                                  parsed.get("name"), parsed.get("position"))
    bullets = _bullet_overlap(truth.get("highlights") or [], parsed.get("highlights") or [])
    start = bool(truth.get("startDate")) and _same(truth.get("startDate"), parsed.get("startDate"))
    both_dates = start and "endDate" in truth and _same(truth["endDate"], parsed.get("endDate"))
    if heading < HEADING_PAIRING and bullets < BULLET_PAIRING and not both_dates:
        return None
    return heading + 0.25 * bullets + (0.2 if both_dates else 0.05 if start else 0)


def _score_work(result: ScoreResult, truth: list[dict], parsed: list[dict], bullet_mode: str) -> None:
    pairs = _pair(truth, parsed, _work_pair_score)
    result.work_pairs = pairs
    paired = dict(pairs)
    matched_parsed = set(paired.values())
    result.invented = [entry for index, entry in enumerate(parsed) if index not in matched_parsed]

    # How often each bullet text occurs in every parsed entry (exact mode), or each
    # entry's joined bullet text (contained mode).
    per_entry_bullets = [[norm(b) for b in entry.get("highlights") or []] for entry in parsed]
    joined = [" ".join(bullets) for bullets in per_entry_bullets]

    def occurrences(text: str, index: int) -> int:
        if bullet_mode == "exact":
            return per_entry_bullets[index].count(text)
        if not text:
            return 0
        return len(re.findall(rf"(?<!\w){re.escape(text)}(?!\w)", joined[index]))

    for t_index, entry in enumerate(truth):
        p_index = paired.get(t_index)
        got = parsed[p_index] if p_index is not None else {}
        prefix = f"work[{t_index}]"
        note = "" if p_index is not None else NO_MATCH
        for key in ("name", "position", "location", "startDate", "endDate"):
            if key in entry:
                _check(result, f"{prefix}.{key}", entry[key], got.get(key), note=note)
        bullets = entry.get("highlights") or []
        wanted = Counter(norm(b) for b in bullets)
        first_text = {}
        for b in bullets:
            first_text.setdefault(norm(b), b)
        for b_index, (text, count) in enumerate(wanted.items()):
            here = occurrences(text, p_index) if p_index is not None else 0
            elsewhere = sum(occurrences(text, i) for i in range(len(parsed)) if i != p_index)
            name = f"{prefix}.highlights[{b_index}]"
            expected = first_text[text]
            if here > count or (here and elsewhere):
                result.bullets_doubled += count
                where = [i for i in range(len(parsed)) if occurrences(text, i)]
                for _ in range(count):
                    result.fields.append(FieldResult(name, expected, f"{here + elsewhere}x in work{where}",
                                                     False, "doubled"))
                continue
            for _ in range(here):
                result.fields.append(FieldResult(name, expected, expected, True))
            if here < count:
                result.bullets_lost += count - here
                if elsewhere:
                    where = [i for i in range(len(parsed)) if occurrences(text, i)]
                    got_text = f"in another entry: work{where}"
                else:
                    got_text = _closest(text, got.get("highlights") or [])
                for _ in range(count - here):
                    result.fields.append(FieldResult(name, expected, got_text, False, "lost"))
        if p_index is not None and bullet_mode == "exact":
            result.extra_bullets += sum(1 for b in per_entry_bullets[p_index] if b not in wanted)


def _closest(text: str, candidates: list[str]) -> str | None:
    """The parsed bullet most like a lost one (what the debugging output shows as got)."""
    best, best_ratio = None, 0.4
    for candidate in candidates:
        ratio = SequenceMatcher(None, text, norm(candidate), autojunk=False).ratio()
        if ratio > best_ratio:
            best, best_ratio = candidate, ratio
    return best


def parsed_degree(entry: dict) -> str:
    return " ".join(part for part in (entry.get("studyType"), entry.get("area")) if part)


def _degree_as_written(truth: Any, entry: dict) -> str | None:
    """studyType and area joined; "BSc in Nursing" is read as studyType "BSc" and area
    "Nursing", so the connecting word the file had counts as written."""
    joined = parsed_degree(entry) or None
    if joined is None or not entry.get("studyType") or not entry.get("area"):
        return joined
    for connector in ("in", "of", "-", "–", ","):
        spelled = f"{entry['studyType']} {connector} {entry['area']}".replace(" ,", ",")
        if _same(truth, spelled):
            return spelled
    return joined


def _education_pair_score(truth: dict, parsed: dict) -> float | None:
    heading = _heading_similarity(truth.get("institution"), truth.get("degree"),
                                  parsed.get("institution"), parsed_degree(parsed))
    if heading < HEADING_PAIRING:
        return None
    end = 0.05 if truth.get("endDate") and _same(truth.get("endDate"), parsed.get("endDate")) else 0
    return heading + end


def _score_education(result: ScoreResult, truth: list[dict], parsed: list[dict]) -> None:
    paired = dict(_pair(truth, parsed, _education_pair_score))
    for t_index, entry in enumerate(truth):
        p_index = paired.get(t_index)
        got = dict(parsed[p_index]) if p_index is not None else {}
        got["degree"] = _degree_as_written(entry.get("degree"), got)
        note = "" if p_index is not None else NO_MATCH
        for key in ("institution", "degree", "startDate", "endDate"):
            if key in entry:
                _check(result, f"education[{t_index}].{key}", entry[key], got.get(key), note=note)


def parsed_skills(groups: list[dict]) -> list[str]:
    names: list[str] = []
    for group in groups:
        if not isinstance(group, dict):
            continue
        keywords = [k for k in group.get("keywords") or [] if isinstance(k, str)]
        names.extend(keywords or ([group["name"]] if group.get("name") else []))
    return names


def _score_skills(result: ScoreResult, truth: list, parsed: list[dict]) -> None:
    names = parsed_skills(parsed)
    found = {norm(n) for n in names}
    wanted: set[str] = set()
    for skill in truth:
        options = alternatives(skill)
        wanted.update(norm(o) for o in options)
        hit = any(norm(o) in found for o in options)
        result.fields.append(FieldResult(f"skills[{options[0]}]", skill, None if not hit else options[0],
                                         hit, "" if hit else "not found"))
    result.extra_skills = [n for n in names if norm(n) not in wanted]


def _score_languages(result: ScoreResult, truth: list[dict], parsed: list[dict]) -> None:
    entries = [p for p in parsed if isinstance(p, dict)]
    got_names = [p.get("language") for p in entries]
    for entry in truth:
        language = entry.get("language")
        label = alternatives(language)[0]
        match = next((p for p in entries if _same(language, p.get("language"))), None)
        result.fields.append(FieldResult(f"languages[{label}]", language,
                                         match.get("language") if match else got_names, match is not None,
                                         "" if match else "not found"))
        if entry.get("fluency") is not None:
            _check(result, f"languages[{label}].fluency", entry["fluency"],
                   match.get("fluency") if match else None)


LIST_PREFERENCES = ("targetTitles", "locations")  # every item must be there; other keys are single


def draft_preferences(import_result: Any) -> dict | None:
    """The preferences the import's draft suggests, in the truth's keys (``remote``,
    ``salaryFloor``, ``salaryCurrency``, ``targetTitles``, ``locations``); ``None`` when
    this version of the import offers none."""
    try:
        from backend.profile_import.draft import suggested_preferences
    except ImportError:
        return None
    suggested = suggested_preferences(import_result).model_dump(by_alias=True)
    return {"remote": suggested.get("remotePreference"), "salaryFloor": suggested.get("salaryFloor"),
            "salaryCurrency": suggested.get("salaryCurrency"),
            "targetTitles": suggested.get("targetTitles") or [],
            "locations": suggested.get("locations") or []}


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _score_preferences(result: ScoreResult, truth: dict, parsed: dict) -> None:
    for key, expected in truth.items():
        got = parsed.get(key)
        name = f"preferences.{key}"
        if key in LIST_PREFERENCES:
            found = {norm(g) for g in (got or [])} if isinstance(got, list) else {norm(got)}
            for item in expected:
                options = alternatives(item)
                hit = any(norm(o) in found for o in options)
                result.fields.append(FieldResult(f"{name}[{options[0]}]", item, got, hit))
        elif isinstance(expected, int | float) and not isinstance(expected, bool):
            hit = _number(got) is not None and abs(_number(got) - float(expected)) < 0.5
            result.fields.append(FieldResult(name, expected, got, hit))
        else:
            _check(result, name, expected, got)
