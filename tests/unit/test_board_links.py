"""Each new family's resolve_link on the URL shapes people paste, and the settings that
accept the new kinds (the lead registers the resolvers in backend/sources/link.py)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from pydantic import ValidationError

from backend.config import AppSettings
from backend.domain.source_config import (
    PersonioSource,
    RecruiteeSource,
    SmartRecruitersSource,
    WorkableSource,
    WorkdaySource,
)
from backend.sources import personio, recruitee, smartrecruiters, workable, workday

RESOLVERS = (workday, smartrecruiters, workable, recruitee, personio)

LINKS = [
    ("https://acme.wd5.myworkdayjobs.com/en-US/External",
     {"kind": "workday", "host": "acme.wd5.myworkdayjobs.com", "tenant": "acme",
      "site": "External"}),
    ("https://acme.wd5.myworkdayjobs.com/External",
     {"kind": "workday", "host": "acme.wd5.myworkdayjobs.com", "tenant": "acme",
      "site": "External"}),
    ("https://nvidia.wd5.myworkdayjobs.com/en-US/NVIDIAExternalCareerSite/job/US-CA-Santa-Clara/"
     "Senior-Engineer_JR1990000?source=jobboard",
     {"kind": "workday", "host": "nvidia.wd5.myworkdayjobs.com", "tenant": "nvidia",
      "site": "NVIDIAExternalCareerSite"}),
    ("https://wd3.myworkdaysite.com/recruiting/initech/InitechJobs",
     {"kind": "workday", "host": "wd3.myworkdaysite.com", "tenant": "initech",
      "site": "InitechJobs"}),
    ("https://careers.smartrecruiters.com/Acme", {"kind": "smartrecruiters", "company": "Acme"}),
    ("https://jobs.smartrecruiters.com/Acme/744000012345678-software-engineer",
     {"kind": "smartrecruiters", "company": "Acme"}),
    ("https://apply.workable.com/acme/", {"kind": "workable", "account": "acme"}),
    ("https://apply.workable.com/acme/j/AB12CD34EF/", {"kind": "workable", "account": "acme"}),
    ("https://acme.workable.com/", {"kind": "workable", "account": "acme"}),
    ("https://acme.recruitee.com/", {"kind": "recruitee", "company": "acme"}),
    ("https://acme.recruitee.com/o/backend-engineer",
     {"kind": "recruitee", "company": "acme"}),
    ("https://acme.jobs.personio.de/", {"kind": "personio", "company": "acme"}),
    ("https://acme.jobs.personio.de/job/1203456?language=en",
     {"kind": "personio", "company": "acme"}),
    ("https://acme.jobs.personio.com/",
     {"kind": "personio", "company": "acme", "baseUrl": "https://acme.jobs.personio.com"}),
]

NOT_OURS = [
    "https://boards.greenhouse.io/acme", "https://jobs.lever.co/acme",
    "https://www.myworkdayjobs.com/", "https://acme.wd5.myworkdayjobs.com/",
    "https://apply.workable.com/", "https://apply.workable.com/j/AB12CD34EF",
    "https://www.workable.com/", "https://www.recruitee.com/", "https://recruitee.com/o/x",
    "https://jobs.personio.de/", "https://careers.smartrecruiters.com/",
    "https://example.com/careers", "not a url",
]


def resolve(url):
    found = [params for module in RESOLVERS if (params := module.resolve_link(url))]
    assert len(found) <= 1, found  # one family per link
    return found[0] if found else None


@pytest.mark.parametrize(("url", "expected"), LINKS)
def test_a_careers_link_names_its_family_and_parameters(url, expected):
    assert resolve(url) == expected
    assert resolve(urlsplit(url)) == expected  # a SplitResult as well as a string


@pytest.mark.parametrize("url", NOT_OURS)
def test_other_links_are_not_claimed(url):
    assert resolve(url) is None


MODELS = {"workday": WorkdaySource, "smartrecruiters": SmartRecruitersSource,
          "workable": WorkableSource, "recruitee": RecruiteeSource, "personio": PersonioSource}


@pytest.mark.parametrize(("url", "expected"), LINKS)
def test_resolved_parameters_are_valid_settings(url, expected):
    settings = AppSettings.model_validate({"sources": [{**expected, "id": "from-link"}]})
    [source] = settings.sources
    assert isinstance(source, MODELS[expected["kind"]])


def test_settings_reject_bad_new_sources():
    bad = [
        {"kind": "workday", "id": "wd", "host": "acme.wd5.myworkdayjobs.com", "tenant": "acme"},
        {"kind": "workday", "id": "wd", "host": "not a host", "tenant": "a", "site": "b"},
        {"kind": "workday", "id": "wd", "host": "a.wd5.myworkdayjobs.com", "tenant": "a",
         "site": "../x"},
        {"kind": "smartrecruiters", "id": "sr", "company": "a/b"},
        {"kind": "workable", "id": "wk", "account": ""},
        {"kind": "recruitee", "id": "rc", "company": "acme", "baseUrl": "ftp://x"},
        {"kind": "personio", "id": "ps", "company": "acme", "language": "xx"},
        {"kind": "smartrecruiters", "id": "sr", "company": "acme", "maxPostings": 0},
        {"kind": "taleo", "id": "tl"},
    ]
    for entry in bad:
        with pytest.raises(ValidationError):
            AppSettings.model_validate({"sources": [entry]})
