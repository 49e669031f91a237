"""The bounds that keep one board from flooding the pipeline: postings per
fetch and per Discover run, and the size of a description. Plain data and functions, no
parsing library: the worker's start imports this (the discovery activities), not the
adapters (backend/sources/registry.py loads those when a kind is first fetched)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Postings one board's fetch keeps (one board must not flood the pipeline). The
# largest public boards a job seeker reads hold a few thousand open postings (the biggest
# Greenhouse boards ~3,000-4,000; the paged families stop at 2,000 by their own
# ``maxPostings``): 5,000 keeps every real board whole. Past it a "board" is an aggregator
# dump or an attack — 100,000 entries convert in seconds and then cost model calls each.
# The rest of the reply is not converted at all, only counted (``Postings.left_out``).
MAX_POSTINGS_PER_FETCH = 5_000
# Postings one Discover run keeps across all its sources (backend/temporal/activities/
# discovery.py applies it): a few whole large boards, never a day's budget in one run.
MAX_POSTINGS_PER_RUN = 20_000

# Description bounds. A long real posting is ~20 KB of HTML; ten times that is kept, cut
# once at ingestion at 200 KB of clean HTML (100 KB of the plain text Enrich derives).
# The raw input is cut before cleaning (at 4x the bound: markup, styles and scripts the
# cleaner drops), so a 20 MB "description" is never unescaped, parsed or stored whole
# (jobs.description_html, then job_enrichments' HTML and text copies, derived from it or
# from a page: backend/pipeline/enrich.py bounds those).
MAX_DESCRIPTION_HTML = 200_000
MAX_DESCRIPTION_TEXT = 100_000
MAX_RAW_DESCRIPTION = 4 * MAX_DESCRIPTION_HTML


class Postings(list):
    """A fetch's postings (a list), and how many entries of the board's reply were left
    out over the per-fetch cap, never converted (``left_out``)."""

    def __init__(self, postings: Iterable[Any] = (), left_out: int = 0) -> None:
        super().__init__(postings)
        self.left_out = left_out


def left_out_of(postings: list[Any]) -> int:
    """How many entries a fetch left out over its cap (0 for a plain list)."""
    return int(getattr(postings, "left_out", 0) or 0)


def cap_postings(postings: list[Any], limit: int | None = None) -> Postings:
    """At most ``limit`` (default MAX_POSTINGS_PER_FETCH) postings, in the board's order;
    the ones past it are counted with what the fetch already left out."""
    cap = MAX_POSTINGS_PER_FETCH if limit is None else max(limit, 0)
    return Postings(postings[:cap], left_out_of(postings) + max(len(postings) - cap, 0))
