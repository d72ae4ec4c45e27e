"""The consolidation commands: ``consolidate`` (with ``--watch``, ``undo`` and ``runs``), and
the agent's own ``contradict``, ``resolve`` and ``retract``."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from graphmem.cli.options import F, limit_option
from graphmem.cli.output import (
    Counter,
    FiniteFloat,
    emit,
    output_options,
    render_mapping,
    render_table,
)
from graphmem.cli.root import client_for, clip, fact_data, item_mapping, main, ns_option

if TYPE_CHECKING:
    from graphmem.models.consolidation import ConsolidationResult


def _result_table(data: dict[str, Any]) -> str:
    head = {
        k: data.get(k)
        for k in ("run_id", "status", "reason", "proposer", "model", "new_facts", "clusters")
    }
    head["reason"] = _for_the_shell(head["reason"])
    head["applied"] = len(data["applied"])
    head["rejected"] = len(data["rejected"])
    head["llm_calls"] = data["usage"]["calls"]
    head["prompt_tokens"] = data["usage"]["prompt_tokens"]
    head["seconds"] = data["timings"].get("total")
    parts = [render_mapping(head)]
    if data["applied"]:
        rows = [
            {"op": a["op"], "facts": " ".join(a["facts"]), "reason": clip(a["reason"])}
            for a in data["applied"]
        ]
        parts.append("\nApplied:\n" + render_table(rows, ["op", "facts", "reason"]))
    if data["rejected"]:
        rows = [
            {"op": r["op"], "numbers": r["numbers"], "rejection": clip(r["rejection"])}
            for r in data["rejected"]
        ]
        parts.append("\nRejected:\n" + render_table(rows, ["op", "numbers", "rejection"]))
    if data["review"]:
        rows = [
            {"facts": " ".join(r["facts"]), "texts": clip(" / ".join(r["texts"]))}
            for r in data["review"]
        ]
        parts.append("\nFor review (not rewritten):\n" + render_table(rows, ["facts", "texts"]))
    return "\n".join(parts)


def _pass_switch(name: str, does: str, *, note: str = "") -> Callable[[F], F]:
    """``--NAME/--no-NAME``, received as ``NAME``: runs a pass of consolidation, or leaves it
    out, this once, whatever the setting ``GRAPHMEM_CONSOLIDATE_NAME`` says (None when neither
    is given: the setting decides). ``does`` says what the pass does, ``note`` what it needs."""
    default = f"{note}; default" if note else "default"
    return click.option(
        f"--{name}/--no-{name}",
        default=None,
        help=f"{does} ({default}: GRAPHMEM_CONSOLIDATE_{name.upper()}).",
    )


@main.group(invoke_without_command=True)
@click.option("--force", is_flag=True, help="Run now: pass the interval and new-fact minimum.")
@click.option("--dry-run", is_flag=True, help="Show the validated plan; write nothing.")
@_pass_switch("tiers", "Move facts between the hot, warm and cold tiers by their importance score")
@_pass_switch("summaries", "Summarise coherent clusters of facts", note="needs an LLM")
@click.option("--watch", is_flag=True, help="Keep running: try again every --every seconds.")
@click.option(
    "--every",
    type=FiniteFloat(min=1, max=86_400),
    default=60.0,
    show_default=True,
    help="Seconds between attempts with --watch.",
)
@ns_option
@output_options
@click.pass_context
def consolidate(
    ctx: click.Context,
    force: bool,
    dry_run: bool,
    tiers: bool | None,
    summaries: bool | None,
    watch: bool,
    every: float,
    ns: str | None,
    as_json: bool,
) -> None:
    """Consolidate the namespace: merge duplicates, record updates and conflicts.

    New facts since the last run are grouped with their nearest believed neighbours; the
    proposer (the LLM of GRAPHMEM_LLM, else the offline heuristic, which merges duplicates
    only and lists same-attribute pairs for review) proposes operations that are validated
    and applied one cluster per transaction. A run starts when the lock is free, the minimum
    interval has passed and enough new facts arrived (--force passes the last two).

    With --watch it runs until SIGINT or SIGTERM, each attempt respecting the gate.

    Example:

    \b
        graphmem consolidate --force --dry-run
    """
    if ctx.invoked_subcommand is not None:
        return
    from graphmem.errors import ConsolidationBusyError

    with client_for(ctx, ns) as memory:
        if not watch:
            counter = Counter("Clusters", "done")
            try:
                result = memory.consolidate(
                    force=force,
                    dry_run=dry_run,
                    progress=counter.of_total,
                    tiers=tiers,
                    summaries=summaries,
                )
            finally:
                counter.done()
            emit(result.model_dump(mode="json"), as_json=as_json, table=_result_table)
            return
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        while not stop.is_set():
            try:
                result = memory.consolidate(
                    force=force, dry_run=dry_run, tiers=tiers, summaries=summaries
                )
                _watch_line(result, as_json)
            except ConsolidationBusyError as exc:
                click.echo(f"busy: {exc}", err=True)
            stop.wait(every)


def _for_the_shell(reason: str | None) -> str | None:
    """A skip reason as the command line says it (``--force``, not ``force=True``)."""
    return None if reason is None else reason.replace("force=True", "--force")


def _watch_line(result: ConsolidationResult, as_json: bool) -> None:
    if as_json:
        click.echo(result.model_dump_json())
        return
    what = (
        _for_the_shell(result.reason)
        if result.status == "skipped"
        else (
            f"{len(result.applied)} applied, {len(result.rejected)} rejected, "
            f"{len(result.review)} for review, {result.new_facts} new facts"
        )
    )
    click.echo(f"{result.status}: {what}")


@consolidate.command("undo")
@click.argument("run_id")
@ns_option
@output_options
@click.pass_context
def undo(ctx: click.Context, run_id: str, ns: str | None, as_json: bool) -> None:
    """Undo a consolidation run exactly (refused, with why, when a later write built on it).

    Every fact the run changed gets its earlier state back, its edges go and the
    contradictions it resolved reopen; the run's record stays, marked undone.

    Example:

    \b
        graphmem consolidate undo 5b1e...
    """
    with client_for(ctx, ns) as memory:
        result = memory.undo(run_id)
    emit(result.model_dump(mode="json"), as_json=as_json)


@consolidate.command("runs")
@limit_option(1000, default=20)
@ns_option
@output_options
@click.pass_context
def runs(ctx: click.Context, limit: int, ns: str | None, as_json: bool) -> None:
    """List the namespace's consolidation runs, newest first.

    --json shows each run's raw plans, applied and rejected operations, review candidates,
    LLM usage and timings.

    Example:

    \b
        graphmem consolidate runs --limit 5 --json
    """
    with client_for(ctx, ns) as memory:
        records = memory.consolidation_runs(limit=limit)
    data = [r.model_dump(mode="json") for r in records]
    rows = [
        {
            "id": r["id"],
            "status": r["status"],
            "started_at": r["started_at"],
            "proposer": r["proposer"],
            "applied": len(r["applied"]),
            "rejected": len(r["rejected"]),
            "review": len(r["review"]),
        }
        for r in data
    ]
    columns = ["id", "status", "started_at", "proposer", "applied", "rejected", "review"]
    emit(data, as_json=as_json, table=lambda _: render_table(rows, columns))


_REASON = click.option("--reason", help="Why (kept on the edge or the fact).")


@main.command()
@click.argument("a")
@click.argument("b")
@_REASON
@ns_option
@output_options
@click.pass_context
def contradict(
    ctx: click.Context, a: str, b: str, reason: str | None, ns: str | None, as_json: bool
) -> None:
    """Record that two believed facts conflict (an open CONTRADICTS edge).

    Both stay believed and are marked in recall and context until `graphmem resolve`
    settles it.

    Example:

    \b
        graphmem contradict 3f2a... 9c4d... --reason "two different launch dates"
    """
    with client_for(ctx, ns) as memory:
        facts = memory.contradict(a, b, reason=reason)
    emit([fact_data(f) for f in facts], as_json=as_json, table=_facts_table)


@main.command()
@click.argument("a")
@click.argument("b")
@click.option("--keep", required=True, metavar="ID", help="The fact that holds (A or B).")
@_REASON
@ns_option
@output_options
@click.pass_context
def resolve(
    ctx: click.Context,
    a: str,
    b: str,
    keep: str,
    reason: str | None,
    ns: str | None,
    as_json: bool,
) -> None:
    """Settle the open contradiction between A and B: the other is superseded by --keep.

    The CONTRADICTS edge gets resolved_at, resolution (the reason) and resolved_by.

    Example:

    \b
        graphmem resolve 3f2a... 9c4d... --keep 9c4d... --reason "moved to June"
    """
    with client_for(ctx, ns) as memory:
        facts = memory.resolve(a, b, keep=keep, reason=reason)
    emit([fact_data(f) for f in facts], as_json=as_json, table=_facts_table)


@main.command()
@click.argument("id")
@_REASON
@ns_option
@output_options
@click.pass_context
def retract(ctx: click.Context, id: str, reason: str | None, ns: str | None, as_json: bool) -> None:
    """Retract a believed fact ("that was never true").

    It leaves current recall and stays what was believed before (recall --as-of).

    Example:

    \b
        graphmem retract 3f2a... --reason "the user was joking"
    """
    with client_for(ctx, ns) as memory:
        fact = memory.retract(id, reason=reason)
    emit(fact_data(fact), as_json=as_json, table=item_mapping)


def _facts_table(data: list[dict[str, Any]]) -> str:
    rows = [
        {
            **f,
            "contradicts": " ".join(c["id"] for c in f["contradictions"]),
            "text": clip(f["text"]),
        }
        for f in data
    ]
    return render_table(rows, ["id", "status", "contradicts", "text"])
