"""A deterministic stand-in for python-jobspy's ``scrape_jobs``, one search unit at a time.

Load it with ``JOBCTRL_JOBSPY_SCRAPER=tests.fakes.jobspy_scraper:scrape`` (the worker
inherits the variable). Rows use jobspy's column names and value types, NaN included.
Per unit it returns:

- three postings of its own (query x location x board),
- one posting per query that every unit of that query returns (dedup across units),
- the first own posting again (dedup inside one result page),
- one row without a title, which the family must filter.

Crash control: ``JOBSPY_FAKE_CONTROL`` may name a JSON file such as
``{"crash_after_units": 2, "marker": "/tmp/x"}``. Once ``crash_after_units`` units have been
scraped in this process, the next scrape call creates the marker and ends the process
with ``os._exit(137)``, as a kill would; with the marker present it never crashes again.
"""

from __future__ import annotations

import json
import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CONTROL_ENV = "JOBSPY_FAKE_CONTROL"
OWN_PER_UNIT = 3

_lock = threading.Lock()
_scraped = 0  # units scraped by this process


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "anywhere"


def shared_url(query: str) -> str:
    return f"https://jobs.example.com/shared/{_slug(query)}"


def own_urls(query: str, location: str, board: str) -> list[str]:
    return [f"https://jobs.example.com/{board}/{_slug(query)}/{_slug(location)}/{index}"
            for index in range(OWN_PER_UNIT)]


def expected(queries: list[str], locations: list[str], boards: list[str]) -> dict[str, int]:
    """What a full crawl of these units must accept and filter."""
    accepted: set[str] = set()
    units = 0
    for query in queries:
        accepted.add(shared_url(query))
        for location in locations:
            for board in boards:
                accepted.update(own_urls(query, location, board))
                units += 1
    return {"accepted": len(accepted), "filtered": units, "units": units}


def _maybe_crash() -> None:
    global _scraped
    path = os.environ.get(CONTROL_ENV)
    with _lock:
        if path:
            control = json.loads(Path(path).read_text(encoding="utf-8"))
            after = control.get("crash_after_units")
            marker = control.get("marker")
            if after is not None and marker and _scraped >= int(after):
                try:
                    with open(marker, "x", encoding="utf-8") as handle:
                        handle.write(f"crashed pid {os.getpid()} after {_scraped} units\n")
                except FileExistsError:
                    pass
                else:
                    os._exit(137)
        _scraped += 1


def _row(*, url: str, title: str | None, company: str, location: str, board: str,
         job_id: str, remote: bool, salary: tuple[float, float] | None) -> dict[str, Any]:
    nan = float("nan")
    return {
        "id": job_id,
        "site": board,
        "job_url": url,
        "job_url_direct": nan,
        "title": title,
        "company": company,
        "location": location or nan,
        "date_posted": datetime.now(UTC).date(),
        "job_type": "fulltime",
        "salary_source": "direct_data" if salary else nan,
        "interval": "yearly" if salary else nan,
        "min_amount": salary[0] if salary else nan,
        "max_amount": salary[1] if salary else nan,
        "currency": "USD" if salary else nan,
        "is_remote": remote,
        "job_level": nan,
        "company_industry": nan,
        "description": f"**{title or 'Untitled'}** at {company}.\n\nWork on {title or 'things'}.",
    }


def rows_for(query: str, location: str, board: str) -> list[dict[str, Any]]:
    remote = location.strip().lower() in ("", "remote")
    rows = []
    for index, url in enumerate(own_urls(query, location, board)):
        rows.append(_row(
            url=url, title=f"{query.title()} {('I', 'II', 'Senior')[index]}",
            company=f"{('Acme', 'Globex', 'Initech')[index]} {_slug(location).title()}",
            location=location, board=board, job_id=f"{board[:2]}-{_slug(query)}-{index}",
            remote=remote, salary=(90000.0 + 10000 * index, 120000.0 + 10000 * index)
            if index != 1 else None,
        ))
    rows.append(_row(url=shared_url(query), title=f"{query.title()} (Shared)",
                     company="Umbrella", location="Remote", board=board,
                     job_id=f"shared-{_slug(query)}", remote=True, salary=None))
    rows.append(dict(rows[0]))  # the same posting twice in one page
    rows.append(_row(url=f"https://jobs.example.com/{board}/{_slug(query)}/{_slug(location)}/x",
                     title=None, company="Nobody", location=location, board=board,
                     job_id=f"{board[:2]}-untitled", remote=False, salary=None))
    return rows


def scrape(unit) -> list[dict[str, Any]]:
    """``function(unit) -> rows`` for ``JOBCTRL_JOBSPY_SCRAPER``."""
    _maybe_crash()
    return rows_for(unit.query, unit.location, unit.board)


PAGE_SIZE = 2
HOLD_LIMIT_S = 300.0


def _hold_file() -> Path | None:
    path = os.environ.get(CONTROL_ENV)
    if not path:
        return None
    hold = json.loads(Path(path).read_text(encoding="utf-8")).get("hold_while")
    return Path(hold) if hold else None


def _hold_after_first_page() -> None:
    """With ``{"hold_while": "/tmp/f"}`` in the control file, the first page of every unit
    waits while that file exists (a test removes it to let the crawl go on)."""
    import time

    hold = _hold_file()
    deadline = time.monotonic() + HOLD_LIMIT_S
    while hold is not None and hold.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def scrape_paged(unit, *, report_page) -> list[dict[str, Any]]:
    """A provider that reports its traversal page by page (``PAGE_SIZE`` rows a page),
    never its total page count, and ``has_more`` until the last page. Load it with
    ``JOBCTRL_JOBSPY_SCRAPER=tests.fakes.jobspy_scraper:scrape_paged``."""
    _maybe_crash()
    rows = rows_for(unit.query, unit.location, unit.board)
    pages = [rows[start:start + PAGE_SIZE] for start in range(0, len(rows), PAGE_SIZE)]
    for index, page in enumerate(pages):
        report_page(page, has_more=index < len(pages) - 1)
        if index == 0:
            _hold_after_first_page()
    return rows


scrape_paged.reports_pages = True


class Frame:
    """What python-jobspy 1.4's ``scrape_jobs`` returns, as far as we read it: records and
    ``attrs = {"errors": {site: message}, "warnings": {...}}`` (a failed site is recorded
    there, not raised: jobspy/__init__.py, ``jobs_df.attrs``)."""

    def __init__(self, rows: list[dict[str, Any]], errors: dict[str, str] | None = None):
        self._rows = rows
        self.attrs = {"errors": dict(errors or {}), "warnings": {}}

    def to_dict(self, orient: str) -> list[dict[str, Any]]:
        assert orient == "records"
        return [dict(row) for row in self._rows]


class ScrapeJobs:
    """A stand-in for ``jobspy.scrape_jobs`` with its 1.4 signature's keywords: rows as
    HTML descriptions, and per-site error messages in jobspy's own words."""

    def __init__(self, errors: dict[str, str] | None = None, rows: list[dict] | None = None):
        self.errors = errors or {}
        self.rows = rows
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Frame:
        self.calls.append(kwargs)
        [site] = kwargs["site_name"]
        if site in self.errors:  # a failed site: whatever it had (often nothing) + the error
            return Frame([], {site: self.errors[site]})
        rows = self.rows if self.rows is not None else rows_for(
            kwargs["search_term"], kwargs.get("location") or "", site)
        if kwargs.get("description_format") == "html":
            rows = [{**row, "description": f"<p><b>{row['title']}</b> at {row['company']}.</p>"}
                    for row in rows]
        return Frame(rows)
