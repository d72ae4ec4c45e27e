"""forget: erasure of facts and episodes, unit by unit, each unit in one transaction.

A call names what to erase (ids, a source, a session or the whole namespace). The ids are read
first; then each unit (at most ``batch_size`` episodes or facts, with the facts derived only
from its episodes) is erased in one write transaction: its nodes locked and read, review flags
made on what rested on them, the consolidation records that showed them scrubbed, and each
node turned into a content-free :Tombstone (:mod:`graphmem.store.queries.forget`). A unit is
either erased whole or not at all, so a forget cut short can be run again: what is erased
already is reported as such. A dry run carries out the same work in one transaction and rolls
it back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from graphmem.core.actor import current_actor
from graphmem.core.base import CoreBase
from graphmem.core.checks import (
    checked_flag,
    checked_ids,
    checked_integer,
    checked_label,
    checked_reason,
)
from graphmem.core.forget.flags import flag_changed
from graphmem.core.forget.hashing import keyed_hash, lock_texts, namespace_key
from graphmem.core.forget.scrub import scrubbed
from graphmem.core.plans import Plan, Progress, Rows, Run, Transaction, Work, single
from graphmem.errors import DatabaseError, InvalidInputError, NotFoundError, SchemaError
from graphmem.models.erasure import FlagMade, ForgetResult
from graphmem.models.fields import native_time
from graphmem.store.cypher import query
from graphmem.store.schema import SCHEMA_KEY

#: Nodes per unit when the caller does not say.
DEFAULT_BATCH = 500


class ForgetOptions(TypedDict, total=False):
    """The keyword arguments of ``forget`` besides ``ids``, ``reason`` and ``ns``: exactly one
    of ``ids``, ``source``, ``session`` and ``everything`` names what to erase."""

    #: The facts with this source.
    source: str | None
    #: The episodes of this session (and the facts derived only from them).
    session: str | None
    #: The whole namespace.
    everything: bool
    #: Who asks (stored on each tombstone; default ``api``).
    actor: str | None
    #: Report what would be erased and flagged, and write nothing.
    dry_run: bool
    #: Nodes per unit, each erased in one transaction (default 500).
    batch_size: int | None
    #: Called with the number of nodes of each unit erased.
    progress: Callable[[int], object] | None


@dataclass
class _Done:
    """What a unit erased, and what the units erased so far (:meth:`add`)."""

    facts: list[str] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    flagged: list[FlagMade] = field(default_factory=list)
    runs: set[str] = field(default_factory=set)
    messages_kept: dict[str, tuple[str, ...]] = field(default_factory=dict)
    same_text_kept: dict[str, tuple[str, ...]] = field(default_factory=dict)
    units: int = 0
    at: Any = None

    def add(self, unit: _Done) -> None:
        self.facts += unit.facts
        self.episodes += unit.episodes
        self.derived += unit.derived
        self.flagged += unit.flagged
        self.runs |= unit.runs
        self.messages_kept.update(unit.messages_kept)
        self.same_text_kept.update(unit.same_text_kept)
        self.at = unit.at or self.at

    def settled(self) -> _Done:
        """What the call did once every unit ran: a copy kept or flagged by one unit and
        erased by a later one (a fact derived from messages of another batch) was not kept."""
        gone = set(self.facts)
        self.flagged = [f for f in self.flagged if f.flagged not in gone]
        kept = {k: tuple(i for i in v if i not in gone) for k, v in self.same_text_kept.items()}
        self.same_text_kept = {k: v for k, v in kept.items() if v}
        return self


class _RolledBack(Exception):
    """Ends a dry run's transaction so that it rolls back, carrying what it did."""

    def __init__(self, done: _Done) -> None:
        super().__init__("dry run")
        self.done = done


@dataclass(frozen=True)
class _Request:
    ns: str
    reason: str
    actor: str
    erasure: str
    flag: bool
    #: Every id the call erases, which its flags leave out.
    targets: frozenset[str]


class ForgetPlans(CoreBase):
    def forget(
        self,
        ids: str | Sequence[str] | None = None,
        *,
        source: str | None = None,
        session: str | None = None,
        everything: bool = False,
        reason: str,
        actor: str | None = None,
        dry_run: bool = False,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
        ns: str | None,
    ) -> Plan[ForgetResult]:
        ns = self._ns(ns)
        everything = checked_flag("everything", everything)
        dry_run = checked_flag("dry_run", dry_run)
        selector = _selector(ids, source, session, everything)
        wanted = checked_ids("ids", ids) if ids is not None else []
        wanted = yield from self._full_ids(ns, wanted)
        if ids is not None and not wanted:
            raise InvalidInputError("forget: no ids given")
        source = None if source is None else checked_label("source", source)
        session = None if session is None else checked_label("session", session)
        why = checked_reason(reason, required=True)
        (actor,) = checked_ids("actor", [current_actor() if actor is None else actor])
        size = DEFAULT_BATCH if batch_size is None else checked_integer("batch_size", batch_size, 1)
        if progress is not None and not callable(progress):
            raise InvalidInputError("progress must be a callable taking a number of nodes")

        rows = yield from _selected(ns, wanted, source, session, everything)
        episodes = [r["id"] for r in rows if r["kind"] == "episode"]
        facts = [r["id"] for r in rows if r["kind"] == "fact"]
        request = _Request(
            ns=ns,
            reason=str(why),
            actor=actor,
            erasure=str(uuid.uuid4()),
            flag=not everything,
            targets=frozenset(episodes) | frozenset(facts),
        )
        units = _units(facts, episodes, size)
        done = yield from _erase_units(request, units, dry_run, progress)
        return ForgetResult(
            ns=ns,
            erasure=request.erasure,
            dry_run=dry_run,
            selector=selector,  # type: ignore[arg-type]
            facts=tuple(done.facts),
            episodes=tuple(done.episodes),
            derived=tuple(done.derived),
            already_forgotten=tuple(r["id"] for r in rows if r["kind"] == "tombstone"),
            flagged=tuple(done.flagged),
            runs_scrubbed=tuple(sorted(done.runs)),
            messages_kept=done.messages_kept,
            same_text_kept=done.same_text_kept,
            units=done.units,
            at=None if dry_run else done.at,
        )


def _selector(
    ids: str | Sequence[str] | None, source: str | None, session: str | None, everything: bool
) -> str:
    """What names the nodes to erase: exactly one of ``ids``, ``source``, ``session`` and
    ``everything`` (``namespace``)."""
    named = [
        k for k, v in (("ids", ids), ("source", source), ("session", session)) if v is not None
    ] + (["namespace"] if everything else [])
    if len(named) != 1:
        raise InvalidInputError(
            "forget needs exactly one of: ids, source, session or everything=True"
            + (f" (got {', '.join(named)})" if named else "")
        )
    return named[0]


def _selected(
    ns: str, wanted: list[str], source: str | None, session: str | None, everything: bool
) -> Plan[Rows]:
    """The ``forget_select`` rows of what the call names; an id that names nothing in ``ns``
    stops the call before anything is erased."""
    params = {
        "ns": ns,
        "ids": wanted,
        "source": source,
        "session": session,
        "everything": everything,
    }
    rows: Rows = yield Transaction("read", lambda: single(Run(query("forget_select"), params)))
    found = {r["id"] for r in rows}
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFoundError(
            f"no fact, episode or tombstone {', '.join(map(repr, missing))} "
            f"in namespace {ns!r}; nothing was forgotten",
            ids=tuple(missing),
        )
    return rows


def _units(facts: list[str], episodes: list[str], size: int) -> list[tuple[list[str], list[str]]]:
    """The units of the erasure, as (facts, episodes), at most ``size`` nodes named in each."""
    # Messages first, each unit with the facts derived only from its messages.
    units: list[tuple[list[str], list[str]]] = [
        ([], episodes[i : i + size]) for i in range(0, len(episodes), size)
    ]
    units += [(facts[i : i + size], []) for i in range(0, len(facts), size)]
    return units


def _erase_units(
    request: _Request,
    units: list[tuple[list[str], list[str]]],
    dry_run: bool,
    progress: Callable[[int], object] | None,
) -> Plan[_Done]:
    """Erases each of ``units`` in a write transaction of its own, reporting each to
    ``progress``; a dry run does them all in one transaction that rolls back. Returns what
    they did, settled."""
    done = _Done()
    if dry_run:
        try:
            yield Transaction("write", lambda: _dry(request, units))
        except _RolledBack as rolled:
            done = rolled.done
    else:
        for unit_facts, unit_episodes in units:
            unit: _Done = yield Transaction("write", _unit(request, unit_facts, unit_episodes))
            done.add(unit)
            done.units += 1
            if progress is not None:
                # What the unit erased: its facts and messages, with the facts derived
                # from them, as ForgetResult.erased counts.
                yield Progress(progress, len(unit.facts) + len(unit.episodes))
    return done.settled()


def _unit(request: _Request, facts: list[str], episodes: list[str]) -> Callable[[], Work[_Done]]:
    return lambda: _erase(request, facts, episodes)


def _dry(request: _Request, units: list[tuple[list[str], list[str]]]) -> Work[None]:
    """Every unit in turn, as the erasure would do them, in one transaction; then a rollback
    that carries what they did."""
    done = _Done()
    for facts, episodes in units:
        done.add((yield from _erase(request, facts, episodes)))
    raise _RolledBack(done)


def _erase(request: _Request, facts: list[str], episodes: list[str]) -> Work[_Done]:
    """Erases one unit in the caller's transaction; returns what it erased."""
    ns = request.ns
    key = yield from _erasure_key(ns)
    # No remember or ingest of any text of the namespace runs beside the erasure: one that
    # committed before it is seen below (same_text), one after it sees the tombstones.
    yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
    yield from lock_texts(ns, None)
    nodes = yield Run(query("forget_nodes"), {"ns": ns, "facts": facts, "episodes": episodes})
    if not nodes:
        return _Done()
    erased = {n["id"] for n in nodes}
    # Neither a target of the call nor a node erased with this unit (a derived fact) is a copy
    # kept: both are gone.
    gone = request.targets | erased
    # The erasure's one time, for its flags, records and tombstones (in Python's UTC: written
    # back as the driver gives it, it would be stored with the zone id UTC).
    at = native_time(nodes[0]["at"])
    flags = yield from _flag(request, nodes, gone, at)
    fact_nodes = [n for n in nodes if n["kind"] == "fact"]
    runs = yield from _scrub(request, [n["id"] for n in fact_nodes], at)
    yield from _tombstone(request, key, nodes, at)
    # The answers kept for the namespace's retried writes may hold the erased words.
    yield Run(query("request_forget"), {"ns": ns, "prefix": f"request:{ns}:"})
    done = _Done(
        facts=[n["id"] for n in fact_nodes],
        episodes=[n["id"] for n in nodes if n["kind"] == "episode"],
        derived=[n["id"] for n in fact_nodes if n["derived"]],
        flagged=[FlagMade.model_validate(f) for f in flags],
        runs=runs,
        at=at,
    )
    for n in nodes:
        kept = tuple(m for m in n["kept_messages"] if m not in erased)
        if kept:
            done.messages_kept[n["id"]] = kept
        same = tuple(s for s in n["same_text"] if s not in gone)
        if same:
            done.same_text_kept[n["id"]] = same
    return done


def _erasure_key(ns: str) -> Work[bytes]:
    """The namespace's key for the hashes its tombstones keep."""
    keys = yield Run(query("forget_key"), {"key": SCHEMA_KEY})
    if not keys:
        raise SchemaError("the graph has no graphmem schema: run `graphmem init` first")
    return namespace_key(keys[0]["erasure_key"], ns)


def _flag(
    request: _Request, nodes: Rows, gone: frozenset[str], at: Any
) -> Work[list[dict[str, str]]]:
    """Flags what rested on the unit's ``nodes``, and the copies of their words kept outside
    what is ``gone``; returns the flags made."""
    ns, actor = request.ns, request.actor
    changed = [{"id": n["id"], "reason": request.reason} for n in nodes]
    # A whole namespace leaves nothing to flag, and its exclusions would be every id in it.
    exclude = sorted(gone) if request.flag else []
    flags = yield from flag_changed(
        ns, "forgotten", actor, changed, exclude, create=request.flag, at=at
    )
    if request.flag:
        # The same words kept elsewhere (another fact or message with the very same text)
        # are flagged: what was asked to be forgotten is still there.
        copies = [
            {"copy": s, "cause": n["id"]} for n in nodes for s in n["same_text"] if s not in gone
        ]
        if copies:
            (made,) = yield Run(
                query("flag_same_text"),
                {"ns": ns, "actor": actor, "reason": request.reason, "copies": copies, "at": at},
            )
            flags += made["flags"]
    return flags


def _scrub(request: _Request, facts: list[str], at: Any) -> Work[set[str]]:
    """Scrubs ``facts`` from the consolidation records that show them; returns the runs
    scrubbed."""
    if not facts:
        return set()
    records = yield Run(query("forget_records"), {"ns": request.ns, "facts": facts})
    if not records:
        return set()
    scrub = {
        "ns": request.ns,
        "actor": request.actor,
        "records": [scrubbed(r) for r in records],
        "at": at,
    }
    yield Run(query("forget_scrub"), scrub)
    return {r["run"] for r in records}


def _tombstone(request: _Request, key: bytes, nodes: Rows, at: Any) -> Work[None]:
    """Turns the unit's ``nodes`` into tombstones erased at ``at`` that keep the keyed hashes
    of their text, source and session."""

    def hashed(value: str | None) -> str | None:
        return None if value is None else keyed_hash(key, value)

    params = {
        "ns": request.ns,
        "facts": [
            {"id": n["id"], "text_hash": hashed(n["text"]), "source_hash": hashed(n["source"])}
            for n in nodes
            if n["kind"] == "fact"
        ],
        "episodes": [
            {
                "id": n["id"],
                "text_hash": hashed(n["text"]),
                "session_hash": hashed(n["session_id"]),
            }
            for n in nodes
            if n["kind"] == "episode"
        ],
        "reason": request.reason,
        "actor": request.actor,
        "erasure": request.erasure,
        "at": at,
    }
    (out,) = yield Run(query("forget_erase"), params)
    if out["facts"] != len(params["facts"]) or out["episodes"] != len(params["episodes"]):
        raise DatabaseError("a node to erase changed during its erasure")  # locked: not expected
