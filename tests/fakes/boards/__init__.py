"""Real-shape payloads of every board family, served from the loopback JobBoards server
(see README.md here for where each shape comes from)."""

from __future__ import annotations

from tests.fakes.boards import classic, personio, recruitee, smartrecruiters, workable, workday
from tests.fakes.job_boards import JobBoards


def serve_all(boards: JobBoards) -> JobBoards:
    for family in (workday, smartrecruiters, workable, recruitee, personio, classic):
        family.serve(boards)
    return boards
