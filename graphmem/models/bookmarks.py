"""The ``Graphmem-Bookmark`` header: the database bookmarks of a write, as one opaque token.

Every write answered by ``graphmem serve`` carries the bookmarks Neo4j gave its last
transaction; a request that sends them back (REST header, or the same header on ``/mcp``)
has its transactions wait until the database member that serves them has caught up with
that write, on any process of a cluster deployment. The token is the bookmarks' text values,
as a JSON list, in unpadded base64url: a few dozen header-safe characters. Nothing here
reads it beyond its shape; Neo4j checks the values themselves.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable

from graphmem.errors import InvalidInputError

#: The header of a write's bookmark, in answers, and in requests that must see that write.
HEADER = "Graphmem-Bookmark"
#: The longest token accepted, and the most bookmark values in one.
MAX_CHARS = 4096
MAX_VALUES = 16
_TOKEN = re.compile(r"[A-Za-z0-9_-]+")
_VALUE = re.compile(r"[\x21-\x7e]{1,512}")


def encode(values: Iterable[str]) -> str:
    """The token of these bookmark values (sorted, so that equal sets give equal tokens)."""
    data = json.dumps(sorted(set(values)), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def decode(token: str) -> tuple[str, ...]:
    """The bookmark values of a token; :class:`InvalidInputError` for anything that is not a
    token :func:`encode` could have written."""
    token = token.strip()
    if not token or len(token) > MAX_CHARS or not _TOKEN.fullmatch(token):
        raise _invalid("it is not unpadded base64url text of at most 4,096 characters")
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        raise _invalid("it does not decode to a JSON list") from None
    if (
        not isinstance(data, list)
        or not 1 <= len(data) <= MAX_VALUES
        or not all(isinstance(v, str) and _VALUE.fullmatch(v) for v in data)
    ):
        raise _invalid(f"it must hold a list of 1 to {MAX_VALUES} bookmark values")
    return tuple(data)


def _invalid(why: str) -> InvalidInputError:
    return InvalidInputError(
        f"the {HEADER} header is not a bookmark graphmem gave ({why}): send back the value "
        "of a write's answer unchanged, or leave the header out; nothing was done"
    )


__all__ = ["HEADER", "MAX_CHARS", "MAX_VALUES", "decode", "encode"]
