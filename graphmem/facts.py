"""Rows for the ``fact_create_batch`` query: one new, active :Fact per text."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any

from graphmem.embeddings import Vectors


def text_hash(text: str) -> str:
    """The hash stored as ``text_hash``: SHA-256 of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_fact_rows(
    ns: str,
    texts: Sequence[str],
    vectors: Vectors,
    *,
    source: str | None = None,
    tags: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Parameters for ``fact_create_batch``: fresh ids, hashes and the vectors as lists."""
    if len(texts) != len(vectors):
        raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
    return [
        {
            "id": str(uuid.uuid4()),
            "ns": ns,
            "text": text,
            "text_hash": text_hash(text),
            "embedding": vector.tolist(),
            "source": source,
            "tags": list(tags),
            "valid_from": None,
            "valid_to": None,
        }
        for text, vector in zip(texts, vectors, strict=True)
    ]
