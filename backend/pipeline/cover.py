"""Cover: a short, honest letter built from the fit ledger's met requirements.

The offline letter has one paragraph per point the posting asks for and the profile
proves (a must-have skill, the line of work, the years in it, managing people), at most
three, each citing one or two of the job seeker's own bullets: one achievement per
sentence, list punctuation gone (a bullet's second statement is joined to the first or
becomes a sentence of its own). It is written in the résumé's language (English, German,
French or Spanish; ``letter_phrases``), since it quotes the résumé. A sentence appears
only when it answers the posting: languages when the posting asks for one, the place
when the office is where the job seeker lives or wants to work, the remote preference
only when the posting's mode is not one the profile asks for; relocation never.

Every claim names real evidence (a work entry, one of its bullets, a degree, a
licence, a language), and the paragraph carries it in ``LetterParagraph.evidence``. The
letter never claims a requirement the ledger marks missing or unknown: the truthfulness
gate checks it, also offline. With a model, ``materials.letterLanguage`` picks the
résumé's language (the default) or the posting's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date

from pydantic import Field

from backend.domain.fit import FitLedger, Requirement
from backend.domain.model import CamelModel
from backend.domain.places import places_as_written
from backend.domain.profile import CandidateProfile
from backend.domain.resume import Certificate
from backend.domain.spoken_languages import english_name
from backend.pipeline.documents import CoverLetterDoc, ExperienceEntry, LetterParagraph, ResumeDoc
from backend.pipeline.fit.evidence import MANAGED_PEOPLE
from backend.pipeline.fit.places import place_covered, posting_arrangement
from backend.pipeline.fit.synonyms import skill_index
from backend.pipeline.letter_phrases import (
    LANGUAGE_NAMES,
    closing_frame,
    date_line,
    joined,
    letter_language,
    opening_frame,
    phrase,
)
from backend.pipeline.score import Complete, JobText, ModelOutputInvalid, ScoreResult
from backend.pipeline.tailor import Focus, ask_with_one_repair, contact_lines, focus_of, validated_reply
from backend.pipeline.text import contains_term, normalize, text_language, vocabulary
from backend.pipeline.truth import (
    check_letter,
    entry_heading,
    language_text,
    profile_locations,
    source_resume,
)

MAX_POINTS = 3  # body paragraphs: one per point the posting asks for, the background counted
MAX_PER_POINT = 2  # achievements per point
MAX_SENTENCE_WORDS = 45
MAX_LETTER_WORDS = 400  # one page with the header and the closing

# A bullet that opens with one of these (or a regular past tense) reads as "I <bullet>".
_IRREGULAR_PAST = frozenset(("built", "led", "ran", "wrote", "drove", "grew", "cut", "made", "won", "set",
                             "took", "brought", "taught", "began", "kept", "held", "sold", "found", "rebuilt",
                             "oversaw", "spoke", "rewrote", "overhauled", "sped", "split", "put", "sent",
                             "spent", "gave", "got", "met", "went", "chose", "drew", "won", "fell",
                             "rose", "became", "shut"))
# Present tenses a current role's bullets open with, across lines of work.
_PRESENT_VERBS = frozenset((
    "build", "lead", "run", "write", "drive", "grow", "own", "design", "develop", "maintain", "manage",
    "mentor", "ship", "create", "deliver", "support", "operate", "care", "treat", "assess", "titrate",
    "precept", "teach", "plan", "prepare", "coordinate", "supervise", "train", "install", "inspect",
    "test", "repair", "advise", "sell", "negotiate", "monitor", "handle", "close", "reconcile", "line",
    "analyse", "analyze", "report", "review", "audit", "present", "read", "assist"))
# Words ending in -ed that usually open a noun phrase, not an action.
_NOT_VERBS = frozenset(("speed", "need", "seed", "feed", "embedded", "distributed", "based", "advanced",
                        "detailed", "dedicated", "related", "red"))
_GLYPHS = "-•*▪◦·–—>"
# Words too common to tell whether a bullet speaks to the posting.
_COMMON = vocabulary("""with that this from your will have their they them into over under about were been
 team work role also more most such other each well able dans pour avec sont vous nous leur mit für
 einer eines oder sowie werden sind para como with their the and los las del por una unos""")


def as_clause(bullet: str, *, current: bool) -> str | None:
    """"Built Kafka pipelines." → "built Kafka pipelines"; None when the bullet does not
    open with a verb (a noun phrase would not read as "I <bullet>")."""
    text = bullet.strip().rstrip(".;!? ")
    if not text or re.search(r"[.!?]\s", text):
        return None  # two sentences do not make one clause
    first, _, rest = text.partition(" ")
    if not rest or not re.fullmatch(r"[A-Z][a-z]+", first):
        return None
    word = first.lower()
    past = word in _IRREGULAR_PAST or (word.endswith("ed") and len(word) >= 5 and word not in _NOT_VERBS)
    if past or (current and word in _PRESENT_VERBS):
        return f"{word} {rest}"
    return None


def bullet_parts(bullet: str) -> list[str]:
    """A bullet's statements without list punctuation: glyphs and trailing stops gone,
    split at its semicolons and full stops; "A: b, c" reads "A (b, c)"."""
    text = " ".join(bullet.split()).lstrip(_GLYPHS + " ")
    parts = [p.strip().rstrip(".;:!? ") for p in re.split(r";\s*|(?<=[a-z0-9)%])[.!?]\s+(?=[A-Z])", text)]
    out = []
    for part in parts:
        head, colon, tail = part.partition(": ")
        out.append(f"{head.rstrip()} ({tail})" if colon and tail else part)
    return [p for p in out if len(p.split()) >= 2]


def _lower_first(text: str, language: str) -> str:
    """Lower-case the first letter of a noun phrase inside a sentence (not in German, not
    for an acronym such as "NIV" or "CRRT")."""
    if language == "de" or len(text) < 2 or not text[1].islower():
        return text
    return text[0].lower() + text[1:]


def _words(sentence: str) -> int:
    return len(sentence.split())


# --------------------------------------------------------------------------- what the posting asks


_STEM_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ers", "ed", "es", "er", "s", "e")


def _stems(text: str) -> set[str]:
    out = set()
    for word in re.findall(r"[^\W\d_]{4,}", text.lower()):
        if word in _COMMON:
            continue
        for suffix in _STEM_SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 4:
                word = word[: -len(suffix)]
                break
        out.add(word)
    return out


@dataclass
class Point:
    """One thing the posting asks for that the profile proves, with the bullets that prove it."""

    labels: list[str]
    items: list[tuple[ExperienceEntry, str]]


def _proves(requirement: Requirement, entry: ExperienceEntry, bullet: str) -> bool:
    if requirement.kind == "skill":
        wanted = skill_index().canonical_name(requirement.label).lower()
        named = {n.lower() for n in skill_index().find(bullet)}
        return wanted in named or contains_term(normalize(bullet), requirement.label)
    if requirement.kind == "management":
        return MANAGED_PEOPLE.search(bullet) is not None
    # The line of work or the years in it: the bullets of the entries the evidence names.
    return bool(requirement.evidence) and (entry.employer or "\0") in requirement.evidence


def points_of(resume: ResumeDoc, ledger: FitLedger | None, job: JobText, focus: Focus,
              about: frozenset[str] = frozenset()) -> list[Point]:
    """The posting's met requirements (must-haves first) that bullets prove, each with its
    best one or two bullets; a bullet serves one point only. ``about``: the entries'
    summaries (what the employer is), which describe rather than prove."""
    if ledger is None:
        return []
    wanted = _stems(job.description)
    entries = resume.experience[:3]

    def rank(item: tuple[ExperienceEntry, str]) -> tuple[int, int]:
        entry, bullet = item
        return (-(3 * focus.weight(bullet) + len(_stems(bullet) & wanted)), entries.index(entry))

    points: list[Point] = []
    used: set[str] = set()
    met = sorted((r for r in ledger.met() if r.kind in ("skill", "title", "experience_years", "management")),
                 key=lambda r: r.importance != "must")
    for requirement in met:
        found = [(e, b) for e in entries for b in e.bullets if b not in about and _proves(requirement, e, b)]
        if not found and requirement.kind in ("title", "experience_years"):
            # Shown by a target title, not an entry: the entries' bullets that speak to the posting.
            found = [(e, b) for e in entries for b in e.bullets if b not in about]
        if requirement.kind == "skill":
            home = next((p for p in points if any(item in found for item in p.items)), None)
            if home is not None:
                home.labels.append(requirement.label)
                continue
        fresh = sorted((item for item in found if item[1] not in used and bullet_parts(item[1])), key=rank)
        if requirement.kind in ("title", "experience_years"):
            fresh = [item for item in fresh if _stems(item[1]) & wanted]
        if not fresh or len(points) >= MAX_POINTS:
            continue
        chosen = fresh[:MAX_PER_POINT]
        used.update(b for _, b in chosen)
        points.append(Point([requirement.label] if requirement.kind == "skill" else [], chosen))
    return points


# --------------------------------------------------------------------------- sentences


def achievement(entry: ExperienceEntry, bullet: str, *, language: str, place: str) -> str | None:
    """One bullet as one sentence of the letter (at most two of its statements joined).
    ``place``: "first" (name the employer), "also" (same entry, same paragraph), "same"
    (the entry a paragraph before named) or "before" (an older entry after a newer one)."""
    parts = bullet_parts(bullet)
    if not parts or not entry.employer:
        return None
    current = entry.end_date is None
    clause = as_clause(parts[0], current=current) if language == "en" else None
    if clause is not None:
        key = {"first": "did_first", "also": "did_also", "same": "did_same", "same_again": "did_same_again",
               "same_third": "did_same_third", "before": "did_before", "after": "did_after"}[place]
        body = clause
    else:
        also = place in ("also", "same_again", "same_third")
        key = ("does_also" if also else "does") if current else ("did_also_noun" if also else "did")
        body = _lower_first(parts[0], language)
    follow = ""
    if len(parts) > 1:
        body, follow = _with_second(body, parts[1], language, current=current)
    sentence = tidy(phrase(language, key, employer=entry.employer, clause=body, text=body))
    if _words(sentence) > MAX_SENTENCE_WORDS and len(parts) > 1:
        return achievement(entry, parts[0], language=language, place=place)
    if _words(sentence) > MAX_SENTENCE_WORDS:
        return None
    return f"{sentence} {follow}" if follow and _words(follow) <= MAX_SENTENCE_WORDS else sentence


def tidy(sentence: str) -> str:
    """No stop doubled by a name that ends in one ("Fietsly B.V.")."""
    return re.sub(r"\.(?:\s*\.)+", ".", sentence)


def _is_statement(text: str) -> bool:
    """Whether a bullet's part has a verb of its own ("review comments dropped by half")."""
    return any(w in _IRREGULAR_PAST or (w.endswith("ed") and len(w) >= 5 and w not in _NOT_VERBS)
               or w in ("is", "are", "was", "were", "now") for w in re.findall(r"[a-z]+", text.lower()))


def _with_second(body: str, second: str, language: str, *, current: bool) -> tuple[str, str]:
    """A bullet's second statement joined to its first ("…, and cut the reporting time …",
    "…, with 30-day retention up 9 points"; German, French and Spanish join noun phrases),
    or, when it has a verb of its own, a sentence of its own: (body, following sentence)."""
    if _words(body) + _words(second) > 32:
        return body, ""
    if language != "en":
        return f"{body} {phrase(language, 'as_well')} {_lower_first(second, language)}", ""
    clause = as_clause(second[0].upper() + second[1:], current=current)
    first, _, rest = second.partition(" ")
    # "review comments dropped by half" is a statement, not "I review comments ...".
    if clause is not None and (_is_statement(first) or not _is_statement(rest)):
        return f"{body}, and {clause}", ""
    if _is_statement(second):
        return body, tidy(f"{second[0].upper()}{second[1:]}.")
    return f"{body}, with {_lower_first(second, language)}", ""


def _older(entry: ExperienceEntry, than: ExperienceEntry) -> bool:
    return (entry.start_date or "") < (than.start_date or "")


def point_paragraph(point: Point, *, language: str, named: dict[str, int]) -> LetterParagraph | None:
    """The point's lead ("You ask for SQL and Power BI.") and one sentence per bullet."""
    sentences = [phrase(language, "ask", labels=joined(point.labels[:3], language))] if point.labels else []
    evidence: list[str] = []
    previous: ExperienceEntry | None = None
    for entry, bullet in point.items:
        if previous is entry:
            place = "also"
        elif previous is not None:
            place = "before" if _older(entry, previous) else "after"
        elif entry.employer in named:
            # Vary the words that come back to a role an earlier paragraph named.
            place = ("same", "same_again", "same_third")[min(named[entry.employer], 2)]
        else:
            place = "first"
        sentence = achievement(entry, bullet, language=language, place=place)
        if sentence is None:
            continue
        sentences.append(sentence)
        evidence += [entry_heading(entry), bullet]
        named[entry.employer or ""] = named.get(entry.employer or "", 0) + (place.startswith("same"))
        previous = entry
    if not evidence:
        return None
    return LetterParagraph(text=" ".join(sentences), evidence=list(dict.fromkeys(evidence))[:10])


# --------------------------------------------------------------------------- the offline letter


def offline_cover(profile: CandidateProfile, job: JobText, score: ScoreResult, resume: ResumeDoc,
                  today: date) -> CoverLetterDoc:
    """The letter in the profile's own language (its bullets are quoted in it)."""
    language = profile_language(profile)
    focus = focus_of(score)
    paragraphs = [opening(job, resume, language)]
    named: dict[str, int] = {resume.experience[0].employer or "": 0} if resume.experience else {}
    about = frozenset(w.summary for w in source_resume(profile).work if w.summary)
    spelled = {skill_index().canonical_name(s).lower(): s for s in reversed(profile.all_skills())}
    for point in points_of(resume, score.ledger, job, focus, about):
        # The skill as the résumé spells it: the posting's spelling is the posting's words.
        point.labels = list(dict.fromkeys(spelled[key] for label in point.labels
                                          if (key := skill_index().canonical_name(label).lower()) in spelled))
        paragraph = point_paragraph(point, language=language, named=named)
        if paragraph is not None:
            paragraphs.append(paragraph)
    extra = background(profile, job, score.ledger, language)
    if extra is not None:
        paragraphs = paragraphs[:MAX_POINTS] + [extra]
    paragraphs.append(LetterParagraph(
        text=f"{closing_frame(language).format(title=job.title, company=job.company)} "
             f"{phrase(language, 'thanks')}"))
    paragraphs = [p.model_copy(update={"text": tidy(p.text)}) for p in paragraphs]
    return letter_doc(profile, job, paragraphs, today, language)


def profile_language(profile: CandidateProfile) -> str:
    """The language the résumé is written in: its summary, titles and bullets."""
    resume = source_resume(profile)
    text = " ".join([resume.basics.summary or "", *(w.position or "" for w in resume.work),
                     *(t for w in resume.work for t in (w.summary or "", *w.highlights))])
    return letter_language(text or profile.resume_text or "")


# Between the places of a posting that names several ("Toronto; Montréal", "Berlin | Remote").
_PLACE_SEPARATORS = re.compile(r"\s*(?:;|\||·| / | or )\s*")


def recipient_places(location: str | None) -> list[str]:
    """The posting's location for the letter's recipient block: each place once, as people
    write it, and no "Remote" or "Hybrid" as if it were a place."""
    parts = [part for part in _PLACE_SEPARATORS.split(location or "") if part.strip()]
    places = places_as_written(parts)
    return [" · ".join(places)] if places else []


def letter_doc(profile: CandidateProfile, job: JobText, paragraphs: list[LetterParagraph],
               today: date, language: str = "en") -> CoverLetterDoc:
    return CoverLetterDoc(
        sender_name=profile.display_name(),
        sender_contact=contact_lines(profile),
        date_line=date_line(today, language),
        recipient_lines=[phrase(language, "recipient", company=job.company),
                         *recipient_places(job.location)],
        salutation=phrase(language, "salutation", company=job.company),
        paragraphs=paragraphs,
        closing=phrase(language, "sign_off"),
        signature=profile.display_name(),
    )


def opening(job: JobText, resume: ResumeDoc, language: str = "en") -> LetterParagraph:
    """The role applied for, and the job seeker's latest role."""
    text = opening_frame(language).format(title=job.title, company=job.company)
    if not resume.experience:
        return LetterParagraph(text=text)
    latest = resume.experience[0]
    if latest.position and latest.employer:
        key = "current" if latest.end_date is None else "past"
        text += " " + phrase(language, key, position=latest.position, employer=latest.employer)
    return LetterParagraph(text=text, evidence=[entry_heading(latest)])


def background(profile: CandidateProfile, job: JobText, ledger: FitLedger | None,
               language: str = "en") -> LetterParagraph | None:
    """What else the posting asks for that the profile states in so many words: a degree,
    a licence, a language, the place. Nothing the posting does not ask about."""
    if ledger is None:
        return None
    met = {r.kind: r for r in reversed(ledger.met())}
    resume = source_resume(profile)
    sentences: list[str] = []
    evidence: list[str] = []
    school = next((s for s in resume.education if s.area and s.institution), None)
    if "degree" in met and school is not None:
        sentences.append(phrase(language, "studied", area=school.area or "",
                                institution=school.institution or ""))
        evidence.append(met["degree"].evidence or school.institution or "")
    for requirement in (r for r in ledger.met() if r.kind == "licence"):
        certificate = held_licence(resume.certificates, requirement.label)
        if certificate and phrase(language, "hold", certificate=certificate) not in sentences:
            sentences.append(phrase(language, "hold", certificate=certificate))
            evidence.append(certificate)
    asked = [r for r in ledger.met() if r.kind == "language"]
    spoken = [language_text(x) for x in resume.languages if x.language and any(
        _same_language(x.language, r.label) for r in asked)]
    if spoken:
        sentences.append(phrase(language, "speak", languages=joined(spoken, language)))
        evidence += spoken
    place = place_sentence(profile, job, language) if "location" in met else None
    if place is not None:
        sentences.append(place)
        evidence.append(met["location"].evidence or "")
    if not sentences:
        return None
    return LetterParagraph(text=" ".join(sentences), evidence=[e for e in evidence if e][:10])


def _same_language(listed: str, label: str) -> bool:
    """"Deutsch" in the résumé is the posting's "German (C1+)"."""
    name = (english_name(listed) or listed).lower()
    return label.lower().startswith(name)


def held_licence(certificates: list[Certificate], label: str) -> str | None:
    """The certificate that holds a licence the ledger marks met ("Registered Nurse (RN)"),
    by its acronym or its name."""
    expansion, _, acronym = label.partition(" (")
    acronym = acronym.rstrip(")") or expansion
    for certificate in certificates:
        name = certificate.name or ""
        initials = "".join(w[0] for w in re.findall(r"[A-Z][\w'’-]*", name))
        if (re.search(rf"(?<![\w-]){re.escape(acronym)}(?![\w-])", name)
                or contains_term(normalize(name), expansion) or acronym.upper() in initials):
            return name
    return None


_ALLOWED_MODES = {"remote_only": {"remote"}, "remote_or_hybrid": {"remote", "hybrid"}}


def place_sentence(profile: CandidateProfile, job: JobText, language: str = "en") -> str | None:
    """Only what answers the posting: the remote preference when the posting's mode is
    not one the job seeker asked for (and the fit check still found the place met), else
    the listed place the office lies in. Relocation is never offered."""
    arrangement = posting_arrangement(job.remote, job.location, job.description)
    preference = profile.remote_preference
    allowed = _ALLOWED_MODES.get(preference)
    if allowed is not None and arrangement.mode in ("remote", "hybrid", "onsite"):
        return None if arrangement.mode in allowed else phrase(language, preference)
    if arrangement.mode not in ("hybrid", "onsite") or not arrangement.city:
        return None
    home = profile.resume.basics.location
    if home is not None and home.city and place_covered(arrangement.city, [home.city]):
        return phrase(language, "based", city=home.city)
    listed = next((p for p in profile_locations(profile) if place_covered(arrangement.city, [p])), None)
    return phrase(language, "looking_in", place=listed) if listed else None


# --------------------------------------------------------------------------- with a model

COVER_SYSTEM = (
    "You write a concise, specific cover letter in the language named by letterLanguage: 3–4 short "
    "paragraphs, at most 350 words, plain grammatical prose in sentence case, no clichés, no lists, "
    "one achievement per sentence, and nothing the posting does not ask about. Use only facts from "
    "the evidence catalog, and cite for every paragraph the ids of the evidence its claims rest on. "
    "Claim only the requirements listed as met; never mention the ones listed as missing or unknown. Never "
    "state a location, remote, relocation, visa, salary or availability preference unless "
    "statedPreferences holds it, and never invent employers, titles, numbers, degrees, "
    "certifications or skills. Answer with one JSON object only: "
    '{"paragraphs": [{"text": str, "evidence": [evidence id]}]}.'
)
COVER_SHAPE = '{"paragraphs": [{"text": str, "evidence": [evidence id]}]}'


def evidence_catalog(profile: CandidateProfile, resume: ResumeDoc) -> dict[str, str]:
    """Id → the profile item a letter may cite (ids keep the model from retyping them)."""
    catalog: dict[str, str] = {}
    for i, entry in enumerate(resume.experience):
        catalog[f"entry{i}"] = entry_heading(entry)
        catalog.update({f"entry{i}.bullet{j}": bullet for j, bullet in enumerate(entry.bullets)})
    source = source_resume(profile)
    catalog.update({f"education{k}": ", ".join(filter(None, (line.degree, line.institution)))
                    for k, line in enumerate(resume.education)})
    catalog.update({f"language{k}": text for k, text in enumerate(resume.languages)})
    catalog.update({f"certification{k}": text for k, text in enumerate(resume.certifications)})
    catalog.update({f"skill{k}": skill for k, skill in enumerate(source.skill_names())})
    return catalog


def rests_on(text: str, profile: CandidateProfile, resume: ResumeDoc) -> list[str]:
    """The items of the evidence catalog (what a written letter cites) that a paragraph
    names, in catalog order: a work entry by its employer, one of its bullets said again
    (also as "I <bullet>"), a degree by its institution, a language, a certification, a
    skill. Used for a paragraph the user wrote, so "Rests on" follows their words."""
    said = normalize(text)
    skills = {name.lower() for name in skill_index().find(text)}
    entries = dict(enumerate(resume.experience))
    found: list[str] = []
    for ref, item in evidence_catalog(profile, resume).items():
        head, _, rest = ref.partition(".")
        if rest.startswith("bullet"):
            named = contains_term(said, item.strip().rstrip(".;"))
        elif head.startswith("entry"):
            entry = entries[int(head.removeprefix("entry"))]
            named = bool(entry.employer) and contains_term(said, entry.employer or "")
        elif head.startswith("education"):
            line = resume.education[int(head.removeprefix("education"))]
            named = any(part and contains_term(said, part) for part in (line.institution, line.degree))
        elif head.startswith("language"):
            named = contains_term(said, item.split("(")[0])
        elif head.startswith("skill"):
            named = skill_index().canonical_name(item).lower() in skills or contains_term(said, item)
        else:
            named = contains_term(said, item)
        if named and item not in found:
            found.append(item)
    return found[:10]


def stated_preferences(profile: CandidateProfile) -> dict[str, object]:
    """The preferences a letter may state, as the profile holds them (no salary: a letter
    that names a number negotiates against the job seeker)."""
    stated: dict[str, object] = {"remotePreference": profile.remote_preference}
    if profile_locations(profile):
        stated["locations"] = profile_locations(profile)
    if profile.work_authorization:
        stated["workAuthorization"] = profile.work_authorization
    return stated


def cover_prompt(profile: CandidateProfile, job: JobText, score: ScoreResult, resume: ResumeDoc,
                 language: str = "en") -> str:
    ledger = score.ledger
    met = [{"label": r.label, "evidence": r.evidence} for r in ledger.met()] if ledger else score.matched
    unmet = [r.label for r in ledger.requirements if r.status != "met"] if ledger else score.missing
    return json.dumps({
        "candidate": profile.display_name(),
        "letterLanguage": LANGUAGE_NAMES.get(language, "English"),
        "evidenceCatalog": evidence_catalog(profile, resume),
        "statedPreferences": stated_preferences(profile),
        "fit": {"met": met, "missingOrUnknown": unmet},
        "job": {"title": job.title, "company": job.company, "location": job.location,
                "description": job.description[:8000]},
    }, ensure_ascii=False)


class _Paragraph(CamelModel):
    text: str = Field(min_length=1, max_length=2000)
    evidence: list[str] = Field(default_factory=list, max_length=10)


class _CoverReply(CamelModel):
    paragraphs: list[_Paragraph] = Field(min_length=1, max_length=6)


def parse_cover_reply(text: str, profile: CandidateProfile, job: JobText, resume: ResumeDoc,
                      today: date, language: str = "en") -> CoverLetterDoc:
    """The model's paragraphs with their cited evidence resolved; ModelOutputInvalid (with the
    problem) for a wrong shape, an unknown evidence id or a letter over one page."""
    reply = validated_reply(text, _CoverReply)
    catalog = evidence_catalog(profile, resume)
    paragraphs: list[LetterParagraph] = []
    for i, paragraph in enumerate(reply.paragraphs):
        unknown = [ref for ref in paragraph.evidence if ref not in catalog]
        if unknown:
            raise ModelOutputInvalid(problem=f"paragraphs.{i}.evidence: {', '.join(unknown[:3])} "
                                             "is not an id of the evidence catalog")
        paragraphs.append(LetterParagraph(text=" ".join(paragraph.text.split()),
                                          evidence=[catalog[ref] for ref in paragraph.evidence]))
    words = sum(len(p.text.split()) for p in paragraphs)
    if words > MAX_LETTER_WORDS:
        raise ModelOutputInvalid(problem=f"the letter has {words} words; at most 350")
    return letter_doc(profile, job, paragraphs, today, language)


def model_letter_language(profile: CandidateProfile, job: JobText, setting: str = "profile") -> str:
    """The language a model writes the letter in: the résumé's, or with the setting
    ``materials.letterLanguage: posting`` the posting's."""
    return text_language(job.description) if setting == "posting" else profile_language(profile)


async def model_cover(complete: Complete, profile: CandidateProfile, job: JobText, score: ScoreResult,
                      resume: ResumeDoc, today: date, *, letter_language: str = "profile") -> CoverLetterDoc:
    """At most two calls; the result has passed the truthfulness gate."""
    language = model_letter_language(profile, job, letter_language)

    def read(reply: str) -> CoverLetterDoc:
        letter = parse_cover_reply(reply, profile, job, resume, today, language)
        check_letter(letter, profile, score.ledger, job)
        return letter

    prompt = cover_prompt(profile, job, score, resume, language)
    return await ask_with_one_repair(complete, COVER_SYSTEM, prompt, read, COVER_SHAPE)
