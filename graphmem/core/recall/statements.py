"""The statements recall reads with: the search (in its two forms: unfiltered, and filtered by
namespace inside the vector indexes), the exact scoring of a namespace, and the details of the
candidates kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphmem.core.plans import Run
from graphmem.core.recall.ranking import Retriever
from graphmem.core.recall.scope import RecallRequest
from graphmem.models import Kind
from graphmem.store.cypher import query
from graphmem.store.schema import SCHEMA_KEY

#: The statuses of the facts a search of current beliefs can show: believed ones, and those
#: that stand for the fact that replaced them (superseded or merged).
_CURRENT_STATUSES = ("active", "superseded", "merged")
#: Every status a fact with an embedding can have.
ALL_STATUSES = (*_CURRENT_STATUSES, "retracted")

#: Where the vector indexes cannot filter inside themselves (Neo4j 5.26), a namespace holding
#: up to this many entries of a kind is scored exactly, in the search statement: about 20 ms
#: of server time at 1,000 facts, where a read of the whole index among other tenants would
#: find few of them and be asked again for more.
EXACT_UP_TO = 1_000

#: The kinds and retrievers of recall's ranked lists, in the order it reads them.
KINDS: tuple[Kind, ...] = ("fact", "episode")
RETRIEVERS: tuple[Retriever, ...] = ("vector", "fulltext")


@dataclass
class SearchStatements:
    """One recall's search: the namespace, the query as a vector and as Lucene text (None when
    it holds nothing to search for), and the checked options; the statements recall reads with
    are built from it."""

    ns: str
    vector: list[float]
    lucene: str | None
    request: RecallRequest
    #: Whether the vector indexes filter by namespace inside the index.
    filtered: bool = False
    #: Whether the question names a period (see :mod:`.cues`): then the superseded facts the
    #: search finds are kept beside the fact that replaced them, which each stands for.
    keep_superseded: bool = False

    def statuses(self) -> list[str]:
        """The statuses of the facts the search reads."""
        facts = self.request.scope
        past = facts.as_of is not None or facts.include_retired
        return list(ALL_STATUSES if past else _CURRENT_STATUSES)

    def exact_cap(self, candidates: int) -> int:
        """The most entries of one kind a namespace may hold for a search asking for
        ``candidates`` to score it exactly: ``candidates`` where the indexes filter inside
        themselves (a filtered read is as fast, and must not ask for more than the namespace
        holds), else :data:`EXACT_UP_TO` (a read of the whole index would return few of a
        small namespace's entries among other tenants')."""
        return candidates if self.filtered else max(candidates, EXACT_UP_TO)

    @property
    def candidates(self) -> int:
        """How many entries the search asks each index for at first."""
        return self.request.config.candidates(self.request.k)

    def retrievers(self) -> list[Retriever]:
        """The retrievers the search uses: fulltext only with something to search for."""
        used = self.request.config.retrievers
        return [r for r in RETRIEVERS if r in used and (r == "vector" or self.lucene is not None)]

    def lists(self) -> list[tuple[Kind, Retriever]]:
        """The ranked lists the search reads: each kind asked for, from each retriever used."""
        kinds = self.request.scope.kinds
        return [(kind, r) for kind in KINDS if kind in kinds for r in self.retrievers()]

    def run(self, candidates: int, kinds: Sequence[Kind], retrievers: Sequence[Retriever]) -> Run:
        """The search statement, asking the indexes of ``kinds`` and ``retrievers`` for
        ``candidates`` entries each."""
        cfg = self.request.config
        scope = self.request.scope.search_params()
        cap = self.exact_cap(candidates)
        return Run(
            query("recall_search_filtered" if self.filtered else "recall_search"),
            {
                **scope,
                "statuses": self.statuses(),
                "fact_cap": cap,
                "episode_cap": cap,
                "filtered": self.filtered,
                "ns": self.ns,
                "vector": self.vector,
                "query": self.lucene,
                "pool": cfg.pool(self.request.k),
                "schema_key": SCHEMA_KEY,
                "candidates": candidates,
                "facts": "fact" in kinds,
                "episodes": "episode" in kinds,
                "use_vector": "vector" in retrievers,
                "use_fulltext": "fulltext" in retrievers,
                "next_message": cfg.next_credit > 0,
                "keep_superseded": self.keep_superseded,
            },
        )

    def exact(self, kind: Kind) -> Run:
        """The statement that scores every visible node of ``kind`` exactly."""
        scope = self.request.scope
        return Run(
            query(f"recall_{kind}_exact"),
            {
                "ns": self.ns,
                **(
                    {**scope.fact_params(), "keep_superseded": self.keep_superseded}
                    if kind == "fact"
                    else scope.params()
                ),
                "vector": self.vector,
                "pool": self.request.config.pool(self.request.k),
            },
        )

    def details(self, facts: list[str], episodes: list[str], past: Sequence[str] = ()) -> Run:
        """The statement that reads the details of ``facts`` and ``episodes``; a superseded
        fact among ``past`` is read itself, not the fact that replaced it."""
        return Run(
            query("recall_details"),
            {
                **self.request.scope.fact_params(),
                "ns": self.ns,
                "fact_ids": facts,
                "past": list(past),
                "episode_ids": episodes,
                "vector": self.vector,
                "expand": self.request.expand_references,
                "pairs": self.request.config.update_order and len(episodes) > 1,
            },
        )
