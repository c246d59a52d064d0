"""Every failed request answers one JSON shape, never a traceback.

``{"error": {"code", "message", "hint", "pointer"}, "detail": message}``: SEA's code and
message (``detail`` too, which LangGraph's SDKs read), with the HTTP status of the error's
class (:attr:`sea.errors.ServeError.status`); request bodies FastAPI cannot validate answer
422 in the same shape, the field named by ``pointer``; an unexpected failure answers 500
with a short message (the traceback goes to the server's log only).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from saimemory.errors import MemoryStoreError
from sea.errors import (
    InvalidRequest,
    PersonaBusy,
    PlaybookError,
    SeaError,
    ServeError,
    SizeLimitExceeded,
    UsageError,
)

log = logging.getLogger("sea.serve")

def error_body(code: str, message: str, hint: str | None = None,
               pointer: str | None = None, **more: Any) -> dict[str, Any]:
    """The body of a failed request."""
    error: dict[str, Any] = {"code": code, "message": message, "hint": hint}
    if pointer is not None:
        error["pointer"] = pointer
    error.update(more)
    return {"error": error, "detail": message}


def status_of(exc: SeaError) -> int:
    """The HTTP status an engine error answers."""
    if isinstance(exc, ServeError):
        return exc.status
    if isinstance(exc, PersonaBusy):
        return 409
    if isinstance(exc, SizeLimitExceeded):
        return 413
    if isinstance(exc, LookupError):  # an unknown playbook, persona, pulse
        return 404
    if isinstance(exc, PlaybookError | UsageError):
        return 422
    return 400


def answer_of(exc: SeaError) -> JSONResponse:
    """The response of an engine error."""
    more: dict[str, Any] = {}
    if isinstance(exc, PlaybookError):
        more["diagnostics"] = [d.to_json() for d in exc.diagnostics]
    hint = getattr(exc, "hint", None)
    return JSONResponse(error_body(exc.code, exc.message, hint if isinstance(hint, str) else None,
                                   **more), status_of(exc))


def install(app: FastAPI) -> None:
    """Add the error handlers to ``app``."""

    async def sea_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SeaError)
        return answer_of(exc)

    async def store_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, MemoryStoreError)
        return JSONResponse(error_body(exc.code, exc.message), 400)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        problems = exc.errors()
        first = problems[0] if problems else {}
        where = [str(part) for part in first.get("loc", ())]
        pointer = "/" + "/".join(where[1:]) if len(where) > 1 else None
        message = f"{'.'.join(where[1:]) or 'the request'}: {first.get('msg', 'invalid')}"
        body = error_body(InvalidRequest.code, message, "see the API's OpenAPI document "
                          "(/openapi.json) for the request's shape", pointer,
                          problems=[{"loc": list(p.get("loc", ())), "msg": p.get("msg")}
                                    for p in problems[:20]])
        return JSONResponse(body, 422)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = getattr(exc, "code", None) or ServeError.code
        headers = getattr(exc, "headers", None)
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code,
                            headers=headers)

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("request %s %s failed", request.method, request.url.path)
        return JSONResponse(error_body(ServeError.code, "the server failed to answer this "
                                       "request (its log has the details)"), 500)

    app.add_exception_handler(SeaError, sea_error)
    app.add_exception_handler(MemoryStoreError, store_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
