"""Where erased words still lie on the local server's disk.

``forget`` takes words out of the live graph at once; Neo4j's files follow later. The store
marks the records that held them unused but keeps their bytes (a checkpoint writes them as
they are) until a later write is given those records: Neo4j reuses freed records before it
grows a file, so the words go once later writes have stored about as much as was free there.
The transaction log keeps every transaction's changes until its file is pruned. The local
server keeps only what recovery needs (``db.tx_log.rotation.retention_policy=keep_none``): a
log file is pruned at the first checkpoint after it rotates. So erased words leave the disk
once later writes have reused their store records and ``GRAPHMEM_LOCAL_NEO4J_TX_LOG_SIZE`` more
has been written, and a checkpoint has run (every ``GRAPHMEM_LOCAL_NEO4J_CHECKPOINT_SECONDS``):
on a quiet server, not at all.

:func:`find_words` reads every file under the server's data directory for the words, as UTF-8
and (where it differs) Latin-1 bytes. A text of up to about 30 characters may be stored packed
(Neo4j's short-string encodings), where no byte search can see it: search for longer texts.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from graphmem.errors import InvalidInputError

#: Shortest text worth searching for: shorter ones match by chance, or are stored packed.
MIN_WORDS = 8


@dataclass(frozen=True)
class FileFinding:
    """A file under the data directory that holds the words ``count`` times."""

    path: str
    kind: str
    count: int


def find_words(data_dir: Path, texts: Iterable[str]) -> list[FileFinding]:
    """Every file under ``data_dir`` that holds one of ``texts`` (UTF-8 or Latin-1 bytes),
    with what kind of file it is and how often."""
    patterns = sorted(_patterns(texts), key=len, reverse=True)
    found: list[FileFinding] = []
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        count = _count(path, patterns)
        if count:
            relative = path.relative_to(data_dir).as_posix()
            found.append(FileFinding(relative, _kind(relative), count))
    return found


def _patterns(texts: Iterable[str]) -> Iterator[bytes]:
    seen: set[bytes] = set()
    for text in texts:
        words = text.strip()
        if len(words) < MIN_WORDS:
            raise InvalidInputError(
                f"--text must hold at least {MIN_WORDS} characters to be searched for on disk"
            )
        for encoding in ("utf-8", "latin-1"):
            try:
                pattern = words.encode(encoding)
            except UnicodeEncodeError:
                continue
            if pattern not in seen:
                seen.add(pattern)
                yield pattern


def _count(path: Path, patterns: list[bytes]) -> int:
    try:
        with path.open("rb") as handle:
            if path.stat().st_size == 0:
                return 0
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                total = 0
                for pattern in patterns:
                    start = data.find(pattern)
                    while start != -1:
                        total += 1
                        start = data.find(pattern, start + len(pattern))
                return total
    except (OSError, ValueError):  # a file removed or truncated while read: nothing there now
        return 0


def _kind(relative: str) -> str:
    if relative.startswith("transactions/"):
        return "transaction log"
    if "/schema/index/" in f"/{relative}":
        return "index"
    if relative.startswith("databases/"):
        return "store"
    return "other"


__all__ = ["MIN_WORDS", "FileFinding", "find_words"]
