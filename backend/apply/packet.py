"""The application packet: what a person (or the email sender) needs to apply.

Answers come only from the candidate profile; a question the profile cannot answer is
left out, never invented."""

from __future__ import annotations

from dataclasses import dataclass, field

from backend.domain.apply_targets import ApplyTarget
from backend.domain.profile import CandidateProfile


@dataclass(frozen=True)
class ApplyPacket:
    target_url: str | None
    resume_pdf: str
    cover_letter_pdf: str
    answers: dict[str, str] = field(default_factory=dict)

    @property
    def attachments(self) -> list[str]:
        return [self.resume_pdf, self.cover_letter_pdf]

    def as_json(self) -> dict:
        return {"targetUrl": self.target_url, "resumePdf": self.resume_pdf,
                "coverLetterPdf": self.cover_letter_pdf, "answers": dict(self.answers)}

    @classmethod
    def from_json(cls, data: dict) -> ApplyPacket:
        return cls(data.get("targetUrl"), data["resumePdf"], data["coverLetterPdf"],
                   dict(data.get("answers") or {}))


def profile_answers(profile: CandidateProfile | None) -> dict[str, str]:
    if profile is None:
        return {}
    basics = profile.basics
    city = basics.location.city if basics.location else None
    candidates = {
        "fullName": basics.name,
        "email": basics.email,
        "phone": basics.phone,
        "headline": basics.label,
        "location": city or (profile.locations[0] if profile.locations else None),
        "website": basics.url,
        "salaryExpectation": (f"{profile.salary_floor} {profile.salary_currency or ''}".strip()
                              if profile.salary_floor else None),
    }
    return {key: str(value) for key, value in candidates.items() if value}


def build_packet(target: ApplyTarget, *, resume_pdf: str, cover_letter_pdf: str,
                 profile: CandidateProfile | None) -> ApplyPacket | None:
    """None for an unknown target: there is nowhere to apply."""
    if target.kind == "unknown":
        return None
    return ApplyPacket(target.url, resume_pdf, cover_letter_pdf, profile_answers(profile))


def approval_matches(packet: ApplyPacket, target: ApplyTarget, *, recipient: str | None,
                     attachments: list[str] | None) -> bool:
    """An email approval names exactly the packet's recipient and attachment list."""
    if target.kind != "email":
        return True
    if recipient is None or attachments is None:
        return False
    return (recipient.strip().lower() == (target.recipient or "").lower()
            and sorted(attachments) == sorted(packet.attachments))
