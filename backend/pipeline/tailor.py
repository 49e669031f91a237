"""Tailor: the profile's own résumé, selected and ordered for one posting.

Every work entry keeps its employer, title, dates, location and its own bullets; entries
stay newest first. Tailoring only chooses: within each entry the bullets that prove the
posting's met requirements (the fit ledger) come first, and long entries are trimmed to
fit two pages, each trimmed bullet recorded in ``dropped`` with the reason. Skills keep
the profile's groups (matched ones first); education, languages and certifications are
the profile's.

With a model (``model_tailor``) the model picks and may rephrase bullets per entry and
write the summary; the entries' facts still come from the profile, and the result goes
through the truthfulness gate, with one repair call for a malformed or rejected answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

from pydantic import Field, ValidationError

from backend.domain.model import CamelModel
from backend.domain.profile import CandidateProfile
from backend.domain.resume import JsonResume, WorkEntry
from backend.pipeline.coverage import keyword_coverage, names_term
from backend.pipeline.documents import (
    DroppedItem,
    EducationLine,
    ExperienceEntry,
    ResumeContact,
    ResumeDoc,
    SkillLine,
)
from backend.pipeline.fit.synonyms import skill_index
from backend.pipeline.score import (
    Complete,
    JobText,
    ModelOutputInvalid,
    RepairFailed,
    ScoreResult,
    _json_object,
)
from backend.pipeline.text import contains_term, human_list, normalize, title_similarity
from backend.pipeline.truth import (
    SUMMARY_ROLE,
    UnsupportedClaim,
    certificate_text,
    check_resume,
    degree_text,
    language_text,
    profile_links,
    profile_locations,
    source_resume,
)

# Two pages: the two newest entries show up to six bullets, the next two four, older ones two.
BULLET_LIMITS = (6, 6, 4, 4)
OLD_ENTRY_BULLETS = 2
MAX_SKILL_LINES = 30  # ResumeDoc's limit
MAX_SUMMARY = 2400


# --------------------------------------------------------------------------- what the posting wants


@dataclass(frozen=True)
class Focus:
    """The posting's met requirements as weights: must-haves count twice."""

    skills: dict[str, int]
    """Canonical lower-case skill name → weight."""
    phrases: dict[str, int]
    """Met abilities outside the synonym list ("distributed systems") → weight."""
    strengths: list[str]
    """Met skill labels, must-haves first: what the summary and letter may name."""

    def weight(self, text: str) -> int:
        found = {name.lower() for name in skill_index().find(text)}
        lowered = normalize(text)
        return (sum(w for name, w in self.skills.items() if name in found)
                + sum(w for phrase, w in self.phrases.items() if contains_term(lowered, phrase)))

    def matches(self, skill: str) -> bool:
        return skill_index().canonical_name(skill).lower() in self.skills or normalize(skill) in self.phrases


def focus_of(score: ScoreResult) -> Focus:
    """What to lead with, from the ledger; from the matched labels for older scores."""
    index = skill_index()
    skills: dict[str, int] = {}
    phrases: dict[str, int] = {}
    if score.ledger is None:
        met = [(label, "must") for label in score.matched]
        proven = {label for label, _ in met}
    else:
        met = [(r.label, r.importance) for r in score.ledger.met() if r.kind in ("skill", "keyword")]
        # A met "keyword" is the job seeker's must-have word found in the POSTING: it orders
        # bullets, but only a met skill (proven by the profile) is a strength to claim.
        proven = {r.label for r in score.ledger.met() if r.kind == "skill"}
    for label, importance in met:
        weight = 2 if importance == "must" else 1
        canonical = index.canonical_name(label)
        if index.find(canonical):
            skills[canonical.lower()] = max(weight, skills.get(canonical.lower(), 0))
        else:
            phrases[normalize(label)] = max(weight, phrases.get(normalize(label), 0))
    ordered = sorted(met, key=lambda item: item[1] != "must")
    strengths = list(dict.fromkeys(label for label, _ in ordered
                                   if label in proven and index.find(index.canonical_name(label))))
    return Focus(skills, phrases, strengths)


# --------------------------------------------------------------------------- the offline résumé


def offline_tailor(profile: CandidateProfile, job: JobText, score: ScoreResult) -> ResumeDoc:
    resume = source_resume(profile)
    focus = focus_of(score)
    experience: list[ExperienceEntry] = []
    dropped: list[DroppedItem] = []
    for position, work in enumerate(newest_first(resume.work)):
        ranked = ranked_bullets(entry_bullets(work), focus)
        entry, trimmed = trimmed_entry(work, ranked, bullet_limit(position))
        experience.append(entry)
        dropped += trimmed
    skills, skill_drops = skill_lines(resume, focus)
    doc = _resume_doc(profile, job, resume, experience=experience, skills=skills,
                      summary=tailored_summary(profile, job, focus), dropped=dropped + skill_drops)
    return with_proven_terms(profile, score, doc)


def with_proven_terms(profile: CandidateProfile, score: ScoreResult, doc: ResumeDoc) -> ResumeDoc:
    """Every must-have term of the posting that the profile proves shows in the résumé: a
    trimmed bullet of the profile's that names it comes back to its entry, else the skill
    joins the skills. A term the profile does not prove is never added."""
    missing = [c.term for c in keyword_coverage(score.ledger, profile, doc, today=date.today())
               if c.proven and not c.in_resume]
    if not missing:
        return doc
    experience = [entry.model_copy(update={"bullets": list(entry.bullets)}) for entry in doc.experience]
    dropped, skills = list(doc.dropped), list(doc.skills)
    works = newest_first(source_resume(profile).work)
    for term in missing:
        restored = next(((entry, bullet) for entry, work in zip(experience, works, strict=False)
                         for bullet in entry_bullets(work)
                         if bullet not in entry.bullets and names_term(bullet, term)), None)
        if restored is not None and len(restored[0].bullets) < 30:
            restored[0].bullets.append(restored[1])
            dropped = [d for d in dropped if not (d.kind == "bullet" and d.text == restored[1][:600])]
        elif skill_index().find(skill_index().canonical_name(term)):
            loose = next((line for line in skills if line.group is None), None)
            if loose is None:
                loose = SkillLine(group=None, items=[])
                skills = [*skills, loose][:MAX_SKILL_LINES]
            loose.items.append(skill_index().canonical_name(term))
    return doc.model_copy(update={"experience": experience, "skills": skills, "dropped": dropped})


def _resume_doc(profile: CandidateProfile, job: JobText, resume: JsonResume, *,
                experience: list[ExperienceEntry], skills: list[SkillLine], summary: str,
                dropped: list[DroppedItem]) -> ResumeDoc:
    """The header, education, languages and certifications are always the profile's."""
    return ResumeDoc(
        name=profile.display_name(), headline=headline_for(profile, job), contact=contact_for(profile),
        summary=summary, skills=skills, experience=experience[:30],
        education=[EducationLine(institution=s.institution, degree=degree_text(s), start_date=s.start_date,
                                 end_date=s.end_date) for s in resume.education[:20]],
        languages=[language_text(x) for x in resume.languages if x.language][:20],
        certifications=[certificate_text(c) for c in resume.certificates if c.name][:40],
        dropped=dropped[:400],
    )


def headline_for(profile: CandidateProfile, job: JobText) -> str:
    """The profile's own headline; without one, the target title nearest the posting's."""
    if profile.headline:
        return profile.headline
    return max(profile.target_titles, key=lambda t: title_similarity(t, job.title), default="")


def contact_for(profile: CandidateProfile) -> ResumeContact:
    return ResumeContact(email=profile.email, phone=profile.phone, locations=profile_locations(profile)[:10],
                         links=profile_links(profile)[:10])


def contact_lines(profile: CandidateProfile) -> list[str]:
    """The letter's sender block: email, phone, and every listed place on one line."""
    contact = contact_for(profile)
    return [line for line in (contact.email, contact.phone, " · ".join(contact.locations)) if line]


def newest_first(work: list[WorkEntry]) -> list[WorkEntry]:
    """Reverse-chronological: current roles first, then by end and start date. Without dates
    on every entry the profile's own order stands (it is newest first by convention)."""
    if not all(entry.start_date for entry in work):
        return list(work)
    return sorted(work, key=lambda e: (e.end_date is None, e.end_date or "", e.start_date or ""),
                  reverse=True)


def entry_bullets(work: WorkEntry) -> list[str]:
    """An entry's own lines: its summary (when it has one) and its highlights."""
    return list(dict.fromkeys(line for line in (work.summary, *work.highlights) if line))


def ranked_bullets(bullets: list[str], focus: Focus) -> list[str]:
    """Bullets that prove more of the posting's met requirements first; ties keep the
    profile's order (sorted is stable)."""
    return sorted(bullets, key=lambda bullet: -focus.weight(bullet))


def bullet_limit(position: int) -> int:
    return BULLET_LIMITS[position] if position < len(BULLET_LIMITS) else OLD_ENTRY_BULLETS


def experience_entry(work: WorkEntry, bullets: list[str]) -> ExperienceEntry:
    return ExperienceEntry(position=work.position, employer=work.name, location=work.location,
                           start_date=work.start_date, end_date=work.end_date, bullets=bullets[:30])


def trimmed_entry(work: WorkEntry, ranked: list[str],
                  limit: int) -> tuple[ExperienceEntry, list[DroppedItem]]:
    reason = (f"Trimmed to fit two pages: {work.heading()} keeps the {limit} bullets that best fit "
              "this posting")
    dropped = [DroppedItem(kind="bullet", text=bullet[:600], reason=reason[:300])
               for bullet in ranked[limit:]]
    return experience_entry(work, ranked[:limit]), dropped


def skill_lines(resume: JsonResume, focus: Focus) -> tuple[list[SkillLine], list[DroppedItem]]:
    """The profile's groups in its order, matched skills first within each; a group with no
    keywords is itself a skill. Nothing is dropped unless the groups exceed the limit."""
    lines: list[SkillLine] = []
    loose: list[str] = []
    for group in resume.skills:
        if not group.keywords:
            loose += [group.name] if group.name else []
            continue
        ordered = sorted(group.keywords, key=lambda skill: not focus.matches(skill))
        lines.append(SkillLine(group=group.name, items=ordered))
    if loose:
        lines.append(SkillLine(group=None, items=sorted(loose, key=lambda skill: not focus.matches(skill))))
    reason = f"More than {MAX_SKILL_LINES} skill groups; edit the profile to merge some"
    dropped = [DroppedItem(kind="skill", text=skill[:600], reason=reason)
               for line in lines[MAX_SKILL_LINES:] for skill in line.items]
    return lines[:MAX_SKILL_LINES], dropped


def tailored_summary(profile: CandidateProfile, job: JobText, focus: Focus) -> str:
    """The profile's own summary (without any contact detail that crept into it), plus one
    sentence naming the role, the company and the matched strengths."""
    own = own_summary(profile)
    if not focus.strengths:
        return own
    named = SUMMARY_ROLE.format(title=job.title, company=job.company)
    role = f"Brings {human_list(focus.strengths[:4])} {named}"
    return f"{own} {role}".strip()[:3000]


def own_summary(profile: CandidateProfile) -> str:
    basics = source_resume(profile).basics
    contact = [normalize(x) for x in (basics.email, basics.phone, basics.url) if x]
    sentences = split_sentences(basics.summary or "")
    kept = [s for s in sentences if not any(c in normalize(s) for c in contact)]
    text = ""
    for sentence in kept:  # whole sentences only: a cut sentence would read as a claim
        if len(text) + len(sentence) + 1 > MAX_SUMMARY:
            break
        text = f"{text} {sentence}".strip()
    return text


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])", text.strip()) if s.strip()]


# --------------------------------------------------------------------------- with a model

TAILOR_SYSTEM = (
    "You tailor a candidate's résumé to one job posting. You never change employers, titles, "
    "dates or locations, and you never move a bullet from one work entry to another. For each work "
    "entry (by its index) choose which of ITS OWN bullets to keep (by their index) and in which "
    "order: the bullets that prove the posting's met requirements first, at most the entry's "
    "maxBullets. You may rephrase a bullet for clarity, but only with facts that bullet and its "
    "entry state: no new numbers, tools, employers, degrees or certifications. Write a summary of "
    "2–4 sentences from the candidate's own summary and the met requirements, with no contact "
    "details and no location, remote, relocation, visa, salary or availability statements. Answer "
    "with one JSON object only: " + '{"summary": str, "entries": [{"entry": int, "bullets": '
    '[{"source": int, "text": str}]}]}.'
)
TAILOR_SHAPE = '{"summary": str, "entries": [{"entry": int, "bullets": [{"source": int, "text": str}]}]}'


def tailor_prompt(profile: CandidateProfile, job: JobText, score: ScoreResult) -> str:
    resume = source_resume(profile)
    ledger = score.ledger
    entries = [{"entry": i, "heading": work.heading(), "maxBullets": bullet_limit(i),
                "bullets": [{"source": j, "text": b} for j, b in enumerate(entry_bullets(work))]}
               for i, work in enumerate(newest_first(resume.work))]
    return json.dumps({
        "candidate": {"summary": own_summary(profile), "headline": profile.headline, "entries": entries,
                      "skills": profile.all_skills()},
        "job": {"title": job.title, "company": job.company, "description": job.description[:10000]},
        "fit": {"score": score.score,
                "met": [{"label": r.label, "evidence": r.evidence} for r in ledger.met()] if ledger
                else score.matched,
                "missing": score.missing},
    }, ensure_ascii=False)


class _BulletChoice(CamelModel):
    source: int = Field(ge=0)
    text: str = Field(default="", max_length=600)


class _EntryChoice(CamelModel):
    entry: int = Field(ge=0)
    bullets: list[_BulletChoice] = Field(default_factory=list, max_length=30)


class _TailorReply(CamelModel):
    summary: str = Field(default="", max_length=3000)
    entries: list[_EntryChoice] = Field(default_factory=list, max_length=60)


def parse_tailor_reply(text: str, profile: CandidateProfile, job: JobText, score: ScoreResult) -> ResumeDoc:
    """The model's choices applied to the profile's entries; ModelOutputInvalid (with the
    problem, for the repair) when the reply is not the shape or names bullets it may not."""
    reply = validated_reply(text, _TailorReply)
    resume = source_resume(profile)
    works = newest_first(resume.work)
    choices: dict[int, _EntryChoice] = {}
    for choice in reply.entries:
        if choice.entry >= len(works) or choice.entry in choices:
            raise ModelOutputInvalid(problem=f"entries: entry {choice.entry} is not a work entry index "
                                             f"(0–{len(works) - 1}) or is listed twice")
        choices[choice.entry] = choice
    focus = focus_of(score)
    experience: list[ExperienceEntry] = []
    dropped: list[DroppedItem] = []
    for position, work in enumerate(works):
        own = entry_bullets(work)
        choice = choices.get(position)
        if choice is None:  # not mentioned: the offline choice for this entry
            entry, trimmed = trimmed_entry(work, ranked_bullets(own, focus), bullet_limit(position))
        else:
            entry, trimmed = _chosen_entry(work, own, choice, bullet_limit(position), position)
        experience.append(entry)
        dropped += trimmed
    skills, skill_drops = skill_lines(resume, focus)
    summary = " ".join(reply.summary.split()) or tailored_summary(profile, job, focus)
    return _resume_doc(profile, job, resume, experience=experience, skills=skills, summary=summary,
                       dropped=dropped + skill_drops)


def _chosen_entry(work: WorkEntry, own: list[str], choice: _EntryChoice, limit: int,
                  position: int) -> tuple[ExperienceEntry, list[DroppedItem]]:
    sources = [c.source for c in choice.bullets]
    bad = [s for s in sources if s >= len(own)]
    if bad or len(set(sources)) != len(sources):
        raise ModelOutputInvalid(problem=f"entries[{position}].bullets: source must be one of this entry's "
                                         f"bullet indexes 0–{len(own) - 1}, each once")
    texts = [" ".join(c.text.split()) or own[c.source] for c in choice.bullets]
    reason = "Left out as less relevant to this posting"
    dropped = [DroppedItem(kind="bullet", text=own[i][:600], reason=reason)
               for i in range(len(own)) if i not in sources[:limit]]
    return experience_entry(work, texts[:limit]), dropped


Model = TypeVar("Model", bound=CamelModel)


def validated_reply(text: str, shape: type[Model]) -> Model:
    try:
        data = json.loads(_json_object(text))
    except ValueError as error:
        problem = f"the reply is not one JSON object ({type(error).__name__})"
        raise ModelOutputInvalid(problem=problem) from None
    try:
        return shape.model_validate(data)
    except ValidationError as error:
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}"
                    for e in error.errors(include_url=False, include_input=False)[:8]]
        raise ModelOutputInvalid(problem="; ".join(problems)) from None


Result = TypeVar("Result")


async def ask_with_one_repair(complete: Complete, system: str, prompt: str, read: Callable[[str], Result],
                              shape: str) -> Result:
    """Ask, read (parse + gate), and on a malformed or gate-rejected answer ask once more,
    saying exactly what was wrong. A second malformed answer is RepairFailed and a second
    rejected one UnsupportedClaim: both typed and not retried (a retry pays twice again)."""
    reply = await complete(system, prompt)
    try:
        return read(reply)
    except ModelOutputInvalid as error:
        problem = f"it is not the requested JSON ({error.problem})"
    except UnsupportedClaim as error:
        problem = (f"it states something the candidate's profile does not hold: {error.claim}. "
                   "Remove or correct that claim and state only what the profile holds")
    repair = (f"Your previous answer could not be used: {problem[:1200]}.\nHere it is:\n{reply[:6000]}\n\n"
              f"Answer again with the corrected JSON object only, in this shape: {shape}. "
              "No prose, no code fences.")
    reply = await complete(system, f"{prompt}\n\n{repair}")
    try:
        return read(reply)
    except ModelOutputInvalid as error:
        raise RepairFailed(problem=error.problem) from None


async def model_tailor(complete: Complete, profile: CandidateProfile, job: JobText,
                       score: ScoreResult) -> ResumeDoc:
    """At most two calls; the result has passed the truthfulness gate."""
    def read(reply: str) -> ResumeDoc:
        document = parse_tailor_reply(reply, profile, job, score)
        check_resume(document, profile, job=job)
        return document

    return await ask_with_one_repair(complete, TAILOR_SYSTEM, tailor_prompt(profile, job, score), read,
                                     TAILOR_SHAPE)

