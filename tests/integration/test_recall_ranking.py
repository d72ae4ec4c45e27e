"""Recall's ranking over verbatim messages against the real Neo4j: knowledge updates, the
next message's credit, and the quality gate on the query."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from graphmem import InvalidInputError
from graphmem.core.recall.ranking import RecallConfig
from graphmem.models import Hit, Message
from tests.integration.conftest import Client

#: Runs on Neo4j 5.26 too (search: without in-index filtering, recall searches the whole index).
pytestmark = pytest.mark.both_versions

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

SMALL_TALK = [
    "Can you suggest a recipe with chickpeas and spinach?",
    "How do noise-cancelling headphones work?",
    "What's a good way to stretch after running?",
]


def _ids(memory: Client, rows: list[tuple[str, str, str, int]]) -> None:
    """Ingest (external id, role, text, day) rows, one session per day."""
    messages = [
        Message(
            content=text,
            role=role,
            speaker="User" if role == "user" else "Assistant",
            occurred_at=START + timedelta(days=day, minutes=n),
            external_id=mid,
            session_id=f"day-{day}",
        )
        for n, (mid, role, text, day) in enumerate(rows)
    ]
    memory.ingest(messages)


def _ranked(memory: Client, question: str, **config: object) -> list[str]:
    """The external ids recall returns for ``question``, best first."""
    hits = memory.recall(question, kinds=["episode"], config=config or None).hits
    return [h.provenance.external_ids[0] for h in hits]


def _by_id(hits: Sequence[Hit]) -> dict[str, Hit]:
    """``hits`` by the external id of the message each one is."""
    return {h.provenance.external_ids[0]: h for h in hits}


UPDATE = [
    ("old", "user", "I live in Porto, in a small flat near the river.", 0),
    *((f"t{i}", "user", text, 1) for i, text in enumerate(SMALL_TALK)),
    ("new", "user", "Big news: we moved, I live in Lisbon now.", 5),
]


def test_the_newer_message_of_an_update_ranks_first(memory: Client) -> None:
    _ids(memory, UPDATE)
    default = memory.raw.recall_config
    without = _ranked(memory, "Which city do I live in?", update_order=False)
    assert without.index("old") < without.index("new")  # the original reads closer
    hits = memory.recall("Which city do I live in?", kinds=["episode"]).hits
    ranked = [h.provenance.external_ids[0] for h in hits]
    assert ranked.index("new") < ranked.index("old")
    moved = hits[ranked.index("new")]
    old_hit = hits[ranked.index("old")]
    assert moved.scores.placed_above == old_hit.id
    # It takes the score of the hit it is placed above (scores fall down the list).
    assert moved.score == old_hit.score and moved.scores.final < old_hit.scores.final
    assert default.update_order is True


def test_a_question_about_the_past_ranks_the_original_first(memory: Client) -> None:
    _ids(memory, [*UPDATE[:-1], ("new", "user", "Quick update: I live in Lisbon now.", 5)])
    past = memory.recall("Where did I live before I moved?", kinds=["episode"]).hits
    ranked = [h.provenance.external_ids[0] for h in past]
    assert ranked.index("old") < ranked.index("new")


def test_a_reply_is_not_an_update_of_the_message_it_answers(memory: Client) -> None:
    _ids(
        memory,
        [
            ("q", "user", "I live in Porto, in a small flat near the river.", 0),
            ("a", "assistant", "Noted: you live in Porto now, near the river.", 0),
            *((f"t{i}", "user", text, 1) for i, text in enumerate(SMALL_TALK)),
        ],
    )
    hits = memory.recall("Which city do I live in?", kinds=["episode"]).hits
    assert all(h.scores.placed_above is None for h in hits)


def test_an_episode_gains_from_the_reply_that_follows_it(memory: Client) -> None:
    """The user's question says little; the assistant's reply right after it matches the
    query: the question is credited with a share of the reply's score."""
    _ids(
        memory,
        [
            ("ask", "user", "Which one should I pick for my trip?", 0),
            ("reply", "assistant", "For hiking in the Dolomites, pick the lighter tent.", 0),
            ("other", "user", "Which one is cheaper, honestly?", 2),
            *((f"t{i}", "user", text, 3) for i, text in enumerate(SMALL_TALK)),
        ],
    )
    question = "tent for hiking in the Dolomites"
    # min_score 0: the gate would drop the question, which says nothing of the trip.
    on = _by_id(memory.recall(question, kinds=["episode"], min_score=0).hits)
    off = _by_id(
        memory.recall(question, kinds=["episode"], min_score=0, config={"next_credit": 0.0}).hits
    )
    assert on["ask"].scores.fused == pytest.approx(
        off["ask"].scores.fused + 0.3 * off["reply"].scores.fused
    )
    # "other" is followed by nothing of its session that is a candidate: no credit.
    if "other" in on:
        assert on["other"].scores.fused == pytest.approx(off["other"].scores.fused)
    assert on["reply"].scores.fused == pytest.approx(off["reply"].scores.fused)


def test_scores_are_probabilities_and_the_gate_drops_noise(memory: Client) -> None:
    """A hit's score is a probability that falls down the list; the default min_score drops
    what has nothing to do with the question, a named one every hit under it, and a question
    nothing is about gets nothing. Cosines with all-MiniLM-L6-v2 for the allergy question:
    peanuts 0.64, the sister and the cello 0.13, the door code 0.05."""
    memory.remember_many(
        [
            "The user is allergic to peanuts.",
            "The user's sister Ana lives in Lisbon.",
            "The user plays the cello on Sundays.",
            "The front door code is 4711.",
        ]
    )
    question = "Does the user have any food allergies?"
    answered = memory.recall(question, kinds=["fact"])
    assert answered.hits[0].text == "The user is allergic to peanuts."
    assert "The front door code is 4711." not in answered.texts and answered.gated >= 1
    scores = [h.score for h in answered.hits]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)
    everything = memory.recall(question, kinds=["fact"], min_score=0)
    assert len(everything.hits) == 4 and everything.gated == 0
    # A threshold named for the call is one every hit must reach.
    named = memory.recall(question, kinds=["fact"], min_score=scores[0])
    assert [h.text for h in named.hits] == ["The user is allergic to peanuts."]
    door = memory.recall("front door code", kinds=["fact"])
    assert [h.text for h in door.hits] == ["The front door code is 4711."]
    # Nothing is about the question: nothing is returned, not the least bad noise.
    for unrelated in ("quantum chromodynamics lecture notes", "How tall is Mount Everest?"):
        nothing = memory.recall(unrelated, kinds=["fact"])
        assert nothing.hits == () and nothing.gated == 4
    assert RecallConfig().min_score == 0.005
    with pytest.raises(InvalidInputError, match="min_score must lie in"):
        memory.recall(question, min_score=-0.5)


def test_the_same_question_twice_gives_the_same_order_and_scores(memory: Client) -> None:
    """Recall's own access stamps (it counts each hit as accessed) do not move the next
    call's order or scores, nor does the clock between two calls."""
    memory.ingest(
        [
            Message(content=text, role="user", occurred_at=START + timedelta(hours=i))
            for i, text in enumerate(
                ["I ran the half marathon in 1:52.", "I moved to Stuttgart.", *SMALL_TALK]
            )
        ]
    )
    memory.remember("The user trains for the Berlin marathon.")
    first = memory.recall("How did my half marathon go?")
    second = memory.recall("How did my half marathon go?")
    assert first.hits and [(h.id, h.score) for h in first.hits] == [
        (h.id, h.score) for h in second.hits
    ]


def test_the_next_message_of_its_session_is_found_past_other_sessions(memory: Client) -> None:
    """Another conversation's messages between a question and its reply do not hide the
    reply: the next message is the next one of the same session."""
    rows = [
        Message(
            content=text,
            role=role,
            occurred_at=START + timedelta(minutes=minute),
            external_id=mid,
            session_id=session,
        )
        for mid, role, text, session, minute in [
            ("ask", "user", "Which one should I pick for my trip?", "a", 0),
            *((f"b{i}", "user", SMALL_TALK[i % 3], "b", 1 + i) for i in range(12)),
            ("reply", "assistant", "For hiking in the Dolomites, pick the lighter tent.", "a", 20),
        ]
    ]
    memory.ingest(rows)
    question = "tent for hiking in the Dolomites"
    # min_score 0: the gate would drop the question, which says nothing of the trip.
    on = _by_id(memory.recall(question, kinds=["episode"], min_score=0).hits)
    off = _by_id(
        memory.recall(question, kinds=["episode"], min_score=0, config={"next_credit": 0.0}).hits
    )
    assert on["ask"].scores.fused == pytest.approx(
        off["ask"].scores.fused + 0.3 * off["reply"].scores.fused
    )


def _said(memory: Client, rows: list[tuple[str, str, str, datetime]]) -> None:
    memory.ingest(
        [
            Message(content=text, role=role, occurred_at=at, external_id=mid, session_id=mid)
            for mid, role, text, at in rows
        ]
    )


def test_a_period_the_question_names_raises_what_was_sent_in_it(memory: Client) -> None:
    now = datetime.now(UTC)
    _said(
        memory,
        [
            ("old", "user", "The green tent is the one for the hiking trip.", now - timedelta(20)),
            ("new", "user", "The blue tent is the one for the hiking trip.", now - timedelta(1)),
        ],
    )
    question = "Which tent did I pick for the hiking trip yesterday?"
    off = memory.recall(question, config={"time_weight": 0.0, "user_weight": 0.0}).hits
    assert {h.scores.cue for h in off} == {1.0}
    # By default (0.2) yesterday's message gains a fifth, and both a half as the user's.
    default = _by_id(memory.recall(question).hits)
    assert default["new"].scores.cue == pytest.approx(1.2 * 1.5)
    assert default["old"].scores.cue == pytest.approx(1.5)
    hits = memory.recall(question, config={"time_weight": 2.0, "user_weight": 0.0}).hits
    by_id = _by_id(hits)
    assert hits[0].provenance.external_ids == ("new",)
    assert by_id["new"].scores.cue == pytest.approx(3.0)
    assert by_id["old"].scores.cue == 1.0
    new = by_id["new"].scores
    assert new.final == pytest.approx(new.fused * 3.0 + 0.2 * new.lexical)


def test_a_question_about_the_user_raises_the_users_messages(memory: Client) -> None:
    at = datetime.now(UTC) - timedelta(days=2)
    _said(
        memory,
        [
            ("mine", "user", "My sister Ana lives in Porto.", at),
            ("reply", "assistant", "Your sister Ana lives in Porto, noted.", at),
        ],
    )
    hits = memory.recall("Where does my sister live?", config={"user_weight": 1.0}).hits
    by_id = _by_id(hits)
    assert by_id["mine"].scores.cue == pytest.approx(2.0)
    assert by_id["reply"].scores.cue == 1.0  # still there, not raised
    assert hits[0].provenance.external_ids == ("mine",)
    # In the third person the question raises nobody.
    third = memory.recall("Where does Ana live?", config={"user_weight": 1.0}).hits
    assert {h.scores.cue for h in third} == {1.0}


def test_a_fact_the_fulltext_list_cut_off_scores_as_its_last_match(memory: Client) -> None:
    """With a pool of one, the fulltext list keeps the fact that matches the name and "go";
    the fact that answers matches only the name, and is scored by the list's last score
    rather than as if it had not matched."""
    for text in (
        "Leila went to the Phoebe Bridgers gig at the arena.",
        "Leila will go to Lisbon and go on to Porto.",
        "Leila can go to the office on Mondays.",
    ):
        memory.remember(text)
    config = {"pool_min": 1, "pool_factor": 1, "user_weight": 0.0}
    hits = memory.recall("Which concert did Leila go to?", k=1, kinds=["fact"], config=config).hits
    # Without the rule the Lisbon fact would win: 0.7 · 0.52 / 0.70 + 0.3 against 0.7.
    assert [h.text for h in hits] == ["Leila went to the Phoebe Bridgers gig at the arena."]
    (hit,) = hits
    assert hit.scores.fulltext is None and hit.scores.vector_rank == 1
    # 0.7 for the best cosine, 0.3 for the list's last (and only, so best) fulltext score.
    assert hit.scores.fused == pytest.approx(1.0)


CHAT = [
    ("user", "Hi! I signed up for a race in October and I'm excited."),
    ("assistant", "That's great! How many kilometres are you running each week?"),
    ("user", "About 35 km a week, mostly slow long runs on Sundays."),
    ("assistant", "Nice base. Remember to include some tempo runs."),
    ("user", "My sister Ana is coming to visit from Lisbon next month."),
    ("assistant", "Lovely, do you have plans for her visit?"),
    ("user", "We'll probably go hiking in the Black Forest."),
    ("user", "I ran my first half marathon on Sunday: 1:52, and my knees held up fine!"),
    ("assistant", "Congratulations on finishing in 1:52!"),
    ("user", "I moved to Stuttgart last week, my new flat is next to a running track."),
    ("assistant", "How do you like Stuttgart so far?"),
    ("user", "I started a new job at Bosch as a data engineer."),
    ("user", "I switched from oat milk to almond milk in my coffee."),
]


def test_in_a_chat_the_message_that_answers_comes_first(memory: Client) -> None:
    """A newer message about something else is never ranked above the one that answers: a
    question about an event ("How did ... go?") is not reordered as an update, and one about
    how things stand puts the change first."""
    memory.ingest(
        [
            Message(
                content=text,
                role=role,
                occurred_at=START + timedelta(days=3 * i),
                session_id=f"s{i // 4}",
                external_id=f"m{i}",
            )
            for i, (role, text) in enumerate(CHAT)
        ]
    )
    first = {
        "How did my half marathon go?": "m7",
        "What milk do I take in my coffee now?": "m12",
        "Who is coming to visit me?": "m4",
        "Where do I work?": "m11",
    }
    for question, expected in first.items():
        hits = memory.recall(question).hits
        assert hits[0].provenance.external_ids == (expected,), question
        assert hits[0].scores.placed_above is None or expected == "m12"
