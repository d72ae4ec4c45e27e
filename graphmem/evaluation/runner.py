"""Run an evaluation: ingest each conversation, recall every question under each
configuration, and score the ranked message ids.

Each conversation is ingested through :meth:`Memory.ingest` into a namespace of its own,
``<prefix>-c<n>`` (``prefix`` is ``eval-<UTC time>-<random>``, so repeated runs never mix);
message ids become the episodes' ``external_id`` and session ids their session. A second
namespace, ``<prefix>-c<n>-user``, holds only the messages whose role is ``user``, for the
user-messages-only configuration. Nothing outside these namespaces is read or written.

Times: recency is measured from the moment of the recall, so each conversation's message and
question times are shifted by one constant per conversation that puts its latest question
time at the start of the run (``time_shift``, on by default). The ages of messages relative
to the question are kept; without the shift an old dataset's messages would all look equally
old. Recall runs with ``track_access=False`` so that one configuration's recalls leave no
trace in the graph; ``k`` hits are asked for, and each hit is mapped to message ids: an
episode to its ``external_id``, a fact to its provenance's ``external_ids`` (in order), each
id counted once at its first rank.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from graphmem import __version__
from graphmem.embed.embedder import EmbedderWrapper
from graphmem.embed.loading import load_embedder
from graphmem.errors import DatabaseError
from graphmem.evaluation.baselines import BM25, CosineBaseline
from graphmem.evaluation.configs import (
    Configuration,
    Corpus,
    configurations,
    select,
    with_new_names,
)
from graphmem.evaluation.format import (
    CONTRADICTION_KEYS,
    UPDATE_KEYS,
    EvalMessage,
    EvalQuestion,
    check_dataset,
)
from graphmem.evaluation.metrics import (
    KS,
    UpdateOutcome,
    both_present,
    distinct,
    percentile,
    score_question,
    update_outcome,
)
from graphmem.evaluation.results import (
    ConfigurationResult,
    ContradictionFigures,
    EvalReport,
    Metrics,
    QuestionRecord,
    UpdateFigures,
)
from graphmem.models import Message
from graphmem.servers.scratch import Progress, ServerOptions, on_server
from graphmem.settings import GraphmemSettings, load_settings

if TYPE_CHECKING:
    from graphmem.client import Memory
    from graphmem.embed.embedder import Embedder, Vectors
    from graphmem.servers.connection import Neo4jTarget


class EvalOptions(ServerOptions):
    k: int = Field(default=10, ge=10, le=200)
    heap: str = "1g"
    pagecache: str = "512m"
    time_shift: bool = True
    ingest_batch: int = Field(default=500, ge=1, le=10_000)
    #: Unmeasured recalls (the first questions, default configuration) before measuring.
    warmup: int = Field(default=10, ge=0)
    #: Extra recall configurations, ``NAME:key=value,...`` (see ``configs.variant``).
    variants: tuple[str, ...] = ()
    #: Names of the configurations to run (``default`` always runs first); empty: all.
    only: tuple[str, ...] = ()


# --- the run ----------------------------------------------------------------------------------
class CachingEmbedder(EmbedderWrapper):
    """Embeds each distinct text once: the user-only corpus, the baselines and the repeated
    questions of later configurations reuse the vectors computed for the first use."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self._cache[text] = np.asarray(row, dtype=np.float32)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._cache[t] for t in texts]).astype(np.float32)

    def forget(self, texts: Iterable[str]) -> None:
        """Drop these texts' vectors: their next use embeds them again."""
        for text in texts:
            self._cache.pop(text, None)


@dataclass
class _Conversation:
    id: str
    ns: str
    messages: list[EvalMessage]
    questions: list[EvalQuestion]
    shift: timedelta


@dataclass
class _Answer:
    ranked: list[str]
    total_ms: float
    db_ms: float | None


def _group(
    messages: Sequence[EvalMessage],
    questions: Sequence[EvalQuestion],
    prefix: str,
    now: datetime,
    shift: bool,
) -> list[_Conversation]:
    order: dict[str, list[tuple[int, EvalMessage]]] = {}
    for line, message in enumerate(messages):
        order.setdefault(message.conversation_id, []).append((line, message))
    asked: dict[str, list[EvalQuestion]] = {}
    for question in questions:
        asked.setdefault(question.conversation_id, []).append(question)
    out = []
    for n, (conv, rows) in enumerate(order.items(), start=1):
        rows.sort(key=lambda pair: (pair[1].time, pair[0]))
        its = asked.get(conv, [])
        latest = max((q.question_time for q in its), default=rows[-1][1].time)
        out.append(
            _Conversation(
                id=conv,
                ns=f"{prefix}-c{n}",
                messages=[m for _, m in rows],
                questions=its,
                shift=(now - latest) if shift else timedelta(0),
            )
        )
    return out


def _ingest(memory: Memory, conv: _Conversation, corpus: Corpus, batch: int) -> tuple[int, int]:
    """Store the corpus's messages; returns (messages given, messages merged into another)."""
    chosen = [m for m in conv.messages if corpus == "all" or m.role == "user"]
    ns = conv.ns if corpus == "all" else f"{conv.ns}-user"
    merged = 0
    for start in range(0, len(chosen), batch):
        part = chosen[start : start + batch]
        result = memory.ingest(
            [
                Message(
                    content=m.text,
                    role=m.role,
                    speaker=m.speaker,
                    occurred_at=m.time + conv.shift,
                    external_id=m.message_id,
                    session_id=m.session_id,
                )
                for m in part
            ],
            ns=ns,
        )
        if result.created + len(result.duplicates) != len(part):
            raise DatabaseError(f"ingest into {ns} stored {result.created} of {len(part)} messages")
        merged += len(result.duplicates)
    return len(chosen), merged


def _recall(
    memory: Memory, conv: _Conversation, question: EvalQuestion, spec: Configuration, k: int
) -> _Answer:
    ns = conv.ns if spec.corpus == "all" else f"{conv.ns}-user"
    result = memory.recall(question.question, ns=ns, k=k, config=spec.config, track_access=False)
    hits = spec.rerank(result.hits) if spec.rerank is not None else list(result.hits)
    ids: list[str] = []
    for hit in hits:
        ids.extend(hit.provenance.external_ids)
    return _Answer(distinct(ids), result.timing.total_ms, result.timing.db_ms)


def _baseline(
    embedder: CachingEmbedder, conv: _Conversation, spec: Configuration, k: int
) -> list[_Answer]:
    texts = [m.text for m in conv.messages]
    ids = [m.message_id for m in conv.messages]
    answers = []
    if spec.baseline == "cosine":
        cosine = CosineBaseline(embedder.embed(texts))
        for question in conv.questions:
            began = time.perf_counter()
            order = cosine.rank(embedder.embed([question.question])[0], k)
            answers.append(_Answer([ids[i] for i in order], _ms(began), None))
    else:
        bm25 = BM25(texts)
        for question in conv.questions:
            began = time.perf_counter()
            order = bm25.rank(question.question, k)
            answers.append(_Answer([ids[i] for i in order], _ms(began), None))
    return answers


def _ms(began: float) -> float:
    return (time.perf_counter() - began) * 1000


def summarize(
    questions: Sequence[EvalQuestion], answers: Sequence[_Answer], has_db: bool
) -> Metrics:
    """The averages and counts of one configuration over ``questions``."""
    scores = []
    no_gold = no_gold_empty = 0
    updates = UpdateFigures()
    contradictions = ContradictionFigures()
    for question, answer in zip(questions, answers, strict=True):
        score = score_question(answer.ranked, question.gold_message_ids)
        if score is None:
            no_gold += 1
            no_gold_empty += not answer.ranked
        else:
            scores.append(score)
        pair = question.id_pair(UPDATE_KEYS)
        if pair is not None:
            outcome: UpdateOutcome = update_outcome(answer.ranked, pair[0], pair[1])
            updates.questions += 1
            setattr(updates, outcome, getattr(updates, outcome) + 1)
        pair = question.id_pair(CONTRADICTION_KEYS)
        if pair is not None:
            contradictions.questions += 1
            contradictions.both_in_top10 += both_present(answer.ranked, pair[0], pair[1])
    count = len(scores)

    def mean(values: Iterable[float]) -> float | None:
        """The average over the scored questions; None (not 0) when there are none."""
        return sum(values) / count if count else None

    totals = [a.total_ms for a in answers]
    dbs = [a.db_ms for a in answers if a.db_ms is not None]
    return Metrics(
        questions=len(questions),
        scored=count,
        recall_any={k: mean(s.recall_any[k] for s in scores) for k in KS},
        recall_all={k: mean(s.recall_all[k] for s in scores) for k in KS},
        ndcg_at_10=mean(s.ndcg for s in scores),
        no_gold=no_gold,
        no_gold_empty=no_gold_empty,
        latency_ms_p50=percentile(totals, 50),
        latency_ms_p95=percentile(totals, 95),
        db_ms_p50=percentile(dbs, 50) if has_db else None,
        db_ms_p95=percentile(dbs, 95) if has_db else None,
        updates=updates,
        contradictions=contradictions,
    )


def run_eval(
    messages: Sequence[EvalMessage],
    questions: Sequence[EvalQuestion],
    options: EvalOptions | None = None,
    *,
    settings: GraphmemSettings | None = None,
    target: Neo4jTarget | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    extra: Sequence[Configuration] = (),
) -> EvalReport:
    """Evaluate retrieval on the dataset; see the module docstring.

    ``extra`` configurations run after the built-in ones and the variants; their names must be
    new too.

    With ``options.server == "scratch"`` (the default) a throwaway local Neo4j is started and
    deleted afterwards; with ``"configured"`` the run writes its ``eval-...`` namespaces into
    ``target`` (default: the Neo4j the settings name), where they stay.
    """
    from graphmem.client.base import settings_recall_config

    check_dataset(messages, questions)
    options = options or EvalOptions()
    settings = settings or load_settings()
    # Every configuration is built (and --only/--variant checked) before any server starts.
    specs = select(configurations(settings_recall_config(settings), options.variants), options.only)
    specs += with_new_names(specs, extra)
    if options.server == "configured" and progress is not None:
        progress("writing into the configured Neo4j; the eval-* namespaces stay there afterwards")
    return on_server(
        options,
        settings,
        target,
        progress,
        lambda run_settings, run_target, say: _run(
            messages, questions, options, run_settings, run_target, embedder, say, specs
        ),
    )


def _run(
    messages: Sequence[EvalMessage],
    questions: Sequence[EvalQuestion],
    options: EvalOptions,
    settings: GraphmemSettings,
    target: Neo4jTarget,
    embedder: Embedder | None,
    say: Progress,
    specs: Sequence[Configuration],
) -> EvalReport:
    from graphmem.client import Memory

    started = datetime.now(UTC)
    began = time.perf_counter()
    cached = CachingEmbedder(load_embedder(settings, embedder, say))
    prefix = f"eval-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    conversations = _group(messages, questions, prefix, started, options.time_shift)
    ordered = [q for conv in conversations for q in conv.questions]
    records = [
        QuestionRecord(
            conversation_id=q.conversation_id,
            question=q.question,
            category=q.category or "(none)",
            gold=q.gold_message_ids,
        )
        for q in ordered
    ]
    results: list[ConfigurationResult] = []
    user_messages = merged = 0
    with Memory(settings, target=target, embedder=cached) as memory:
        say(f"Neo4j at {target.uri}; namespaces {prefix}-c*")
        for conv in conversations:
            began_conv = time.perf_counter()
            _, merged_all = _ingest(memory, conv, "all", options.ingest_batch)
            users, _ = _ingest(memory, conv, "user", options.ingest_batch)
            user_messages += users
            merged += merged_all
            say(
                f"ingested conversation {conv.id!r}: {len(conv.messages)} messages "
                f"({users} from the user) in {time.perf_counter() - began_conv:.1f} s"
            )
        # Untimed recalls first, so the first configuration does not pay for a cold server.
        warm = [(conv, q) for conv in conversations for q in conv.questions][: options.warmup]
        for conv, question in warm:
            _recall(memory, conv, question, specs[0], options.k)
        # The measured default then embeds these questions too, as it does every other one.
        cached.forget(question.question for _, question in warm)
        for spec in specs:
            answers: list[_Answer] = []
            spec_began = time.perf_counter()
            for conv in conversations:
                if spec.baseline is not None:
                    answers += _baseline(cached, conv, spec, options.k)
                else:
                    answers += [_recall(memory, conv, q, spec, options.k) for q in conv.questions]
            for record, answer in zip(records, answers, strict=True):
                record.ranked[spec.name] = answer.ranked
            categories = sorted({r.category for r in records})
            has_db = spec.baseline is None
            by_category = {
                cat: summarize(
                    [q for q, r in zip(ordered, records, strict=True) if r.category == cat],
                    [a for a, r in zip(answers, records, strict=True) if r.category == cat],
                    has_db,
                )
                for cat in categories
            }
            result = ConfigurationResult(
                name=spec.name,
                description=spec.description,
                overall=summarize(ordered, answers, has_db),
                by_category=by_category,
            )
            results.append(result)
            any10 = result.overall.recall_any[10]
            say(
                f"{spec.name}: recall_any@10 {'-' if any10 is None else f'{any10:.3f}'} "
                f"({time.perf_counter() - spec_began:.1f} s)"
            )
    finished = datetime.now(UTC)
    return EvalReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=finished,
        wall_seconds=time.perf_counter() - began,
        server=f"{options.server} ({target.uri})",
        embedder=f"{cached.model_id} ({cached.dimension}-d)",
        namespace_prefix=prefix,
        k=options.k,
        conversations=len(conversations),
        messages=len(messages),
        user_messages=user_messages,
        merged_messages=merged,
        questions=len(ordered),
        configurations=results,
        details=records,
    )
