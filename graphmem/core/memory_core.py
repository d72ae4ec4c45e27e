"""The memory operations as I/O-free plans, shared by :class:`Memory` and :class:`AsyncMemory`.

Each operation is a generator (a *plan*, :mod:`graphmem.core.plans`) that yields what it needs done
and receives the answer. The sync and async clients only drive plans: validation, Cypher
parameters, fusion, the quality gate and the shape of every result live here and in the
modules it uses, once:

- :mod:`graphmem.core.checks`: call arguments, each bad one an :class:`InvalidInputError`;
- :mod:`graphmem.core.writes`: the rows and transaction work that write facts, and the checks of the
  facts a call names;
- :mod:`graphmem.core.messages`: what makes two messages the same, for ``ingest``;
- :mod:`graphmem.core.extraction`: the extractor interface;
- :mod:`graphmem.core.recall.search`: recall's search, fusion, gate and hits;
- :mod:`graphmem.core.context`: the prompt-ready block.

A transaction's work is a factory, so the driver can run it again when Neo4j asks for a retry.
Errors raised inside the work roll the transaction back: nothing is half-written.
"""

from __future__ import annotations

import inspect
import numbers
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from datetime import UTC, datetime, tzinfo
from typing import Any, get_args

import numpy.typing as npt

from graphmem._text import brief
from graphmem.core.checks import (
    QUERY_TEXT,
    as_list,
    as_model,
    aware,
    checked_flag,
    checked_ids,
    checked_integer,
    checked_value,
    namespace,
    resolve_config,
    validate,
)
from graphmem.core.context import build_context, time_zone
from graphmem.core.extraction import extract_facts
from graphmem.core.messages import (
    content_hash,
    edit_conflict,
    episode_text,
    message_hash,
    refuse_conflicts,
)
from graphmem.core.plans import (
    Embed,
    LoadModel,
    Plan,
    Progress,
    Rows,
    Run,
    Transaction,
    VectorParam,
    Work,
    single,
)
from graphmem.core.recall.ranking import MAX_INDEX_CANDIDATES, RecallConfig
from graphmem.core.recall.search import (
    RecallReads,
    assemble,
    hit_provenance,
    recall_reads,
    stamp_access,
)
from graphmem.core.writes import (
    API_ACTOR,
    check_targets,
    fact_rows,
    fact_work,
    metadata_json,
    refuse_episode,
    refuse_forgotten,
)
from graphmem.embed.embedder import Vectors, check_vectors
from graphmem.embed.tokens import TokenCounter
from graphmem.errors import (
    EmbeddingError,
    InvalidInputError,
    MessageConflictError,
    NotFoundError,
    TransientDatabaseError,
)
from graphmem.models import (
    MAX_IDS,
    MAX_K,
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    FactInput,
    FactStatus,
    IngestResult,
    Kind,
    Message,
    NamespaceStats,
    RecallResult,
    SupersedesEdge,
    Timing,
    native_time,
    one_or_many,
)
from graphmem.store.cypher import query
from graphmem.store.schema import SCHEMA_KEY, check_embedder


class MemoryCore:
    """Validation and plans for every memory operation; the clients drive the plans."""

    def __init__(
        self,
        *,
        dimension: int,
        default_ns: str | None = None,
        config: RecallConfig | None = None,
        has_extractor: bool = False,
        model_id: str | None = None,
    ) -> None:
        if default_ns is not None:
            namespace(default_ns, None)
        self.dimension = dimension
        #: The embedder's model: writes and recall check, in their transaction, that the graph
        #: still has it (another may have replaced it with ``graphmem reembed`` since connect).
        self.model_id = model_id
        self.default_ns = default_ns
        self.config = config or RecallConfig()
        self.has_extractor = has_extractor

    def _guard(self) -> Work[None]:
        """Refuse to go on in this transaction unless the graph's embedder is this client's and
        no re-embedding is under way: vectors of two models must never meet."""
        if self.model_id is not None:
            rows = yield Run(query("schema_state"), {"key": SCHEMA_KEY})
            self._check_state(rows[0] if rows else None)

    def _check_state(self, state: Mapping[str, Any] | None) -> None:
        if self.model_id is not None:
            check_embedder(state, (), self)  # type: ignore[arg-type]

    def _embed(self, texts: tuple[str, ...]) -> Plan[Vectors]:
        """The embedder's vectors for ``texts``, checked as given vectors are: one finite,
        non-zero row of the client's dimension per text. An embedder that breaks its contract
        (any object with ``embed`` may be one) raises EmbeddingError before anything is
        written, rather than storing vectors the index cannot compare."""
        vectors = yield Embed(texts)
        try:
            checked = check_vectors(vectors, self.dimension)
        except (EmbeddingError, ValueError, TypeError) as exc:
            raise EmbeddingError(f"the embedder returned unusable vectors: {exc}") from exc
        if len(checked) != len(texts):
            raise EmbeddingError(
                f"the embedder returned {len(checked)} vectors for {len(texts)} texts"
            )
        return checked

    # --- write path ------------------------------------------------------------------------------
    def remember(self, text: str, *, ns: str | None, **fields: Any) -> Plan[Fact]:
        ns = namespace(ns, self.default_ns)
        item = validate(FactInput, {"text": text, **fields}, "fact")
        facts = yield from self._write_facts(ns, [item], vectors=None)
        return facts[0]

    def remember_many(
        self,
        items: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None,
        vectors: npt.ArrayLike | None = None,
    ) -> Plan[list[Fact]]:
        ns = namespace(ns, self.default_ns)
        facts = as_list("remember_many", items, "facts")
        inputs = [as_model(FactInput, "text", item, f"fact {i}") for i, item in enumerate(facts)]
        if not inputs:
            if vectors is not None and (not isinstance(vectors, Sized) or len(vectors)):
                raise InvalidInputError("no facts but vectors were given")
            return []
        checked = None
        if vectors is not None:
            checked = self._user_vectors(vectors, len(inputs))
        return (yield from self._write_facts(ns, inputs, vectors=checked))

    def _user_vectors(self, vectors: npt.ArrayLike, count: int) -> Vectors:
        try:
            checked = check_vectors(vectors, self.dimension)
        except (EmbeddingError, ValueError, TypeError) as exc:
            raise InvalidInputError(f"invalid vectors: {exc}") from exc
        if len(checked) != count:
            raise InvalidInputError(f"{count} facts but {len(checked)} vectors")
        return checked

    def _write_facts(
        self,
        ns: str,
        inputs: Sequence[FactInput],
        *,
        vectors: Vectors | None,
        derived_from: Sequence[Sequence[str]] | None = None,
        actor: str = API_ACTOR,
    ) -> Plan[list[Fact]]:
        superseded: dict[str, int] = {}
        for i, item in enumerate(inputs):
            for old in item.supersedes:
                if old in superseded:
                    raise InvalidInputError(
                        f"facts {superseded[old]} and {i} both supersede {old!r}; "
                        "a fact is superseded once"
                    )
                superseded[old] = i
        if vectors is None:
            vectors = yield from self._embed(tuple(item.text for item in inputs))
        rows = fact_rows(ns, inputs, vectors, derived_from)
        work = fact_work(ns, inputs, rows, actor, self._guard)
        facts: list[Fact] = yield Transaction("write", work)
        return facts

    def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None,
        session_id: str | None = None,
        batch_size: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> Plan[IngestResult]:
        ns = namespace(ns, self.default_ns)
        messages = as_list("ingest", messages, "messages")
        if session_id is not None:
            (session_id,) = checked_ids("session_id", [session_id])
        if batch_size is not None:
            batch_size = checked_integer("batch_size", batch_size, 1)
        if progress is not None and not callable(progress):
            raise InvalidInputError("progress must be a callable taking a number of messages")
        parsed = [as_model(Message, "content", m, f"message {i}") for i, m in enumerate(messages)]
        rows: list[dict[str, Any]] = []
        occurrences: Counter[str] = Counter()
        bases: list[str] = []  # each message's hash without its occurrence number
        for i, message in enumerate(parsed):
            session = message.session_id if message.session_id is not None else session_id
            base = content_hash(message, session)
            occurrences[base] += 1
            bases.append(base)
            later = occurrences[base] - 1  # identical messages before this one in the call
            rows.append(
                {
                    "i": i,
                    "id": str(uuid.uuid4()),
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
        if not rows:
            return IngestResult(ns=ns)
        # Repeats inside this batch: the first occurrence stands for the others.
        fresh: list[dict[str, Any]] = []
        repeat_of: dict[int, int] = {}  # input index -> index of the first occurrence
        # A message repeats another with the same session and external id, or with the same
        # content hash unless both carry external ids (then those ids tell them apart).
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
                else:  # refused below, with any other conflict, before anything is written
                    refused.append(clash)
                continue
            for k in own:
                by_key.setdefault(k, row["i"])
            fresh.append(row)

        def existing(
            candidates: list[dict[str, Any]], refused: Sequence[MessageConflictError] = ()
        ) -> Work[tuple[dict[int, str], set[int]]]:
            """The stored episode each candidate repeats, and which of those candidates carry
            an external id that their episode, stored without one, is to take. A candidate
            that conflicts with a stored message is refused, together with ``refused``."""
            probe = [
                {k: r[k] for k in ("i", "session_id", "external_id", "content_hash")}
                for r in candidates
            ]
            found = yield Run(query("episode_existing"), {"ns": ns, "rows": probe})
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
                    clash = edit_conflict(rows[i], bases[i], other, episode_id=same["id"])
                    if clash is not None:
                        conflicts.append(clash)
            refuse_conflicts(conflicts)
            matched = {r["i"]: r["existing"] for r in found if r["existing"] is not None}
            return matched, {r["i"] for r in found if r["adopt"]}

        def adopt(
            indexes: set[int], matched: Mapping[int, str], repeats: Sequence[Mapping[str, Any]]
        ) -> Work[None]:
            """Gives each episode stored without an external id the id of the message just
            found to repeat it (run under the namespace lock, after ``existing``). ``repeats``,
            the inputs the first read took for repeats that carry an id to give, must still
            match: another writer may have given their episode another id meanwhile, making
            them new messages, which this transaction has no vectors for."""
            lost = [r["i"] for r in repeats if r["i"] not in matched]
            if lost:
                raise TransientDatabaseError(
                    f"message {lost[0]}: another ingest gave the stored message it repeated "
                    "another external id meanwhile, so it is a new message; nothing of this "
                    "write was stored: send the same input again"
                )
            todo = [
                {"id": matched[i], "external_id": rows[i]["external_id"]}
                for i in sorted(indexes)
                if i in matched
            ]
            if todo:
                yield Run(query("episode_adopt"), {"ns": ns, "rows": todo})

        # Skip what is stored already before embedding, and refuse a conflict with a stored
        # message before anything is written; each write checks again under the lock.
        stored, adopting = yield Transaction("read", lambda: existing(fresh, refused))
        pending = [r for r in fresh if r["i"] in adopting]
        fresh = [r for r in fresh if r["i"] not in stored]
        if progress is not None:
            yield Progress(progress, len(rows) - len(fresh))  # repeats: nothing to write
        episodes: list[Episode] = []
        facts: list[Fact] = []
        size = batch_size or max(len(fresh), 1)
        for start in range(0, len(fresh), size):
            batch = fresh[start : start + size]
            # The first transaction also records the external ids of repeats.
            new, raced, derived = yield from self._ingest_batch(ns, batch, existing, adopt, pending)
            pending = []
            episodes += new
            facts += derived
            stored.update(raced)
            if progress is not None:
                yield Progress(progress, len(batch))
        if pending:

            def adopt_only() -> Work[dict[int, str]]:
                yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
                matched, still = yield from existing(pending)
                yield from adopt(still, matched, pending)
                return matched

            stored.update((yield Transaction("write", adopt_only)))
        # Each input that matched an episode, in input order: the id of the stored one.
        stored_id = {**{r["i"]: r["id"] for r in rows}, **stored}
        repeats = [
            stored_id[repeat_of.get(row["i"], row["i"])]
            for row in rows
            if row["i"] in repeat_of or row["i"] in stored
        ]
        return IngestResult(
            ns=ns, episodes=tuple(episodes), duplicates=tuple(repeats), facts=tuple(facts)
        )

    def _ingest_batch(
        self,
        ns: str,
        fresh: list[dict[str, Any]],
        existing: Callable[[list[dict[str, Any]]], Work[tuple[dict[int, str], set[int]]]],
        adopt: Callable[[set[int], Mapping[int, str], Sequence[Mapping[str, Any]]], Work[None]],
        repeats: list[dict[str, Any]],
    ) -> Plan[tuple[list[Episode], dict[int, str], list[Fact]]]:
        """Embeds the new messages, extracts their facts and stores both in one transaction,
        which also gives the episodes that ``repeats`` matched their external ids: the episodes
        created, the inputs found stored (by another writer meanwhile, or among ``repeats``),
        and the facts."""
        texts = tuple(episode_text(r["content"], r["speaker"]) for r in fresh)
        vectors = yield from self._embed(texts)
        for row, vector in zip(fresh, vectors, strict=True):
            row["embedding"] = VectorParam(vector.tolist())

        # With an extractor, facts are extracted from the new messages before anything is
        # written, then stored with them in one transaction: a failing extractor writes nothing,
        # so the same messages can be sent again.
        fact_inputs: list[FactInput] = []
        extracted_rows: list[dict[str, Any]] = []
        if self.has_extractor:
            fact_inputs, sources = yield from extract_facts(fresh)
            if fact_inputs:
                fact_vectors = yield from self._embed(tuple(item.text for item in fact_inputs))
                extracted_rows = fact_rows(ns, fact_inputs, fact_vectors, sources)

        def write() -> Work[tuple[list[Episode], dict[int, str], list[Fact]]]:
            yield Run(query("ns_lock"), {"key": f"ingest:{ns}", "ns": ns})
            yield from self._guard()
            raced, adopting = yield from existing(fresh + repeats)
            yield from adopt(adopting, raced, repeats)
            todo = [{k: v for k, v in r.items() if k != "i"} for r in fresh if r["i"] not in raced]
            created = (yield Run(query("episode_create"), {"episodes": todo})) if todo else []
            new = [Episode.model_validate(r["episode"]) for r in created]
            # Facts from messages another writer stored meanwhile are that writer's to derive.
            ids = {e.id for e in new}
            keep = [i for i, row in enumerate(extracted_rows) if set(row["derived_from"]) <= ids]
            facts: list[Fact] = []
            if keep:
                work = fact_work(
                    ns,
                    [fact_inputs[i] for i in keep],
                    [extracted_rows[i] for i in keep],
                    "extractor",
                )
                facts = yield from work()
            return new, raced, facts

        written: tuple[list[Episode], dict[int, str], list[Fact]] = yield Transaction(
            "write", write
        )
        return written

    # --- recall -----------------------------------------------------------------------------------
    def recall(
        self,
        text: str,
        *,
        ns: str | None,
        k: int = 10,
        kinds: Sequence[Kind] = ("fact", "episode"),
        as_of: datetime | str | None = None,
        valid_at: datetime | str | None = None,
        include_retired: bool = False,
        tags: Sequence[str] | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        expand_references: bool = True,
        min_score: float | None = None,
        config: RecallConfig | None = None,
        track_access: bool = True,
    ) -> Plan[RecallResult]:
        began = time.perf_counter()
        ns = namespace(ns, self.default_ns)
        text = checked_value(QUERY_TEXT, "recall query", text)
        k = checked_integer("k", k, 1, MAX_K)
        wanted, tag_list, scope = _scope(kinds, tags, since, until)
        include_retired = checked_flag("include_retired", include_retired)
        expand_references = checked_flag("expand_references", expand_references)
        track_access = checked_flag("track_access", track_access)
        filters = {
            "as_of": aware("as_of", as_of),
            "valid_at": aware("valid_at", valid_at),
            **scope,
        }
        cfg = resolve_config(config, self.config, "config")
        if cfg.widest(k) > MAX_INDEX_CANDIDATES:
            raise InvalidInputError(
                f"this recall config would ask an index for {cfg.widest(k):,} entries at k={k} "
                f"(candidates times the widest retry factor); at most {MAX_INDEX_CANDIDATES:,}"
            )
        if min_score is not None:
            if isinstance(min_score, bool) or not isinstance(min_score, numbers.Real):
                raise InvalidInputError(f"min_score must be a number, got {brief(min_score)}")
            if not -1.0 <= min_score <= 1.0:
                raise InvalidInputError(f"min_score must lie in [-1, 1], got {brief(min_score)}")
            cfg = cfg.model_copy(update={"min_score": float(min_score)})

        loading = time.perf_counter()
        yield LoadModel()  # after every check, and untimed: total_ms leaves it out too
        began += time.perf_counter() - loading
        started = time.perf_counter()
        vector = VectorParam((yield from self._embed((text,)))[0].tolist())
        embed_ms = (time.perf_counter() - started) * 1000

        fact_filters = {**filters, "include_retired": include_retired, "tags": tag_list}
        now = filters["as_of"] or datetime.now(UTC)
        started = time.perf_counter()
        reads: RecallReads = yield Transaction(
            "read",
            lambda: recall_reads(
                ns,
                text,
                vector,
                k,
                wanted,
                filters,
                fact_filters,
                expand_references,
                cfg,
                now,
                check_state=self._check_state,
            ),
        )
        db_ms = (time.perf_counter() - started) * 1000
        hits = assemble(reads, k, cfg, filters["as_of"])

        stamp_ms = 0.0
        if track_access and filters["as_of"] is None:  # as_of: an audit read
            stamp_ms = yield from stamp_access(
                ns,
                [h.id for h in hits if h.kind == "fact"],
                [h.id for h in hits if h.kind == "episode"],
            )
        return RecallResult(
            query=text,
            ns=ns,
            hits=tuple(hits),
            as_of=filters["as_of"],
            valid_at=filters["valid_at"],
            candidates=reads.seen,
            gated=reads.gated,
            widened=reads.widened,
            exact_fallback=reads.exact,
            timing=Timing(
                embed_ms=embed_ms,
                db_ms=db_ms,
                stamp_ms=stamp_ms,
                total_ms=(time.perf_counter() - began) * 1000,
            ),
        )

    # --- context --------------------------------------------------------------------------------
    def context(
        self,
        text: str,
        *,
        ns: str | None,
        budget_tokens: int,
        counter: TokenCounter,
        k: int = 20,
        pinned_limit: int = 50,
        timezone: str | tzinfo | None = None,
        **recall_options: Any,
    ) -> Plan[ContextBlock]:
        ns = namespace(ns, self.default_ns)
        budget_tokens = checked_integer("budget_tokens", budget_tokens, 1)
        pinned_limit = checked_integer("pinned_limit", pinned_limit, 0, MAX_IDS)
        zone = time_zone(timezone)
        unknown = sorted(set(recall_options) - _RECALL_OPTIONS)
        if unknown:
            raise InvalidInputError(
                f"context got unknown options {unknown}; it takes budget_tokens, k, "
                "pinned_limit and timezone, and recall's: " + ", ".join(sorted(_RECALL_OPTIONS))
            )
        # Only the lines the block shows count as accessed, so recall stamps nothing itself.
        track_access = checked_flag("track_access", recall_options.pop("track_access", True))
        # kinds and tags are read twice (by recall, then for the pinned facts): an iterator,
        # which recall takes, is read once here.
        for name in ("kinds", "tags"):
            if isinstance(recall_options.get(name), Iterator):
                recall_options[name] = list(recall_options[name])
        result: RecallResult = yield from self.recall(
            text, ns=ns, k=k, track_access=False, **recall_options
        )
        # Pinned facts open the block whatever the query, but within the call's scope: its
        # kinds, tags and recording times (recall has checked them).
        wanted, tag_list, scope = _scope(
            *(recall_options.get(name, _RECALL_DEFAULTS[name]) for name in _SCOPE)
        )
        filters = {
            "as_of": result.as_of,
            "valid_at": result.valid_at,
            "include_retired": False,
            "tags": tag_list,
            **scope,
        }
        hit_facts = [h.id for h in result.hits if h.kind == "fact"]

        def read_pinned() -> Work[tuple[dict[str, Any], set[str]]]:
            (row,) = yield Run(query("pinned_facts"), {"ns": ns, "limit": pinned_limit, **filters})
            # Recall read in a transaction of its own: a fact it found may have been replaced
            # since, and the fact that replaced it, pinned in the same write, be read here.
            shown = [fact["id"] for fact in row["facts"]] + hit_facts
            replaced: Rows = []
            if len(shown) > 1:
                replaced = yield Run(query("facts_replaced"), {"ns": ns, "ids": shown})
            return row, {r["id"] for r in replaced}

        row: dict[str, Any] = {"facts": [], "provenance": [], "beyond": []}
        replaced: set[str] = set()
        if "fact" in wanted:
            row, replaced = yield Transaction("read", read_pinned)
        pinned = [Fact.model_validate(fact) for fact in row["facts"]]
        sources = {
            fact.id: hit_provenance(rows, None)
            for fact, rows in zip(pinned, row["provenance"], strict=True)
        }
        if result.as_of is not None:
            pinned = [fact.as_believed_at(result.as_of) for fact in pinned]
        # A line shows a fact as believed only while no line shows the fact that replaced it.
        pinned = [f for f in pinned if not (f.id in replaced and f.believed)]
        hits = [h for h in result.hits if not (h.id in replaced and h.fact and h.fact.believed)]
        # Valid times are judged at the time asked about: valid_at, else as_of, else now.
        at = result.valid_at or result.as_of
        block = build_context(pinned, hits, budget_tokens, counter, at, zone, sources)
        # Pinned facts past pinned_limit are left out too, unless recall found them.
        unseen = set(row["beyond"]) - {h.id for h in result.hits}
        if unseen:
            block = block.model_copy(update={"omitted": block.omitted + len(unseen)})
        if track_access and result.as_of is None:
            yield from stamp_access(ns, list(block.fact_ids), list(block.episode_ids))
        return block

    # --- reads ------------------------------------------------------------------------------------
    def get(self, item_id: str, *, ns: str | None) -> Plan[Fact | Episode]:
        ns = namespace(ns, self.default_ns)
        (item_id,) = checked_ids("id", [item_id])

        def work() -> Work[Fact | Episode | None]:
            rows = yield Run(query("fact_get"), {"ns": ns, "ids": [item_id]})
            if rows:
                return Fact.model_validate(rows[0]["fact"])
            rows = yield Run(query("episode_get"), {"ns": ns, "ids": [item_id]})
            if rows:
                return Episode.model_validate(rows[0]["episode"])
            yield from refuse_forgotten(ns, item_id)
            return None

        item: Fact | Episode | None = yield Transaction("read", work)
        if item is None:
            raise NotFoundError(
                f"no fact or episode {item_id!r} in namespace {ns!r}", ids=(item_id,)
            )
        return item

    def history(self, fact_id: str, *, ns: str | None) -> Plan[FactHistory]:
        ns = namespace(ns, self.default_ns)
        (fact_id,) = checked_ids("id", [fact_id])

        def work() -> Work[Rows]:
            rows = yield Run(query("fact_lineage"), {"ns": ns, "id": fact_id})
            if not rows or not rows[0]["facts"]:
                yield from refuse_forgotten(ns, fact_id)
                yield from refuse_episode(
                    ns,
                    fact_id,
                    "history follows the SUPERSEDES chain between facts (get shows the episode)",
                )
            return rows

        rows: Rows = yield Transaction("read", work)
        if not rows or not rows[0]["facts"]:
            raise NotFoundError(f"no fact {fact_id!r} in namespace {ns!r}", ids=(fact_id,))
        facts = sorted(
            (Fact.model_validate(f) for f in rows[0]["facts"]),
            key=lambda f: (f.recorded_at, f.id),
        )
        edges = sorted(
            (SupersedesEdge.model_validate(e) for e in rows[0]["edges"] if e is not None),
            key=lambda e: (e.at, e.newer_id, e.older_id),
        )
        by_id = {f.id: f for f in facts}
        head: Fact | None = by_id[fact_id]
        seen = set()
        while head is not None and head.superseded_by is not None and head.id not in seen:
            seen.add(head.id)
            head = by_id.get(head.superseded_by)
        return FactHistory(
            fact_id=fact_id,
            head_id=head.id if head is not None and head.believed else None,
            facts=tuple(facts),
            edges=tuple(edges),
        )

    def stats(self, *, ns: str | None) -> Plan[NamespaceStats]:
        ns = namespace(ns, self.default_ns)
        rows: Rows = yield Transaction("read", lambda: single(Run(query("ns_stats"), {"ns": ns})))
        row = rows[0]
        # Every status, 0 where none: a script reads the same keys whatever the data.
        by_status = dict.fromkeys(get_args(FactStatus), 0)
        by_status.update({s["status"]: s["n"] for s in row["statuses"]})
        return NamespaceStats(
            ns=ns,
            facts=sum(by_status.values()),
            facts_by_status=by_status,
            **{k: row[k] for k in row if k != "statuses"},
        )

    def pin(self, fact_id: str, *, ns: str | None, pinned: bool = True) -> Plan[Fact]:
        ns = namespace(ns, self.default_ns)
        (fact_id,) = checked_ids("id", [fact_id])
        pinned = checked_flag("pinned", pinned)

        def work() -> Work[Rows]:
            # Locked first, as a supersession locks it: the check below cannot go stale.
            yield Run(query("fact_lock"), {"ns": ns, "ids": [fact_id]})
            (target,) = yield Run(query("fact_targets"), {"ns": ns, "ids": [fact_id]})
            if target["status"] is None and not target["forgotten"]:
                yield from refuse_episode(ns, fact_id, "only facts are pinned")
            check_targets([target], {fact_id} if pinned else set(), ns, ("pin", "pinned"))
            return (yield Run(query("fact_pin"), {"ns": ns, "id": fact_id, "pinned": pinned}))

        rows: Rows = yield Transaction("write", work)
        return Fact.model_validate(rows[0]["fact"])


# What context passes on to recall (text, ns and k are context's own arguments).
def _scope(
    kinds: Any, tags: Any, since: Any, until: Any
) -> tuple[tuple[Kind, ...], list[str] | None, dict[str, datetime | None]]:
    """Recall's scope, checked: the kinds wanted (facts only when tags are given, since
    episodes have none), the tags, and ``since``/``until`` as aware datetimes."""
    named = as_list("kinds", one_or_many(kinds), "kinds")
    if not named or any(kind not in ("fact", "episode") for kind in named):
        raise InvalidInputError(f"kinds must name 'fact' and/or 'episode', got {brief(kinds)}")
    wanted: tuple[Kind, ...] = tuple(dict.fromkeys(named))
    tag_list = None if tags is None else checked_ids("tags", tags)
    if tag_list == []:
        raise InvalidInputError("tags=[] would match no fact; pass tags=None for no tag filter")
    if tag_list is not None:
        if "fact" not in wanted:
            raise InvalidInputError(
                "tags filter facts (episodes have none), but kinds asks for episodes only"
            )
        wanted = ("fact",)  # episodes have no tags
    bounds = {"since": aware("since", since), "until": aware("until", until)}
    start, end = bounds["since"], bounds["until"]
    if start and end and end <= start:
        raise InvalidInputError(
            f"until ({end.isoformat()}) must be after since ({start.isoformat()})"
        )
    return wanted, tag_list, bounds


_SCOPE = ("kinds", "tags", "since", "until")
_RECALL_DEFAULTS = {
    name: parameter.default
    for name, parameter in inspect.signature(MemoryCore.recall).parameters.items()
}
_RECALL_OPTIONS = frozenset(inspect.signature(MemoryCore.recall).parameters) - {
    "self",
    "text",
    "ns",
    "k",
}
