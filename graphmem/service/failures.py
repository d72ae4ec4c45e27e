"""The REST API's answers to what fails before or outside graphmem's own code, in graphmem's
error format (``{"error": {"type", "message"}}``, see :mod:`graphmem.models.wire`): an unknown
route (404), a method the route does not take (405), a body that is not JSON or does not fit
its model (422), and an unexpected exception (500, its detail in the server's log)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from graphmem import errors
from graphmem.errors import GraphmemError
from graphmem.models.wire import error_body, error_reply

logger = logging.getLogger("graphmem.serve")

#: The graphmem error that names an HTTP status the web framework answers by itself.
_BY_STATUS: dict[int, type[GraphmemError]] = {
    401: errors.AuthenticationError,
    403: errors.PermissionDeniedError,
    404: errors.NotFoundError,
    413: errors.RequestTooLargeError,
}


def http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """An HTTP error the framework raised (no such route, a method the route does not take)."""
    status = exc.status_code
    path = request.url.path
    if status == 404:
        message = f"no route {path}: see the REST reference (/docs) for the routes"
    elif status == 405:
        allowed = (exc.headers or {}).get("Allow") or (exc.headers or {}).get("allow")
        message = f"{request.method} is not allowed on {path}" + (
            f"; it answers {allowed}" if allowed else ""
        )
    else:
        message = f"{path}: {exc.detail}"
    kind = _BY_STATUS.get(status)
    if kind is None:
        kind = errors.InvalidInputError if status < 500 else errors.ServiceError
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() == "allow"}
    return JSONResponse(error_body(error), status_code=status, headers=headers or None)


def invalid_request(exc: RequestValidationError) -> JSONResponse:
    """A body or parameters that do not fit their model, or a body that is not JSON: an
    :class:`~graphmem.errors.InvalidInputError` (422) naming each problem."""
    problems = []
    for item in exc.errors():
        if item.get("type") == "json_invalid":
            problems.append(_not_json(item, exc.body))
            continue
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "body") or "body"
        message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        problems.append(f"{where}: {message}")
    status, body, _ = error_reply(errors.InvalidInputError("; ".join(problems)))
    return JSONResponse(body, status_code=status)


def _not_json(item: Any, document: Any) -> str:
    reason = str((item.get("ctx") or {}).get("error") or "malformed")
    loc = item.get("loc", ())
    pos = loc[-1] if loc and isinstance(loc[-1], int) else None
    if pos is None or not isinstance(document, str):
        return f"the request body is not valid JSON: {reason}"
    line = document.count("\n", 0, pos) + 1
    column = pos - document.rfind("\n", 0, pos)
    return f"the request body is not valid JSON: {reason} at line {line} column {column}"


def unexpected(request: Request, exc: Exception) -> JSONResponse:
    """An exception no other handler answers: the server's own failure, logged with its
    traceback; the caller learns what failed and where to look."""
    logger.error(
        "%s %s failed: %s: %s",
        request.method,
        request.url.path,
        type(exc).__name__,
        exc,
        exc_info=exc,
    )
    error = errors.ServiceError(
        f"the server could not complete {request.url.path} (see its log)", status=500
    )
    return JSONResponse(error_body(error), status_code=500)


__all__ = ["http_error", "invalid_request", "unexpected"]
