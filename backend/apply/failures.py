"""The bounded apply failure and parking codes, with the message the UI shows."""

from __future__ import annotations

MESSAGES = {
    "apply_target_unknown": "The posting names no application form or email address.",
    "apply_challenge_detected":
        "The application page shows a CAPTCHA or bot challenge; JobCtrl stops there."
        " Apply by hand, then mark the job applied.",
    "apply_target_unreachable": "The application page could not be loaded.",
    "apply_target_private":
        "The application link leads to this computer or your own network, so JobCtrl does"
        " not open it. Open the posting yourself if you trust it.",
    "apply_materials_missing": "The resume or cover letter PDF is missing; prepare the job again.",
    "smtp_not_configured": "Set up your SMTP account (host, from address) in Settings.",
    "smtp_unavailable": "The SMTP server could not be reached or failed the send.",
    "smtp_recipient_refused": "The SMTP server refused the recipient.",
    "message_invalid": "The email could not be put together (nothing was sent).",
    "authentication": "The SMTP server refused your login; check the saved password.",
    "submit_outcome_unknown":
        "The send was interrupted after it began, so the email may have gone out. It is"
        " never sent twice: check your Sent folder, then mark the job applied.",
    "budget_exceeded": "Today's spend ceiling is reached.",
    "canceled": "The apply was canceled.",
}


def failure_message(code: str) -> str:
    return MESSAGES.get(code, "The apply failed.")
