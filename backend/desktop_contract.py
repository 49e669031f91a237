"""The desktop's one door into the backend (docs/architecture.md).

`desktop/` imports the backend only from here (the import-linter contract "desktop"
in pyproject.toml): the runtime file's model, the service supervisor, the event
registry, and the few domain words and limits the views show. Everything else the
desktop learns from the HTTP API and its SSE stream.

Importing this module stays as cheap as the window's first frame needs: the helpers
the shell calls before its first paint come from standard-library-only modules; every
other name is imported on first use (PEP 562 ``__getattr__``), at the moment the view
that needs it is built, so no pydantic model or settings module loads earlier than it
did when the views imported the backend themselves. The imports are real ``import``
statements, so import-linter and PyInstaller see them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The process helpers the shell needs before its first paint (logging, exit, the start-up
# trace, memory trim, private files), re-exported; these modules import only the standard library.
from backend.paths import write_private_json  # noqa: F401
from backend.process.heap_trim import trim_after_bursts  # noqa: F401
from backend.process.startup_trace import milestone as startup_milestone  # noqa: F401
from backend.supervision.process import configure_logging, hard_exit  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path

    from backend.supervision.supervisor import Supervisor



def new_supervisor(app_dir: Path, **options: Any) -> Supervisor:
    """The supervisor of Temporal, the worker and the API for ``app_dir`` (``start()``
    answers the ``RuntimeInfo`` it writes to ``runtime.json``; ``stop()`` ends all three).
    Imported here, at the first start, not with the window."""
    from backend.supervision.supervisor import Supervisor

    return Supervisor(app_dir, **options)


def __getattr__(name: str) -> Any:
    """Every other name of the contract, imported when first asked for, then kept."""
    match name:
        # the services: the runtime file's model and what the supervisor reports
        case "RuntimeInfo":
            from backend.config import RuntimeInfo as value
        case "ServiceStatus":
            from backend.supervision.services import ServiceStatus as value
        case "Supervisor":
            from backend.supervision.supervisor import Supervisor as value
        # the event registry: the SSE stream's types
        case "DomainEvent":
            from backend.domain.events import DomainEvent as value
        case "EVENT_TYPES":
            from backend.domain.events import EVENT_TYPES as value
        # domain words and limits the views show
        case "APPLICATION_STAGE_LABELS":
            from backend.domain.applications import STAGE_LABELS as value
        case "APPLICATION_STAGES":
            from backend.domain.applications import STAGES as value
        case "APPLICATION_CLOSED_STAGES":
            from backend.domain.applications import CLOSED_STAGES as value
        case "local_today":
            from backend.domain.clock import local_today as value
        case "local_zone":
            from backend.domain.clock import local_zone as value
        case "utc_now":
            from backend.domain.clock import utc_now as value
        case "MAX_BATCH_JOBS":
            from backend.pipeline.batch import MAX_BATCH_JOBS as value
        case "MAX_WORKERS":
            from backend.pipeline.batch import MAX_WORKERS as value
        case "host_of":
            from backend.pipeline.access_grants import host_of as value
        # the API's document models: résumé and letter bodies
        case "CoverLetterDoc":
            from backend.pipeline.documents import CoverLetterDoc as value
        case "ResumeDoc":
            from backend.pipeline.documents import ResumeDoc as value
        # a board link pasted in Settings → Sources
        case "SourceLinkError":
            from backend.sources.link import SourceLinkError as value
        case "new_source_id":
            from backend.sources.link import new_source_id as value
        case "resolve_source_link":
            from backend.sources.link import resolve_source_link as value
        # a posting's description HTML, cleaned to the allowlist (no images) before Qt shows it
        case "sanitize_html":
            from backend.sources.html_clean import sanitize_html as value
        case _:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
