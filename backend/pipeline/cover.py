"""Cover: a short, honest letter built from the fit ledger's met requirements.

Every claim names real evidence (a work entry, one of its bullets, a degree, a language),
and the paragraph carries that evidence in ``LetterParagraph.evidence``. A bullet becomes
a clause only when it starts with a verb ("Built Kafka pipelines" → "At Northwind, I
built Kafka pipelines."); other bullets are left to the résumé rather than spliced in.
The letter never states a place, work arrangement, relocation, visa, salary or
availability preference the profile does not hold, and never claims a requirement the
ledger marks missing or unknown: the truthfulness gate checks it, also offline.
"""

from __future__ import annotations

import json
import re
from datetime import date

from pydantic import Field

from backend.domain.fit import FitLedger
from backend.domain.model import CamelModel
from backend.domain.profile import CandidateProfile
from backend.pipeline.documents import CoverLetterDoc, ExperienceEntry, LetterParagraph, ResumeDoc
from backend.pipeline.fit.places import place_covered, posting_arrangement
from backend.pipeline.fit.synonyms import skill_index
from backend.pipeline.score import Complete, JobText, ModelOutputInvalid, ScoreResult
from backend.pipeline.tailor import Focus, ask_with_one_repair, contact_lines, focus_of, validated_reply
from backend.pipeline.text import contains_term, human_list, normalize
from backend.pipeline.truth import (
    LETTER_CLOSING,
    LETTER_OPENING,
    check_letter,
    entry_heading,
    language_text,
    profile_locations,
    source_resume,
)

MAX_ACHIEVEMENTS = 3
MAX_LETTER_WORDS = 400  # one page with the header and the closing

# A bullet that opens with one of these (or a regular past tense) reads as "I <bullet>".
_IRREGULAR_PAST = frozenset(("built", "led", "ran", "wrote", "drove", "grew", "cut", "made", "won", "set",
                             "took", "brought", "taught", "began", "kept", "held", "sold", "found", "rebuilt",
                             "oversaw", "spoke", "rewrote", "overhauled", "sped"))
_PRESENT_VERBS = frozenset(("build", "lead", "run", "write", "drive", "grow", "own", "design", "develop",
                            "maintain", "manage", "mentor", "ship", "create", "deliver", "support",
                            "operate"))
# Words ending in -ed that usually open a noun phrase, not an action.
_NOT_VERBS = frozenset(("speed", "need", "seed", "feed", "embedded", "distributed", "based", "advanced",
                        "detailed", "dedicated", "related", "red"))


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


# --------------------------------------------------------------------------- the offline letter


def offline_cover(profile: CandidateProfile, job: JobText, score: ScoreResult, resume: ResumeDoc,
                  today: date) -> CoverLetterDoc:
    focus = focus_of(score)
    paragraphs = [opening(job, resume, focus)]
    for paragraph in (achievements(resume, focus), background(profile, job, score.ledger)):
        if paragraph is not None:
            paragraphs.append(paragraph)
    paragraphs.append(LetterParagraph(
        text=f"{LETTER_CLOSING.format(title=job.title, company=job.company)} "
             "Thank you for your time and consideration."))
    return letter_doc(profile, job, paragraphs, today)


def letter_doc(profile: CandidateProfile, job: JobText, paragraphs: list[LetterParagraph],
               today: date) -> CoverLetterDoc:
    return CoverLetterDoc(
        sender_name=profile.display_name(),
        sender_contact=contact_lines(profile),
        date_line=today.strftime("%B %d, %Y").replace(" 0", " "),
        recipient_lines=[f"Hiring team, {job.company}"] + ([job.location] if job.location else []),
        salutation=f"Dear {job.company} hiring team,",
        paragraphs=paragraphs,
        closing="Kind regards,",
        signature=profile.display_name(),
    )


def _entry_skills(entry: ExperienceEntry, focus: Focus) -> list[str]:
    """The posting's met skills this entry's own lines name."""
    named = {n.lower() for n in skill_index().find(" ".join([entry.position or "", *entry.bullets]))}
    return [s for s in focus.strengths if skill_index().canonical_name(s).lower() in named]


def opening(job: JobText, resume: ResumeDoc, focus: Focus) -> LetterParagraph:
    text = LETTER_OPENING.format(title=job.title, company=job.company)
    if not resume.experience:
        if focus.strengths:
            text += f" My skills include {human_list(focus.strengths[:4])}."
        return LetterParagraph(text=text, evidence=[s for s in resume.skill_items() if focus.matches(s)][:4])
    latest = resume.experience[0]
    current = latest.end_date is None
    role = " ".join(filter(None, (f"as {latest.position}" if latest.position else None,
                                  f"at {latest.employer}" if latest.employer else None)))
    if role:
        text += f" {'I currently work' if current else 'Most recently, I worked'} {role}"
        skills = _entry_skills(latest, focus)[:3]
        text += (f", where I {'use' if current else 'used'} {human_list(skills)}." if skills else ".")
    return LetterParagraph(text=text, evidence=[entry_heading(latest)])


def achievements(resume: ResumeDoc, focus: Focus) -> LetterParagraph | None:
    """Up to three achievements that prove met requirements, each as a clause of its own
    entry: "At Northwind, I built … and tuned …. Before that, at Acme, I wrote …"."""
    sentences: list[str] = []
    evidence: list[str] = []
    budget = MAX_ACHIEVEMENTS
    for entry in resume.experience[:2]:
        current = entry.end_date is None
        proving = [b for b in entry.bullets if focus.weight(b) > 0]
        clauses = [(b, c) for b in proving if (c := as_clause(b, current=current)) is not None]
        clauses = clauses[:min(2, budget)]
        if not clauses or not entry.employer:
            continue
        lead = "Before that, at" if sentences else "At"
        sentences.append(f"{lead} {entry.employer}, I {' and '.join(c for _, c in clauses)}.")
        evidence += [entry_heading(entry), *(b for b, _ in clauses)]
        budget -= len(clauses)
        if budget <= 0:
            break
    if not sentences:
        return None
    return LetterParagraph(text=" ".join(sentences), evidence=evidence[:10])


def background(profile: CandidateProfile, job: JobText, ledger: FitLedger | None) -> LetterParagraph | None:
    """Education, languages and the place, only where the ledger marks them met and the
    profile states them in so many words."""
    if ledger is None:
        return None
    met = {r.kind: r for r in reversed(ledger.met())}
    resume = source_resume(profile)
    sentences: list[str] = []
    evidence: list[str] = []
    school = next((s for s in resume.education if s.area and s.institution), None)
    if "degree" in met and school is not None:
        sentences.append(f"I studied {school.area} at {school.institution}.")
        evidence.append(met["degree"].evidence or school.institution or "")
    spoken = [language_text(x) for x in resume.languages if x.language and any(
        r.kind == "language" and x.language.lower() in r.label.lower() for r in ledger.met())]
    if spoken:
        sentences.append(f"I speak {human_list(spoken)}.")
        evidence += spoken
    place = place_sentence(profile, job) if "location" in met else None
    if place is not None:
        sentences.append(place)
        evidence.append(met["location"].evidence or "")
    if not sentences:
        return None
    return LetterParagraph(text=" ".join(sentences), evidence=[e for e in evidence if e][:10])


def place_sentence(profile: CandidateProfile, job: JobText) -> str | None:
    """Only what the preferences and basics hold: the remote preference as stated, or the
    listed place the office lies in."""
    arrangement = posting_arrangement(job.remote, job.location, job.description)
    preference = profile.remote_preference
    if arrangement.mode == "remote":
        return {"remote_only": "I am looking for remote work.",
                "remote_or_hybrid": "I am looking for remote or hybrid work."}.get(preference)
    if arrangement.mode not in ("hybrid", "onsite") or not arrangement.city or preference == "remote_only":
        return None
    home = profile.resume.basics.location
    if home is not None and home.city and place_covered(arrangement.city, [home.city]):
        return f"I am based in {home.city}."
    listed = next((p for p in profile_locations(profile) if place_covered(arrangement.city, [p])), None)
    return f"I am looking for work in {listed}." if listed else None


# --------------------------------------------------------------------------- with a model

COVER_SYSTEM = (
    "You write a concise, specific cover letter: 3–4 short paragraphs, at most 350 words, plain "
    "grammatical prose in sentence case, no clichés, no lists. Use only facts from the evidence "
    "catalog, and cite for every paragraph the ids of the evidence its claims rest on. Claim only "
    "the requirements listed as met; never mention the ones listed as missing or unknown. Never "
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


def cover_prompt(profile: CandidateProfile, job: JobText, score: ScoreResult, resume: ResumeDoc) -> str:
    ledger = score.ledger
    met = [{"label": r.label, "evidence": r.evidence} for r in ledger.met()] if ledger else score.matched
    unmet = [r.label for r in ledger.requirements if r.status != "met"] if ledger else score.missing
    return json.dumps({
        "candidate": profile.display_name(),
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
                      today: date) -> CoverLetterDoc:
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
    return letter_doc(profile, job, paragraphs, today)


async def model_cover(complete: Complete, profile: CandidateProfile, job: JobText, score: ScoreResult,
                      resume: ResumeDoc, today: date) -> CoverLetterDoc:
    """At most two calls; the result has passed the truthfulness gate."""
    def read(reply: str) -> CoverLetterDoc:
        letter = parse_cover_reply(reply, profile, job, resume, today)
        check_letter(letter, profile, score.ledger, job)
        return letter

    return await ask_with_one_repair(complete, COVER_SYSTEM, cover_prompt(profile, job, score, resume), read,
                                     COVER_SHAPE)
