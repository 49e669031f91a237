"""Every error leaves the API as ``{"error": {"code": ..., "message": ...}}``."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match


class UnsupportedClaimOut(BaseModel):
    """A claim of the user's edit the profile does not hold: its words, and why."""

    claim: str
    why: str


class ErrorDetail(BaseModel):
    code: str
    message: str
    fields: list[str] | None = None
    unsupportedClaims: list[UnsupportedClaimOut] | None = None  # noqa: N815 - the wire name
    requestId: str | None = None  # noqa: N815 - the wire name; set on 500s, the log line has it


class ErrorBody(BaseModel):
    error: ErrorDetail


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict | None = None,
                 fields: list[str] | None = None,
                 unsupported_claims: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.fields = fields
        self.unsupported_claims = unsupported_claims


def error_response(
    status: int, code: str, message: str, *, fields: list[str] | None = None,
    headers: dict | None = None, request_id: str | None = None,
    unsupported_claims: list[dict[str, str]] | None = None,
) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code, message=message, fields=fields,
                                       requestId=request_id,
                                       unsupportedClaims=unsupported_claims))
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)


def error_responses(*statuses: int) -> dict[int, dict]:
    """OpenAPI ``responses=`` entries for the typed error body."""
    return {status: {"model": ErrorBody} for status in statuses}


MALFORMED_MESSAGE = "The request body could not be decoded (not valid JSON or form data)."
HTTP_ERROR_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}


def noop_responses(model: type[BaseModel]) -> dict[int, dict]:
    """The ``200`` entry of a command that answers 202 when it starts work and 200 when
    there is nothing to do (the body's ``noopReason`` says why)."""
    return {200: {"model": model, "description": "Nothing to do: noopReason says why; nothing "
                  "was started"}}


# Typed codes that a request model's own validator may raise (see rule_error): the
# envelope carries the code and fields the rule names instead of "validation_error".
RULE_CODES: set[str] = set()


def rule_error(code: str, message: str, *, fields: list[str]) -> PydanticCustomError:
    """A validation failure with its own typed code, for a rule a request model states in
    a validator (so the model stays the one description of what the route takes)."""
    RULE_CODES.add(code)
    return PydanticCustomError(code, message, {"fields": fields})


def _field_name(location: tuple) -> str:
    """The dotted field path; a callable discriminator's branch tag (written ``[tag]``, see
    ``SourceOrLink``) is a branch, not a field the user sent."""
    return ".".join(str(part) for part in location if part not in ("body", "query", "path")
                    and not (isinstance(part, str) and part.startswith("[") and part.endswith("]")))


def _problem_field(problem: dict) -> str:
    """The field a validation problem is about; a union tag that is missing or unknown is
    about the tag's own field (``stage``, ``kind``)."""
    location = tuple(problem.get("loc", ()))
    if problem.get("type") in ("union_tag_invalid", "union_tag_not_found"):
        location += (str(problem.get("ctx", {}).get("discriminator", "")).strip("'"),)
    return _field_name(location)


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path. Starlette's own 405 names only the
    methods of the first route whose path matched, and GET and PUT of one path are two
    routes; asking the router per method is exact."""
    def served(method: str) -> bool:
        scope = {**request.scope, "method": method}
        return any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes)

    return [method for method in HTTP_METHODS if served(method)]


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, headers=exc.headers,
                              fields=exc.fields, unsupported_claims=exc.unsupported_claims)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = exc.errors()
        fields = sorted({_problem_field(p) for p in problems} - {""})
        if any(p.get("type") == "json_invalid" for p in problems):
            return error_response(400, "malformed_json", MALFORMED_MESSAGE)
        rule = next((p for p in problems if p.get("type") in RULE_CODES), None)
        if rule is not None:
            return error_response(422, rule["type"], rule["msg"],
                                  fields=list(rule.get("ctx", {}).get("fields", [])))
        summary = "; ".join(
            f"{_problem_field(p) or 'body'}: {p.get('msg')}" for p in problems[:5]
        )
        return error_response(422, "validation_error", summary, fields=fields)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # FastAPI's only own 400 is a body it could not parse (a broken multipart form):
        # the same fault as undecodable JSON, so the same code.
        if exc.status_code == 400:
            return error_response(400, "malformed_json", MALFORMED_MESSAGE)
        code = HTTP_ERROR_CODES.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed_methods(request))
        return error_response(exc.status_code, code, str(exc.detail), headers=headers or None)
