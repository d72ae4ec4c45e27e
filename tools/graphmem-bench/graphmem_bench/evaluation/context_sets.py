"""The data of the context evaluation (:mod:`graphmem_bench.evaluation.context`): the
development sets, the bench's fact questions as a set of their own, and the summariser an
offline run uses.

The development sets are those of ``graphmem eval suite`` (BEAM chats 1-10, RealMem's seven
development personas, the synthetic set of seed 1) and ``bench-facts``: the benchmark's short
templated facts about many people (:mod:`graphmem_bench.bench.synthetic`), one conversation of
facts recorded one after the other over :data:`FACT_SPAN`, each question's gold the newest fact
of the chain it asks about.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graphmem import HeuristicProposer
from graphmem.models.consolidation import Cluster, Proposal
from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion
from graphmem_bench.evaluation.sets import REALMEM_HELD_OUT, DataSet, load_set

#: Facts and questions of the ``bench-facts`` set, and the time its facts are spread over.
BENCH_FACTS = 2000
BENCH_QUESTIONS = 200
FACT_SPAN = timedelta(days=180)
#: Characters of the members' texts an extractive summary holds, about 300 tokens.
SUMMARY_CHARS = 1200


@dataclass(frozen=True)
class ContextSet:
    """A data set for the context evaluation: ``speakers`` prefixes each fact's text with its
    speaker (or role), as messages are; the bench's facts are stored as they are."""

    data: DataSet
    speakers: bool = True

    @property
    def name(self) -> str:
        return self.data.name


def bench_facts(
    count: int = BENCH_FACTS, questions: int = BENCH_QUESTIONS, *, seed: int = 1
) -> DataSet:
    """The bench's facts (``count``, about a tenth of them updates) as one conversation, fact
    ``n`` recorded at ``n / count`` of :data:`FACT_SPAN`, and ``questions`` questions about
    them, each asked an hour after the last fact, its gold the newest fact that answers it."""
    from graphmem_bench.bench.synthetic import generate_facts, generate_queries

    facts = generate_facts(count, seed=seed)
    start = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
    step = FACT_SPAN / max(1, count)
    messages = [
        EvalMessage(
            conversation_id="bench-facts",
            session_id="facts",
            message_id=f"f{fact.index}",
            role="user",
            time=start + fact.index * step,
            text=fact.text,
        )
        for fact in facts
    ]
    asked = start + count * step + timedelta(hours=1)
    asked_about = [
        EvalQuestion(
            conversation_id="bench-facts",
            question=query.text,
            question_time=asked,
            gold_message_ids=(f"f{query.fact_index}",),
            category=facts[query.fact_index].topic,
        )
        for query in generate_queries(facts, questions, seed=seed)
    ]
    return DataSet("bench-facts", messages, asked_about)


def context_sets(data: Path, names: tuple[str, ...] = ()) -> list[ContextSet]:
    """The development sets under ``data`` (``beam/100K``, ``realmem``) and the generated
    ones; ``names`` keeps only those (all when empty)."""
    from graphmem import InvalidInputError

    wanted = names or CONTEXT_SETS
    unknown = [n for n in wanted if n not in CONTEXT_SETS]
    if unknown:
        raise InvalidInputError(
            f"no context set {', '.join(unknown)}; the sets are {', '.join(CONTEXT_SETS)}"
        )
    beam, realmem = data / "beam" / "100K", data / "realmem"
    needed = {"beam-1-10": beam, "realmem-dev": realmem}
    missing = [str(p) for n, p in needed.items() if n in wanted and not p.is_dir()]
    if missing:
        raise InvalidInputError(f"the context evaluation needs {' and '.join(missing)}")
    held = ",".join(REALMEM_HELD_OUT)
    out = []
    for name in wanted:
        if name == "beam-1-10":
            out.append(ContextSet(load_set(f"beam-1-10={beam}@1-10")))
        elif name == "realmem-dev":
            out.append(ContextSet(load_set(f"realmem-dev={realmem}@-{held}")))
        elif name == "synthetic-dev":
            out.append(ContextSet(load_set("synthetic-dev=synthetic:1")))
        else:
            out.append(ContextSet(bench_facts(), speakers=False))
    return out


#: The development sets of the context evaluation, in the order they run.
CONTEXT_SETS = ("beam-1-10", "realmem-dev", "synthetic-dev", "bench-facts")


def extractive_summary(texts: list[str], limit: int = SUMMARY_CHARS) -> str:
    """The members' texts, each cut at a word to an equal share of ``limit`` characters (at
    least 60), joined by "; ": a stand-in for a summary that an offline run can write."""
    share = max(60, limit // max(1, len(texts)))
    parts = []
    for text in texts:
        flat = " ".join(text.split())
        if len(flat) > share:
            cut = flat[:share].rsplit(" ", 1)[0] or flat[:share]
            flat = cut.rstrip(" ,;:") + "..."
        parts.append(flat)
    return "; ".join(parts)


class SummarisingProposer:
    """The context evaluation's proposer: graphmem's offline :class:`HeuristicProposer` for
    consolidation's clusters, and for its summaries either an LLM proposer's ``summarize``
    (``llm``) or, offline, an extractive one (:func:`extractive_summary` over every member)."""

    def __init__(self, llm: Any = None) -> None:
        self._heuristic = HeuristicProposer()
        self._llm = llm
        self.name = "heuristic+llm-summaries" if llm is not None else "heuristic+extractive"

    @property
    def model(self) -> str | None:
        return None if self._llm is None else str(self._llm.model)

    @property
    def label(self) -> str:
        """How the summaries arm is named in the report."""
        if self._llm is None:
            return "summaries (extractive, no LLM)"
        return f"summaries (LLM {self.model})"

    def propose(self, cluster: Cluster) -> Proposal:
        return self._heuristic.propose(cluster)

    def summarize(self, cluster: Cluster) -> Proposal:
        if self._llm is not None:
            answer: Proposal = self._llm.summarize(cluster)
            return answer
        numbers = [fact.number for fact in cluster.facts]
        text = extractive_summary([fact.text for fact in cluster.facts])
        operation = {"op": "SUMMARIZE", "facts": numbers, "text": text, "reason": "extractive"}
        return Proposal(reasoning="extractive", operations=[operation])
