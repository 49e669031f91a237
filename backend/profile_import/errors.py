"""Why a résumé file could not be imported, as typed failures the API maps to HTTP.

Each failure carries a bounded ``code`` (the API's ``error.code``), the HTTP status the
upload route answers with, and one sentence the job seeker can act on. Messages never
quote the file's contents.
"""

from __future__ import annotations

from backend.domain.errors import TypedFailure


class ResumeImportError(TypedFailure):
    """Base of every résumé import failure; the same file will fail the same way."""

    code = "resume_import_failed"
    http_status = 422
    retryable = False
    default_message = "This file could not be imported as a résumé."

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)


class ResumeUnreadable(ResumeImportError):
    code = "resume_unreadable"
    http_status = 422
    default_message = "This file has no readable text — it may be damaged or empty."


class ResumeEncrypted(ResumeImportError):
    code = "resume_encrypted"
    http_status = 422
    default_message = (
        "This file is password-protected. Save a copy without a password and import that instead."
    )


class ResumeTooLarge(ResumeImportError):
    code = "resume_too_large"
    http_status = 413
    default_message = "This file is larger than 5 MB. Import a smaller export of your résumé."


class ResumeTooComplex(ResumeImportError):
    """Past what a résumé needs (limits.py), or the reading ran out of memory or time."""

    code = "resume_too_complex"
    http_status = 422
    default_message = (
        "This file is too complex to read as a résumé: it holds far more than a few pages "
        "of text, or is built in a way that cannot be read safely. Export your résumé "
        "again as a simple PDF, or import the Word (.docx) file instead."
    )


class ResumeUnsupportedType(ResumeImportError):
    code = "resume_unsupported_type"
    http_status = 415
    default_message = (
        "This kind of file cannot be imported. Use a PDF, a Word (.docx) file, "
        "a text or Markdown file, or a JSON Resume file."
    )


# The sentences for the specific causes, kept here so the wording lives in one place.
SCANNED_PDF = (
    "This PDF has no text layer — it looks scanned. Export it from your word processor, "
    "or import a DOCX or text file instead."
)
DAMAGED_FILE = "This file looks damaged and could not be opened. Export it again and retry."
EMPTY_DOCUMENT = "This document is empty — there is no text to import."
TOO_MANY_PAGES = "This PDF has more than 20 pages. Import your résumé on its own, not a longer document."
OLD_WORD_FORMAT = (
    "Old Word (.doc) files cannot be imported. Save it as .docx or PDF in your word processor "
    "and import that."
)
BAD_JSON_RESUME = (
    "This JSON file is not a valid JSON Resume document. Check it against jsonresume.org/schema."
)
