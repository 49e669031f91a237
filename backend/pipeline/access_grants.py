"""Hosts the user allowed JobCtrl to fetch on their behalf: the user's own action that
resolves an ``ENRICH_ROBOTS_DISALLOWED`` block.

robots.txt speaks to crawlers. Once the user explicitly grants a host, a posting page
there is fetched as a user-requested page (like opening it in their browser) and the
crawler refusal no longer applies to that host; every other host keeps the normal rules.
"""

from __future__ import annotations

import re

import httpx

from backend.domain.ids import host_of  # the grant's key; named here for its callers

HOST_PATTERN = r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?$"
_HOST = re.compile(HOST_PATTERN)


def normalize_host(value: str) -> str:
    """A user-typed host (or a pasted URL) as a grant key; ValueError if it is neither."""
    text = value.strip().lower()
    if "://" in text:
        text = host_of(text)
    if not _HOST.match(text):
        raise ValueError("host must look like example.com or example.com:8080")
    return text


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
