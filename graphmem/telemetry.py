"""Where a call's time goes, for the service's logs, metrics and traces.

Two light hooks the clients call around their work:

- :func:`spending`: within the block, the time this task's clients spend in Neo4j
  transactions, in the embedder and in LLM requests adds up in the :class:`Spent` it yields
  (``graphmem serve`` opens one per request). Outside it nothing is added.
- :func:`span` and :func:`timed`: an OpenTelemetry span around a piece of work when tracing is
  on (:func:`configure_tracing`, from the standard ``OTEL_*`` variables, or
  :func:`enable_tracing`); nothing at all otherwise: opentelemetry is never imported then.

A span carries names and counts only: a Cypher statement's span is named after its query
(``recall_search_filtered``), never its text or parameters.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

logger = logging.getLogger("graphmem.serve")

Kind = Literal["db", "embed", "llm"]


@dataclass
class Spent:
    """The milliseconds one request's work spent in Neo4j transactions (``db_ms``: begin,
    statements and commit, retries included), in the embedder and in LLM requests; and the
    operations its clients carried out, each with whether it writes and its result."""

    db_ms: float = 0.0
    embed_ms: float = 0.0
    llm_ms: float = 0.0
    done: list[tuple[str, bool, Any]] = field(default_factory=list)

    def add(self, kind: Kind, ms: float) -> None:
        if kind == "db":
            self.db_ms += ms
        elif kind == "embed":
            self.embed_ms += ms
        else:
            self.llm_ms += ms


_SPENT: ContextVar[Spent | None] = ContextVar("graphmem_spent", default=None)
#: The OpenTelemetry tracer when tracing is on.
_tracer: Any = None
#: Neo4j transactions open in this process (their sessions each hold a pooled connection).
_transactions = 0


@contextmanager
def spending() -> Iterator[Spent]:
    """Within the block, the time this task's clients spend (and the threads it starts) adds
    up in the :class:`Spent` yielded."""
    spent = Spent()
    token = _SPENT.set(spent)
    try:
        yield spent
    finally:
        _SPENT.reset(token)


def done(name: str, writes: bool, result: Any) -> None:
    """Operation ``name`` (which ``writes`` or not) was carried out and gave ``result``."""
    spent = _SPENT.get()
    if spent is not None:
        spent.done.append((name, writes, result))


def transactions_in_flight() -> int:
    """How many Neo4j transactions this process's clients have open now."""
    return _transactions


def tracing() -> bool:
    """Whether spans are recorded."""
    return _tracer is not None


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Any]:
    """A span named ``name`` (the current span its parent) when tracing is on; its
    attributes those given that are not None. Yields the span, or None."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    attrs = {k: v for k, v in attributes.items() if v is not None}
    with tracer.start_as_current_span(name, attributes=attrs) as current:
        yield current


@contextmanager
def server_span(method: str, headers: Mapping[str, str]) -> Iterator[Any]:
    """The span of one HTTP request served, its parent the trace its ``traceparent`` header
    names (if any); named ``HTTP <method>`` until :func:`end_server_span` names its route."""
    tracer = _tracer
    if tracer is None:
        yield None
        return
    from opentelemetry.propagate import extract
    from opentelemetry.trace import SpanKind

    with tracer.start_as_current_span(
        f"HTTP {method}", context=extract(headers), kind=SpanKind.SERVER
    ) as current:
        yield current


def end_server_span(current: Any, route: str, status: int, **attributes: Any) -> None:
    """Name a :func:`server_span` after its method and route, and add what the request was."""
    from opentelemetry.trace import Status, StatusCode

    method = attributes.get("http.request.method", "")
    current.update_name(f"{method} {route}".strip())
    current.set_attributes(
        {"http.route": route, "http.response.status_code": status}
        | {k: v for k, v in attributes.items() if v is not None}
    )
    if status >= 500:
        current.set_status(Status(StatusCode.ERROR))


@contextmanager
def timed(kind: Kind, name: str, **attributes: Any) -> Iterator[None]:
    """:func:`span`, its time added to the enclosing :func:`spending` as ``kind``."""
    global _transactions
    started = time.perf_counter()
    if kind == "db":
        _transactions += 1
    try:
        with span(name, **attributes):
            yield
    finally:
        if kind == "db":
            _transactions -= 1
        spent = _SPENT.get()
        if spent is not None:
            spent.add(kind, (time.perf_counter() - started) * 1000)


def enable_tracing(provider: Any) -> None:
    """Record spans through this OpenTelemetry ``TracerProvider`` (the tests hand one with an
    in-memory exporter)."""
    global _tracer
    from graphmem._version import __version__

    _tracer = provider.get_tracer("graphmem", __version__)


def disable_tracing() -> None:
    global _tracer
    _tracer = None


def trace_exporters(environ: Mapping[str, str]) -> list[str]:
    """The span exporters the ``OTEL_*`` variables ask for: none when ``OTEL_SDK_DISABLED`` is
    true; else ``OTEL_TRACES_EXPORTER`` (comma-separated; ``none`` for none), or ``otlp`` when
    only an OTLP endpoint is set; none when nothing is set."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    named = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if not named:
        endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        named = "otlp" if any(environ.get(e) for e in endpoints) else "none"
    return [n for n in (p.strip() for p in named.split(",")) if n and n != "none"]


def configure_tracing(environ: Mapping[str, str] | None = None) -> bool:
    """Turn tracing on as the ``OTEL_*`` variables say (:func:`trace_exporters`); the service
    name is ``OTEL_SERVICE_NAME``, else ``graphmem``. Without the ``otel`` extra, or with an
    exporter it cannot make, it logs a warning and traces nothing. Returns whether it is on."""
    environ = os.environ if environ is None else environ
    names = trace_exporters(environ)
    if not names:
        return False
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        logger.warning(
            "OTEL_TRACES_EXPORTER asks for traces, but opentelemetry-sdk is not installed: "
            "pip install 'graphmem[otel]'; tracing stays off"
        )
        return False
    named = environ.get("OTEL_SERVICE_NAME") or "service.name=" in environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    # Resource.create reads both variables; graphmem only names the service they leave unnamed.
    provider = TracerProvider(
        resource=Resource.create({} if named else {"service.name": "graphmem"})
    )
    made = 0
    for name in names:
        exporter = _exporter(name, environ)
        if exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(exporter))
            made += 1
    if not made:
        return False
    atexit.register(provider.shutdown)  # the last spans are sent before the process ends
    enable_tracing(provider)
    return True


def _exporter(name: str, environ: Mapping[str, str]) -> Any:
    """The span exporter of one ``OTEL_TRACES_EXPORTER`` name (its own ``OTEL_EXPORTER_OTLP_*``
    settings read by it), or None with a warning."""
    try:
        if name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            return ConsoleSpanExporter()
        if name == "otlp":
            protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get(
                "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
            )
            kind = "grpc" if protocol == "grpc" else "http"
            module = f"opentelemetry.exporter.otlp.proto.{kind}.trace_exporter"
            return importlib.import_module(module).OTLPSpanExporter()
    except ImportError as exc:
        logger.warning("the %s span exporter is not installed (%s): no spans go there", name, exc)
        return None
    logger.warning("OTEL_TRACES_EXPORTER names %r, which graphmem does not know", name)
    return None


__all__ = [
    "Spent",
    "configure_tracing",
    "disable_tracing",
    "done",
    "enable_tracing",
    "end_server_span",
    "server_span",
    "span",
    "spending",
    "timed",
    "trace_exporters",
    "tracing",
    "transactions_in_flight",
]
