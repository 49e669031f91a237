"""A paid model's résumé and letter through the truthfulness gate, on a real loopback
OpenAI-compatible stand-in with no spend ceiling: an invented claim gets one repair with
the claim named; still inventing, the stage fails typed and nothing is rendered."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from tests.integration.test_paid_pipeline import (
    LETTER_REPLY,
    count_events,
    paid_app,
    prep_terminals,
    scripted_for,
    scripted_reply,
    wait_terminals,
)

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def paid(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("paid-materials-app")
    async with paid_app(app_dir, 3, 0) as (supervisor, http, fake):
        await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
        await wait_terminals(app_dir, 3)
        yield {"app_dir": app_dir, "http": http, "fake": fake, "supervisor": supervisor}


def letter_replies(*replies: str):
    return scripted_for(
        lambda request: request.body["messages"][0]["content"].startswith("You write a concise"),
        *replies)


INVENTED_LETTER = json.dumps({"paragraphs": [
    {"text": "I hold a PhD in Computer Science and I am happy to relocate to San Francisco.",
     "evidence": []},
    {"text": "Thank you for considering my application.", "evidence": []}]})


async def tailored_job(http) -> str:
    """A job whose résumé was written (Enrich trusted its description)."""
    page = (await http.get("/v1/jobs", params={"stage": "tailor", "stageStatus": "succeeded",
                                               "sort": "title", "limit": 1})).json()
    return page["items"][0]["jobId"]


async def test_a_letter_that_invents_is_rejected_then_repaired(paid):
    """The gate refuses the invented claims; the one repair with a clean letter passes."""
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    job = await tailored_job(http)
    calls, terminals = fake.calls, len(prep_terminals(app_dir))
    fake.reply_with(letter_replies(INVENTED_LETTER, LETTER_REPLY))
    try:
        response = await http.post(f"/v1/jobs/{job}/actions/retailor",
                                   json={"discardEdits": True})
        assert response.status_code == 202, response.text
        final = await wait_terminals(app_dir, terminals + 1)
    finally:
        fake.reply_with(scripted_reply)
    assert final[-1] == ("WorkflowCompleted", None)
    assert fake.calls == calls + 3, "résumé, the invented letter, its one repair"
    repair = fake.requests[-1].body["messages"][-1]["content"]
    assert "PhD" in repair or "relocate" in repair, "the repair names the unsupported claim"
    detail = (await http.get(f"/v1/jobs/{job}")).json()
    text = " ".join(p["text"] for p in detail["coverLetter"]["content"]["paragraphs"])
    assert "PhD" not in text and "relocate" not in text
    assert detail["materialRejections"] == []


async def test_a_letter_still_inventing_after_its_repair_fails_typed_and_renders_nothing(paid):
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    job = await tailored_job(http)
    rendered, terminals = count_events(app_dir, "PdfRendered"), len(prep_terminals(app_dir))
    fake.reply_with(letter_replies(INVENTED_LETTER))
    try:
        assert (await http.post(f"/v1/jobs/{job}/actions/retailor",
                                json={"discardEdits": True})).status_code == 202
        final = await wait_terminals(app_dir, terminals + 1)
    finally:
        fake.reply_with(scripted_reply)
    assert final[-1] == ("WorkflowFailed", "materials_unsupported_claim")
    assert count_events(app_dir, "PdfRendered") == rendered, "nothing unsupported is rendered"
    detail = (await http.get(f"/v1/jobs/{job}")).json()
    cover = next(s for s in detail["stages"] if s["stage"] == "cover")
    assert cover["status"] == "failed" and cover["errorCode"] == "materials_unsupported_claim"
    [rejection] = detail["materialRejections"]
    assert rejection["kind"] == "cover_letter"
    assert "PhD" in rejection["claim"] or "relocate" in rejection["claim"]
