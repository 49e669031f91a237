"""The application routes over a real database (FastAPI TestClient; no worker needed: every
board command is local and synchronous): the board, moves, undo, follow-ups, interviews and
their .ics, Insights, and typed errors that write nothing."""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths
from backend.domain.clock import local_today, local_zone
from tests.unit.application_helpers import job_key

TOKEN = "test-token"


@pytest.fixture
def client(tmp_path):
    app = create_app(AppPaths(tmp_path), api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as test:
        test.headers["Authorization"] = f"Bearer {TOKEN}"
        test.db_path = tmp_path / "jobctrl.db"
        for n, title in ((1, "Backend Engineer"), (2, "Product Designer")):
            insert_job(test.db_path, n, title)
        yield test


def insert_job(path, n: int, title: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " description_html, first_source, first_seen_at, last_seen_at) VALUES (?, 'local',"
            " ?, ?, ?, 'Acme', '<p>Posting</p>', 'demo_board', '2026-01-01T00:00:00.000Z',"
            " '2026-01-01T00:00:00.000Z')",
            (job_key(n), f"https://acme.example/{n}", f"https://acme.example/{n}", title))


def events(client) -> int:
    with sqlite3.connect(client.db_path) as conn:
        return conn.execute("SELECT COUNT(*) FROM job_events").fetchone()[0]


def mark_applied(client, n: int) -> None:
    answer = client.post(f"/v1/jobs/{job_key(n)}/actions/mark", json={"userStatus": "applied"})
    assert answer.status_code == 200, answer.text


def error_of(response, status: int) -> str:
    assert response.status_code == status, response.text
    return response.json()["error"]["code"]


def test_a_job_marked_applied_appears_on_the_board_and_moves_and_undo_work(client):
    assert client.get("/v1/applications").json()["total"] == 0
    mark_applied(client, 1)
    board = client.get("/v1/applications").json()
    (card,) = board["items"]
    today = local_today(local_zone())
    assert card["stage"] == "applied" and card["via"] == "job_action"
    assert card["appliedOn"] == today.isoformat()
    assert card["followUp"]["dueOn"] == (today + timedelta(days=7)).isoformat()
    assert card["followUp"]["due"] is False and card["lastMove"] is None
    assert [c["label"] for c in board["columns"]] == [
        "Applied", "Heard back", "Interviewing", "Offer", "Rejected", "Withdrawn", "Ghosted"]
    moved = client.post(f"/v1/applications/{job_key(1)}/moves",
                        json={"stage": "heard_back", "note": "Recruiter emailed"})
    assert moved.status_code == 200, moved.text
    assert moved.json()["stage"] == "heard_back"
    assert moved.json()["lastMove"]["note"] == "Recruiter emailed"
    undone = client.post(f"/v1/applications/{job_key(1)}/undo").json()
    assert undone["stage"] == "applied"
    assert [m["undone"] for m in undone["moves"]] == [True]
    detail = client.get(f"/v1/applications/{job_key(1)}").json()
    assert detail["posting"]["descriptionHtml"] == "<p>Posting</p>"


def test_unknown_and_never_applied_jobs_are_404_and_409_and_nothing_is_written(client):
    mark_applied(client, 1)
    before = events(client)
    unknown = f"job_{'f' * 24}"
    assert error_of(client.post(f"/v1/applications/{unknown}/moves",
                                json={"stage": "offer"}), 404) == "job_not_found"
    assert error_of(client.post(f"/v1/applications/{job_key(2)}/moves",
                                json={"stage": "offer"}), 409) == "not_applied"
    assert error_of(client.post(f"/v1/applications/{job_key(2)}/undo"), 409) == "not_applied"
    assert error_of(client.get(f"/v1/applications/{job_key(2)}"), 409) == "not_applied"
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/moves",
                                json={"stage": "applied"}), 409) == "application_same_stage"
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/undo"), 409) == "nothing_to_undo"
    future = (date.today() + timedelta(days=30)).isoformat()
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/moves",
                                json={"stage": "offer", "date": future}), 422) == \
        "outcome_in_future"
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/moves",
                                json={"stage": "hired"}), 422) == "validation_error"
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/moves",
                                json={"stage": "offer", "extra": 1}), 422) == "validation_error"
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/follow-up/snooze",
                                json={"days": 2, "until": future}), 422) == "validation_error"
    assert error_of(client.post("/v1/applications/not-a-key/undo"), 422) == "validation_error"
    assert events(client) == before


def test_follow_up_snooze_and_done(client):
    mark_applied(client, 1)
    today = local_today(local_zone())
    snoozed = client.post(f"/v1/applications/{job_key(1)}/follow-up/snooze",
                          json={"days": 3}).json()
    assert snoozed["followUp"] == {"dueOn": (today + timedelta(days=3)).isoformat(),
                                   "status": "scheduled", "reason": "snoozed", "due": False}
    past = (today - timedelta(days=1)).isoformat()
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/follow-up/snooze",
                                json={"until": past}), 422) == "snooze_in_past"
    done = client.post(f"/v1/applications/{job_key(1)}/follow-up/done").json()
    assert done["followUp"]["status"] == "done" and done["followUp"]["dueOn"] is None
    assert client.get("/v1/applications").json()["followUpsDue"] == 0


def test_interviews_and_their_calendar_file(client):
    mark_applied(client, 1)
    answer = client.post(f"/v1/applications/{job_key(1)}/interviews", json={
        "startsAt": "2030-05-04T09:30:00+02:00", "durationMinutes": 45,
        "location": "Video call, link in the invite", "notes": "Ask about the team; bring"
        " the portfolio"})
    assert answer.status_code == 200, answer.text
    detail = answer.json()
    assert detail["stage"] == "interviewing"
    (interview,) = detail["interviews"]
    assert interview["startsAt"] == "2030-05-04T07:30:00.000Z"
    assert detail["nextInterview"]["interviewId"] == interview["interviewId"]
    ics = client.get(f"/v1/applications/{job_key(1)}/interviews.ics")
    assert ics.status_code == 200
    assert ics.headers["content-type"].startswith("text/calendar")
    text = ics.text
    assert "DTSTART:20300504T073000Z\r\n" in text and "DTEND:20300504T081500Z\r\n" in text
    assert "LOCATION:Video call\\, link in the invite\r\n" in text
    assert "SUMMARY:Interview (round 1): Backend Engineer at Acme\r\n" in text
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    canceled = client.post(f"/v1/applications/{job_key(1)}/interviews/"
                           f"{interview['interviewId']}/cancel").json()
    assert canceled["interviews"][0]["canceled"] is True
    assert "BEGIN:VEVENT" not in client.get(
        f"/v1/applications/{job_key(1)}/interviews.ics").text
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/interviews",
                                json={"startsAt": "2030-05-04T09:30:00"}), 422) == \
        "validation_error"  # a time without its zone is ambiguous
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/interviews/nope/cancel"),
                    404) == "interview_not_found"


def test_insights_withhold_figures_for_small_groups(client):
    mark_applied(client, 1)
    mark_applied(client, 2)
    body = client.get("/v1/insights").json()
    assert body["minGroupSize"] == 5
    assert body["overall"]["applications"] == 2
    assert body["overall"]["replyRate"] is None
    assert body["overall"]["withheld"] == "not enough applications yet"
    assert "30 days" in body["caption"]
    keys = [d["key"] for d in body["dimensions"]]
    assert keys == ["source", "fitBand", "roleFamily", "resumeTemplate"]
    roles = {g["label"] for g in body["dimensions"][2]["groups"]}
    assert roles == {"Engineering", "Design"}


def test_the_openapi_document_declares_the_request_bodies(client):
    document = client.get("/openapi.json").json()
    move = document["paths"]["/v1/applications/{job_key}/moves"]["post"]
    ref = move["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema = document["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"stage", "date", "note"}
    assert {"404", "409", "422"} <= set(move["responses"])


# -- the follow-up email: drafted, gated, and refused before anything is written ------------


def save_profile(client) -> None:
    from tests.integration.test_preparation import PROFILE

    assert client.put("/v1/profile", json=PROFILE).status_code == 200


def test_the_follow_up_draft_is_written_from_the_profile_and_passes_the_gate(client):
    mark_applied(client, 1)
    assert error_of(client.get(f"/v1/applications/{job_key(1)}/follow-up/email"), 409) == \
        "profile_missing"
    save_profile(client)
    draft = client.get(f"/v1/applications/{job_key(1)}/follow-up/email").json()
    assert draft["subject"] == "Following up: Backend Engineer application (Acme)"
    assert draft["body"].startswith("Dear Acme hiring team,\n\nI recently applied for the"
                                    " Backend Engineer position at Acme")
    assert draft["body"].endswith("Kind regards,\nAda Example")
    assert draft["recipient"] is None and draft["fromLetter"] is False
    assert error_of(client.get(f"/v1/applications/{job_key(2)}/follow-up/email"), 409) == \
        "not_applied"


def test_an_email_claiming_what_the_profile_does_not_hold_is_refused_and_nothing_written(client):
    mark_applied(client, 1)
    save_profile(client)
    draft = client.get(f"/v1/applications/{job_key(1)}/follow-up/email").json()
    before = events(client)
    bad = draft["body"].replace("Thank you for your time.",
                                "I also have ten years of Rust experience.")
    answer = client.post(f"/v1/applications/{job_key(1)}/follow-up/email",
                         json={"recipient": "jobs@acme.example", "subject": draft["subject"],
                               "body": bad})
    assert error_of(answer, 422) == "follow_up_claim_unsupported"
    assert "Rust" in answer.json()["error"]["message"]
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/follow-up/email",
                                json={"recipient": "not an address", "subject": "s",
                                      "body": "b"}), 422) == "validation_error"
    # A true email, but no email account is set up: refused before the worker is asked.
    assert error_of(client.post(f"/v1/applications/{job_key(1)}/follow-up/email",
                                json={"recipient": "jobs@acme.example",
                                      "subject": draft["subject"], "body": draft["body"]}),
                    409) == "smtp_not_configured"
    assert events(client) == before
    with sqlite3.connect(client.db_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM follow_up_emails").fetchone()[0] == 0
