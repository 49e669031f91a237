"""Words for the application board, its cards, Insights and the follow-up reminders.
Qt-free: the board, the tray, the notification and the Activity list all say the same."""

from __future__ import annotations

from datetime import date, datetime, tzinfo
from typing import Any

from backend.desktop_contract import APPLICATION_CLOSED_STAGES, APPLICATION_STAGE_LABELS

Card = dict[str, Any]

VIA_TEXT = {"email": "sent by email", "apply_review": "finished in Apply Review",
            "job_action": "marked applied"}
# Why a follow-up email did not go out, in plain words.
EMAIL_FAILURE_WORDS = {
    "submit_outcome_unknown": "the connection broke while sending; check your Sent folder "
                              "before trying again",
    "smtp_not_configured": "no email account is set up (Settings)",
    "smtp_unavailable": "the mail server could not be reached",
    "authentication": "the mail server refused the login",
    "smtp_recipient_refused": "the mail server refused the address",
    "message_invalid": "the email could not be put together, so nothing was sent",
    "insecure_transport_not_confirmed": "your password would travel unencrypted and you have "
                                        "not agreed to that (Settings)",
}


def stage_label(stage: str | None) -> str:
    return APPLICATION_STAGE_LABELS.get(stage or "", stage or "—")


def day_text(value: str | date | None, *, today: date | None = None) -> str:
    """``5 Mar`` (``5 Mar 2025`` in another year); ``—`` when unknown."""
    if not value:
        return "—"
    try:
        day = value if isinstance(value, date) else date.fromisoformat(str(value)[:10])
    except ValueError:
        return "—"  # not a day: unknown, never the raw value
    this_year = (today or date.today()).year
    text = f"{day.day} {day.strftime('%b')}"
    return text if day.year == this_year else f"{text} {day.year}"


def instant_day_text(instant: str | None, zone: tzinfo | None = None, *,
                     today: date | None = None) -> str:
    """The user's calendar day of a UTC instant (``appliedAt``, an email's time)."""
    if not instant:
        return "—"
    try:
        moment = datetime.fromisoformat(instant.replace("Z", "+00:00")).astimezone(zone)
    except ValueError:
        return instant
    return day_text(moment.date(), today=today)


def interview_time_text(starts_at: str | None, zone: tzinfo | None = None) -> str:
    """``Tue 12 Mar, 16:00`` in the user's time zone."""
    if not starts_at:
        return "—"
    try:
        moment = datetime.fromisoformat(starts_at.replace("Z", "+00:00")).astimezone(zone)
    except ValueError:
        return "—"  # not a time: unknown, never the raw value
    return f"{moment.strftime('%a')} {moment.day} {moment.strftime('%b')}, {moment:%H:%M}"


def follow_up_text(follow_up: dict[str, Any] | None, today: date) -> str | None:
    """``Follow up today`` / ``Follow-up overdue since 9 Mar`` / ``Follow up on 16 Mar``;
    None when there is nothing to do."""
    if not follow_up or follow_up.get("status") != "scheduled" or not follow_up.get("dueOn"):
        return None
    due_on = date.fromisoformat(follow_up["dueOn"])
    if follow_up.get("due"):
        if due_on == today:
            return "Follow up today"
        return f"Follow-up overdue since {day_text(due_on, today=today)}"
    if due_on <= today:
        return None  # lapsed: you heard back before it came due
    return f"Follow up on {day_text(due_on, today=today)}"


def follow_up_lapsed(application: Card) -> bool:
    """The board's due rule (``backend.domain.applications.follow_up_is_due``) for a card
    or its detail: nothing to follow up on a closed application, and the default follow-up
    ("if nothing was heard") lapses once there is a reply or it was called ghosted — so a
    card moved to Heard back no longer says "Follow up on 8 Dec"."""
    stage = application.get("stage")
    if stage in APPLICATION_CLOSED_STAGES:
        return True
    follow_up = application.get("followUp") or {}
    replied = "daysWithoutReply" in application and application["daysWithoutReply"] is None
    return follow_up.get("reason") == "after_applying" and (replied or stage == "ghosted")


def next_step_text(application: Card, today: date) -> str | None:
    """The follow-up line of a card or its detail; None when there is nothing to do."""
    if follow_up_lapsed(application):
        return None
    return follow_up_text(application.get("followUp"), today)


def card_lines(card: Card, today: date, zone: tzinfo | None = None) -> list[str]:
    """The lines under a card's title: when applied, the next step, silence, interviews."""
    lines = [f"{card.get('company') or '—'} · applied {day_text(card.get('appliedOn'), today=today)}"]
    follow_up = next_step_text(card, today)
    if follow_up:
        lines.append(follow_up)
    if card.get("noReplyText"):
        text = card["noReplyText"]
        lines.append(text[:1].upper() + text[1:])
    interview = card.get("nextInterview")
    if interview:
        lines.append(f"Interview {interview_time_text(interview.get('startsAt'), zone)}")
    return lines


def calendar_file_name(application: Card | None) -> str:
    """``Interviews - Backend Engineer at Pixel Orchard Games.ics``: the file name the save
    dialog offers, in words (never the job key), with no character a file system refuses."""
    title = (application or {}).get("title")
    company = (application or {}).get("company")
    words = "Interviews" + (f" - {title}" if title else "") + (f" at {company}" if company else "")
    safe = "".join(" " if ch in '<>:"/\\|?*' or ord(ch) < 32 else ch for ch in words)
    # At most 120 bytes of UTF-8 before the extension (file systems count bytes, 255 at
    # most): a character is never cut in half.
    cut = " ".join(safe.split()).encode("utf-8")[:120].decode("utf-8", errors="ignore")
    return cut.rstrip() + ".ics"


def card_tooltip(card: Card, today: date) -> str:
    last = card.get("lastMove")
    parts = [f"{card.get('title')} at {card.get('company')}",
             f"Applied {day_text(card.get('appliedOn'), today=today)}, "
             f"{VIA_TEXT.get(card.get('via') or '', 'applied')}"]
    if last:
        moved = f"Moved to {stage_label(last.get('stage'))} on {day_text(last.get('date'), today=today)}"
        parts.append(moved + (f": {last['note']}" if last.get("note") else ""))
    parts.append("Drag the card to another column, or right-click it for more.")
    return "\n".join(parts)


def board_headline(board: dict[str, Any] | None) -> str:
    if board is None:
        return "Your applications: not loaded yet"
    total = board.get("total") or 0
    if total == 0:
        return ("No applications yet. A job appears here as soon as you apply: an email "
                "sent, a packet marked applied in Apply Review, or “Mark applied” on a job.")
    due = board.get("followUpsDue") or 0
    text = f"{total} application{'s' if total != 1 else ''}"
    if due:
        text += f" · {due} follow-up{'s' if due != 1 else ''} due"
    return text


def follow_ups_due_text(count: int) -> str:
    """The tray entry and the notification: one sentence for any count."""
    if count <= 0:
        return "No follow-ups due"
    return f"{count} follow-up{'s' if count != 1 else ''} due"


# -- Insights -------------------------------------------------------------------------------


def percent_text(value: float | None) -> str:
    # Half up (12.5 % is "13 %"), not Python's round-half-to-even.
    return "—" if value is None else f"{int(value * 100 + 0.5)} %"


def days_value_text(value: float | None) -> str:
    if value is None:
        return "no replies yet"
    days = round(value, 1)
    if days == 0:
        return "same day"
    shown = int(days) if days == int(days) else days
    return f"{shown} day{'s' if shown != 1 else ''}"


def first_reply_clause(median_days: float | None) -> str:
    """The Insights headline's words on reply time, a sentence for every value (never
    "came after no replies yet")."""
    if median_days is None:
        return "no reply yet"
    shown = days_value_text(median_days)
    if shown == "same day":
        return "the first reply came the same day (median)"
    return f"the first reply came after {shown} (median)"


def figure_cells(figure: dict[str, Any]) -> list[str]:
    """Applications, reply rate, interview rate, time to first reply, ghosted; a withheld
    group says why instead of its percentages."""
    count = str(figure.get("applications", 0))
    if figure.get("withheld"):
        return [count, figure["withheld"], "", "", ""]
    return [count, percent_text(figure.get("replyRate")),
            percent_text(figure.get("interviewRate")),
            days_value_text(figure.get("medianDaysToFirstReply")),
            percent_text(figure.get("ghostedRate"))]
