"""The source-access policy of contact research.

The posting's own stored text is always usable: it is already on this computer. Every
public source is opt-in: nothing is fetched unless the user lists it in the setting
``contactResearchSources`` (empty by default). Two kinds exist:

* ``posting_page``: the job's live posting page (its own URL), robots.txt honoured;
* ``web_page``: a fixed public page, e.g. a company's team page. ``{company}`` in the
  URL is replaced by the job's company name (URL-encoded).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote, urlsplit

from pydantic import ConfigDict, Field, model_validator

from backend.domain.model import CamelModel

POSTING_TEXT = "posting_text"  # the stored posting: always allowed, never fetched


class ContactSourceConfig(CamelModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    kind: Literal["posting_page", "web_page"]
    url: str | None = Field(default=None, max_length=500,
                            description="web_page only; may contain {company}")

    @model_validator(mode="after")
    def _url_fits_kind(self) -> ContactSourceConfig:
        if self.kind == "posting_page" and self.url is not None:
            raise ValueError("a posting_page source uses the job's own URL; give no url")
        if self.kind == "web_page":
            if not self.url:
                raise ValueError("a web_page source needs a url")
            probe = urlsplit(self.url.replace("{company}", "x"))
            if probe.scheme not in ("http", "https") or not probe.netloc:
                raise ValueError("a web_page url must be an absolute http(s) URL")
        return self


def source_url(source: ContactSourceConfig, *, job_url: str, company: str) -> str:
    """The exact URL a configured source fetches for one job."""
    if source.kind == "posting_page":
        return job_url
    assert source.url is not None  # validated
    return source.url.replace("{company}", quote(company.strip(), safe=""))
