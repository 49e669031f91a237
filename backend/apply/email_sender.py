"""Sending an application through the user's own SMTP account.

The message is built deterministically from the submit intent (its Message-ID is derived
from the intent key), so the one send that may happen is traceable. Whether a send may
happen at all is decided by the submit intent in the store, never here."""

from __future__ import annotations

import asyncio
import mimetypes
import re
import smtplib
import ssl
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path

from backend.config import SmtpSettings
from backend.domain.transport import INSECURE_TRANSPORT_CODE


class SmtpSendError(Exception):
    """A typed SMTP failure: ``code`` is bounded, the message carries no secrets.
    ``maybe_delivered`` is True when the failure came after the message was handed over
    (the server may have accepted it), so the caller must not send again."""

    def __init__(self, code: str, message: str, *, maybe_delivered: bool = False):
        super().__init__(message)
        self.code = code
        self.maybe_delivered = maybe_delivered


_SPACE_RUNS = re.compile(r"\s+")


def header_text(value: str | None) -> str:
    """``value`` as one header line: CR, LF, NUL and every other control or line-breaking
    character (C0, DEL, C1, U+2028/U+2029) becomes a space, runs of spaces collapse.
    A posting's title or company is untrusted text: a line break in a header would make
    the message fail to build (or, unchecked, inject a header)."""
    text = "".join(" " if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char
                   for char in value or "")
    return _SPACE_RUNS.sub(" ", text).strip()


@dataclass(frozen=True)
class Application:
    """One message to send. The header values (recipient, subject) are made single-line
    here, so every sender path gets them clean before anything is recorded or sent."""

    recipient: str
    subject: str
    body: str
    attachments: list[str]
    intent_key: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "recipient", header_text(self.recipient))
        object.__setattr__(self, "subject", header_text(self.subject))


def application_subject(title: str, company: str) -> str:
    return header_text(f"Application: {header_text(title)} ({header_text(company)})")


def application_body(*, candidate: str, title: str, company: str) -> str:
    return (f"Hello {company} team,\n\nplease find attached my application for the {title}"
            f" position: my resume and a cover letter.\n\nKind regards,\n{candidate}\n")


def build_message(app: Application, *, from_address: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = header_text(from_address)
    message["To"] = app.recipient
    message["Subject"] = app.subject
    message["Date"] = formatdate(localtime=False)
    domain = from_address.rsplit("@", 1)[-1] or "localhost"
    message["Message-ID"] = f"<{app.intent_key}@{domain}>"
    message.set_content(app.body)
    for path in app.attachments:
        data = Path(path).read_bytes()
        mime = mimetypes.guess_type(path)[0] or "application/octet-stream"
        main, sub = mime.split("/", 1)
        message.add_attachment(data, maintype=main, subtype=sub,
                               filename=header_text(Path(path).name))
    return message


def send_application(settings: SmtpSettings, password: str | None, app: Application,
                     *, timeout: float = 30) -> str:
    """Blocking send (run it in a thread); returns the Message-ID."""
    if not settings.configured:
        raise SmtpSendError("smtp_not_configured", "No SMTP host or from address is set.")
    if settings.password_in_clear and not settings.insecure_transport_confirmed:
        # Checked here, at use, too: a settings file edited by hand skips the settings API.
        raise SmtpSendError(INSECURE_TRANSPORT_CODE, "The password would travel unencrypted"
                            " and the user has not agreed to that.")
    try:
        message = build_message(app, from_address=settings.from_address or "")
    except (ValueError, TypeError, OSError):
        # Nothing was sent (no connection yet): safe to record as a plain failure.
        raise SmtpSendError("message_invalid", "The message could not be built.") from None
    client = _connect(settings, password, timeout)
    try:
        try:
            client.send_message(message)
        except (smtplib.SMTPRecipientsRefused, smtplib.SMTPSenderRefused):
            raise SmtpSendError("smtp_recipient_refused", "The server refused the message.") \
                from None
        except (smtplib.SMTPException, OSError) as error:
            # The message may already sit in the server's queue: never retry this one.
            raise SmtpSendError("submit_outcome_unknown", f"SMTP send interrupted:"
                                f" {type(error).__name__}", maybe_delivered=True) from None
    finally:
        try:
            client.quit()
        except (smtplib.SMTPException, OSError):
            client.close()
    return str(message["Message-ID"])


async def send_shielded(settings: SmtpSettings, password: str | None, app: Application, *,
                        record_late: Callable[[asyncio.Future], Awaitable[None]]) -> str:
    """``send_application`` in a thread, shielded: a cancellation mid-conversation must not
    lose whether the send happened, so it waits for the conversation to end, hands its
    outcome (the finished future) to ``record_late``, then cancels. Raises SmtpSendError."""
    send = asyncio.ensure_future(asyncio.to_thread(send_application, settings, password, app))
    try:
        return await asyncio.shield(send)
    except asyncio.CancelledError:
        await record_late(send)
        raise


def _connect(settings: SmtpSettings, password: str | None, timeout: float) -> smtplib.SMTP:
    """Connect, secure and log in; nothing is sent yet, so any failure here is safe."""
    try:
        if settings.security == "ssl":
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                settings.host, settings.port, timeout=timeout,
                context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(settings.host, settings.port, timeout=timeout)
        try:
            if settings.security == "starttls":
                client.starttls(context=ssl.create_default_context())
            if settings.username:
                client.login(settings.username, password or "")
        except BaseException:
            client.close()
            raise
    except smtplib.SMTPAuthenticationError:
        raise SmtpSendError("authentication", "The SMTP server refused the login.") from None
    except (smtplib.SMTPException, OSError) as error:
        raise SmtpSendError("smtp_unavailable",
                            f"SMTP failed: {type(error).__name__}") from None
    return client
