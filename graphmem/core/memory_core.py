"""The memory operations as I/O-free plans, shared by :class:`Memory` and :class:`AsyncMemory`.

Each operation is a generator (a *plan*, :mod:`graphmem.core.plans`) that yields what it needs
done and receives the answer. The sync and async clients only drive plans: validation, Cypher
parameters, fusion, the quality gate and the shape of every result live in the flow that owns
them, once:

- :mod:`graphmem.core.remember`: facts stored as said (``remember``, ``remember_many``);
- :mod:`graphmem.core.ingest`: messages stored verbatim as episodes, each once;
- :mod:`graphmem.core.recall`: recall's options (:mod:`~graphmem.core.recall.scope`), search,
  fusion, gate and hits;
- :mod:`graphmem.core.context`: the prompt-ready block;
- :mod:`graphmem.core.reads`: get, history, stats, pin;
- :mod:`graphmem.core.consolidate`: consolidation runs and their undo
  (:mod:`~graphmem.core.consolidate.plan`), and ``contradict``, ``resolve`` and ``retract``
  (:mod:`~graphmem.core.consolidate.agent`);
- :mod:`graphmem.core.forget`: erasure (:mod:`~graphmem.core.forget.plan`), its
  verification (:mod:`~graphmem.core.forget.verify`) and the review flags
  (:mod:`~graphmem.core.forget.review`);
- :mod:`graphmem.core.audit`: beliefs, truths, diff, timeline, contradictions and a change
  explained in words (:mod:`~graphmem.core.audit.plan`), times read by
  :mod:`~graphmem.core.audit.times`;
- :mod:`graphmem.core.namespaces`: the namespaces listed, exported, imported and dropped
  (:mod:`~graphmem.core.namespaces.plan`);
- :mod:`graphmem.core.keys`: the API keys of ``graphmem serve``.

Re-embedding a graph with another model drives the database directly, batch by batch, and is
the client side's (:mod:`graphmem.client.reembed`).

A transaction's work is a factory, so the driver can run it again when Neo4j asks for a retry.
Errors raised inside the work roll the transaction back: nothing is half-written.
"""

from __future__ import annotations

from graphmem.core.audit.plan import AuditPlans
from graphmem.core.consolidate.agent import AgentPlans
from graphmem.core.consolidate.plan import ConsolidatePlans
from graphmem.core.context.plan import ContextPlans
from graphmem.core.forget.plan import ForgetPlans
from graphmem.core.forget.review import ReviewPlans
from graphmem.core.forget.verify import VerifyPlans
from graphmem.core.ingest import IngestPlans
from graphmem.core.keys import KeyPlans
from graphmem.core.namespaces.plan import NamespacePlans
from graphmem.core.reads import ReadPlans
from graphmem.core.remember import RememberPlans


class MemoryCore(
    RememberPlans,
    IngestPlans,
    ContextPlans,
    ReadPlans,
    AgentPlans,
    ConsolidatePlans,
    ForgetPlans,
    VerifyPlans,
    ReviewPlans,
    AuditPlans,
    NamespacePlans,
    KeyPlans,
):
    """Validation and plans for every memory operation; the clients drive the plans. Each
    base class is one flow; :class:`~graphmem.core.base.CoreBase` holds what they share."""
