"""Erasure's keyed hashes: what a tombstone keeps of the text it replaced.

The graph holds one random erasure key (on the ``:GraphmemSchema`` node). Each namespace
hashes with a key of its own derived from it, so a tombstone's hash cannot be compared with
another namespace's hashes to test a guess there. Texts are hashed in their
:func:`~graphmem._text.normalised` form: the same words come back as the same hash whatever
their case, spacing or punctuation.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterator

from graphmem._text import normalised
from graphmem.core.plans import Run, Work
from graphmem.store.cypher import query

#: Where a stored text is cut into sentences for the verification scan.
_SENTENCE = re.compile(r"(?<=[.!?;:\n])\s+|\n+")


def namespace_key(erasure_key: str, ns: str) -> bytes:
    """The namespace's own hashing key."""
    return hmac.new(erasure_key.encode(), f"graphmem-erasure\x00{ns}".encode(), "sha256").digest()


def comparable(text: str) -> str:
    """The form a text is hashed in: normalised words, or (for a text with no words, such as
    punctuation only) its case-folded, stripped self."""
    words = normalised(text)
    return words or unicodedata.normalize("NFKC", text).casefold().strip()


def keyed_hash(key: bytes, text: str) -> str:
    """The keyed hash of ``text`` (a namespace key from :func:`namespace_key`)."""
    return hmac.new(key, comparable(text).encode("utf-8"), hashlib.sha256).hexdigest()


def pieces(text: str) -> Iterator[str]:
    """``text`` itself and, for a longer text, each of its sentences and lines: the parts the
    verification scan hashes, so that an erased sentence quoted in a longer text is found."""
    yield text
    parts = [p for p in _SENTENCE.split(text) if p.strip()]
    if len(parts) > 1:
        yield from parts


def stamp(rows: list[dict[str, object]], erasure_key: str | None, ns: str, field: str) -> None:
    """Sets each row's ``erasure_hash``: the keyed hash of its ``field`` (None without a key:
    a graph without one has no tombstones)."""
    key = namespace_key(erasure_key, ns) if erasure_key else None
    for row in rows:
        row["erasure_hash"] = keyed_hash(key, str(row[field])) if key is not None else None


def forgotten_hashes(ns: str, hashes: list[str | None]) -> Work[dict[str, list[str]]]:
    """Which of ``hashes`` a tombstone of ``ns`` holds, with the erased ids that held it."""
    wanted = sorted({h for h in hashes if h is not None})
    if not wanted:
        return {}
    rows = yield Run(query("forgotten_texts"), {"ns": ns, "hashes": wanted})
    return {r["text_hash"]: r["erased_ids"] for r in rows}


#: Hex digits of an erasure hash that name its lock bucket: 256 buckets per namespace.
_BUCKET_DIGITS = 2
#: Every bucket, in the order locks are taken; "none" is the bucket of texts written without an
#: erasure key (a graph whose schema predates the key).
ALL_BUCKETS = (*(f"{i:02x}" for i in range(16**_BUCKET_DIGITS)), "none")


def lock_texts(ns: str, hashes: list[str | None] | None) -> Work[None]:
    """Takes the text locks of ``hashes`` (erasure hashes; None: all of them, as an erasure
    does) until the transaction ends (``text_locks``), in one order, so that a remember and a
    forget of the same words never interleave: the forget sees the stored text, or the
    remember sees the tombstone."""
    if hashes is None:
        buckets = list(ALL_BUCKETS)
    else:
        buckets = sorted({"none" if h is None else h[:_BUCKET_DIGITS] for h in hashes})
    if buckets:
        yield Run(query("text_locks"), {"ns": ns, "buckets": buckets})
