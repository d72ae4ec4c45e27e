"""What makes two messages the same message, and how a reused external id is refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from graphmem.core.messages import conflict_reason, content_hash, episode_text, refuse_conflicts
from graphmem.errors import MessageConflictError
from graphmem.models import Message


def test_the_same_message_hashes_the_same_and_an_occurrence_tells_repeats_apart() -> None:
    said = Message(content="yes", role="user", occurred_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert content_hash(said, "s1") == content_hash(said.model_copy(), "s1")
    assert content_hash(said, "s1") != content_hash(said, "s2")
    assert content_hash(said, "s1") != content_hash(said, "s1", occurrence=1)


def test_a_conflict_names_its_session_or_says_there_is_none() -> None:
    assert "(session 's1')" in conflict_reason("m1", "s1", "message 0")
    reason = conflict_reason("m1", None, "episode e1")
    assert "(no session)" in reason and "None" not in reason and "episode e1's" in reason


def _conflict(index: int) -> MessageConflictError:
    return MessageConflictError(f"message {index}: conflict", index=index)


@pytest.mark.parametrize(
    ("indexes", "suffix"),
    [
        ([2], ""),
        ([2, 6], " (and 1 more: message 6)"),
        ([2, 6, 9], " (and 2 more: messages 6, 9)"),
    ],
)
def test_a_conflict_names_the_others_in_good_grammar(indexes: list[int], suffix: str) -> None:
    with pytest.raises(MessageConflictError) as refused:
        refuse_conflicts([_conflict(i) for i in reversed(indexes)])
    assert str(refused.value) == f"message 2: conflict{suffix}"


def test_an_episode_is_embedded_with_its_speaker_when_it_names_one() -> None:
    assert episode_text("My dog is Biscuit.", "Melanie") == "Melanie: My dog is Biscuit."
    assert episode_text("My dog is Biscuit.", None) == "My dog is Biscuit."
    assert episode_text("My dog is Biscuit.", "") == "My dog is Biscuit."


@pytest.mark.parametrize("relative", ["now", "today", "yesterday", "3 days ago", " 2 hours ago"])
def test_a_message_time_is_a_fixed_moment(relative: str) -> None:
    """Re-sent messages are recognised by their time among others: one counted from the clock
    would differ each time, so it is refused; a date or ISO time is taken."""
    with pytest.raises(ValidationError, match="counted from the clock"):
        Message.model_validate({"content": "yes", "occurred_at": relative})
    day = Message.model_validate({"content": "yes", "occurred_at": "2026-01-02"}).occurred_at
    assert day == datetime(2026, 1, 2, tzinfo=UTC)
    stamped = Message.model_validate(
        {"content": "yes", "occurred_at": "2026-01-02T10:00:00+01:00"}
    ).occurred_at
    assert stamped == datetime(2026, 1, 2, 9, tzinfo=UTC)
