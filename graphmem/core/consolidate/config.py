"""How consolidation runs: its gate, its clusters and its neighbour search."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ConsolidationConfig(BaseModel):
    """The gate (``min_interval``, ``min_new_facts``, ``lock_ttl``), the search for each new
    fact's believed neighbours (``neighbours`` at cosine ``neighbour_similarity`` or more) and
    the clusters (at most ``cluster_size`` facts; at most ``max_new_facts`` new facts a run,
    the rest left for the next). Summaries: among the ``summary_scan`` newest believed facts
    not summarised yet, density clusters of facts at cosine ``summary_similarity`` or more and
    at most ``summary_window_days`` apart (a fact with ``summary_min_facts - 1`` such
    neighbours is a core), at most ``summary_max_facts`` each (the most central kept), whose
    mean pairwise cosine reaches ``summary_coherence``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_interval: float = Field(default=300.0, ge=0)
    min_new_facts: int = Field(default=20, ge=1)
    lock_ttl: float = Field(default=600.0, gt=0)
    neighbours: int = Field(default=5, ge=1, le=50)
    neighbour_similarity: float = Field(default=0.35, ge=-1.0, le=1.0)
    cluster_size: int = Field(default=12, ge=2, le=100)
    max_new_facts: int = Field(default=5000, ge=1, le=1_000_000)
    #: Seconds the watermark trails the newest facts: a transaction that started earlier
    #: can commit facts recorded before facts already read; those within the window are
    #: read again, and the ones a run handled are remembered so that no run repeats them.
    settle: float = Field(default=60.0, ge=0)
    #: Runs whose proposal for a new fact's cluster was unusable before the fact is given up.
    max_tries: int = Field(default=3, ge=1)
    summary_similarity: float = Field(default=0.55, ge=-1.0, le=1.0)
    summary_window_days: float = Field(default=7.0, gt=0, le=36_500)
    summary_min_facts: int = Field(default=3, ge=2, le=100)
    summary_max_facts: int = Field(default=12, ge=2, le=100)
    summary_coherence: float = Field(default=0.6, ge=-1.0, le=1.0)
    summary_scan: int = Field(default=2000, ge=2, le=20_000)
