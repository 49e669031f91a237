"""One posting, however it is linked to, is one JobId; different postings never merge."""

from __future__ import annotations

import re

import pytest

from backend.domain.ids import InvalidPostingUrl, canonical_url, job_id_for_url

BASE = "https://jobs.example.com/acme/backend-engineer-42"


@pytest.mark.parametrize(
    "variant",
    [
        BASE + "?utm_source=newsletter&utm_medium=email",
        BASE + "?UTM_Campaign=fall",
        BASE + "?gh_src=abc123",
        BASE + "?gh_jid_src=1",
        BASE + "?ref=homepage",
        BASE + "?referrer=x&source=linkedin&src=feed&trk=public",
        BASE + "?fbclid=IwAR0&gclid=Cj0&mc_cid=1&mc_eid=2",
        BASE + "?lever-source=LinkedIn&lever-origin=applied",
        BASE + "#apply",
        BASE + "/",
        BASE + "/#top",
        "https://JOBS.Example.COM/acme/backend-engineer-42",
        "https://jobs.example.com:443/acme/backend-engineer-42",
        "http://jobs.example.com:80/acme/backend-engineer-42",
        "http://jobs.example.com/acme/backend-engineer-42",
        "HTTPS://jobs.example.com/acme/backend-engineer-42",
        "  " + BASE + "\n",
        "HTTP://JOBS.EXAMPLE.COM/acme/backend-engineer-42/?utm_source=x&ref=y#frag",
    ],
)
def test_variants_of_one_posting_share_a_job_id(variant):
    assert canonical_url(variant) == canonical_url(BASE)
    assert job_id_for_url(variant) == job_id_for_url(BASE)


def test_canonical_form_is_https_lowercase_host_no_fragment_no_tracking():
    url = "http://Jobs.Example.com:80/Acme/Role/?b=2&utm_source=x&a=1#apply"
    assert canonical_url(url) == "https://jobs.example.com/Acme/Role?a=1&b=2"


def test_query_parameter_order_is_irrelevant():
    assert job_id_for_url(BASE + "?team=3&id=5") == job_id_for_url(BASE + "?id=5&team=3")


def test_meaningful_query_parameters_are_kept():
    assert job_id_for_url("https://ats.example/view?id=5") != job_id_for_url(
        "https://ats.example/view?id=6"
    )
    assert job_id_for_url("https://ats.example/view?id=5") != job_id_for_url(
        "https://ats.example/view"
    )
    # Tracking junk around a meaningful param changes nothing; the param itself still counts.
    assert job_id_for_url("https://ats.example/view?utm_source=a&id=5&ref=b") == job_id_for_url(
        "https://ats.example/view?id=5"
    )


def test_path_case_and_non_default_ports_are_meaningful():
    assert job_id_for_url("https://x.example/Jobs/1") != job_id_for_url("https://x.example/jobs/1")
    assert job_id_for_url("https://x.example:8443/jobs/1") != job_id_for_url(
        "https://x.example/jobs/1"
    )
    assert canonical_url("https://x.example:8443/jobs/1") == "https://x.example:8443/jobs/1"


def test_different_paths_and_hosts_are_different_jobs():
    ids = {
        job_id_for_url(u)
        for u in (
            "https://a.example/jobs/1",
            "https://a.example/jobs/2",
            "https://b.example/jobs/1",
            "https://a.example/jobs/1/apply",
        )
    }
    assert len(ids) == 4


def test_job_id_shape_is_stable():
    job_id = job_id_for_url(BASE)
    assert re.fullmatch(r"job_[0-9a-f]{24}", job_id)
    # Deterministic across calls (and processes: it is a content hash, not hash()).
    assert job_id == job_id_for_url(BASE)


@pytest.mark.parametrize(
    "bad",
    [
        "/acme/backend-engineer-42",
        "acme/backend-engineer-42",
        "//jobs.example.com/acme/1",
        "ftp://jobs.example.com/acme/1",
        "mailto:jobs@example.com",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https:///no-host",
        "",
        "not a url",
    ],
)
def test_non_http_and_relative_urls_are_rejected(bad):
    with pytest.raises(InvalidPostingUrl):
        canonical_url(bad)
    with pytest.raises(InvalidPostingUrl):
        job_id_for_url(bad)


def test_invalid_posting_url_is_a_value_error():
    # parse_board and other callers catch ValueError; keep the subclass relationship.
    assert issubclass(InvalidPostingUrl, ValueError)


@pytest.mark.parametrize("bad", ["https://x.example:abc/jobs/1", "https://x.example:99999/jobs/1"])
def test_malformed_port_is_an_invalid_posting_url(bad):
    with pytest.raises(InvalidPostingUrl):
        canonical_url(bad)
