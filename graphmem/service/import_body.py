"""The body of ``POST /v1/namespaces/{ns}/import``, read as it streams in.

The first line, the export's header, is read and checked before anything else of the body
is: a body that is not a graphmem namespace export of this format version is refused after
its first line. The rest goes to a temporary file as it arrives (disk, never memory), each
line checked against :data:`~graphmem.core.namespaces.contract.MAX_RECORD_BYTES` on the way,
and the import then reads the records back one at a time: the service holds one network
chunk and one record at a time, whatever the size of the file.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import IO, Any

from graphmem._json import json_error, load_json
from graphmem.core.namespaces.contract import MAX_RECORD_BYTES
from graphmem.core.namespaces.records import read_header
from graphmem.errors import ExportFormatError, InvalidInputError

#: Body bytes held in memory before the temporary file takes them.
_SPOOL_IN_MEMORY = 1024 * 1024


class _Lines:
    """Counts the bytes of the line the body is in, across chunks, and refuses a line over
    the limit as soon as it passes it."""

    def __init__(self) -> None:
        self.current = 0
        self.number = 1

    def feed(self, chunk: bytes) -> None:
        first = chunk.find(b"\n")
        if first < 0:
            self.current += len(chunk)
        else:
            self._check(self.current + first)
            self.number += chunk.count(b"\n")
            self.current = len(chunk) - chunk.rfind(b"\n") - 1
        self._check(self.current)

    def _check(self, size: int) -> None:
        if size > MAX_RECORD_BYTES:
            raise ExportFormatError(
                f"the line is over {MAX_RECORD_BYTES:,} bytes, far more than any record an "
                "export writes",
                line=self.number,
            )


def _record(line: bytes, number: int) -> Any:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"line {number}: not valid UTF-8 (byte {exc.start + 1} of the line)"
        ) from None
    try:
        return load_json(text.lstrip("\ufeff") if number == 1 else text)
    except (ValueError, RecursionError) as exc:
        raise InvalidInputError(f"line {number}: {json_error(exc)}") from None


@asynccontextmanager
async def streamed_records(chunks: AsyncIterator[bytes]) -> AsyncIterator[Iterator[Any]]:
    """The records of an import body: the header checked as soon as its line is in, the
    rest spooled to a temporary file (removed on exit), then read back one by one."""
    counter = _Lines()
    head = bytearray()
    header: Any = None
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
        async for chunk in chunks:
            if header is None:
                counter.feed(chunk)
                head += chunk
                end = head.find(b"\n")
                if end < 0:
                    continue
                header = _record(bytes(head[:end]), 1)
                read_header(header)
                chunk, head = bytes(head[end + 1 :]), bytearray()
                counter = _Lines()
                counter.number = 2
            counter.feed(chunk)
            spool.write(chunk)
        if header is None and head.strip():
            header = _record(bytes(head), 1)
            read_header(header)
        spool.seek(0)
        yield _records(header, spool)


def _records(header: Any, spool: IO[bytes]) -> Iterator[Any]:
    if header is None:
        return
    yield header
    for number, line in enumerate(spool, start=2):
        if line.strip():
            yield _record(line.rstrip(b"\r\n"), number)
