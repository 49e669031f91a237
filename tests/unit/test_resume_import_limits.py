"""Issue 29 item 7: a hostile résumé file costs bounded time and memory and changes nothing.

The files are made here, each in well under a second: a Word zip bomb (a valid .docx whose
``document.xml`` inflates from 2.5 MB to 840 MB), a PDF of 1,000 pages, PDFs nested
100,000 deep (in a content stream, in a page object), a page holding a book's worth of
glyphs, a 5 MB text file on one line, a JSON Resume nested 10,000 deep. Each is read the
way the API reads it — in the bounded child — and gets its typed error within 10 s with
the child under 300 MB. The memory cap and the deadline are shown to stop a child that
misbehaves (the child's test hook, honoured only with ``JOBCTRL_ENABLE_FAULTS=1``)."""

from __future__ import annotations

import io
import json
import sqlite3
import struct
import sys
import zipfile
import zlib

import docx
import psutil
import pytest
from fastapi.testclient import TestClient
from fpdf import FPDF

from backend.api.app import create_app
from backend.config import AppPaths
from backend.profile_import import import_resume, isolated, limits
from backend.profile_import.errors import ResumeTooComplex, ResumeTooLarge
from backend.store.db import migrate

MB = 1024**2
WITHIN_S = 10.0
UNDER_BYTES = 300 * MB

# --------------------------------------------------------------------------- hostile files


def _raw_deflate(data: bytes, final: bool = False) -> bytes:
    """One raw deflate segment ending on a full flush: segments made this way concatenate
    into one valid stream, so a 1 MB chunk compressed once can be repeated for free."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final
                                                        else zlib.Z_FULL_FLUSH)


def _zip(entries: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of already deflated entries: (name, raw deflate stream, crc32, size)."""
    out, central = io.BytesIO(), []
    for name, stream, crc, size in entries:
        encoded, offset = name.encode(), out.tell()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc,
                              len(stream), size, len(encoded), 0) + encoded + stream)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21,
                                   crc, len(stream), size, len(encoded), 0, 0, 0, 0, 0,
                                   offset) + encoded)
    directory = b"".join(central)
    start = out.tell()
    out.write(directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries),
                                      len(entries), len(directory), start, 0))
    return out.getvalue()


def zip_bomb_docx(zipped_bytes: int = 2_500_000) -> bytes:
    """A real .docx whose body is one paragraph repeated ~14 million times: 2.5 MB on
    disk, 840 MB of XML once unzipped; CRCs and sizes are true, so zipfile accepts it."""
    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("Ada Example")
    document.save(buffer)
    with zipfile.ZipFile(buffer) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    xml = parts["word/document.xml"]
    head = xml[:xml.index(b"<w:body>") + len(b"<w:body>")]
    tail = xml[xml.index(b"</w:body>"):]
    paragraph = b"<w:p><w:r><w:t>Built the billing platform</w:t></w:r></w:p>"
    chunk = paragraph * (MB // len(paragraph))
    segment = _raw_deflate(chunk)
    times = zipped_bytes // len(segment)
    crc = zlib.crc32(head)
    for _ in range(times):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(tail, crc)
    stream = _raw_deflate(head) + segment * times + _raw_deflate(tail, final=True)
    entries = []
    for name, data in parts.items():
        if name == "word/document.xml":
            entries.append((name, stream, crc, len(head) + len(chunk) * times + len(tail)))
        else:
            entries.append((name, _raw_deflate(data, final=True), zlib.crc32(data), len(data)))
    return _zip(entries)


def pdf_of(contents: list[bytes], page_extra: bytes = b"") -> bytes:
    """A valid PDF (true xref offsets) with one page per content stream."""
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for index, content in enumerate(contents):
        page, stream = 4 + 2 * index, 5 + 2 * index
        kids.append(b"%d 0 R" % page)
        objects[page] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                         b"<< /Font << /F1 3 0 R >> >> /Contents %d 0 R %s>>" % (stream, page_extra))
        objects[stream] = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(contents))
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, objects[number]))
    xref, size = out.tell(), max(objects) + 1
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
    out.write(b"".join(b"%010d 00000 n \n" % offsets[n] for n in range(1, size)))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref))
    return out.getvalue()


def _text(index: int) -> bytes:
    return b"BT /F1 12 Tf 72 720 Td (Ada Example, page %d) Tj ET" % index


def thousand_pages() -> bytes:
    return pdf_of([_text(i) for i in range(1000)])


def nested_content_pdf(depth: int = 100_000) -> bytes:
    return pdf_of([_text(0) + b"\n" + b"[" * depth + b"]" * depth + b" pop"])


def nested_object_pdf(depth: int = 100_000) -> bytes:
    return pdf_of([_text(0)], page_extra=b"/Annots " + b"[" * depth + b"]" * depth + b" ")


def dense_page_pdf(operators: int = 100_000) -> bytes:
    """One page, 6.5 MB of text operators (5 million glyphs) compressed to 0.4 MB: the
    unbounded reader took more than 1.5 GB on it."""
    content = b"".join(b"BT /F1 4 Tf %d %d Td (Built the billing platform on Python %d) Tj ET\n"
                       % (10 + (i % 3) * 200, 10 + (i // 3) % 780, i) for i in range(operators))
    compressed = zlib.compress(content, 9)
    pdf = pdf_of([b"@@"])
    return pdf.replace(b"<< /Length 2 >>\nstream\n@@", b"<< /Length %d /Filter /FlateDecode >>"
                       b"\nstream\n" % len(compressed) + compressed)


def one_line_text(size: int = 5_000_000) -> bytes:
    return (b"Senior Backend Engineer " * (size // 24 + 1))[:size]


def deep_json_resume(depth: int = 10_000) -> bytes:
    return (b'{"basics": {"name": "Ada Example"}, "work": [], "meta": '
            + b"[" * depth + b"]" * depth + b"}")


HOSTILE = {
    "zip-bomb.docx": (zip_bomb_docx, "resume_too_complex"),
    "thousand-pages.pdf": (thousand_pages, "resume_too_large"),
    "nested-content.pdf": (nested_content_pdf, "resume_too_complex"),
    "nested-object.pdf": (nested_object_pdf, "resume_too_complex"),
    "dense-page.pdf": (dense_page_pdf, "resume_too_complex"),
    "one-line.txt": (one_line_text, "resume_too_complex"),
    "deep.json": (deep_json_resume, "resume_too_complex"),
}


# --------------------------------------------------------------------------- real résumés


def word_resume() -> bytes:
    document = docx.Document()
    document.add_paragraph("Ada Example")
    document.add_paragraph("ada@example.org | Berlin, Germany")
    document.add_heading("Experience", level=1)
    for year in range(2010, 2024, 2):
        document.add_paragraph(f"Senior Backend Engineer — Northwind {year}, Berlin")
        document.add_paragraph(f"{year}-01 – {year + 2}-01")
        for bullet in range(6):
            document.add_paragraph(f"Built the billing platform, part {bullet}, on Python "
                                   "and PostgreSQL for 40 teams", style="List Bullet")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def three_page_pdf() -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    for page in range(3):
        pdf.add_page()
        for line in range(55):
            pdf.cell(0, 5, f"- Built the billing platform on Python and PostgreSQL, {page}.{line}",
                     new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def json_resume(depth: int) -> bytes:
    """A JSON Resume with a field nested to exactly ``depth`` levels in all."""
    nested: object = "deep"
    for _ in range(depth - 1):
        nested = [nested]
    return json.dumps({"basics": {"name": "Ada Example"}, "meta": nested}).encode()


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_file_gets_its_typed_error_from_a_bounded_child(name):
    make, code = HOSTILE[name]
    run = isolated.run_in_child(make(), file_name=name, content_type=None)
    assert run.error is not None and run.error.code == code, (run.outcome, run.error)
    assert run.error.message and "résumé" in run.error.message
    assert run.outcome == "answered"  # refused by a check, not by the cap, the deadline or
    # a recursion limit: the file was never parsed that far
    assert run.seconds < WITHIN_S
    assert run.peak_rss_bytes is not None and run.peak_rss_bytes < UNDER_BYTES


@pytest.mark.parametrize("name", list(HOSTILE))
def test_the_checks_refuse_it_in_process_too(name):
    make, code = HOSTILE[name]
    with pytest.raises((ResumeTooComplex, ResumeTooLarge)) as refused:
        import_resume(make(), file_name=name, content_type=None)
    assert refused.value.code == code


@pytest.mark.parametrize("make,name", [(word_resume, "resume.docx"),
                                       (three_page_pdf, "resume.pdf")])
def test_a_real_resume_passes_and_the_child_answers_what_the_import_answers(make, name):
    data = make()
    run = isolated.run_in_child(data, file_name=name, content_type=None)
    assert run.error is None, run.error
    assert run.result == import_resume(data, file_name=name, content_type=None)
    assert run.result.characters > 1000
    assert run.peak_rss_bytes < UNDER_BYTES


def test_the_bounds_sit_where_they_say():
    for depth in (5, limits.MAX_NESTING):
        assert import_resume(json_resume(depth), file_name="r.json", content_type=None)
    with pytest.raises(ResumeTooComplex):
        import_resume(json_resume(limits.MAX_NESTING + 1), file_name="r.json", content_type=None)
    with pytest.raises(ResumeTooComplex):  # unclosed: json.loads would recurse before failing
        import_resume(b'{"basics": {}, "x": ' + b"[" * 10_000, file_name="r.json",
                      content_type=None)
    paragraph = "Built the billing platform on Python and PostgreSQL for 40 teams. " * 100
    lines = ["Ada Example", "", "Experience", *[paragraph[:limits.MAX_LINE_CHARS]] * 20]
    text = "\n".join(lines).encode()
    assert len(text) < limits.MAX_TEXT_CHARS
    assert import_resume(text, file_name="r.txt", content_type=None).characters > 100_000
    with pytest.raises(ResumeTooComplex):
        import_resume(text + b"\n" + text, file_name="r.txt", content_type=None)
    with pytest.raises(ResumeTooComplex):
        import_resume(b"x" * (limits.MAX_LINE_CHARS + 1), file_name="r.txt", content_type=None)


def _fault_env(fault: str) -> dict[str, str]:
    return {isolated.FAULTS_ENABLED_ENV: "1", isolated.FAULT_ENV: fault}


def _no_import_children() -> bool:
    return not [child for child in psutil.Process().children(recursive=True)
                if isolated.IMPORT_COMMAND in " ".join(child.cmdline())]


@pytest.mark.parametrize("use_rlimit", [
    pytest.param(True, marks=pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                 reason="RLIMIT_AS is enforced on Linux")),
    False])
def test_the_memory_cap_stops_a_child_that_allocates(use_rlimit):
    cap = 200 * MB
    run = isolated.run_in_child(b"Ada Example\n", file_name="r.txt", content_type=None,
                                memory_cap_bytes=cap, deadline_s=20, use_rlimit=use_rlimit,
                                env=_fault_env("allocate"))
    assert isinstance(run.error, ResumeTooComplex)
    assert run.seconds < 15  # stopped by the cap, not by the deadline
    if use_rlimit:  # the allocation fails inside the child, which says so
        assert run.outcome == "exhausted" and run.peak_rss_bytes <= cap
    else:  # the watchdog kills it shortly after it passes the cap
        assert run.outcome == "over_memory" and run.peak_rss_bytes > cap
    assert _no_import_children()


def test_the_deadline_kills_a_child_that_hangs():
    run = isolated.run_in_child(b"Ada Example\n", file_name="r.txt", content_type=None,
                                deadline_s=2, env=_fault_env("hang"))
    assert run.outcome == "over_time" and isinstance(run.error, ResumeTooComplex)
    assert 2 <= run.seconds < 6
    assert _no_import_children()


def test_the_fault_hook_is_inert_unless_faults_are_enabled():
    run = isolated.run_in_child(b"Ada Example\nada@example.org\n", file_name="r.txt",
                                content_type=None, deadline_s=20,
                                env={isolated.FAULT_ENV: "hang", isolated.FAULTS_ENABLED_ENV: ""})
    assert run.outcome == "answered" and run.error is None
    assert run.result.resume.basics.email == "ada@example.org"


# --------------------------------------------------------------------------- the route

TOKEN = "test-token"


def _durable_state(paths: AppPaths) -> tuple[int, int]:
    with sqlite3.connect(paths.database) as conn:
        return (conn.execute("SELECT COUNT(*) FROM job_events").fetchone()[0],
                conn.execute("SELECT COUNT(*) FROM candidate_profiles").fetchone()[0])


@pytest.fixture
def client(tmp_path):
    paths = AppPaths(tmp_path)
    migrate(paths.database)
    app = create_app(paths, api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        client.paths = paths
        yield client


def test_the_route_answers_resume_too_complex_and_changes_nothing(client):
    before = _durable_state(client.paths)
    api_before = psutil.Process().memory_info().rss
    for name in ("zip-bomb.docx", "dense-page.pdf", "deep.json", "one-line.txt"):
        make, code = HOSTILE[name]
        response = client.post("/v1/profile/import", files={"file": (name, make())})
        assert response.status_code == 422, (name, response.text)
        error = response.json()["error"]
        assert error["code"] == code == "resume_too_complex" and error["message"], name
    assert _durable_state(client.paths) == before
    assert client.get("/v1/profile").json()["revision"] == 0
    assert psutil.Process().memory_info().rss - api_before < 100 * MB


def test_the_route_reads_in_the_child_a_child_over_its_cap_is_a_typed_422(client, monkeypatch):
    """The fault hook acts only in the child: a route reading in its own process would
    answer 200 here; one reading in the child answers the typed error, the API unmoved."""
    monkeypatch.setattr(isolated, "MEMORY_CAP_BYTES", 200 * MB)
    for key, value in _fault_env("allocate").items():
        monkeypatch.setenv(key, value)
    api_before = psutil.Process().memory_info().rss
    response = client.post("/v1/profile/import",
                           files={"file": ("resume.txt", b"Ada Example\nada@example.org\n")})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "resume_too_complex"
    assert psutil.Process().memory_info().rss - api_before < 100 * MB
    assert _no_import_children()
