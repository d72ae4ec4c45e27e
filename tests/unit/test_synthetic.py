"""The synthetic data generator: deterministic, sized as asked, varied, with sound updates."""

from __future__ import annotations

import itertools
import re
from collections import Counter

import pytest

from graphmem.models import FactInput, Message
from graphmem_bench.bench.synthetic import (
    ATTRIBUTES,
    NAMES,
    TOPICS,
    SyntheticFact,
    generate_facts,
    generate_messages,
    generate_queries,
    heads,
)


@pytest.fixture(scope="module")
def ten_thousand() -> list[SyntheticFact]:
    return generate_facts(10_000, seed=7)


def test_same_seed_same_facts_other_seed_other_facts() -> None:
    assert generate_facts(300, seed=1) == generate_facts(300, seed=1)
    assert [f.text for f in generate_facts(300, seed=1)] != [
        f.text for f in generate_facts(300, seed=2)
    ]
    assert generate_facts(1_000, seed=4)[:200] == generate_facts(200, seed=4)


@pytest.mark.parametrize("n", [0, 1, 17, 1_000])
def test_sizes_are_exact(n: int) -> None:
    facts = generate_facts(n, seed=3)
    assert len(facts) == n
    assert [f.index for f in facts] == list(range(n))
    assert len(generate_messages(n, seed=3)) == n
    assert len(generate_queries(generate_facts(max(n, 1), seed=3), n, seed=3)) == n


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        generate_facts(-1)
    with pytest.raises(ValueError, match="update_share"):
        generate_facts(10, update_share=1.0)
    with pytest.raises(ValueError, match="negative"):
        generate_messages(-5)
    assert generate_queries([], 5) == []


def test_ten_thousand_facts_are_varied(ten_thousand: list[SyntheticFact]) -> None:
    texts = [f.text for f in ten_thousand]
    assert len(set(texts)) >= 0.9 * len(texts)
    topics = Counter(f.topic for f in ten_thousand)
    assert set(topics) == set(TOPICS) and len(TOPICS) >= 10
    assert min(topics.values()) >= 0.02 * len(texts)  # no topic starves
    assert len({f.attribute for f in ten_thousand}) >= 0.9 * len(ATTRIBUTES)
    assert len({f.subject for f in ten_thousand}) >= 1_000
    assert len({f.subject.split("'")[0] for f in ten_thousand}) == len(NAMES)


def test_texts_are_clean_sentences_that_graphmem_accepts(
    ten_thousand: list[SyntheticFact],
) -> None:
    for fact in ten_thousand[:2_000]:
        assert fact.text[0].isupper(), fact.text
        assert fact.text.endswith("."), fact.text
        assert not re.search(r"[{}]|\s\s|\s[.,;]", fact.text), fact.text
        assert not re.search(r"\ba [aeiou]", fact.text.replace("a UX", "")), fact.text
        FactInput(text=fact.text)


def test_updates_replace_the_newest_earlier_fact_about_the_same_thing(
    ten_thousand: list[SyntheticFact],
) -> None:
    updates = [f for f in ten_thousand if f.is_update]
    assert 0.07 <= len(updates) / len(ten_thousand) <= 0.13
    replaced = Counter(f.updates for f in updates)
    assert max(replaced.values()) == 1  # a fact is replaced at most once
    for fact in updates:
        assert fact.updates is not None and fact.updates < fact.index
        old = ten_thousand[fact.updates]
        assert (old.subject, old.attribute) == (fact.subject, fact.attribute)
        assert old.text != fact.text
    chained = [f for f in updates if ten_thousand[f.updates or 0].is_update]
    assert chained, "some updates replace an earlier update"


def test_no_updates_when_the_share_is_zero() -> None:
    assert not any(f.is_update for f in generate_facts(2_000, seed=5, update_share=0.0))


def test_heads_follow_update_chains() -> None:
    facts = generate_facts(3_000, seed=11)
    newest = heads(facts)
    replaced = {f.updates for f in facts if f.updates is not None}
    for fact, head in zip(facts, newest, strict=True):
        assert head >= fact.index
        assert head not in replaced
        assert facts[head].subject == fact.subject
    an_update = next(f for f in facts if f.updates is not None)
    assert newest[an_update.updates or 0] == newest[an_update.index]


def test_queries_ask_about_believed_facts() -> None:
    facts = generate_facts(2_000, seed=2)
    queries = generate_queries(facts, 300, seed=9)
    assert queries == generate_queries(facts, 300, seed=9)
    replaced = {f.updates for f in facts if f.updates is not None}
    for query in queries:
        assert query.text.endswith("?")
        assert query.fact_index not in replaced
        assert facts[query.fact_index].subject in query.text
    assert len({q.text for q in queries}) >= 0.9 * len(queries)


def test_messages_form_sessions_of_alternating_turns() -> None:
    messages = generate_messages(400, seed=6)
    assert messages == generate_messages(400, seed=6)
    assert len({m.external_id for m in messages}) == len(messages)
    times = [m.occurred_at for m in messages]
    assert all(t.tzinfo is not None and t.utcoffset() is not None for t in times)
    assert all(a < b for a, b in itertools.pairwise(times))
    sessions: dict[str, list[str]] = {}
    for message in messages:
        sessions.setdefault(message.session_id, []).append(message.role)
        assert (message.speaker == "assistant") == (message.role == "assistant")
        Message.model_validate(message.as_message())
    assert len(sessions) >= 400 // 16
    for roles in sessions.values():
        assert roles[::2] == ["user"] * len(roles[::2])
        assert roles[1::2] == ["assistant"] * len(roles[1::2])
    assert any("?" in m.content for m in messages if m.role == "user")
    assert len({m.content for m in messages}) >= 0.6 * len(messages)
