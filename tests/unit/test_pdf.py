"""Résumé and cover-letter PDFs typeset with Typst: real text in reading order, the right
paper, every script's glyphs embedded, literal user text, atomic and deterministic writes."""

from __future__ import annotations

import hashlib
import os
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pdfplumber
import pytest

from backend.pipeline import pdf as pdf_module
from backend.pipeline.documents import CoverLetterDoc, ExperienceEntry, LetterParagraph, ResumeDoc, SkillLine
from backend.pipeline.pdf import (
    TEMPLATES,
    PdfInfo,
    date_range,
    material_file_name,
    paper_for,
    render_cover_letter_pdf,
    render_resume_pdf,
)

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
FIXED = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)
A4 = (595.28, 841.89)
LETTER = (612.0, 792.0)


def _entry(position: str, employer: str, start: str, end: str | None, bullets: list[str]) -> dict:
    return {"position": position, "employer": employer, "location": "Berlin, Germany",
            "startDate": start, "endDate": end, "bullets": bullets}


SAMPLE_RESUME = ResumeDoc.model_validate({
    "name": "Maria Kowalczyk",
    "headline": "Senior Backend Engineer — distributed systems and payments",
    "contact": {"email": "maria.kowalczyk@example.com", "phone": "+49 30 5550 1234",
                "locations": ["Berlin, Germany"], "links": ["github.com/mkowalczyk"]},
    "summary": "Backend engineer with nine years of experience building payment platforms in Python and Go.",
    "experience": [
        _entry("Staff Engineer", "Ledgerline GmbH", "2021-03", None, [
            "Led the migration of settlement from nightly batches to Kafka event streaming.",
            "Designed an idempotent ledger API that processes four million transactions a day.",
            "Introduced tracing across fourteen services and halved incident resolution time.",
            "Mentored four engineers through promotion to senior roles.",
            "Chaired the architecture review that retired three legacy monoliths.",
        ]),
        _entry("Senior Backend Engineer", "Fjord Logistics", "2017-06", "2021-02", [
            "Built the route planning service in Go that schedules nine thousand deliveries daily.",
            "Replaced a cron job runner with Temporal workflows and removed lost job incidents.",
            "Cut the monthly cloud bill by a quarter by right sizing databases.",
            "Wrote the on-call runbooks and led blameless incident reviews.",
            "Shipped a tracking API used by one hundred twenty retail partners.",
        ]),
        _entry("Software Developer", "Stadtwerke Portal", "2015-08", "2017-05", [
            "Maintained the citizen self service portal with two hundred thousand monthly users.",
            "Automated accessibility checks in continuous integration.",
            "Migrated the document archive to PostgreSQL full text search.",
            "Worked with caseworkers to redesign three high traffic forms.",
            "Introduced code review and trunk based development to the team.",
        ]),
    ],
    "skills": [{"group": "Languages", "items": ["Python", "Go", "SQL"]},
               {"group": "Platforms", "items": ["PostgreSQL", "Kafka", "Temporal", "Kubernetes"]}],
    "education": [{"institution": "Technical University of Munich", "degree": "M.Sc. Computer Science",
                   "startDate": "2013", "endDate": "2015"}],
    "languages": ["Polish (native)", "German (fluent)", "English (fluent)"],
    "certifications": ["Certified Kubernetes Application Developer (2020)"],
})

SAMPLE_LETTER = CoverLetterDoc.model_validate({
    "senderName": "Maria Kowalczyk",
    "senderContact": ["maria.kowalczyk@example.com", "+49 30 5550 1234", "Berlin, Germany"],
    "dateLine": "30 November 2026",
    "recipientLines": ["Hiring Team", "Acme Analytics GmbH", "Friedrichstraße 12", "10117 Berlin"],
    "salutation": "Dear Hiring Team,",
    "paragraphs": [
        {"text": "I am applying for the Senior Backend Engineer role at Acme Analytics.",
         "evidence": ["work[0]"]},
        {"text": "At Ledgerline I led the move of settlement from nightly batches to event streaming, "
                 "which cut payout latency from a day to fifteen minutes."},
        {"text": "I would welcome the chance to talk about how I could help your team."},
    ],
    "closing": "Kind regards,",
    "signature": "Maria Kowalczyk",
})


# --------------------------------------------------------------------------- helpers


def pdf_text(path: Path) -> str:
    """All pages' text with whitespace runs collapsed, so a line wrap reads as a space."""
    with pdfplumber.open(path) as document:
        text = " ".join(page.extract_text() or "" for page in document.pages)
    return " ".join(text.split())


def page_texts(path: Path) -> list[str]:
    with pdfplumber.open(path) as document:
        return [" ".join((page.extract_text() or "").split()) for page in document.pages]


def assert_in_order(text: str, fragments: list[str]) -> None:
    position = 0
    for fragment in fragments:
        found = text.find(fragment, position)
        context = text[position:position + 200]
        assert found >= 0, f"{fragment!r} missing after position {position}: ...{context!r}"
        position = found + len(fragment)


def page_boxes(path: Path) -> list[tuple[float, float]]:
    with pdfplumber.open(path) as document:
        return [(round(float(page.width), 2), round(float(page.height), 2)) for page in document.pages]


def embedded_fonts(path: Path) -> dict[str, bool]:
    """BaseFont name → whether its FontDescriptor carries an embedded font program, for
    every font the pages use (a Type0 font is judged by its descendant CID font)."""
    from pdfminer.pdftypes import resolve1

    found: dict[str, bool] = {}
    with pdfplumber.open(path) as document:
        for page in document.pages:
            fonts = resolve1(resolve1(page.page_obj.resources).get("Font", {}))
            for ref in fonts.values():
                font = resolve1(ref)
                for leaf in [font, *map(resolve1, resolve1(font.get("DescendantFonts", [])))]:
                    if "FontDescriptor" in leaf:
                        descriptor = resolve1(leaf["FontDescriptor"])
                        embedded = bool({"FontFile", "FontFile2", "FontFile3"} & set(descriptor))
                        found[str(resolve1(leaf.get("BaseFont")))] = embedded
    return found


def long_resume(entries: int = 8, bullets: int = 7) -> ResumeDoc:
    experience = [
        _entry(f"Role number {n}", f"Employer {n}", f"{2000 + n}-01", f"{2001 + n}-01",
               [f"Entry {n} bullet {b} delivered a measurable improvement to a production system "
                f"that many people relied on every single day." for b in range(bullets)])
        for n in range(entries)
    ]
    return SAMPLE_RESUME.model_copy(update={"experience": [
        ExperienceEntry.model_validate(e) for e in experience]})


# --------------------------------------------------------------------------- paper and names


@pytest.mark.parametrize(("country", "override", "expected"), [
    ("US", "auto", "letter"), ("us", "auto", "letter"), ("CA", "auto", "letter"),
    ("MX", "auto", "letter"), ("PH", "auto", "letter"), ("CL", "auto", "letter"),
    ("CO", "auto", "letter"), ("PR", "auto", "letter"), ("DE", "auto", "a4"),
    ("GB", "auto", "a4"), ("JP", "auto", "a4"), ("ZZ", "auto", "a4"), (None, "auto", "a4"),
    ("", "auto", "a4"), ("US", "a4", "a4"), ("DE", "letter", "letter"), (None, "letter", "letter"),
])
def test_paper_for_country_and_override(country, override, expected):
    assert paper_for(country, override) == expected


def test_paper_for_rejects_unknown_override():
    with pytest.raises(ValueError):
        paper_for("US", "legal")  # type: ignore[arg-type]


def test_material_file_names_are_readable_and_safe():
    assert material_file_name("Zoë Łukasiewicz-Nørgaard", "resume", "Acme GmbH") == (
        "Zoë Łukasiewicz-Nørgaard - Resume - Acme GmbH.pdf")
    assert material_file_name("Maria Kowalczyk", "cover_letter", "Acme") == (
        "Maria Kowalczyk - Cover letter - Acme.pdf")
    assert material_file_name("  Ana   de  la Cruz ", "resume", None) == "Ana de la Cruz - Resume.pdf"
    assert material_file_name("", "resume", "") == "Resume.pdf"
    unsafe = material_file_name('A/B\\C:D*E?F"G<H>I|J\x00K\x1fL\tM\nN', "resume", "Co: <Evil>/..")
    assert unsafe == "A B C D E F G H I J K L M N - Resume - Co Evil.pdf"
    assert not re.search(r'[/\\:*?"<>|\x00-\x1f]', unsafe)


def test_material_file_name_is_capped_and_keeps_the_kind():
    name = material_file_name("Wolfeschlegelsteinhausenbergerdorff " * 5, "cover_letter",
                              "International Business Machines Corporation " * 4)
    assert len(name) <= 120
    assert name.endswith(".pdf") and " - Cover letter - " in name
    assert not name[:-4].endswith((" ", "."))
    with pytest.raises(ValueError):
        material_file_name("A", "cv", "B")  # type: ignore[arg-type]


def test_date_ranges():
    assert date_range("2021-03", None, open_ended=True, present="Present") == "Mar 2021 – Present"
    assert date_range("2017-06", "2021-02", open_ended=True, present="Present") == "Jun 2017 – Feb 2021"
    assert date_range("2013", "2015", open_ended=False, present="Present") == "2013 – 2015"
    assert date_range("2013", None, open_ended=False, present="Present") == "2013"
    assert date_range(None, None, open_ended=True, present="Present") == ""
    assert date_range("2020-13", "Spring 2021", open_ended=True, present="Present") == "2020-13 – Spring 2021"


# --------------------------------------------------------------------------- résumés


@pytest.mark.parametrize("template", TEMPLATES)
def test_resume_reads_in_visual_order(tmp_path, template):
    info = render_resume_pdf(SAMPLE_RESUME, tmp_path / "r.pdf", template=template, creation_date=FIXED)
    text = pdf_text(info.path)

    fragments = ["Maria Kowalczyk", "Senior Backend Engineer — distributed systems and payments",
                 "maria.kowalczyk@example.com", "+49 30 5550 1234", "Berlin, Germany",
                 "github.com/mkowalczyk", SAMPLE_RESUME.summary]
    for entry in SAMPLE_RESUME.experience:
        fragments += [entry.position, entry.employer]
        fragments += [pdf_module.date_range(entry.start_date, entry.end_date, open_ended=True,
                                            present="Present")]
        fragments += entry.bullets
    fragments += ["Python, Go, SQL", "PostgreSQL, Kafka, Temporal, Kubernetes",
                  "Technical University of Munich", "M.Sc. Computer Science",
                  "Polish (native)", "German (fluent)", "English (fluent)",
                  "Certified Kubernetes Application Developer (2020)"]
    assert_in_order(text, fragments)
    # Education dates sit on the institution's line, flush right: before the languages.
    assert text.index("Technical University of Munich") < text.index("2013 – 2015") < text.index("Polish")


@pytest.mark.parametrize("template", TEMPLATES)
def test_realistic_resume_fits_two_pages_and_info_is_exact(tmp_path, template):
    info = render_resume_pdf(SAMPLE_RESUME, tmp_path / "r.pdf", template=template, creation_date=FIXED)
    data = info.path.read_bytes()

    assert isinstance(info, PdfInfo) and data[:5] == b"%PDF-"
    assert 1 <= info.pages <= 2
    assert info.pages == len(page_boxes(info.path))
    assert info.bytes == len(data) == os.path.getsize(info.path)
    assert info.sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("template", TEMPLATES)
def test_long_resume_flows_without_orphaned_headers(tmp_path, template):
    resume = long_resume()
    info = render_resume_pdf(resume, tmp_path / "long.pdf", template=template, creation_date=FIXED)
    pages = page_texts(info.path)

    assert info.pages == len(pages) >= 2
    assert_in_order(" ".join(pages), [bullet for entry in resume.experience for bullet in entry.bullets])
    for entry in resume.experience:
        header_page = next(n for n, text in enumerate(pages) if f"{entry.position}" in text)
        bullet_page = next(n for n, text in enumerate(pages) if entry.bullets[0] in text)
        assert header_page == bullet_page, f"{entry.position} is separated from its first bullet"
    assert f"Page 1 of {info.pages}" in pages[0]  # multi-page documents number their pages


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize(("paper", "box"), [("a4", A4), ("letter", LETTER)])
def test_resume_paper_sizes(tmp_path, template, paper, box):
    info = render_resume_pdf(SAMPLE_RESUME, tmp_path / "r.pdf", template=template, paper=paper,
                             creation_date=FIXED)
    assert set(page_boxes(info.path)) == {box}


@pytest.mark.parametrize("template", TEMPLATES)
def test_accents_and_cjk_are_real_embedded_text(tmp_path, template):
    resume = SAMPLE_RESUME.model_copy(update={
        "name": "Zoë Łukasiewicz-Nørgaard",
        "headline": "Ingénieure logicielle — Ελληνικά, Русский, Čeština, Tiếng Việt",
        "skills": [SkillLine(group="Languages", items=["日本語 (N2)", "한국어", "中文"])],
    })
    info = render_resume_pdf(resume, tmp_path / "u.pdf", template=template, creation_date=FIXED)
    text = pdf_text(info.path)

    for word in ["Zoë", "Łukasiewicz-Nørgaard", "Ingénieure", "Ελληνικά", "Русский", "Čeština",
                 "Tiếng", "Việt", "日本語", "(N2)", "한국어", "中文"]:
        assert word in text, word
    fonts = embedded_fonts(info.path)
    assert fonts and all(fonts.values()), fonts
    names = " ".join(fonts)
    assert "Libertinus" in names and "NotoSansCJK" in names, names


INJECTION = [
    "#sys.exit()", "*bold*", "_under_", "$x^2$", "<label>", "@ref", "#let x = 1", "[brackets]",
    "{braces}", "// not a comment", "/* nor this */", "\\backslash", "`raw`", "= Heading", "~tilde",
    '#read("/etc/passwd")', "#import \"@preview/x:0.1.0\"",
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_user_text_is_never_markup(tmp_path, template):
    resume = SAMPLE_RESUME.model_copy(update={
        "name": "#sys.exit() *bold* $",
        "headline": " ".join(INJECTION[:8]),
        "summary": " ".join(INJECTION[8:]),
        "experience": [ExperienceEntry(position="#panic()", employer="*Acme*",
                                                  bullets=INJECTION)],
    })
    info = render_resume_pdf(resume, tmp_path / "inj.pdf", template=template, creation_date=FIXED)
    text = pdf_text(info.path)

    assert text.startswith("#sys.exit() *bold* $")
    for fragment in [*INJECTION, "#panic()", "*Acme*"]:
        assert fragment in text, fragment
    assert "root:" not in text


def test_letter_user_text_is_never_markup(tmp_path):
    letter = SAMPLE_LETTER.model_copy(update={
        "sender_name": "#sys.exit()", "salutation": "Dear *you*,",
        "paragraphs": [LetterParagraph(text=item) for item in INJECTION[:12]],
        "signature": "$signed$",
    })
    text = pdf_text(render_cover_letter_pdf(letter, tmp_path / "l.pdf", creation_date=FIXED).path)
    assert_in_order(text, ["#sys.exit()", "Dear *you*,", *INJECTION[:12], "$signed$"])


@pytest.mark.parametrize("template", TEMPLATES)
def test_minimal_resume_renders(tmp_path, template):
    info = render_resume_pdf(ResumeDoc(name="Only Name"), tmp_path / "min.pdf", template=template,
                             creation_date=FIXED)
    assert info.pages == 1
    assert pdf_text(info.path) == "Only Name"


def test_resume_stored_in_the_first_shape_still_renders(tmp_path):
    resume = ResumeDoc.model_validate({
        "name": "Sam Sample", "headline": "Backend Engineer",
        "contactLines": ["Sam Sample", "sam@example.com", "Berlin"],
        "summary": "Likes boring systems.",
        "sections": [{"title": "Skills for this role", "items": ["Python", "Kafka"]},
                     {"title": "Acme", "items": ["Built the thing."]}],
    })
    text = pdf_text(render_resume_pdf(resume, tmp_path / "old.pdf", creation_date=FIXED).path)
    assert_in_order(text, ["Sam Sample", "Backend Engineer", "sam@example.com", "Likes boring systems.",
                           "Built the thing.", "Python, Kafka"])


def test_pdf_metadata_title_and_author(tmp_path):
    resume = render_resume_pdf(SAMPLE_RESUME, tmp_path / "r.pdf", creation_date=FIXED)
    letter = render_cover_letter_pdf(SAMPLE_LETTER, tmp_path / "l.pdf", creation_date=FIXED)
    with pdfplumber.open(resume.path) as document:
        assert document.metadata["Title"] == "Maria Kowalczyk - Resume"
        assert document.metadata["Author"] == "Maria Kowalczyk"
        assert document.metadata["CreationDate"].startswith("D:20261130090000")
    with pdfplumber.open(letter.path) as document:
        assert document.metadata["Title"] == "Maria Kowalczyk - Cover letter"


def test_unknown_template_and_paper_are_rejected(tmp_path):
    with pytest.raises(ValueError):
        render_resume_pdf(SAMPLE_RESUME, tmp_path / "x.pdf", template="fancy")
    with pytest.raises(ValueError):
        render_resume_pdf(SAMPLE_RESUME, tmp_path / "x.pdf", paper="legal")  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- letters


@pytest.mark.parametrize(("paper", "box"), [("a4", A4), ("letter", LETTER)])
def test_letter_is_one_page_in_order(tmp_path, paper, box):
    info = render_cover_letter_pdf(SAMPLE_LETTER, tmp_path / "l.pdf", paper=paper, creation_date=FIXED)

    assert info.pages == 1 and page_boxes(info.path) == [box]
    assert_in_order(pdf_text(info.path), [
        "Maria Kowalczyk", "maria.kowalczyk@example.com", "+49 30 5550 1234", "30 November 2026",
        "Hiring Team", "Acme Analytics GmbH", "Friedrichstraße 12", "10117 Berlin", "Dear Hiring Team,",
        *[paragraph.text for paragraph in SAMPLE_LETTER.paragraphs], "Kind regards,", "Maria Kowalczyk",
    ])


def test_a_long_letter_shrinks_to_stay_on_one_page(tmp_path):
    paragraph = ("During my years on the payments team I owned the settlement pipeline end to end, from "
                 "the first design review to the on-call rotation, and I learned to keep changes small, "
                 "observable and reversible so that every release could be rolled back in minutes. ")
    letter = SAMPLE_LETTER.model_copy(update={
        "paragraphs": [LetterParagraph(text=paragraph * 2) for _ in range(6)]})
    info = render_cover_letter_pdf(letter, tmp_path / "long.pdf", creation_date=FIXED)
    assert info.pages == 1
    assert pdf_text(info.path).endswith("Kind regards, Maria Kowalczyk")


def test_an_overlong_letter_flows_onto_a_second_page(tmp_path):
    letter = SAMPLE_LETTER.model_copy(update={
        "paragraphs": [LetterParagraph(text="A sentence that goes on. " * 70)] * 12})
    info = render_cover_letter_pdf(letter, tmp_path / "overlong.pdf", creation_date=FIXED)
    assert info.pages >= 2
    assert pdf_text(info.path).count("Kind regards,") == 1


# --------------------------------------------------------------------------- bytes on disk


def test_output_is_deterministic_for_a_fixed_creation_date(tmp_path):
    first = render_resume_pdf(SAMPLE_RESUME, tmp_path / "a.pdf", creation_date=FIXED)
    pdf_module._compilers.clear()  # a fresh compiler (as in a new process) gives the same bytes
    second = render_resume_pdf(SAMPLE_RESUME, tmp_path / "b.pdf", creation_date=FIXED)
    later = render_resume_pdf(SAMPLE_RESUME, tmp_path / "c.pdf",
                              creation_date=datetime(2027, 1, 1, tzinfo=UTC))
    naive = render_resume_pdf(SAMPLE_RESUME, tmp_path / "d.pdf", creation_date=FIXED.replace(tzinfo=None))
    letters = [render_cover_letter_pdf(SAMPLE_LETTER, tmp_path / f"l{n}.pdf", creation_date=FIXED)
               for n in range(2)]

    assert first.sha256 == second.sha256 == naive.sha256  # a naive date is UTC, never local time
    assert later.sha256 != first.sha256
    assert letters[0].sha256 == letters[1].sha256


def test_concurrent_renders_from_threads_agree(tmp_path):
    def render(n: int) -> str:
        template = TEMPLATES[n % 2]
        return render_resume_pdf(SAMPLE_RESUME, tmp_path / f"t{n}.pdf", template=template,
                                 creation_date=FIXED).sha256

    with ThreadPoolExecutor(max_workers=4) as pool:
        hashes = list(pool.map(render, range(8)))
    assert len(set(hashes[0::2])) == 1 and len(set(hashes[1::2])) == 1


def test_atomic_write_leaves_only_the_final_file(tmp_path):
    target = tmp_path / "out" / "resume.pdf"
    render_resume_pdf(SAMPLE_RESUME, target, creation_date=FIXED)
    render_resume_pdf(SAMPLE_RESUME, target, creation_date=FIXED)  # overwrite in place

    assert sorted(p.name for p in target.parent.iterdir()) == ["resume.pdf"]


def test_crash_during_write_keeps_previous_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "resume.pdf"
    before = render_resume_pdf(SAMPLE_RESUME, target, creation_date=FIXED)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(pdf_module.os, "replace", boom)
    with pytest.raises(OSError):
        render_resume_pdf(long_resume(), target, creation_date=FIXED)

    assert sorted(p.name for p in tmp_path.iterdir()) == ["resume.pdf"]
    assert target.read_bytes() == before.path.read_bytes() and len(target.read_bytes()) == before.bytes


def test_render_samples_for_inspection():
    """Writes tests/_artifacts/sample-*.pdf (git-ignored) for a human to look at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for template in TEMPLATES:
        info = render_resume_pdf(SAMPLE_RESUME, ARTIFACTS / f"sample-resume-{template}.pdf",
                                 template=template, creation_date=FIXED)
        assert info.pages == 1
    letter = render_cover_letter_pdf(SAMPLE_LETTER, ARTIFACTS / "sample-cover-letter.pdf",
                                     creation_date=FIXED)
    assert letter.pages == 1
    assert not [p for p in os.listdir(ARTIFACTS) if p.endswith(".tmp")]


def test_a_renderer_that_cannot_be_loaded_is_a_typed_failure_not_retried(monkeypatch):
    """A broken Typst install: the PDF stage fails once with ``renderer_unavailable``
    (bounded code, non-retryable), never with the import error's class name."""
    import sys

    import backend.pipeline
    from backend.pipeline.job_materials import RendererUnavailable
    from backend.pipeline.job_materials import pdf_module as _pdf_module
    from backend.temporal.llm_access import typed_failure

    # As in a worker that never loaded it: neither imported nor bound on its package.
    monkeypatch.delitem(sys.modules, "backend.pipeline.pdf", raising=False)
    monkeypatch.delattr(backend.pipeline, "pdf", raising=False)
    monkeypatch.setitem(sys.modules, "typst", None)  # import typst raises ImportError
    with pytest.raises(RendererUnavailable) as caught:
        _pdf_module()
    failure = typed_failure(caught.value)
    assert (failure.type, failure.non_retryable) == ("renderer_unavailable", True)
    monkeypatch.undo()
    assert _pdf_module().render_resume_pdf  # restored: it loads again
