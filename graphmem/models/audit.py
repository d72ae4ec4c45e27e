"""What the audits return: beliefs and truths at a time, the diff between two times, the
timeline of a fact and the plain-words explanation of its last change."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from graphmem.models.fields import OutputModel, StoredDatetime
from graphmem.models.results import Fact


class ErasedFact(OutputModel):
    """A fact or message that was forgotten: the tombstone's times and why, never its words."""

    kind: Literal["fact", "episode"]
    id: str
    recorded_at: StoredDatetime | None = None
    #: When it stopped being believed before its erasure (None: believed until erased).
    retired_at: StoredDatetime | None = None
    status_at_erasure: str | None = None
    #: When it was erased, by whom, why, and the erasure's id.
    erased_at: StoredDatetime
    actor: str | None = None
    reason: str | None = None
    erasure: str | None = None


class Beliefs(OutputModel):
    """The facts believed at transaction time ``as_of`` (each as it was believed then: a fact
    retired since shows as active, with the valid interval it then had and the contradictions
    and review flags open then), true at ``valid_at``
    when one is asked, best match first when a ``query`` ranks them and newest first
    otherwise. ``forgotten``: facts believed then and erased since, without their words.
    ``truncated``: there were more than ``limit``."""

    ns: str
    as_of: datetime | None
    valid_at: datetime | None = None
    query: str | None = None
    facts: tuple[Fact, ...] = ()
    forgotten: tuple[ErasedFact, ...] = ()
    limit: int
    truncated: bool = False


ChangeKind = Literal["recorded", "superseded", "merged", "retracted"]


class BeliefChange(OutputModel):
    """One fact that became believed (``recorded``) or was retired (``superseded``, ``merged``,
    ``retracted``) at ``at``, by ``actor`` (``api``, an API key's name, ``mcp:`` and an MCP
    client's name, ``extractor`` or a consolidation run id), why, and the fact that replaced it
    (``by``). ``text`` is None for a fact forgotten since."""

    fact_id: str
    text: str | None
    change: ChangeKind
    at: StoredDatetime
    valid_from: StoredDatetime | None = None
    valid_to: StoredDatetime | None = None
    by: str | None = None
    by_text: str | None = None
    actor: str | None = None
    reason: str | None = None


class ContradictionRecord(OutputModel):
    """A ``CONTRADICTS`` edge between ``a`` and ``b`` (texts None for a forgotten fact):
    opened at ``at`` by ``actor`` for ``reason``; resolved at ``resolved_at`` by
    ``resolved_by`` keeping ``kept`` because ``resolution``, or still open."""

    a: str
    a_text: str | None
    b: str
    b_text: str | None
    at: StoredDatetime
    actor: str | None = None
    reason: str | None = None
    resolved_at: StoredDatetime | None = None
    resolved_by: str | None = None
    resolution: str | None = None
    kept: str | None = None

    @property
    def open(self) -> bool:
        return self.resolved_at is None


class Diff(OutputModel):
    """What changed in what graphmem believed after ``since`` up to and including ``until``:
    facts that became believed, facts retired and how, facts and messages forgotten (without
    their words), contradictions opened and resolved; each list oldest first."""

    ns: str
    since: datetime
    until: datetime
    believed: tuple[BeliefChange, ...] = ()
    retired: tuple[BeliefChange, ...] = ()
    forgotten: tuple[ErasedFact, ...] = ()
    contradictions_opened: tuple[ContradictionRecord, ...] = ()
    contradictions_resolved: tuple[ContradictionRecord, ...] = ()


EventKind = Literal[
    "recorded",
    "superseded",
    "merged",
    "retracted",
    "contradicted",
    "resolved",
    "referenced",
    "flagged",
    "flag_closed",
    "forgotten",
    "promoted",
    "demoted",
    "tier_restored",
]


class RunSummary(OutputModel):
    """A consolidation run that changed something in a timeline."""

    id: str
    status: str | None = None
    proposer: str | None = None
    model: str | None = None
    started_at: StoredDatetime | None = None
    finished_at: StoredDatetime | None = None


class TimelineEvent(OutputModel):
    """One change in a fact's lineage, at transaction time ``at``: what happened to
    ``fact_id`` and the other fact it involved, by whom, why, and the same in words."""

    at: StoredDatetime
    kind: EventKind
    fact_id: str
    other_id: str | None = None
    actor: str | None = None
    reason: str | None = None
    #: For ``recorded``: the valid interval stated then.
    valid_from: StoredDatetime | None = None
    valid_to: StoredDatetime | None = None
    words: str


class Timeline(OutputModel):
    """The lineage of a fact: every fact joined to it by ``SUPERSEDES`` or ``MERGED_INTO``
    (either way, forgotten ones as tombstones), and every change to them in transaction-time
    order, with the consolidation runs that made some of them. ``head_id``: the believed fact
    the line leads to now (None if it ends in a retired or forgotten fact)."""

    ns: str
    fact_id: str
    head_id: str | None
    facts: tuple[Fact, ...] = ()
    forgotten: tuple[ErasedFact, ...] = ()
    events: tuple[TimelineEvent, ...] = ()
    runs: tuple[RunSummary, ...] = ()


class Explanation(OutputModel):
    """The last change to one fact in words an agent can quote, and the event it describes."""

    ns: str
    fact_id: str
    text: str
    event: TimelineEvent | None = None
