"""The profile outbox on a real SQLite database: what counts as a genuine change, the
row committing with the revision, and the drain's reattach / coalesce rules."""

from __future__ import annotations

import pytest

from backend.domain.profile import CandidateProfile
from backend.pipeline.access_grants import GrantedRobots, host_of, normalize_host
from backend.store import profile_outbox as outbox
from backend.store.profile import save_profile
from backend.temporal.continuations import condition_workflow_id

BASE = {"name": "Ada", "skills": ["Python"], "targetTitles": ["Backend Engineer"],
        "jsonResume": {"basics": {"name": "Ada"}, "meta": {"theme": "classic"}}}


def profile(**changes) -> CandidateProfile:
    return CandidateProfile.model_validate({**BASE, **changes})


async def outbox_rows(db) -> list[tuple]:
    return [tuple(row) for row in await db.fetchall(
        "SELECT revision, status, workflow_id, coalesced_into FROM profile_outbox"
        " ORDER BY outbox_id")]


def test_genuine_changes_and_the_ones_that_are_not():
    assert outbox.is_preparation_change(None, profile())
    assert not outbox.is_preparation_change(None, CandidateProfile())  # nothing to measure
    assert outbox.is_preparation_change(profile(), profile(skills=["Python", "Go"]))
    # Normalization: the same skills with different spacing / case duplicates.
    assert not outbox.is_preparation_change(profile(), profile(skills=[" Python ", "python"]))
    # JSON Resume meta is the template / theme: style only.
    styled = profile(jsonResume={"basics": {"name": "Ada"}, "meta": {"theme": "elegant"}})
    assert not outbox.is_preparation_change(profile(), styled)
    assert outbox.is_preparation_change(
        profile(), profile(jsonResume={"basics": {"name": "Ada L."}, "meta": {"theme": "classic"}}))


async def test_a_genuine_change_commits_its_outbox_row_with_the_revision(db):
    async with db.transaction() as conn:
        assert await save_profile(conn, profile()) == (1, True)
    async with db.transaction() as conn:
        assert await save_profile(conn, profile(skills=[" Python"])) == (1, False)  # no-op
    styled = profile(jsonResume={"basics": {"name": "Ada"}, "meta": {"theme": "elegant"}})
    async with db.transaction() as conn:
        assert await save_profile(conn, styled) == (2, True)  # stored, but style only
    async with db.transaction() as conn:
        assert await save_profile(conn, profile(skills=["Go"])) == (3, True)
    assert await outbox_rows(db) == [(1, "pending", None, None), (3, "pending", None, None)]


async def test_a_rolled_back_save_leaves_neither_revision_nor_outbox_row(db):
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await save_profile(conn, profile())
            raise RuntimeError("crash before commit")
    assert await outbox_rows(db) == []
    assert await db.fetchall("SELECT * FROM candidate_profiles") == []


def row(outbox_id, status, revision=None):
    return outbox.OutboxRow(outbox_id, revision or outbox_id, status, None, None)


def test_the_drain_reattaches_older_intents_before_anything_newer():
    rows = [row(1, "started"), row(2, "pending"), row(3, "intended"), row(4, "pending")]
    step = outbox.next_drain_step(rows)
    assert (step.kind, step.row.outbox_id) == ("reattach", 1)
    step = outbox.next_drain_step(rows[1:])
    assert (step.kind, step.row.outbox_id) == ("reattach", 3)


def test_only_never_started_rows_are_coalesced_into_the_newest():
    step = outbox.next_drain_step([row(2, "pending"), row(3, "pending"), row(4, "pending")])
    assert step.kind == "dispatch" and step.row.outbox_id == 4
    assert [r.outbox_id for r in step.coalesced] == [2, 3]
    assert outbox.next_drain_step([]) is None


async def test_the_intent_is_durable_before_any_start_and_names_the_coalesced(db):
    for skills in (["A"], ["B"], ["C"]):
        async with db.transaction() as conn:
            await save_profile(conn, profile(skills=skills))
    step = outbox.next_drain_step(await outbox.open_rows(db))
    intended = await outbox.record_intent(db, step)
    assert intended.workflow_id == "profile-continuation-3"
    assert await outbox_rows(db) == [
        (1, "coalesced", None, 3), (2, "coalesced", None, 3),
        (3, "intended", "profile-continuation-3", None)]
    events = await db.fetchall(
        "SELECT payload_json, workflow_id FROM job_events WHERE type = 'ProfileContinuationIntended'")
    assert len(events) == 1 and events[0][1] == "profile-continuation-3"
    assert '"coalescedRevisions":[1,2]' in events[0][0]
    # Now the only open row has an intent: the next step reattaches, never coalesces it.
    step = outbox.next_drain_step(await outbox.open_rows(db))
    assert (step.kind, step.row.revision) == ("reattach", 3)
    await outbox.mark_started(db, 3, "run-3")
    await outbox.mark_finished(db, 3)
    assert await outbox.open_rows(db) == []


def test_hosts_and_stable_condition_ids():
    assert host_of("https://Jobs.Example.com/a?b") == "jobs.example.com"
    assert host_of("http://127.0.0.1:8080/x") == "127.0.0.1:8080"
    assert normalize_host(" Jobs.Example.com ") == "jobs.example.com"
    assert normalize_host("https://user@jobs.example.com:8443/p") == "jobs.example.com:8443"
    with pytest.raises(ValueError):
        normalize_host("not a host/")
    assert condition_workflow_id("ENRICH_ROBOTS_DISALLOWED", "127.0.0.1:8080") == \
        "enrich-condition-enrich-robots-disallowed-127.0.0.1-8080"


async def test_granted_hosts_skip_robots_and_others_keep_it():
    class Refusing:
        user_agent = "JobCtrl-test"

        async def allowed(self, client, url):
            return False

    robots = GrantedRobots(Refusing(), frozenset({"jobs.example.com"}))
    assert robots.user_agent == "JobCtrl-test"
    assert await robots.allowed(None, "https://jobs.example.com/jobs/1")
    assert not await robots.allowed(None, "https://other.example.com/jobs/1")
