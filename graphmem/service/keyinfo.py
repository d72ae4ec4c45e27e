"""``GET /v1/key``: the request's own API key as the server knows it (name, role, the
namespaces and prefix it opens, expiry; never its secret), so that a client can tell which
namespaces it may use: the remote clients and the CLI make a key's only namespace their
default, as MCP does."""

from __future__ import annotations

from fastapi import APIRouter

from graphmem.models.keys import ApiKey
from graphmem.models.wire import ERROR_RESPONSES
from graphmem.service.deps import AnyKey, answer

#: The path of the request's own key.
KEY_PATH = "/v1/key"

router = APIRouter(responses={401: ERROR_RESPONSES[401]})


@router.get(KEY_PATH, response_model=ApiKey, tags=["keys"], name="key")
async def key(key: AnyKey) -> object:
    """The API key this request carries: its name (the actor of its changes), role, the
    namespaces and prefix it opens and its expiry. Any valid key may ask; the secret is never
    part of the answer."""
    return answer(key)


__all__ = ["KEY_PATH", "router"]
