"""How the user configures source families (one typed entry per source)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from backend.domain.model import CamelModel

SOURCE_ID_PATTERN = r"^[a-z0-9][a-z0-9_.:-]{0,63}$"


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


SourceConfig = Annotated[DemoBoardSource | JsonFileSource, Field(discriminator="kind")]

DEFAULT_SOURCES: tuple[SourceConfig, ...] = (DemoBoardSource(),)
