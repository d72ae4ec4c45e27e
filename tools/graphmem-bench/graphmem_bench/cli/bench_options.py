"""The options of ``graphmem bench`` and its subcommands, stated once: each subcommand takes
the ones it uses, and the group takes them all (hidden) for the older flag form."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TypeVar

import click

from graphmem.cli.plugins import json_option, memory_size, writable_dir

F = TypeVar("F", bound=Callable[..., Any])

#: The most facts one size may ask for (10M facts take days to embed on a CPU).
MAX_SIZE = 10_000_000


def parse_size(text: str) -> int:
    """A whole number of facts: ``10000``, ``1e4``, ``10k`` or ``1.5k``, not ``1.5``."""
    cleaned = text.strip().lower().replace("_", "").replace(",", "")
    factor = 1
    if cleaned.endswith("k"):
        cleaned, factor = cleaned[:-1], 1_000
    elif cleaned.endswith("m"):
        cleaned, factor = cleaned[:-1], 1_000_000
    try:
        number = Decimal(cleaned) * factor  # exact: 1.1k is 1,100, not 1,100.0000000000002
    except InvalidOperation:
        raise ValueError(text) from None
    if not number.is_finite() or not 1 <= number <= MAX_SIZE or number != int(number):
        raise ValueError(text)
    return int(number)


def sizes_param(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    """``10000,100000`` or ``10k,100k`` to a tuple of fact counts."""
    try:
        sizes = tuple(parse_size(part) for part in value.split(",") if part.strip())
    except ValueError:
        sizes = ()
    if not sizes:
        raise click.BadParameter(
            f"{value!r} is not a list of counts from 1 to {MAX_SIZE:,} such as 10000,100000"
        )
    return sizes


def shape_param(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[int, int] | None:
    """``1000x1000`` (or ``1kx1k``) to (namespaces, facts per namespace)."""
    if value is None:
        return None
    parts = value.lower().split("x")
    try:
        if len(parts) != 2:
            raise ValueError(value)
        namespaces, facts = (parse_size(part) for part in parts)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not NxM, namespaces times facts per namespace, such as 1000x1000"
        ) from None
    return namespaces, facts


def size_param(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """One count of facts: ``100000``, ``100k`` or ``1e5``."""
    try:
        return parse_size(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a count from 1 to {MAX_SIZE:,} such as 100000 or 100k"
        ) from None


#: Every option, by parameter name: its flags and its settings. A subcommand may change a
#: default (``--queries``); the group's copies are hidden.
OPTIONS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "sizes": (("--sizes",), {
        "default": "10000,100000", "callback": sizes_param, "show_default": True,
        "help": "Fact counts to measure, comma-separated (10k and 100k also work).",
    }),
    "facts": (("--facts",), {
        "default": "10000", "callback": size_param, "show_default": True,
        "help": "Believed facts stored first (10k also works).",
    }),
    "queries": (("--queries",), {
        "type": click.IntRange(1, 1_000_000), "show_default": True,
        "help": "Timed recall queries after the warm-up ones (tenants: per namespace and mode).",
    }),
    "warmup": (("--warmup",), {
        "type": click.IntRange(0, 100_000), "default": 20, "show_default": True,
        "help": "Unmeasured recall queries run first.",
    }),
    "warmup_facts": (("--warmup-facts",), {
        "type": click.IntRange(0, 10_000_000), "default": 20_000, "show_default": True,
        "help": "Facts written untimed (random vectors) before the first size, to warm Neo4j up.",
    }),
    "batch_size": (("--batch-size",), {
        "type": click.IntRange(1, 10_000), "default": 1_000, "show_default": True,
        "help": "Facts per remember_many call (and texts per embed call).",
    }),
    "backend_texts": (("--backend-texts",), {
        "type": click.IntRange(0, 1_000_000), "default": 5_000, "show_default": True,
        "help": "Texts each embedding backend (torch, ONNX float32, ONNX int8) embeds for the "
        "comparison of their speed and vectors; 0 skips it.",
    }),
    "server": (("--server",), {
        "type": click.Choice(["scratch", "configured"]), "default": "scratch",
        "show_default": True,
        "help": "scratch: a throwaway local Neo4j, deleted afterwards. configured: the Neo4j of "
        "GRAPHMEM_NEO4J_URI; the benchmark's namespaces (bench-*, peer-* and group_ids for "
        "the peer) stay there.",
    }),
    "heap": (("--heap",), {
        "default": "2g", "show_default": True, "callback": memory_size,
        "help": "Java heap of the scratch Neo4j.",
    }),
    "pagecache": (("--pagecache",), {
        "default": "1g", "show_default": True, "callback": memory_size,
        "help": "Page cache of the scratch Neo4j.",
    }),
    "seed": (("--seed",), {
        "type": int, "default": 0, "show_default": True, "help": "Seed of the synthetic data.",
    }),
    "out": (("--out",), {
        "type": click.Path(file_okay=False, path_type=Path), "callback": writable_dir,
        "help": "Also write <benchmark>-<time>.json and .md into this directory; checked "
        "before the run.",
    }),
    "fail_on_miss": (("--fail-on-miss",), {
        "is_flag": True, "help": "Exit with status 1 when a target is missed.",
    }),
    "runs": (("--runs",), {
        "type": click.IntRange(1, 50), "default": 3, "show_default": True,
        "help": "Runs of each command (the report gives medians).",
    }),
    "large": (("--large",), {
        "default": "100000", "show_default": True, "callback": size_param,
        "help": "Facts in the large measured namespace.",
    }),
    "small": (("--small",), {
        "type": click.IntRange(1, 1_000_000), "default": 50, "show_default": True,
        "help": "Facts in the small measured namespace.",
    }),
    "pool": (("--pool",), {
        "type": click.IntRange(1, MAX_SIZE), "default": 5_000, "show_default": True,
        "help": "Distinct facts the tenants and the small namespace draw from (raised to M or "
        "--small when one is larger).",
    }),
    "clients": (("--clients",), {
        "type": click.IntRange(1, 1_024), "default": 32, "show_default": True,
        "help": "Concurrent clients (each in a namespace of its own).",
    }),
    "duration": (("--duration",), {
        "type": click.FloatRange(1, 3_600), "default": 60.0, "show_default": True,
        "help": "Seconds of the mix on each path.",
    }),
    "servers": (("--servers",), {
        "type": click.IntRange(1, 16), "default": 2, "show_default": True,
        "help": "graphmem serve processes (the clients dealt round-robin over them).",
    }),
    "observe_cost": (("--observe-cost",), {
        "is_flag": True, "default": False,
        "help": "Run half the servers with --log-level off --metrics off and compare the p50 "
        "of the two halves (the cost of the access log and metrics; --servers made even).",
    }),
    "versions": (("--neo4j",), {
        "multiple": True, "type": click.Choice(["2026.09.0", "5.26.30"]),
        "help": "Run on a throwaway local Neo4j of this version; given twice, the run is made "
        "on each in turn and one report compares them.",
    }),
}  # fmt: skip

JSON_HELP = "Print JSON instead of the Markdown report (errors too, on stderr)."


def option(name: str, **changes: Any) -> Callable[[F], F]:
    """The option ``name`` of :data:`OPTIONS`, with ``changes`` to its settings."""
    flags, settings = OPTIONS[name]
    return click.option(*flags, name, **{**settings, **changes})


def options(
    *names: str, fails: bool = True, defaults: dict[str, Any] | None = None
) -> Callable[[F], F]:
    """The options ``names`` of :data:`OPTIONS` (``defaults`` changing theirs), then those of
    the Neo4j (``--server``, ``--heap``, ``--pagecache``) and of the report (``--out``,
    ``--fail-on-miss`` with ``fails``, ``--json``)."""
    every = [*names, "server", "heap", "pagecache", "out", *(["fail_on_miss"] if fails else [])]

    def apply(func: F) -> F:
        func = json_option(JSON_HELP)(func)
        for name in reversed(every):
            changes = {"default": defaults[name]} if defaults and name in defaults else {}
            func = option(name, **changes)(func)
        return func

    return apply


__all__ = [
    "JSON_HELP",
    "MAX_SIZE",
    "OPTIONS",
    "option",
    "options",
    "parse_size",
    "shape_param",
    "size_param",
    "sizes_param",
]
