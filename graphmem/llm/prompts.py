"""The questions graphmem asks an LLM: a rewrite plan for a numbered cluster of facts, a
summary of a coherent cluster, and atomic facts from messages."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from graphmem.models import Episode
from graphmem.models.consolidation import OPERATION_FACTS, Cluster

PROPOSE_SYSTEM = (
    """You maintain the long-term memory of an AI agent: a list of facts about a \
user or a domain. You are shown a few related facts, numbered, with when each was true \
(valid time), when it was recorded, its source and the relationships that already join them. \
Decide what should change, using only these operations on the numbers:
"""
    + "\n".join(f"- {op} {shape}" for op, (_, _, shape) in OPERATION_FACTS.items())
    + """
Rules: SUPERSEDE only when the newer fact clearly replaces the older (a change of job, home, \
plan or preference); MERGE only true duplicates that say the same thing; CONTRADICT when two \
believed facts cannot both be true and the list does not tell which holds; RESOLVE only an \
open contradiction shown in the list; RETRACT only a fact the list shows was never true. \
Each fact takes at most one operation. Facts that need nothing can be left out or KEPT. \
Give a one-sentence reason for each operation."""
)

SUMMARIZE_SYSTEM = (
    "You maintain the long-term memory of an AI agent: a list of facts about a user or a "
    "domain. You are shown a few related facts recorded close together in time, numbered. "
    "Write ONE summary fact that says what they say together, so that a reader of the summary "
    "alone knows what matters in them: one to three plain sentences, self-contained (name the "
    'person rather than "I" or "you"), keeping names, numbers, places and dates, adding '
    "nothing the facts do not say. List the numbers of the facts the summary covers (leave out "
    "one that does not belong with the others). If fewer than two of them belong together, "
    "give an empty summary."
)


class SummaryAnswer(BaseModel):
    """The model's answer to a summary request: reasoning first, then the summary."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field("", description="What the facts share, and which do not belong.")
    summary: str = Field("", description="The summary fact; empty if the facts do not cohere.")
    facts: list[int] = Field(
        default_factory=list, description="Numbers of the facts the summary covers."
    )


EXTRACT_SYSTEM = """You turn conversation messages into atomic facts for an AI agent's \
long-term memory. Each fact is one self-contained statement that makes sense on its own a \
year later: name the person ("the user", or the speaker's name) rather than "I" or "you", \
and resolve "it" or "there" to what they refer to. Keep only what is worth remembering about \
the people, their lives, plans, preferences and the world; skip greetings and small talk. \
For each fact give the numbers of the messages it comes from, and when its words say when it \
became true ("since March", "last year"), that date as valid_from (ISO 8601, using the \
message's time to resolve it); otherwise leave valid_from empty."""


def _when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value is not None else "open"


def cluster_prompt(cluster: Cluster) -> str:
    """The cluster as a numbered list with both clocks, sources and edges."""
    lines = ["Facts:"]
    for f in cluster.facts:
        parts = [
            f"valid {_when(f.valid_from)} to {_when(f.valid_to)}",
            f"recorded {_when(f.recorded_at)}",
        ]
        if f.source:
            parts.append(f"source {f.source}")
        if f.new:
            parts.append("new")
        lines.append(f"[{f.number}] {f.text!r} ({'; '.join(parts)})")
    if cluster.edges:
        lines.append("Relationships:")
        for e in cluster.edges:
            state = " (open)" if e.type == "CONTRADICTS" and e.open else ""
            lines.append(f"{e.source} {e.type} {e.target}{state}")
    return "\n".join(lines)


class ExtractedItem(BaseModel):
    """One fact the model found."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(description="The fact, self-contained, in one sentence.")
    messages: list[int] = Field(description="Numbers of the messages it comes from.")
    valid_from: str | None = Field(
        None, description="When it became true, ISO 8601, if the words say so."
    )


class ExtractAnswer(BaseModel):
    """The model's answer to an extraction: reasoning first, then the facts."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field("", description="What in the messages is worth remembering.")
    facts: list[ExtractedItem] = Field(default_factory=list)


def messages_prompt(episodes: Sequence[Episode]) -> str:
    lines = ["Messages:"]
    for i, e in enumerate(episodes, start=1):
        who = e.speaker or e.role
        when = _when(e.occurred_at or e.recorded_at)
        lines.append(f"[{i}] {when} {who}: {e.content}")
    return "\n".join(lines)
