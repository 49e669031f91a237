"""Links from postings never reach this computer or the user's network, and no page holds a
worker past its deadline (docs/security.md, "Links in postings").

The "intranet" here is a loopback page server the test did not configure: to JobCtrl it is
exactly what a private address on the user's network is. Every test counts the requests the
intranet received, so a refusal that still sent the request fails.
"""

from __future__ import annotations

import time

import pytest

from backend.config import AppSettings
from backend.pipeline.access_grants import user_chosen_origins
from backend.sources import http as board_http
from backend.sources.errors import SourceMisconfigured
from backend.sources.net_guard import AddressPolicy, PrivateAddressRefused, guarded_client, is_public_address
from backend.sources.page_fetch import (
    BOUNDED_ENRICH_CODES,
    EnrichPrivateAddress,
    EnrichUnavailable,
    RobotsCache,
    fetch_posting_page,
)
from backend.temporal.activities.apply import _fetch_page as fetch_application_page
from tests.fakes.posting_pages import PostingPagesServer


@pytest.fixture
def intranet():
    with PostingPagesServer() as server:
        yield server


@pytest.fixture
def public_site():
    """Stands in for a public site: the test trusts its origin explicitly."""
    with PostingPagesServer() as server:
        yield server


async def fetch(url: str, policy: AddressPolicy, **options) -> str:
    async with guarded_client(policy, timeout=20) as client:
        return await fetch_posting_page(url, client=client, robots=RobotsCache(), **options)


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.8.9.10", "::1", "10.1.2.3", "172.16.0.9", "192.168.1.1", "169.254.169.254",
    "100.64.0.1", "0.0.0.0", "224.0.0.251", "fe80::1", "fd00::7", "::ffff:192.168.1.1",
    "2002:c0a8:0101::1",  # 6to4 wrapping 192.168.1.1
])
def test_private_and_special_addresses_are_not_public(address):
    assert not is_public_address(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:1c4e"])
def test_internet_addresses_are_public(address):
    assert is_public_address(address)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "2130706433"])
async def test_a_posting_link_to_the_intranet_is_never_requested(intranet, host):
    port = intranet.origin.rsplit(":", 1)[1]
    with pytest.raises(EnrichPrivateAddress):
        await fetch(f"http://{host}:{port}/internal/admin?op=delete-all", AddressPolicy())
    assert intranet.counts == {}  # not even robots.txt


async def test_a_redirect_into_the_intranet_is_not_followed(public_site, intranet):
    policy = AddressPolicy()
    policy.allow_url(public_site.origin)
    secret = intranet.url("/private/secret-role")
    with pytest.raises(EnrichPrivateAddress):
        await fetch(public_site.url(f"/redirect?to={secret}"), policy)
    assert public_site.count("/redirect") == 1
    assert intranet.counts == {}


async def test_cloud_metadata_is_refused_without_a_connection():
    started = time.monotonic()
    with pytest.raises(EnrichPrivateAddress):
        await fetch("http://169.254.169.254/latest/meta-data/", AddressPolicy())
    assert time.monotonic() - started < 2


async def test_an_origin_the_user_chose_stays_reachable(intranet):
    policy = AddressPolicy()
    policy.allow_url(intranet.origin)
    html = await fetch(intranet.url("/jobs/backend-engineer"), policy)
    assert "job-description" in html


def test_user_chosen_origins_are_the_configured_sources_hosts_and_grants():
    settings = AppSettings.model_validate({
        "sources": [{"kind": "greenhouse", "id": "gh", "boardToken": "acme",
                     "baseUrl": "http://127.0.0.1:9001"}],
        "contactResearchSources": [
            {"id": "team", "kind": "web_page", "url": "http://10.0.0.8/team/{company}"},
            {"id": "named", "kind": "web_page", "url": "http://{company}.internal/about"}],
        "localNetworkHosts": ["jobs.intranet.example:8080"],
    })
    policy = user_chosen_origins(settings, ["granted.example"])
    assert policy.trusts("127.0.0.1", 9001)
    assert not policy.trusts("127.0.0.1", 8233)  # another port of the same machine
    assert policy.trusts("10.0.0.8", 80)
    assert not policy.trusts("x.internal", 80)  # the posting names that host
    assert policy.trusts("jobs.intranet.example", 8080)
    assert policy.trusts("granted.example", 443)


def test_a_local_network_host_that_is_no_host_is_refused():
    with pytest.raises(ValueError):
        AppSettings.model_validate({"localNetworkHosts": ["not a host/path"]})


async def test_a_dripping_page_ends_at_the_deadline(public_site):
    policy = AddressPolicy()
    policy.allow_url(public_site.origin)
    started = time.monotonic()
    with pytest.raises(EnrichUnavailable):
        await fetch(public_site.url("/drip"), policy, deadline_s=1.5)
    assert time.monotonic() - started < 6


async def test_a_board_that_redirects_into_the_intranet_is_not_followed(public_site, intranet):
    """A board's API root is configured (trusted); where it redirects to is not."""
    secret = intranet.url("/private/secret-role")
    with pytest.raises(SourceMisconfigured):
        await board_http.get(public_site.url(f"/redirect?to={secret}"))
    assert intranet.counts == {}


async def test_the_application_page_link_is_guarded(intranet):
    with pytest.raises(PrivateAddressRefused):
        await fetch_application_page(intranet.url("/jobs/backend-engineer"), AddressPolicy())
    assert intranet.counts == {}


@pytest.mark.parametrize("code", sorted(BOUNDED_ENRICH_CODES))
def test_the_job_says_why_a_posting_could_not_be_read_in_words(code):
    """Every bounded Enrich code is a sentence on the job, not "enrich private address"."""
    from desktop.formatting import stage_reason_words

    assert stage_reason_words(code) != code.replace("_", " ").lower()
