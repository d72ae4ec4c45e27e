"""Writing facts: the rows ``fact_create`` stores, its transaction work, and the checks of the
facts a call names (superseded, referenced, pinned, read)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from graphmem.core.forget.flags import flag_changed
from graphmem.core.forget.hashing import lock_texts, stamp
from graphmem.core.plans import Rows, Run, VectorParam, Work
from graphmem.core.replay import current_request, new_id, replaying
from graphmem.embed.embedder import Vectors
from graphmem.errors import (
    DatabaseError,
    ForgottenContentError,
    ForgottenError,
    IdempotencyConflictError,
    NotFoundError,
    RetiredFactError,
)
from graphmem.models import Fact, FactInput
from graphmem.models.fields import native_time
from graphmem.store.cypher import query


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def metadata_json(metadata: Mapping[str, Any] | None) -> str | None:
    return None if metadata is None else json.dumps(metadata, sort_keys=True)


def _created_fact(
    row: Mapping[str, Any],
    recorded_at: Any,
    actor: str,
    from_update: bool,
    pinned_by_update: bool,
) -> Fact:
    """The :Fact that ``fact_create`` stored from ``row`` in a transaction at ``recorded_at``
    (``from_update``: it was given that time as its valid_from; ``pinned_by_update``: it
    replaced a pinned fact): every property is the row's or a constant of the statement, so
    nothing is read back."""
    pinned = row["pinned"] or pinned_by_update
    return Fact.model_validate(
        {
            "id": row["id"],
            "ns": row["ns"],
            "text": row["text"],
            "status": "active",
            "recorded_at": recorded_at,
            "recorded_by": actor,
            "valid_from": recorded_at if from_update else row["valid_from"],
            "valid_to": row["valid_to"],
            "source": row["source"],
            "tags": row["tags"],
            "text_hash": row["text_hash"],
            "metadata": row["metadata"],
            "pinned": pinned,
            "importance": row["importance"],
            # A new fact has no tier of its own: fact_map reads it as hot when pinned.
            "tier": "hot" if pinned else "warm",
        }
    )


def fact_rows(
    ns: str,
    inputs: Sequence[FactInput],
    vectors: Vectors,
    derived_from: Sequence[Sequence[str]] | None,
) -> list[dict[str, Any]]:
    """The rows ``fact_create`` writes for ``inputs``, with new ids (:func:`new_id`)."""
    return [
        {
            "id": new_id(),
            "ns": ns,
            "text": item.text,
            "text_hash": text_hash(item.text),
            "embedding": VectorParam(vector.tolist()),
            "source": item.source,
            "tags": list(item.tags),
            "valid_from": item.valid_from,
            "valid_to": item.valid_to,
            "metadata": metadata_json(item.metadata),
            "pinned": item.pinned,
            "importance": item.importance,
            "reason": item.reason,
            "supersedes": list(item.supersedes),
            "references": list(item.references),
            "contradicts": list(item.contradicts),
            "derived_from": list(derived_from[i]) if derived_from else [],
        }
        for i, (item, vector) in enumerate(zip(inputs, vectors, strict=True))
    ]


def forgotten_refusal(
    kind: str, indexes: Sequence[int], ns: str, erased: Sequence[str] = ()
) -> ForgottenContentError:
    """The error for inputs (by position) whose text the namespace forgot (``erased``: the
    erased ids whose tombstones hold it)."""
    which = ", ".join(map(str, indexes[:10])) + (", ..." if len(indexes) > 10 else "")
    return ForgottenContentError(
        f"{kind} {which}: namespace {ns!r} forgot this text (a tombstone holds its hash); "
        "nothing was stored. Pass allow_forgotten=True to store it again, flagged for review",
        indexes=tuple(indexes),
        ids=tuple(sorted(set(erased))),
    )


def fact_work(
    ns: str,
    inputs: Sequence[FactInput],
    rows: list[dict[str, Any]],
    actor: str,
    guard: Callable[[], Work[str | None]] | None = None,
    *,
    erasure_key: str | None = None,
    allow_forgotten: bool = False,
) -> Callable[[], Work[list[Fact]]]:
    """The transaction work that writes ``rows`` (made from ``inputs``): it checks the
    graph's embedder (``guard``, unless the transaction did and passes its ``erasure_key``),
    locks and checks the facts they supersede or reference, then creates them. The locks make
    a concurrent supersession or erasure of a target wait for this transaction, or this one
    wait for it and then see it. A text the namespace forgot is refused (the transaction rolls
    back) unless ``allow_forgotten``, which stores it flagged. Run again (a retry), it returns
    the facts when an earlier run stored them (:func:`~graphmem.core.replay.replaying`)."""
    superseded = sorted({old for item in inputs for old in item.supersedes})
    contradicted = {t for item in inputs for t in item.contradicts}
    targets = sorted(
        {t for item in inputs for t in (*item.supersedes, *item.references, *item.contradicts)}
    )

    def work() -> Work[list[Fact]]:
        key = erasure_key
        if guard is not None:
            key = yield from guard()
        stamp(rows, key, ns, "text")
        yield from lock_texts(ns, [row["erasure_hash"] for row in rows])
        if key is None and guard is not None:
            # A graph without an erasure key gets one from its first erasure, which holds every
            # text lock: read again now that this transaction holds its own, so that a text
            # erased meanwhile is checked against its tombstone.
            key = yield from guard()
            if key is not None:
                stamp(rows, key, ns, "text")
                yield from lock_texts(ns, [row["erasure_hash"] for row in rows])
        if targets:
            yield Run(query("fact_lock"), {"ns": ns, "ids": targets})
            found = yield Run(query("fact_targets"), {"ns": ns, "ids": targets})
            check_targets(found, set(superseded), ns)
            check_targets(found, contradicted, ns, ("contradict", "contradicted"))
        (out,) = yield Run(query("fact_create"), {"facts": rows, "actor": actor})
        if (
            out["created"] != len(rows)
            or out["superseded"] != len(superseded)
            or out["referenced"] != sum(len(row["references"]) for row in rows)
            or out["contradicted"] != sum(len(row["contradicts"]) for row in rows)
        ):
            raise DatabaseError("a superseded or referenced fact changed during the write")
        if out["forgotten"] and not allow_forgotten:
            refused = {f["id"] for f in out["forgotten"]}
            raise forgotten_refusal(
                "fact",
                [i for i, row in enumerate(rows) if row["id"] in refused],
                ns,
                [f["erased"] for f in out["forgotten"]],
            )
        if superseded:
            replaced = [
                {"id": old, "by": row["id"], "reason": row["reason"]}
                for row in rows
                for old in row["supersedes"]
            ]
            exclude, at = [r["id"] for r in rows], native_time(out["recorded_at"])
            yield from flag_changed(ns, "superseded", actor, replaced, exclude, at=at)
        recorded_at, from_update = out["recorded_at"], set(out["valid_from_update"])
        pinned = set(out["pinned_update"])
        if contradicted or out["forgotten"]:  # read back their contradictions and flags
            stored = yield Run(query("fact_get"), {"ns": ns, "ids": [r["id"] for r in rows]})
            return [Fact.model_validate(r["fact"]) for r in stored]
        return [
            _created_fact(row, recorded_at, actor, row["id"] in from_update, row["id"] in pinned)
            for row in rows
        ]

    return replaying(work, lambda: stored_facts(ns, rows), current_request())


def stored_facts(ns: str, rows: Sequence[Mapping[str, Any]]) -> Work[list[Fact] | None]:
    """The facts of ``rows`` as stored, when an earlier run of their write stored them (same
    ids, same texts); None when none of them is stored. Some of them, or other texts under
    their ids, were another request's: IdempotencyConflictError."""
    if not rows:
        return None
    stored = yield Run(query("fact_get"), {"ns": ns, "ids": [row["id"] for row in rows]})
    if not stored:
        return None
    by_id = {r["fact"]["id"]: r["fact"] for r in stored}
    if len(by_id) != len(rows) or any(
        by_id.get(row["id"], {}).get("text_hash") != row["text_hash"] for row in rows
    ):
        raise IdempotencyConflictError(
            "the facts stored under this request's ids are not the ones it sends: its "
            "idempotency key was used before for another request; nothing was stored"
        )
    return [Fact.model_validate(by_id[row["id"]]) for row in rows]


def refuse_episode(ns: str, item_id: str, why: str) -> Work[None]:
    """Raise NotFoundError, saying ``why``, if ``item_id`` is an episode of ``ns``: for calls
    that take a fact's id."""
    if (yield Run(query("episode_get"), {"ns": ns, "ids": [item_id]})):
        raise NotFoundError(f"{item_id!r} is an episode, not a fact: {why}", ids=(item_id,))


def refuse_forgotten(ns: str, item_id: str) -> Work[None]:
    """Raise ForgottenError if ``item_id`` was a fact of ``ns`` that was forgotten."""
    found = yield Run(query("fact_targets"), {"ns": ns, "ids": [item_id]})
    if found and found[0]["forgotten"]:
        raise ForgottenError(f"{item_id!r} was forgotten", ids=(item_id,))


def check_targets(
    found: Rows, believed: set[str], ns: str, verb: tuple[str, str] = ("supersede", "superseded")
) -> None:
    """Refuse unknown or forgotten ids among ``found`` (``fact_targets`` rows), and retired ones
    among ``believed``, the ids that ``verb`` (and its past participle) needs believed."""
    missing = tuple(r["id"] for r in found if r["status"] is None and not r["forgotten"])
    if missing:
        raise NotFoundError(
            f"no fact with id {', '.join(map(repr, missing))} in namespace {ns!r}", ids=missing
        )
    forgotten = tuple(r["id"] for r in found if r["forgotten"])
    if forgotten:
        raise ForgottenError(
            f"fact {', '.join(map(repr, forgotten))} was forgotten; only its tombstone remains",
            ids=forgotten,
        )
    retired = tuple(r["id"] for r in found if r["id"] in believed and r["retired_at"] is not None)
    if retired:
        statuses = {r["id"]: r["status"] for r in found}
        described = ", ".join(f"{i!r} ({statuses[i]})" for i in retired)
        raise RetiredFactError(
            f"cannot {verb[0]} {described}: only believed facts can be {verb[1]}; "
            f"{verb[0]} the fact that replaced it instead",
            ids=retired,
        )
