"""The statements recall reads with: the search (in its two forms: unfiltered, and filtered by
namespace inside the vector indexes), the exact scoring of a namespace, and the details of the
candidates kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    #: Where they do: how many of the namespace's facts and episodes they hold, counted up to
    #: ``counted_to``, which no filtered read may ask for more than (see search_counts).
    held: tuple[int, int] = (0, 0)
    counted_to: int = 0

    def statuses(self) -> list[str]:
        """The statuses of the facts the filtered search reads."""
        facts = self.request.scope
        past = facts.as_of is not None or facts.include_retired
        return list(ALL_STATUSES if past else _CURRENT_STATUSES)

    def counts(self, asked: int) -> Run | None:
        """The statement that counts, up to ``asked``, what a filtered vector read asking for
        ``asked`` entries may ask for; None when the counts at hand already tell (the
        namespace holds fewer than they were counted to, or they were counted far enough)."""
        if asked <= self.counted_to or max(self.held) < self.counted_to:
            return None
        return Run(
            query("search_counts"),
            {"ns": self.ns, "statuses": self.statuses(), "cap": asked},
        )

    def counted(self, row: Mapping[str, Any], asked: int) -> None:
        """Take the counts of a :meth:`counts` statement that counted up to ``asked``."""
        self.held, self.counted_to = (row["facts"], row["episodes"]), asked

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
        filters: dict[str, Any] = {}
        if self.filtered:
            filters["statuses"] = self.statuses()
            filters["fact_limit"] = min(candidates, self.held[0])
            filters["episode_limit"] = min(candidates, self.held[1])
        return Run(
            query("recall_search_filtered" if self.filtered else "recall_search"),
            {
                **scope,
                **filters,
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
