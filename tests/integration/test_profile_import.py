"""POST /v1/profile/import: a résumé file (or the bundled sample) becomes a draft for
review and nothing is saved; bad files get their typed error and change nothing."""

from __future__ import annotations

import io
import zipfile

import pytest
from fpdf import FPDF

from backend.profile_import import MAX_BYTES
from tests.api_http import api_http
from tests.app_db import connect_db

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


@pytest.fixture
async def http(running):
    async with api_http(running.info) as client:
        yield client


def durable_state(app_dir) -> tuple[int, int]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        events = conn.execute("SELECT COUNT(*) FROM job_events").fetchone()[0]
        profiles = conn.execute("SELECT COUNT(*) FROM candidate_profiles").fetchone()[0]
    return events, profiles


def image_only_pdf(tmp_path) -> bytes:
    """A "scanned" résumé: one page that is only a picture, no text layer."""
    from PIL import Image

    picture = tmp_path / "scan.png"
    Image.new("RGB", (400, 560), (235, 235, 235)).save(picture)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(str(picture), x=10, y=10, w=180)
    return bytes(pdf.output())


def encrypted_pdf() -> bytes:
    pdf = FPDF()
    pdf.set_encryption(owner_password="owner", user_password="secret")
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Ada Example - Backend Engineer")
    return bytes(pdf.output())


def zip_archive() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "not a résumé")
    return buffer.getvalue()


async def test_bad_files_get_their_typed_error_and_change_nothing(http, session_app_dir, tmp_path):
    before = durable_state(session_app_dir)
    cases = [
        ("scan.pdf", "application/pdf", image_only_pdf(tmp_path), 422, "resume_unreadable"),
        ("locked.pdf", "application/pdf", encrypted_pdf(), 422, "resume_encrypted"),
        ("huge.txt", "text/plain", b"a" * (MAX_BYTES + 10), 413, "resume_too_large"),
        ("photo.png", "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64, 415, "resume_unsupported_type"),
        ("archive.zip", "application/zip", zip_archive(), 415, "resume_unsupported_type"),
    ]
    for name, content_type, data, status, code in cases:
        response = await http.post("/v1/profile/import",
                                   files={"file": (name, data, content_type)})
        assert response.status_code == status, (name, response.text)
        error = response.json()["error"]
        assert error["code"] == code and error["message"], name
    no_file = await http.post("/v1/profile/import")
    assert no_file.status_code == 400 and no_file.json()["error"]["code"] == "file_required"
    assert durable_state(session_app_dir) == before


async def test_the_sample_profile_is_a_marked_draft_and_saves_nothing(http, session_app_dir):
    before = durable_state(session_app_dir)
    response = await http.post("/v1/profile/import", params={"sample": "true"})
    assert response.status_code == 200, response.text
    body = response.json()
    draft = body["profile"]
    assert draft["sample"] is True
    assert draft["importedFrom"]["fileName"] == "sample-resume.md"
    assert body["unplaced"] == []
    work = draft["resume"]["work"]
    assert len(work) >= 2 and all(entry["name"] and entry["position"] and entry["highlights"]
                                  for entry in work)
    assert draft["targetTitles"] and draft["remotePreference"] == "remote_or_hybrid"
    assert durable_state(session_app_dir) == before
    assert (await http.get("/v1/profile")).json()["revision"] == 0


async def test_a_text_resume_imports_into_work_entries(http):
    text = (
        "Ada Example\nBackend Engineer\nada@example.org | +49 30 1234567 | Berlin, Germany\n\n"
        "Experience\n"
        "Senior Backend Engineer — Northwind GmbH, Berlin\n2021-04 – present\n"
        "- Built the billing platform on Python and PostgreSQL\n"
        "- Moved 40 services to Kubernetes\n"
        "Backend Engineer — Contoso AG, Hamburg\n2017-01 – 2021-03\n"
        "- Wrote the Kafka event pipeline\n\n"
        "Skills\nPython, PostgreSQL, Kubernetes, Kafka\n"
    )
    response = await http.post("/v1/profile/import",
                               files={"file": ("resume.txt", text.encode(), "text/plain")})
    assert response.status_code == 200, response.text
    body = response.json()
    resume = body["profile"]["resume"]
    assert resume["basics"]["name"] == "Ada Example"
    assert resume["basics"]["email"] == "ada@example.org"
    assert [(w["position"], w["name"]) for w in resume["work"]] == [
        ("Senior Backend Engineer", "Northwind GmbH"), ("Backend Engineer", "Contoso AG")]
    assert resume["work"][0]["highlights"] == [
        "Built the billing platform on Python and PostgreSQL", "Moved 40 services to Kubernetes"]
    assert resume["work"][1]["highlights"] == ["Wrote the Kafka event pipeline"]
    assert body["profile"]["resumeText"].startswith("Ada Example")
    assert body["source"] == {"fileName": "resume.txt", "format": "text", "pages": None,
                              "characters": body["source"]["characters"]}
    assert body["profile"]["sample"] is False


async def test_export_before_any_profile_is_a_typed_404(http):
    response = await http.get("/v1/profile/export", params={"format": "jsonresume"})
    assert response.status_code == 404 and response.json()["error"]["code"] == "profile_missing"
    bad = await http.get("/v1/profile/export", params={"format": "europass"})
    assert bad.status_code == 422
