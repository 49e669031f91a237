"""A posting's title, company and location are plain words from the moment they are read:
markup a posting smuggles into them never reaches the résumé, the letter or their file
names, where the employer would read it."""

from __future__ import annotations

import pytest

from backend.pipeline.pdf import material_file_name
from backend.sources.normalize import build_posting


def posting(**fields):
    return build_posting(source_key="k-1", url="https://jobs.example.com/1", **{
        "title": "Data Analyst", "company": "Acme", "location": "Berlin", **fields})


@pytest.mark.parametrize(("field", "sent", "read"), [
    ("title", 'Data Analyst <b>BOLD</b> <img src="/dev/zero">', "Data Analyst BOLD"),
    ("company", 'Acme <a href="http://evil.example">click</a>', "Acme click"),
    ("location", '<img src="/dev/zero">Berlin', "Berlin"),
    ("title", "R&amp;D Engineer &lt;b&gt;lead&lt;/b&gt;", "R&D Engineer lead"),
])
def test_markup_in_a_postings_names_is_read_as_words(field, sent, read):
    assert getattr(posting(**{field: sent}), field) == read


@pytest.mark.parametrize("title", ["Analyst (salary <50k)", "C++ <-> Rust bridge engineer",
                                   "AT&T Network Engineer", "Q&A Lead"])
def test_ordinary_angle_brackets_and_ampersands_stay(title):
    assert posting(title=title).title == title


def test_the_file_name_of_the_materials_carries_no_markup_or_link():
    company = posting(company='Acme <a href="http://evil.example">click</a>').company
    name = material_file_name("Ada Lovelace", "resume", company)
    assert "href" not in name and "evil" not in name and "Acme click" in name
