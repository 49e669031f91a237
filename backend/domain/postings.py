"""A posting as every source family hands it to the store, already normalized."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel

RemoteMode = Literal["remote", "hybrid", "onsite", "unknown"]


class Salary(CamelModel):
    min: int | None = Field(default=None, ge=0)
    max: int | None = Field(default=None, ge=0)
    currency: str | None = Field(default=None, max_length=8)
    period: str | None = Field(default=None, max_length=16)


class Posting(CamelModel):
    source_key: str = Field(min_length=1, max_length=300)
    url: str = Field(min_length=8, max_length=2000)
    apply_url: str | None = None
    title: str = Field(min_length=1, max_length=300)
    company: str = Field(min_length=1, max_length=200)
    location: str | None = None
    remote: RemoteMode = "unknown"
    salary: Salary | None = None
    employment_type: str | None = None
    posted_at: str | None = None
    description_html: str | None = None
    tags: list[str] = Field(default_factory=list)
