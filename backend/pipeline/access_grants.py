"""Hosts the user allowed JobCtrl to fetch on their behalf: the user's own action that
resolves an ``ENRICH_ROBOTS_DISALLOWED`` block, and the origins the user configured, which
the private-address guard (``backend/sources/net_guard.py``) lets through.

robots.txt speaks to crawlers. Once the user explicitly grants a host, a posting page
there is fetched as a user-requested page (like opening it in their browser) and the
crawler refusal no longer applies to that host; every other host keeps the normal rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

import httpx

from backend.config import AppSettings
from backend.domain.ids import host_of, normalize_host  # noqa: F401 - the grant's key, named here for its callers
from backend.sources.net_guard import AddressPolicy


def user_chosen_origins(settings: AppSettings, granted_hosts: Iterable[str] = ()) -> AddressPolicy:
    """Origins the user chose, which links from postings may reach whatever their address:
    every configured source's URLs, fixed contact pages, the hosts listed under "addresses
    on your own network" and robots grants."""
    policy = AddressPolicy([*settings.local_network_hosts, *granted_hosts])
    for source in settings.sources:
        for value in source.model_dump().values():
            if isinstance(value, str) and "://" in value:
                policy.allow_url(value)
    for contact_source in settings.contact_research_sources:
        url = contact_source.url or ""
        if "{company}" not in urlsplit(url).netloc:  # a host named by the posting is not chosen
            policy.allow_url(url)
    return policy


class GrantedRobots:
    """The worker's robots cache, except on hosts the user granted."""

    def __init__(self, inner, granted_hosts: frozenset[str]):
        self._inner = inner
        self._granted = granted_hosts
        self.user_agent = inner.user_agent

    async def allowed(self, client: httpx.AsyncClient, url: str) -> bool:
        if host_of(url) in self._granted:
            return True
        return await self._inner.allowed(client, url)
