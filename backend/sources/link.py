"""A pasted careers-page or job-board link -> the source family and its board token.

``resolve_source_link("https://jobs.lever.co/globex/0f1e…/apply")`` is the Lever site
``globex``. Each family that has public board links registers one ``LinkFamily`` (its
hosts, how a path names the board, an example); a family added later plugs in with
``register_link_family`` and nothing else changes. Links no family can read raise
``SourceLinkError`` with a bounded code and a message the user can act on.

Source ids are generated here too (``new_source_id``): lower case, safe characters, unique.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import TypeAdapter, ValidationError

from backend.domain.source_config import SourceConfig

MAX_LINK_LENGTH = 2000
NOT_A_LINK = ("That does not look like a web link. Paste the address from the browser's "
              "address bar.")


class SourceLinkError(ValueError):
    """``code``: ``source_link_invalid`` (not a web link), ``source_unrecognized`` (no
    family reads that site), ``source_link_incomplete`` (the family's site, but no board
    named), ``source_link_board_hidden`` (a company's own page that hides the board)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class BoardRef:
    """What one family read from a link: the board and, for a regional host, its API."""

    token: str
    base_url: str | None = None


@dataclass(frozen=True)
class LinkFamily:
    kind: str                 # the source ``kind`` in settings
    name: str                 # what the user calls it: "Greenhouse"
    token_field: str          # the settings field the board token goes in
    example: str              # a link of the shape the family reads
    hosts: frozenset[str]     # the family's own hosts (lower case)
    read: Callable[[str, list[str], dict[str, list[str]]], BoardRef | None]
    # Query parameters that betray the family on a company's own careers page.
    hint_params: frozenset[str] = frozenset()


def _segments(path: str) -> list[str]:
    return [unquote(part) for part in path.split("/") if part]


# -- the families ------------------------------------------------------------------------------

def _read_greenhouse(host: str, parts: list[str], query: dict[str, list[str]]) -> BoardRef | None:
    # boards.greenhouse.io/embed/job_board?for=acme and .../embed/job_app?for=acme&token=1
    if parts[:1] == ["embed"]:
        board = (query.get("for") or [None])[0]
        return BoardRef(board) if board else None
    # boards-api.greenhouse.io/v1/boards/acme/jobs
    if host.startswith("boards-api.") and parts[:2] == ["v1", "boards"] and len(parts) > 2:
        return BoardRef(parts[2])
    # (job-)boards(.eu).greenhouse.io/acme[/jobs/123]; EU boards are served by the one API.
    if parts and not host.startswith("boards-api."):
        return BoardRef(parts[0])
    return None


def _read_lever(host: str, parts: list[str], _query: dict[str, list[str]]) -> BoardRef | None:
    eu = ".eu." in host
    base_url = "https://api.eu.lever.co" if eu else None
    # api(.eu).lever.co/v0/postings/globex
    if host.startswith("api.") and parts[:2] == ["v0", "postings"] and len(parts) > 2:
        return BoardRef(parts[2], base_url)
    # jobs(.eu).lever.co/globex[/<posting id>[/apply]]
    if host.startswith("jobs.") and parts:
        return BoardRef(parts[0], base_url)
    return None


def _read_ashby(host: str, parts: list[str], _query: dict[str, list[str]]) -> BoardRef | None:
    # api.ashbyhq.com/posting-api/job-board/initech
    if host.startswith("api.") and parts[:1] == ["posting-api"] and len(parts) > 2:
        return BoardRef(parts[2])
    # jobs.ashbyhq.com/initech[/<posting id>[/application]] (a name may hold spaces: %20)
    if host.startswith("jobs.") and parts:
        return BoardRef(parts[0])
    return None


LINK_FAMILIES: list[LinkFamily] = [
    LinkFamily("greenhouse", "Greenhouse", "boardToken", "https://boards.greenhouse.io/acme",
               frozenset({"boards.greenhouse.io", "job-boards.greenhouse.io",
                          "boards.eu.greenhouse.io", "job-boards.eu.greenhouse.io",
                          "boards-api.greenhouse.io"}),
               _read_greenhouse, frozenset({"gh_jid", "gh_src"})),
    LinkFamily("lever", "Lever", "company", "https://jobs.lever.co/globex",
               frozenset({"jobs.lever.co", "jobs.eu.lever.co", "api.lever.co",
                          "api.eu.lever.co"}),
               _read_lever, frozenset({"lever-origin", "lever-source"})),
    LinkFamily("ashby", "Ashby", "boardName", "https://jobs.ashbyhq.com/initech",
               frozenset({"jobs.ashbyhq.com", "api.ashbyhq.com"}),
               _read_ashby, frozenset({"ashby_jid"})),
]


# Families whose links carry more than a board token (a tenant and a site, a regional host):
# each module's ``resolve_link(url) -> settings params | None`` reads them. Imported when a
# link is resolved, not with this module (the desktop shell imports it at start).
PARAM_FAMILIES: dict[str, tuple[str, str]] = {  # kind -> (name, module)
    "workday": ("Workday", "backend.sources.workday"),
    "smartrecruiters": ("SmartRecruiters", "backend.sources.smartrecruiters"),
    "workable": ("Workable", "backend.sources.workable"),
    "recruitee": ("Recruitee", "backend.sources.recruitee"),
    "personio": ("Personio", "backend.sources.personio"),
}


def register_link_family(family: LinkFamily) -> None:
    """Plug in a family's links (its source kind must exist in ``SourceConfig``)."""
    if any(known.kind == family.kind for known in LINK_FAMILIES):
        raise ValueError(f"links of {family.kind!r} are already registered")
    LINK_FAMILIES.append(family)


def family_names() -> str:
    """"Greenhouse, Lever or Ashby" (whatever is registered)."""
    names = [family.name for family in LINK_FAMILIES] + [n for n, _ in PARAM_FAMILIES.values()]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


# -- resolving ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceLink:
    family: LinkFamily
    token: str
    base_url: str | None = None

    def source(self, taken_ids: Iterable[str] = ()) -> dict[str, Any]:
        """The settings entry (camelCase, as ``PATCH /v1/settings`` takes it), with a new id."""
        entry: dict[str, Any] = {"kind": self.family.kind,
                                 "id": new_source_id(self.family.kind, self.token, taken_ids),
                                 self.family.token_field: self.token, "enabled": True}
        if self.base_url:
            entry["baseUrl"] = self.base_url
        return entry


@dataclass(frozen=True)
class ParamsLink:
    """A link of a family whose settings are more than a token (``PARAM_FAMILIES``)."""

    kind: str
    name: str
    params: dict[str, Any]

    def source(self, taken_ids: Iterable[str] = ()) -> dict[str, Any]:
        named = next(str(v) for k, v in self.params.items() if k not in ("kind", "host", "baseUrl"))
        return {**self.params, "id": new_source_id(self.kind, named, taken_ids), "enabled": True}


_SOURCE_ADAPTER: TypeAdapter = TypeAdapter(SourceConfig)


def _params_link(parts) -> ParamsLink | None:
    for kind, (name, module) in PARAM_FAMILIES.items():
        params = importlib.import_module(module).resolve_link(parts)
        if params:
            resolved = ParamsLink(kind, name, params)
            try:
                _SOURCE_ADAPTER.validate_python(resolved.source())
            except ValidationError:
                raise SourceLinkError(
                    "source_link_incomplete",
                    f"This {name} link does not name a careers site JobCtrl can use. Paste "
                    "the link of the company's job list itself.") from None
            return resolved
    return None


def resolve_source_link(link: str) -> SourceLink | ParamsLink:
    """The family and board a pasted link names, or ``SourceLinkError``."""
    text = (link or "").strip()
    if not text:
        raise SourceLinkError("source_link_invalid", "Paste a link to a company's job board.")
    if len(text) > MAX_LINK_LENGTH or any(ch.isspace() for ch in text):
        raise SourceLinkError("source_link_invalid", NOT_A_LINK)
    if "://" not in text:
        text = "https://" + text  # "jobs.lever.co/globex" as typed
    try:
        parts = urlsplit(text)
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts, host = None, ""
    if parts is None or parts.scheme.lower() not in ("http", "https") or "." not in host:
        raise SourceLinkError("source_link_invalid", NOT_A_LINK)
    query = parse_qs(parts.query)
    for family in LINK_FAMILIES:
        if host in family.hosts:
            return _checked(family, family.read(host, _segments(parts.path), query), host)
    if (by_params := _params_link(parts)) is not None:
        return by_params
    hinted = next((family for family in LINK_FAMILIES if family.hint_params & set(query)), None)
    if hinted is not None:
        raise SourceLinkError(
            "source_link_board_hidden",
            f"This careers page uses {hinted.name}, but its link does not name the board. "
            f"Open one of its jobs, then paste the link of the {hinted.name} page it opens "
            f"(like {hinted.example}).")
    raise SourceLinkError(
        "source_unrecognized",
        f"JobCtrl cannot read jobs from {host} yet. Paste the link of the company's "
        f"{family_names()} job board (like {LINK_FAMILIES[0].example}).")


def _checked(family: LinkFamily, ref: BoardRef | None, host: str) -> SourceLink:
    if ref is None or not ref.token.strip():
        raise SourceLinkError(
            "source_link_incomplete",
            f"This {family.name} link does not name a company's board. Paste the link of the "
            f"board itself, like {family.example}.")
    token = ref.token.strip()
    resolved = SourceLink(family, token, ref.base_url)
    try:  # the same rules the settings apply: a token the API would refuse is refused here
        _SOURCE_ADAPTER.validate_python(resolved.source())
    except ValidationError:
        raise SourceLinkError(
            "source_link_incomplete",
            f"The board name in this {family.name} link ({token[:60]!r}) is not one JobCtrl "
            f"can use. Paste the link of the board itself, like {family.example}.") from None
    return resolved


# -- ids ---------------------------------------------------------------------------------------

ID_PREFIXES = {"greenhouse": "gh", "lever": "lever", "ashby": "ashby", "feed": "feed",
               "json_file": "json", "csv_file": "csv", "jobspy": "search", "workday": "wd",
               "smartrecruiters": "sr", "workable": "workable", "recruitee": "recruitee",
               "personio": "personio"}


def new_source_id(kind: str, value: str, taken: Iterable[str] = ()) -> str:
    """``gh-acme``-style ids: lower case, safe characters, unique among ``taken``
    (``gh-acme-2`` when ``gh-acme`` exists). ``value`` is a token, URL or path."""
    taken_ids = set(taken)
    prefix = ID_PREFIXES.get(kind) or re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")
    last_part = value.strip().rstrip("/").rsplit("/", 1)[-1]
    stem = re.sub(r"[^a-z0-9]+", "-", last_part.lower()).strip("-")[:40].strip("-")
    base = f"{prefix or 'source'}-{stem or 'source'}"
    candidate, n = base, 2
    while candidate in taken_ids:
        candidate, n = f"{base}-{n}", n + 1
    return candidate
