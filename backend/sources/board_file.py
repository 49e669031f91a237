"""Reading the board-file shape shared by the bundled demo board and JSON imports.

``{"postings": [{"id", "url", "title", "company", "location", "remote", "salary",
"employmentType", "postedAt", "descriptionHtml", "tags", "applyUrl"}, ...]}``
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from backend.domain.ids import InvalidPostingUrl, canonical_url
from backend.domain.postings import Posting
from backend.domain.source_config import DemoBoardSource, JsonFileSource
from backend.sources.errors import SourceMisconfigured, SourcePayloadInvalid


def parse_board(text: str) -> list[Posting]:
    try:
        document = json.loads(text)
        raw_postings = document["postings"]
        if not isinstance(raw_postings, list):
            raise TypeError("postings is not a list")
        postings = [
            Posting.model_validate({**raw, "sourceKey": raw.get("id")}) for raw in raw_postings
        ]
        for posting in postings:
            canonical_url(posting.url)
    except (ValueError, KeyError, TypeError, ValidationError, InvalidPostingUrl) as exc:
        # The message stays in our logs' traceback; the workflow only sees the code.
        raise SourcePayloadInvalid() from exc
    return postings


def demo_board_text() -> str:
    return (resources.files("resources") / "demo_board" / "postings.json").read_text("utf-8")


async def fetch_demo_board(_: DemoBoardSource) -> list[Posting]:
    return parse_board(demo_board_text())


async def fetch_json_file(source: JsonFileSource) -> list[Posting]:
    path = Path(source.path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceMisconfigured() from exc
    return parse_board(text)
