"""Recall finds a message by the name of who said it, in its namespace only, through the
fulltext index on episodes' content and speaker (migration 13)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem.models import Message
from tests.integration.conftest import Client

#: Runs on Neo4j 5.26 too (search: without in-index filtering, recall searches the whole index).
pytestmark = pytest.mark.both_versions

START = datetime(2025, 5, 7, 18, 0, tzinfo=UTC)
FULLTEXT_ONLY = {"retrievers": ["fulltext"]}


def _message(external_id: str, speaker: str, content: str, minute: int) -> Message:
    return Message(
        content=content,
        role="user",
        speaker=speaker,
        occurred_at=START + timedelta(minutes=minute),
        external_id=external_id,
        session_id="evening",
    )


def _found(memory: Client, query: str, **options: object) -> list[str]:
    hits = memory.recall(query, kinds=["episode"], config=FULLTEXT_ONLY, **options).hits
    return [h.provenance.external_ids[0] for h in hits]


def test_a_message_is_found_by_its_speaker_s_name_in_its_namespace(memory: Client, ns: str) -> None:
    memory.ingest(
        [
            _message("painted", "Melanie", "I painted a sunrise over the lake last weekend.", 0),
            _message("train", "Caroline", "The train to Leeds was late again this morning.", 1),
        ]
    )
    other = f"{ns}-other"
    memory.ingest([_message("garden", "Melanie", "Our garden badly needs some rain.", 2)], ns=other)

    assert _found(memory, "Melanie") == ["painted"]
    (hit,) = memory.recall("Melanie", kinds=["episode"], config=FULLTEXT_ONLY).hits
    assert hit.scores.fulltext is not None and hit.scores.fulltext > 0
    assert hit.scores.fulltext_rank == 1
    # The other namespace's message of that speaker is found there, and only there.
    assert _found(memory, "Melanie", ns=other) == ["garden"]
    # Words of the content still find it; a query of stop words alone finds nothing.
    assert _found(memory, "Leeds train") == ["train"]
    assert _found(memory, "the of and") == []
