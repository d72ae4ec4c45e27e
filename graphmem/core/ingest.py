"""ingest: messages stored verbatim as episodes, each once, with the facts an extractor finds.

A call is planned in three steps: :func:`_rows` turns the messages into rows, :func:`_repeats`
finds the messages that repeat one earlier in the call, and :class:`_Stored` matches the rest
against what the namespace holds (refusing an edit of a stored message, and giving a stored
message without an external id the one it is re-sent with). Only then is anything embedded or
written, batch by batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphmem.core.actor import current_actor
from graphmem.core.base import CoreBase
from graphmem.core.checks import as_list, as_model, checked_flag, checked_ids, checked_integer
from graphmem.core.extraction import extract_facts
from graphmem.core.forget.hashing import forgotten_hashes, stamp
from graphmem.core.messages import (
    content_hash,
    edit_conflict,
    episode_text,
    message_hash,
    refuse_conflicts,
)
from graphmem.core.plans import Plan, Progress, Rows, Run, Transaction, VectorParam, Work
from graphmem.core.replay import current_request, new_id, replaying
from graphmem.core.writes import (
    fact_rows,
    fact_work,
    forgotten_refusal,
    metadata_json,
)
from graphmem.errors import (
    ForgottenContentError,
    IdempotencyConflictError,
    InvalidInputError,
    MessageConflictError,
    TransientDatabaseError,
)
from graphmem.models import Episode, Fact, FactInput, IngestResult, Message, native_time
from graphmem.store.cypher import query

Row = dict[str, Any]


class IngestPlans(CoreBase):
    def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None,
        session_id: str | None = None,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
        extractor: str | None = None,
        allow_forgotten: bool = False,
    ) -> Plan[IngestResult]:
        """``extractor`` names the extractor that derives facts from the messages (None:
        none); a stored message it has not read yet is read too, so that extraction runs
        once per message and extractor. A message whose text the namespace forgot is refused
        (ForgottenContentError, before anything is written) unless ``allow_forgotten``, which
        stores it flagged; an extracted fact whose text it forgot is not stored."""
        ns = self._ns(ns)
        allow = checked_flag("allow_forgotten", allow_forgotten)
        messages = as_list("ingest", messages, "messages")
        session_id, batch_size = _options(session_id, batch_size, progress)
        parsed = [as_model(Message, "content", m, f"message {i}") for i, m in enumerate(messages)]
        rows, bases = _rows(ns, parsed, session_id)
        if not rows:
            return IngestResult(ns=ns)
        fresh, repeat_of, refused = _repeats(rows, bases)
        known = _Stored(ns, rows, bases, allow)
        # Skip what is stored already before embedding, and refuse a conflict with a stored
        # message before anything is written; each write checks again under the lock.
        stored, adopting = yield Transaction(
            "read", lambda: known.match(fresh, refused, self._guard)
        )
        pending = [r for r in fresh if r["i"] in adopting]
        # An input stored under its own id was stored by an earlier run of this request (its
        # ids derive from its idempotency key): it is answered as this call's episode again.
        own = [r["id"] for r in fresh if stored.get(r["i"]) == r["id"]]
        stored = {i: e for i, e in stored.items() if e not in own}
        fresh = [r for r in fresh if r["i"] not in stored and r["id"] not in own]
        if progress is not None:
            yield Progress(progress, len(rows) - len(fresh))  # repeats: nothing to write
        episodes: list[Episode] = []
        facts: list[Fact] = []
        if own:
            episodes, facts = yield Transaction("read", lambda: _written(ns, own))
        forgotten_skipped = 0
        size = batch_size or max(len(fresh), 1)
        for start in range(0, len(fresh), size):
            batch = fresh[start : start + size]
            # The first transaction also records the external ids of repeats.
            new, raced, derived, skipped = yield from self._ingest_batch(
                ns, batch, known, pending, extractor
            )
            pending = []
            episodes += new
            facts += derived
            forgotten_skipped += skipped
            stored.update(raced)
            if progress is not None:
                yield Progress(progress, len(batch))
        if pending:
            stored.update((yield Transaction("write", lambda: known.adopt_only(pending))))
        if extractor is not None and stored:
            more, skipped = yield from self._extract_stored(
                ns, sorted(set(stored.values())), extractor
            )
            facts += more
            forgotten_skipped += skipped
        # Each input that matched an episode, in input order: the id of the stored one.
        stored_id = {**{r["i"]: r["id"] for r in rows}, **stored}
        repeats = [
            stored_id[repeat_of.get(row["i"], row["i"])]
            for row in rows
            if row["i"] in repeat_of or row["i"] in stored
        ]
        return IngestResult(
            ns=ns,
            episodes=tuple(episodes),
            duplicates=tuple(repeats),
            facts=tuple(facts),
            forgotten_skipped=forgotten_skipped,
        )

    def _extract_stored(
        self, ns: str, ids: list[str], extractor: str
    ) -> Plan[tuple[list[Fact], int]]:
        """Facts from stored episodes that ``extractor`` has not read, written with their
        DERIVED_FROM edges and the episodes' mark, under the namespace's ingest lock (an
        episode another call read meanwhile is left to that call's facts), and how many were
        not stored because the namespace forgot their text."""
        params = {"ns": ns, "ids": ids, "extractor": extractor}
        rows = yield Transaction("read", lambda: _unextracted(params))
        episodes = [Episode.model_validate(r["episode"]) for r in rows]
        if not episodes:
            return [], 0
        inputs, sources = yield from extract_facts(episodes, extractor)
        fact_input_rows: list[Row] = []
        if inputs:
            vectors = yield from self._embed(tuple(item.text for item in inputs))
            fact_input_rows = fact_rows(ns, inputs, vectors, sources)

        def write() -> Work[tuple[list[Fact], int]]:
            yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
            key = yield from self._guard()
            still = {r["episode"]["id"] for r in (yield from _unextracted(params))}
            keep = [i for i, row in enumerate(fact_input_rows) if set(row["derived_from"]) <= still]
            facts, skipped = yield from _extracted_facts(ns, key, inputs, fact_input_rows, keep)
            mark = {"ns": ns, "ids": sorted(still), "extractor": extractor}
            yield Run(query("episode_extracted"), mark)
            answer[:] = [(facts, skipped)]
            return facts, skipped

        answer: list[tuple[list[Fact], int]] = []

        def found() -> Work[tuple[list[Fact], int] | None]:
            """The answer of the run that stored these facts, when one did (the driver's
            retry after a commit it could not confirm)."""
            ids = [row["id"] for row in fact_input_rows]
            stored = (yield Run(query("fact_get"), {"ns": ns, "ids": ids})) if ids else []
            return answer[0] if stored and answer else None

        written: tuple[list[Fact], int] = yield Transaction("write", replaying(write, found))
        return written

    def _ingest_batch(
        self,
        ns: str,
        fresh: list[Row],
        known: _Stored,
        repeats: list[Row],
        extractor: str | None,
    ) -> Plan[tuple[list[Episode], dict[int, str], list[Fact], int]]:
        """Embeds the new messages, extracts their facts and stores both in one transaction,
        which also gives the episodes that ``repeats`` matched their external ids: the episodes
        created, the inputs found stored (by another writer meanwhile, or among ``repeats``),
        the facts, and how many extracted facts the namespace had forgotten."""
        texts = tuple(episode_text(r["content"], r["speaker"]) for r in fresh)
        vectors = yield from self._embed(texts)
        for row, vector in zip(fresh, vectors, strict=True):
            row["embedding"] = VectorParam(vector.tolist())

        # With an extractor, facts are extracted from the new messages before anything is
        # written, then stored with them in one transaction: a failing extractor writes nothing,
        # so the same messages can be sent again.
        fact_inputs: list[FactInput] = []
        extracted_rows: list[Row] = []
        if extractor is not None:
            fact_inputs, sources = yield from extract_facts(fresh, extractor)
            if fact_inputs:
                fact_vectors = yield from self._embed(tuple(item.text for item in fact_inputs))
                extracted_rows = fact_rows(ns, fact_inputs, fact_vectors, sources)

        actor = current_actor()

        def write() -> Work[tuple[list[Episode], dict[int, str], list[Fact], int]]:
            yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
            key = yield from self._guard()
            raced, adopting = yield from known.match(fresh + repeats)
            yield from known.adopt(adopting, raced, repeats)
            todo = [{k: v for k, v in r.items() if k != "i"} for r in fresh if r["i"] not in raced]
            stamp(todo, key, ns, "content")
            created: Rows = []
            if todo:
                created = yield Run(query("episode_create"), {"episodes": todo, "actor": actor})
            new = [Episode.model_validate(r["episode"]) for r in created]
            again = [e for e in new if e.previously_forgotten]
            if again and not known.allow_forgotten:  # forgotten since the first read
                index = {r["id"]: r["i"] for r in fresh}
                erased = [m.cause_id for e in again for m in e.review]
                raise forgotten_refusal("message", [index[e.id] for e in again], ns, erased)
            # Facts from messages another writer stored meanwhile are that writer's to derive.
            ids = {e.id for e in new}
            keep = [i for i, row in enumerate(extracted_rows) if set(row["derived_from"]) <= ids]
            facts, skipped = yield from _extracted_facts(ns, key, fact_inputs, extracted_rows, keep)
            if extractor is not None and ids:
                mark = {"ns": ns, "ids": sorted(ids), "extractor": extractor}
                yield Run(query("episode_extracted"), mark)
            answer[:] = [(new, raced, facts, skipped)]
            return new, raced, facts, skipped

        answer: list[tuple[list[Episode], dict[int, str], list[Fact], int]] = []

        def found() -> Work[tuple[list[Episode], dict[int, str], list[Fact], int] | None]:
            """What an earlier run of this write stored, when it did: the answer of that run
            (the driver's retry), or else what the graph holds under its ids."""
            ids = [r["id"] for r in fresh]
            stored = (yield Run(query("episode_get"), {"ns": ns, "ids": ids})) if ids else []
            if not stored:
                return None
            hashes = {r["id"]: r["content_hash"] for r in fresh}
            if any(r["episode"]["content_hash"] != hashes[r["episode"]["id"]] for r in stored):
                raise IdempotencyConflictError(
                    "the messages stored under this request's ids are not the ones it sends: "
                    "its idempotency key was used before for another request; nothing was stored"
                )
            if answer:
                return answer[0]
            new, facts = yield from _written(ns, ids)
            return new, {}, facts, 0

        written: tuple[list[Episode], dict[int, str], list[Fact], int] = yield Transaction(
            "write", replaying(write, found, current_request())
        )
        return written


def _written(ns: str, ids: list[str]) -> Work[tuple[list[Episode], list[Fact]]]:
    """The episodes stored under ``ids`` (in their order) and the facts derived from them."""
    rows = yield Run(query("episode_get"), {"ns": ns, "ids": ids})
    by_id = {r["episode"]["id"]: Episode.model_validate(r["episode"]) for r in rows}
    derived = yield Run(query("episode_derived_facts"), {"ns": ns, "ids": ids})
    episodes = [by_id[i] for i in ids if i in by_id]
    return episodes, [Fact.model_validate(r["fact"]) for r in derived]


def _options(
    session_id: str | None, batch_size: int | None, progress: Callable[[int], object] | None
) -> tuple[str | None, int | None]:
    """An ingest's session id and batch size, checked, and its progress callback checked."""
    if session_id is not None:
        (session_id,) = checked_ids("session_id", [session_id])
    if batch_size is not None:
        batch_size = checked_integer("batch_size", batch_size, 1)
    if progress is not None and not callable(progress):
        raise InvalidInputError("progress must be a callable taking a number of messages")
    return session_id, batch_size


def _unextracted(params: dict[str, Any]) -> Work[list[Row]]:
    return (yield Run(query("episode_unextracted"), params))


def _extracted_facts(
    ns: str, key: str | None, inputs: Sequence[FactInput], rows: list[Row], keep: list[int]
) -> Work[tuple[list[Fact], int]]:
    """Writes the extracted facts ``keep`` (positions in ``inputs`` and ``rows``) but those
    whose text the namespace forgot: the facts written and how many were left out."""
    chosen = [rows[i] for i in keep]
    stamp(chosen, key, ns, "text")
    forgotten = yield from forgotten_hashes(ns, [r["erasure_hash"] for r in chosen])
    kept = [i for i in keep if rows[i]["erasure_hash"] not in forgotten]
    if not kept:
        return [], len(keep)
    work = fact_work(
        ns, [inputs[i] for i in kept], [rows[i] for i in kept], "extractor", erasure_key=key
    )
    try:
        facts = yield from work()
    except ForgottenContentError as exc:  # forgotten since the check above: under no lock
        raise TransientDatabaseError(
            "a text was forgotten while this ingest ran; nothing of this write was stored: "
            "send the same input again"
        ) from exc
    return facts, len(keep) - len(kept)


def _rows(
    ns: str, messages: Sequence[Message], session_id: str | None
) -> tuple[list[Row], list[str]]:
    """One row per message, as ``episode_create`` takes it (with ``i``, its input index), and
    each message's hash without its occurrence number. The n-th identical message of the call
    gets a hash of its own, so that a chat that says "ok" twice keeps both."""
    rows: list[Row] = []
    occurrences: Counter[str] = Counter()
    bases: list[str] = []
    for i, message in enumerate(messages):
        session = message.session_id if message.session_id is not None else session_id
        base = content_hash(message, session)
        occurrences[base] += 1
        bases.append(base)
        later = occurrences[base] - 1  # identical messages before this one in the call
        rows.append(
            {
                "i": i,
                "id": new_id(),
                "ns": ns,
                "content": message.content,
                "content_hash": content_hash(message, session, later) if later else base,
                "role": message.role,
                "speaker": message.speaker,
                "session_id": session,
                "external_id": message.external_id,
                "occurred_at": message.occurred_at,
                "metadata": metadata_json(message.metadata),
            }
        )
    return rows, bases


def _repeats(
    rows: list[Row], bases: list[str]
) -> tuple[list[Row], dict[int, int], list[MessageConflictError]]:
    """The rows that repeat none before them, each repeat's first occurrence (by input index),
    and the edits refused: a message repeats another with the same session and external id, or
    with the same content hash unless both carry external ids (then those ids tell them apart);
    the same external id with other content is an edit."""
    fresh: list[Row] = []
    repeat_of: dict[int, int] = {}
    by_key: dict[tuple[Any, ...], int] = {}
    refused: list[MessageConflictError] = []
    for row in rows:
        digest, external = row["content_hash"], row["external_id"]
        if external is None:
            keys: list[tuple[Any, ...]] = [("hash", digest)]
            own: list[tuple[Any, ...]] = [("hash", digest), ("hash without id", digest)]
        else:
            keys = [("id", row["session_id"], external), ("hash without id", digest)]
            own = [("hash", digest), ("id", row["session_id"], external)]
        first = next((by_key[k] for k in keys if k in by_key), None)
        if first is not None:
            clash = None
            if external is not None and rows[first]["external_id"] == external:
                clash = edit_conflict(row, bases[row["i"]], bases[first], other_index=first)
            if clash is None:
                repeat_of[row["i"]] = first
            else:  # refused with any other conflict, before anything is written
                refused.append(clash)
            continue
        for k in own:
            by_key.setdefault(k, row["i"])
        fresh.append(row)
    return fresh, repeat_of, refused


@dataclass
class _Stored:
    """The messages of one call held against the namespace's stored episodes."""

    ns: str
    rows: list[Row]
    bases: list[str] = field(repr=False)
    allow_forgotten: bool = False

    def match(
        self,
        candidates: list[Row],
        refused: Sequence[MessageConflictError] = (),
        guard: Callable[[], Work[str | None]] | None = None,
    ) -> Work[tuple[dict[int, str], set[int]]]:
        """The stored episode each candidate repeats, and which of those candidates carry an
        external id that their episode, stored without one, is to take. A candidate that
        conflicts with a stored message is refused, together with ``refused``. With ``guard``
        (the embedder check, which reads the erasure key), a new message whose text the
        namespace forgot is refused too, unless the call allows it."""
        probe = [
            {k: r[k] for k in ("i", "session_id", "external_id", "content_hash")}
            for r in candidates
        ]
        found = yield Run(query("episode_existing"), {"ns": self.ns, "rows": probe})
        conflicts = list(refused)
        for r in found:
            same = r["by_external_id"]  # the stored message with this external id
            if same is not None:
                other = message_hash(
                    same["session_id"],
                    same["role"],
                    same["speaker"],
                    native_time(same["occurred_at"]),
                    same["content"],
                )
                i = r["i"]
                clash = edit_conflict(self.rows[i], self.bases[i], other, episode_id=same["id"])
                if clash is not None:
                    conflicts.append(clash)
        refuse_conflicts(conflicts)
        matched = {r["i"]: r["existing"] for r in found if r["existing"] is not None}
        if guard is not None:
            key = yield from guard()
            new = [r for r in candidates if r["i"] not in matched]
            stamp(new, key, self.ns, "content")
            forgotten = yield from forgotten_hashes(self.ns, [r["erasure_hash"] for r in new])
            again = [r for r in new if r["erasure_hash"] in forgotten]
            if again and not self.allow_forgotten:
                erased = [e for r in again for e in forgotten[r["erasure_hash"]]]
                raise forgotten_refusal("message", [r["i"] for r in again], self.ns, erased)
        return matched, {r["i"] for r in found if r["adopt"]}

    def adopt(
        self, indexes: set[int], matched: Mapping[int, str], repeats: Sequence[Mapping[str, Any]]
    ) -> Work[None]:
        """Gives each episode stored without an external id the id of the message just found to
        repeat it (run under the namespace lock, after :meth:`match`). ``repeats``, the inputs
        the first read took for repeats that carry an id to give, must still match: another
        writer may have given their episode another id meanwhile, making them new messages,
        which this transaction has no vectors for."""
        lost = [r["i"] for r in repeats if r["i"] not in matched]
        if lost:
            raise TransientDatabaseError(
                f"message {lost[0]}: another ingest gave the stored message it repeated "
                "another external id meanwhile, so it is a new message; nothing of this "
                "write was stored: send the same input again"
            )
        todo = [
            {"id": matched[i], "external_id": self.rows[i]["external_id"]}
            for i in sorted(indexes)
            if i in matched
        ]
        if todo:
            yield Run(query("episode_adopt"), {"ns": self.ns, "rows": todo})

    def adopt_only(self, pending: list[Row]) -> Work[dict[int, str]]:
        """The write of a call with nothing new to store: the external ids of its repeats."""
        yield Run(query("ns_lock"), {"key": f"ingest:{self.ns}", "ns": self.ns})
        matched, still = yield from self.match(pending)
        yield from self.adopt(still, matched, pending)
        return matched
