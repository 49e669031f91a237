"""A posting as the writing and scoring stages see it, straight from a board file.

The preparation stage builds ``JobText`` from the stored job and its enrichment; tests and
benchmarks that score a whole board without the database build the same thing here."""

from __future__ import annotations

from backend.domain.postings import Posting
from backend.pipeline.enrich import description_from_source
from backend.pipeline.score import JobText


def job_text_from_posting(posting: Posting) -> JobText:
    """The source description (as Enrich reads it), the arrangement and the salary."""
    extraction = description_from_source(posting.description_html)
    salary = posting.salary
    return JobText(title=posting.title, company=posting.company, location=posting.location,
                   remote=None if posting.remote == "unknown" else posting.remote,
                   description=extraction.text if extraction else "",
                   salary_min=salary.min if salary else None,
                   salary_max=salary.max if salary else None,
                   salary_currency=salary.currency if salary else None)


def demo_board_jobs() -> list[JobText]:
    """Every posting of the bundled demo board."""
    from backend.sources.board_file import demo_board_text, parse_board

    return [job_text_from_posting(posting) for posting in parse_board(demo_board_text())]
