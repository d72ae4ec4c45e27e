"""What the two clients share: their settings, embedder, extractor, token counter and core,
and the checks of their constructor arguments."""

from __future__ import annotations

import collections
import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import neo4j

from graphmem.client.api_sync import AuditAPI, MemoryAPI
from graphmem.client.graph import AsyncGraph, Graph
from graphmem.core.checks import checked_flag, resolve_config
from graphmem.core.consolidate.config import ConsolidationConfig
from graphmem.core.consolidate.heuristic import HeuristicProposer
from graphmem.core.extraction import ExtractedFact, Extractor, extracted_facts, extractor_errors
from graphmem.core.importance import ImportanceConfig
from graphmem.core.memory_core import MemoryCore
from graphmem.core.plans import Extract, Plan, Propose
from graphmem.core.recall.ranking import RecallConfig
from graphmem.embed.embedder import Embedder
from graphmem.embed.tokens import TokenCounter, counter_from_setting
from graphmem.errors import ClientUsageError, GraphmemError, InvalidInputError
from graphmem.models.consolidation import ConsolidationResult, Proposal
from graphmem.ops.table import Operation
from graphmem.servers.connection import Neo4jTarget
from graphmem.settings import GraphmemSettings, load_settings

if TYPE_CHECKING:
    from graphmem.llm.client import LLM


T = TypeVar("T")


B = TypeVar("B", bound=Callable[..., Any])


def rows_of(result: neo4j.Result, plain: bool) -> list[dict[str, Any]]:
    """A result's rows as dicts: with ``plain`` as the driver read them (rows of maps, lists and
    plain values, see :class:`~graphmem.core.plans.Run`), else through ``Result.data``."""
    return [dict(record) for record in result] if plain else result.data()


@dataclass(frozen=True)
class StatementTime:
    """One statement a client ran inside :func:`statement_times`: its query's name, the
    client's wall time from sending it to its last row (ms), the server's own time for it
    (``result_available_after + result_consumed_after``, ms) and the rows it returned; or, named
    ``transaction:read`` / ``transaction:write``, one whole transaction (begin, its statements,
    commit) as the client timed it, with no server time."""

    name: str
    client_ms: float
    server_ms: float | None
    rows: int


_STATEMENTS: ContextVar[list[StatementTime] | None] = ContextVar(
    "graphmem_statements", default=None
)


@contextmanager
def statement_times() -> Iterator[list[StatementTime]]:
    """Within the block, every statement and transaction this thread's (or task's) clients run
    is timed into the list it yields: where a call's database time goes, statement by statement
    and round trip by round trip. Outside it nothing is timed."""
    times: list[StatementTime] = []
    token = _STATEMENTS.set(times)
    try:
        yield times
    finally:
        _STATEMENTS.reset(token)


def timing_statements() -> list[StatementTime] | None:
    """The list of the enclosing :func:`statement_times`, if any."""
    return _STATEMENTS.get()


def statement_time(
    name: str, started: float, summary: neo4j.ResultSummary | None, rows: int
) -> StatementTime:
    """A :class:`StatementTime` of a statement sent at ``started`` (``time.perf_counter()``)
    whose last row has just been read; ``summary`` None for a transaction."""
    server = None
    if summary is not None:
        server = float((summary.result_available_after or 0) + (summary.result_consumed_after or 0))
    return StatementTime(name, (time.perf_counter() - started) * 1000, server, rows)


#: When the request being served must be answered (``time.monotonic()``), if it has a deadline.
_DEADLINE: ContextVar[float | None] = ContextVar("graphmem_deadline", default=None)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within the block, each transaction's time limit is at most what is left of ``seconds``
    (the service's request deadline), so that Neo4j stops the work of a request that can no
    longer be answered."""
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_limited(body: B, timeout: float | None) -> B:
    """``body``, a transaction function, with Neo4j's time limit set when there is one: the
    ``timeout``, or less when the request's :func:`deadline` comes first."""
    end = _DEADLINE.get()
    if end is not None:
        left = max(end - time.monotonic(), 0.001)
        timeout = left if timeout is None else min(timeout, left)
    return body if timeout is None else neo4j.unit_of_work(timeout=timeout)(body)


def settings_recall_config(settings: GraphmemSettings) -> RecallConfig:
    """The recall configuration the settings give a Memory that is not handed one."""
    return RecallConfig(
        fusion=settings.recall_fusion,
        min_score=settings.recall_min_score,
        recency_weight=settings.recall_recency_weight,
        recency_half_life_days=settings.recall_recency_half_life_days,
        importance_weight=settings.recall_importance_weight,
        time_weight=settings.recall_time_weight,
        user_weight=settings.recall_user_weight,
    )


class Proposer(Protocol):
    """Proposes a rewrite plan for a consolidation cluster: :class:`HeuristicProposer`
    (offline), :class:`~graphmem.llm.roles.LLMProposer`, or any object with these members.
    :class:`~graphmem.client.AsyncMemory` awaits what ``propose`` returns when awaitable."""

    name: str

    @property
    def model(self) -> str | None: ...

    def propose(self, cluster: Any) -> Proposal: ...


def settings_consolidation_config(settings: GraphmemSettings) -> ConsolidationConfig:
    """The consolidation gate the settings give."""
    return ConsolidationConfig(
        min_interval=settings.consolidate_min_interval,
        min_new_facts=settings.consolidate_min_new_facts,
        lock_ttl=settings.consolidate_lock_ttl,
    )


def settings_importance_config(settings: GraphmemSettings) -> ImportanceConfig:
    """The importance score and tier thresholds the settings give."""
    return ImportanceConfig(
        default=settings.importance_default,
        decay_days=settings.importance_decay_days,
        reinforcement_weight=settings.importance_reinforcement,
        hot_score=settings.tier_hot_score,
        hot_max_facts=settings.tier_hot_max_facts,
        hot_max_tokens=settings.tier_hot_max_tokens,
        cold_score=settings.tier_cold_score,
    )


def proposer_method(proposer: Proposer, step: Propose) -> Callable[[Any], Any]:
    """What answers ``step``: the proposer's ``propose``, or its ``summarize``."""
    if step.summarize:
        method: Callable[[Any], Any] = proposer.summarize  # type: ignore[attr-defined]
        return method
    return proposer.propose


def checked_proposal(result: object, proposer: object) -> Proposal:
    """What a proposer returned, checked: a Proposal, or a ClientUsageError naming it."""
    if not isinstance(result, Proposal):
        name = getattr(proposer, "name", type(proposer).__name__)
        raise ClientUsageError(
            f"the proposer {name!r} returned {type(result).__name__}, not a Proposal"
        )
    return result


def _check_options(
    settings: object,
    embedder: object,
    extractor: object,
    config: object,
    counter: object,
    proposer: object = None,
) -> None:
    """Refuse constructor arguments of the wrong kind at once, not at first use."""

    def wrong(name: str, expected: str, value: object, hint: str = "") -> ClientUsageError:
        got = type(value).__name__
        return ClientUsageError(f"{name} must be {expected}, got {got}{hint}")

    if settings is not None and not isinstance(settings, GraphmemSettings):
        hint = " (the namespace is the keyword argument ns=)" if isinstance(settings, str) else ""
        raise wrong("settings", "a GraphmemSettings", settings, hint)
    for name, value, methods in (
        ("embedder", embedder, ("embed",)),
        ("extractor", extractor, ("extract",)),
        ("token_counter", counter, ("count",)),
        ("proposer", proposer, ("propose",)),
    ):
        if value is not None and not all(callable(getattr(value, m, None)) for m in methods):
            raise wrong(name, f"an object with {', '.join(methods)}()", value)
    if embedder is not None:
        dimension = getattr(embedder, "dimension", None)
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise wrong("embedder", "an object with a positive int dimension", embedder)
    if config is not None and not isinstance(config, RecallConfig | Mapping):
        raise wrong("recall_config", "a RecallConfig or a mapping", config)


class ClientBase:
    """Settings, embedder, extractor, token counter and the shared core."""

    def __init__(
        self,
        settings: GraphmemSettings | None = None,
        *,
        ns: str | None = None,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        recall_config: RecallConfig | Mapping[str, Any] | None = None,
        token_counter: TokenCounter | None = None,
        target: Neo4jTarget | None = None,
        apply_schema: bool = True,
        proposer: Proposer | None = None,
        consolidate_every: float | None = None,
    ) -> None:
        _check_options(settings, embedder, extractor, recall_config, token_counter, proposer)
        if consolidate_every is not None and (
            isinstance(consolidate_every, bool)
            or not isinstance(consolidate_every, int | float)
            or not 0 < consolidate_every <= 86_400
        ):
            raise ClientUsageError(
                "consolidate_every must be a number of seconds from 0 (excluded) to 86400"
            )
        self.settings = settings or load_settings()
        if embedder is None:
            from graphmem.embed.loading import embedder_from_settings

            embedder = embedder_from_settings(self.settings, lazy=True)
        self.embedder = embedder
        self.extractor = extractor
        self._proposer = proposer
        self._llm: LLM | None = None
        self._llm_extractor: Extractor | None = None
        #: Seconds between background consolidation attempts (None: no background runs).
        self.consolidate_every = consolidate_every
        self._counter = token_counter
        self._target = target
        self._apply_schema = apply_schema
        # Makes a Memory's first connect happen once when threads race (AsyncMemory, on one
        # event loop, uses an asyncio lock instead).
        self._thread_lock = threading.Lock()
        # Guards a Memory's calls in flight (below), so that close() can wait for them.
        self._state = threading.Condition()
        # The calls in flight by thread (Memory) or task (AsyncMemory): close() waits until
        # there are none; close() from inside one of them (a progress callback) would wait
        # for itself, and a call made from inside one while another thread or task closes
        # must go on, or the two wait for each other.
        self._callers: collections.Counter[object] = collections.Counter()
        config = resolve_config(
            recall_config, settings_recall_config(self.settings), "recall_config"
        )
        self._core = MemoryCore(
            dimension=embedder.dimension,
            default_ns=ns if ns is not None else self.settings.namespace,
            config=config,
            has_extractor=extractor is not None,
            model_id=embedder.model_id,
            consolidation=settings_consolidation_config(self.settings),
            importance=settings_importance_config(self.settings),
        )

    @property
    def ns(self) -> str | None:
        """The namespace used when a call does not name one."""
        return self._core.default_ns

    @property
    def recall_config(self) -> RecallConfig:
        return self._core.config

    @property
    def token_counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = counter_from_setting(self.settings.context_tokenizer)
        return self._counter

    @property
    def llm(self) -> LLM:
        """The LLM ``GRAPHMEM_LLM`` configures (made on first use); LLMConfigurationError
        when none is, or its key is missing."""
        with self._thread_lock:
            if self._llm is None:
                from graphmem.llm.client import LLM

                self._llm = LLM.from_settings(self.settings)
            return self._llm

    @property
    def proposer(self) -> Proposer:
        """The consolidation proposer: the one given, else the LLM's when ``GRAPHMEM_LLM``
        is set, else the offline :class:`HeuristicProposer`."""
        if self._proposer is None:
            if self.settings.llm:
                from graphmem.llm.roles import LLMProposer

                self._proposer = LLMProposer(self.llm)
            else:
                self._proposer = HeuristicProposer()
        return self._proposer

    def _extractor_for(self, extract: bool | None) -> str | None:
        """The name of the extractor an ingest uses: the client's own unless ``extract`` is
        False; with ``extract=True`` and none given, the LLM's."""
        if extract is not None:
            checked_flag("extract", extract)
        if extract is False or (extract is None and self.extractor is None):
            return None
        if self.extractor is not None:
            return str(self.extractor.name)
        if self._llm_extractor is None:
            from graphmem.llm.roles import LLMExtractor

            self._llm_extractor = LLMExtractor(self.llm)
        return self._llm_extractor.name

    def _extractor(self, name: str | None = None) -> Extractor:
        for extractor in (self.extractor, self._llm_extractor):
            if extractor is not None and (name is None or extractor.name == name):
                return extractor
        raise GraphmemError(f"no extractor {name!r} is configured")  # pragma: no cover

    def _extract(self, step: Extract) -> list[ExtractedFact]:
        extractor = self._extractor(step.extractor)
        with extractor_errors(extractor):
            return extracted_facts(extractor.extract(step.episodes))

    def _propose(self, step: Propose) -> Proposal:
        proposer = self.proposer
        return checked_proposal(proposer_method(proposer, step)(step.cluster), proposer)

    def _consolidation(
        self,
        label: tuple[str, str | None],
        ns: str | None,
        progress: Callable[[int, int], object] | None,
        options: Mapping[str, Any],
    ) -> Plan[ConsolidationResult]:
        """The plan of a consolidation run by the proposer named ``label``; ``summaries``
        None follows the ``consolidate_summaries`` setting where the proposer can summarise,
        and True is refused where it cannot; ``tiers`` None follows ``consolidate_tiers``."""
        summaries, tiers = options["summaries"], options["tiers"]
        if tiers is None:
            tiers = self.settings.consolidate_tiers
        can = callable(getattr(self.proposer, "summarize", None))
        if summaries is None:
            summaries = self.settings.consolidate_summaries and can
        if summaries and not can:
            raise InvalidInputError(
                f"the proposer {label[0]!r} cannot summarise: summaries need an LLM "
                "(GRAPHMEM_LLM) or a proposer with a summarize method"
            )
        return self._core.consolidate(
            ns=ns,
            force=options["force"],
            dry_run=options["dry_run"],
            proposer=label[0],
            model=label[1],
            progress=progress,
            tiers=tiers,
            summaries=summaries,
        )

    def _plan(self, op: Operation, args: Mapping[str, Any]) -> Plan[Any]:
        """The core's plan of ``op`` with the library's keyword arguments ``args``: most
        operations are the core's method of the same name, which takes the same arguments
        (its positional ones perhaps by other names); an ingest also names its extractor, a
        context its token counter, a consolidation its proposer; the audits are the core's
        ``audit_*`` plans (``query`` is their ``query_text``)."""
        args = dict(args)
        name = op.call
        if name.startswith("audit."):
            name = "audit_" + name.removeprefix("audit.")
            if name == "audit_truths":
                name = "audit_beliefs"
            if "query" in args:
                args["query_text"] = args.pop("query")
        elif name == "ingest":
            args["extractor"] = self._extractor_for(args.pop("extract"))
        elif name == "context":
            args["counter"] = self.token_counter
        elif name == "consolidate":
            ns, progress = args.pop("ns"), args.pop("progress")
            return self._consolidation(self._proposer_label(), ns, progress, args)
        plan: Plan[Any] = getattr(self._core, name)(**_core_names(op.call, name, args))
        return plan

    def _blocks(self, op: Operation) -> bool:
        """Whether making the plan of ``op`` may block (load a tokenizer, make an LLM client):
        the async client makes it in a worker thread."""
        return op.call in ("ingest", "consolidate") or (
            op.call == "context" and self._counter is None
        )

    def _proposer_label(self) -> tuple[str, str | None]:
        proposer = self.proposer
        return str(proposer.name), getattr(proposer, "model", None)

    def _close_llm(self) -> None:
        """Stops the LLM's event loop thread (after the calls in flight ended); the LLM
        starts another if the client is used again."""
        llm = self._llm
        if llm is not None:
            llm.close()

    def _open_graph(self) -> Graph:
        graph = Graph.open(
            self.settings, self.embedder, apply_schema=self._apply_schema, target=self._target
        )
        self._core.filtered_search = graph.schema.filtered_search
        return graph

    async def _open_async_graph(self) -> AsyncGraph:
        graph = await AsyncGraph.open(
            self.settings, self.embedder, apply_schema=self._apply_schema, target=self._target
        )
        self._core.filtered_search = graph.schema.filtered_search
        return graph


def _core_names(call: str, core: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with the client's names of the leading positional arguments (``id``,
    ``query``, ``facts``) as the core's method ``core`` calls them (``fact_id``, ``text``,
    ``items``)."""
    renames = _renames(call, core)
    return {renames.get(k, k): v for k, v in args.items()}


@functools.cache
def _renames(call: str, core: str) -> dict[str, str]:
    api = inspect.signature(
        getattr(AuditAPI if call.startswith("audit.") else MemoryAPI, call.split(".")[-1])
    ).parameters
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    theirs = inspect.signature(getattr(MemoryCore, core)).parameters.values()
    leading = [p.name for p in theirs if p.kind in positional and p.name != "self"]
    mine = [name for name, p in api.items() if p.kind in positional and name != "self"]
    # A name the client also takes by keyword (truths' as_of) is that argument, not this one.
    return {m: t for m, t in zip(mine, leading, strict=False) if m != t and t not in api}


def refuse_close_inside_a_call(callers: collections.Counter[object], caller: object) -> None:
    """close() waits for the calls in flight, so from inside one (a progress callback) it
    would wait for itself forever: refused instead."""
    if callers[caller]:
        raise ClientUsageError(
            "close() was called from inside a call of this client (such as its progress "
            "callback), and would wait for that call to end: close the client after the call"
        )
