"""The secret store (0600 file fallback and a keyring backend) and the /v1/secrets routes:
values are write-only and never logged, stored in SQLite, or echoed."""

from __future__ import annotations

import logging
import os
import stat

import keyring
import keyring.backend
import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths
from backend.secrets.store import (
    BACKEND_ENV,
    InvalidSecretName,
    InvalidSecretValue,
    SecretStore,
    SecretStoreUnavailable,
)

VALUE = "sk-live-TOP-SECRET-value-42"
TOKEN = "test-token"


@pytest.fixture
def paths(tmp_path) -> AppPaths:
    return AppPaths(tmp_path)


class MemoryKeyring(keyring.backend.KeyringBackend):
    priority = 1

    def __init__(self):
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        if (service, username) not in self.store:
            raise keyring.errors.PasswordDeleteError("absent")
        del self.store[(service, username)]


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


# --- file fallback ---------------------------------------------------------------------


def test_file_backend_round_trip_with_0600(paths, caplog):
    caplog.set_level(logging.DEBUG)
    store = SecretStore(paths, backend="file")
    assert not store.uses_keyring
    assert store.backend_description() == f"file {paths.app_dir / 'secrets.json'} (0600)"
    assert store.names() == [] and store.get("openai") is None

    store.set("openai", VALUE + "\n")
    store.set("anthropic.main", "other")

    assert store.get("openai") == VALUE  # surrounding whitespace dropped
    assert store.names() == ["anthropic.main", "openai"]
    mode = stat.S_IMODE(os.stat(paths.app_dir / "secrets.json").st_mode)
    if os.name == "posix":
        assert mode == 0o600
    assert SecretStore(paths, backend="file").get("openai") == VALUE  # persisted

    assert store.delete("openai") is True
    assert store.delete("openai") is False
    assert store.names() == ["anthropic.main"]
    assert VALUE not in caplog.text and VALUE not in repr(store)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_loosened_file_is_tightened_again(paths):
    store = SecretStore(paths, backend="file")
    store.set("k", VALUE)
    os.chmod(store.secrets_file, 0o644)
    assert store.get("k") == VALUE
    assert stat.S_IMODE(os.stat(store.secrets_file).st_mode) == 0o600


def test_headless_linux_falls_back_to_the_file(paths):
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        store = SecretStore(paths, backend="auto")
        assert not store.uses_keyring
        with pytest.raises(SecretStoreUnavailable):
            SecretStore(paths, backend="keyring")
    finally:
        keyring.set_keyring(previous)


def test_env_var_forces_the_file_backend(paths, monkeypatch, memory_keyring):
    monkeypatch.setenv(BACKEND_ENV, "file")
    assert not SecretStore(paths).uses_keyring
    monkeypatch.setenv(BACKEND_ENV, "auto")
    assert SecretStore(paths).uses_keyring


@pytest.mark.parametrize("name", ["", "UPPER", "with space", "a/b", "x" * 65, "ключ"])
def test_invalid_names_are_refused(paths, name):
    store = SecretStore(paths, backend="file")
    with pytest.raises(InvalidSecretName):
        store.set(name, "v")
    with pytest.raises(InvalidSecretName):
        store.get(name)


@pytest.mark.parametrize("value", ["", "   \n", "x" * 16_385])
def test_invalid_values_are_refused_without_echo(paths, value):
    store = SecretStore(paths, backend="file")
    with pytest.raises(InvalidSecretValue) as caught:
        store.set("k", value)
    assert value.strip() == "" or value not in str(caught.value)
    assert store.names() == []


def test_a_corrupt_file_is_reported_not_overwritten(paths):
    (paths.app_dir / "secrets.json").write_text("{not json", encoding="utf-8")
    store = SecretStore(paths, backend="file")
    with pytest.raises(SecretStoreUnavailable):
        store.set("k", "v")
    assert (paths.app_dir / "secrets.json").read_text(encoding="utf-8") == "{not json"


# --- keyring ---------------------------------------------------------------------------


def test_keyring_backend_keeps_values_out_of_files(paths, memory_keyring):
    store = SecretStore(paths)
    assert store.uses_keyring
    assert store.backend_description().startswith("OS keyring (")
    store.set("openai", VALUE)
    assert memory_keyring.store[(f"JobCtrl:{paths.app_dir}", "openai")] == VALUE
    assert store.get("openai") == VALUE
    assert store.names() == ["openai"]  # from the index
    assert not (paths.app_dir / "secrets.json").exists()
    for file in paths.app_dir.iterdir():
        if file.is_file():
            assert VALUE not in file.read_text(encoding="utf-8", errors="replace")
    assert store.delete("openai") is True and store.delete("openai") is False
    assert store.names() == [] and memory_keyring.store == {}


# --- the API ---------------------------------------------------------------------------


@pytest.fixture
def client(paths, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(BACKEND_ENV, "file")
    app = create_app(paths, api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        test_client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield test_client


def test_api_stores_lists_and_deletes_without_echo(client, paths, caplog):
    listing = client.get("/v1/secrets")
    assert listing.status_code == 200
    assert listing.json() == {"backend": f"file {paths.app_dir / 'secrets.json'} (0600)",
                              "names": []}

    put = client.put("/v1/secrets/openai", json={"value": VALUE})
    assert put.status_code == 204 and put.content == b""
    assert client.get("/v1/secrets").json()["names"] == ["openai"]
    assert SecretStore(paths, backend="file").get("openai") == VALUE

    assert client.delete("/v1/secrets/openai").status_code == 204
    missing = client.delete("/v1/secrets/openai")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "secret_not_found"

    client.put("/v1/secrets/kept", json={"value": VALUE})
    assert VALUE not in caplog.text
    for suffix in ("", "-wal", "-shm"):
        db_file = paths.app_dir / f"jobctrl.db{suffix}"
        if db_file.exists():
            assert VALUE.encode() not in db_file.read_bytes()


@pytest.mark.parametrize(
    ("path", "body"),
    [("/v1/secrets/Bad%20Name", {"value": "v"}), ("/v1/secrets/ok", {"value": ""}),
     ("/v1/secrets/ok", {"value": "   "}), ("/v1/secrets/ok", {"nope": VALUE}),
     ("/v1/secrets/ok", {"value": VALUE, "extra": VALUE}), ("/v1/secrets/ok", {"value": 5})],
)
def test_api_rejects_bad_names_and_values_with_typed_422(client, path, body):
    response = client.put(path, json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert VALUE not in response.text
    assert client.get("/v1/secrets").json()["names"] == []


def test_api_needs_the_token(client):
    for method, path in (("GET", "/v1/secrets"), ("PUT", "/v1/secrets/k"),
                         ("DELETE", "/v1/secrets/k"), ("GET", "/v1/spend")):
        response = client.request(method, path, json={"value": "v"},
                                  headers={"Authorization": "Bearer wrong"})
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
