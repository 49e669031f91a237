"""Cover: a short, specific cover letter from the profile, the posting and the resume."""

from __future__ import annotations

import json
from datetime import date

from pydantic import ValidationError

from backend.domain.profile import CandidateProfile
from backend.pipeline.score import JobText, ModelOutputInvalid, ScoreResult, _json_object
from backend.pipeline.text import human_list
from baseline_writers.documents import CoverLetterDoc, ResumeDoc
from baseline_writers.tailor import contact_lines


def _letter(profile: CandidateProfile, job: JobText, paragraphs: list[str], today: date):
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


def offline_cover(profile: CandidateProfile, job: JobText, score: ScoreResult,
                  resume: ResumeDoc, today: date) -> CoverLetterDoc:
    matched = score.matched[:4]
    experience = next((s.items for s in resume.sections if s.title == "Experience"), [])
    highlight = next((item for item in experience if len(item.split()) > 5), None)
    paragraphs = [
        f"I am applying for the {job.title} position at {job.company}."
        + (f" The role's emphasis on {human_list(matched[:2])} is exactly the work I do best."
           if matched else " The role matches the direction I want to grow in."),
    ]
    if matched:
        paragraphs.append(
            f"In my recent work I have relied on {human_list(matched)}"
            + (f"; for example: {highlight.rstrip('.')}." if highlight else ".")
        )
    elif highlight:
        paragraphs.append(f"A recent example of my work: {highlight.rstrip('.')}.")
    if job.remote == "remote":
        paragraphs.append("I work well remotely and keep collaboration visible and written down.")
    elif job.location:
        paragraphs.append(f"The {job.location} setup works for me.")
    paragraphs.append(
        f"I would welcome the chance to discuss how I can help {job.company}. "
        "Thank you for your time and consideration."
    )
    return _letter(profile, job, paragraphs, today)


COVER_SYSTEM = (
    "You write a concise, specific cover letter (3-4 short paragraphs, under 280 words) "
    "using only facts from the candidate's tailored resume. No clichés, no invented facts. "
    "Answer with one JSON object: {\"paragraphs\": [str]}."
)


def cover_prompt(profile: CandidateProfile, job: JobText, score: ScoreResult,
                 resume: ResumeDoc) -> str:
    return json.dumps({
        "candidate": profile.display_name(),
        "resume": resume.model_dump(by_alias=True),
        "job": {"title": job.title, "company": job.company, "description": job.description[:8000]},
        "fit": {"matched": score.matched, "missing": score.missing},
    }, ensure_ascii=False)


def parse_model_cover(text: str, profile: CandidateProfile, job: JobText,
                      today: date) -> CoverLetterDoc:
    try:
        paragraphs = [str(p).strip() for p in json.loads(_json_object(text))["paragraphs"]]
        return _letter(profile, job, [p for p in paragraphs if p], today)
    except (ValidationError, ValueError, TypeError, KeyError) as error:
        raise ModelOutputInvalid("cover letter reply is not the requested JSON") from error
