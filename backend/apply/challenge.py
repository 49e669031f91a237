"""CAPTCHA and third-party challenge detection on an application page. Fail closed: any
marker of a challenge means the apply stops with ``apply_challenge_detected``; JobCtrl
never tries to solve, bypass or hand one to a service."""

from __future__ import annotations

import re

# Markers of the common CAPTCHA widgets and bot-challenge interstitials.
CHALLENGE_MARKERS = (
    "g-recaptcha", "recaptcha/api.js", "grecaptcha", "h-captcha", "hcaptcha.com",
    "cf-turnstile", "challenges.cloudflare.com", "cf-challenge", "challenge-platform",
    "arkoselabs", "funcaptcha", "geetest", "friendlycaptcha", "frc-captcha",
    "px-captcha", "perimeterx", "datadome", "captcha-delivery.com",
)
_WORD = re.compile(r"\bcaptcha\b", re.IGNORECASE)
_VERIFY_HUMAN = re.compile(
    r"verify (that )?you are (a )?human|are you a robot|checking your browser", re.IGNORECASE)
CHALLENGE_STATUSES = frozenset({403, 429, 503})


def detect_challenge(html: str, *, status: int = 200, headers: dict | None = None) -> str | None:
    """The bounded name of the challenge found, or None when the page shows none."""
    lowered = html.lower()
    for marker in CHALLENGE_MARKERS:
        if marker in lowered:
            return marker
    if _WORD.search(html):
        return "captcha"
    if _VERIFY_HUMAN.search(html):
        return "human_verification"
    header_names = {key.lower() for key in (headers or {})}
    if status in CHALLENGE_STATUSES and ("cf-mitigated" in header_names
                                         or "x-datadome" in header_names):
        return "bot_protection"
    return None
