"""Shared normalization for every source family: one Posting shape, whatever the board.

Remote mode, salary, employment type, timestamps and description HTML are derived here so
that a Greenhouse posting and the same posting read from a feed look alike in the store.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import ValidationError

from backend.domain.ids import InvalidPostingUrl, canonical_url
from backend.domain.postings import Posting, RemoteMode, Salary
from backend.sources import caps
from backend.sources.caps import (
    MAX_DESCRIPTION_HTML,
    MAX_DESCRIPTION_TEXT,
    MAX_POSTINGS_PER_FETCH,
    MAX_POSTINGS_PER_RUN,
    MAX_RAW_DESCRIPTION,
    Postings,
    cap_postings,
    left_out_of,
)
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.html_clean import ALLOWED_TAGS, sanitize_html

log = logging.getLogger(__name__)

MAX_TITLE = 300
MAX_COMPANY = 200
MAX_LOCATION = 300
MAX_URL = 2000
MAX_SOURCE_KEY = 300
MAX_TAGS = 30
MAX_TAG = 100

SHORTENED_MARK = "<p>\u2026</p>"  # says the description went on (an ellipsis paragraph)

# --------------------------------------------------------------------------- text


_SPACE = re.compile(r"\s+")


def clean_text(value: Any, max_length: int | None = None) -> str | None:
    """A single-line string with collapsed whitespace, or None when empty / not a string."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    text = _SPACE.sub(" ", value).strip()
    if not text:
        return None
    if max_length is not None and len(text) > max_length:
        text = text[: max_length - 1].rstrip() + "…"
    return text


_MARKUP_TAG = re.compile(r"</?[A-Za-z!][^<>]{0,500}>")


def clean_name(value: Any, max_length: int) -> str | None:
    """A posting's title, company or location: plain words. Boards send these as text, so a
    tag in them ("Acme <a href=…>click</a>") is markup a posting smuggled in: it would
    otherwise reach the résumé, the letter and their file names word for word."""
    if isinstance(value, str):
        value = _MARKUP_TAG.sub(" ", html.unescape(value))
    return clean_text(value, max_length)


def clean_tags(values: Iterable[Any]) -> list[str]:
    tags: list[str] = []
    seen: set[str] = set()
    for value in values:
        tag = clean_text(value, MAX_TAG)
        if tag and tag.lower() not in seen:
            seen.add(tag.lower())
            tags.append(tag)
        if len(tags) >= MAX_TAGS:
            break
    return tags


# --------------------------------------------------------------------------- remote mode

_HYBRID = re.compile(r"\bhybrid\b", re.IGNORECASE)
_REMOTE = re.compile(
    r"\b(remote|anywhere|work[- ]from[- ]home|wfh|telecommut\w*|home[- ]based|home[- ]office)\b",
    re.IGNORECASE,
)
_ONSITE = re.compile(r"\b(on[- ]?site|in[- ]office|in[- ]person|office[- ]based)\b", re.IGNORECASE)

_EXPLICIT_REMOTE: dict[str, RemoteMode] = {
    "remote": "remote",
    "fullyremote": "remote",
    "hybrid": "hybrid",
    "onsite": "onsite",
    "on_site": "onsite",
    "inoffice": "onsite",
    "inperson": "onsite",
    "office": "onsite",
}


def remote_from_explicit(value: Any) -> RemoteMode | None:
    """A board's own workplace field (Lever ``on-site``, Ashby ``OnSite``...), if it says."""
    if not isinstance(value, str):
        return None
    key = re.sub(r"[\s_-]+", "", value).lower()
    return _EXPLICIT_REMOTE.get(key)


def remote_from_words(value: Any) -> RemoteMode | None:
    """A workplace field in the employer's own words ("Remote (US)", "In-Office",
    "Hybrid - 2 days"), if it says; None when it says nothing we recognize."""
    explicit = remote_from_explicit(value)
    if explicit or not isinstance(value, str):
        return explicit
    for pattern, mode in ((_HYBRID, "hybrid"), (_REMOTE, "remote"), (_ONSITE, "onsite")):
        if pattern.search(value):
            return mode  # type: ignore[return-value]
    return None


def join_locations(*groups: Any) -> str | None:
    """Every location once, in order, as ``"Toronto, ON; Montreal, QC"``."""
    seen: dict[str, str] = {}
    for group in groups:
        for value in group if isinstance(group, list | tuple) else [group]:
            text = clean_text(value)
            if text and text.casefold() not in seen:
                seen[text.casefold()] = text
    return "; ".join(seen.values()) or None


def infer_remote(location: str | None, *hints: str | None) -> RemoteMode:
    """Remote mode from the location text first, then from hints (title, offices, tags).

    A known location that mentions neither remote nor hybrid work is onsite; no location
    and no hint is unknown."""
    for text in (location, *hints):
        if not text:
            continue
        if _HYBRID.search(text):
            return "hybrid"
        if _REMOTE.search(text):
            return "remote"
        if _ONSITE.search(text):
            return "onsite"
    return "onsite" if location and location.strip() else "unknown"


# --------------------------------------------------------------------------- employment type


# When a posting names several types ("fulltime, contract"), the first of these wins.
EMPLOYMENT_PRIORITY = ("full_time", "part_time", "contract", "temporary", "internship")
_TYPE_SEPARATORS = re.compile(r"\s*(?:[,;/|+&]|\band\b|\bor\b)\s*", re.IGNORECASE)


def _one_employment_type(text: str) -> str | None:
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).lower()
    flat = re.sub(r"[^a-z]", "", words)
    if not flat:
        return None
    if "intern" in flat:
        return "internship"
    if "contract" in flat or "freelanc" in flat:
        return "contract"
    if "temp" in flat:
        return "temporary"
    if "parttime" in flat:
        return "part_time"
    if "fulltime" in flat or "permanent" in flat or flat == "regular":
        return "full_time"
    slug = re.sub(r"[^a-z0-9]+", "_", words).strip("_")
    return slug[:40] or None


def employment_type(value: Any) -> str | None:
    """``FullTime`` / ``Full-time`` / ``Regular Full Time`` -> ``full_time`` (demo board
    words). A list (``"fulltime, contract"``, ``["Part-time", "Full-time"]``) yields the
    type that ranks first in EMPLOYMENT_PRIORITY, so full-time wins over contract."""
    if isinstance(value, list | tuple):
        pieces = [clean_text(item) for item in value]
    else:
        text = clean_text(value)
        pieces = _TYPE_SEPARATORS.split(text) if text else []
    kinds = [kind for piece in pieces if piece for kind in [_one_employment_type(piece)] if kind]
    if not kinds:
        return None
    ranked = [kind for kind in kinds if kind in EMPLOYMENT_PRIORITY]
    return min(ranked, key=EMPLOYMENT_PRIORITY.index) if ranked else kinds[0]


# --------------------------------------------------------------------------- timestamps


def iso_utc(value: Any) -> str | None:
    """``2026-11-23T10:00:00Z`` from an ISO string, a date, ms since the epoch or a
    ``time.struct_time`` (feedparser). Anything unreadable is None, never an error."""
    try:
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, time.struct_time):
            moment = datetime(*value[:6], tzinfo=UTC)
        elif isinstance(value, int | float):
            seconds = value / 1000 if value > 10**11 else value  # ms epoch (Lever) or s
            moment = datetime.fromtimestamp(seconds, tz=UTC)
        elif isinstance(value, datetime):
            moment = value
        elif isinstance(value, date):
            moment = datetime(value.year, value.month, value.day)
        elif isinstance(value, str) and value.strip():
            text = re.sub(r"\s*(?:UTC|GMT)$", "+00:00", value.strip(), flags=re.IGNORECASE)
            moment = datetime.fromisoformat(text.replace("z", "Z"))
        else:
            return None
    except (ValueError, OverflowError, OSError, TypeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- salary

_CURRENCY_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR",
                     "C$": "CAD", "CA$": "CAD", "A$": "AUD", "AU$": "AUD", "CHF": "CHF"}
_CURRENCY_CODES = ("USD", "EUR", "GBP", "CAD", "AUD", "NZD", "CHF", "SEK", "NOK", "DKK", "PLN",
                   "JPY", "INR", "SGD", "BRL", "MXN", "ILS", "ZAR")
_AMOUNT = r"(\d{1,3}(?:[,.\u00a0 ]\d{3})+|\d+(?:\.\d+)?)\s*([kKmM])?\b"
_CURRENCY = r"(US\$|CA\$|AU\$|C\$|A\$|[$€£¥₹]|\b(?:" + "|".join(_CURRENCY_CODES) + r")\b)"
# "$80k - $95k", "USD 45-60", "70.000 € - 85.000 €" (the currency after each amount).
_RANGE = re.compile(
    _CURRENCY + r"?\s*" + _AMOUNT + r"(?:\s*" + _CURRENCY + r")?"
    + r"(?:\s*(?:-|–|—|to|bis)\s*" + _CURRENCY + r"?\s*" + _AMOUNT + r")?"
    + r"(?:\s*" + _CURRENCY + r")?",
    re.IGNORECASE,
)
_PER = r"(?:\b(?:per|an|a|pro)\s+|/\s*)"
_PERIODS = (
    (re.compile(_PER + r"(?:hour|hr|h|stunde)\b|\bhourly\b", re.I), "hour"),
    (re.compile(_PER + r"day\b|\bdaily\b", re.I), "day"),
    (re.compile(_PER + r"(?:week|wk)\b|\bweekly\b", re.I), "week"),
    (re.compile(_PER + r"(?:month|mo|monat)\b|\bmonthly\b|\bmonatlich\b", re.I), "month"),
    (re.compile(_PER + r"(?:year|yr|annum|y|jahr)\b|\bannual(?:ly)?\b|\bj\u00e4hrlich\b"
                r"|\bp\.a\.?(?!\w)", re.I),
     "year"),
)

_LEVER_INTERVALS = {
    "per-year-salary": "year", "per-month-salary": "month", "semi-month-salary": "semi_month",
    "bi-month-salary": "bi_month", "bi-week-salary": "bi_week", "per-week-salary": "week",
    "per-day-wage": "day", "per-day-salary": "day", "per-hour-wage": "hour",
    "per-hour-salary": "hour", "one-time": "one_time",
}


def salary_period(value: Any) -> str | None:
    """Lever ``per-year-salary``, Ashby ``1 YEAR``, or a plain word -> ``year``/``hour``/..."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().lower()
    if text in _LEVER_INTERVALS:
        return _LEVER_INTERVALS[text]
    match = re.fullmatch(r"(\d+)\s+(year|month|week|day|hour)s?", text)
    if match:
        count, unit = match.groups()
        return unit if count == "1" else f"{count}_{unit}"[:16]
    simple = {"yearly": "year", "annual": "year", "annually": "year", "hourly": "hour",
              "monthly": "month", "weekly": "week", "daily": "day"}
    if text in simple:
        return simple[text]
    if text in ("year", "month", "week", "day", "hour"):
        return text
    return None


# Above this an amount is a typo or an attack ("1e999"), in any currency and period.
MAX_AMOUNT = 10**12
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def amount(value: Any) -> int | None:
    """120000 / 120000.0 / "120,000" / "$120k" / "1.5M" -> int; negatives, non-finite,
    absurd ("1e999") and junk -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        number = Decimal(str(value))
    elif isinstance(value, str):
        text = value.replace("\u202f", " ").strip()
        if _PLAIN_NUMBER.fullmatch(text):  # "1e999", "-5", "120000.0": read whole
            number = Decimal(text)
        else:
            match = re.search(r"(?<![\w.])" + _AMOUNT, text)
            if not match or text.startswith("-"):
                return None
            number = _decimal(match.group(1), match.group(2))
            if number is None:
                return None
    else:
        return None
    try:
        if not number.is_finite() or number < 0 or number > MAX_AMOUNT:
            return None
        return int(number.to_integral_value())
    except (InvalidOperation, OverflowError):
        return None


def _decimal(digits: str, suffix: str | None) -> Decimal | None:
    # "120,000" / "120.000" / "120 000" are thousands separators; "120.5" is a decimal.
    if re.fullmatch(r"\d{1,3}(?:[,.\u00a0 ]\d{3})+", digits):
        digits = re.sub(r"[,.\u00a0 ]", "", digits)
    try:
        number = Decimal(digits)
    except InvalidOperation:
        return None
    if suffix:
        number *= 1000 if suffix.lower() == "k" else 1_000_000
    return number


def make_salary(
    minimum: Any = None, maximum: Any = None, currency: Any = None, period: Any = None
) -> Salary | None:
    low, high = amount(minimum), amount(maximum)
    if low is None and high is None:
        return None
    if low is not None and high is not None and high < low:
        low, high = high, low
    code = clean_text(currency)
    code = code.upper()[:8] if code else None
    return Salary(min=low, max=high, currency=code, period=salary_period(period) or None)


def parse_salary_text(text: Any) -> Salary | None:
    """A salary from free text such as ``$81K – $87K``, ``€50,000 - €60,000 per year`` or
    ``USD 45-60 / hour``. Requires a currency marker so that stray numbers never count."""
    if not isinstance(text, str) or not text.strip():
        return None
    for match in _RANGE.finditer(text):
        cur1, num1, suf1, cur_after, cur2, num2, suf2, cur3 = match.groups()
        marker = cur1 or cur_after or cur2 or cur3
        if not marker:
            continue
        if num2 and not suf1 and suf2:
            suf1 = suf2  # "$80-95k"
        low = _decimal(num1, suf1)
        high = _decimal(num2, suf2) if num2 else None
        if low is None:
            continue
        currency = _CURRENCY_SYMBOLS.get(marker.upper(), _CURRENCY_SYMBOLS.get(marker))
        currency = currency or marker.upper()
        period = next((name for pattern, name in _PERIODS if pattern.search(text)), None)
        return make_salary(low, high, currency, period)
    return None


_PAY_WORDS = re.compile(
    r"\b(salary|salaries|pay|compensation|wage|base|remuneration|gehalt|verg\u00fctung)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")


def salary_from_statement(text: Any) -> Salary | None:
    """A salary from the pay statement of a description ("The base salary range for this
    role is $120,000 - $150,000 USD"): only a sentence that talks about pay counts, so a
    "$5M seed round" elsewhere never becomes a salary."""
    if not isinstance(text, str) or not text.strip():
        return None
    for sentence in _SENTENCE_END.split(text):
        if _PAY_WORDS.search(sentence):
            salary = parse_salary_text(sentence)
            if salary:
                return salary
    return None


# --------------------------------------------------------------------------- HTML

_LOOKS_LIKE_HTML = re.compile(r"<(?:/?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?|!--)>", re.DOTALL)


def looks_like_html(text: str) -> bool:
    return bool(_LOOKS_LIKE_HTML.search(text))


def text_to_html(text: str) -> str:
    """Plain text -> escaped paragraphs (blank lines) with line breaks inside them."""
    paragraphs = [part.strip() for part in re.split(r"\n\s*\n", text.replace("\r\n", "\n"))]
    return "\n".join(
        "<p>" + "<br/>".join(html.escape(line.strip()) for line in part.splitlines()) + "</p>"
        for part in paragraphs
        if part
    )


def description_html(raw: Any, *, escaped: bool = False) -> str | None:
    """Safe description HTML from HTML (``escaped=True``: entity-escaped HTML such as
    Greenhouse ``content``) or from plain text, at most MAX_DESCRIPTION_HTML long."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    raw = raw[:MAX_RAW_DESCRIPTION]  # never unescape or parse more than can be kept
    text = html.unescape(raw) if escaped else raw
    result = sanitize_html(text) if looks_like_html(text) else text_to_html(text)
    return bounded_html(result) or None


def bounded_html(fragment: str | None, limit: int = MAX_DESCRIPTION_HTML) -> str | None:
    """Clean HTML cut to at most ``limit`` characters, still well formed (the cut is
    cleaned again, which closes what it left open), with an ellipsis paragraph saying
    that the description went on. Short fragments are returned as they are."""
    if fragment is None or len(fragment) <= limit:
        return fragment
    budget = max(limit - len(SHORTENED_MARK), 0)
    cut = budget
    while cut > 0:
        # Cut before a tag or a space when there is one near the end, not mid-word.
        edge = max(fragment.rfind("<", 0, cut), fragment.rfind(" ", 0, cut))
        piece = fragment[: edge if edge > max(cut - 2_000, 0) else cut]
        cleaned = sanitize_html(piece)
        if len(cleaned) <= budget:
            return cleaned + SHORTENED_MARK
        cut -= max(len(cleaned) - budget, 64)  # the closing tags it added: cut earlier
    return SHORTENED_MARK[:limit]


def bounded_text(text: str | None, limit: int = MAX_DESCRIPTION_TEXT) -> str | None:
    """Plain text cut to at most ``limit`` characters (at a word, with an ellipsis)."""
    if text is None or len(text) <= limit:
        return text
    piece = text[: limit - 1]
    space = piece.rfind(" ")
    if space > max(limit - 2_000, 0):
        piece = piece[:space]
    return piece.rstrip() + "\u2026"


# --------------------------------------------------------------------------- postings


class SkipPosting(Exception):
    """This one entry is unusable (no URL or title); the rest of the payload still counts."""


def http_url(value: Any) -> str | None:
    """An absolute http(s) URL short enough to store, else None."""
    text = clean_text(value)
    if not text or len(text) > MAX_URL or " " in text:
        return None
    try:
        canonical_url(text)
    except InvalidPostingUrl:
        return None
    return text


def build_posting(
    *,
    source_key: Any,
    url: Any,
    title: Any,
    company: Any,
    apply_url: Any = None,
    location: Any = None,
    remote: RemoteMode = "unknown",
    salary: Salary | None = None,
    employment: str | None = None,
    posted_at: str | None = None,
    description: str | None = None,
    tags: Iterable[Any] = (),
) -> Posting:
    posting_url = http_url(url)
    posting_title = clean_name(title, MAX_TITLE)
    posting_company = clean_name(company, MAX_COMPANY)
    if not posting_url or not posting_title or not posting_company:
        raise SkipPosting()
    key = clean_text(source_key)
    if not key or len(key) > MAX_SOURCE_KEY:
        key = canonical_url(posting_url)[:MAX_SOURCE_KEY]
    return Posting(
        source_key=key,
        url=posting_url,
        apply_url=http_url(apply_url),
        title=posting_title,
        company=posting_company,
        location=clean_name(location, MAX_LOCATION),
        remote=remote,
        salary=salary,
        employment_type=employment,
        posted_at=posted_at,
        # Bounded here too: every family builds its posting here, whatever made the HTML.
        description_html=bounded_html(description),
        tags=clean_tags(tags),
    )


def jobs_list(payload: Any) -> list:
    """The ``jobs`` array of a board reply shaped ``{"jobs": [...]}`` (Ashby, Greenhouse);
    anything else is not the API's answer."""
    jobs = payload.get("jobs") if isinstance(payload, dict) else None
    if not isinstance(jobs, list):
        raise SourcePayloadInvalid()
    return jobs


async def collect_off_loop(
    items: list[Any], convert: Callable[[Any], Posting], *, family: str
) -> Postings:
    """:func:`collect` in a worker thread: description cleanup is CPU work, and on the
    event loop it would stall the activity's heartbeats."""
    return await asyncio.to_thread(collect, items, convert, family=family)


def collect(
    items: list[Any], convert: Callable[[Any], Posting], *, family: str,
    limit: int | None = None,
) -> Postings:
    """Convert the entries, skipping unusable ones (logged as a count). One posting per
    canonical URL. A non-empty payload with no usable posting is SourcePayloadInvalid.

    At most ``limit`` (default MAX_POSTINGS_PER_FETCH) postings: the entries after the
    cap is reached are not converted, only counted as left out."""
    cap = caps.MAX_POSTINGS_PER_FETCH if limit is None else max(limit, 0)
    postings: list[Posting] = []
    seen: set[str] = set()
    skipped = left_out = 0
    for index, item in enumerate(items):
        if len(postings) >= cap:
            left_out = len(items) - index
            break
        try:
            if not isinstance(item, dict | tuple) and not hasattr(item, "get"):
                raise SkipPosting()
            posting = convert(item)
        except (SkipPosting, KeyError, TypeError, ValueError, AttributeError, ValidationError):
            skipped += 1
            continue
        key = canonical_url(posting.url)
        if key in seen:
            continue
        seen.add(key)
        postings.append(posting)
    if skipped:
        log.warning("%s: skipped %d of %d postings without a usable URL or title",
                    family, skipped, len(items))
    if left_out:
        log.warning("%s: kept the first %d postings; %d more left out over the per-board cap",
                    family, len(postings), left_out)
    if items and not postings and cap:
        raise SourcePayloadInvalid()
    return Postings(postings, left_out)


def first_text(*values: Any) -> str | None:
    for value in values:
        text = clean_text(value)
        if text:
            return text
    return None


__all__ = [
    "ALLOWED_TAGS", "MAX_DESCRIPTION_HTML", "MAX_DESCRIPTION_TEXT", "MAX_POSTINGS_PER_FETCH",
    "MAX_POSTINGS_PER_RUN", "Postings", "SkipPosting", "bounded_html", "bounded_text",
    "build_posting", "cap_postings", "clean_tags", "left_out_of",
    "clean_text", "collect", "collect_off_loop", "description_html", "employment_type",
    "first_text", "http_url", "infer_remote", "iso_utc", "join_locations", "looks_like_html",
    "make_salary", "parse_salary_text", "remote_from_explicit", "remote_from_words",
    "salary_from_statement", "salary_period", "sanitize_html", "text_to_html",
]
