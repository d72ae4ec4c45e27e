"""The context evaluation: how often a ``context`` block of a given budget holds the messages
that answer a question, with consolidation's tier and summary passes on and off.

Tiers and summaries act on facts, so each message is stored as one fact, ``"speaker: text"``
(the role where the message names no speaker; cut to the 10,000 characters a fact may hold;
identical texts of a conversation once, standing for each of their messages), in a namespace
per conversation, ``<prefix>-c<n>``. A fact is recorded when its message was sent: the facts
are remembered, exported, given their messages' times as ``recorded_at`` and imported again
(an import keeps ids and both clocks), each conversation's times shifted by one constant that
puts its latest message or question at the start of the set's run.

Then, per conversation, in this order:

1. one consolidation with the tier and summary passes off (graphmem's offline proposer merges
   near-exact duplicates; a merged fact's messages follow it to its survivor), so that the
   arms' own runs find no new facts to cluster;
2. the history: every other question (the first, third, ... in time order) is asked through
   ``context`` with access tracking on, so that what the blocks show is stamped as used;
3. the other questions (those with gold messages) are measured under four arms, each on the
   same facts with the same history: ``baseline`` (no further consolidation), ``tiers`` (a
   run with the tier pass), ``summaries`` (a run with the summary pass) and ``both``. Each
   measured question is asked with ``context(question, budget_tokens=..., k=...,
   track_access=False)``, so no arm leaves a trace; then the arm's runs are undone.

Every question is asked after the whole conversation (no ``until``): tiers and summaries are
written by a consolidation after the conversation, which a question asked as of an earlier turn
could not see. A block holds a gold message when it shows the fact of that message, or a
summary whose members include it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import Field

from graphmem import DatabaseError, GraphmemSettings, InvalidInputError, __version__, load_settings
from graphmem.models import MAX_TEXT_CHARS, FactInput
from graphmem.testing import Progress, ServerOptions, load_embedder
from graphmem_bench.evaluation.context_report import (
    ArmFigures,
    ContextRecord,
    ContextReport,
    ContextSetReport,
)
from graphmem_bench.evaluation.context_sets import ContextSet, SummarisingProposer
from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion, check_dataset
from graphmem_bench.evaluation.runner import CachingEmbedder
from graphmem_bench.evaluation.sets import check_names
from graphmem_bench.run import measuring_run

if TYPE_CHECKING:
    from graphmem import Memory
    from graphmem.models import ContextBlock
    from graphmem.testing import Embedder, Neo4jTarget

#: The source of the facts the evaluation stores.
SOURCE = "eval-context"


class ContextEvalOptions(ServerOptions):
    heap: str = "1g"
    pagecache: str = "512m"
    budget_tokens: int = Field(default=1000, ge=50, le=100_000)
    #: Hits ``context`` may use (its default).
    k: int = Field(default=20, ge=1, le=200)
    #: Measured questions per set at most, spread evenly over the set; None: all.
    max_questions: int | None = Field(default=None, ge=1)
    #: Conversations per set at most (the first ones); None: all.
    max_conversations: int | None = Field(default=None, ge=1)
    batch: int = Field(default=500, ge=1, le=1000)


@dataclass(frozen=True)
class Arm:
    name: str
    tiers: bool
    summaries: bool


ARMS = (
    Arm("baseline", False, False),
    Arm("tiers", True, False),
    Arm("summaries", False, True),
    Arm("both", True, True),
)


@dataclass
class _Conversation:
    id: str
    ns: str
    messages: list[EvalMessage]
    history: list[EvalQuestion]
    measured: list[EvalQuestion]
    #: Each fact's messages, by fact id.
    facts: dict[str, list[str]] = field(default_factory=dict)


def _conversations(
    data: Sequence[EvalMessage], asked: Sequence[EvalQuestion], prefix: str
) -> list[_Conversation]:
    """The set's conversations, each with its messages in time order and its questions split
    alternately, in time order, into history and measured (the measured ones with gold)."""
    messages: dict[str, list[tuple[int, EvalMessage]]] = {}
    for line, message in enumerate(data):
        messages.setdefault(message.conversation_id, []).append((line, message))
    questions: dict[str, list[tuple[int, EvalQuestion]]] = {}
    for line, question in enumerate(asked):
        questions.setdefault(question.conversation_id, []).append((line, question))
    out = []
    for n, (conv, rows) in enumerate(messages.items(), start=1):
        rows.sort(key=lambda pair: (pair[1].time, pair[0]))
        its = sorted(questions.get(conv, []), key=lambda pair: (pair[1].question_time, pair[0]))
        ordered = [q for _, q in its]
        out.append(
            _Conversation(
                id=conv,
                ns=f"{prefix}-c{n}",
                messages=[m for _, m in rows],
                history=ordered[0::2],
                measured=[q for q in ordered[1::2] if q.gold_message_ids],
            )
        )
    return out


def _fact_text(message: EvalMessage, speakers: bool) -> str:
    text = f"{message.speaker or message.role}: {message.text}" if speakers else message.text
    return text[:MAX_TEXT_CHARS]


def _load(memory: Memory, conv: _Conversation, speakers: bool, now: datetime, batch: int) -> None:
    """Store the conversation's messages as facts recorded at their (shifted) times."""
    asked = [q.question_time for q in conv.history + conv.measured]
    shift = now - max([conv.messages[-1].time, *asked])
    by_text: dict[str, list[EvalMessage]] = {}
    for message in conv.messages:
        by_text.setdefault(_fact_text(message, speakers), []).append(message)
    texts = list(by_text)
    recorded: dict[str, str] = {}
    for start in range(0, len(texts), batch):
        part = texts[start : start + batch]
        stored = memory.remember_many([FactInput(text=t, source=SOURCE) for t in part], ns=conv.ns)
        for fact, text in zip(stored, part, strict=True):
            conv.facts[fact.id] = [m.message_id for m in by_text[text]]
            recorded[fact.id] = (by_text[text][0].time + shift).isoformat()
    records = list(memory.export(conv.ns))
    for record in records:
        if record.get("record") == "node" and "Fact" in record.get("labels", ()):
            record["properties"]["recorded_at"] = recorded[record["key"]]
    memory.drop_namespace(conv.ns, confirm=True)
    result = memory.import_(records, ns=conv.ns)
    if result.remapped or result.nodes.get("Fact") != len(texts):
        raise DatabaseError(f"the facts of {conv.ns} did not come back as they were exported")


def _settle(memory: Memory, conv: _Conversation) -> int:
    """The shared consolidation (no tier or summary pass); each merged fact's messages go to
    its survivor. Returns the facts merged."""
    result = memory.consolidate(ns=conv.ns, force=True, tiers=False, summaries=False)
    merged = 0
    for op in result.applied:
        if op.op != "MERGE":
            continue
        for fact_id in op.facts:
            fact = memory.get(fact_id, ns=conv.ns)
            survivor = getattr(fact, "superseded_by", None)
            if getattr(fact, "status", None) == "merged" and survivor:
                conv.facts.setdefault(survivor, []).extend(conv.facts.pop(fact_id, []))
                merged += 1
    return merged


def _chosen(convs: Sequence[_Conversation], most: int | None) -> list[tuple[_Conversation, int]]:
    """The measured questions (conversation, index), at most ``most`` spread evenly."""
    pairs = [(conv, i) for conv in convs for i in range(len(conv.measured))]
    if most is None or len(pairs) <= most:
        return pairs
    return [pairs[i * len(pairs) // most] for i in range(most)]


@dataclass
class _ArmState:
    """What an arm's runs did: their ids by namespace, the summaries' members, the hot facts."""

    runs: dict[str, str] = field(default_factory=dict)
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hot: set[str] = field(default_factory=set)
    cold: int = 0


def _consolidate(memory: Memory, convs: Sequence[_Conversation], arm: Arm) -> _ArmState:
    state = _ArmState()
    if not (arm.tiers or arm.summaries):
        return state
    for conv in convs:
        result = memory.consolidate(
            ns=conv.ns, force=True, tiers=arm.tiers, summaries=arm.summaries
        )
        if result.run_id is None or result.status not in ("finished", "partial"):
            raise DatabaseError(f"the {arm.name} run on {conv.ns} ended {result.status}")
        state.runs[conv.ns] = result.run_id
        for op in result.applied:
            if op.op == "SUMMARIZE" and op.summary_id:
                state.members[op.summary_id] = op.facts
            elif op.tier == "hot":
                state.hot.add(op.facts[0])
            elif op.tier == "cold":
                state.cold += 1
    return state


def _shown(block: ContextBlock, conv: _Conversation, state: _ArmState) -> tuple[set[str], set[str]]:
    """The messages the block holds: by the facts it shows, and by the summaries' members."""
    own = {m for f in block.fact_ids for m in conv.facts.get(f, ())}
    via = {
        m
        for f in block.fact_ids
        for member in state.members.get(f, ())
        for m in conv.facts.get(member, ())
    }
    return own, via


def _measure(
    memory: Memory,
    arm: Arm,
    label: str,
    chosen: Sequence[tuple[_Conversation, int]],
    records: Sequence[ContextRecord],
    options: ContextEvalOptions,
    state: _ArmState,
) -> ArmFigures:
    all_gold = any_gold = own_line = 0
    hot_lines = tokens = 0
    for (conv, index), record in zip(chosen, records, strict=True):
        question = conv.measured[index]
        block = memory.context(
            question.question,
            ns=conv.ns,
            budget_tokens=options.budget_tokens,
            k=options.k,
            track_access=False,
        )
        own, via = _shown(block, conv, state)
        gold = set(question.gold_message_ids)
        held = own | via
        all_gold += gold <= held
        any_gold += bool(gold & held)
        own_line += bool(gold & own)
        hot_lines += sum(f in state.hot for f in block.fact_ids)
        tokens += block.tokens
        record.shown[arm.name] = sorted(held)
    count = len(chosen)
    return ArmFigures(
        name=arm.name,
        label=label,
        questions=count,
        all_gold=all_gold,
        any_gold=any_gold,
        any_own_line=own_line,
        hot=len(state.hot),
        cold=state.cold,
        summaries=len(state.members),
        hot_lines=hot_lines / count if count else 0.0,
        tokens=tokens / count if count else 0.0,
    )


def _label(arm: Arm, proposer: SummarisingProposer) -> str:
    summaries = proposer.label
    return {
        "baseline": "baseline (no tier pass, no summaries)",
        "tiers": "tiers",
        "summaries": summaries,
        "both": f"tiers + {summaries}",
    }[arm.name]


def _run_set(
    one: ContextSet,
    memory: Memory,
    proposer: SummarisingProposer,
    options: ContextEvalOptions,
    prefix: str,
    say: Progress,
) -> ContextSetReport:
    began = time.perf_counter()
    now = datetime.now(UTC)
    convs = _conversations(one.data.messages, one.data.questions, prefix)
    convs = convs[: options.max_conversations]
    merged = 0
    for conv in convs:
        clock = time.perf_counter()
        _load(memory, conv, one.speakers, now, options.batch)
        merged += _settle(memory, conv)
        say(
            f"stored conversation {conv.id!r}: {len(conv.facts)} facts from "
            f"{len(conv.messages)} messages in {time.perf_counter() - clock:.1f} s"
        )
    clock = time.perf_counter()
    history = 0
    for conv in convs:
        for question in conv.history:
            memory.context(
                question.question,
                ns=conv.ns,
                budget_tokens=options.budget_tokens,
                k=options.k,
                track_access=True,
            )
            history += 1
    say(f"history: {history} questions asked in {time.perf_counter() - clock:.1f} s")
    chosen = _chosen(convs, options.max_questions)
    records = [
        ContextRecord(
            conversation_id=conv.id,
            question=conv.measured[i].question,
            gold=conv.measured[i].gold_message_ids,
        )
        for conv, i in chosen
    ]
    arms = []
    for arm in ARMS:
        clock = time.perf_counter()
        state = _consolidate(memory, convs, arm)
        figures = _measure(memory, arm, _label(arm, proposer), chosen, records, options, state)
        for ns, run_id in state.runs.items():
            memory.undo(run_id, ns=ns)
        arms.append(figures)
        say(
            f"{arm.name}: all gold {figures.all_gold}/{figures.questions}, any "
            f"{figures.any_gold}/{figures.questions} ({time.perf_counter() - clock:.1f} s)"
        )
    return ContextSetReport(
        name=one.name,
        conversations=len(convs),
        facts=sum(len(c.facts) for c in convs),
        merged=merged,
        history_questions=history,
        measured_questions=len(chosen),
        arms=arms,
        details=records,
        wall_seconds=time.perf_counter() - began,
    )


def run_context(
    sets: Sequence[ContextSet],
    options: ContextEvalOptions | None = None,
    *,
    settings: GraphmemSettings | None = None,
    target: Neo4jTarget | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> ContextReport:
    """Evaluate ``context`` with tiers and summaries on and off on each set (see the module),
    all on one scratch Neo4j (or in the configured one, ``target``).
    Summaries are written by the LLM when the settings configure one, else extractively."""
    if not sets:
        raise InvalidInputError("no data set to evaluate")
    check_names([s.data for s in sets])
    for one in sets:
        try:
            check_dataset(one.data.messages, one.data.questions)
        except InvalidInputError as exc:
            raise InvalidInputError(f"data set {one.name!r}: {exc}") from None
    options = options or ContextEvalOptions()
    settings = settings or load_settings()
    say: Progress = progress or (lambda _line: None)
    llm: Any = None
    if settings.llm:
        from graphmem.testing import LLM, LLMProposer

        llm = LLMProposer(LLM.from_settings(settings))
    proposer = SummarisingProposer(llm)
    started = datetime.now(UTC)
    began = time.perf_counter()
    cached = CachingEmbedder(load_embedder(settings, embedder, say))
    prefix = f"eval-context-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    # One server for every set: the arms are compared within a set, on the same indexes.
    with measuring_run(
        options, settings=settings, target=target, embedder=cached, progress=say
    ) as run:
        uri = run.target.uri
        memory = run.memory(proposer=proposer)
        say(f"Neo4j at {uri}; namespaces {prefix}-s*")
        reports = []
        for n, one in enumerate(sets, start=1):
            say(f"data set {one.name!r} ({n} of {len(sets)})")
            reports.append(_run_set(one, memory, proposer, options, f"{prefix}-s{n}", say))
    return ContextReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        wall_seconds=time.perf_counter() - began,
        server=options.server if options.server == "scratch" else f"configured ({uri})",
        embedder=f"{cached.model_id} ({cached.dimension}-d)",
        summariser=proposer.label.removeprefix("summaries ").strip("()"),
        namespace_prefix=prefix,
        budget_tokens=options.budget_tokens,
        k=options.k,
        max_questions=options.max_questions,
        max_conversations=options.max_conversations,
        sets=reports,
    )
