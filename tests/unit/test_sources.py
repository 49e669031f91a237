"""Source families: the bundled demo board, board-file parsing, source selection and the
final status of a Discover run."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from temporalio.exceptions import ApplicationError

from backend.domain.ids import job_id_for_url
from backend.domain.source_config import DemoBoardSource, JsonFileSource
from backend.sources.board_file import demo_board_text, fetch_json_file, parse_board
from backend.sources.errors import (
    BOUNDED_SOURCE_CODES,
    SourceError,
    SourceMisconfigured,
    SourcePayloadInvalid,
)
from backend.sources.registry import fetch_source
from backend.temporal.activities.discovery import final_status, select_sources
from backend.temporal.contracts import DiscoveryExecutionRef, FamilyOutcome, FinalizeInput

GOOD_POSTING = {
    "id": "p-1",
    "url": "https://jobs.example.com/acme/engineer-1",
    "title": "Engineer",
    "company": "Acme",
}


def _board(*postings: dict) -> str:
    return json.dumps({"postings": list(postings)})


# --- the bundled demo board -------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_postings():
    return parse_board(demo_board_text())


def test_demo_board_is_rich_enough_to_exercise_the_ui(demo_postings):
    assert len(demo_postings) >= 200
    assert len({p.company for p in demo_postings}) >= 30
    modes = Counter(p.remote for p in demo_postings)
    assert len(modes) >= 3, modes
    assert any(p.salary is not None for p in demo_postings)
    assert any(p.salary is None for p in demo_postings)
    with_html = [p for p in demo_postings if p.description_html and "<" in p.description_html]
    assert len(with_html) >= len(demo_postings) // 2


def test_demo_board_source_keys_are_unique(demo_postings):
    keys = [p.source_key for p in demo_postings]
    assert len(keys) == len(set(keys))


def test_demo_board_yields_234_distinct_jobs(demo_postings):
    """A few postings are re-listed under tracking-junk URL variants: they must collapse."""
    job_ids = {job_id_for_url(p.url) for p in demo_postings}
    assert len(job_ids) == 234
    assert len(demo_postings) > len(job_ids)


async def test_fetch_demo_board_via_registry(demo_postings):
    fetched = await fetch_source(DemoBoardSource())
    assert [p.source_key for p in fetched] == [p.source_key for p in demo_postings]


# --- board-file parsing -----------------------------------------------------------------


def test_parse_board_maps_the_camel_case_shape():
    postings = parse_board(
        _board(
            {
                **GOOD_POSTING,
                "applyUrl": "https://jobs.example.com/acme/engineer-1/apply",
                "location": "Berlin",
                "remote": "hybrid",
                "salary": {"min": 50000, "max": 70000, "currency": "EUR", "period": "year"},
                "employmentType": "full_time",
                "postedAt": "2024-05-01",
                "descriptionHtml": "<p>Build things</p>",
                "tags": ["python", "sql"],
            },
            {**GOOD_POSTING, "id": "p-2", "url": "https://jobs.example.com/acme/engineer-2"},
        )
    )
    first, second = postings
    assert first.source_key == "p-1"
    assert first.apply_url.endswith("/apply")
    assert first.remote == "hybrid"
    assert (first.salary.min, first.salary.max, first.salary.currency) == (50000, 70000, "EUR")
    assert first.employment_type == "full_time"
    assert first.description_html == "<p>Build things</p>"
    assert first.tags == ["python", "sql"]
    assert second.remote == "unknown" and second.salary is None and second.tags == []


def test_parse_board_accepts_an_empty_board():
    assert parse_board('{"postings": []}') == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("not json", id="invalid-json"),
        pytest.param("", id="empty-text"),
        pytest.param("{}", id="missing-postings"),
        pytest.param('{"jobs": []}', id="wrong-key"),
        pytest.param('{"postings": {}}', id="postings-object"),
        pytest.param('{"postings": "x"}', id="postings-string"),
        pytest.param('{"postings": null}', id="postings-null"),
        pytest.param("[]", id="document-list"),
        pytest.param("null", id="document-null"),
        pytest.param('"postings"', id="document-string"),
        pytest.param('{"postings": ["x"]}', id="posting-string"),
        pytest.param('{"postings": [null]}', id="posting-null"),
        pytest.param(_board({**GOOD_POSTING, "url": "not a url at all"}), id="bad-url"),
        pytest.param(_board({**GOOD_POSTING, "url": "ftp://jobs.example.com/1"}), id="ftp-url"),
        pytest.param(_board({**GOOD_POSTING, "url": "/acme/engineer-1"}), id="relative-url"),
        pytest.param(_board({**GOOD_POSTING, "title": ""}), id="empty-title"),
        pytest.param(_board({k: v for k, v in GOOD_POSTING.items() if k != "title"}),
                     id="missing-title"),
        pytest.param(_board({k: v for k, v in GOOD_POSTING.items() if k != "id"}), id="no-id"),
        pytest.param(_board({**GOOD_POSTING, "company": ""}), id="empty-company"),
        pytest.param(_board({**GOOD_POSTING, "remote": "sometimes"}), id="bad-remote"),
        pytest.param(_board({**GOOD_POSTING, "salary": {"min": -1}}), id="negative-salary"),
        pytest.param(_board(GOOD_POSTING, {**GOOD_POSTING, "id": "p-2", "title": ""}),
                     id="one-bad-among-good"),
    ],
)
def test_parse_board_rejects_unreadable_payloads(text):
    with pytest.raises(SourcePayloadInvalid) as info:
        parse_board(text)
    assert info.value.code == "source_payload_invalid"
    assert info.value.retryable is False


def test_source_error_codes_are_bounded():
    assert SourcePayloadInvalid.code in BOUNDED_SOURCE_CODES
    assert SourceMisconfigured.code == "configuration"
    assert SourceMisconfigured.retryable is False
    assert issubclass(SourcePayloadInvalid, SourceError)
    assert issubclass(SourceMisconfigured, SourceError)


async def test_fetch_json_file_reads_a_board(tmp_path):
    board = tmp_path / "board.json"
    board.write_text(_board(GOOD_POSTING), encoding="utf-8")
    postings = await fetch_source(JsonFileSource(id="mine", path=str(board)))
    assert [p.source_key for p in postings] == ["p-1"]


async def test_fetch_json_file_expands_the_home_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "board.json").write_text(_board(GOOD_POSTING), encoding="utf-8")
    postings = await fetch_json_file(JsonFileSource(id="mine", path="~/board.json"))
    assert len(postings) == 1


async def test_fetch_json_file_missing_file_is_misconfiguration(tmp_path):
    with pytest.raises(SourceMisconfigured):
        await fetch_json_file(JsonFileSource(id="mine", path=str(tmp_path / "nope.json")))


async def test_fetch_json_file_directory_is_misconfiguration(tmp_path):
    with pytest.raises(SourceMisconfigured):
        await fetch_json_file(JsonFileSource(id="mine", path=str(tmp_path)))


async def test_fetch_json_file_with_broken_content_is_payload_invalid(tmp_path):
    board = tmp_path / "board.json"
    board.write_text('{"postings": [{"id": "x-1", "url": "not a url", "title": ""}]}', "utf-8")
    with pytest.raises(SourcePayloadInvalid):
        await fetch_json_file(JsonFileSource(id="broken", path=str(board)))


# --- select_sources ---------------------------------------------------------------------

DEMO = DemoBoardSource()
MINE = JsonFileSource(id="mine", path="/tmp/mine.json")
OFF = JsonFileSource(id="off", path="/tmp/off.json", enabled=False)
CONFIGURED = [DEMO, OFF, MINE]


def test_select_sources_defaults_to_enabled_sources_in_configured_order():
    assert [s.id for s in select_sources(CONFIGURED, None)] == ["demo_board", "mine"]


def test_select_sources_with_nothing_enabled_selects_nothing():
    assert select_sources([OFF], None) == []


def test_select_sources_explicit_ids_keep_the_requested_order():
    assert [s.id for s in select_sources(CONFIGURED, ["mine", "demo_board"])] == [
        "mine",
        "demo_board",
    ]


def test_select_sources_explicit_ids_may_name_a_disabled_source():
    assert [s.id for s in select_sources(CONFIGURED, ["off"])] == ["off"]


@pytest.mark.parametrize("wanted", [["nope"], ["demo_board", "nope"], ["DEMO_BOARD"]])
def test_select_sources_unknown_id_is_a_non_retryable_configuration_error(wanted):
    with pytest.raises(ApplicationError) as info:
        select_sources(CONFIGURED, wanted)
    assert info.value.type == "configuration"
    assert info.value.non_retryable is True


# --- final_status -----------------------------------------------------------------------

REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-1")


def _ok(family: str) -> FamilyOutcome:
    return FamilyOutcome(family=family, status="succeeded", new_jobs=1)


def _failed(family: str) -> FamilyOutcome:
    return FamilyOutcome(family=family, status="failed", error_code="source_unavailable")


def _finalize(outcomes, **kw) -> str:
    return final_status(FinalizeInput(ref=REF, outcomes=outcomes, **kw))


@pytest.mark.parametrize(
    ("outcomes", "kwargs", "expected"),
    [
        pytest.param([_ok("a"), _ok("b")], {}, "completed", id="none-failed"),
        pytest.param([_ok("a"), _failed("b")], {}, "completed_with_issues", id="some-failed"),
        pytest.param([_failed("a"), _failed("b")], {}, "failed", id="all-failed"),
        pytest.param([_failed("a")], {}, "failed", id="only-family-failed"),
        pytest.param([], {}, "completed", id="zero-families"),
        pytest.param([], {"error_code": "configuration"}, "failed", id="planning-error"),
        pytest.param([_ok("a")], {"error_code": "x"}, "failed", id="error-beats-success"),
        pytest.param([_ok("a")], {"canceled": True}, "canceled", id="canceled"),
        pytest.param([], {"canceled": True}, "canceled", id="canceled-before-any-family"),
        pytest.param([_failed("a")], {"canceled": True, "error_code": "x"}, "canceled",
                     id="canceled-beats-everything"),
    ],
)
def test_final_status(outcomes, kwargs, expected):
    assert _finalize(outcomes, **kwargs) == expected
