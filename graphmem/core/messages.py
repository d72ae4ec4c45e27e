"""What makes two messages the same message, and the refusal of an edit under a reused id."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from graphmem._text import and_more
from graphmem.errors import MessageConflictError
from graphmem.models import Message


def episode_text(content: str, speaker: str | None) -> str:
    """What an episode is embedded and gated by: ``"speaker: content"`` for a message that
    names its speaker, so that a question naming a person ("What is Melanie's dog called?")
    finds what that person said, which seldom names them; the content alone otherwise."""
    return f"{speaker}: {content}" if speaker else content


def content_hash(message: Message, session_id: str | None, occurrence: int = 0) -> str:
    """What makes two messages the same message: session, role, speaker, time and content, and
    for the second and later of identical messages in one ``ingest`` call, which one it is
    (``occurrence`` 1, 2, ...): a transcript where "yes" answers two questions holds two
    messages, and sending it again matches each to its own."""
    return message_hash(
        session_id, message.role, message.speaker, message.occurred_at, message.content, occurrence
    )


def message_hash(
    session_id: str | None,
    role: str,
    speaker: str | None,
    occurred_at: datetime | None,
    content: str,
    occurrence: int = 0,
) -> str:
    key: list[Any] = [
        session_id,
        role,
        speaker,
        occurred_at.isoformat() if occurred_at else None,
        content,
    ]
    if occurrence:
        key.append(occurrence)
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()


def conflict_reason(external_id: str, session_id: str | None, other: str) -> str:
    """Why a message whose external id is already ``other``'s is refused."""
    where = "no session" if session_id is None else f"session {session_id!r}"
    return (
        f"external id {external_id!r} ({where}) is already {other}'s, with a "
        "different content, role, speaker or time: an external id names one message, and "
        "stored messages are never changed; send an edit under an external id of its own"
    )


def edit_conflict(
    row: Mapping[str, Any],
    own_hash: str,
    other_hash: str,
    *,
    other_index: int | None = None,
    episode_id: str | None = None,
) -> MessageConflictError | None:
    """The refusal of message ``row`` when the earlier input ``other_index`` or the stored
    episode ``episode_id``, which has its session and external id, differs (compared by their
    hashes without occurrence numbers); None when they are the same message."""
    if other_hash == own_hash:
        return None
    other = f"message {other_index}" if episode_id is None else f"episode {episode_id}"
    return MessageConflictError(
        f"message {row['i']}: " + conflict_reason(row["external_id"], row["session_id"], other),
        ids=() if episode_id is None else (episode_id,),
        index=row["i"],
        other_index=other_index,
        external_id=row["external_id"],
        session_id=row["session_id"],
    )


def refuse_conflicts(conflicts: Sequence[MessageConflictError]) -> None:
    """Raise the first of ``conflicts`` (in input order), carrying them all, if there are any."""
    if not conflicts:
        return
    ordered = sorted(conflicts, key=lambda c: c.index if c.index is not None else -1)
    first = ordered[0]
    first.args = (f"{first}{and_more([str(c.index) for c in ordered[1:]], 'message')}",)
    first.conflicts = tuple(ordered)
    raise first
