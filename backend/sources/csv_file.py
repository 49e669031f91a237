"""Postings from a CSV file the user keeps (a spreadsheet export, say).

Header row required (case-insensitive; spaces count as underscores). Required columns:
``url, title, company``. Optional: ``location, remote, salary_min, salary_max,
salary_currency, salary_period, employment_type, posted_at, description, tags`` (``;``
separated), ``apply_url``. Other columns are ignored. Rows without a usable url, title or
company are skipped.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
from pathlib import Path

from backend.domain.ids import job_id_for_url
from backend.domain.postings import Posting, RemoteMode
from backend.domain.source_config import CsvFileSource
from backend.sources.errors import SourceMisconfigured, SourcePayloadInvalid
from backend.sources.normalize import (
    build_posting,
    clean_text,
    collect,
    description_html,
    employment_type,
    http_url,
    infer_remote,
    iso_utc,
    make_salary,
    remote_from_explicit,
)

REQUIRED_COLUMNS = ("url", "title", "company")
MAX_FILE_BYTES = 50 * 1024 * 1024
_TRUE = {"true", "yes", "y", "1"}


async def fetch_csv_file(source: CsvFileSource) -> list[Posting]:
    path = Path(source.path).expanduser()
    # Reading and converting (description cleanup included) stay off the event loop.
    return await asyncio.to_thread(lambda: parse_csv(read_csv_text(path)))


def read_csv_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SourcePayloadInvalid()
        data = path.read_bytes()
    except OSError as exc:  # missing, a directory, unreadable: the configured path is wrong
        raise SourceMisconfigured() from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourcePayloadInvalid() from exc


def _column(name: str | None) -> str:
    return re.sub(r"[\s-]+", "_", (name or "").strip().lower())


def parse_csv(text: str) -> list[Posting]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames
        if not header:
            raise SourcePayloadInvalid()
        reader.fieldnames = [_column(name) for name in header]
        if any(column not in reader.fieldnames for column in REQUIRED_COLUMNS):
            raise SourcePayloadInvalid()
        rows = list(reader)
    except csv.Error as exc:
        raise SourcePayloadInvalid() from exc
    return collect(rows, to_posting, family="csv_file")


def _remote(value: str | None, location: str | None, title: str | None) -> RemoteMode:
    explicit = remote_from_explicit(value)
    if explicit:
        return explicit
    if value and value.strip().lower() in _TRUE:
        return "remote"
    return infer_remote(location, title)


def to_posting(row: dict[str, str | None]) -> Posting:
    url = http_url(row.get("url"))
    location = clean_text(row.get("location"))
    title = clean_text(row.get("title"))
    return build_posting(
        source_key=job_id_for_url(url) if url else None,
        url=url,
        apply_url=row.get("apply_url"),
        title=title,
        company=row.get("company"),
        location=location,
        remote=_remote(row.get("remote"), location, title),
        salary=make_salary(row.get("salary_min"), row.get("salary_max"),
                           row.get("salary_currency"), row.get("salary_period")),
        employment=employment_type(row.get("employment_type")),
        posted_at=iso_utc(row.get("posted_at")),
        description=description_html(row.get("description")),
        tags=(row.get("tags") or "").split(";"),
    )
