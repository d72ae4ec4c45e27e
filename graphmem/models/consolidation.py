"""Consolidation's models: what a proposer is shown (a numbered cluster), what it answers
(operations on those numbers), and what a run reports and records."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphmem.models.fields import OutputModel, StoredDatetime

#: What a proposer may answer for a cluster.
ProposedName = Literal[
    "SUPERSEDE", "MERGE", "CONTRADICT", "RESOLVE", "RETRACT", "REFERENCE", "KEEP"
]
#: Every operation a run applies: a proposer's, a tier move of the tier pass (``PROMOTE``,
#: ``DEMOTE``), and a summary of a coherent cluster (``SUMMARIZE``).
OperationName = Literal[
    "SUPERSEDE",
    "MERGE",
    "CONTRADICT",
    "RESOLVE",
    "RETRACT",
    "REFERENCE",
    "KEEP",
    "PROMOTE",
    "DEMOTE",
    "SUMMARIZE",
]
Tier = Literal["hot", "warm", "cold"]
#: How many fact numbers each operation takes (at least, for MERGE and KEEP), in the order
#: the numbers are read.
OPERATION_FACTS: dict[str, tuple[int, bool, str]] = {
    "SUPERSEDE": (2, False, "[newer, older]: the newer fact replaces the older"),
    "MERGE": (2, True, "[survivor, duplicate, ...]: true duplicates become the survivor"),
    "CONTRADICT": (2, False, "[a, b]: a conflict that cannot be settled from what is shown"),
    "RESOLVE": (2, False, "[winner, loser]: settles an open contradiction; the loser is replaced"),
    "RETRACT": (1, False, "[fact]: it was never true"),
    "REFERENCE": (2, False, "[from, to]: a cross-reference between related facts"),
    "KEEP": (1, True, "[fact, ...]: nothing to change"),
}


class ProposedOperation(BaseModel):
    """One operation of a plan, on the numbers of the cluster the proposer was shown."""

    model_config = ConfigDict(extra="ignore")

    op: ProposedName = Field(description="The operation.")
    facts: list[int] = Field(
        description="Fact numbers from the list, in the operation's order: SUPERSEDE [newer, "
        "older]; MERGE [survivor, duplicate, ...]; CONTRADICT [a, b]; RESOLVE [winner, "
        "loser]; RETRACT [fact]; REFERENCE [from, to]; KEEP [fact, ...]."
    )
    reason: str = Field("", description="Why, in one sentence.")


class ProposedPlan(BaseModel):
    """A proposer's answer for one cluster: its reasoning first, then the operations."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(
        "",
        description="Think through the facts first: which say the same, which replace or "
        "contradict which, and what cannot be decided from the list.",
    )
    operations: list[ProposedOperation] = Field(default_factory=list)


class ClusterFact(OutputModel):
    """A fact as a proposer sees it: its number in the cluster, both clocks and its source."""

    number: int
    id: str
    ns: str
    text: str
    status: str
    recorded_at: StoredDatetime
    valid_from: StoredDatetime | None = None
    valid_to: StoredDatetime | None = None
    source: str | None = None
    #: Recorded since the namespace's watermark (the others are its believed neighbours).
    new: bool = False
    forgotten: bool = False


class ClusterEdge(OutputModel):
    """A relationship between two facts of a cluster, by their numbers."""

    type: Literal["SUPERSEDES", "CONTRADICTS", "REFERENCES", "MERGED_INTO"]
    source: int
    target: int
    #: For CONTRADICTS: not resolved yet.
    open: bool = False


class Cluster(OutputModel):
    """New facts with their nearest believed neighbours, numbered from 1 in recording order;
    ``similar`` holds the cosine similarity of the pairs the search found, by number."""

    index: int
    facts: tuple[ClusterFact, ...]
    edges: tuple[ClusterEdge, ...] = ()
    similar: tuple[tuple[int, int, float], ...] = ()

    def fact(self, number: int) -> ClusterFact:
        return self.facts[number - 1]


class LLMUsage(OutputModel):
    """LLM calls and the tokens they used, as the provider reported them."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class ReviewCandidate(OutputModel):
    """Two believed facts that look like the same attribute with another value ("works at
    Google" / "works at Microsoft"): listed for a person or an LLM to decide, not rewritten."""

    facts: tuple[str, str]
    texts: tuple[str, str]
    similarity: float
    reason: str


class Proposal(BaseModel):
    """What a proposer returns for a cluster: its reasoning and operations as given (each is
    checked on its own, so one malformed operation does not void the others; None when the
    whole answer was unusable, with ``error`` saying why), the raw answer as recorded, the
    usage, and review candidates."""

    reasoning: str = ""
    operations: list[Any] | None = None
    raw: str = ""
    usage: LLMUsage = Field(default_factory=LLMUsage)
    error: str | None = None
    review: list[ReviewCandidate] = Field(default_factory=list)


class AppliedOperation(OutputModel):
    """An operation that passed validation (and, outside a dry run, was applied).

    A tier move (``PROMOTE``, ``DEMOTE``; cluster 0) names its fact, the tiers ``before`` and
    ``tier`` after, and the ``score`` that decided it. A ``SUMMARIZE`` names its members in
    ``facts`` and the summary fact it wrote in ``summary_id``, with its ``text``."""

    op: OperationName
    facts: tuple[str, ...]
    numbers: tuple[int, ...]
    reason: str = ""
    cluster: int
    tier: Tier | None = None
    before: Tier | None = None
    score: float | None = None
    summary_id: str | None = None
    text: str | None = None


class RejectedOperation(OutputModel):
    """An operation (or a whole answer) refused before any write, with why."""

    op: str | None = None
    numbers: tuple[Any, ...] = ()
    facts: tuple[str, ...] = ()
    reason: str = ""
    rejection: str
    cluster: int


class ConsolidationResult(OutputModel):
    """What one ``consolidate`` call did (or, with ``dry_run``, would do).

    ``status``: ``finished`` (every cluster handled), ``partial`` (some clusters' answers were
    unusable; the watermark stops before them and the next run takes them again),
    ``skipped`` (the gate said no: ``reason``), or ``dry_run`` (validated, nothing written).
    """

    run_id: str | None
    ns: str
    status: Literal["finished", "partial", "skipped", "dry_run"]
    reason: str | None = None
    proposer: str
    model: str | None = None
    new_facts: int = 0
    clusters: int = 0
    proposed: int = 0
    applied: tuple[AppliedOperation, ...] = ()
    rejected: tuple[RejectedOperation, ...] = ()
    review: tuple[ReviewCandidate, ...] = ()
    usage: LLMUsage = Field(default_factory=LLMUsage)
    #: Seconds spent reading the graph, proposing, and applying; and in all.
    timings: dict[str, float] = Field(default_factory=dict)
    watermark: StoredDatetime | None = None


class ConsolidationRunRecord(OutputModel):
    """A ``:ConsolidationRun`` node as read back: what the run proposed, applied, rejected."""

    id: str
    ns: str
    status: str
    started_at: StoredDatetime
    finished_at: StoredDatetime | None = None
    proposer: str
    model: str | None = None
    plans: tuple[dict[str, Any], ...] = ()
    applied: tuple[AppliedOperation, ...] = ()
    rejected: tuple[RejectedOperation, ...] = ()
    review: tuple[ReviewCandidate, ...] = ()
    usage: LLMUsage = Field(default_factory=LLMUsage)
    timings: dict[str, float] = Field(default_factory=dict)
    error: str | None = None
    undone_at: StoredDatetime | None = None
    undone_by: str | None = None
    #: Who asked for the run (``api``, or the name of the API key under ``graphmem serve``;
    #: None for runs recorded before graphmem kept it).
    started_by: str | None = None


class UndoResult(OutputModel):
    """What ``undo`` restored: facts given back their earlier state, edges removed,
    contradictions reopened."""

    run_id: str
    ns: str
    restored_facts: int
    removed_edges: int
    reopened: int
    undone_at: datetime
    #: Summaries the run wrote, retracted (never deleted).
    withdrawn_summaries: int = 0
