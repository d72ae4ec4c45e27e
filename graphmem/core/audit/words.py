"""A fact's lineage as events in transaction-time order, each told in words an agent can
quote, and the explanation of a fact's last change."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from graphmem._text import brief
from graphmem.models.audit import ErasedFact, EventKind, RunSummary, TimelineEvent
from graphmem.models.results import Fact

Row = Mapping[str, Any]


def when(moment: datetime | None) -> str:
    """A time as an auditor reads it: ``2026-03-01 09:00:00 UTC``."""
    if moment is None:
        return "an unknown time"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def day(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def valid_words(lo: datetime | None, hi: datetime | None) -> str:
    """A valid interval in words (``, true from 2019-01-01 until 2021-03-01``); empty when
    both ends are open."""
    if lo is None and hi is None:
        return ""
    if hi is None:
        return f", true from {day(lo)} on"  # type: ignore[arg-type]
    if lo is None:
        return f", true until {day(hi)}"
    return f", true from {day(lo)} until {day(hi)}"


def texts_named(row: Row) -> dict[str, str | None]:
    """The texts of the facts a lineage's edges name (None for a forgotten one)."""
    texts: dict[str, str | None] = {}
    for c in row["contradictions"]:
        texts[c["a"]], texts[c["b"]] = c["a_text"], c["b_text"]
    for r in row["references"]:
        texts[r["from"]], texts[r["to"]] = r["from_text"], r["to_text"]
    for x in row["flags"]:
        texts[x["cause"]] = x["cause_text"]
    return texts


class Teller:
    """Names facts and actors in words: ``'Ada works at Acme.' (fact 1b2c…)``, ``consolidation
    run R (llm, openai:gpt-4o)``."""

    def __init__(
        self,
        facts: Mapping[str, Fact],
        erased: Mapping[str, ErasedFact],
        runs: Mapping[str, RunSummary],
        texts: Mapping[str, str | None] | None = None,
    ) -> None:
        self.facts, self.erased, self.runs = facts, erased, runs
        #: Texts of facts outside the lineage (None: forgotten), from the edges that name them.
        self.texts = texts or {}

    def fact(self, fact_id: str | None) -> str:
        if fact_id is None:
            return "an unknown fact"
        text = self.facts[fact_id].text if fact_id in self.facts else self.texts.get(fact_id)
        if text is not None:
            return f"{brief(text)} (fact {fact_id})"
        if fact_id in self.erased or fact_id in self.texts:
            return f"fact {fact_id} (since forgotten)"
        return f"fact {fact_id}"

    def actor(self, actor: str | None) -> str:
        if actor is None:
            return ""
        run = self.runs.get(actor)
        if run is None:
            return f" (by {actor})"
        made = ", ".join(x for x in (run.proposer, run.model) if x)
        return f" (consolidation run {actor}{', ' + made if made else ''})"


def because(reason: str | None) -> str:
    return f" because {reason}" if reason else ""


def events(
    facts: Mapping[str, Fact],
    erased: Mapping[str, ErasedFact],
    runs: Mapping[str, RunSummary],
    row: Row,
) -> list[TimelineEvent]:
    """Every change in a lineage (an ``audit_lineage`` row), oldest first."""
    tell = Teller(facts, erased, runs, texts_named(row))
    sources = {**row, "facts": list(facts.values()), "erased": list(erased.values())}
    made: list[TimelineEvent] = []
    for source, key, tellings in _SOURCES:
        for item in _distinct(sources[source], key):
            for telling in tellings:
                event = telling(item, tell)
                if event is not None:
                    made.append(event)
    order = {kind: n for n, kind in enumerate(_ORDER)}
    made.sort(key=lambda e: (e.at, order[e.kind], e.fact_id))
    return made


def _distinct(items: Sequence[Any], key: tuple[str, ...]) -> list[Any]:
    """``items`` with one of each ``key`` (the last, in the place of the first); all of them
    when ``key`` is empty."""
    if not key:
        return list(items)
    return list({tuple(item[name] for name in key): item for item in items}.values())


def _event(
    kind: EventKind, at: datetime | None, fact_id: str, words: str, **more: Any
) -> TimelineEvent | None:
    """The event, or None when it has no time (it has not happened)."""
    if at is None:
        return None
    return TimelineEvent(at=at, kind=kind, fact_id=fact_id, words=words, **more)


def _recorded(fact: Fact, tell: Teller) -> TimelineEvent | None:
    # The valid interval stated when it was recorded: a supersession may have closed its end
    # (stated_valid_to keeps the one before) or filled its open start since.
    valid_to = fact.stated_valid_to if fact.status == "superseded" else fact.valid_to
    valid_from = None if fact.valid_from_set_at is not None else fact.valid_from
    return _event(
        "recorded",
        fact.recorded_at,
        fact.id,
        f"{tell.fact(fact.id)} was recorded{valid_words(valid_from, valid_to)}"
        f"{tell.actor(fact.recorded_by)}",
        actor=fact.recorded_by,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def _recorded_erased(gone: ErasedFact, tell: Teller) -> TimelineEvent | None:
    return _event("recorded", gone.recorded_at, gone.id, f"{tell.fact(gone.id)} was recorded")


def _forgotten(gone: ErasedFact, tell: Teller) -> TimelineEvent | None:
    return _event(
        "forgotten",
        gone.erased_at,
        gone.id,
        f"fact {gone.id} was forgotten{because(gone.reason)}{tell.actor(gone.actor)}; "
        "its words are gone",
        actor=gone.actor,
        reason=gone.reason,
    )


#: The fields of a lineage row that say when, by whom and why a change was made: an edge
#: made, a flag raised, a fact retracted or moved; a contradiction resolved; a flag closed.
_MADE = ("at", "actor", "reason")
_RESOLUTION = ("resolved_at", "resolved_by", "resolution")
_CLOSING = ("closed_at", "closed_by", "closing_reason")


def _acted(
    kind: EventKind,
    row: Row,
    tell: Teller,
    fact_id: str,
    words: str,
    *,
    other_id: str | None = None,
    fields: tuple[str, str, str] = _MADE,
) -> TimelineEvent | None:
    """The event of a change someone made, told by ``row`` (``fields`` name its time, actor
    and reason): its words end with why and by whom."""
    at, who, why = (row[name] for name in fields)
    told = f"{words}{because(why)}{tell.actor(who)}"
    return _event(kind, at, fact_id, told, other_id=other_id, actor=who, reason=why)


def _replaced(step: Row, tell: Teller) -> TimelineEvent | None:
    merged = step["type"] == "MERGED_INTO"
    older, newer = (step["newer"], step["older"]) if merged else (step["older"], step["newer"])
    verb = "was merged into" if merged else "was replaced by"
    kind: EventKind = "merged" if merged else "superseded"
    words = f"{tell.fact(older)} {verb} {tell.fact(newer)}"
    return _acted(kind, step, tell, older, words, other_id=newer)


def _retracted(gone: Row, tell: Teller) -> TimelineEvent | None:
    words = f"{tell.fact(gone['fact_id'])} was retracted (held never to have been true)"
    return _acted("retracted", gone, tell, gone["fact_id"], words)


#: How one item of a lineage tells an event (None: one that has not happened).
_Telling = Callable[[Any, Teller], TimelineEvent | None]


def _edge(kind: EventKind, start: str, end: str, verb: str) -> _Telling:
    """How an edge between two facts is told (its row names them under ``start`` and ``end``):
    the first fact ``verb`` the other."""

    def telling(row: Row, tell: Teller) -> TimelineEvent | None:
        words = f"{tell.fact(row[start])} {verb} {tell.fact(row[end])}"
        return _acted(kind, row, tell, row[start], words, other_id=row[end])

    return telling


_contradicted = _edge("contradicted", "a", "b", "was marked as contradicting")
_referenced = _edge("referenced", "from", "to", "referenced")


def _resolved(c: Row, tell: Teller) -> TimelineEvent | None:
    words = (
        f"the contradiction between {tell.fact(c['a'])} and {tell.fact(c['b'])} was "
        f"resolved keeping {tell.fact(c['kept'])}"
    )
    other = c["b"] if c["kept"] == c["a"] else c["a"]
    return _acted(
        "resolved", c, tell, c["kept"] or c["a"], words, other_id=other, fields=_RESOLUTION
    )


def _flagged(x: Row, tell: Teller) -> TimelineEvent | None:
    words = (
        f"{tell.fact(x['flagged'])} was flagged for review: {tell.fact(x['cause'])}, "
        f"which it {_TIES.get(x['relation'], x['relation'])}, was {x['event']}"
    )
    return _acted("flagged", x, tell, x["flagged"], words, other_id=x["cause"])


def _flag_closed(x: Row, tell: Teller) -> TimelineEvent | None:
    words = f"the review flag on {tell.fact(x['flagged'])} was closed ({x['closing']})"
    return _acted("flag_closed", x, tell, x["flagged"], words, other_id=x["cause"], fields=_CLOSING)


_RANK = {"cold": 0, "warm": 1, "hot": 2}


def _moved(x: Row, tell: Teller) -> TimelineEvent | None:
    up = _RANK[x["after"]] > _RANK[x["before"]]
    words = (
        f"{tell.fact(x['fact_id'])} was {'promoted' if up else 'demoted'} from the "
        f"{x['before']} tier to the {x['after']} tier"
    )
    return _acted("promoted" if up else "demoted", x, tell, x["fact_id"], words)


def _tier_restored(x: Row, tell: Teller) -> TimelineEvent | None:
    return _event(
        "tier_restored",
        x["undone_at"],
        x["fact_id"],
        f"{tell.fact(x['fact_id'])} went back to the {x['before']} tier: the run that moved "
        f"it was undone{tell.actor(x['undone_by'])}",
        actor=x["undone_by"],
        other_id=None,
        reason=f"run {x['actor']} undone",
    )


#: Where a lineage's events come from, in the order they are told: the facts, the erased
#: facts, or a list of the ``audit_lineage`` row; the fields that tell its edges apart, where
#: one may come twice (CONTRADICTS and REFERENCES are matched from either end, so an edge
#: between two facts of the lineage is read from both); and the events each item tells.
_SOURCES: tuple[tuple[str, tuple[str, ...], tuple[_Telling, ...]], ...] = (
    ("facts", (), (_recorded,)),
    ("erased", (), (_recorded_erased, _forgotten)),
    ("steps", (), (_replaced,)),
    ("retractions", (), (_retracted,)),
    ("contradictions", ("a", "b", "at"), (_contradicted, _resolved)),
    ("references", ("from", "to", "at"), (_referenced,)),
    ("flags", (), (_flagged, _flag_closed)),
    ("tiers", (), (_moved, _tier_restored)),
)


#: How a flagged fact is tied to its cause, in words.
_TIES = {
    "references": "references",
    "derived_with": "was derived with",
    "derived_from": "was derived from",
    "contradicts": "contradicts",
    "same_text": "has the same text as",
}

#: Events at one instant, in the order they are told (a fact is recorded before it is
#: replaced in the same transaction).
_ORDER: tuple[EventKind, ...] = (
    "recorded",
    "referenced",
    "contradicted",
    "superseded",
    "merged",
    "retracted",
    "resolved",
    "flagged",
    "flag_closed",
    "promoted",
    "demoted",
    "tier_restored",
    "forgotten",
)


def explain(
    fact_id: str,
    facts: Mapping[str, Fact],
    erased: Mapping[str, ErasedFact],
    runs: Mapping[str, RunSummary],
    timeline: list[TimelineEvent],
    head_id: str | None,
    texts: Mapping[str, str | None],
) -> tuple[str, TimelineEvent | None]:
    """The last change to ``fact_id`` in words, and the event it tells."""
    tell = Teller(facts, erased, runs, texts)
    own = [e for e in timeline if e.fact_id == fact_id and e.kind != "flag_closed"]
    last = next(
        (e for e in reversed(own) if e.kind in ("forgotten", "superseded", "merged", "retracted")),
        None,
    )
    if fact_id in erased:
        gone = erased[fact_id]
        until = f" until {when(gone.retired_at)}" if gone.retired_at else ""
        text = (
            f"Fact {fact_id} was believed from {when(gone.recorded_at)}{until}; it was "
            f"forgotten on {when(gone.erased_at)}{because(gone.reason)}"
            f"{tell.actor(gone.actor)}, and its words are gone."
        )
        return text, last
    fact = facts[fact_id]
    valid = _valid(fact)
    if last is None or fact.retired_at is None:
        text = f"{tell.fact(fact_id)} is believed since {when(fact.recorded_at)}{valid}."
        for c in fact.contradictions:
            text += (
                f" It is contradicted by {tell.fact(c.id)} since {when(c.at)}"
                f"{because(c.reason)}{tell.actor(c.actor)}."
            )
        if not fact.contradictions:
            text += " Nothing has replaced it."
        return text, own[-1] if own else None
    start = (
        f"{tell.fact(fact_id)} was believed from {when(fact.recorded_at)} "
        f"until {when(fact.retired_at)}{valid}"
    )
    why = f"{because(last.reason)}{tell.actor(last.actor)}"
    if last.kind == "retracted":
        text = f"{start}; it was retracted as never true{why}."
    else:
        verb = "merged into" if last.kind == "merged" else "replaced by"
        text = f"{start}; it was {verb} {tell.fact(last.other_id)}{why}."
        if head_id is not None and head_id not in (last.other_id, fact_id):
            text += f" That was replaced in turn; what is believed now is {tell.fact(head_id)}."
    return text, last


def _valid(fact: Fact) -> str:
    valid_to = fact.stated_valid_to if fact.status == "superseded" else fact.valid_to
    return valid_words(fact.valid_from, valid_to).replace(", true", ", as true", 1)
