"""What every REST route shares: the server's client, the request's API key (checked against
the route's namespace and role, and made the actor of its changes), and JSON answers written
straight from the result models."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Any

from fastapi import Depends, Path, Request, Response, Security
from fastapi.security import HTTPBearer
from pydantic import BaseModel

from graphmem.client.aio import AsyncMemory
from graphmem.core.actor import acting_as
from graphmem.core.checks import namespace
from graphmem.edge.keys import SCOPE_KEY, require
from graphmem.errors import AuthenticationError
from graphmem.models.keys import ApiKey, Role

NsPath = Annotated[str, Path(description="The namespace: a user, agent or tenant.", max_length=128)]


def memory_of(request: Request) -> AsyncMemory:
    """The server's one warm client."""
    memory: AsyncMemory = request.app.state.memory
    return memory


#: Declares the bearer key in the OpenAPI schema (the "Authorize" button of /docs); the key
#: itself is checked before routing, by the service's key gate.
_BEARER = HTTPBearer(auto_error=False, description="An API key: graphmem keys create")


async def request_key(
    request: Request, _declared: Annotated[object, Security(_BEARER)] = None
) -> ApiKey:
    """The request's API key, which the key gate in front of ``/v1`` checked (and answered
    401 when missing or bad) before the request reached the routes."""
    key = request.scope.get(SCOPE_KEY)
    if not isinstance(key, ApiKey):
        raise AuthenticationError("no API key was checked for this request")
    return key


def _access(role: Role) -> Any:
    async def dependency(
        ns: NsPath, key: Annotated[ApiKey, Depends(request_key)]
    ) -> AsyncIterator[ApiKey]:
        require(key, namespace(ns, None), role)
        with acting_as(key.name):
            yield key

    return Depends(dependency)


#: A key that may read the path's namespace; one that may write it; one that administers it.
ReadKey = Annotated[ApiKey, _access("read")]
WriteKey = Annotated[ApiKey, _access("write")]
AdminKey = Annotated[ApiKey, _access("admin")]
AnyKey = Annotated[ApiKey, Depends(request_key)]
#: The key of each role (None: any valid key), as the table of operations names roles.
KEYS: dict[Role | None, Any] = {"read": ReadKey, "write": WriteKey, "admin": AdminKey, None: AnyKey}
Memory = Annotated[AsyncMemory, Depends(memory_of)]


def answer(result: BaseModel | Sequence[BaseModel], status: int = 200) -> Response:
    """A result model (or a list of them) as JSON, exactly as ``model_dump_json`` writes it."""
    if isinstance(result, BaseModel):
        body = result.model_dump_json()
    else:
        body = "[" + ",".join(item.model_dump_json() for item in result) + "]"
    return Response(content=body, status_code=status, media_type="application/json")


__all__ = [
    "KEYS",
    "AdminKey",
    "AnyKey",
    "Memory",
    "NsPath",
    "ReadKey",
    "WriteKey",
    "answer",
    "memory_of",
    "request_key",
]
