"""The profile's evidence for each posting requirement: the work entry, skill, language
or degree that proves it — or why it is missing or unknown, in the job seeker's words.

``ProfileFacts`` reads the profile once (skills by canonical name, the work entries that
name each skill, years per title family, languages, degrees); the matchers turn one
posting need into one ``Requirement``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import cache, cached_property, lru_cache

from backend.domain.fit import Importance, Requirement
from backend.domain.profile import CandidateProfile
from backend.domain.resume import WorkEntry
from backend.domain.spoken_languages import english_name
from backend.pipeline.fit.places import place_covered
from backend.pipeline.fit.requirements import (
    AuthorizationNeed,
    DegreeNeed,
    LanguageNeed,
    LicenceNeed,
    ManagementNeed,
    YearsNeed,
)
from backend.pipeline.fit.synonyms import skill_index
from backend.pipeline.fit.titles import (
    family_distance,
    family_name,
    level_from_years,
    level_label,
    title_family,
    title_level,
)
from backend.pipeline.text import contains_term, human_list, normalize, title_similarity

CEFR = {"a1": 1, "a2": 2, "b1": 3, "b2": 4, "c1": 5, "c2": 6}
CEFR_NAMES = {1: "A1", 2: "A2", 3: "B1", 4: "B2", 5: "C1", 6: "C2", 7: "native"}
_FLUENCY_WORDS = (
    (7, r"native|mother tongue|first language|muttersprach|langue maternelle|natif|native|nativ[oa]"
        r"|lengua materna"),
    (6, r"bilingual|bilingue|bilingüe|zweisprachig"),
    (5, r"fluent|full professional|c1|verhandlungssicher|fließend|courant|avanzado|fluido"),
    (4, r"professional working|upper intermediate|sehr gut|bon niveau|intermedio alto"),
    (3, r"intermediate|limited working|conversational|intermédiaire|intermedio|gute kenntnisse"),
    (2, r"elementary|basic|grundkenntnisse|notions|básico"),
    (1, r"beginner|débutant|principiante|anfänger"))
_FLUENCY = tuple((level, re.compile(pattern, re.I)) for level, pattern in _FLUENCY_WORDS)
_CEFR_CODE = re.compile(r"\b([abc][12])\b", re.I)


def fluency_level(fluency: str | None) -> int | None:
    """A résumé's fluency ("C1", "Native speaker", "Professional working proficiency") as a
    rank: A1 1 … C2 6, native 7; None when it says nothing we can read."""
    if not fluency:
        return None
    code = _CEFR_CODE.search(fluency)
    if code:
        return CEFR[code.group(1).lower()]
    return next((level for level, pattern in _FLUENCY if pattern.search(fluency)), None)


def _month(text: str | None) -> int | None:
    """A JSON Resume date (2021, 2021-04, 2021-04-01) as a month number since year 0."""
    if not text or len(text) < 4 or not text[:4].isdigit():
        return None
    month = int(text[5:7]) if len(text) >= 7 and text[5:7].isdigit() else 1
    return int(text[:4]) * 12 + month - 1


def _span(entry: WorkEntry, today: date) -> tuple[int, int] | None:
    start = _month(entry.start_date)
    if start is None:
        return None
    end = _month(entry.end_date) if entry.end_date else today.year * 12 + today.month - 1
    return (start, max(start, end or start) + 1)


def years_of(spans: list[tuple[int, int]]) -> float:
    """Years covered by the spans, overlaps counted once (two jobs at once are not two years)."""
    total, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total, reach = total + end - start, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total / 12


@dataclass
class ProfileFacts:
    """What the matchers need from the profile, read once per score."""

    profile: CandidateProfile
    today: date
    skills: dict[str, str] = field(default_factory=dict)
    """Canonical lower-case name → the skill as the résumé spells it."""
    entry_texts: list[tuple[WorkEntry, str]] = field(default_factory=list)
    entry_skills: list[tuple[WorkEntry, list[str]]] = field(default_factory=list)
    """Each work entry (résumé order, newest first by convention) and the skills it names."""
    spans: list[tuple[WorkEntry, tuple[int, int]]] = field(default_factory=list)
    target_families: list[tuple[str, str]] = field(default_factory=list)
    """(target title or position, its family)."""
    latest: WorkEntry | None = None

    @classmethod
    def read(cls, profile: CandidateProfile, today: date) -> ProfileFacts:
        index = skill_index()
        facts = cls(profile, today)
        for skill in profile.all_skills():
            facts.skills.setdefault(index.canonical_name(skill).lower(), skill)
            for named in index.find(skill):  # "Excel / Google Sheets" lists both
                facts.skills.setdefault(named.lower(), skill)
        for entry in profile.resume.work:
            text = " ".join(filter(None, (entry.position, entry.summary, *entry.highlights)))
            facts.entry_texts.append((entry, text))
            facts.entry_skills.append((entry, index.find(text)))
            span = _span(entry, today)
            if span is not None:
                facts.spans.append((entry, span))
        titles = profile.target_titles or [e.position for e in profile.resume.work[:2] if e.position]
        facts.target_families = [(t, f) for t in titles if (f := title_family(t))]
        dated = sorted(facts.spans, key=lambda item: item[1][1], reverse=True)
        facts.latest = dated[0][0] if dated else (profile.resume.work[0] if profile.resume.work else None)
        return facts

    def years(self, family: str | None) -> tuple[float, list[WorkEntry]]:
        """Years in roles of ``family`` (or its neighbours); every role when None."""
        chosen = [(entry, span) for entry, span in self.spans
                  if family is None or _entry_distance(entry, family) <= 1]
        return years_of([span for _, span in chosen]), [entry for entry, _ in chosen]

    @cached_property
    def credentials(self) -> tuple[str, frozenset[str]]:
        """The résumé's credential text and the initials in it, read once per profile."""
        text = _credential_text(self.profile)
        return text, frozenset(_initials(text))

    @cached_property
    def title_words(self) -> frozenset[str]:
        """The words of the work in the seeker's targets and past titles."""
        held = (*self.profile.target_titles, *(e.position for e in self.profile.resume.work if e.position))
        words = {word.lower() for title in held for word in _TITLE_WORD.findall(title)}
        return frozenset(words - _NOT_WORK_WORDS)

    def level(self) -> tuple[int, str] | None:
        """The candidate's level and what shows it (the latest role's title, else years)."""
        if self.latest is not None and self.latest.position:
            level = title_level(self.latest.position)
            if level is not None:
                return level, self.latest.heading()
        if self.spans:
            total, _ = self.years(None)
            return level_from_years(total), f"{total:.0f} years of work experience"
        return None


_FACTS_CACHE: dict[tuple[int, date], tuple[CandidateProfile, ProfileFacts]] = {}
_FACTS_CACHE_SIZE = 8


def profile_facts(profile: CandidateProfile, today: date) -> ProfileFacts:
    """``ProfileFacts.read``, reused while one profile object scores a batch of postings.

    Keyed by the object itself (its id, checked by identity): a profile is a frozen model
    and a saved revision is a new object, so a hit is always the same profile."""
    key = (id(profile), today)
    hit = _FACTS_CACHE.get(key)
    if hit is not None and hit[0] is profile:
        return hit[1]
    facts = ProfileFacts.read(profile, today)
    if len(_FACTS_CACHE) >= _FACTS_CACHE_SIZE:
        _FACTS_CACHE.clear()
    _FACTS_CACHE[key] = (profile, facts)
    return facts


def _entry_distance(entry: WorkEntry, family: str) -> int:
    mine = title_family(entry.position or "")
    return 3 if mine is None else family_distance(mine, family)


def requirement(kind: str, label: str, importance: Importance, status: str, *,
                evidence: str | None = None, detail: str | None = None,
                deal_breaker: bool = False) -> Requirement:
    """One ledger line; long evidence and details are cut to the ledger's limits."""
    return Requirement(kind=kind, label=label[:200], importance=importance, status=status,
                       evidence=evidence[:300] if evidence else None,
                       detail=detail[:300] if detail else None, deal_breaker=deal_breaker)


# --------------------------------------------------------------------------- skills


def skill_requirement(facts: ProfileFacts, name: str, importance: Importance) -> Requirement:
    """A skill is proven by the most recent work entry that names it, else by the skills
    list; a skill that is only listed is still met (the résumé claims it)."""
    entry = next((entry for entry, skills in facts.entry_skills if name in skills), None)
    if entry is not None:
        return requirement("skill", name, importance, "met", evidence=entry.heading())
    listed = facts.skills.get(name.lower())
    if listed:
        return requirement("skill", name, importance, "met", evidence=f"Skills: {listed}")
    own = own_words(facts.profile, name)
    if own:
        return requirement("skill", name, importance, "met", evidence=f"Your own words: {own}")
    return requirement("skill", name, importance, "missing", detail="Not in your skills or work history")


# English suffixes that turn one field's word into another's ("analytics", "analyst",
# "analysis"; "nursing", "nurse"; "marketing", "marketer").
_SUFFIXES = ("ytics", "ysis", "yst", "ics", "ing", "ist", "ers", "er", "e", "s")


@lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=64)  # one entry per profile (its titles), reused for every posting
def _title_stems(phrases: tuple[str, ...]) -> dict[str, str]:
    """Stem → the first of ``phrases`` that has a word with it."""
    out: dict[str, str] = {}
    for phrase in phrases:
        for word in re.findall(r"[a-z]+", phrase.lower()):
            out.setdefault(_stem(word), phrase)
    return out


def own_words(profile: CandidateProfile, skill: str) -> str | None:
    """The headline, target title or job title in which the job seeker names a one-word
    skill in another form ("Analytics" in "Data Analyst")."""
    phrases = (profile.resume.basics.label, *profile.target_titles,
               *(w.position for w in profile.resume.work))
    return word_form_in(skill, tuple(p for p in phrases if p))


def word_form_in(skill: str, phrases: tuple[str, ...]) -> str | None:
    """The first of ``phrases`` that names a one-word skill in another form ("Analytics"
    in "Data Analyst")."""
    if " " in skill.strip() or len(skill) < 6:
        return None
    wanted = _stem(skill.lower())
    if wanted == skill.lower():
        return None  # no suffix: nothing to compare but the word itself
    return _title_stems(phrases).get(wanted)


def phrase_requirement(facts: ProfileFacts, phrase: str, importance: Importance) -> Requirement:
    """A named ability outside the synonym list, matched word for word."""
    for entry, text in facts.entry_texts:
        if contains_term(normalize(text), phrase):
            return requirement("skill", phrase, importance, "met", evidence=entry.heading())
    if any(contains_term(normalize(skill), phrase) for skill in facts.skills.values()):
        return requirement("skill", phrase, importance, "met", evidence=f"Skills: {phrase}")
    return requirement("skill", phrase, importance, "missing", detail="Not in your skills or work history")


# --------------------------------------------------------------------------- title and level


def title_requirement(facts: ProfileFacts, title: str, family: str | None) -> Requirement:
    """The posting's line of work against the targets. Another line of work altogether
    (sales for a backend engineer) is a deal-breaker."""
    targets = facts.target_families
    if family is None or not targets:
        best = max(facts.profile.target_titles, key=lambda t: title_similarity(t, title), default=None)
        if best and title_similarity(best, title) >= 0.5 and _same_head(best, title):
            return requirement("title", title, "must", "met", evidence=f"Target title: {best}")
        if _shares_a_word(facts, title):
            return requirement("title", title, "must", "unknown",
                               detail="Cannot tell how this title relates to your targets")
        return requirement("title", title, "must", "missing",
                           detail="Not a title you target or have held")
    # The nearest target; among equals the same title, else the one sharing most words.
    target, target_family = min(targets, key=lambda t: (family_distance(t[1], family),
                                                       normalize(t[0]) != normalize(title),
                                                       -title_similarity(t[0], title)))
    distance = family_distance(target_family, family)
    role = f"{_article(family_name(family)).capitalize()} role"
    if distance == 0:
        entry = next((e for e, _ in facts.entry_texts if _entry_distance(e, family) == 0), None)
        evidence = f"Target title: {target}" + (f"; {entry.heading()}" if entry else "")
        return requirement("title", title, "must", "met", evidence=evidence)
    if distance == 1:
        return requirement("title", title, "must", "unknown",
                           detail=f"{role}, next to your target {target}")
    nearest_first = sorted(targets, key=lambda t: family_distance(t[1], family))
    targets_text = human_list([t for t, _ in nearest_first[:3]])
    if distance == 2:
        return requirement("title", title, "must", "missing",
                           detail=f"{role}, not your target ({targets_text})")
    return requirement("title", title, "must", "missing", deal_breaker=True,
                       detail=f"{role}, far from your targets ({targets_text})")


def _article(name: str) -> str:
    """"a nursing", "an HR", "an engineering": the article as the words are spoken."""
    spoken_vowel = (name[:2].isupper() and name[0] in "AEFHILMNORSX") or name[0].lower() in "aeiou"
    return f"{'an' if spoken_vowel else 'a'} {name}"


def _same_head(target: str, title: str) -> bool:
    """Whether the title ends in the noun the target ends in ("Product Analyst" and
    "Junior Product Analyst", not "Head of Product")."""
    head = _TITLE_WORD.findall(target.lower())[-1:]
    return bool(head) and head[0] in {w.lower() for w in _TITLE_WORD.findall(title)}


_TITLE_WORD = re.compile(r"[^\W\d_]{3,}")
# Words that say how senior or how employed, not what the work is.
_NOT_WORK_WORDS = frozenset(("senior", "junior", "lead", "principal", "staff", "head", "chief", "and",
                             "the", "for", "with", "intern", "trainee", "remote", "hybrid", "contract"))


def _shares_a_word(facts: ProfileFacts, title: str) -> bool:
    """Whether the title shares a word of the work with a target or a job the seeker has held."""
    return any(word.lower() in facts.title_words for word in _TITLE_WORD.findall(title))


def _level_words(level: int) -> str:
    """"senior level", "mid-level" (not "mid-level level")."""
    name = level_label(level)
    return name if name.endswith("level") else f"{name} level"


def seniority_requirement(facts: ProfileFacts, level: int) -> Requirement | None:
    """The posting's level against the candidate's: one level either way fits; a junior
    role for a staff engineer does not (two or more levels apart is a deal-breaker)."""
    label = f"{level_label(level).capitalize()} level"
    wanted = [lvl for t in facts.profile.target_titles if (lvl := title_level(t)) is not None]
    if wanted and min(wanted) <= level <= max(wanted):
        target = next(t for t in facts.profile.target_titles if title_level(t) == level) \
            if level in wanted else facts.profile.target_titles[0]
        return requirement("seniority", label, "must", "met", evidence=f"Target title: {target}")
    mine = facts.level()
    if mine is None:
        return requirement("seniority", label, "must", "unknown",
                           detail="Your work history has no titles or dates")
    my_level, shown_by = mine
    gap = level - my_level
    if abs(gap) <= 1:
        return requirement("seniority", label, "must", "met", evidence=shown_by)
    # A level read from years, not from a title, is a guess: two levels *below* it is a
    # step back some take ("Junior Sous Chef" for a sous chef of twelve years); above it,
    # or three levels off, rules the job out.
    titled = facts.latest is not None and title_level(facts.latest.position or "") is not None
    if gap < 0:
        detail = f"You are at {_level_words(my_level)}: {shown_by}"
    else:
        detail = f"Your most senior role so far is at {_level_words(my_level)}: {shown_by}"
    return requirement("seniority", label, "must", "missing", detail=detail,
                       deal_breaker=titled or gap > 0 or abs(gap) >= 3)


def years_requirement(facts: ProfileFacts, need: YearsNeed, posting_family: str | None) -> Requirement:
    family = title_family(need.domain, by_head=False) if need.domain else None
    family = family or posting_family
    label = f"{need.years}+ years" + (f" of {need.domain}" if need.domain else " of experience")
    if not facts.spans:
        return requirement("experience_years", label, need.importance, "unknown",
                           detail="Your work entries have no dates")
    years, entries = facts.years(family)
    where = f"in {family_name(family)} roles" if family else "of work experience"
    if years + 0.25 >= need.years:  # "5+ years" is met by 4 years and 10 months of work
        shown = human_list([e.heading() for e in entries[:3]])
        return requirement("experience_years", label, need.importance, "met",
                           evidence=f"{years:.0f} years {where}: {shown}")
    total, _ = facts.years(None)
    detail = f"You have {years:.0f} years {where}"
    if family and total > years:
        detail += f" ({total:.0f} in total)"
    return requirement("experience_years", label, need.importance, "missing", detail=detail)


# --------------------------------------------------------------------------- language, degree


def language_requirement(facts: ProfileFacts, need: LanguageNeed) -> Requirement:
    wanted = CEFR_NAMES[need.level]
    label = f"{need.language} ({'native' if need.level == 7 else f'{wanted}+'})"
    listed = facts.profile.resume.languages
    if not listed:
        return requirement("language", label, need.importance, "unknown",
                           detail="Your profile lists no languages")
    for entry in listed:
        name = (entry.language or "").strip()
        if (english_name(name) or name).lower() != need.language.lower():
            continue
        level = fluency_level(entry.fluency)
        shown = f"{entry.language} ({entry.fluency})" if entry.fluency else entry.language
        if level is None:
            return requirement("language", label, need.importance, "unknown",
                               detail=f"You list {entry.language} without a level")
        if level >= need.level:
            return requirement("language", label, need.importance, "met", evidence=f"Languages: {shown}")
        # Two levels short (B2 for a native-level job) rules the job out; one is a stretch.
        return requirement("language", label, need.importance, "missing",
                           deal_breaker=_rules_out(need) and need.level - level >= 2,
                           detail=f"You list {shown}; they ask for {wanted}")
    yours = human_list([f"{e.language} ({e.fluency})" if e.fluency else e.language or "" for e in listed])
    return requirement("language", label, need.importance, "missing", deal_breaker=_rules_out(need),
                       detail=f"Your languages: {yours}")


def _rules_out(need: LanguageNeed) -> bool:
    """A must-have language is a deal-breaker, unless another language would do instead."""
    return need.importance == "must" and not need.either


_DEGREE_LEVELS = ((3, r"ph\.?\s?d|doctor|promotion"),
                  (2, r"master|máster|m\.?sc|\bms\b|\bma\b|mba|m\.?eng|diplom\b|diplom-|dscg|bac\s?\+\s?5"),
                  (1, r"bachelor|b\.?sc|\bbs\b|\bba\b|b\.?eng|b\.?a\.|b\.?s\.|grado|licence|dcg"
                      r"|bac\s?\+\s?3"))
_DEGREE_LEVEL = tuple((level, re.compile(pattern, re.I)) for level, pattern in _DEGREE_LEVELS)
DEGREE_NAMES = {1: "Bachelor's", 2: "Master's", 3: "PhD"}


def degree_requirement(facts: ProfileFacts, need: DegreeNeed) -> Requirement:
    label = DEGREE_NAMES[need.level] + (f" in {need.field}" if need.field else " degree")
    education = facts.profile.resume.education
    if not education:
        return requirement("degree", label, need.importance, "unknown",
                           detail="Your profile lists no education")
    for entry in education:
        level = next((lvl for lvl, p in _DEGREE_LEVEL if p.search(entry.study_type or "")), 1)
        shown = ", ".join(filter(None, (" ".join(filter(None, (entry.study_type, entry.area))),
                                        entry.institution)))
        if level < need.level:
            continue
        field_fits = (not need.field or need.or_equivalent
                      or bool(set(normalize(need.field).split()) & set(normalize(entry.area or "").split())))
        if field_fits:
            return requirement("degree", label, need.importance, "met", evidence=shown)
        return requirement("degree", label, need.importance, "unknown",
                           detail=f"Your degree is in {entry.area or 'another field'}")
    return requirement("degree", label, need.importance, "missing", deal_breaker=need.essential,
                       detail="Your education does not list this degree")


def authorization_requirement(facts: ProfileFacts, need: AuthorizationNeed,
                              country: str | None) -> Requirement:
    place = need.place or country
    label = f"Authorized to work in {place}" if place else "Work authorization"
    if need.no_sponsorship:
        label += " (no visa sponsorship)"
    mine = facts.profile.work_authorization
    if not mine:
        return requirement("work_authorization", label, "must", "unknown",
                           detail="Work authorization — not stated in your profile")
    if place is None:
        return requirement("work_authorization", label, "must", "unknown",
                           detail="The posting does not say where")
    if place_covered(place, mine):
        return requirement("work_authorization", label, "must", "met",
                           evidence=f"Work authorization: {human_list(mine)}")
    return requirement("work_authorization", label, "must", "missing",
                       detail=f"You are authorized in {human_list(mine)}")


# --------------------------------------------------------------------------- salary


def _money(currency: str | None, amount: int) -> str:
    return f"{currency} {amount:,}" if currency else f"{amount:,}"


@cache
def _rates():
    """The ECB reference rates bundled with ``currency_converter`` (one dated day)."""
    import os

    import currency_converter

    path = os.path.join(os.path.dirname(currency_converter.__file__), "eurofxref.csv")
    converter = currency_converter.CurrencyConverter(path)
    return converter, max(converter.bounds["USD"])


def converted(amount: int, currency: str, into: str) -> tuple[int, str] | None:
    """``amount`` in ``into`` at the bundled ECB rate, with the rate's date; None for a
    currency the ECB does not quote."""
    converter, day = _rates()
    try:
        value = converter.convert(amount, currency.upper(), into.upper())
    except (ValueError, KeyError):
        return None
    return round(value), day.isoformat()


def salary_requirement(profile: CandidateProfile, low: int | None, high: int | None,
                       currency: str | None) -> Requirement | None:
    """The posting's range against the salary floor, across currencies at the bundled ECB
    rate. A top of the range below the floor is a deal-breaker: the floor is the least
    the job seeker takes."""
    floor = profile.salary_floor
    if not floor:
        return None
    mine = _money(profile.salary_currency, floor)
    top = high or low
    if top is None:
        return requirement("salary", "Salary", "must", "unknown", detail="Salary — not stated")
    shown = "–".join(f"{amount:,}" for amount in dict.fromkeys(a for a in (low, high) if a))
    label = f"Salary {currency + ' ' if currency else ''}{shown}"
    note = ""
    if currency and profile.salary_currency and currency.upper() != profile.salary_currency:
        exchanged = converted(top, currency, profile.salary_currency)
        if exchanged is None:
            return requirement("salary", label, "must", "unknown",
                               detail=f"Paid in {currency}; your floor is {mine}")
        top, day = exchanged
        note = f" (about {_money(profile.salary_currency, top)} at the ECB rate of {day})"
    up_to = f"Up to {_money(currency, high or low or 0)}{note}"
    if top >= floor:
        # Converted, the amount is the posting's, not the floor: say whose it is.
        evidence = f"{up_to} — your floor is {mine}" if note else f"Your floor: {mine}"
        return requirement("salary", label, "must", "met", evidence=evidence)
    below = f"{up_to} — below your floor of {mine}"
    return requirement("salary", label, "must", "missing", deal_breaker=True, detail=below)


# --------------------------------------------------------------------------- licences


def _credential_text(profile: CandidateProfile) -> str:
    """Where a résumé states the licences and registrations it holds: certificates,
    education, the headline and the skills — not the bullets, which also name what the
    job seeker worked *with* ("a firm of chartered accountants")."""
    resume = profile.resume
    parts = [resume.basics.label,
             *(" ".join(filter(None, (c.name, c.issuer))) for c in resume.certificates),
             *(" ".join(filter(None, (e.study_type, e.area))) for e in resume.education),
             *(w.position for w in resume.work), *resume.skill_names()]
    return " ".join(filter(None, parts))


def _initials(text: str) -> set[str]:
    """Initials of every run of two to five capitalised words ("Registered Nurse" → RN)."""
    words = re.findall(r"[A-Za-zÀ-ÿ'’-]+", text)
    out = set()
    for start in range(len(words)):
        letters = ""
        for word in words[start:start + 5]:
            if not word[0].isupper():
                break
            letters += word[0]
            if len(letters) >= 2:
                out.add(letters)
    return out


def licence_requirement(facts: ProfileFacts, need: LicenceNeed) -> Requirement:
    """A licence or registration the posting asks for, held when the résumé names it (by
    its acronym, its full name, or the initials of its name)."""
    label = f"{need.expansion} ({need.acronym})" if need.expansion else need.acronym
    text, initials = facts.credentials

    def holds(acronym: str, expansion: str | None) -> bool:
        return (re.search(rf"(?<![\w-]){re.escape(acronym)}(?![\w-])", text) is not None
                or (expansion is not None and contains_term(normalize(text), expansion))
                or acronym.upper() in initials)

    if holds(need.acronym, need.expansion) or any(holds(other, None) for other in need.alternatives):
        return requirement("licence", label, need.importance, "met", evidence="Your certificates and history")
    return requirement("licence", label, need.importance, "missing",
                       deal_breaker=need.importance == "must",
                       detail="A licence or registration your profile does not list")


# --------------------------------------------------------------------------- managing people

# A résumé shows it has managed people by a managing title or a bullet that says so.
_MANAGING_TITLE = re.compile(r"\b(?:manager|head of|director|lead|leiter(?:in)?|sister|charge nurse|chef"
                             r"|responsable|jef[ea]|supervisor|team ?lead)\b", re.I)
MANAGED_PEOPLE = re.compile(r"\b(?:managed|manage|managing|led|leading|supervised|supervising|line[- ]managed"
                      r"|führte|geführt|leitete|encadré|encadrement|dirigé|dirigí|lideré|gestioné)\b"
                      r"[^.;]{0,40}\b(?:team|staff|reports|people|nurses|engineers|analysts|designers"
                      r"|\d+|équipe|equipo|mitarbeite\w*|personen)\b", re.I)


def management_requirement(facts: ProfileFacts, need: ManagementNeed) -> Requirement:
    """Managing people, against a managing title or a bullet that says the job seeker did."""
    label = f"Managing a team of {need.size}" if need.size else "Managing people"
    for entry, text in facts.entry_texts:
        if _MANAGING_TITLE.search(entry.position or "") or MANAGED_PEOPLE.search(text):
            return requirement("management", label, need.importance, "met", evidence=entry.heading())
    return requirement("management", label, need.importance, "missing",
                       deal_breaker=need.importance == "must" and (need.size or 0) >= 5,
                       detail="Your work history shows no team you managed")
