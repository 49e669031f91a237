"""Provider keys and other secrets: the OS keyring, or a 0600 file where none exists.

A headless Linux machine has no keyring backend (``keyring.backends.fail.Keyring``), so the
store falls back to ``<app dir>/secrets.json`` readable only by the user. The choice can be
forced with ``JOBCTRL_SECRETS_BACKEND=auto|keyring|file`` or the ``backend`` argument.

Secret names are not secret: a small index (``secrets.index.json``) lists them so
:meth:`SecretStore.names` works with a keyring too. Values are never logged, never put in
SQLite, events or heartbeats, and never part of an exception message or ``repr``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import threading
from pathlib import Path
from typing import Literal

from filelock import FileLock

from backend.config import AppPaths, write_private_json

log = logging.getLogger(__name__)

BACKEND_ENV = "JOBCTRL_SECRETS_BACKEND"
NAME_PATTERN = re.compile(r"^[a-z0-9_.-]{1,64}$")
MAX_VALUE_CHARS = 16_384
SECRETS_FILE = "secrets.json"
INDEX_FILE = "secrets.index.json"
LOCK_FILE = "secrets.lock"

BackendChoice = Literal["auto", "keyring", "file"]


class SecretStoreError(Exception):
    """Base of secret-store failures; messages never carry a value."""


class InvalidSecretName(SecretStoreError, ValueError):
    pass


class InvalidSecretValue(SecretStoreError, ValueError):
    pass


class SecretStoreUnavailable(SecretStoreError):
    """The keyring refused or the secrets file is unreadable."""


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise InvalidSecretName(
            "secret names are 1-64 characters of a-z, 0-9, '_', '.' and '-'"
        )
    return name


def _usable_keyring() -> keyring.backend.KeyringBackend | None:
    """The platform keyring, or None when keyring only has its fail/null backends.

    keyring is imported here, by the first store opened, not with this module: every
    process imports this module, few open a store, and keyring's backend discovery is slow
    to import. The methods below reach ``keyring.errors`` only once it is loaded."""
    global keyring
    import keyring
    import keyring.backends.fail
    import keyring.backends.null
    import keyring.errors

    try:
        backend = keyring.get_keyring()
    except Exception:  # noqa: BLE001 - a broken keyring config means "no keyring"
        return None
    if isinstance(backend, keyring.backends.fail.Keyring | keyring.backends.null.Keyring):
        return None
    chained = getattr(backend, "backends", None)
    if chained is not None and not list(chained):
        return None
    return backend


class SecretStore:
    def __init__(self, paths: AppPaths, *, backend: BackendChoice | None = None):
        self._paths = paths
        self._app_dir = Path(paths.app_dir)
        self.service = f"JobCtrl:{self._app_dir}"
        choice = (backend or os.environ.get(BACKEND_ENV) or "auto").strip().lower()
        if choice not in ("auto", "keyring", "file"):
            raise SecretStoreError(f"{BACKEND_ENV} must be auto, keyring or file")
        self._keyring = None if choice == "file" else _usable_keyring()
        if choice == "keyring" and self._keyring is None:
            raise SecretStoreUnavailable("no OS keyring backend is available")
        self._thread_lock = threading.Lock()

    # -- where ------------------------------------------------------------------------

    @property
    def uses_keyring(self) -> bool:
        return self._keyring is not None

    @property
    def secrets_file(self) -> Path:
        return self._app_dir / SECRETS_FILE

    @property
    def index_file(self) -> Path:
        return self._app_dir / INDEX_FILE

    def backend_description(self) -> str:
        if self._keyring is not None:
            return f"OS keyring ({getattr(self._keyring, 'name', type(self._keyring).__name__)})"
        return f"file {self.secrets_file} (0600)"

    def __repr__(self) -> str:
        return f"SecretStore({self.backend_description()!r})"

    # -- operations -------------------------------------------------------------------

    def set(self, name: str, value: str) -> None:
        validate_name(name)
        if not isinstance(value, str) or not value.strip():
            raise InvalidSecretValue("a secret value must be a non-empty string")
        value = value.strip()  # a pasted key's trailing newline is never part of it
        if len(value) > MAX_VALUE_CHARS:
            raise InvalidSecretValue(f"a secret value is at most {MAX_VALUE_CHARS} characters")
        with self._locked():
            if self._keyring is not None:
                try:
                    self._keyring.set_password(self.service, name, value)
                except keyring.errors.KeyringError as error:
                    raise SecretStoreUnavailable(
                        f"the OS keyring refused to store the secret ({type(error).__name__})"
                    ) from None
                self._write_index(sorted(set(self._read_index()) | {name}))
            else:
                secrets = self._read_file()
                secrets[name] = value
                self._write_file(secrets)
        log.info("secret %s stored in %s", name, self.backend_description())

    def get(self, name: str) -> str | None:
        validate_name(name)
        if self._keyring is not None:
            try:
                return self._keyring.get_password(self.service, name)
            except keyring.errors.KeyringError as error:
                raise SecretStoreUnavailable(
                    f"the OS keyring could not be read ({type(error).__name__})"
                ) from None
        return self._read_file().get(name)

    def delete(self, name: str) -> bool:
        """Remove a secret; False when there was none."""
        validate_name(name)
        with self._locked():
            if self._keyring is not None:
                names = self._read_index()
                existed = self.get(name) is not None
                if existed:
                    try:
                        self._keyring.delete_password(self.service, name)
                    except keyring.errors.PasswordDeleteError:
                        existed = False
                    except keyring.errors.KeyringError as error:
                        raise SecretStoreUnavailable(
                            f"the OS keyring could not delete the secret "
                            f"({type(error).__name__})"
                        ) from None
                if name in names:
                    self._write_index([n for n in names if n != name])
            else:
                secrets = self._read_file()
                existed = secrets.pop(name, None) is not None
                if existed:
                    self._write_file(secrets)
        if existed:
            log.info("secret %s deleted from %s", name, self.backend_description())
        return existed

    def names(self) -> list[str]:
        if self._keyring is not None:
            return sorted(self._read_index())
        return sorted(self._read_file())

    # -- files ------------------------------------------------------------------------

    def _locked(self):
        return _Both(self._thread_lock, FileLock(str(self._app_dir / LOCK_FILE), timeout=10))

    def _read_json(self, path: Path) -> dict:
        if not path.exists():
            return {}
        _tighten(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise SecretStoreUnavailable(
                f"{path.name} cannot be read ({type(error).__name__}); fix or remove it"
            ) from None
        if not isinstance(data, dict):
            raise SecretStoreUnavailable(f"{path.name} is not a JSON object; fix or remove it")
        return data

    def _read_file(self) -> dict[str, str]:
        secrets = self._read_json(self.secrets_file).get("secrets", {})
        if not isinstance(secrets, dict):
            raise SecretStoreUnavailable(f"{SECRETS_FILE} is malformed; fix or remove it")
        return {
            name: value for name, value in secrets.items()
            if isinstance(value, str) and NAME_PATTERN.fullmatch(name)
        }

    def _write_file(self, secrets: dict[str, str]) -> None:
        payload = {"version": 1, "secrets": dict(sorted(secrets.items()))}
        write_private_json(self.secrets_file, payload)

    def _read_index(self) -> list[str]:
        names = self._read_json(self.index_file).get("names", [])
        return [n for n in names if isinstance(n, str) and NAME_PATTERN.fullmatch(n)]

    def _write_index(self, names: list[str]) -> None:
        write_private_json(self.index_file, {"version": 1, "names": names})


def _tighten(path: Path) -> None:
    """Re-assert 0600 on a secrets file someone loosened (POSIX only)."""
    if os.name != "posix":
        return
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, 0o600)
            log.warning("%s was readable by others; permissions reset to 0600", path.name)
    except OSError:
        pass


class _Both:
    """Hold the in-process lock, then the cross-process file lock."""

    def __init__(self, thread_lock: threading.Lock, file_lock: FileLock):
        self._thread_lock = thread_lock
        self._file_lock = file_lock

    def __enter__(self) -> None:
        self._thread_lock.acquire()
        try:
            self._file_lock.acquire()
        except BaseException:
            self._thread_lock.release()
            raise

    def __exit__(self, *exc) -> None:
        try:
            self._file_lock.release()
        finally:
            self._thread_lock.release()
