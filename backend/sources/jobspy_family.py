"""Broad job boards (Indeed, LinkedIn, ZipRecruiter, Glassdoor, Google) through
python-jobspy, crawled as checkpointed search units.

A ``jobspy`` source expands to one search unit per query x location x board. This module
is the pure source: the units, the scraper, screening a unit's rows into postings and the
normalized traversal progress. It touches no store and no Temporal; the checkpointed run
of a family (claims, receipts, fencing) is its activity,
``backend/temporal/activities/jobspy_family.py``.

python-jobspy pulls pandas, so it is the optional extra ``pip install jobctrl[jobspy]``.
Without it a ``jobspy`` source fails fast with the non-retryable ``configuration`` code.

``JOBCTRL_JOBSPY_SCRAPER="package.module:function"`` replaces the real scraper with
``function(unit: SearchUnit) -> list[dict-like rows]`` (jobspy's column names). It exists
for tests and offline demos (see ``tests/fakes/jobspy_scraper.py``); never set it in a
real installation.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from backend.domain.ids import InvalidPostingUrl, canonical_url, receipt_hash
from backend.domain.postings import Posting
from backend.domain.provider_progress import (
    ProviderProgress,
    continuation_from,
)
from backend.domain.source_config import JobSpySource
from backend.sources.errors import (
    SourceError,
    SourceMisconfigured,
    SourcePayloadInvalid,
    SourceUnavailable,
)
from backend.sources.normalize import (
    SkipPosting,
    build_posting,
    clean_text,
    description_html,
    employment_type,
    infer_remote,
    iso_utc,
    looks_like_html,
    make_salary,
)

log = logging.getLogger(__name__)

SCRAPER_ENV = "JOBCTRL_JOBSPY_SCRAPER"
INSTALL_HINT = "pip install jobctrl[jobspy]"
UNIT_INVALID = "unit_invalid"
UNIT_CODES = frozenset({UNIT_INVALID, "source_payload_invalid", "source_failed"})


class CheckpointIncompatible(SourceError):
    """This run already holds a different unit plan for the family: fail, never reset."""

    code = "checkpoint_incompatible"
    retryable = False


class AttemptFenced(SourceUnavailable):
    """A newer activity attempt owns this family's units: this (stale) attempt stops.
    Temporal discards a stale attempt's result, so the code never reaches the workflow."""


# --------------------------------------------------------------------------- units


@dataclass(frozen=True)
class SearchUnit:
    """One query x location x board search, with the source's per-search parameters."""

    query: str
    location: str  # "" means anywhere
    board: str
    results_wanted: int
    hours_old: int | None
    country_indeed: str
    unit_key: str
    label: str


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def unit_key(query: str, location: str, board: str) -> str:
    """Stable across runs, processes and versions: case and spacing do not matter."""
    triple = "\x1f".join(("jobspy-unit/v1", _norm(query), _norm(location), board))
    return hashlib.sha256(triple.encode("utf-8")).hexdigest()[:20]


def unit_label(query: str, location: str, board: str) -> str:
    where = " ".join(location.split()) or "anywhere"
    return f"{' '.join(query.split())} · {where} · {board}"[:300]


def plan_units(source: JobSpySource) -> list[SearchUnit]:
    """Units in crawl order (query, then location, then board); repeats collapse."""
    planned: dict[str, SearchUnit] = {}
    for query in source.queries:
        for location in source.locations:
            for board in source.boards:
                key = unit_key(query, location, board)
                planned.setdefault(key, SearchUnit(
                    query=" ".join(query.split()), location=" ".join(location.split()),
                    board=board, results_wanted=source.results_per_unit,
                    hours_old=source.hours_old, country_indeed=source.country_indeed,
                    unit_key=key, label=unit_label(query, location, board),
                ))
    return list(planned.values())


# --------------------------------------------------------------------------- scrapers

Scraper = Callable[[SearchUnit], Iterable[Mapping[str, Any]]]
PageReport = Callable[..., None]
"""``report_page(rows, *, has_more: bool | None, total_pages: int | None = None)``: a
scraper whose function carries ``reports_pages = True`` is called as
``scraper(unit, report_page=...)`` and reports each provider page as it completes."""


def reports_pages(scraper: Scraper) -> bool:
    return bool(getattr(scraper, "reports_pages", False))


class SiteReportedError(Exception):
    """python-jobspy (1.4+) does not raise when a site fails: it records the message in
    the frame's ``attrs["errors"][site]`` and returns what it had. This carries that
    message to :func:`classify_failure` so it is classified and retried like a raise."""

    def __init__(self, site: str, message: str):
        super().__init__(site)
        self.site = site
        self.message = message


# Messages of a site's failure that retrying the same search cannot fix (jobspy's own
# words: "location 'x' not found", "... isn't supported", "Invalid country ...").
_UNIT_MESSAGES = re.compile(r"not found|isn't supported|not supported|invalid", re.IGNORECASE)


def frame_rows(frame: Any, board: str) -> list[Mapping[str, Any]]:
    """The rows of jobspy's frame for one board; the site's recorded error, if any, is
    raised as SiteReportedError (a blocked site is not a search with zero results)."""
    if frame is None:
        return []
    attrs = getattr(frame, "attrs", None)
    errors = attrs.get("errors") if isinstance(attrs, Mapping) else None
    if isinstance(errors, Mapping):
        message = errors.get(board)
        if message:
            raise SiteReportedError(board, str(message))
    return frame.to_dict(orient="records")


def jobspy_scraper(unit: SearchUnit, *, scrape_jobs: Callable[..., Any] | None = None,
                   ) -> list[Mapping[str, Any]]:
    """The real scraper: one jobspy search for one unit (runs in a worker thread).
    Descriptions are asked for as HTML (jobspy's default is Markdown)."""
    if scrape_jobs is None:
        try:
            from jobspy import scrape_jobs
        except ImportError:
            raise SourceMisconfigured() from None
    frame = scrape_jobs(
        site_name=[unit.board],
        search_term=unit.query,
        location=unit.location or None,  # jobspy's "no location": search anywhere
        results_wanted=unit.results_wanted,
        hours_old=unit.hours_old,
        country_indeed=unit.country_indeed,
        description_format="html",
    )
    return frame_rows(frame, unit.board)


def load_scraper(family: str) -> Scraper:
    """The ``JOBCTRL_JOBSPY_SCRAPER`` override (tests, offline demos), else jobspy itself.
    Missing jobspy, or an override that does not load, is a configuration error."""
    spec = os.environ.get(SCRAPER_ENV, "").strip()
    if spec:
        module_name, _, attribute = spec.partition(":")
        try:
            scraper = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError, ValueError):
            log.error("%s: %s=%r does not name an importable module:function",
                      family, SCRAPER_ENV, spec)
            raise SourceMisconfigured() from None
        if not callable(scraper):
            log.error("%s: %s=%r is not callable", family, SCRAPER_ENV, spec)
            raise SourceMisconfigured()
        return scraper
    if importlib.util.find_spec("jobspy") is None:
        log.error("%s: python-jobspy is not installed; install the jobspy extra to crawl"
                  " broad job boards: %s", family, INSTALL_HINT)
        raise SourceMisconfigured()
    return jobspy_scraper


def classify_failure(error: BaseException) -> tuple[str, str]:
    """``("retry", code)``: transient, Temporal retries the activity; ``("unit", code)``:
    this unit cannot work, mark it failed and go on; ``("fatal", code)``: the family
    cannot work at all. Codes are bounded; messages are never kept."""
    if isinstance(error, SourceMisconfigured):
        return "fatal", error.code
    if isinstance(error, SiteReportedError):
        if _UNIT_MESSAGES.search(error.message):
            return "unit", UNIT_INVALID
        return "retry", SourceUnavailable.code  # blocked, 429, 5xx, timeouts
    if isinstance(error, SourceError):
        if error.retryable:
            return "retry", SourceUnavailable.code
        return "unit", error.code if error.code in UNIT_CODES else "source_failed"
    if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
        return "unit", SourcePayloadInvalid.code
    if isinstance(error, ValueError | TypeError | LookupError):
        return "unit", UNIT_INVALID  # e.g. jobspy's "Invalid country string"
    return "retry", SourceUnavailable.code  # network, timeouts, blocked sessions


# --------------------------------------------------------------------------- rows


def _present(value: Any) -> Any:
    """None for missing values, including pandas' NaN / NaT / NA."""
    if value is None:
        return None
    try:
        if value != value:  # NaN and NaT are not equal to themselves
            return None
    except (TypeError, ValueError):  # pandas.NA refuses to be a bool
        return None
    return value


def _get(row: Mapping[str, Any], key: str) -> Any:
    try:
        return _present(row.get(key))
    except (AttributeError, TypeError):
        return None


def _number(value: Any) -> Any:
    if value is None or isinstance(value, str | bool):
        return value
    try:
        return float(value)  # numpy ints and floats
    except (TypeError, ValueError):
        return None


def _is_remote(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "remote")
    try:
        return bool(value)
    except (TypeError, ValueError):
        return None


def _posted(value: Any) -> tuple[datetime, bool] | None:
    """When the posting went up, and whether only the day is known."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        day_only = (moment.hour, moment.minute, moment.second) == (0, 0, 0)
        return moment.astimezone(UTC), day_only
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC), True
    text = iso_utc(value) if isinstance(value, str) else None
    if text is None:
        return None
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment, len(value.strip()) <= 10


def too_old(value: Any, hours_old: int | None, now: datetime) -> bool:
    """Older than the unit's window. A day-only date counts from the end of that day, so
    a posting is never dropped because its board only reports the day."""
    if hours_old is None:
        return False
    posted = _posted(value)
    if posted is None:
        return False
    moment, day_only = posted
    if day_only:
        moment += timedelta(days=1)
    return moment < now - timedelta(hours=hours_old)


def row_to_posting(row: Mapping[str, Any], unit: SearchUnit) -> Posting:
    """jobspy's columns to a Posting; raises SkipPosting without a usable URL/title/company."""
    url = _get(row, "job_url") or _get(row, "job_url_direct")
    location = clean_text(_get(row, "location"))
    title = _get(row, "title")
    remote_flag = _is_remote(_get(row, "is_remote"))
    remote = "remote" if remote_flag else infer_remote(location, clean_text(title))
    source_id = clean_text(_get(row, "id"))
    return build_posting(
        source_key=f"{unit.board}:{source_id}" if source_id else None,
        url=url,
        apply_url=_get(row, "job_url_direct"),
        title=title,
        company=_get(row, "company"),
        location=location,
        remote=remote,
        salary=make_salary(_number(_get(row, "min_amount")), _number(_get(row, "max_amount")),
                           _get(row, "currency"), _get(row, "interval")),
        employment=employment_type(_get(row, "job_type")),
        posted_at=iso_utc(_get(row, "date_posted")),
        description=jobspy_description(_get(row, "description")),
    )


_markdown = threading.local()


def _markdown_renderer():
    renderer = getattr(_markdown, "renderer", None)
    if renderer is None:
        from markdown_it import MarkdownIt

        # CommonMark with raw HTML off: markup in the text is shown, never interpreted.
        renderer = MarkdownIt("commonmark", {"html": False})
        _markdown.renderer = renderer
    return renderer


def jobspy_description(value: Any) -> str | None:
    """HTML as asked of jobspy; a Markdown description (older jobspy, a scraper that
    ignores the format, the test double) is rendered first, never stored as Markdown."""
    if not isinstance(value, str) or not value.strip():
        return None
    if looks_like_html(value):
        return description_html(value)
    return description_html(_markdown_renderer().render(value))


@dataclass
class ScreenedUnit:
    """One unit's scrape, split into postings to accept and hashes of filtered results."""

    accepted: list[Posting] = field(default_factory=list)
    filtered: list[str] = field(default_factory=list)


def _filtered_hash(row: Any) -> str:
    def raw(key: str) -> str:
        value = _get(row, key) if hasattr(row, "get") else None
        return "" if value is None else str(value)

    return receipt_hash("filtered", raw("job_url"), raw("title"))


def screen_rows(rows: Iterable[Any], unit: SearchUnit, *, now: datetime) -> ScreenedUnit:
    """Basic filters: a usable URL, title and company, and inside ``hours_old`` when the
    row has a date. One accepted posting per canonical URL."""
    screened = ScreenedUnit()
    seen: set[str] = set()
    for row in rows:
        if not hasattr(row, "get") or too_old(_get(row, "date_posted"), unit.hours_old, now):
            screened.filtered.append(_filtered_hash(row))
            continue
        try:
            posting = row_to_posting(row, unit)
            key = canonical_url(posting.url)
        except (SkipPosting, InvalidPostingUrl, ValidationError, TypeError, ValueError):
            screened.filtered.append(_filtered_hash(row))
            continue
        if key not in seen:
            seen.add(key)
            screened.accepted.append(posting)
    return screened


# --------------------------------------------------------------------------- traversal


class UnitTraversal:
    """One search unit's traversal of its provider, as normalized progress values.

    A paged scraper reports pages (unit ``page``): completed pages, the provider's total
    only when it gives one, raw rows seen, jobs emitted (rows that pass screening) and its
    continuation. A scraper without page reports (python-jobspy) is one opaque search
    (unit ``search``) whose page count and continuation are unknown: they stay null /
    ``unknown``, never a guessed total."""

    def __init__(self, unit: SearchUnit, *, paged: bool, now: Callable[[], datetime]):
        self.unit = unit
        self.paged = paged
        self._now = now
        self.pages = 0
        self.total_pages: int | None = None
        self.rows: list[Any] = []
        self.rows_seen: int | None = None
        self.continuation = "unknown"

    @property
    def provider(self) -> str:
        return self.unit.board

    def _value(self, phase: str, *, completed: int, emitted: int) -> ProviderProgress:
        return ProviderProgress(
            provider=self.provider, phase=phase, unit="page" if self.paged else "search",
            completed_units=completed, total_units=self.total_pages if self.paged else None,
            raw_items_seen=len(self.rows) if self.paged else self.rows_seen,
            emitted_jobs=emitted, continuation=self.continuation,
        )

    def searching(self) -> ProviderProgress:
        return self._value("searching", completed=0, emitted=0)

    def page(self, rows: list[Any], *, has_more: bool | None,
             total_pages: int | None) -> ProviderProgress:
        self.pages += 1
        self.rows.extend(rows)
        if isinstance(total_pages, int) and total_pages >= self.pages:
            self.total_pages = total_pages
        self.continuation = continuation_from(has_more)
        emitted = len(screen_rows(self.rows, self.unit, now=self._now()).accepted)
        return self._value("paging", completed=self.pages, emitted=emitted)

    def completed(self, screened: ScreenedUnit) -> ProviderProgress:
        completed = self.pages if self.paged else 1
        return self._value("unit_completed", completed=completed,
                           emitted=len(screened.accepted))

    def failed(self) -> ProviderProgress:
        return self._value("unit_failed", completed=self.pages if self.paged else 0,
                           emitted=0)


def scrape_rows(scraper: Scraper, unit: SearchUnit) -> list[Any]:
    return list(scraper(unit) or [])


async def fetch_jobspy(source: JobSpySource) -> list[Posting]:
    """Every unit's accepted postings in one list, without checkpoints: for callers of
    the generic fetcher registry. Discovery runs checkpointed units instead
    (``backend.temporal.activities.jobspy_family.run_jobspy_family``)."""
    scraper = load_scraper(source.id)
    postings: dict[str, Posting] = {}
    for unit in plan_units(source):
        try:
            rows = await asyncio.to_thread(scrape_rows, scraper, unit)
        except Exception as error:
            kind, _ = classify_failure(error)
            if kind == "unit":
                continue
            raise (SourceMisconfigured() if kind == "fatal" else SourceUnavailable()) from None
        # Screening cleans descriptions (CPU work): off the event loop like the scrape.
        screened = await asyncio.to_thread(screen_rows, rows, unit, now=datetime.now(UTC))
        for posting in screened.accepted:
            postings.setdefault(canonical_url(posting.url), posting)
    return list(postings.values())


__all__ = [
    "INSTALL_HINT", "SCRAPER_ENV", "AttemptFenced", "CheckpointIncompatible",
    "SearchUnit", "SiteReportedError", "UnitTraversal", "classify_failure", "fetch_jobspy",
    "frame_rows", "jobspy_description", "jobspy_scraper", "load_scraper", "plan_units",
    "reports_pages", "row_to_posting", "scrape_rows", "screen_rows", "too_old", "unit_key", "unit_label",
]
