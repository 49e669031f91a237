"""How the user configures source families (one typed entry per source)."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

from backend.domain.model import CamelModel

SOURCE_ID_PATTERN = r"^[a-z0-9][a-z0-9_.:-]{0,63}$"
# Board tokens / site names as they appear in board URLs (never a path or a query).
BOARD_SLUG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
# Ashby board names are occasionally display names with spaces ("Acme Labs").
ASHBY_BOARD_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$"


def _http_url(value: str, *, allow_query: bool) -> str:
    text = value.strip()
    try:
        parts = urlsplit(text)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        raise ValueError("must be an http(s) URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not port_ok:
        raise ValueError("must be an absolute http(s) URL")
    if parts.username is not None or parts.password is not None:
        raise ValueError("must not carry credentials")
    if any(ch.isspace() for ch in text):
        raise ValueError("must not contain whitespace")
    if parts.fragment or (parts.query and not allow_query):
        raise ValueError("must not have a query or fragment")
    return text


def _base_url(value: str) -> str:
    return _http_url(value, allow_query=False).rstrip("/")


def _feed_url(value: str) -> str:
    return _http_url(value, allow_query=True)


# An API root such as https://boards-api.greenhouse.io (or a loopback test server).
HttpBaseUrl = Annotated[str, Field(min_length=8, max_length=500), AfterValidator(_base_url)]
FeedUrl = Annotated[str, Field(min_length=8, max_length=2000), AfterValidator(_feed_url)]
SourceId = Annotated[str, Field(pattern=SOURCE_ID_PATTERN)]
CompanyName = Annotated[str, Field(min_length=1, max_length=200)]


class DemoBoardSource(CamelModel):
    kind: Literal["demo_board"] = "demo_board"
    id: str = Field(default="demo_board", pattern=SOURCE_ID_PATTERN)
    enabled: bool = True


class JsonFileSource(CamelModel):
    """Postings from a JSON file the user exported or wrote: the demo board's shape."""

    kind: Literal["json_file"] = "json_file"
    id: str = Field(pattern=SOURCE_ID_PATTERN)
    path: str
    enabled: bool = True


class GreenhouseSource(CamelModel):
    """A Greenhouse job board: ``{baseUrl}/v1/boards/{boardToken}/jobs?content=true``."""

    kind: Literal["greenhouse"] = "greenhouse"
    id: SourceId
    board_token: str = Field(pattern=BOARD_SLUG_PATTERN)
    company_name: CompanyName | None = None  # default: the board token
    base_url: HttpBaseUrl = "https://boards-api.greenhouse.io"
    enabled: bool = True


class LeverSource(CamelModel):
    """A Lever site: ``{baseUrl}/v0/postings/{company}?mode=json`` (EU: api.eu.lever.co)."""

    kind: Literal["lever"] = "lever"
    id: SourceId
    company: str = Field(pattern=BOARD_SLUG_PATTERN)
    company_name: CompanyName | None = None  # default: the site name
    base_url: HttpBaseUrl = "https://api.lever.co"
    enabled: bool = True


class AshbySource(CamelModel):
    """An Ashby job board: ``{baseUrl}/posting-api/job-board/{boardName}``."""

    kind: Literal["ashby"] = "ashby"
    id: SourceId
    board_name: str = Field(pattern=ASHBY_BOARD_PATTERN)
    company_name: CompanyName | None = None  # default: the board name
    base_url: HttpBaseUrl = "https://api.ashbyhq.com"
    enabled: bool = True


class FeedSource(CamelModel):
    """An RSS 2.0 or Atom feed of postings."""

    kind: Literal["feed"] = "feed"
    id: SourceId
    url: FeedUrl
    company_name: CompanyName | None = None  # default: entry author, then feed title
    enabled: bool = True


class CsvFileSource(CamelModel):
    """Postings from a CSV file with a header row (url,title,company required)."""

    kind: Literal["csv_file"] = "csv_file"
    id: SourceId
    path: str = Field(min_length=1, max_length=4096)
    enabled: bool = True


HostName = Annotated[str, Field(pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.)+[A-Za-z]{2,63}$")]
# Postings read per board per run: detail requests are one per posting, so a huge board is
# read in part rather than hammered (the newest come first on every family here).
MaxPostings = Annotated[int, Field(ge=1, le=2000)]


class WorkdaySource(CamelModel):
    """A Workday career site: ``https://{host}/wday/cxs/{tenant}/{site}/jobs`` (POST)."""

    kind: Literal["workday"] = "workday"
    id: SourceId
    host: HostName  # e.g. acme.wd5.myworkdayjobs.com
    tenant: str = Field(pattern=BOARD_SLUG_PATTERN)
    site: str = Field(pattern=BOARD_SLUG_PATTERN)
    company_name: CompanyName | None = None  # default: the posting's hiring organization
    base_url: HttpBaseUrl | None = None  # default: https://{host}
    max_postings: MaxPostings = 200
    enabled: bool = True


class SmartRecruitersSource(CamelModel):
    """A SmartRecruiters company: ``{baseUrl}/v1/companies/{company}/postings``."""

    kind: Literal["smartrecruiters"] = "smartrecruiters"
    id: SourceId
    company: str = Field(pattern=BOARD_SLUG_PATTERN)  # the identifier in careers URLs
    company_name: CompanyName | None = None  # default: the posting's company name
    base_url: HttpBaseUrl = "https://api.smartrecruiters.com"
    max_postings: MaxPostings = 200
    enabled: bool = True


class WorkableSource(CamelModel):
    """A Workable account: ``{baseUrl}/api/v1/widget/accounts/{account}?details=true``."""

    kind: Literal["workable"] = "workable"
    id: SourceId
    account: str = Field(pattern=BOARD_SLUG_PATTERN)
    company_name: CompanyName | None = None  # default: the account's name
    base_url: HttpBaseUrl = "https://apply.workable.com"
    enabled: bool = True


class RecruiteeSource(CamelModel):
    """A Recruitee careers site: ``https://{company}.recruitee.com/api/offers/``."""

    kind: Literal["recruitee"] = "recruitee"
    id: SourceId
    company: str = Field(pattern=BOARD_SLUG_PATTERN)
    company_name: CompanyName | None = None  # default: the offer's company name
    base_url: HttpBaseUrl | None = None  # default: https://{company}.recruitee.com
    enabled: bool = True


class PersonioSource(CamelModel):
    """A Personio job page's XML feed: ``https://{company}.jobs.personio.de/xml``."""

    kind: Literal["personio"] = "personio"
    id: SourceId
    company: str = Field(pattern=BOARD_SLUG_PATTERN)
    company_name: CompanyName | None = None  # default: the position's subcompany
    base_url: HttpBaseUrl | None = None  # default: https://{company}.jobs.personio.de
    language: Literal["en", "de", "fr", "es", "nl", "it", "pt"] = "en"
    enabled: bool = True


JobSpyBoard = Literal["indeed", "linkedin", "zip_recruiter", "glassdoor", "google"]


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _search_query(value: str) -> str:
    text = _one_line(value)
    if not text:
        raise ValueError("must not be blank")
    return text


SearchQuery = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_search_query)]
# "" (or blank) means anywhere.
SearchLocation = Annotated[str, Field(max_length=200), AfterValidator(_one_line)]


class JobSpySource(CamelModel):
    """Broad job boards through python-jobspy (the optional ``jobspy`` extra).

    Crawled as search units, one per query x location x board, each checkpointed on its
    own (backend/temporal/activities/jobspy_family.py): a retried crawl resumes unfinished
    units."""

    kind: Literal["jobspy"] = "jobspy"
    id: SourceId
    queries: list[SearchQuery] = Field(min_length=1, max_length=20)
    locations: list[SearchLocation] = Field(min_length=1, max_length=20)
    boards: list[JobSpyBoard] = Field(min_length=1, max_length=5)
    results_per_unit: int = Field(default=25, ge=1, le=200)
    hours_old: int | None = Field(default=72, ge=1, le=24 * 365)
    country_indeed: str = Field(default="USA", min_length=2, max_length=60)
    enabled: bool = True


SourceConfig = Annotated[
    DemoBoardSource
    | JsonFileSource
    | GreenhouseSource
    | LeverSource
    | AshbySource
    | FeedSource
    | CsvFileSource
    | JobSpySource
    | WorkdaySource
    | SmartRecruitersSource
    | WorkableSource
    | RecruiteeSource
    | PersonioSource,
    Field(discriminator="kind"),
]

DEFAULT_SOURCES: tuple[SourceConfig, ...] = (DemoBoardSource(),)
