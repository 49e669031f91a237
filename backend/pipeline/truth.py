"""The truthfulness gate: nothing JobCtrl writes for the job seeker may state what the
profile does not hold.

``check_resume`` and ``check_letter`` raise ``UnsupportedClaim`` (non-retryable, with the
claim in plain words) for the first claim they cannot trace to the profile:

- structure: work entries (employer, title, location, dates) equal the profile's, and a
  bullet stays with its own entry; degrees, certifications, languages, skills, contact
  details and links are the profile's own;
- free text (summary, bullets, letter sentences): every number appears in the profile or
  is a year count the work dates support; every skill is the profile's (synonyms count:
  "Postgres" is "PostgreSQL"); degrees, certifications and languages (with their level)
  are the profile's; a name after "at", "with", "as a"... is the profile's or the
  posting's; places, remote / hybrid / on-site, relocation, visa, salary and availability
  statements only as the profile's preferences and basics hold them;
- the letter: no requirement the ledger marks missing or unknown, and every cited
  evidence string is the profile's;
- in any language: numbers, skills, acronyms (a credential by its letters: "PMP",
  "CCRN"), employers named with a legal form ("Hooli GmbH") and language names
  ("Französisch", "anglais"); degree, certification, relocation, visa, salary,
  availability and remote words in English, German, French and Spanish. A name after a
  German, French or Spanish preposition ("bei Hooli") without a legal form, and
  free-text places after one ("à Lyon"), are read in English only.

Text the profile itself holds (a bullet, a summary sentence, a degree line) is masked out
before the free-text rules run: the job seeker's own words never count against them. The
posting's title, company and location are untrusted: they are masked only in JobCtrl's own
fixed phrases (``POSTING_FRAMES``) and where a claim-free title or company is used as a
name ("the Data Analyst role"); a part of them that states a claim ("PhD", "10 years of
Rust", "worked at Google", "no visa needed") is no name and is checked like any text.
The formatters (``degree_text``, ``language_text``, ...) are the one spelling of the
profile's facts in materials, shared by the writers and the gate.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from backend.domain.errors import TypedFailure
from backend.domain.fit import FitLedger
from backend.domain.places import country_name, places_as_written
from backend.domain.profile import CandidateProfile
from backend.domain.resume import Certificate, EducationEntry, JsonResume, LanguageEntry, WorkEntry, year_of
from backend.pipeline.documents import CoverLetterDoc, ExperienceEntry, ResumeDoc
from backend.pipeline.fit.evidence import fluency_level, years_of
from backend.pipeline.fit.places import country_from_code, country_of, place_covered, posting_arrangement
from backend.pipeline.fit.synonyms import skill_index
from backend.pipeline.text import contains_term, human_list, normalize

if TYPE_CHECKING:
    from backend.pipeline.score import JobText


class UnsupportedClaim(TypedFailure, ValueError):
    """Generated materials state something the profile does not hold. ``claim`` names it
    for the job seeker (and for the model's one repair); the message stays bounded."""

    code = "materials_unsupported_claim"
    retryable = False

    def __init__(self, claim: str, *, said: str = "", why: str = "") -> None:
        super().__init__("the materials state something the profile does not hold")
        self.claim = claim[:400]
        self.said = said[:300]  # the words of the text that state it
        self.why = why[:200]  # why the profile does not hold it, in plain words


class _Findings:
    """Where a refusal goes: raised at once (the gate after a writer: the first claim), or
    collected part by part (a user's edit: every claim is named, nothing is blocked)."""

    def __init__(self, *, collect: bool) -> None:
        self.collect = collect
        self.claims: list[UnsupportedClaim] = []

    def refuse(self, claim: UnsupportedClaim) -> None:
        if not self.collect:
            raise claim
        if all(known.claim != claim.claim for known in self.claims):
            self.claims.append(claim)

    def run(self, check: Callable[[], None]) -> None:
        """One check of one part; collecting, its first refusal is kept and the next part
        is checked."""
        try:
            check()
        except UnsupportedClaim as claim:
            self.refuse(claim)


_RAISE = _Findings(collect=False)


# --------------------------------------------------------------------------- spelling


def degree_text(entry: EducationEntry) -> str | None:
    if entry.study_type and entry.area:
        return f"{entry.study_type} in {entry.area}"
    return entry.study_type or entry.area


def language_text(entry: LanguageEntry) -> str:
    return f"{entry.language} ({entry.fluency})" if entry.fluency else entry.language or ""


def certificate_text(entry: Certificate) -> str:
    details = [part for part in (entry.issuer, str(year_of(entry.date) or "")) if part]
    return f"{entry.name} ({', '.join(details)})" if details else entry.name or ""


def entry_heading(entry: ExperienceEntry) -> str:
    """The heading the ledger's evidence uses for the same work entry."""
    return WorkEntry(name=entry.employer, position=entry.position, start_date=entry.start_date,
                     end_date=entry.end_date).heading()


def profile_locations(profile: CandidateProfile, language: str = "en") -> list[str]:
    """Every place the job seeker listed, as people write it (``places_as_written``):
    where they live, then where they want to work. "Toronto" with the country code "CA"
    reads "Toronto, ON, Canada"; "Berlin, DE" and "Berlin" are one place; a preference
    ("Remote", "Open to relocation") is not a place and a country already named is not
    repeated."""
    home = profile.resume.basics.location
    found: list[str] = []
    if home is not None:
        # The code is a country's: "CA" here is Canada, never California.
        country = country_name(home.country_code) if home.country_code else None
        parts = list(dict.fromkeys(p for p in (home.city, home.region, country) if p))
        if parts:
            found.append(", ".join(parts))
    found.extend(profile.locations)
    return places_as_written(found, language)


def profile_links(profile: CandidateProfile) -> list[str]:
    basics = profile.resume.basics
    links = [basics.url, *(p.url for p in basics.profiles)]
    return list(dict.fromkeys(link for link in links if link))


_SOURCE_CACHE: dict[int, tuple[CandidateProfile, JsonResume]] = {}


def source_resume(profile: CandidateProfile) -> JsonResume:
    """The structured résumé the materials are built from. A profile that only kept its
    pasted text (never structured) is structured here by the import rules, so the writers
    and the gate read the same entries."""
    resume = profile.resume
    if not resume.is_empty() or not profile.resume_text:
        return resume
    hit = _SOURCE_CACHE.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    from backend.domain.resume_structure import structure_text  # loaded only when needed

    parsed, _unplaced = structure_text(profile.resume_text)
    parsed = parsed.model_copy(update={"basics": parsed.basics.model_copy(update={
        key: value for key, value in resume.basics.model_dump().items() if value})})
    if resume.skills:
        parsed = parsed.model_copy(update={"skills": resume.skills})
    if len(_SOURCE_CACHE) > 8:
        _SOURCE_CACHE.clear()
    _SOURCE_CACHE[id(profile)] = (profile, parsed)
    return parsed


# --------------------------------------------------------------------------- numbers, years

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(?:\s?(%|percent|million|billion|thousand|bn|mn|[kmbx]))?"
                     r"(?!\w)", re.IGNORECASE)
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
                "billion": 1e9}
_YEARS = re.compile(r"(?<![\w.])(\d{1,2})\s*\+?\s*(?:years?|yrs?)\b(?P<rest>[^.;:!?\d]{0,50})", re.IGNORECASE)


def _number_value(digits: str, unit: str | None) -> tuple[float, str]:
    """("2", "M") → (2000000, ""); ("40", "%") → (40, "%"): 2M and 2,000,000 are one number."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", digits):
        digits = digits.replace(",", "")
    value = float(digits.replace(",", "."))
    unit = (unit or "").lower()
    kind = "%" if unit in ("%", "percent") else "x" if unit == "x" else ""
    return round(value * _MULTIPLIERS.get(unit, 1), 3), kind


def numbers_in(text: str) -> list[tuple[str, tuple[float, str]]]:
    return [(m.group(0), _number_value(m.group(1), m.group(2))) for m in _NUMBER.finditer(text)]


def _month(text: str | None) -> int | None:
    year = year_of(text)
    if year is None:
        return None
    month = int(text[5:7]) if text and len(text) >= 7 and text[5:7].isdigit() else 1
    return year * 12 + month - 1


def _span(entry: WorkEntry, today: date) -> tuple[int, int] | None:
    start = _month(entry.start_date)
    if start is None:
        return None
    end = _month(entry.end_date) if entry.end_date else today.year * 12 + today.month - 1
    return start, max(start, end or start) + 1


# --------------------------------------------------------------------------- the profile, read once

LANGUAGES = ("English", "German", "French", "Spanish", "Italian", "Portuguese", "Dutch", "Polish", "Swedish",
             "Danish", "Norwegian", "Finnish", "Czech", "Greek", "Hungarian", "Romanian", "Ukrainian",
             "Russian", "Turkish", "Arabic", "Hebrew", "Hindi", "Mandarin", "Chinese", "Cantonese",
             "Japanese", "Korean", "Vietnamese", "Indonesian", "Thai", "Persian", "Urdu", "Bengali")
_LANGUAGE = re.compile(r"\b(" + "|".join(LANGUAGES) + r")\b")
_DEGREE_LEVELS = ((3, re.compile(r"ph\.?\s?d|doctor(?:ate|al)|doktor|doctorat|doctorado|promotion|promoviert",
                                 re.I)),
                  (2, re.compile(r"\bmaster|\bm\.?sc\b|\bmba\b|\bm\.?eng\b|\bm\.?a\.|diplom|máster|maestría"
                                 r"|maîtrise", re.I)),
                  (1, re.compile(r"\bbachelor|\bb\.?sc\b|\bb\.?eng\b|\bb\.?a\.|\bb\.?s\.", re.I)))
_DEGREE_WORD = re.compile(r"\b(?:degree|diploma|graduated|bachelor(?:'s|’s|s)?|master(?:'s|’s|s)\b|master of"
                          r"|ph\.?\s?d|doctorate|b\.?sc|m\.?sc|mba|b\.?eng|m\.?eng"
                          # German, French and Spanish: a letter may be written in them.
                          r"|\w*abschluss|studium|diplom-\w+|promotion|promoviert|doktor\w*|diplôm\w*|doctorat"
                          r"|licence (?:en|professionnelle)|maîtrise|titulad[oa]|licenciad[oa]|licenciatura"
                          r"|grado en|máster|maestría|doctorado)\b", re.I)
_CERTIFICATE_WORD = re.compile(r"\bcertifi\w*|\bcertificate\w*|\baccredit\w*|\bzertifi\w*|\bcertific\w*"
                               r"|\bcertifié\w*", re.I)
# A credential or registration by its letters, in any language ("CCRN", "PMP", "DCG"):
# the profile's, a skill's, a place's or the posting's names only.
_ACRONYM = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{1,5})(?![\w-])")
# An employer by its legal form, in any language ("Siemens AG", "Acme Ltd").
_LEGAL_NAME = re.compile(r"((?:[A-Z][\w&'’.-]*\s+){1,5}(?:GmbH|AG|KG|SE|S\.?A\.?S?|SARL|S\.?L\.?U?|B\.?V\.?"
                         r"|N\.?V\.?|Ltd\.?|Inc\.?|LLC|LLP|Pty|plc|Corp\.?)(?![\w]))")
# A credential by its letters alone: "I hold a PMP", "earned the CFA".
_HELD_LETTERS = re.compile(r"\b(?:hold|holds|held|holding|earned|obtained|achieved|completed)\s+"
                           r"(?:an?|the|my)\s+([A-Z]{2,}[\w+-]*)")
NAME_STOPWORDS = frozenset((
    "i", "the", "a", "an", "my", "your", "our", "this", "that", "these", "those", "me", "it", "we", "you",
    "they", "and", "of", "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december", "monday", "tuesday", "wednesday", "thursday",
    "friday",
))


@dataclass
class _Entry:
    work: WorkEntry
    texts: list[str]
    """The entry's own bullets: its summary and highlights."""
    numbers: set[tuple[float, str]]
    skills: set[str]


@dataclass
class ProfileTruth:
    """What the gate needs from one profile, read once and reused across a batch."""

    profile: CandidateProfile
    resume: JsonResume
    today: date
    corpus: str = ""  # normalized: every fact the résumé and the preferences state
    words: set[str] = field(default_factory=set)
    numbers: set[tuple[float, str]] = field(default_factory=set)
    skills: set[str] = field(default_factory=set)  # canonical, lower-case
    skill_spellings: set[str] = field(default_factory=set)
    entries: list[_Entry] = field(default_factory=list)
    listed_places: set[str] = field(default_factory=set)  # as the contact block spells them
    places: list[str] = field(default_factory=list)  # for place_covered
    mask: re.Pattern[str] | None = None

    @classmethod
    def read(cls, profile: CandidateProfile, today: date) -> ProfileTruth:
        index = skill_index()
        resume = source_resume(profile)
        truth = cls(profile, resume, today)
        fragments = _profile_fragments(profile, resume)
        facts = [*fragments, *profile.target_titles, *profile.locations, *profile.work_authorization,
                 *(g.name or "" for g in resume.skills), *resume.skill_names(), profile.resume_text or ""]
        text = "\n".join(facts)
        truth.corpus = normalize(text)
        truth.words = set(re.findall(r"\w+", truth.corpus))
        truth.numbers = {value for _, value in numbers_in(text)}
        truth.numbers |= {(float(y), "") for w in resume.work for y in
                          (year_of(w.start_date), year_of(w.end_date)) if y}
        truth.numbers |= {(float(y), "") for e in resume.education for y in
                          (year_of(e.start_date), year_of(e.end_date)) if y}
        truth.skill_spellings = {normalize(s) for s in profile.all_skills()}
        truth.skills = {index.canonical_name(s).lower() for s in profile.all_skills()}
        truth.skills |= {name.lower() for name in index.find(text)}
        for work in resume.work:
            texts = [t for t in (work.summary, *work.highlights) if t]
            own = " ".join([work.position or "", *texts])
            truth.entries.append(_Entry(work, texts, {v for _, v in numbers_in(own)},
                                        {name.lower() for name in index.find(own)}))
        truth.listed_places = {normalize(p) for p in (*profile_locations(profile), *profile.locations)}
        truth.places = [*_home_places(resume), *profile.locations]
        truth.mask = _fragment_pattern(fragments)
        return truth

    def years(self, skill: str | None) -> float:
        """Years the work dates cover, overall or in the entries that name ``skill``."""
        spans = [span for entry in self.entries if skill is None or skill in entry.skills
                 if (span := _span(entry.work, self.today)) is not None]
        return years_of(spans)

    def entry_for(self, doc_entry: ExperienceEntry) -> _Entry | None:
        key = _entry_key(doc_entry.employer, doc_entry.position, doc_entry.location,
                         doc_entry.start_date, doc_entry.end_date)
        return next((e for e in self.entries if _entry_key(e.work.name, e.work.position, e.work.location,
                                                            e.work.start_date, e.work.end_date) == key), None)


def _home_places(resume: JsonResume) -> list[str]:
    """Where the job seeker lives, as places the place table reads. The country code is
    read as ISO 3166 (JSON Resume's meaning): "DE" is Germany, never Delaware."""
    home = resume.basics.location
    if home is None:
        return []
    code = home.country_code or ""
    country = country_from_code(code) if len(code.strip()) == 2 else (code or None)
    return [place for place in (home.city, home.region, country) if place]


def _entry_key(*parts: str | None) -> tuple[str, ...]:
    return tuple(normalize(part or "") for part in parts)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])", text.strip()) if s]


def _profile_fragments(profile: CandidateProfile, resume: JsonResume) -> list[str]:
    """The profile's own wording: the pieces a writer may repeat verbatim."""
    basics = resume.basics
    out = [basics.label or "", *_sentences(basics.summary or ""), *profile_locations(profile)]
    for work in resume.work:
        out += [work.name or "", work.position or "", work.location or "", work.summary or "",
                *work.highlights, *(part for line in work.highlights for part in _line_parts(line))]
    for school in resume.education:
        out += [school.institution or "", degree_text(school) or "", school.area or "",
                school.study_type or ""]
    out += [certificate_text(c) for c in resume.certificates] + [c.name or "" for c in resume.certificates]
    out += [language_text(x) for x in resume.languages]
    return [f.strip().rstrip(".") for f in out if f and len(f.strip()) >= 3]


def _line_parts(line: str) -> list[str]:
    """A bullet's statements as a letter may quote them one at a time: split at its
    semicolons, colons and full stops (only those of two words or more)."""
    parts = re.split(r"\s*[;:]\s+|(?<=[a-z0-9)%])[.!?]\s+(?=[A-Z])", line)
    return [p for p in parts if len(p.split()) >= 2] if len(parts) > 1 else []


def _fragment_pattern(fragments: list[str]) -> re.Pattern[str] | None:
    unique = sorted({normalize(f) for f in fragments}, key=len, reverse=True)
    if not unique:
        return None
    body = "|".join(r"\s+".join(re.escape(word) for word in f.split()) for f in unique)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)


def _masked(text: str, pattern: re.Pattern[str] | None) -> str:
    """The text with the given wording blanked out, same length (offsets stay valid)."""
    if pattern is None:
        return text
    return pattern.sub(lambda m: "·" * len(m.group(0)), text)


_TRUTH_CACHE: dict[tuple[int, date], tuple[CandidateProfile, ProfileTruth]] = {}


def profile_truth(profile: CandidateProfile, today: date | None = None) -> ProfileTruth:
    """``ProfileTruth.read``, reused while one profile object is checked against a batch."""
    today = today or date.today()
    key = (id(profile), today)
    hit = _TRUTH_CACHE.get(key)
    if hit is not None and hit[0] is profile:
        return hit[1]
    truth = ProfileTruth.read(profile, today)
    if len(_TRUTH_CACHE) >= 8:
        _TRUTH_CACHE.clear()
    _TRUTH_CACHE[key] = (profile, truth)
    return truth


# --------------------------------------------------------------------------- free-text rules

_RELOCATION = re.compile(r"\breloca\w*|\b(?:move|moving) to\b|\bwilling to move\b"
                         r"|\bumz(?:ug|iehen|uziehen)\w*|\bdéménag\w*|\bmudarme\b|\btraslad\w*", re.I)
_AVAILABILITY = re.compile(r"\bavailable (?:to start|from|immediately|right away)\b"
                           r"|\b(?:I am|I'm) available\b|\bcan start\b|\bstart (?:immediately|right away)\b"
                           r"|\bnotice period\b|\bpreaviso\b"
                           r"|\bmy availability\b|\bverfügbar ab\b|\bkündigungsfrist\b|\bpréavis\b"
                           r"|\bdisponible (?:dès|à partir|immédiatement|desde|de inmediato)\b", re.I)
_SALARY = re.compile(r"\b(?:salary|compensation|remuneration|pay range|pay expectations?"
                     r"|per (?:year|annum)|gehalt\w*|salaire|rémunération|salario|sueldo)\b", re.I)
_VISA = re.compile(r"\bvisas?\b|\bsponsor\w*|\bwork permit\b|\bright to work\b|\bauthori[sz]ed to work\b"
                   r"|\bwork authori[sz]ation\b|\bcitizen\w*|\bgreen card\b|\bresiden(?:t|cy) permit\b"
                   r"|\bblue card\b|\bvisum\b|\barbeitserlaubnis\b|\baufenthalts\w*|\bpermis de travail\b"
                   r"|\btitre de séjour\b|\bpermiso de (?:trabajo|residencia)\b", re.I)
_MODES = (("remote", re.compile(r"\bremote(?:ly)?\b|\bwork(?:ing)? from home\b|\bhome-?office\b"
                                r"|\btélétravail\b|\bteletrabajo\b|\ben remoto\b", re.I)),
          ("hybrid", re.compile(r"\bhybrid\b", re.I)),
          ("onsite", re.compile(r"\bon-?site\b|\bin[- ]office\b|\bin the office\b|\boffice-based\b"
                                r"|\bcommut\w*", re.I)))
_FITS_ME = re.compile(r"\b(?:works|suits|fits) (?:well )?(?:for )?me\b|\bsetup\b|\bwork arrangement\b", re.I)
_ALLOWED_MODES = {"remote_only": {"remote"}, "remote_or_hybrid": {"remote", "hybrid"},
                  "any": {"remote", "hybrid", "onsite"}, "onsite": {"onsite"}}
_PLACE_AFTER = re.compile(r"(?i:\b(?:in|to|from|near|based in|around)\s+(?:the\s+)?)"
                          r"([A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,3})")
_NAMED = re.compile(r"(?i:\b(?:at|with|for|joined|from|as an?|as)\s+)"
                    r"((?:the\s+)?[A-Z][\w&'’.+-]*(?:\s+(?:&\s+|of\s+|and\s+)?[A-Z][\w&'’.+-]*){0,4})")


@dataclass(frozen=True)
class _Scope:
    """What one piece of text may draw on: a bullet only its own entry, a summary or a
    letter the whole profile (and the posting's own names)."""

    numbers: set[tuple[float, str]]
    skills: set[str]
    job: JobText | None = None
    job_names: frozenset[str] = frozenset()
    posting: PostingNames | None = None


_CLAUSE_END = re.compile(r"[;!?—]|[.,](?!\d)")


def _clause(sentence: str, match: re.Match[str] | tuple[int, int]) -> str:
    """The clause around a match, for the message: "happy to relocate to San Francisco"."""
    begin, end = match if isinstance(match, tuple) else match.span()
    start = max(sentence.rfind(sep, 0, begin) for sep in (",", ";", ":", "—", " - ")) + 1
    stop = _CLAUSE_END.search(sentence, end)  # "90,000" and "2.5" do not end a clause
    return sentence[start:stop.start() if stop else len(sentence)].strip(" .,;") or sentence[begin:end]


def _reject(claim: str, why: str) -> UnsupportedClaim:
    return UnsupportedClaim(f"“{claim.strip()}” — {why}", said=claim.strip(), why=why)


def _check_text(text: str, truth: ProfileTruth, scope: _Scope, found: _Findings = _RAISE) -> None:
    """Every free-text rule, sentence by sentence, on the text minus the profile's own
    wording and the posting's names where JobCtrl's own phrases (or a plain mention of a
    claim-free title or company) use them as names."""
    # The posting's names first: the profile's wording may be part of them ("Backend
    # Engineer" in "Backend Engineer II"), and masking it first would leave the rest of the
    # title ("II", "2") looking like a claim. Masked on the whole text, so a title with a
    # full stop in it does not split JobCtrl's sentence.
    named = _posting_masked(text, scope.posting)
    for start, end in _sentence_spans(named):
        sentence = text[start:end]
        masked = _masked(named[start:end], truth.mask)
        found.run(lambda: _check_preferences(sentence, masked, truth, scope))  # noqa: B023
        found.run(lambda: _check_numbers(sentence, masked, truth, scope))  # noqa: B023
        found.run(lambda: _check_skills(sentence, masked, scope))  # noqa: B023
        found.run(lambda: _check_credentials(sentence, masked, truth, scope.job_names))  # noqa: B023
        found.run(lambda: _check_names(masked, truth, scope))  # noqa: B023


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where ``_sentences`` would cut the text, as offsets into it."""
    spans, start = [], 0
    for m in _SENTENCE_BREAK.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _check_preferences(sentence: str, masked: str, truth: ProfileTruth, scope: _Scope) -> None:
    profile = truth.profile
    for pattern in (_RELOCATION, _AVAILABILITY):
        if (m := pattern.search(masked)) is not None:
            raise _reject(_clause(sentence, m), "not in your profile")
    if (m := _SALARY.search(masked)) is not None:
        floor = profile.salary_floor
        stated = {value for _, (value, _kind) in numbers_in(masked)}
        if not floor or stated - {float(floor)}:
            why = f"your salary floor is {floor:,}" if floor else "not in your profile"
            raise _reject(_clause(sentence, m), why)
    if (m := _VISA.search(masked)) is not None:
        _check_authorization(sentence, masked, m, truth, scope)
    allowed = _ALLOWED_MODES[profile.remote_preference]
    for mode, pattern in _MODES:
        if (m := pattern.search(masked)) is not None and mode not in allowed:
            said = profile.remote_preference.replace("_", " ")
            raise _reject(_clause(sentence, m), f"your profile says {said}")
    for place, _ in _places(masked, scope.job):
        if not place_covered(place, truth.places):
            raise _reject(place, "not a place in your profile")
    if (m := _FITS_ME.search(masked)) is not None and not _job_mode_allowed(truth, scope.job):
        raise _reject(_clause(sentence, m), "your profile does not say this arrangement suits you")


def _job_mode_allowed(truth: ProfileTruth, job: JobText | None) -> bool:
    if job is None:
        return False
    mode = posting_arrangement(job.remote, job.location, job.description).mode
    return mode in _ALLOWED_MODES[truth.profile.remote_preference]


def _places(masked: str, job: JobText | None) -> list[tuple[str, re.Match[str]]]:
    """Places a sentence names: the posting's own location parts, and any known city,
    country or region after "in", "to", "from"..."""
    found: list[tuple[str, re.Match[str]]] = []
    if job is not None and job.location:
        for part in re.split(r"[,/;|(]| - ", job.location):
            name = part.strip(" )")
            if len(name) > 2 and name.lower() not in ("remote", "anywhere", "worldwide", "hybrid"):
                m = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", masked, re.IGNORECASE)
                if m is not None:
                    found.append((name, m))
    for m in _PLACE_AFTER.finditer(masked):
        name = m.group(1).strip(".'’")
        if country_of(name) is not None:
            found.append((name, m))
    return found


def _check_authorization(sentence: str, masked: str, m: re.Match[str], truth: ProfileTruth,
                         scope: _Scope) -> None:
    held = truth.profile.work_authorization
    if not held:
        raise _reject(_clause(sentence, m), "work authorization is not in your profile")
    places = [place for place, _ in _places(masked, scope.job)]
    if not places and scope.job is not None and scope.job.location:
        country = country_of(scope.job.location)
        places = [country] if country else []
    for place in places:
        if not place_covered(place, held):
            why = f"your profile lists work authorization for {human_list(held)}"
            raise _reject(_clause(sentence, m), why)


def _check_numbers(sentence: str, masked: str, truth: ProfileTruth, scope: _Scope) -> None:
    index = skill_index()
    claimed_years: set[int] = set()
    for m in _YEARS.finditer(masked):
        count = int(m.group(1))
        hits = index.hits(m.group("rest"))
        subject = hits[0][1].lower() if hits else None
        shown = truth.years(subject)
        # The job seeker's own "8+ years" counts for a general claim; a skill's years only
        # from the dates of the entries that name it.
        own_words = subject is None and re.search(rf"\b{count}\+? years?\b", truth.corpus)
        if count > shown + 0.5 and not own_words:
            end = m.start("rest") + (hits[0][0] + len(hits[0][1]) if hits else 0)
            years = f"{shown:.0f} years" if shown >= 1 else "less than a year"
            raise _reject(sentence[m.start():end], f"your profile shows {years}")
        claimed_years.add(m.start())
    for m in _NUMBER.finditer(masked):
        if m.start() in claimed_years:
            continue
        value = _number_value(m.group(1), m.group(2))
        if value not in scope.numbers:
            raise _reject(_clause(sentence, m), f"{m.group(0).strip()} is not in your profile")


def _check_skills(sentence: str, masked: str, scope: _Scope) -> None:
    for start, name in skill_index().hits(masked):
        if name.lower() not in scope.skills:
            raise _reject(_clause(sentence, (start, start + 1)), f"{name} is not in your profile")


def _check_language_names(sentence: str, masked: str, truth: ProfileTruth) -> None:
    """A language named in German, French or Spanish ("Englisch", "anglais", "inglés") is
    one the profile lists (the English names: ``_LANGUAGE`` below)."""
    from backend.domain.spoken_languages import english_name
    from backend.pipeline.fit.requirements import LANGUAGE_NAMES

    held = {(english_name(x.language or "") or x.language or "").lower() for x in truth.resume.languages}
    for m in LANGUAGE_NAMES.finditer(masked):
        if _LANGUAGE.fullmatch(m.group(0)):
            continue  # an English name: checked with its level below
        name = (english_name(m.group(0)) or english_name(m.group(0).removesuffix("kenntnisse")) or "").lower()
        if name and name not in held:
            raise _reject(_clause(sentence, m), f"{m.group(0)} is not in your languages")


def _check_credentials(sentence: str, masked: str, truth: ProfileTruth,
                       names: frozenset[str] = frozenset()) -> None:
    resume = truth.resume
    if (m := _DEGREE_WORD.search(masked)) is not None:
        claimed = max((level for level, p in _DEGREE_LEVELS if p.search(masked)), default=0)
        held = max((level for school in resume.education for level, p in _DEGREE_LEVELS
                    if p.search(f"{school.study_type or ''} {school.area or ''}")), default=0)
        if not resume.education or claimed > held:
            shown = "; ".join(filter(None, (degree_text(s) for s in resume.education)))
            why = f"your education lists {shown}" if shown else "not in your profile"
            raise _reject(_clause(sentence, m), why)
    if (m := _CERTIFICATE_WORD.search(masked)) is not None:
        names = [normalize(c.name) for c in resume.certificates if c.name]
        if not any(name in normalize(sentence) for name in names):
            raise _reject(_clause(sentence, m), "not a certification in your profile")
    for m in _HELD_LETTERS.finditer(masked):
        if m.group(1).lower() not in truth.words and not skill_index().find(m.group(1)):
            raise _reject(_clause(sentence, m), f"{m.group(1)} is not in your profile")
    for m in _ACRONYM.finditer(masked):
        letters = m.group(1)
        if (letters.lower() not in truth.words and letters.lower() not in names
                and not skill_index().find(letters) and country_of(letters) is None):
            raise _reject(_clause(sentence, m), f"{letters} is not in your profile")
    _check_language_names(sentence, masked, truth)
    for m in _LANGUAGE.finditer(masked):
        listed = next((x for x in resume.languages if (x.language or "").lower() == m.group(1).lower()), None)
        if listed is None:
            raise _reject(_clause(sentence, m), f"{m.group(1)} is not in your languages")
        claimed = fluency_level(masked)
        held = fluency_level(listed.fluency)
        if claimed is not None and (held is None or claimed > held):
            raise _reject(_clause(sentence, m), f"your profile lists {language_text(listed)}")


def _check_names(masked: str, truth: ProfileTruth, scope: _Scope) -> None:
    """A name after "at", "with", "as a"... is an employer, title or tool: the profile's,
    or the posting's company and title."""
    index = skill_index()
    for m in _LEGAL_NAME.finditer(masked):
        if any(w.strip("'’.").lower() not in truth.words | scope.job_names for w in m.group(1).split()[:-1]):
            raise _reject(m.group(1), "not an employer in your profile or the posting")
    for m in _NAMED.finditer(masked):
        words = [w.strip("'’.").removesuffix("'s").removesuffix("’s") for w in m.group(1).split()]
        for word in words:
            lowered = word.lower()
            if (not lowered or lowered in NAME_STOPWORDS or lowered in truth.words
                    or lowered in scope.job_names or index.find(word)):
                continue
            raise _reject(m.group(0), "not in your profile")


# --------------------------------------------------------------------------- the posting's names

# The fixed phrases JobCtrl's own writers put the posting's title and company in (the
# offline letter, the offline résumé summary, the follow-up email and its subject). The
# writers format these very strings; the gate lets the title and company through only in
# their slots here. Title, company and location are the posting's text, not the job
# seeker's: anywhere else they are read like any other text.
# The letter's frames come in each language the offline letter is written in.
LETTER_OPENINGS = {
    "en": "I am applying for the {title} position at {company}.",
    "de": "Hiermit bewerbe ich mich um die Stelle als {title} bei {company}.",
    "fr": "Je vous adresse ma candidature au poste de {title} chez {company}.",
    "es": "Le escribo para presentar mi candidatura al puesto de {title} en {company}.",
}
LETTER_CLOSINGS = {
    "en": "I would welcome the chance to discuss how my experience fits the {title} role at {company}.",
    "de": "Gern erläutere ich im Gespräch, wie meine Erfahrung zur Stelle als {title} bei {company} passt.",
    "fr": "Je me tiens à votre disposition pour échanger sur le poste de {title} chez {company}.",
    "es": "Me encantaría conversar sobre cómo encaja mi experiencia en el puesto de {title} en {company}.",
}
LETTER_OPENING = LETTER_OPENINGS["en"]
LETTER_CLOSING = LETTER_CLOSINGS["en"]
SUMMARY_ROLE = "to the {title} role at {company}."  # after "Brings <met skills> "
FOLLOW_UP_OPENING = "I recently applied for the {title} position at {company}"
FOLLOW_UP_SUBJECT = "Following up: {title} application ({company})"
POSTING_FRAMES = (*LETTER_OPENINGS.values(), *LETTER_CLOSINGS.values(), SUMMARY_ROLE, FOLLOW_UP_OPENING,
                  FOLLOW_UP_SUBJECT)

# Where a posting's title and company are parts: "Backend Engineer (PhD, 10 years of Rust)"
# is "Backend Engineer", "PhD" and "10 years of Rust".
_NAME_PARTS = re.compile(r"\s[-–—|·/]\s|[()\[\]{},;:|·]")
# A mention that uses the title as the role's name: "the Data Analyst role".
_ROLE_NOUN = r"\s+(?:role|position|opening|job|vacancy|posting|opportunity|application)s?\b"
_COMPANY_BEFORE = r"(?i:\b(?:at|join|joining|joined|for|to|of|about)\s+(?:the\s+)?)"
# An employer a posting's text puts in the job seeker's mouth: "worked at Google", "ex-Meta".
_EMPLOYED = re.compile(r"(?i:\b(?:at|joined|from|by|ex-|formerly(?:\s+(?:at|with|of))?|previously"
                       r"(?:\s+(?:at|with))?|(?:worked|working|work|employed|interned)\s+(?:at|for|with|by))\s*)"
                       r"([A-Z][\w&'’.+-]*(?:\s+(?:&\s+|of\s+|and\s+)?[A-Z][\w&'’.+-]*){0,4})")


@dataclass(frozen=True)
class PostingNames:
    """The posting's title, company and location as names a text may use.

    ``words``: the words of the parts that state nothing about the job seeker the profile
    does not hold; the name rule accepts them ("for the Data Analyst role"). ``frames``:
    JobCtrl's fixed phrases with this title and company in their slots, and, for a title
    or company (or a part of the title) with no such claim, its plain use as a name ("the
    Data Analyst role", "at Globex"). The masks blank the named groups only."""

    words: frozenset[str]
    frames: tuple[re.Pattern[str], ...]


def _literal(text: str) -> str:
    return "".join(r"\s+" if part.isspace() else re.escape(part) for part in re.split(r"(\s+)", text) if part)


def _frame(template: str, title: str, company: str) -> re.Pattern[str]:
    body = "".join("(?P<title>" + _literal(title) + ")" if part == "{title}"
                   else "(?P<company>" + _literal(company) + ")" if part == "{company}" else _literal(part)
                   for part in re.split(r"(\{title\}|\{company\})", template.rstrip(".")) if part)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def _name_parts(text: str) -> list[str]:
    return [part.strip() for part in _NAME_PARTS.split(text) if len(part.strip()) >= 2]


def _states_a_claim(text: str, truth: ProfileTruth, names: frozenset[str]) -> bool:
    """Whether a piece of the posting's own text says something about the job seeker the
    profile does not hold: a year count, a degree, certification or language, an employer
    (other than the posting's company), or a relocation, availability, salary or visa
    statement. Skills are not counted here: a title names them ("Python Developer"), and
    every skill outside a name is checked as usual."""
    if any(p.search(text) for p in (_RELOCATION, _AVAILABILITY, _SALARY, _VISA)):
        return True
    # A bare number names the role ("Tester 2", "L5"); a year count or a figure does not.
    bare = {_number_value(m.group(1), None) for m in _NUMBER.finditer(text) if not m.group(2)}
    index = skill_index()
    try:
        _check_numbers(text, text, truth, _Scope(truth.numbers | bare, truth.skills))
        _check_credentials(text, text, truth)
    except UnsupportedClaim:
        return True
    for m in _EMPLOYED.finditer(text):
        for word in m.group(1).split():
            word = word.strip("'’.").removesuffix("'s").removesuffix("’s")
            lowered = word.lower()
            if not (not lowered or lowered in NAME_STOPWORDS or lowered in truth.words or lowered in names
                    or index.find(word)):
                return True
    return False


def posting_names(truth: ProfileTruth, job: JobText | None) -> PostingNames | None:
    """What of the posting's title, company and location a text may use as names, for
    this profile: a part that states a claim the profile does not hold is not a name."""
    if job is None:
        return None
    title, company = (job.title or "").strip(), (job.company or "").strip()
    company_parts = [p for p in _name_parts(company) if not _states_a_claim(p, truth, frozenset())]
    company_words = frozenset(w for p in company_parts for w in re.findall(r"\w+", p.lower()))
    clean = [p for p in _name_parts(title) + _name_parts(job.location or "")
             if not _states_a_claim(p, truth, company_words)]
    words = company_words | {w for p in clean for w in re.findall(r"\w+", p.lower())}
    frames = [_frame(template, title, company) for template in POSTING_FRAMES if title and company]
    titles = [t for t in dict.fromkeys([title, *_name_parts(title)])
              if t and not _states_a_claim(t, truth, company_words)]
    if titles:
        alternatives = "|".join(_literal(t) for t in sorted(titles, key=len, reverse=True))
        frames.append(re.compile(rf"(?<!\w)(?P<title>{alternatives})(?={_ROLE_NOUN})", re.IGNORECASE))
    if company and not _states_a_claim(company, truth, frozenset()):
        frames.append(re.compile(rf"{_COMPANY_BEFORE}(?P<company>{_literal(company)})(?!\w)", re.IGNORECASE))
        frames.append(re.compile(rf"(?<!\w)(?P<company>{_literal(company)})(?=['’]s\b)", re.IGNORECASE))
    return PostingNames(frozenset(words), tuple(frames))


def _posting_masked(text: str, posting: PostingNames | None) -> str:
    """The text with the posting's names blanked where they are used as names (same
    length). Only the title and company slots are blanked: the words around them are read."""
    if posting is None:
        return text
    chars = list(text)
    for pattern in posting.frames:
        for m in pattern.finditer(text):
            for group in ("title", "company"):
                if group in pattern.groupindex and m.start(group) >= 0:
                    chars[m.start(group):m.end(group)] = "·" * (m.end(group) - m.start(group))
    return "".join(chars)


# --------------------------------------------------------------------------- the résumé


def check_resume(doc: ResumeDoc, profile: CandidateProfile, *, job: JobText | None = None,
                 today: date | None = None) -> None:
    """Raise UnsupportedClaim for the first thing in the résumé the profile does not hold.
    ``job`` lets the summary name the posting's role and company."""
    _resume_checks(doc, profile_truth(profile, today), job, _RAISE)


def _resume_checks(doc: ResumeDoc, truth: ProfileTruth, job: JobText | None, found: _Findings) -> None:
    found.run(lambda: _check_header(doc, truth))
    _check_entries(doc, truth, found)
    _check_lists(doc, truth, found)
    _check_text(doc.summary, truth, _whole_profile(truth, job), found)


def _whole_profile(truth: ProfileTruth, job: JobText | None) -> _Scope:
    posting = posting_names(truth, job)
    return _Scope(truth.numbers, truth.skills, job, posting.words if posting else frozenset(), posting)


def _check_header(doc: ResumeDoc, truth: ProfileTruth) -> None:
    profile = truth.profile
    if doc.name != profile.display_name():
        raise _reject(doc.name, "not the name in your profile")
    headlines = {normalize(h) for h in (truth.resume.basics.label, *profile.target_titles,
                                        *(w.position for w in truth.resume.work)) if h}
    if doc.headline and normalize(doc.headline) not in headlines:
        raise _reject(doc.headline, "not your headline, a target title or a position you held")
    contact = doc.contact
    if contact.email and normalize(contact.email) != normalize(truth.resume.basics.email or ""):
        raise _reject(contact.email, "not the email in your profile")
    if contact.phone and normalize(contact.phone) != normalize(truth.resume.basics.phone or ""):
        raise _reject(contact.phone, "not the phone number in your profile")
    for place in contact.locations:
        if normalize(place) not in truth.listed_places:
            raise _reject(place, "not a location in your profile")
    links = {normalize(link) for link in profile_links(profile)}
    for link in contact.links:
        if normalize(link) not in links:
            raise _reject(link, "not a link in your profile")


def _check_entries(doc: ResumeDoc, truth: ProfileTruth, found: _Findings) -> None:
    for entry in doc.experience:
        own = truth.entry_for(entry)
        if own is None:
            found.refuse(_reject(entry_heading(entry), _entry_mismatch(entry, truth)))
            continue
        own_texts = {normalize(t).rstrip(".") for t in own.texts}
        others = {normalize(t).rstrip("."): other.work.heading()
                  for other in truth.entries if other is not own for t in other.texts}
        scope = _Scope(own.numbers | _years_in(own.work), own.skills)
        for bullet in entry.bullets:
            said = normalize(bullet).rstrip(".")
            if said in own_texts:
                continue
            if said in others:
                found.refuse(_reject(bullet, f"a bullet of {others[said]}, not of {own.work.heading()}"))
                continue
            _check_text(bullet, truth, scope, found)


def _years_in(work: WorkEntry) -> set[tuple[float, str]]:
    return {(float(y), "") for y in (year_of(work.start_date), year_of(work.end_date)) if y}


def _entry_mismatch(entry: ExperienceEntry, truth: ProfileTruth) -> str:
    wanted = _entry_key(entry.employer, entry.position)
    same = next((e.work for e in truth.entries if _entry_key(e.work.name, e.work.position) == wanted), None)
    if same is None:
        return "not a work entry in your profile"
    where = f", {same.location}" if same.location else ""
    return f"your profile shows {same.start_date or '?'} to {same.end_date or 'present'}{where}"


def _check_lists(doc: ResumeDoc, truth: ProfileTruth, found: _Findings) -> None:
    resume, index = truth.resume, skill_index()
    groups = {normalize(g.name) for g in resume.skills if g.name}
    for line in doc.skills:
        if line.group and normalize(line.group) not in groups:
            found.refuse(_reject(line.group, "not a skill group in your profile"))
        for item in line.items:
            canonical = index.canonical_name(item).lower()
            if normalize(item) not in truth.skill_spellings and canonical not in truth.skills:
                found.refuse(_reject(item, "not a skill in your profile"))
    schools = [(normalize(s.institution or ""), normalize(degree_text(s) or "")) for s in resume.education]
    for line in doc.education:
        if (normalize(line.institution or ""), normalize(line.degree or "")) not in schools:
            found.refuse(_reject(", ".join(filter(None, (line.degree, line.institution))),
                                 "not in your education"))
    _check_listed(doc.languages, [t for x in resume.languages for t in (language_text(x), x.language or "")],
                  "not a language in your profile", found)
    _check_listed(doc.certifications,
                  [t for c in resume.certificates for t in (certificate_text(c), c.name or "")],
                  "not a certification in your profile", found)


def _check_listed(items: list[str], held: list[str], why: str, found: _Findings) -> None:
    known = {normalize(x) for x in held if x}
    for item in items:
        if normalize(item) not in known:
            found.refuse(_reject(item, why))


# --------------------------------------------------------------------------- the letter

_CLAIMABLE_KINDS = ("skill",)


def check_letter(doc: CoverLetterDoc, profile: CandidateProfile, ledger: FitLedger | None,
                 job: JobText | None, *, today: date | None = None) -> None:
    """Raise UnsupportedClaim for the first sentence or citation of the letter the profile
    does not hold, or that claims a requirement the ledger marks missing or unknown."""
    _letter_checks(doc, profile_truth(profile, today), ledger, job, _RAISE)


def _letter_checks(doc: CoverLetterDoc, truth: ProfileTruth, ledger: FitLedger | None, job: JobText | None,
                   found: _Findings) -> None:
    profile = truth.profile
    for name in dict.fromkeys((doc.sender_name, doc.signature)):
        if name != profile.display_name():
            found.refuse(_reject(name, "not the name in your profile"))
    held = {normalize(x) for x in (truth.resume.basics.email, truth.resume.basics.phone,
                                   *profile_links(profile)) if x} | truth.listed_places
    for line in doc.sender_contact:
        for part in line.split(" · "):
            if normalize(part) not in held:
                found.refuse(_reject(part, "not a contact detail in your profile"))
    scope = _whole_profile(truth, job)
    headings = {normalize(e.work.heading()) for e in truth.entries}
    cited = {normalize(r.evidence) for r in (ledger.met() if ledger else []) if r.evidence}
    for paragraph in doc.paragraphs:
        found.run(lambda: _check_ledger(paragraph.text, truth, ledger, job))  # noqa: B023
        _check_text(paragraph.text, truth, scope, found)
        for evidence in paragraph.evidence:
            said = normalize(evidence).rstrip(".")
            if said not in headings and said not in cited and said not in truth.corpus:
                found.refuse(_reject(evidence, "cited as evidence but not in your profile"))


def _check_ledger(text: str, truth: ProfileTruth, ledger: FitLedger | None, job: JobText | None) -> None:
    """A requirement the ledger marks missing or unknown is never claimed (the profile's
    own wording and the posting's title aside)."""
    if ledger is None:
        return
    masked = normalize(_masked(_posting_masked(text, posting_names(truth, job)), truth.mask))
    index = skill_index()
    named = {name.lower() for name in index.find(masked)}
    for requirement in ledger.requirements:
        if requirement.status == "met" or requirement.kind not in _CLAIMABLE_KINDS:
            continue
        label = requirement.label
        if index.canonical_name(label).lower() in named or contains_term(masked, label):
            status = "missing" if requirement.status == "missing" else "unknown"
            raise _reject(label, f"the fit check marks it {status}")


def gate_materials(resume: ResumeDoc | None, letter: CoverLetterDoc | None, profile: CandidateProfile,
                   ledger: FitLedger | None, job: JobText | None, *, today: date | None = None) -> None:
    """The one call after any writer (offline or model), before a PDF is rendered."""
    if resume is not None:
        check_resume(resume, profile, job=job, today=today)
    if letter is not None:
        check_letter(letter, profile, ledger, job, today=today)


def edit_claims(resume: ResumeDoc | None, letter: CoverLetterDoc | None, profile: CandidateProfile,
                ledger: FitLedger | None, job: JobText | None, *,
                today: date | None = None) -> list[UnsupportedClaim]:
    """The same gate on the user's own edit, not stopping at the first claim: every part
    (the header, each bullet, each list item, each sentence, each letter paragraph) is
    checked, and each claim the profile does not hold is returned once. The caller names
    them to the user, who may keep them; nothing here refuses the edit."""
    truth = profile_truth(profile, today)
    found = _Findings(collect=True)
    if resume is not None:
        _resume_checks(resume, truth, job, found)
    if letter is not None:
        _letter_checks(letter, truth, ledger, job, found)
    return found.claims
