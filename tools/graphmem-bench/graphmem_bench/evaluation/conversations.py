"""A set's conversations as a run stores and asks them: grouped, in time order, with the
times that recall reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion


@dataclass
class Conversation:
    """One conversation of a set as a run stores and asks it."""

    id: str
    ns: str
    messages: list[EvalMessage]
    questions: list[EvalQuestion]
    shift: timedelta
    #: Each message's time, by id (those that share a time moved apart: see spread_ties).
    times: dict[str, datetime]


#: How far apart, at most, messages of a conversation that share a time are put.
TIE_STEP = timedelta(seconds=1)


def spread_ties(messages: Sequence[EvalMessage]) -> dict[str, datetime]:
    """Each message's time by id (``messages`` in time order), the messages that share a time
    moved apart in their order: the n-th of them by n steps of a second, or of an equal share
    of the time until the next message where that is shorter. Time order is then the
    conversation's order, which recall reads (the next message of a session, the newer of two
    statements), and no message passes the next one."""
    times: dict[str, datetime] = {}
    first = 0
    while first < len(messages):
        at = messages[first].time
        end = first
        while end < len(messages) and messages[end].time == at:
            end += 1
        step = TIE_STEP
        if end < len(messages):
            step = min(step, (messages[end].time - at) / (end - first))
        for n in range(first, end):
            times[messages[n].message_id] = at + step * (n - first)
        first = end
    return times


def group(
    messages: Sequence[EvalMessage],
    questions: Sequence[EvalQuestion],
    prefix: str,
    now: datetime,
    shift: bool,
) -> list[Conversation]:
    """The set's conversations in the order of their first message, each with its namespace
    (``<prefix>-c<n>``), its messages in time order (then by line), its questions, and the
    constant its times are shifted by (``now`` minus its latest question's time, or 0)."""
    order: dict[str, list[tuple[int, EvalMessage]]] = {}
    for line, message in enumerate(messages):
        order.setdefault(message.conversation_id, []).append((line, message))
    asked: dict[str, list[EvalQuestion]] = {}
    for question in questions:
        asked.setdefault(question.conversation_id, []).append(question)
    out = []
    for n, (conv, rows) in enumerate(order.items(), start=1):
        rows.sort(key=lambda pair: (pair[1].time, pair[0]))
        its = asked.get(conv, [])
        latest = max((q.question_time for q in its), default=rows[-1][1].time)
        out.append(
            Conversation(
                id=conv,
                ns=f"{prefix}-c{n}",
                messages=[m for _, m in rows],
                questions=its,
                shift=(now - latest) if shift else timedelta(0),
                times=spread_ties([m for _, m in rows]),
            )
        )
    return out


def asked_at(conv: Conversation, question: EvalQuestion) -> datetime | None:
    """When the question was asked within the conversation: the time of the message that asks
    it (``extra.own_turn_id``), or None when it names none (asked after every message)."""
    own = (question.extra or {}).get("own_turn_id")
    return conv.times.get(own) if isinstance(own, str) else None
