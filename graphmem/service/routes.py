"""The REST API under ``/v1``, generated from the table of operations
(:mod:`graphmem.ops.table`): one route a row, its body or query parameters the row's request
model, its answer the row's result model, its key checked for the row's role in the path's
namespace, and the writes the table marks answered once per idempotency key. Each route calls
the server's :class:`~graphmem.client.AsyncMemory` method of the row with the request's fields
as keyword arguments. What a route does beyond that is in :data:`BEFORE` and :data:`AFTER`,
and the two streamed routes (export, import) are written out below."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from graphmem.client.aio import AsyncMemory
from graphmem.errors import PermissionDeniedError
from graphmem.models.bounds import check_items
from graphmem.models.keys import ApiKey
from graphmem.models.wire import ERROR_RESPONSES
from graphmem.ops.table import OPERATIONS, Operation
from graphmem.service.causal import ANSWER_HEADER, FOLLOWS
from graphmem.service.deps import KEYS, Memory, NsPath, answer
from graphmem.service.import_body import streamed_records
from graphmem.service.requests import IDEMPOTENT, once

#: An export in the OpenAPI schema: `graphmem-namespace` records, one JSON object a line.
JSON_LINES = {"type": "string", "description": "graphmem-namespace JSON lines"}

Args = dict[str, Any]


def _reads_only(args: Args, key: ApiKey) -> None:
    """A read key's searches count no access: it writes nothing."""
    if not key.allows("write"):
        args["track_access"] = False


def _everything_needs_admin(args: Args, key: ApiKey) -> None:
    if args.get("everything") and not key.allows("admin"):
        raise PermissionDeniedError(
            f"the API key {key.name!r} has the role {key.role!r}; erasing a whole namespace "
            "(everything) needs 'admin'"
        )


def _bounded(name: str, field: str) -> Callable[[Args, ApiKey], None]:
    """At most 1,000 items and 4 MB of text a call (413 beyond), as MCP and the clients."""
    return lambda args, key: check_items(args[name], field)


#: What a route checks or adds to the library's arguments before the call, by operation.
BEFORE: dict[str, Callable[[Args, ApiKey], None]] = {
    "recall": _reads_only,
    "context": _reads_only,
    "forget": _everything_needs_admin,
    "remember_many": _bounded("facts", "text"),
    "ingest": _bounded("messages", "content"),
}
#: What a route makes of the library's answer, by operation: a listing shows what the key opens.
AFTER: dict[str, Callable[[Any, ApiKey], Any]] = {
    "namespaces": lambda found, key: [n for n in found if key.opens(n.ns)],
}


def library_args(op: Operation, values: Args) -> Args:
    """The library's keyword arguments of a request: its path parameters and the fields its
    body or query set (the others keep the library's defaults), a negated flag turned back."""
    args = {k: v for k, v in values.items() if k in op.path_params}
    request = values.get("body")
    if isinstance(request, BaseModel):
        args |= {name: getattr(request, name) for name in request.model_fields_set}
    elif op.request is not None:  # a GET: each query parameter is an argument
        args |= {name: values[name] for name in op.request.model_fields if name in values}
    if op.negated is not None:
        flag, wire = op.negated
        args[flag] = not args.pop(wire, False)
    return args


def method_of(memory: AsyncMemory, op: Operation) -> Callable[..., Any]:
    """The client's method of ``op`` (``audit.beliefs``: ``memory.audit.beliefs``)."""
    target: Any = memory
    for part in op.call.split("."):
        target = getattr(target, part)
    return target  # type: ignore[no-any-return]


def _endpoint(op: Operation) -> Callable[..., Any]:
    async def endpoint(
        request: Request, key: ApiKey, memory: AsyncMemory, **values: Any
    ) -> Response:
        args = library_args(op, values)
        if op.name in BEFORE:
            BEFORE[op.name](args, key)

        async def call() -> Any:
            result = await method_of(memory, op)(**args)
            return AFTER[op.name](result, key) if op.name in AFTER else result

        if op.recorded:
            body = values.get("body")
            ns = values["ns"]
            return await once(request, ns, body, call, status=op.status, derive_ids=op.derive_ids)
        return answer(await call(), op.status)

    endpoint.__name__ = endpoint.__qualname__ = op.name
    endpoint.__doc__ = op.doc
    endpoint.__signature__ = _signature(op)  # type: ignore[attr-defined]
    return endpoint


def _signature(op: Operation) -> inspect.Signature:
    """What FastAPI reads of a route: its path parameters, its body or query parameters, the
    key of its role, the server's client and the request."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter(name, keyword, annotation=NsPath if name == "ns" else str)
        for name in op.path_params
    ]
    if op.request is not None and op.http == "POST":
        params.append(inspect.Parameter("body", keyword, annotation=op.request))
    params += [
        inspect.Parameter("key", keyword, annotation=KEYS[op.role]),
        inspect.Parameter("memory", keyword, annotation=Memory),
        inspect.Parameter("request", keyword, annotation=Request),
    ]
    if op.request is not None and op.http == "GET":
        for name, info in op.request.model_fields.items():
            query = Query(**_constraints(info.metadata))
            default = inspect.Parameter.empty if info.is_required() else info.default
            annotation = Annotated[info.annotation, query]  # type: ignore[name-defined]
            params.append(inspect.Parameter(name, keyword, default=default, annotation=annotation))
    return inspect.Signature(params, return_annotation=Response)


def _constraints(metadata: list[Any]) -> dict[str, Any]:
    """A field's bounds (``ge``, ``le``) as Query's arguments."""
    found: dict[str, Any] = {}
    for item in metadata:
        for name in ("ge", "le", "gt", "lt"):
            if getattr(item, name, None) is not None:
                found[name] = getattr(item, name)
    return found


async def export(request: Request, key: ApiKey, memory: AsyncMemory, ns: str) -> Response:
    records = await memory.export(ns)

    async def lines() -> AsyncIterator[bytes]:
        async for record in records:
            yield (json.dumps(record, ensure_ascii=False) + "\n").encode()

    return StreamingResponse(lines(), media_type="application/x-ndjson")


async def import_(request: Request, key: ApiKey, memory: AsyncMemory, ns: str) -> Response:
    async with streamed_records(request.stream()) as records:
        return answer(await memory.import_(records, ns=ns), 201)


#: The streamed routes, written out: their bodies or answers are JSON lines.
STREAMED: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "export": (
        export,
        {
            "response_class": StreamingResponse,
            "responses": {200: {"content": {"application/x-ndjson": {"schema": JSON_LINES}}}},
        },
    ),
    "import_": (
        import_,
        {
            "openapi_extra": {
                "requestBody": {
                    "required": True,
                    "content": {"application/x-ndjson": {"schema": JSON_LINES}},
                }
            }
        },
    ),
}


def _router() -> APIRouter:
    router = APIRouter(responses=ERROR_RESPONSES)
    for op in OPERATIONS:
        if op.streamed:
            endpoint, options = STREAMED[op.name]
            endpoint.__signature__ = _signature(op)  # type: ignore[attr-defined]
        else:
            endpoint, options = _endpoint(op), {}
        if op.result is not None:
            options = {"response_model": op.result, **options}
        if op.writes:  # a write answers with its bookmark
            answered = {op.status: {"headers": ANSWER_HEADER}}
            options = {**options, "responses": {**options.get("responses", {}), **answered}}
        router.add_api_route(
            op.path,
            endpoint,
            methods=[op.http],
            status_code=op.status,
            tags=[op.tag],
            dependencies=[FOLLOWS, IDEMPOTENT] if op.recorded else [FOLLOWS],
            name=op.name,
            description=op.doc,
            **options,
        )
    return router


router = _router()


__all__ = ["AFTER", "BEFORE", "library_args", "method_of", "router"]
