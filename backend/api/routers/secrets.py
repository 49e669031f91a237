"""Secrets (provider API keys): list names, store, delete. Values are write-only here:
no route ever returns one, and none is logged."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from backend.api.errors import ApiError, error_responses
from backend.api.security import require_token
from backend.domain.model import CamelModel
from backend.secrets.store import (
    MAX_VALUE_CHARS,
    NAME_PATTERN,
    InvalidSecretName,
    InvalidSecretValue,
    SecretStore,
    SecretStoreError,
    SecretStoreUnavailable,
)

router = APIRouter(tags=["secrets"], dependencies=[Depends(require_token)])

SecretName = Annotated[
    str, Path(pattern=NAME_PATTERN.pattern, description="1-64 of a-z 0-9 _ . -")
]


class SecretList(CamelModel):
    backend: str  # where secrets are kept, for the Settings view to say so
    names: list[str]


class SecretValue(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    value: str = Field(min_length=1, max_length=MAX_VALUE_CHARS, repr=False)


def secret_store(request: Request) -> SecretStore:
    store = getattr(request.app.state, "secret_store", None)
    if store is None:
        try:
            store = SecretStore(request.app.state.context.paths)
        except SecretStoreError as error:
            raise ApiError(503, "secrets_unavailable", str(error)) from None
        request.app.state.secret_store = store
    return store


def _translate(error: SecretStoreError) -> ApiError:
    if isinstance(error, InvalidSecretName | InvalidSecretValue):
        return ApiError(422, "validation_error", str(error))
    if isinstance(error, SecretStoreUnavailable):
        return ApiError(503, "secrets_unavailable", str(error))
    return ApiError(500, "secrets_error", "the secret store failed")


Store = Annotated[SecretStore, Depends(secret_store)]


# Plain ``def`` routes: keyring backends are blocking, so FastAPI runs these in a thread.

@router.get("/v1/secrets", response_model=SecretList, responses=error_responses(401, 503))
def list_secrets(store: Store) -> SecretList:
    try:
        return SecretList(backend=store.backend_description(), names=store.names())
    except SecretStoreError as error:
        raise _translate(error) from None


@router.put("/v1/secrets/{name}", status_code=204, response_class=Response,
            responses=error_responses(400, 401, 422, 503))
def put_secret(name: SecretName, body: SecretValue, store: Store) -> Response:
    try:
        store.set(name, body.value)
    except SecretStoreError as error:
        raise _translate(error) from None
    return Response(status_code=204)


@router.delete("/v1/secrets/{name}", status_code=204, response_class=Response,
               responses=error_responses(401, 404, 422, 503))
def delete_secret(name: SecretName, store: Store) -> Response:
    try:
        existed = store.delete(name)
    except SecretStoreError as error:
        raise _translate(error) from None
    if not existed:
        raise ApiError(404, "secret_not_found", f"no secret named {name!r}")
    return Response(status_code=204)
