"""How graphmem's errors travel over HTTP, both ways: the server answers an error with its
status (:data:`STATUS`, the one table of them) and ``{"error": {"type", "message", ...}}``;
the remote clients raise the same error class again from it, so that code written against
:class:`~graphmem.client.Memory` catches the same exceptions from
:class:`~graphmem.remote.RemoteMemory`. Nothing here imports the web framework."""

from __future__ import annotations

import inspect
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from graphmem import errors
from graphmem.errors import GraphmemError
from graphmem.models.fields import MAX_CALL_BYTES, MAX_CALL_ITEMS

#: The HTTP status of each error class; a subclass takes its nearest listed ancestor's.
STATUS: tuple[tuple[type[GraphmemError], int], ...] = (
    (errors.AuthenticationError, 401),
    (errors.PermissionDeniedError, 403),
    (errors.NotFoundError, 404),
    (errors.ConfirmationRequiredError, 409),
    (errors.NamespaceNotEmptyError, 409),
    (errors.MessageConflictError, 409),
    (errors.IdempotencyConflictError, 409),
    (errors.UndoRefusedError, 409),
    (errors.ConsolidationBusyError, 409),
    (errors.RequestTooLargeError, 413),
    (errors.InvalidInputError, 422),
    (errors.ClientUsageError, 422),
    (errors.TransientDatabaseError, 503),
    (errors.Neo4jUnavailableError, 503),
    (errors.TransactionTimeoutError, 504),
)
#: Attributes some errors carry beyond their message, sent along when they are plain data.
_EXTRAS = (
    "ids",
    "blockers",
    "ns",
    "counts",
    "refused",
    "limit",
    "problems",
    "status",
    "run_id",
    "expires_at",
    "index",
    "other_index",
    "external_id",
    "session_id",
    "indexes",
    "line",
)
#: The extras that the error classes hold as tuples.
_TUPLES = ("ids", "blockers", "indexes")


class ErrorDetail(BaseModel):
    """What went wrong: graphmem's error class and message, with the details some carry
    (``ids``, ``blockers``, ``ns``, ``counts``, ...)."""

    model_config = ConfigDict(extra="allow")

    type: str
    message: str


class ErrorAnswer(BaseModel):
    """The body of every error answer."""

    error: ErrorDetail


#: The error answers every keyed route may give, for the OpenAPI schema.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorAnswer, "description": text}
    for status, text in (
        (401, "No API key, or one that is unknown, revoked or expired."),
        (403, "The key does not open the namespace or its role does not allow the call."),
        (404, "No such fact, message or run in the namespace."),
        (409, "The call conflicts with the namespace's state."),
        (
            413,
            f"The call is too large: more than {MAX_CALL_ITEMS:,} items, {MAX_CALL_BYTES:,} "
            "bytes of text, or a body over the server's limit (`limit` names the one "
            "exceeded); nothing was written.",
        ),
        (422, "Malformed input; nothing was written."),
        (503, "Neo4j is unavailable or busy: try again."),
    )
}


def status_of(error: GraphmemError) -> int:
    """The HTTP status that answers ``error`` (500 for the server's own failures)."""
    for cls, status in STATUS:
        if isinstance(error, cls):
            return status
    return 500


def error_body(error: GraphmemError, message: str | None = None) -> dict[str, Any]:
    """The JSON body of an error answer: its class name, its message and its plain extras."""
    body: dict[str, Any] = {"type": type(error).__name__, "message": message or str(error)}
    for name in _EXTRAS:
        value = getattr(error, name, None)
        if isinstance(value, datetime):
            value = value.isoformat()
        if isinstance(value, (str, int, list, tuple, dict)):
            body[name] = list(value) if isinstance(value, tuple) else value
    return {"error": body}


def error_reply(
    error: GraphmemError, message: str | None = None
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """The status, JSON body and headers that answer ``error`` (``message`` in place of its
    own words): a 401 asks for a bearer key (``WWW-Authenticate``)."""
    status = status_of(error)
    headers = {"www-authenticate": "Bearer"} if status == 401 else {}
    return status, error_body(error, message), headers


def raise_error(status: int, body: Any) -> None:
    """Raise the graphmem error an error answer describes: the class it names when graphmem
    has it (with the extras it carried), else a :class:`~graphmem.errors.ServiceError`."""
    detail = body.get("error") if isinstance(body, dict) else None
    if not isinstance(detail, dict) or not isinstance(detail.get("message"), str):
        raise errors.ServiceError(
            f"the server answered HTTP {status}: {body!r:.300}", status=status
        )
    cls = getattr(errors, str(detail.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, GraphmemError)):
        cls = errors.ServiceError
    error = cls.__new__(cls)
    Exception.__init__(error, detail["message"])
    for name in _EXTRAS:
        if name in detail:
            value = detail[name]
            setattr(error, name, tuple(value) if name in _TUPLES else value)
    for name, default in _keywords(cls).items():
        if not hasattr(error, name):  # not sent (not plain data, or None): its default
            setattr(error, name, default)
    if isinstance(error, errors.MessageConflictError):
        error.conflicts = (error,)  # the others the server refused with it are in its message
    if isinstance(error, errors.ServiceError):
        error.status = status
    raise error


def _keywords(cls: type[GraphmemError]) -> dict[str, Any]:
    """The keyword-only attributes an error class takes, with their defaults (None for one
    without), so that an error raised again has every attribute the class promises."""
    try:
        parameters = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {
        p.name: None if p.default is p.empty else p.default
        for p in parameters
        if p.kind is p.KEYWORD_ONLY
    }


__all__ = [
    "ERROR_RESPONSES",
    "STATUS",
    "ErrorAnswer",
    "ErrorDetail",
    "error_body",
    "error_reply",
    "raise_error",
    "status_of",
]
