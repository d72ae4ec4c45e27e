"""The knowledge-update order among verbatim messages, on hand-made hits."""

from __future__ import annotations

import pytest

from graphmem.core.recall.ranking import Candidate
from graphmem.core.recall.updates import (
    Message,
    announces_change,
    asks_about_the_past,
    order_updates,
    place_updates,
)

OLD = Message("old", "I live in Porto, near the river.", "User", "user", 1_000)
NEW = Message("new", "Big news: we moved, I live in Lisbon now.", "User", "user", 2_000)
SIMILAR = {("old", "new"): 0.62}


def test_the_newer_message_of_a_pair_is_placed_above_the_older() -> None:
    assert order_updates("Which city do I live in?", [OLD, NEW], SIMILAR, 0.4) == {"new": "old"}
    # Already in that order: nothing moves.
    assert order_updates("Which city do I live in?", [NEW, OLD], SIMILAR, 0.4) == {}


def test_a_question_about_the_past_puts_the_older_first() -> None:
    assert asks_about_the_past("Where did I live before I moved?")
    assert not asks_about_the_past("Where do I live?")
    question = "Where did I live before I moved?"
    assert order_updates(question, [NEW, OLD], SIMILAR, 0.4) == {"old": "new"}
    assert order_updates(question, [OLD, NEW], SIMILAR, 0.4) == {}


@pytest.mark.parametrize(
    ("case", "newer", "similarity"),
    [
        ("not similar enough", NEW, 0.39),
        (
            "another speaker",
            Message("new", NEW.text, "Assistant", "assistant", 2_000),
            0.62,
        ),
        ("no change announced", Message("new", "I live in Lisbon.", "User", "user", 2_000), 0.62),
        ("sent at the same time", Message("new", NEW.text, "User", "user", 1_000), 0.62),
        ("no time", Message("new", NEW.text, "User", "user", None), 0.62),
    ],
)
def test_what_is_not_an_update_pair(case: str, newer: Message, similarity: float) -> None:
    assert order_updates("Which city?", [OLD, newer], {("old", "new"): similarity}, 0.4) == {}, case


def test_a_long_message_needs_the_change_in_a_sentence_about_the_question() -> None:
    words = {"sprint", "end"}
    filler = "I am working on the dashboard and the tests are mostly green. " * 4
    about = filler + "The first sprint now ends on March 31."
    elsewhere = filler + "I bought a new keyboard. The first sprint ends soon."
    assert len(about) > 160 and announces_change(about, words)
    assert not announces_change(elsewhere, words)
    assert announces_change("Gym is on Saturday now.", {"day", "gym"})


def test_place_updates_raises_the_moved_hit_just_above_and_names_it() -> None:
    sent = {"old": OLD.at, "new": NEW.at, "x": 1_500}

    def cand(item_id: str, score: float) -> Candidate:
        c = Candidate("episode", item_id, at=sent[item_id])
        c.score = score
        return c

    def detail(message: Message, other: str) -> dict[str, object]:
        return {
            "episode": {"content": message.text, "speaker": message.speaker, "role": message.role},
            "similar": [{"id": other, "similarity": (1 + 0.62) / 2}],  # Neo4j's scale
        }

    fact = Candidate("fact", "f")
    fact.score = 0.95
    candidates = [fact, cand("old", 0.9), cand("x", 0.85), cand("new", 0.5)]
    episodes = {"old": detail(OLD, "new"), "new": detail(NEW, "old")}
    place_updates("Which city do I live in?", candidates, episodes, 0.4)
    assert [c.id for c in candidates] == ["f", "new", "old", "x"]
    assert candidates[1].placed_above == "old" and candidates[1].score == 0.9
    assert candidates[1].score < 0.95
    # A cosine of 0.3 is (1 + 0.3) / 2 = 0.65 on Neo4j's scale: below the threshold of 0.4.
    for item in episodes.values():
        item["similar"] = [{"id": "x", "similarity": 0.65}]
    episodes["old"]["similar"] = [{"id": "new", "similarity": 0.65}]
    again = [fact, cand("old", 0.9), cand("x", 0.85), cand("new", 0.5)]
    place_updates("Which city do I live in?", again, episodes, 0.4)
    assert [c.id for c in again] == ["f", "old", "x", "new"]
    # A question about an event moves nothing: a newer message does not answer it better.
    events = [fact, cand("old", 0.9), cand("x", 0.85), cand("new", 0.5)]
    episodes = {"old": detail(OLD, "new"), "new": detail(NEW, "old")}
    place_updates("When did I move to the city I live in?", events, episodes, 0.4)
    assert [c.id for c in events] == ["f", "old", "x", "new"]
