"""The checks of the service benchmark, made against Neo4j directly once the clients are
done: every acknowledged write stored exactly once (in its namespace, with its text), nothing
stored that no client saw acknowledged (apart from writes whose request failed, which may have
been stored and are counted on their own), and one active head per supersession chain."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from graphmem.testing import run_query
from graphmem_bench.bench.serve_load import ClientLog

if TYPE_CHECKING:
    from graphmem import Memory


@dataclass(frozen=True)
class StoredFact:
    """One fact as the database holds it, with the ids of the facts it supersedes."""

    id: str
    ns: str
    text: str
    status: str
    supersedes: tuple[str, ...] = ()


class WriteChecks(BaseModel):
    """One path's writes against what the database holds."""

    #: Writes the clients saw answered with success (their ids).
    acknowledged: int
    #: Facts in the path's namespaces.
    stored: int
    #: Acknowledged ids not found.
    missing: int
    #: Ids found more than once, and texts stored more than once in one namespace (every
    #: text a client writes is distinct in its namespace).
    duplicated: int
    #: Acknowledged ids found in another namespace or with another text.
    mismatched: int
    #: Facts no client saw acknowledged whose text a failed write sent: a request that
    #: failed on the client's side (a timeout, a broken connection) may still have been
    #: stored.
    stored_after_failure: int
    #: Facts no client saw acknowledged and no failed write sent.
    unexplained: int
    #: Supersession chains (facts linked by SUPERSEDES; a fact never superseded and
    #: superseding nothing is a chain of one) ...
    chains: int
    #: ... and those with exactly one active fact (its head).
    chains_with_one_head: int
    #: Clients whose chain's head is known (no supersession of theirs failed) ...
    client_chains: int
    #: ... and those whose chain holds exactly their acknowledged writes, the last one as
    #: its head.
    client_chains_as_acknowledged: int

    @property
    def stored_once(self) -> bool:
        """Every acknowledged write stored exactly once, and nothing unexplained stored."""
        return not (self.missing or self.duplicated or self.mismatched or self.unexplained)

    @property
    def one_head_per_chain(self) -> bool:
        return (
            self.chains == self.chains_with_one_head
            and self.client_chains == self.client_chains_as_acknowledged
        )


def stored_facts(memory: Memory, prefix: str) -> list[StoredFact]:
    """Every fact of the namespaces whose names start with ``prefix``."""
    records = run_query(memory, "bench_serve_facts", prefix=prefix)
    return [
        StoredFact(
            id=str(r["id"]),
            ns=str(r["ns"]),
            text=str(r["text"]),
            status=str(r["status"]),
            supersedes=tuple(str(old) for old in r["supersedes"]),
        )
        for r in records
    ]


def chain_roots(facts: Sequence[StoredFact]) -> dict[str, str]:
    """For each fact's id, one id that stands for its chain (the facts linked to it by
    SUPERSEDES, either way, directly or not)."""
    parent = {fact.id: fact.id for fact in facts}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for fact in facts:
        for old in fact.supersedes:
            if old in parent:
                parent[root(old)] = root(fact.id)
    return {node: root(node) for node in parent}


def check_writes(logs: Sequence[ClientLog], facts: Sequence[StoredFact]) -> WriteChecks:
    """The checks of one path's clients (``logs``) against the facts of their namespaces."""
    sent = {fact_id: (log.ns, text) for log in logs for fact_id, text in log.acknowledged.items()}
    failed = {(log.ns, text) for log in logs for text in log.unconfirmed}
    by_id = {fact.id: fact for fact in facts}
    ids = Counter(fact.id for fact in facts)
    texts = Counter((fact.ns, fact.text) for fact in facts)
    unacknowledged = [fact for fact in by_id.values() if fact.id not in sent]
    after_failure = sum((fact.ns, fact.text) in failed for fact in unacknowledged)
    chain_of = chain_roots(facts)
    heads = Counter(chain_of[fact.id] for fact in by_id.values() if fact.status == "active")
    chains = set(chain_of.values())
    known = [log for log in logs if log.chain and log.chain_known]
    return WriteChecks(
        acknowledged=len(sent),
        stored=len(facts),
        missing=sum(fact_id not in by_id for fact_id in sent),
        duplicated=sum(n > 1 for n in ids.values()) + sum(n > 1 for n in texts.values()),
        mismatched=sum(
            fact_id in by_id and (by_id[fact_id].ns, by_id[fact_id].text) != where
            for fact_id, where in sent.items()
        ),
        stored_after_failure=after_failure,
        unexplained=len(unacknowledged) - after_failure,
        chains=len(chains),
        chains_with_one_head=sum(heads[chain] == 1 for chain in chains),
        client_chains=len(known),
        client_chains_as_acknowledged=sum(_as_acknowledged(log, by_id, chain_of) for log in known),
    )


def _as_acknowledged(
    log: ClientLog, by_id: dict[str, StoredFact], chain_of: dict[str, str]
) -> bool:
    """The chain holding ``log``'s root is exactly its acknowledged chain, headed by the last
    of them, each superseding the one before."""
    if any(fact_id not in by_id for fact_id in log.chain):
        return False
    chain = chain_of[log.chain[0]]
    members = {fact_id for fact_id, root in chain_of.items() if root == chain}
    links = zip(log.chain, log.chain[1:], strict=False)
    return (
        members == set(log.chain)
        and _statuses(by_id, log.chain) == ["superseded"] * (len(log.chain) - 1) + ["active"]
        and all(by_id[new].supersedes == (old,) for old, new in links)
        and by_id[log.chain[0]].supersedes == ()
    )


def _statuses(by_id: dict[str, StoredFact], ids: Iterable[str]) -> list[str]:
    return [by_id[fact_id].status for fact_id in ids]


__all__ = ["StoredFact", "WriteChecks", "chain_roots", "check_writes", "stored_facts"]
