"""Tailor: a resume for one posting, selected and ordered from the candidate's own resume.

Offline it puts the skills and achievements this posting asks for first. With a model it
asks for the same structure and then checks that no skill was invented."""

from __future__ import annotations

import json

from pydantic import ValidationError

from backend.domain.errors import TypedFailure
from backend.domain.profile import CandidateProfile
from backend.pipeline.score import JobText, ModelOutputInvalid, ScoreResult, _json_object
from backend.pipeline.text import contains_term, human_list, normalize
from baseline_writers.documents import ResumeDoc, ResumeSection
from baseline_writers.resume_source import read_source_resume

MAX_SKILLS = 16


class ResumeRejected(TypedFailure, ValueError):
    """The tailored resume failed validation (e.g. claims skills the profile lacks)."""

    code = "resume_invalid"


def contact_lines(profile: CandidateProfile) -> list[str]:
    lines = [profile.email, profile.phone]
    if profile.locations:
        lines.append(profile.locations[0])
    return [str(line) for line in lines if line]


def _relevance(text: str, job_text: str, matched: list[str]) -> int:
    lowered = normalize(text)
    return sum(1 for term in matched if contains_term(lowered, term)) + (
        1 if any(word in job_text for word in lowered.split()[:3]) else 0
    )


def offline_tailor(profile: CandidateProfile, job: JobText, score: ScoreResult) -> ResumeDoc:
    source = read_source_resume(profile)
    job_text = normalize(f"{job.title} {job.description}")
    skills = profile.all_skills()
    matched = [s for s in skills if contains_term(job_text, s)]
    ordered_skills = matched + [s for s in skills if s not in matched]
    sections = [ResumeSection(title="Skills for this role", items=ordered_skills[:MAX_SKILLS])]
    for heading, bullets in source.experience:
        ranked = sorted(bullets, key=lambda b: -_relevance(b, job_text, matched))
        items = ([heading] if heading else []) + ranked
        sections.append(ResumeSection(title="Experience", items=items[:12]))
    for title, lines in source.other_sections:
        sections.append(ResumeSection(title=title[:120], items=lines[:12]))
    if source.education:
        sections.append(ResumeSection(title="Education", items=source.education[:6]))
    focus = human_list(matched[:4])
    tailored_line = (f"Brings {focus} to the {job.title} role at {job.company}."
                     if focus else f"Applying for the {job.title} role at {job.company}.")
    summary = " ".join(part for part in (source.summary.strip(), tailored_line) if part)
    return ResumeDoc(
        name=profile.display_name(),
        headline=profile.headline or (profile.target_titles[0] if profile.target_titles else ""),
        contact_lines=contact_lines(profile),
        summary=summary[:3000],
        sections=sections,
    )


TAILOR_SYSTEM = (
    "You tailor a resume to one job posting. Use ONLY facts from the candidate's resume and "
    "skills; never invent employers, dates, degrees or skills. Reorder and rephrase so the "
    "most relevant experience comes first. Answer with one JSON object: {\"headline\": str, "
    "\"summary\": str (3 sentences max), \"sections\": [{\"title\": str, \"items\": [str]}]}."
)


def tailor_prompt(profile: CandidateProfile, job: JobText, score: ScoreResult) -> str:
    return json.dumps({
        "candidate": {"name": profile.display_name(), "skills": profile.all_skills(),
                      "resumeText": (profile.resume_text or "")[:12000],
                      "jsonResume": profile.resume.export()},
        "job": {"title": job.title, "company": job.company, "description": job.description[:10000]},
        "fit": {"score": score.score, "matched": score.matched, "missing": score.missing},
    }, ensure_ascii=False)


def parse_model_resume(text: str, profile: CandidateProfile) -> ResumeDoc:
    try:
        raw = json.loads(_json_object(text))
        document = ResumeDoc.model_validate({
            **raw, "name": profile.display_name(), "contactLines": contact_lines(profile),
        })
    except (ValidationError, ValueError, TypeError) as error:
        raise ModelOutputInvalid("resume reply is not the requested JSON") from error
    _reject_invented_skills(document, profile)
    return document


def _reject_invented_skills(document: ResumeDoc, profile: CandidateProfile) -> None:
    known = {normalize(skill) for skill in profile.all_skills()}
    source_text = normalize(json.dumps(profile.resume.export()) + (profile.resume_text or ""))
    for section in document.sections:
        if "skill" not in section.title.lower():
            continue
        for item in section.items:
            if normalize(item) not in known and not contains_term(source_text, item):
                raise ResumeRejected("the tailored resume lists a skill the profile lacks")
