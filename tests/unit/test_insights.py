"""Insights on generated histories with known answers: reply rate, interview rate, the
median time to the first reply and ghosting, per group, with groups under 5 applications
withheld (never "50 % of 2"); the same figures through the store and the route."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from backend.domain import applications as domain
from backend.store import applications as store
from tests.unit.application_helpers import add_job, apply_job

TODAY = date(2026, 6, 1)
GHOST_DAYS = 30


@dataclass(frozen=True)
class Plan:
    """One generated application: when it was sent, and what happened (or not)."""

    days_ago: int
    reply_after: int | None      # days after applying; None: no reply
    interview: bool              # the reply led to an interview
    undone_interview: bool       # an interview move the user took back
    marked_ghosted: bool         # no reply, and the user said "ghosted"
    source: str


plans = st.builds(
    Plan, days_ago=st.integers(0, 90), reply_after=st.one_of(st.none(), st.integers(0, 20)),
    interview=st.booleans(), undone_interview=st.booleans(), marked_ghosted=st.booleans(),
    source=st.sampled_from(["greenhouse", "lever", "demo_board"]))


def facts_of(plan: Plan, n: int) -> domain.ApplicationFacts:
    applied = TODAY - timedelta(days=plan.days_ago)
    moves: list[domain.Move] = []
    event = n * 100

    def add(stage: str, on: date, undone: bool = False) -> None:
        nonlocal event
        event += 1
        moves.append(domain.Move(event_id=event, stage=stage, on=on.isoformat(), undone=undone))

    replied_on = None if plan.reply_after is None else applied + timedelta(days=plan.reply_after)
    if replied_on is not None and replied_on <= TODAY:
        add("heard_back", replied_on)
        if plan.interview:
            add("interviewing", replied_on)
    elif plan.marked_ghosted:
        add("ghosted", TODAY)
    if plan.undone_interview:
        add("interviewing", TODAY, undone=True)
    return domain.ApplicationFacts(applied_on=applied, moves=tuple(moves), source=plan.source,
                                   fit_score=None, resume_template="classic", title="Engineer")


def expected(group: list[Plan]) -> dict:
    """The answer from the plans alone, not from the code under test."""
    n = len(group)
    replies = [p.reply_after for p in group
               if p.reply_after is not None and p.days_ago >= p.reply_after]
    interviews = [p for p in group if p.reply_after is not None
                  and p.days_ago >= p.reply_after and p.interview]
    ghosted = [p for p in group if not (p.reply_after is not None and p.days_ago >= p.reply_after)
               and (p.marked_ghosted or p.days_ago >= GHOST_DAYS)]
    return {"reply_rate": len(replies) / n, "interview_rate": len(interviews) / n,
            "median": float(statistics.median(replies)) if replies else None,
            "ghosted_rate": len(ghosted) / n}


@settings(max_examples=60, deadline=None)
@given(st.lists(plans, min_size=0, max_size=30))
def test_group_figures_match_the_generated_histories(group):
    facts = [facts_of(plan, n) for n, plan in enumerate(group)]
    figures = domain.group_figures("All", facts, TODAY, GHOST_DAYS)
    assert figures.applications == len(group)
    if len(group) < domain.MIN_GROUP_SIZE:
        assert figures.withheld == "not enough applications yet"
        assert (figures.reply_rate, figures.interview_rate, figures.ghosted_rate,
                figures.median_days_to_first_reply) == (None, None, None, None)
        return
    answer = expected(group)
    assert figures.withheld is None
    assert figures.reply_rate == answer["reply_rate"]
    assert figures.interview_rate == answer["interview_rate"]
    assert figures.median_days_to_first_reply == answer["median"]
    assert figures.ghosted_rate == answer["ghosted_rate"]


@settings(max_examples=30, deadline=None)
@given(st.lists(plans, min_size=0, max_size=30))
def test_each_source_group_is_figured_on_its_own_members(group):
    facts = [facts_of(plan, n) for n, plan in enumerate(group)]
    by_source = {g.label: g for g in domain.grouped_figures("source", facts, TODAY, GHOST_DAYS)}
    assert sum(g.applications for g in by_source.values()) == len(group)
    for source, figures in by_source.items():
        members = [p for p in group if p.source == source]
        assert figures.applications == len(members)
        if len(members) < domain.MIN_GROUP_SIZE:
            assert figures.withheld and figures.reply_rate is None
        else:
            assert figures.reply_rate == expected(members)["reply_rate"]


async def test_a_known_history_through_the_store(db):
    """Six Greenhouse applications (replies after 2, 4 and 9 days, one interview, one the
    user marked ghosted, the rest silent for 61 days) and two from Lever (withheld)."""
    applied_at = "2026-04-01T17:00:00.000Z"  # 1 April in Los Angeles
    keys = [await add_job(db, n, source="greenhouse" if n < 6 else "lever",
                          title="Data Engineer" if n % 2 else "Backend Engineer", score=90)
            for n in range(8)]
    for key in keys:
        await apply_job(db, key, applied_at=applied_at)
    replies = {0: 2, 1: 4, 2: 9}
    async with db.transaction() as conn:
        for n, days in replies.items():
            await store.record_move(conn, keys[n], "heard_back",
                                    on=date(2026, 4, 1) + timedelta(days=days), note=None,
                                    today=TODAY)
        await store.record_move(conn, keys[1], "interviewing", on=date(2026, 4, 10), note=None,
                                today=TODAY)
        await store.record_move(conn, keys[4], "ghosted", on=date(2026, 4, 20), note=None,
                                today=TODAY)
        entries = await store.board(conn)
    facts = store.insight_facts(entries)
    overall = domain.group_figures("All", facts, TODAY, GHOST_DAYS)
    assert overall.applications == 8
    assert overall.reply_rate == 3 / 8 and overall.interview_rate == 1 / 8
    assert overall.median_days_to_first_reply == 4.0
    # No reply in 61 days: every silent one counts (marked or past the threshold).
    assert overall.ghosted_rate == 5 / 8
    by_source = {g.label: g for g in domain.grouped_figures("source", facts, TODAY, GHOST_DAYS)}
    assert by_source["greenhouse"].reply_rate == 3 / 6
    assert by_source["lever"].withheld == "not enough applications yet"
    bands = domain.grouped_figures("fitBand", facts, TODAY, GHOST_DAYS)
    assert [(g.label, g.applications) for g in bands] == [("85–100", 8)]
    roles = {g.label: g.applications for g in
             domain.grouped_figures("roleFamily", facts, TODAY, GHOST_DAYS)}
    assert roles == {"Data & analytics": 4, "Engineering": 4}
    # Not yet past the threshold: a silent application 10 days old is not ghosted.
    young = domain.group_figures("All", facts, date(2026, 4, 11), GHOST_DAYS)
    assert young.ghosted_rate == 1 / 8


def test_role_families_and_fit_bands():
    assert domain.role_family("Senior Data Engineer") == "Data & analytics"
    assert domain.role_family("Engineering Manager") == "Management"
    assert domain.role_family("Senior Product Designer") == "Design"
    assert domain.role_family("Associate Product Manager") == "Product"
    assert domain.role_family("Lead Frontend Engineer") == "Engineering"
    assert domain.role_family("Senior Technical Writer") == "Other roles"
    assert [domain.fit_band(s) for s in (None, 0, 49, 50, 69, 70, 84, 85, 100)] == [
        "Not scored", "Below 50", "Below 50", "50–69", "50–69", "70–84", "70–84", "85–100",
        "85–100"]
