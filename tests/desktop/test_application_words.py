"""The board's words, Qt-free: the next step, silence past the threshold, the story of an
application in day order, and percentages rounded as a reader expects."""

from __future__ import annotations

from datetime import date

from desktop.presenters.applications import (
    board_headline,
    card_lines,
    follow_up_text,
    percent_text,
)
from desktop.views.partials.application_detail import history_html

TODAY = date(2026, 3, 16)


def test_the_next_step_in_plain_words():
    due = {"status": "scheduled", "dueOn": "2026-03-16", "due": True}
    assert follow_up_text(due, TODAY) == "Follow up today"
    assert follow_up_text({**due, "dueOn": "2026-03-09"}, TODAY) == \
        "Follow-up overdue since 9 Mar"
    assert follow_up_text({**due, "dueOn": "2026-03-20", "due": False}, TODAY) == \
        "Follow up on 20 Mar"
    # A default follow-up that lapsed (a reply came first) says nothing.
    assert follow_up_text({**due, "dueOn": "2026-03-10", "due": False}, TODAY) is None
    assert follow_up_text({"status": "done", "dueOn": None, "due": False}, TODAY) is None


def test_a_card_says_when_it_was_sent_what_is_next_and_how_long_it_has_been_quiet():
    card = {"company": "Acme", "appliedOn": "2026-02-10",
            "followUp": {"status": "scheduled", "dueOn": "2026-02-17", "due": True},
            "noReplyText": "no reply yet (34 days)", "nextInterview": None}
    assert card_lines(card, TODAY) == ["Acme · applied 10 Feb",
                                       "Follow-up overdue since 17 Feb",
                                       "No reply yet (34 days)"]
    assert card_lines({**card, "appliedOn": "2025-12-01", "followUp": None,
                       "noReplyText": None}, TODAY) == ["Acme · applied 1 Dec 2025"]


def test_the_story_lists_moves_and_emails_by_day_and_keeps_undone_moves():
    detail = {"appliedOn": "2026-03-01", "via": "apply_review", "moves": [
        {"stage": "heard_back", "date": "2026-03-05", "note": "Call on Friday",
         "undone": False},
        {"stage": "offer", "date": "2026-03-06", "note": None, "undone": True}],
        "emails": [{"status": "sent", "recipient": "jobs@acme.example",
                    "at": "2026-03-03T09:00:00.000Z"}]}
    text = history_html(detail, TODAY)
    order = [text.index(part) for part in ("1 Mar: applied (finished in Apply Review)",
                                           "3 Mar: follow-up email to jobs@acme.example sent",
                                           "5 Mar: Heard back — Call on Friday",
                                           "<s>6 Mar: Offer</s> <i>(undone)</i>")]
    assert order == sorted(order)


def test_headline_and_percentages():
    assert board_headline({"total": 1, "followUpsDue": 0}) == "1 application"
    assert board_headline({"total": 3, "followUpsDue": 2}) == "3 applications · 2 follow-ups due"
    assert board_headline({"total": 0}).startswith("No applications yet.")
    assert (percent_text(0.125), percent_text(2 / 3), percent_text(None)) == ("13 %", "67 %", "—")
