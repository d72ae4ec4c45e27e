"""Run an evaluation: ingest each conversation, recall every question under each
configuration, and score the ranked message ids.

Each conversation is ingested through :meth:`Memory.ingest` into a namespace of its own,
``<prefix>-c<n>`` (``prefix`` is ``eval-<UTC time>-<random>``, so repeated runs never mix);
message ids become the episodes' ``external_id`` and session ids their session. A second
namespace, ``<prefix>-c<n>-user``, holds only the messages whose role is ``user``, for the
user-messages-only configuration. Nothing outside these namespaces is read or written. With
several data sets (:func:`run_sets`), set ``s`` uses ``<prefix>-s<s>-c<n>``, on a scratch Neo4j
of its own unless the run writes into the configured one.

Times: recency is measured from the moment of the recall, so each conversation's message and
question times are shifted by one constant per conversation that puts its latest question
time at the start of the run (``time_shift``, on by default). The ages of messages relative
to the question are kept; without the shift an old dataset's messages would all look equally
old. Recall runs with ``track_access=False`` so that one configuration's recalls leave no
trace in the graph; ``k`` hits are asked for, and each hit is mapped to message ids: an
episode to its ``external_id``, a fact to its provenance's ``external_ids`` (in order), each
id counted once at its first rank. A question that names its own turn (``extra.own_turn_id``)
is recalled with ``until`` at that message's time, and the baselines rank only the messages
sent before it. Messages that share a time are put apart in their order
(:func:`~graphmem_bench.evaluation.conversations.spread_ties`).

Recall's configurations are measured interleaved (:func:`_measure`): each question through
every configuration, in an order that rotates from question to question, after a warm-up
through all of them, so that load and caches fall on every configuration alike. Each hit is
kept with its score breakdown and whether it is gold (see
:mod:`graphmem_bench.evaluation.calibration`).
"""

from __future__ import annotations

import secrets
import time
from bisect import bisect_left
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypedDict, Unpack

import numpy as np
from pydantic import Field

from graphmem import DatabaseError, GraphmemSettings, InvalidInputError, __version__, load_settings
from graphmem.models import Message
from graphmem.testing import (
    EmbedderWrapper,
    Progress,
    ServerOptions,
    episode_text,
    load_embedder,
)
from graphmem_bench.evaluation.baselines import BM25, CosineBaseline, rrf
from graphmem_bench.evaluation.calibration import calibration, hit_record
from graphmem_bench.evaluation.configs import (
    Configuration,
    Corpus,
    configurations,
    select,
    with_new_names,
)
from graphmem_bench.evaluation.conversations import Conversation, asked_at, group
from graphmem_bench.evaluation.format import EvalMessage, EvalQuestion, check_dataset
from graphmem_bench.evaluation.metrics import Answer, distinct, summarize
from graphmem_bench.evaluation.results import (
    Band,
    ConfigurationResult,
    EvalReport,
    QuestionRecord,
    SetReport,
    SuiteReport,
)
from graphmem_bench.evaluation.sets import DataSet, check_names
from graphmem_bench.run import measuring_run

if TYPE_CHECKING:
    from graphmem import Memory
    from graphmem.testing import Embedder, Neo4jTarget, Vectors


class EvalOptions(ServerOptions):
    k: int = Field(default=10, ge=10, le=200)
    heap: str = "1g"
    pagecache: str = "512m"
    time_shift: bool = True
    ingest_batch: int = Field(default=500, ge=1, le=10_000)
    #: How many of the first questions are recalled under every configuration, unmeasured,
    #: before measuring (a warm-up: no configuration pays for a cold server).
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


def _ingest(memory: Memory, conv: Conversation, corpus: Corpus, batch: int) -> tuple[int, int]:
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
                    occurred_at=conv.times[m.message_id] + conv.shift,
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
    memory: Memory, conv: Conversation, question: EvalQuestion, spec: Configuration, k: int
) -> Answer:
    ns = conv.ns if spec.corpus == "all" else f"{conv.ns}-user"
    asked = asked_at(conv, question)
    result = memory.recall(
        question.question,
        ns=ns,
        k=k,
        config=spec.config,
        track_access=False,
        until=None if asked is None else asked + conv.shift,
    )
    hits = spec.rerank(result.hits) if spec.rerank is not None else list(result.hits)
    ids: list[str] = []
    kept = []
    for hit in hits:
        ids.extend(hit.provenance.external_ids)
        kept.append(
            hit_record(
                hit.kind,
                hit.provenance.external_ids,
                hit.score,
                hit.scores.model_dump(),
                question.gold_message_ids,
            )
        )
    return Answer(distinct(ids), result.timing.total_ms, result.timing.db_ms, kept)


def _baseline(
    embedder: CachingEmbedder, conv: Conversation, spec: Configuration, k: int
) -> list[Answer]:
    """The baseline's ranking of each question's messages: those sent before it was asked,
    embedded as graphmem embeds an episode (``speaker: text``)."""
    ids = [m.message_id for m in conv.messages]
    times = [conv.times[m.message_id] for m in conv.messages]  # in time order
    cosine = bm25 = None
    if spec.baseline in ("cosine", "rrf"):
        texts = [episode_text(m.text, m.speaker) for m in conv.messages]
        cosine = CosineBaseline(embedder.embed(texts))
    if spec.baseline in ("bm25", "rrf"):
        bm25 = BM25([m.text for m in conv.messages])
    answers = []
    for question in conv.questions:
        began = time.perf_counter()
        asked = asked_at(conv, question)
        visible = len(ids) if asked is None else bisect_left(times, asked)
        rankings = []
        if cosine is not None:
            similar = cosine.scores(embedder.embed([question.question])[0])[:visible]
            rankings.append([int(i) for i in np.argsort(-similar, kind="stable")])
        if bm25 is not None:
            lexical = bm25.scores(question.question)[:visible]
            order = sorted((i for i, s in enumerate(lexical) if s > 0), key=lambda i: -lexical[i])
            rankings.append(order)
        order = rrf(rankings, k) if spec.baseline == "rrf" else rankings[0][:k]
        answers.append(Answer([ids[i] for i in order], _ms(began), None))
    return answers


def _ms(began: float) -> float:
    return (time.perf_counter() - began) * 1000


class RunWith(TypedDict, total=False):
    """Where and with what :func:`run_sets` (and :func:`run_eval`) run."""

    settings: GraphmemSettings | None
    target: Neo4jTarget | None
    embedder: Embedder | None
    progress: Progress | None
    extra: Sequence[Configuration]


def run_eval(
    messages: Sequence[EvalMessage],
    questions: Sequence[EvalQuestion],
    options: EvalOptions | None = None,
    **given: Unpack[RunWith],
) -> EvalReport:
    """Evaluate retrieval on one data set: :func:`run_sets` with that set alone."""
    data = DataSet("data", list(messages), list(questions))
    return run_sets([data], options, **given).sets[0].report


def run_sets(
    sets: Sequence[DataSet],
    options: EvalOptions | None = None,
    *,
    settings: GraphmemSettings | None = None,
    target: Neo4jTarget | None = None,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    extra: Sequence[Configuration] = (),
) -> SuiteReport:
    """Evaluate retrieval on each data set with one embedder, each set on a scratch Neo4j of
    its own (or all in the configured one); see the module docstring.

    ``extra`` configurations run after the built-in ones and the variants; their names must be
    new too.

    With ``options.server == "scratch"`` (the default) a throwaway local Neo4j is started and
    deleted afterwards; with ``"configured"`` the run writes its ``eval-...`` namespaces into
    ``target`` (default: the Neo4j the settings name), where they stay.
    """
    from graphmem.testing import settings_recall_config

    if not sets:
        raise InvalidInputError("no data set to evaluate")
    check_names(sets)
    for data in sets:
        try:
            check_dataset(data.messages, data.questions)
        except InvalidInputError as exc:
            raise InvalidInputError(f"data set {data.name!r}: {exc}") from None
    options = options or EvalOptions()
    settings = settings or load_settings()
    # Every configuration is built (and --only/--variant checked) before any server starts.
    specs = select(configurations(settings_recall_config(settings), options.variants), options.only)
    specs += with_new_names(specs, extra)
    say: Progress = progress or (lambda _line: None)
    if options.server == "configured":
        say("writing into the configured Neo4j; the eval-* namespaces stay there afterwards")
    started = datetime.now(UTC)
    began = time.perf_counter()
    cached = CachingEmbedder(load_embedder(settings, embedder, say))
    prefix = f"eval-{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    reports = []
    for n, data in enumerate(sets, start=1):
        set_prefix = prefix if len(sets) == 1 else f"{prefix}-s{n}"
        if len(sets) > 1:
            say(f"data set {data.name!r} ({n} of {len(sets)})")

        # A scratch server per set: no set shares its indexes (and their statistics, such as
        # the fulltext index's term frequencies) with another.
        with measuring_run(
            options, settings=settings, target=target, embedder=cached, progress=say
        ) as run:
            memory = run.memory()
            say(f"Neo4j at {run.target.uri}; namespaces {set_prefix}-c*")
            server = (run.target.uri, run.settle)
            report = _run_set(data, memory, cached, options, set_prefix, say, specs, server)
        reports.append(SetReport(name=data.name, held_out=data.held_out, report=report))
    return SuiteReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        wall_seconds=time.perf_counter() - began,
        sets=reports,
        calibration=_pooled_calibration(reports, specs[0].name),
    )


def _pooled_calibration(reports: Sequence[SetReport], name: str) -> dict[str, list[Band]]:
    """Configuration ``name``'s hits by score band, pooled over the development sets and over
    the held-out ones (a group without sets is left out)."""
    pooled = {}
    for role, held_out in (("development", False), ("held out", True)):
        chosen = [s.report for s in reports if s.held_out == held_out]
        if chosen:
            hits = (h for r in chosen for record in r.details for h in record.hits.get(name, ()))
            pooled[role] = calibration(hits)
    return pooled


def _record(q: EvalQuestion) -> QuestionRecord:
    """The report's record of one question, before any configuration ranked for it."""
    return QuestionRecord(
        conversation_id=q.conversation_id,
        question=q.question,
        category=q.category or "(none)",
        gold=q.gold_message_ids,
    )


def _ingest_all(
    memory: Memory, conversations: Sequence[Conversation], options: EvalOptions, say: Progress
) -> tuple[int, int]:
    """Every conversation ingested twice (all messages, the user's alone): the user's
    messages, and the messages merged as repeats."""
    user_messages = merged = 0
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
    return user_messages, merged


def rotated(specs: Sequence[Configuration], n: int) -> list[Configuration]:
    """The configurations in the order the ``n``-th question (0-based) runs them: the list
    rotated by ``n``, so that each one comes first, second, ... equally often."""
    if not specs:
        return []
    turn = n % len(specs)
    return [*specs[turn:], *specs[:turn]]


def _measure(
    memory: Memory,
    cached: CachingEmbedder,
    conversations: Sequence[Conversation],
    specs: Sequence[Configuration],
    options: EvalOptions,
    settle: Callable[[str], object],
    say: Progress,
) -> dict[str, list[Answer]]:
    """Every configuration's answer to every question, in question order.

    Recall's configurations run interleaved: each question through every one of them, in an
    order rotating from question to question, after an untimed warm-up of the first
    questions through all of them and a wait until the server is idle; the question's
    vector is computed before its configurations run, so no configuration's latency holds
    it. The baselines, computed outside Neo4j, run afterwards."""
    recalls = [spec for spec in specs if spec.baseline is None]
    asked = [(conv, q) for conv in conversations for q in conv.questions]
    for n, (conv, question) in enumerate(asked[: options.warmup]):
        for spec in rotated(recalls, n):
            _recall(memory, conv, question, spec, options.k)
    settle("measuring")
    answers: dict[str, list[Answer]] = {spec.name: [] for spec in specs}
    began = time.perf_counter()
    for n, (conv, question) in enumerate(asked):
        cached.embed([question.question])
        for spec in rotated(recalls, n):
            answers[spec.name].append(_recall(memory, conv, question, spec, options.k))
        if (n + 1) % 100 == 0 or n + 1 == len(asked):
            say(
                f"recalled {n + 1} of {len(asked)} questions under {len(recalls)} "
                f"configurations ({time.perf_counter() - began:.1f} s)"
            )
    for spec in specs:
        if spec.baseline is not None:
            for conv in conversations:
                answers[spec.name] += _baseline(cached, conv, spec, options.k)
    return answers


def _result(
    spec: Configuration,
    ordered: Sequence[EvalQuestion],
    records: Sequence[QuestionRecord],
    answers: Sequence[Answer],
) -> ConfigurationResult:
    """One configuration's figures, overall and per category; its ranked lists and hits go
    into each question's record."""
    for record, answer in zip(records, answers, strict=True):
        record.ranked[spec.name] = answer.ranked
        if answer.hits is not None:
            record.hits[spec.name] = answer.hits
    has_db = spec.baseline is None
    by_category = {
        cat: summarize(
            [q for q, r in zip(ordered, records, strict=True) if r.category == cat],
            [a for a, r in zip(answers, records, strict=True) if r.category == cat],
            has_db,
        )
        for cat in sorted({r.category for r in records})
    }
    return ConfigurationResult(
        name=spec.name,
        description=spec.description,
        overall=summarize(ordered, answers, has_db),
        by_category=by_category,
    )


def _ratio(results: Sequence[ConfigurationResult], top: str, bottom: str) -> float | None:
    """The p95 database time of configuration ``top`` over ``bottom``'s (None without both)."""
    named = {r.name: r.overall.db_ms_p95 for r in results}
    over, under = named.get(top), named.get(bottom)
    return over / under if over is not None and under else None


def _run_set(
    data: DataSet,
    memory: Memory,
    cached: CachingEmbedder,
    options: EvalOptions,
    prefix: str,
    say: Progress,
    specs: Sequence[Configuration],
    server: tuple[str, Callable[[str], object]],
) -> EvalReport:
    """One set on one server (its uri, and a wait until it is idle): ingest, measure, score."""
    uri, settle = server
    started = datetime.now(UTC)
    began = time.perf_counter()
    conversations = group(data.messages, data.questions, prefix, started, options.time_shift)
    ordered = [q for conv in conversations for q in conv.questions]
    records = [_record(q) for q in ordered]
    user_messages, merged = _ingest_all(memory, conversations, options, say)
    answers = _measure(memory, cached, conversations, specs, options, settle, say)
    results = [_result(spec, ordered, records, answers[spec.name]) for spec in specs]
    for result in results:
        any10 = result.overall.recall_any[10]
        say(f"{result.name}: recall_any@10 {'-' if any10 is None else f'{any10:.3f}'}")
    default = specs[0].name
    return EvalReport(
        graphmem_version=__version__,
        started_at=started,
        finished_at=datetime.now(UTC),
        wall_seconds=time.perf_counter() - began,
        server=f"{options.server} ({uri})",
        embedder=f"{cached.model_id} ({cached.dimension}-d)",
        namespace_prefix=prefix,
        k=options.k,
        conversations=len(conversations),
        messages=len(data.messages),
        skipped_messages=len(data.skipped),
        user_messages=user_messages,
        merged_messages=merged,
        questions=len(ordered),
        configurations=results,
        details=records,
        calibration=calibration(hit for a in answers[default] for hit in a.hits or ()),
        db_p95_ratio=_ratio(results, default, "vector-only"),
    )
