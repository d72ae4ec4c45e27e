"""The LLM in its jobs: :class:`LLMProposer` (a rewrite plan for a cluster, a summary of a
coherent one) and :class:`LLMExtractor` (atomic facts from messages)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from graphmem.core.extraction import ExtractedFact
from graphmem.errors import LLMResponseError
from graphmem.llm.client import LLM
from graphmem.llm.prompts import (
    EXTRACT_SYSTEM,
    PROPOSE_SYSTEM,
    SUMMARIZE_SYSTEM,
    ExtractAnswer,
    SummaryAnswer,
    cluster_prompt,
    messages_prompt,
)
from graphmem.models import Episode
from graphmem.models.consolidation import Cluster, LLMUsage, Proposal, ProposedPlan


def _plan(data: Any) -> dict[str, Any]:
    """A plan's outer shape: an object with a list of operations (each operation is checked
    on its own later, so that one bad operation does not void the others)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("operations", []), list):
        raise ValueError("the answer is not an object with a list of operations")
    return dict(data)


class LLMProposer:
    """Asks the LLM for a plan of operations on a cluster's numbers."""

    name = "llm"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    @property
    def model(self) -> str:
        return self.llm.spec.label

    def propose(self, cluster: Cluster) -> Proposal:
        try:
            answer = self.llm.ask(PROPOSE_SYSTEM, cluster_prompt(cluster), ProposedPlan, _plan)
        except LLMResponseError as exc:
            usage = getattr(exc, "usage", None) or LLMUsage()
            return Proposal(raw=getattr(exc, "raw", "") or "", usage=usage, error=str(exc))
        data = answer.value
        return Proposal(
            reasoning=str(data.get("reasoning", "")),
            operations=list(data.get("operations", [])),
            raw=answer.raw,
            usage=answer.usage,
        )

    def summarize(self, cluster: Cluster) -> Proposal:
        """One ``SUMMARIZE`` operation over the facts of ``cluster`` the summary covers, or
        none when the model finds they do not cohere."""
        try:
            answer = self.llm.ask(SUMMARIZE_SYSTEM, cluster_prompt(cluster), SummaryAnswer)
        except LLMResponseError as exc:
            usage = getattr(exc, "usage", None) or LLMUsage()
            return Proposal(raw=getattr(exc, "raw", "") or "", usage=usage, error=str(exc))
        value: SummaryAnswer = answer.value
        text = value.summary.strip()
        operations: list[Any] = []
        if text:
            operations.append(
                {"op": "SUMMARIZE", "facts": value.facts, "text": text, "reason": value.reasoning}
            )
        return Proposal(
            reasoning=value.reasoning, operations=operations, raw=answer.raw, usage=answer.usage
        )


class LLMExtractor:
    """Asks the LLM for atomic facts in new messages, with valid-time hints; a fact without
    one is valid from its earliest message's time."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    @property
    def name(self) -> str:
        return f"llm:{self.llm.spec.label}"

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        if not episodes:
            return []
        answer = self.llm.ask(EXTRACT_SYSTEM, messages_prompt(episodes), ExtractAnswer)
        value: ExtractAnswer = answer.value
        facts = []
        for item in value.facts:
            numbers = [n for n in item.messages if 1 <= n <= len(episodes)]
            text = item.text.strip()
            if not numbers or not text:
                continue  # a fact tied to no message shown cannot carry provenance
            sources = [episodes[n - 1] for n in dict.fromkeys(numbers)]
            facts.append(
                ExtractedFact(
                    text=text,
                    episode_ids=tuple(e.id for e in sources),
                    valid_from=_valid_from(item.valid_from, sources),
                )
            )
        return facts


def _valid_from(hint: str | None, sources: Sequence[Episode]) -> datetime | None:
    """The model's date when it is one, else the earliest message's time."""
    if hint:
        try:
            parsed = datetime.fromisoformat(hint.strip().replace("Z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is not None:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    times = [e.occurred_at for e in sources if e.occurred_at is not None]
    return min(times) if times else None
