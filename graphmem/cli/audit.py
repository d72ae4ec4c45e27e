"""``graphmem audit``: what graphmem believed at a time, what changed between two times, a
fact's timeline, the contradictions, and a change explained in words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from graphmem.cli.options import F, limit_option
from graphmem.cli.output import as_csv, emit, output_options, render_table
from graphmem.cli.root import client_for, clip, main, ns_option

_TIME_HELP = (
    "ISO 8601 with a zone (2026-03-01T09:00:00Z), a date (2026-03-01, midnight UTC), now, "
    "today, yesterday or 'N minutes|hours|days|weeks ago'"
)


@main.group()
def audit() -> None:
    """What was believed when, and why it changed.

    Times are ISO 8601 with a zone, a date alone (midnight UTC), now, today, yesterday or
    'N minutes|hours|days|weeks ago'; a time of day without a zone is refused.

    Example:

    \b
        graphmem audit diff "7 days ago" now
    """


def _facts_table(data: Mapping[str, Any]) -> str:
    rows = [{**f, "text": clip(f["text"])} for f in data["facts"]]
    table = render_table(rows, ["recorded_at", "status", "valid_from", "valid_to", "id", "text"])
    lines = [table]
    if data["truncated"]:
        lines.append(f"(first {data['limit']}; raise --limit for more)")
    if data["forgotten"]:
        gone = render_table(
            data["forgotten"], ["recorded_at", "erased_at", "id", "actor", "reason"]
        )
        lines.append(f"\nbelieved then, forgotten since (no words kept):\n{gone}")
    return "\n".join(lines)


def _facts_listing(func: F) -> F:
    """The options of a listing of facts (beliefs, truths): ``--query`` and ``--limit``, which
    the command passes on to the audit as ``**ranking``; then ``--ns``, ``--json`` and
    ``--csv``."""
    with_query = click.option("--query", help="Rank the facts by this query (hybrid search).")
    return with_query(limit_option()(ns_option(output_options(func))))


@audit.command()
@click.option("--as-of", "as_of", metavar="TIME", help=f"Transaction time: {_TIME_HELP}.")
@_facts_listing
@click.pass_context
def beliefs(
    ctx: click.Context, /, as_of: str | None, ns: str | None, as_json: bool, **ranking: Any
) -> None:
    """The facts believed at --as-of (default now), as they were believed then.

    Example:

    \b
        graphmem audit beliefs --as-of 2026-03-01 --query "where does the user work?"
    """
    with client_for(ctx, ns) as memory:
        result = memory.audit.beliefs(as_of, **ranking)
    emit(result.model_dump(mode="json"), as_json=as_json, table=_facts_table, rows=_facts)


@audit.command()
@click.argument("valid_at", metavar="VALID_AT")
@click.option("--as-of", "as_of", metavar="TIME", help="As believed then (default now).")
@_facts_listing
@click.pass_context
def truths(
    ctx: click.Context,
    /,
    valid_at: str,
    as_of: str | None,
    ns: str | None,
    as_json: bool,
    **ranking: Any,
) -> None:
    """The facts believed (now, or at --as-of) to have been true at VALID_AT.

    A fact replaced since still counts within its closed valid interval.

    Example:

    \b
        graphmem audit truths 2024-06-01 --as-of "30 days ago"
    """
    with client_for(ctx, ns) as memory:
        result = memory.audit.truths(valid_at, as_of=as_of, **ranking)
    emit(result.model_dump(mode="json"), as_json=as_json, table=_facts_table, rows=_facts)


def _diff_table(data: Mapping[str, Any]) -> str:
    def text(row: Mapping[str, Any]) -> str:
        return "[forgotten]" if row["text"] is None else clip(row["text"], 50)

    believed = render_table(
        [{**c, "text": text(c)} for c in data["believed"]], ["at", "fact_id", "text"]
    )
    retired = render_table(
        [{**c, "text": text(c)} for c in data["retired"]],
        ["at", "change", "fact_id", "text", "by", "actor", "reason"],
    )
    forgotten = render_table(
        data["forgotten"], ["erased_at", "kind", "id", "actor", "reason", "erasure"]
    )
    opened = render_table(data["contradictions_opened"], ["at", "a", "b", "actor", "reason"])
    resolved = render_table(
        data["contradictions_resolved"], ["resolved_at", "a", "b", "kept", "resolution"]
    )
    return (
        f"from {data['since']} (excluded) to {data['until']}\n\n"
        f"became believed:\n{believed}\n\nretired:\n{retired}\n\nforgotten:\n{forgotten}\n\n"
        f"contradictions opened:\n{opened}\n\ncontradictions resolved:\n{resolved}"
    )


@audit.command()
@click.argument("since", metavar="SINCE")
@click.argument("until", metavar="[UNTIL]", required=False)
@ns_option
@output_options
@click.pass_context
def diff(ctx: click.Context, since: str, until: str | None, ns: str | None, as_json: bool) -> None:
    """What changed after SINCE up to UNTIL (default now).

    Facts that became believed, facts retired and how (superseded, merged, retracted: by
    what, who, why), facts and messages forgotten (no words), contradictions opened and
    resolved.

    Example:

    \b
        graphmem audit diff "7 days ago" now
    """
    with client_for(ctx, ns) as memory:
        result = memory.audit.diff(since, until)
    emit(result.model_dump(mode="json"), as_json=as_json, table=_diff_table)


def _timeline_table(data: Mapping[str, Any]) -> str:
    rows = [{"at": e["at"], "event": e["kind"], "what": e["words"]} for e in data["events"]]
    head = data["head_id"] or "none (the line ends in a retired or forgotten fact)"
    return f"{render_table(rows, ['at', 'event', 'what'])}\n\nbelieved now: {head}"


@audit.command()
@click.argument("id")
@ns_option
@output_options
@click.pass_context
def timeline(ctx: click.Context, id: str, ns: str | None, as_json: bool) -> None:
    """Every change in the lineage of fact ID, oldest first.

    Supersessions, merges, retractions, contradictions, references, review flags and
    erasures, with their times, actors, reasons and consolidation runs. A forgotten fact
    has a timeline too (without its words).

    Example:

    \b
        graphmem audit timeline 3f2a9c1e-...
    """
    with client_for(ctx, ns) as memory:
        result = memory.audit.timeline(id)
    emit(
        result.model_dump(mode="json"),
        as_json=as_json,
        table=_timeline_table,
        rows=lambda d: list(d["events"]),
    )


@audit.command()
@click.option("--all", "show_all", is_flag=True, help="Resolved contradictions too.")
@limit_option()
@ns_option
@output_options
@click.pass_context
def contradictions(
    ctx: click.Context, show_all: bool, limit: int, ns: str | None, as_json: bool
) -> None:
    """The open contradictions (with --all, the resolved ones too), oldest first.

    Example:

    \b
        graphmem audit contradictions --all --json
    """
    with client_for(ctx, ns) as memory:
        found = memory.audit.contradictions(open_only=not show_all, limit=limit)
    data = [c.model_dump(mode="json") for c in found]
    if as_json or as_csv():
        emit(data, as_json=True)
        return
    rows = [
        {
            **c,
            "a_text": clip(c["a_text"] or "[forgotten]", 40),
            "b_text": clip(c["b_text"] or "[forgotten]", 40),
        }
        for c in data
    ]
    columns = ["at", "a", "a_text", "b", "b_text", "reason"]
    if show_all:
        columns += ["resolved_at", "kept"]
    click.echo(render_table(rows, columns))


@audit.command()
@click.argument("id")
@ns_option
@output_options
@click.pass_context
def explain(ctx: click.Context, id: str, ns: str | None, as_json: bool) -> None:
    """The last change to fact ID in words an agent can quote.

    Example:

    \b
        graphmem audit explain 3f2a9c1e-...
    """
    with client_for(ctx, ns) as memory:
        result = memory.audit.explain(id)
    emit(result.model_dump(mode="json"), as_json=as_json, table=lambda d: d["text"])


def _facts(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """--csv of beliefs and truths: a row per fact."""
    return list(data["facts"])
