"""The ``Graphmem-Bookmark`` header in the REST API's OpenAPI schema: the request header of
every ``/v1`` route, and the answer header of the writes
(:class:`~graphmem.edge.bookmarks.Causality` reads, checks and writes it)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header

from graphmem.models.bookmarks import HEADER


async def _declared(
    bookmark: Annotated[
        str | None,
        Header(
            alias=HEADER,
            description="The bookmark of a write (its answer's Graphmem-Bookmark header): "
            "this request's reads and writes wait until the database has that write, on any "
            "serve process of a cluster deployment.",
        ),
    ] = None,
) -> None:
    """Declares the header in the OpenAPI schema; :class:`Causality` reads and checks it."""


#: The dependency of every ``/v1`` route (declares the request header).
FOLLOWS = Depends(_declared)

#: The answer header of a write, as the OpenAPI schema declares it.
ANSWER_HEADER = {
    HEADER: {
        "description": "The database bookmark after this write committed: send it back as "
        "the Graphmem-Bookmark request header to read this write on any serve process.",
        "schema": {"type": "string"},
    }
}


__all__ = ["ANSWER_HEADER", "FOLLOWS"]
