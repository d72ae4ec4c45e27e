"""What the clients return: stored facts and episodes, recall hits, context blocks, reads."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
)

from graphmem.models.fields import (
    FactStatus,
    Kind,
    OutputModel,
    StoredDatetime,
    metadata_from_graph,
)


# --- stored nodes -------------------------------------------------------------------------------
class OpenContradiction(OutputModel):
    """A believed fact that an unresolved ``CONTRADICTS`` edge joins to this one."""

    id: str
    text: str
    reason: str | None = None
    at: StoredDatetime
    actor: str | None = None


class ReviewMark(OutputModel):
    """An open review flag: something the flagged fact or episode rested on changed.

    ``event`` is what happened to ``cause_id`` (``forgotten``, ``superseded``, ``merged``,
    ``retracted``, or ``previously_forgotten``: the same text was erased before), and
    ``relation`` how the flagged node is tied to it (``references``, ``derived_with``: derived
    from the same message, ``derived_from``: one of its messages, ``contradicts``, or
    ``same_text``)."""

    event: str
    relation: str
    cause_id: str
    cause_kind: Literal["fact", "episode", "tombstone"]
    at: StoredDatetime
    actor: str | None = None
    reason: str | None = None


#: A property absent on most nodes (null in the graph) read as False.
_Flag = Annotated[bool, BeforeValidator(lambda v: bool(v))]


class Fact(OutputModel):
    """A :Fact node (without its embedding), with its open contradictions and review flags."""

    id: str
    ns: str
    text: str
    status: FactStatus
    recorded_at: StoredDatetime
    recorded_by: str | None = None
    """Who created it: the API key's name through ``graphmem serve``, the MCP client's name
    through ``graphmem mcp``, ``api`` through the library unless it acts as another
    (:func:`~graphmem.core.actor.acting_as`), a consolidation run's id for a summary."""
    retired_at: StoredDatetime | None = None
    valid_from: StoredDatetime | None = None
    valid_to: StoredDatetime | None = None
    stated_valid_to: StoredDatetime | None = None
    """On a superseded fact, the ``valid_to`` it carried while believed (None when open)."""
    valid_from_set_at: StoredDatetime | None = None
    """When a supersession (consolidation or ``resolve``) gave this fact, recorded without a
    ``valid_from``, the start it has now; before then its start was open."""
    superseded_by: str | None = None
    source: str | None = None
    tags: tuple[str, ...] = ()
    access_count: int = 0
    last_accessed_at: StoredDatetime | None = None
    text_hash: str
    metadata: Annotated[dict[str, Any] | None, BeforeValidator(metadata_from_graph)] = None
    pinned: bool = False
    #: Why it was retracted ("that was never true"), on a retracted fact.
    retraction_reason: str | None = None
    #: The believed facts it has an open contradiction with (both stay believed until a
    #: ``resolve`` settles it).
    contradictions: tuple[OpenContradiction, ...] = ()
    #: Its open review flags: something it references or was derived with changed.
    review: tuple[ReviewMark, ...] = ()
    #: Stored with ``allow_forgotten`` although the namespace had forgotten the same text.
    previously_forgotten: _Flag = False
    #: The caller's importance (0 to 1), when it gave one; see ``docs/guides/importance.md``.
    importance: float | None = None
    #: ``hot`` (pinned, or promoted by use: always first in ``context``), ``warm`` (the rest of
    #: what is believed) or ``cold`` (faded: out of ``context`` unless asked for, still found
    #: by recall and audits). Consolidation's tier pass moves facts between them.
    tier: Literal["hot", "warm", "cold"] = "warm"
    #: On a summary written by consolidation: the facts it summarises (its provenance).
    summarizes: tuple[str, ...] = ()

    @property
    def believed(self) -> bool:
        """Whether graphmem believes it now (not retired)."""
        return self.retired_at is None

    def as_believed_at(self, moment: datetime) -> Fact:
        """This fact as graphmem believed it at transaction time ``moment``: a fact retired
        later is shown active, with the ``valid_to`` it then had and no replacement. (Usage
        counts and the pin are current values: they are not part of the belief history.)"""
        update: dict[str, Any] = {}
        if self.valid_from_set_at is not None and self.valid_from_set_at > moment:
            update = {"valid_from": None, "valid_from_set_at": None}
        if self.retired_at is not None and self.retired_at > moment:
            # Only a supersession closes valid time (stated_valid_to keeps the end before it).
            superseded = self.status == "superseded"
            update |= {
                "status": "active",
                "retired_at": None,
                "superseded_by": None,
                "valid_to": self.stated_valid_to if superseded else self.valid_to,
                "stated_valid_to": None,
            }
        return self.model_copy(update=update) if update else self


class Episode(OutputModel):
    """An :Episode node: one verbatim message (without its embedding)."""

    id: str
    ns: str
    content: str
    role: str
    speaker: str | None = None
    session_id: str | None = None
    external_id: str | None = None
    occurred_at: StoredDatetime | None = None
    recorded_at: StoredDatetime
    #: Who stored it: the API key's name through ``graphmem serve``, ``mcp:`` and the MCP
    #: client's name through ``graphmem mcp``, ``api`` through the library.
    recorded_by: str | None = None
    content_hash: str
    access_count: int = 0
    last_accessed_at: StoredDatetime | None = None
    metadata: Annotated[dict[str, Any] | None, BeforeValidator(metadata_from_graph)] = None
    #: Its open review flags (a message stored again after the same text was forgotten).
    review: tuple[ReviewMark, ...] = ()
    previously_forgotten: _Flag = False


# --- recall -------------------------------------------------------------------------------------
class Scores(OutputModel):
    """How a hit scored. ``vector`` is the cosine similarity (-1..1) to the query; ``fulltext``
    the Lucene score (absent when the text did not match); ranks are 1-based within each
    retriever's candidates; ``fused`` the fusion score, ``recency`` the multiplier applied to it,
    ``importance`` a fact's importance score when recall weighs importance (its
    ``importance_weight`` above 0; absent otherwise, and for episodes), ``cue`` the multiplier
    the question's cues applied (a period it names, a question about the user: 1.0 unless
    ``time_weight`` or ``user_weight`` is above 0), ``lexical`` the share of the query's words
    found in the text, and ``final`` the rank score (fused times the cue, plus
    ``lexical_weight`` times ``lexical``) that the hit's calibrated ``score`` (the probability
    that it answers, in [0, 1]) is computed from. ``placed_above`` names the hit this message
    was ranked just above as the newer statement of the same thing (or the older one, for a
    question about the past): it took that hit's score."""

    vector: float | None = None
    vector_rank: int | None = None
    fulltext: float | None = None
    fulltext_rank: int | None = None
    fused: float
    recency: float
    importance: float | None = None
    cue: float = 1.0
    lexical: float
    final: float
    placed_above: str | None = None


class SourceMessage(OutputModel):
    """One episode (verbatim message) behind a hit."""

    episode_id: str
    #: The caller's own id of the message, if it was sent with one.
    external_id: str | None = None
    session_id: str | None = None
    occurred_at: StoredDatetime | None = None


class Provenance(OutputModel):
    """Where a hit came from: the episodes (verbatim messages) behind it, in the order they
    were sent (by ``occurred_at``, those without one last, then by the caller's id).
    ``messages`` has one entry per episode; the three tuples are its ids, the external ids
    that are set and the distinct sessions."""

    episode_ids: tuple[str, ...] = ()
    external_ids: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    messages: tuple[SourceMessage, ...] = ()


class Hit(OutputModel):
    kind: Kind
    id: str
    text: str
    score: float
    scores: Scores
    provenance: Provenance
    fact: Fact | None = None
    episode: Episode | None = None
    #: "search" for a direct match; "supersession" for the fact that replaced a superseded
    #: fact the search matched (``superseded_match``; the scores are that fact's); "reference"
    #: for a fact reached over REFERENCES from ``referenced_from``.
    via: Literal["search", "supersession", "reference"] = "search"
    referenced_from: str | None = None
    #: The superseded fact whose match led to this one (via "supersession", or a "reference"
    #: that pointed at it): this hit is what replaced it.
    superseded_match: str | None = None

    @property
    def time(self) -> datetime | None:
        """The hit's date: when the fact was recorded, or when the message was sent."""
        if self.fact is not None:
            return self.fact.valid_from or self.fact.recorded_at
        if self.episode is not None:
            return self.episode.occurred_at or self.episode.recorded_at
        return None


class Timing(OutputModel):
    """Milliseconds spent embedding the query, in database reads, and stamping access."""

    embed_ms: float = 0.0
    db_ms: float = 0.0
    stamp_ms: float = 0.0
    total_ms: float = 0.0


class RecallResult(OutputModel):
    """The hits of one recall, best first, with what the search did to find them."""

    query: str
    ns: str
    hits: tuple[Hit, ...]
    as_of: datetime | None = None
    valid_at: datetime | None = None
    #: Candidates seen before the quality gate, and how many it dropped.
    candidates: int = 0
    gated: int = 0
    #: True when the filters hid so much that the indexes were asked again for more.
    widened: bool = False
    #: True when even that was not enough and exact scoring ran instead.
    exact_fallback: bool = False
    #: How the first read of each kind's vector list went: ``exact`` (the namespace held no
    #: more entries than the read asked for, so each was scored), ``filtered`` (the index
    #: searched the namespace alone, Neo4j 2026.01+) or ``unfiltered`` (the whole index,
    #: filtered after); a kind not searched by vector is left out.
    vector_paths: dict[str, Literal["exact", "filtered", "unfiltered"]] = Field(
        default_factory=dict
    )
    timing: Timing = Timing()
    #: When a recall at ``as_of`` found nothing but would find something at valid time
    #: ``as_of`` by what is believed now: says so, and what to ask instead.
    hint: str | None = None

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]

    def iter_hits(self) -> Iterator[Hit]:
        return iter(self.hits)

    @property
    def texts(self) -> list[str]:
        return [hit.text for hit in self.hits]


class ContextBlock(OutputModel):
    """A prompt-ready block of memory within a token budget."""

    text: str
    tokens: int
    budget_tokens: int
    tokenizer: str
    fact_ids: tuple[str, ...] = ()
    episode_ids: tuple[str, ...] = ()
    #: Lines that matched but did not fit in the budget, and pinned facts past pinned_limit.
    omitted: int = 0
    #: Why the block is empty though something matched: a budget too small for the header
    #: and one line (with the least it would take), or a recall's ``hint``.
    warning: str | None = None


# --- writes, reads and audit --------------------------------------------------------------------
class IngestResult(OutputModel):
    ns: str
    #: Episodes created by this call, in input order.
    episodes: tuple[Episode, ...] = ()
    #: For each input that repeated a message (one stored before, or an earlier input of the
    #: same call), in input order: the id of the stored episode it matched.
    duplicates: tuple[str, ...] = ()
    #: Facts an extractor derived from the new episodes (none without an extractor).
    facts: tuple[Fact, ...] = ()
    #: Extracted facts not stored because the namespace forgot their text.
    forgotten_skipped: int = 0

    @property
    def created(self) -> int:
        return len(self.episodes)


class SupersedesEdge(OutputModel):
    """``(newer)-[:SUPERSEDES]->(older)`` with when, who and why."""

    newer_id: str
    older_id: str
    at: StoredDatetime
    actor: str
    reason: str | None = None


class FactHistory(OutputModel):
    """A fact's place in its ``SUPERSEDES`` chain, both ways, oldest first."""

    fact_id: str
    #: The believed fact the chain leads to now (None if the chain ends in a retired fact).
    head_id: str | None
    facts: tuple[Fact, ...]
    edges: tuple[SupersedesEdge, ...]


class NamespaceStats(OutputModel):
    ns: str
    facts: int
    facts_by_status: dict[str, int]
    #: Believed pinned facts: those context puts first (a retired fact keeps its pin for the
    #: past, but is not counted).
    pinned: int
    #: Believed facts of the hot tier (pinned ones included) and of the cold tier, and
    #: believed summaries (docs/guides/importance.md).
    hot: int = 0
    cold: int = 0
    summaries: int = 0
    episodes: int
    sessions: int
    supersedes: int
    contradictions_open: int
    references: int
    derived_from: int
    #: Tombstones: facts and episodes erased by ``forget``.
    forgotten_facts: int = 0
    forgotten_episodes: int = 0
    #: Open review flags on the namespace's facts and episodes.
    review_open: int = 0
    first_recorded_at: StoredDatetime | None = None
    last_recorded_at: StoredDatetime | None = None
