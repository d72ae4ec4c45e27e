"""What every plan of the core shares: the client's embedder dimension and model, its default
namespace and recall configuration, and the two steps most plans take (embed, and check in a
transaction that the graph still has this client's embedder)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from graphmem.core.checks import namespace
from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.importance import ImportanceConfig
from graphmem.core.plans import Embed, Plan, Rows, Run, Transaction, Work, single
from graphmem.core.recall.ranking import RecallConfig
from graphmem.embed.embedder import Vectors, check_vectors
from graphmem.errors import EmbeddingError, InvalidInputError, NotFoundError
from graphmem.store.cypher import query
from graphmem.store.indexes import check_embedder
from graphmem.store.schema import SCHEMA_KEY

#: The characters of a whole id (a UUID), and what a shortened one looks like.
FULL_ID_CHARS = 36
ID_PREFIX = re.compile(r"[0-9a-f][0-9a-f-]{7,35}")


class CoreBase:
    """The state the plans read; :class:`~graphmem.core.memory_core.MemoryCore` adds the flows."""

    def __init__(
        self,
        *,
        dimension: int,
        default_ns: str | None = None,
        config: RecallConfig | None = None,
        has_extractor: bool = False,
        model_id: str | None = None,
        consolidation: ConsolidationConfig | None = None,
        importance: ImportanceConfig | None = None,
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
        #: What a consolidation run may do: its gate, cluster sizes and lock.
        self.consolidation = consolidation or ConsolidationConfig()
        #: The importance score's parameters and the tiers' thresholds.
        self.importance = importance or ImportanceConfig()
        #: Whether the graph's vector indexes filter by namespace inside the index (Neo4j
        #: 2026.01+, Cypher's SEARCH): searches then use the ``*_filtered`` statements. The
        #: client sets it from the schema it connected to.
        self.filtered_search = False

    def _ns(self, ns: str | None) -> str:
        """The namespace a call names, else the client's default, checked."""
        return namespace(ns, self.default_ns)

    def _full_ids(self, ns: str, ids: Sequence[str]) -> Plan[list[str]]:
        """``ids`` with each shortened id (8 to 35 characters of 0-9, a-f and -, as MCP and
        context show them) replaced by the one id of the namespace it starts: a fact's, a
        message's or a forgotten one's. A prefix that starts none is a NotFoundError, one
        that starts several an InvalidInputError naming them. Whole ids and anything else pass
        as they are, and a call without a shortened id reads nothing."""
        short = sorted({i for i in ids if len(i) < FULL_ID_CHARS and ID_PREFIX.fullmatch(i)})
        if not short:
            return list(ids)
        params = {"ns": ns, "prefixes": short}
        rows: Rows = yield Transaction("read", lambda: single(Run(query("id_prefix"), params)))
        found = {row["prefix"]: row["ids"] for row in rows}
        for prefix in short:
            matches = found.get(prefix, [])
            if not matches:
                raise NotFoundError(
                    f"no fact or message of namespace {ns!r} has an id starting with {prefix!r}",
                    ids=(prefix,),
                )
            if len(matches) > 1:
                raise InvalidInputError(
                    f"the id prefix {prefix!r} starts several ids of namespace {ns!r} "
                    f"({', '.join(matches)}{', ...' if len(matches) > 2 else ''}): give more of it"
                )
        return [found[i][0] if i in found else i for i in ids]

    def _guard(self) -> Work[str | None]:
        """Refuse to go on in this transaction unless the graph's embedder is this client's and
        no re-embedding is under way: vectors of two models must never meet. Returns the
        graph's erasure key as read in this transaction (None before any), with which a write
        checks its texts against the namespace's tombstones."""
        rows = yield Run(query("schema_state"), {"key": SCHEMA_KEY})
        state = rows[0] if rows else None
        self._check_state(state)
        return None if state is None else state["erasure_key"]

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
