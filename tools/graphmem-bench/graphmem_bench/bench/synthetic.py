"""Synthetic memories for benchmarks: facts, updates, chat messages and recall questions.

Everything here is a pure function of its arguments (a seeded :class:`random.Random`, no global
state), so a seed and a size always give the same data. The facts are short natural sentences
about people (a name, or a relative or colleague of that name) across everyday topics: work,
family, pets, health, travel, food, hobbies, tech, finance and schedules, e.g.
"Priya's sister moved to Valencia in March to work as a nurse.".

About a tenth of the facts (``update_share``) are *updates*: newer versions of an earlier fact
about the same subject and attribute ("Priya now works at Stripe." after "Priya works at
Shopify."). Each carries the index of the fact it replaces, always the newest version so far,
so every fact is replaced at most once and updates form chains.

The vocabulary (names, word lists, the attributes' sentence templates and the chat phrasings)
is data, in this package's ``data/*.json``, read once on first use (:func:`vocabulary`).
"""

from __future__ import annotations

import functools
import json
import random
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    #: Read from the data files on first use (:func:`__getattr__`).
    ATTRIBUTES: tuple[_Attribute, ...]
    TOPICS: tuple[str, ...]
    NAMES: tuple[str, ...]


# --- attributes -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Attribute:
    """One kind of fact about a subject.

    A *stateful* attribute (``key_slot`` set) holds one value per subject at a time (where one
    works, lives, banks); a later fact about it is an update. ``fixed`` slots belong to the key
    and stay the same across versions (which weekly event moved). Attributes without a
    ``key_slot`` are events, of which a subject can have any number.
    """

    name: str
    topic: str
    templates: tuple[str, ...]
    questions: tuple[str, ...]
    key_slot: str | None = None
    fixed: tuple[str, ...] = ()
    updates: tuple[str, ...] = ()
    weight: int = 2


# --- vocabulary -----------------------------------------------------------------------------------
Slot = tuple[str, ...] | Callable[[random.Random], str]


@dataclass(frozen=True)
class Vocabulary:
    """What the generators draw from: ``words.json`` (subjects' names and relations, the
    currencies and each template slot's words), ``attributes.json`` (the kinds of fact, their
    templates, update templates and questions) and ``chat.json`` (how a user tells and asks,
    how the assistant acknowledges and answers)."""

    names: tuple[str, ...]
    relations: tuple[str, ...]
    currencies: tuple[str, ...]
    #: How each slot a template names is drawn: a word from a tuple, or a function.
    slots: Mapping[str, Slot]
    #: The ``weekday`` slot's words (``weekday2`` is another of them).
    weekdays: tuple[str, ...]
    attributes: tuple[_Attribute, ...]
    topics: tuple[str, ...]
    by_name: Mapping[str, _Attribute]
    weights: tuple[int, ...]
    #: Each attribute's slots, in the order they are drawn.
    attribute_slots: Mapping[str, tuple[str, ...]]
    tell: tuple[str, ...]
    ack: tuple[str, ...]
    ask: tuple[str, ...]
    answer: tuple[str, ...]
    #: First words of a fact or question that lose their capital after a comma.
    lower_after_comma: frozenset[str]


def _data(name: str) -> Any:
    path = resources.files("graphmem_bench.bench") / "data" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _amount(rng: random.Random) -> str:
    value = rng.choice((25, 40, 60, 80, 120, 150, 200, 250, 300, 450, 600, 750, 900))
    value *= rng.choice((1, 1, 2, 5, 10))
    return f"{rng.choice(vocabulary().currencies)}{value:,}"


def _attribute(item: Mapping[str, Any]) -> _Attribute:
    """An attribute of ``attributes.json``; a key it leaves out takes the default."""
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in item.items()}
    return _Attribute(**fields)


@functools.cache
def vocabulary() -> Vocabulary:
    """The vocabulary of this package's ``data/``, read on the first call."""
    words, chat = _data("words"), _data("chat")
    names = tuple(words["names"])
    slots: dict[str, Slot] = {name: tuple(values) for name, values in words["slots"].items()}
    weekdays = tuple(words["slots"]["weekday"])
    slots.update(
        name2=names,
        year=tuple(str(y) for y in range(2012, 2026)),
        day=tuple(str(d) for d in range(1, 29)),
        years=tuple(str(n) for n in range(2, 16)),
        guests=tuple(str(n) for n in range(4, 21)),
        amount=_amount,
    )
    attributes = tuple(_attribute(item) for item in _data("attributes"))
    return Vocabulary(
        names=names,
        relations=tuple(words["relations"]),
        currencies=tuple(words["currencies"]),
        slots=slots,
        weekdays=weekdays,
        attributes=attributes,
        topics=tuple(dict.fromkeys(a.topic for a in attributes)),
        by_name={a.name: a for a in attributes},
        weights=tuple(a.weight for a in attributes),
        attribute_slots={a.name: _slot_names(a) for a in attributes},
        tell=tuple(chat["tell"]),
        ack=tuple(chat["ack"]),
        ask=tuple(chat["ask"]),
        answer=tuple(chat["answer"]),
        lower_after_comma=frozenset(chat["lower_after_comma"]),
    )


_PUBLIC = {"ATTRIBUTES": "attributes", "TOPICS": "topics", "NAMES": "names"}


def __getattr__(name: str) -> Any:
    """``ATTRIBUTES``, ``TOPICS`` and ``NAMES``, from :func:`vocabulary`."""
    if name in _PUBLIC:
        return getattr(vocabulary(), _PUBLIC[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- results --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SyntheticFact:
    """One generated fact. ``updates`` is the index of the fact it replaces, or None."""

    index: int
    text: str
    topic: str
    attribute: str
    subject: str
    slots: Mapping[str, str]
    updates: int | None = None

    @property
    def is_update(self) -> bool:
        return self.updates is not None


@dataclass(frozen=True)
class SyntheticMessage:
    """One chat message; :meth:`as_message` gives the mapping :meth:`Memory.ingest` takes."""

    content: str
    role: str
    speaker: str
    session_id: str
    external_id: str
    occurred_at: datetime

    def as_message(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "role": self.role,
            "speaker": self.speaker,
            "session_id": self.session_id,
            "external_id": self.external_id,
            "occurred_at": self.occurred_at,
        }


@dataclass(frozen=True)
class SyntheticQuery:
    """A question about a subject; ``fact_index`` is the newest fact that answers it."""

    text: str
    fact_index: int


# --- generation -----------------------------------------------------------------------------------
def _subject(rng: random.Random) -> str:
    vocab = vocabulary()
    name = rng.choice(vocab.names)
    if rng.random() < 0.45:
        return name
    return f"{_possessive(name)} {rng.choice(vocab.relations)}"


def _possessive(subject: str) -> str:
    return subject + ("'" if subject.endswith("s") else "'s")


def _draw(slot: str, rng: random.Random) -> str:
    source = vocabulary().slots[slot]
    if callable(source):
        return str(source(rng))
    return str(rng.choice(source))


_SUBJECT_FIELDS = frozenset({"S", "s", "S_pos", "s_pos"})


def _fields(template: str) -> tuple[str, ...]:
    """The slots ``template`` names, besides the subject."""
    return tuple(
        name
        for _, name, _, _ in string.Formatter().parse(template)
        if name and name not in _SUBJECT_FIELDS
    )


def _slot_names(attribute: _Attribute) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for template in (*attribute.templates, *attribute.updates, *attribute.questions):
        for name in _fields(template):
            if name == "weekday2":
                name = "weekday"  # drawn with it, as another day
            if not name.startswith("old_"):
                names[name] = None
    return tuple(names)


def _fill(attribute: _Attribute, rng: random.Random, keep: Mapping[str, str]) -> dict[str, str]:
    vocab = vocabulary()
    slots = {
        slot: keep.get(slot) or _draw(slot, rng) for slot in vocab.attribute_slots[attribute.name]
    }
    if "weekday" in slots:
        slots["weekday2"] = rng.choice([d for d in vocab.weekdays if d != slots["weekday"]])
    return slots


# "a" before a vowel sound becomes "an" (but "a UX researcher", "a one-on-one", "a use").
_ARTICLE = re.compile(r"\b([Aa]) (?=[AEIOUaeiou])(?!U[A-Z]|[Uu]ni|[Uu]s|[Oo]ne|[Ee]u)")


def _render(template: str, subject: str, slots: Mapping[str, str]) -> str:
    values = {**slots, "S": subject, "s": subject}
    values["S_pos"] = values["s_pos"] = _possessive(subject)
    text = _ARTICLE.sub(r"\1n ", template.format_map(values))
    return text[0].upper() + text[1:]


Key = tuple[str, str, tuple[str, ...]]


def _new_fact(
    rng: random.Random, latest: Mapping[Key, int]
) -> tuple[_Attribute, str, dict[str, str], Key | None]:
    """A fresh (attribute, subject, slots); stateful ones only for a subject without one yet."""
    vocab = vocabulary()
    while True:
        attribute = rng.choices(vocab.attributes, weights=vocab.weights)[0]
        subject = _subject(rng)
        slots = _fill(attribute, rng, {})
        if attribute.key_slot is None:
            return attribute, subject, slots, None
        key = (subject, attribute.name, tuple(slots[s] for s in attribute.fixed))
        if key not in latest:  # one value at a time: draw again rather than contradict
            return attribute, subject, slots, key


def generate_facts(n: int, *, seed: int = 0, update_share: float = 0.1) -> list[SyntheticFact]:
    """``n`` facts, of which about ``update_share`` replace an earlier one.

    The same ``n``, ``seed`` and ``update_share`` always give the same facts, and a longer
    list starts with the shorter one.
    """
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    if not 0.0 <= update_share < 1.0:
        raise ValueError(f"update_share must lie in [0, 1), got {update_share}")
    rng = random.Random(seed)
    facts: list[SyntheticFact] = []
    latest: dict[Key, int] = {}  # (subject, attribute, fixed slots) -> its newest fact
    updatable: list[Key] = []
    while len(facts) < n:
        index = len(facts)
        if updatable and rng.random() < update_share:
            key = rng.choice(updatable)
            old = facts[latest[key]]
            attribute = vocabulary().by_name[old.attribute]
            assert attribute.key_slot is not None
            slots = _fill(attribute, rng, {slot: old.slots[slot] for slot in attribute.fixed})
            while slots[attribute.key_slot] == old.slots[attribute.key_slot]:
                slots[attribute.key_slot] = _draw(attribute.key_slot, rng)
            values = {**{f"old_{k}": v for k, v in old.slots.items()}, **slots}
            text = _render(rng.choice(attribute.updates), old.subject, values)
            facts.append(
                SyntheticFact(
                    index, text, attribute.topic, attribute.name, old.subject, slots, old.index
                )
            )
            latest[key] = index
            continue
        attribute, subject, slots, new_key = _new_fact(rng, latest)
        if new_key is not None:
            latest[new_key] = index
            if attribute.updates:
                updatable.append(new_key)
        text = _render(rng.choice(attribute.templates), subject, slots)
        facts.append(SyntheticFact(index, text, attribute.topic, attribute.name, subject, slots))
    return facts


def heads(facts: Sequence[SyntheticFact]) -> list[int]:
    """For each fact, the index of the newest fact in its update chain (itself if none)."""
    replaced_by = {f.updates: f.index for f in facts if f.updates is not None}
    result = []
    for fact in facts:
        index = fact.index
        while index in replaced_by:
            index = replaced_by[index]
        result.append(index)
    return result


def _question(rng: random.Random, fact: SyntheticFact) -> str:
    """A question about ``fact`` that names only details its text mentions."""
    questions = vocabulary().by_name[fact.attribute].questions
    fitting = [q for q in questions if all(fact.slots[name] in fact.text for name in _fields(q))]
    return _render(rng.choice(fitting or list(questions)), fact.subject, fact.slots)


def generate_queries(
    facts: Sequence[SyntheticFact], n: int, *, seed: int = 0
) -> list[SyntheticQuery]:
    """``n`` questions about subjects in ``facts``, each with the newest fact that answers it."""
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    if not facts:
        return []
    rng = random.Random(seed)
    newest = heads(facts)
    queries = []
    for _ in range(n):
        fact = facts[newest[rng.randrange(len(facts))]]
        queries.append(SyntheticQuery(_question(rng, fact), fact.index))
    return queries


# --- chat -----------------------------------------------------------------------------------------
#: The time zone of the generated conversations' timestamps.
CHAT_ZONE = timezone(timedelta(hours=1), "CET")
CHAT_START = datetime(2025, 1, 6, 8, 30, tzinfo=CHAT_ZONE)


def _lower_first(text: str) -> str:
    """``text`` to follow a comma: names keep their capital, other first words lose it."""
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if first in vocabulary().lower_after_comma else text


def generate_messages(n: int, *, seed: int = 0) -> list[SyntheticMessage]:
    """``n`` chat messages in sessions of 4 to 16, alternating user and assistant.

    The user tells the assistant generated facts or asks about earlier ones, and the assistant
    acknowledges or answers. Timestamps increase (seconds to minutes apart within a session,
    hours to days between sessions) and carry the :data:`CHAT_ZONE` offset; session and
    external ids are unique.
    """
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    vocab = vocabulary()
    rng = random.Random(seed)
    facts = generate_facts(n // 2 + 1, seed=seed + 1)
    told: list[SyntheticFact] = []
    messages: list[SyntheticMessage] = []
    now = CHAT_START
    session = 0
    while len(messages) < n:
        session += 1
        session_id = f"chat-{seed}-{session:05d}"
        speaker = rng.choice(vocab.names)
        length = rng.randrange(4, 17)
        now += timedelta(hours=rng.randrange(2, 60), minutes=rng.randrange(60))
        fact, asking = facts[0], False
        for turn in range(min(length, n - len(messages))):
            if turn % 2 == 0:
                asking = bool(told) and rng.random() < 0.3
                if asking:
                    fact = rng.choice(told)
                    question = _question(rng, fact)
                    template = rng.choice(vocab.ask)
                    content = template.format(question=question, question_lc=_lower_first(question))
                else:
                    fact = facts[len(told) % len(facts)]
                    told.append(fact)
                    template = rng.choice(vocab.tell)
                    content = template.format(fact=fact.text, fact_lc=_lower_first(fact.text))
                role, who = "user", speaker
            else:
                template = rng.choice(vocab.answer if asking else vocab.ack)
                content = template.format(fact=fact.text, fact_lc=_lower_first(fact.text))
                role, who = "assistant", "assistant"
            now += timedelta(seconds=rng.randrange(15, 240))
            messages.append(
                SyntheticMessage(
                    content=content,
                    role=role,
                    speaker=who,
                    session_id=session_id,
                    external_id=f"{session_id}-m{turn + 1:02d}",
                    occurred_at=now,
                )
            )
    return messages


__all__ = [
    "ATTRIBUTES",
    "CHAT_ZONE",
    "TOPICS",
    "SyntheticFact",
    "SyntheticMessage",
    "SyntheticQuery",
    "generate_facts",
    "generate_messages",
    "generate_queries",
    "heads",
    "vocabulary",
]
