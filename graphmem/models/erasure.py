"""What ``forget``, its verification and the review list return."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from graphmem.models.fields import OutputModel, StoredDatetime
from graphmem.models.results import ReviewMark


class FlagMade(OutputModel):
    """A review flag an erasure made (or, in a dry run, would make): ``flagged`` rested on
    ``cause`` through ``relation`` (``references``, ``derived_with``, ``contradicts``,
    ``derived_from``), or holds the very same text (``same_text``)."""

    flagged: str
    cause: str
    relation: str


class ForgetResult(OutputModel):
    """What one ``forget`` erased (or, with ``dry_run``, would erase).

    Each unit (a batch of nodes with the facts derived only from its messages) is erased in one
    transaction; ``units`` counts those committed. ``facts`` and ``episodes`` are the ids erased
    (``derived``: the facts among them erased because every message they came from was);
    ``already_forgotten`` the named ids that were tombstones already. ``flagged`` are the review
    flags made on what rested on the erased nodes, ``runs_scrubbed`` the consolidation runs whose
    records lost the erased words. Words that stay elsewhere are listed, not touched:
    ``messages_kept`` (fact id → the messages it came from that were not forgotten) and
    ``same_text_kept`` (fact id → believed facts with the very same text, each also flagged).
    No remember or ingest in the namespace runs beside an erasure unit: one that stored the
    same words before it is listed here, one after it finds the tombstone."""

    ns: str
    erasure: str
    dry_run: bool = False
    selector: Literal["ids", "source", "session", "namespace"]
    facts: tuple[str, ...] = ()
    episodes: tuple[str, ...] = ()
    derived: tuple[str, ...] = ()
    already_forgotten: tuple[str, ...] = ()
    flagged: tuple[FlagMade, ...] = ()
    runs_scrubbed: tuple[str, ...] = ()
    messages_kept: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    same_text_kept: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    units: int = 0
    at: StoredDatetime | None = None

    @property
    def erased(self) -> int:
        return len(self.facts) + len(self.episodes)


class Finding(OutputModel):
    """Something the verification found that it should not have: where, and what."""

    check: str
    where: str
    detail: str


class ForgetVerification(OutputModel):
    """What ``verify_forgotten`` searched and found for one target (an erased id, a source, a
    session or an erasure id). ``clean``: the target names tombstones and no read path holds
    what they erased."""

    ns: str
    target: str
    matched: Literal["id", "source", "session", "erasure", "nothing"]
    tombstones: int
    checks: tuple[str, ...]
    findings: tuple[Finding, ...] = ()

    @property
    def clean(self) -> bool:
        return self.tombstones > 0 and not self.findings


class ReviewFlag(ReviewMark):
    """A review flag (``FLAGGED_BY``) as ``review()`` lists it: the flagged fact or episode and
    its text, what changed (``event`` on ``cause_id``), how it was tied (``relation``), when, by
    whom and why; and, once closed, when, by whom and how (``confirmed``, ``superseded``,
    ``merged``, ``retracted`` or ``forgotten``)."""

    flagged_id: str
    flagged_kind: Literal["fact", "episode"]
    text: str
    closed_at: StoredDatetime | None = None
    closed_by: str | None = None
    closing: str | None = None
    closing_reason: str | None = None
