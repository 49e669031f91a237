"""The follow-up email: drafted from the profile and the letter that went with the
application, and checked by the same honest-claims gate as the letter
(``backend.pipeline.truth.check_letter``) — the draft and whatever the user makes of it.

The draft says nothing new: that the candidate applied and is still interested, the
letter's own account of their current work, and thanks. No dates or numbers of its own
(the gate would rightly ask where they come from)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from backend.domain.applications import MAX_FOLLOW_UP_BODY_CHARS
from backend.domain.fit import FitLedger
from backend.domain.profile import CandidateProfile
from backend.pipeline.documents import CoverLetterDoc, LetterParagraph
from backend.pipeline.score import JobText
from backend.pipeline.truth import FOLLOW_UP_OPENING, FOLLOW_UP_SUBJECT, LETTER_OPENING, check_letter

CLOSING = "Kind regards,"
MAX_BODY_CHARS = MAX_FOLLOW_UP_BODY_CHARS


@dataclass(frozen=True)
class FollowUpDraft:
    subject: str
    body: str


def follow_up_subject(title: str, company: str) -> str:
    return FOLLOW_UP_SUBJECT.format(title=title, company=company)


def _letter_recap(letter: CoverLetterDoc | None, title: str = "", company: str = "") -> str | None:
    """The opening paragraph's account of the candidate's work, without its "I am applying
    for ..." sentence (the follow-up says that its own way). JobCtrl's own opening is cut
    as a whole: a full stop inside the posting's title does not end it."""
    if letter is None or not letter.paragraphs:
        return None
    text = letter.paragraphs[0].text.strip()
    opening = LETTER_OPENING.format(title=title, company=company)
    if title and company and text.startswith(opening):
        return text[len(opening):].strip() or None
    sentences = re.split(r"(?<=[.!?])\s+", text)
    rest = " ".join(s for s in sentences[1:] if s)
    return rest or None


def draft_follow_up(profile: CandidateProfile, *, title: str, company: str,
                    letter: CoverLetterDoc | None) -> FollowUpDraft:
    paragraphs = [f"{FOLLOW_UP_OPENING.format(title=title, company=company)} and wanted to "
                  "follow up on my application."]
    recap = _letter_recap(letter, title, company)
    if recap:
        paragraphs.append(recap)
    paragraphs.append("I am still very interested in the role and would be glad to talk "
                      "whenever it suits you. Thank you for your time.")
    body = "\n\n".join([f"Dear {company} hiring team,", *paragraphs,
                        f"{CLOSING}\n{profile.display_name()}"])
    return FollowUpDraft(subject=follow_up_subject(title, company), body=body)


def _blocks(body: str) -> list[str]:
    return [block.strip() for block in re.split(r"\n\s*\n", body.strip()) if block.strip()]


def check_follow_up(body: str, profile: CandidateProfile, ledger: FitLedger | None,
                    job: JobText | None, *, subject: str | None = None,
                    today: date | None = None) -> None:
    """Raise ``UnsupportedClaim`` for the first sentence the profile does not hold. The
    greeting and the sign-off (the profile's own name) are not claims; every other block,
    edited or not, and the subject go through the letter's gate."""
    blocks = _blocks(body)
    if blocks and re.match(r"(dear|hello|hi)\b", blocks[0], re.IGNORECASE):
        blocks = blocks[1:]
    name = profile.display_name()
    if blocks and blocks[-1].splitlines()[-1].strip() == name:
        blocks = blocks[:-1]
    if subject and subject.strip():
        blocks.insert(0, subject.strip())
    if not blocks:
        blocks = [body.strip() or "."]
    doc = CoverLetterDoc(sender_name=name, sender_contact=[], date_line="", salutation="",
                         paragraphs=[LetterParagraph(text=block[:2000]) for block in blocks[:12]],
                         closing=CLOSING, signature=name)
    check_letter(doc, profile, ledger, job, today=today)
