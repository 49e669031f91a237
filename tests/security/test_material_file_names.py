"""Materials file names fit the file system's limit in bytes (NAME_MAX, 255), whatever
script the company or the person's name is written in."""

from __future__ import annotations

import pytest

from backend.pipeline.documents import ResumeDoc
from backend.pipeline.pdf import cut_to_bytes, material_file_name, render_resume_pdf
from desktop.presenters.applications import calendar_file_name

CJK_COMPANY = "株式会社" * 18 + "漢"   # 73 characters, 219 bytes
EMOJI_COMPANY = "🚀" * 52               # 52 characters, 208 bytes
LONG_NAMES = [("山田 太郎", CJK_COMPANY), ("Zoë 🙂", EMOJI_COMPANY),
              ("🙂" * 40, "🚀" * 60), ("Ａ" * 100, "é" * 200)]


@pytest.mark.parametrize(("full_name", "company"), LONG_NAMES)
@pytest.mark.parametrize("kind", ["resume", "cover_letter"])
def test_long_non_latin_names_fit_in_bytes_and_keep_the_extension(full_name, company, kind):
    name = material_file_name(full_name, kind, company)
    assert len(name.encode("utf-8")) <= 120
    assert name.endswith(".pdf")
    assert "\ufffd" not in name  # no character cut in half
    assert name.encode("utf-8").decode("utf-8") == name


def test_a_cjk_company_name_gives_a_pdf_that_can_be_written(tmp_path):
    resume = ResumeDoc(name="山田 太郎", headline="エンジニア")
    for company in (CJK_COMPANY, EMOJI_COMPANY):
        target = tmp_path / material_file_name(resume.name, "resume", company)
        info = render_resume_pdf(resume, target)
        assert info.path.is_file() and info.bytes > 0
        assert not [leftover for leftover in tmp_path.iterdir() if leftover.name.endswith(".tmp")]


def test_cutting_never_splits_a_character():
    assert cut_to_bytes("ab", 10) == "ab"
    assert cut_to_bytes("漢字", 4) == "漢"   # 3 + 3 bytes: the second does not fit
    assert cut_to_bytes("🚀🚀", 7) == "🚀"
    assert cut_to_bytes("é", 1) == ""


def test_the_calendar_file_name_fits_in_bytes_too():
    name = calendar_file_name({"title": "エンジニア" * 30, "company": CJK_COMPANY})
    assert len(name.encode("utf-8")) <= 124 and name.endswith(".ics")
    assert "\ufffd" not in name
