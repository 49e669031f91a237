"""The board's words, Qt-free: the next step, silence past the threshold, the story of an
application in day order, and percentages rounded as a reader expects."""

from __future__ import annotations

from datetime import date

from desktop.presenters.applications import (
    board_headline,
    calendar_file_name,
    card_lines,
    first_reply_clause,
    follow_up_text,
    next_step_text,
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


def test_the_default_follow_up_lapses_on_a_reply_but_a_chosen_one_holds():
    """A card moved to Heard back stops saying "Follow up on 20 Mar" when that date was
    only the default ("if nothing was heard"); a date the user chose still shows."""
    later = {"status": "scheduled", "dueOn": "2026-03-20", "due": False,
             "reason": "after_applying"}
    waiting = {"stage": "applied", "daysWithoutReply": 6, "followUp": later}
    assert next_step_text(waiting, TODAY) == "Follow up on 20 Mar"
    heard = {**waiting, "stage": "heard_back", "daysWithoutReply": None}
    assert next_step_text(heard, TODAY) is None
    assert next_step_text({**waiting, "stage": "ghosted"}, TODAY) is None
    chosen = {**heard, "followUp": {**later, "reason": "snoozed"}}
    assert next_step_text(chosen, TODAY) == "Follow up on 20 Mar"
    assert next_step_text({**chosen, "stage": "rejected"}, TODAY) is None
    assert card_lines({**heard, "company": "Acme", "appliedOn": "2026-03-10"}, TODAY) == \
        ["Acme · applied 10 Mar"]


def test_the_calendar_file_is_named_in_words_a_file_system_accepts():
    assert calendar_file_name({"jobKey": "job_9b55", "title": "Backend Engineer",
                               "company": "Pixel Orchard Games"}) == \
        "Interviews - Backend Engineer at Pixel Orchard Games.ics"
    assert calendar_file_name({"title": "C++/Rust: Dev?", "company": None}) == \
        "Interviews - C++ Rust Dev.ics"
    assert calendar_file_name(None) == "Interviews.ics"


def test_the_reply_time_reads_as_a_sentence_for_every_value():
    assert first_reply_clause(None) == "no reply yet"  # not "came after no replies yet"
    assert first_reply_clause(0) == "the first reply came the same day (median)"
    assert first_reply_clause(1) == "the first reply came after 1 day (median)"
    assert first_reply_clause(4.5) == "the first reply came after 4.5 days (median)"


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
