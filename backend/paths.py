"""Where an app dir keeps its files, importable before anything heavy.

The launchers (``jobctrl`` itself, ``serve``, the desktop's first frame) need the app dir,
its file names and one setting — whether Temporal is embedded — before pydantic and the
settings models are imported: Temporal, the worker and the API are spawned first, and the
heavy imports overlap with their start. ``backend.config`` re-exports everything here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

APP_NAME = "JobCtrl"
EXTERNAL_TEMPORAL_ENV = "JOBCTRL_EXTERNAL_TEMPORAL_ADDRESS"


def default_app_dir() -> Path:
    import platformdirs  # only when no app dir is given

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def resolve_app_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    chosen = explicit or os.environ.get("JOBCTRL_APP_DIR")
    app_dir = Path(chosen).expanduser() if chosen else default_app_dir()
    app_dir = app_dir.resolve()
    app_dir.mkdir(parents=True, exist_ok=True)
    return app_dir


class AppPaths:
    """Every file location inside one app dir, named once."""

    def __init__(self, app_dir: Path):
        self.app_dir = app_dir

    @property
    def database(self) -> Path:
        return self.app_dir / "jobctrl.db"

    @property
    def temporal_dir(self) -> Path:
        return self.app_dir / "temporal"

    @property
    def temporal_history(self) -> Path:
        return self.temporal_dir / "history.db"

    @property
    def logs(self) -> Path:
        return self.app_dir / "logs"

    @property
    def settings(self) -> Path:
        return self.app_dir / "settings.json"

    @property
    def runtime_file(self) -> Path:
        return self.app_dir / "runtime.json"

    @property
    def instance_lock(self) -> Path:
        return self.app_dir / "instance.lock"

    @property
    def children_pids(self) -> Path:
        return self.app_dir / "children.pids.json"


class UnreadableSettings(ValueError):
    pass


def configured_temporal_address(paths: AppPaths) -> str | None:
    """The external Temporal address the settings name, or None: embed a dev server.

    Read from the raw file so the embedded server can be spawned before the settings
    models are imported; ``load_settings`` validates the same field (``temporal.address``,
    then the ``JOBCTRL_EXTERNAL_TEMPORAL_ADDRESS`` override) and the supervisor checks
    that both agree. Raises UnreadableSettings when the file is not a JSON object."""
    override = os.environ.get(EXTERNAL_TEMPORAL_ENV)
    if override:
        return override
    return _raw_temporal_settings(paths).get("address") or None


def temporal_web_ui_enabled(paths: AppPaths) -> bool:
    """Whether the user turned on the embedded Temporal Web UI (``temporal.webUi``, off by
    default: the UI has no login, so anyone on this computer who finds its port can read
    and change every run). Read raw, like the address, before the dev server is spawned."""
    return _raw_temporal_settings(paths).get("webUi") is True


def _raw_temporal_settings(paths: AppPaths) -> dict:
    try:
        data = json.loads(paths.settings.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise UnreadableSettings(f"{paths.settings} is not readable JSON: {error}") from error
    temporal = data.get("temporal") if isinstance(data, dict) else None
    if not isinstance(data, dict) or (temporal is not None and not isinstance(temporal, dict)):
        raise UnreadableSettings(f"{paths.settings} does not hold a settings object")
    return temporal or {}


def new_api_token() -> str:
    import secrets  # hmac, hashlib and random: not for the desktop's first frame

    return secrets.token_urlsafe(32)


def write_private_json(path: Path, payload: dict) -> None:
    """Write a file only the current user can read, atomically."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(payload, fh, indent=2)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
