"""Every error leaves the API as ``{"error": {"code": ..., "message": ...}}``."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException


class ErrorDetail(BaseModel):
    code: str
    message: str
    fields: list[str] | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict | None = None,
                 fields: list[str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.fields = fields


def error_response(
    status: int, code: str, message: str, *, fields: list[str] | None = None,
    headers: dict | None = None,
) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code, message=message, fields=fields))
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)


def error_responses(*statuses: int) -> dict[int, dict]:
    """OpenAPI ``responses=`` entries for the typed error body."""
    return {status: {"model": ErrorBody} for status in statuses}


def _field_name(location: tuple) -> str:
    return ".".join(str(part) for part in location if part not in ("body", "query", "path"))


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, headers=exc.headers,
                              fields=exc.fields)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = exc.errors()
        fields = sorted({_field_name(tuple(p.get("loc", ()))) for p in problems} - {""})
        if any(p.get("type") == "json_invalid" for p in problems):
            return error_response(400, "malformed_json", "The request body is not valid JSON.")
        summary = "; ".join(
            f"{_field_name(tuple(p.get('loc', ()))) or 'body'}: {p.get('msg')}" for p in problems[:5]
        )
        return error_response(422, "validation_error", summary, fields=fields)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail))
