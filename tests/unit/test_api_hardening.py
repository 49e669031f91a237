"""No 500s outside the envelope, bounded input, and an OpenAPI document that says what the
routes answer (FastAPI TestClient over a real database file; Temporal unreachable)."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.api.guard import MAX_JSON_DEPTH, json_depth_exceeds
from backend.config import AppPaths

TOKEN = "test-token"


@pytest.fixture
def client(tmp_path):
    app = create_app(AppPaths(tmp_path), api_token=TOKEN, temporal_address="127.0.0.1:1")

    @app.get("/v1/_test/boom", include_in_schema=False)
    async def boom() -> dict:
        raise RuntimeError("an unexpected fault")

    # raise_server_exceptions=False: see what a real client would get.
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as test_client:
        test_client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield test_client


def nested(depth: int) -> dict:
    document: dict = {}
    for _ in range(depth - 1):
        document = {"a": document}
    return document


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    return error


# -- the 500s the fuzzer found ----------------------------------------------------------------


@pytest.mark.parametrize("where", ["header", "query"])
def test_a_last_event_id_of_thousands_of_digits_is_a_typed_400(client, where):
    huge = "9" * 5000
    kwargs = {"headers": {"Last-Event-ID": huge}} if where == "header" else {
        "params": {"lastEventId": huge}}
    assert_error(client.get("/v1/events/stream", **kwargs), 400, "invalid_last_event_id")


def test_a_last_event_id_beyond_sqlite_integers_is_invalid(client):
    response = client.get("/v1/events/stream", headers={"Last-Event-ID": str(2**63)})
    assert_error(response, 400, "invalid_last_event_id")


def test_an_activity_cursor_beyond_sqlite_integers_is_a_422(client):
    response = client.get("/v1/debug/activity", params={"beforeId": str(2**64)})
    assert_error(response, 422, "validation_error")
    assert client.get("/v1/debug/activity", params={"beforeId": str(2**63 - 1)}).status_code == 200


@pytest.mark.parametrize("bound", ["startedBefore", "startedSince"])
def test_a_bound_outside_utc_datetimes_is_a_422(client, bound):
    response = client.get("/v1/workflow-runs",
                          params={bound: "0001-01-01T01:03:01+09:02", "offset": 5})
    assert_error(response, 422, "validation_error")


def test_the_last_representable_instant_is_accepted(client):
    response = client.get("/v1/workflow-runs", params={"startedSince": "9999-12-31T23:59:59.9999Z"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("value", ["0.5", "1700000000", "2026-01-31T09:00:00"])
def test_a_date_time_parameter_takes_rfc3339_text_with_an_offset_only(client, value):
    assert_error(client.get("/v1/workflow-runs", params={"startedSince": value}), 422,
                 "validation_error")
    ok = client.get("/v1/workflow-runs", params={"startedSince": "2026-01-31T09:00:00+01:00"})
    assert ok.status_code == 200


def test_a_profile_nested_900_levels_deep_is_refused_before_parsing(client):
    response = client.put("/v1/profile", json={"resume": {"basics": {"x": nested(900)}}})
    assert_error(response, 422, "json_too_deep")
    assert client.get("/v1/profile").json()["revision"] == 0  # nothing was saved


def test_a_profile_just_under_the_depth_cap_is_saved(client):
    response = client.put("/v1/profile", json={"resume": {"basics": {"x": nested(MAX_JSON_DEPTH - 3)}}})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("profile", [
    {"targetTitles": ["x" * 10_000]},
    {"locations": ["x" * 10_000]},
    {"mustHaveKeywords": ["x" * 10_000]},
    {"resume": {"skills": [{"name": "Skills", "keywords": ["x" * 10_000]}]}},
    {"resume": {"work": [{"name": "Acme", "highlights": ["x" * 10_000]}]}},
])
def test_enormous_strings_inside_profile_lists_are_refused(client, profile):
    assert_error(client.put("/v1/profile", json=profile), 422, "validation_error")


def test_a_body_over_2_mb_is_413_from_its_content_length(client):
    response = client.put("/v1/profile", json={"resumeText": "x" * (3 * 1024 * 1024)})
    assert_error(response, 413, "payload_too_large")


def test_a_streamed_body_over_2_mb_is_413_without_content_length(client):
    def chunks():
        for _ in range(5):
            yield b" " * (1024 * 1024)

    response = client.put("/v1/profile", content=chunks(),
                          headers={"Content-Type": "application/json"})
    assert "content-length" not in {k.lower() for k in response.request.headers}
    assert_error(response, 413, "payload_too_large")


def test_the_resume_upload_keeps_its_own_5_mb_limit(client):
    four_mb = b"x" * (4 * 1024 * 1024)
    response = client.post("/v1/profile/import", files={"file": ("cv.txt", four_mb, "text/plain")})
    assert response.status_code != 413, response.text  # over 2 MB, under the route's cap
    seven_mb = b"x" * (7 * 1024 * 1024)
    response = client.post("/v1/profile/import", files={"file": ("cv.txt", seven_mb, "text/plain")})
    assert_error(response, 413, "payload_too_large")


def test_an_unexpected_exception_answers_the_envelope_with_the_logged_request_id(client, caplog):
    with caplog.at_level(logging.ERROR):
        response = client.get("/v1/_test/boom")
    error = assert_error(response, 500, "internal_error")
    assert "an unexpected fault" not in response.text  # no exception text leaves the process
    assert error["requestId"] == response.headers["x-request-id"]
    assert any(error["requestId"] in record.getMessage() for record in caplog.records)


def test_every_response_carries_a_fresh_request_id(client):
    ids = {client.get(path).headers["x-request-id"]
           for path in ("/v1/health", "/v1/profile", "/v1/profile", "/v1/nope")}
    assert len(ids) == 4
    refused = client.get("/v1/health", headers={"Host": "evil.example"})
    assert refused.status_code == 403 and refused.headers["x-request-id"]


def test_json_depth_ignores_brackets_inside_strings():
    assert not json_depth_exceeds(b'{"a": "' + b"[" * 500 + b'"}')
    assert not json_depth_exceeds(b'{"a": "\\"' + b"{" * 500 + b'"}')
    assert json_depth_exceeds(b"[" * 65 + b"]" * 65)
    assert not json_depth_exceeds(b"[" * 64 + b"]" * 64)


# -- one code per fault, 405 with Allow --------------------------------------------------------


@pytest.mark.parametrize(("path", "content_type", "body"), [
    ("/v1/profile", "application/json", b"{not json"),
    ("/v1/profile/import", "multipart/form-data; boundary=x", b"--y\r\nbroken"),
    ("/v1/profile/import", "multipart/form-data", b"no boundary at all"),
])
def test_an_undecodable_body_is_malformed_json_everywhere(client, path, content_type, body):
    method = client.put if path == "/v1/profile" else client.post
    response = method(path, content=body, headers={"Content-Type": content_type})
    assert_error(response, 400, "malformed_json")


def test_405_names_every_method_of_the_path(client):
    response = client.delete("/v1/profile")
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, PUT"


# -- the document says what the routes answer -------------------------------------------------


@pytest.mark.parametrize(("method", "path"), [
    ("post", "/v1/jobs/{job_key}/actions/run-stage"),
    ("post", "/v1/jobs/{job_key}/actions/cancel"),
    ("post", "/v1/pipeline/conditions/enrich/resolve"),
    ("post", "/v1/pipeline/actions/run-stage"),
    ("post", "/v1/pipeline/actions/rescore-stale"),
    ("post", "/v1/pipeline/actions/retailor-stale"),
])
def test_commands_with_a_noop_reply_declare_both_200_and_202(client, method, path):
    responses = client.get("/openapi.json").json()["paths"][path][method]["responses"]
    assert {"200", "202"} <= responses.keys()


def test_date_time_parameters_are_declared_as_such(client):
    parameters = client.get("/openapi.json").json()["paths"]["/v1/workflow-runs"]["get"]["parameters"]
    since = next(p for p in parameters if p["name"] == "startedSince")
    assert {"type": "string", "format": "date-time"}.items() <= since["schema"]["anyOf"][0].items()


# -- request bodies: what the document allows is what the route takes -------------------------


def request_schema(client, method: str, path: str, media: str = "application/json") -> dict:
    document = client.get("/openapi.json").json()
    schema = document["paths"][path][method]["requestBody"]["content"][media]["schema"]
    return resolve(document, schema)


def resolve(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def component(client, name: str) -> dict:
    return client.get("/openapi.json").json()["components"]["schemas"][name]


def test_the_settings_patch_declares_every_key_and_no_other(client):
    body = request_schema(client, "patch", "/v1/settings")
    assert body["additionalProperties"] is False and "required" not in body
    assert {"llm", "sources", "minFitScore", "dailyBudgetUsd", "discoverySchedule"} <= \
        body["properties"].keys()
    assert body["properties"]["minFitScore"]["type"] == "integer"  # no null: refused below
    llm = component(client, "LlmSettingsPatch")
    assert llm["additionalProperties"] is False and "required" not in llm
    for patch, field in [({"noSuchKey": 1}, "noSuchKey"), ({"min_fit_score": 10}, "min_fit_score"),
                         ({"minFitScore": None}, "minFitScore"), ({"llm": {"x": 1}}, "llm.x")]:
        error = assert_error(client.patch("/v1/settings", json=patch), 422, "validation_error")
        assert error["fields"] == [field]
    assert client.get("/v1/settings").json()["minFitScore"] == 50  # nothing was saved


def test_a_settings_patch_changes_only_the_keys_it_names(client):
    saved = client.patch("/v1/settings", json={"llm": {"model": "m-1"}, "minFitScore": 60})
    assert saved.status_code == 200, saved.text
    settings = client.get("/v1/settings").json()
    assert settings["llm"] == {**saved.json()["llm"], "model": "m-1", "provider": "offline"}
    assert (settings["minFitScore"], settings["autoApply"]) == (60, False)


def test_the_llm_test_body_declares_the_llm_keys(client):
    body = request_schema(client, "post", "/v1/settings/llm/test")  # optional: any of it or null
    body = component(client, body["anyOf"][0]["$ref"].rsplit("/", 1)[1])
    assert body["additionalProperties"] is False
    assert body["properties"]["llm"]["anyOf"][0] == {"$ref": "#/components/schemas/LlmSettingsPatch"}
    for request, field in [({"llm": {"nope": 1}}, "llm.nope"), ({"timeout_s": 5}, "timeout_s")]:
        error = assert_error(client.post("/v1/settings/llm/test", json=request), 422,
                             "validation_error")
        assert error["fields"] == [field]


def test_run_stage_declares_which_stage_takes_which_keys(client):
    body = request_schema(client, "post", "/v1/pipeline/actions/run-stage")
    mapping = body["discriminator"]["mapping"]
    assert body["discriminator"]["propertyName"] == "stage"
    keys = {stage: set(component(client, ref.rsplit("/", 1)[1])["properties"]) - {"stage"}
            for stage, ref in mapping.items()}
    assert keys == {"discover": {"sourceIds"}, "enrich": set(), "score": set(), "pdf": set(),
                    "tailor": {"jobKeys", "workers"}, "cover": {"jobKeys", "workers"}}
    batch = component(client, mapping["tailor"].rsplit("/", 1)[1])
    assert batch["dependentRequired"] == {"workers": ["jobKeys"]}
    for request, code in [({"stage": "score", "jobKeys": ["a"]}, "batch_stage_unsupported"),
                          ({"stage": "discover", "workers": 2}, "batch_stage_unsupported"),
                          ({"stage": "cover", "workers": 2}, "workers_without_jobs"),
                          ({"stage": "score", "sourceIds": ["demo_board"]}, "validation_error")]:
        assert_error(client.post("/v1/pipeline/actions/run-stage", json=request), 422, code)


def test_the_resume_form_takes_one_file_part_a_file_or_its_text(client):
    form = request_schema(client, "post", "/v1/profile/import", "multipart/form-data")
    assert form["properties"]["file"] == {**form["properties"]["file"], "type": "string",
                                          "format": "binary"}  # not nullable
    response = client.post("/v1/profile/import", data={"file": "Jane Doe\nBackend Engineer",
                                                       "other": "ignored"})
    assert response.status_code == 200, response.text
    assert response.json()["profile"]["resume"]["basics"]["name"] == "Jane Doe"
    assert_error(client.post("/v1/profile/import", data={"other": "x"}), 400, "file_required")


def test_the_sample_import_refuses_a_file_and_an_undecodable_body(client):
    both = client.post("/v1/profile/import", params={"sample": "true"},
                       data={"file": "Jane Doe\nBackend Engineer"})
    assert_error(both, 400, "file_with_sample")
    broken = client.post(
        "/v1/profile/import", params={"sample": "true"}, content=b"--b\r\n[]--b--\r\n",
        headers={"Content-Type": "multipart/form-data; boundary=b"})
    assert broken.status_code == 400, broken.text
    assert client.post("/v1/profile/import", params={"sample": "true"}).status_code == 200


def test_a_union_tag_is_required_where_the_document_maps_it(client):
    assert "kind" in component(client, "DemoBoardSource")["required"]  # its default is no use
    error = assert_error(client.patch("/v1/settings", json={"sources": [{}]}), 422,
                         "validation_error")
    assert error["fields"] == ["sources.0.kind"]
