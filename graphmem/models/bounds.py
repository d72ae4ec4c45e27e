"""What one call over the network may carry: at most :data:`MAX_CALL_ITEMS` facts or messages
and :data:`MAX_CALL_BYTES` bytes of their text. The REST service, the MCP tools and the remote
clients check a call with :func:`check_call_size` before anything is done with it (the remote
clients before sending it), so each refuses the same call with the same error."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from graphmem.errors import RequestTooLargeError
from graphmem.models.fields import MAX_CALL_BYTES, MAX_CALL_ITEMS


def check_call_size(items: int, text_bytes: int) -> None:
    """Refuse a call of more than :data:`MAX_CALL_ITEMS` items or :data:`MAX_CALL_BYTES`
    bytes of text with :class:`~graphmem.errors.RequestTooLargeError` naming the limit."""
    if items > MAX_CALL_ITEMS:
        raise RequestTooLargeError(
            f"{items:,} items in one call; at most {MAX_CALL_ITEMS:,}: send them in several "
            "calls (nothing was stored)",
            limit=MAX_CALL_ITEMS,
        )
    if text_bytes > MAX_CALL_BYTES:
        raise RequestTooLargeError(
            f"{text_bytes:,} bytes of text in one call; at most {MAX_CALL_BYTES:,}: send them "
            "in several calls (nothing was stored)",
            limit=MAX_CALL_BYTES,
        )


def text_bytes(texts: Iterable[object]) -> int:
    """The UTF-8 bytes of the strings among ``texts`` (anything else counts nothing: it is
    refused on its own)."""
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts if isinstance(t, str))


def field_of(item: Any, name: str) -> object:
    """An item's ``name``: a model's attribute, a mapping's key, or a plain string itself."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def check_items(items: Iterable[Any], text_field: str) -> None:
    """:func:`check_call_size` for a call of these facts (``text``) or messages
    (``content``), each a model, a mapping or a plain string."""
    given = list(items)
    check_call_size(len(given), text_bytes(field_of(item, text_field) for item in given))


__all__ = ["MAX_CALL_BYTES", "MAX_CALL_ITEMS", "check_call_size", "check_items", "text_bytes"]
