"""The read commands: ``recall``, ``context``, ``get``, ``history``, ``stats`` and ``pin``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from graphmem.cli.filters import filter_options
from graphmem.cli.output import (
    FiniteFloat,
    as_csv,
    emit,
    output_options,
    render_mapping,
    render_table,
)
from graphmem.cli.root import (
    client_for,
    clip,
    fact_data,
    item_mapping,
    main,
    nothing,
    ns_option,
    number,
)

if TYPE_CHECKING:  # for annotations only: the library loads when a command runs
    from graphmem.models import NamespaceStats, RecallResult


#: How the recall table marks a hit not matched by the search itself: reached over REFERENCES,
#: or found through the superseded fact it replaced.
_VIA_LABELS = {"search": "", "reference": " (ref)", "supersession": " (update)"}


#: The API's option names as the read commands name them.
_FLAGS = {"as_of": "--as-of", "valid_at": "--valid-at", "budget_tokens": "--budget"}
_OPTION_NAMES = re.compile(r"\b(as_of|valid_at|budget_tokens)\b(=)?")


def _recall_table(result: RecallResult) -> str:
    rows = [
        {
            "rank": rank,
            "kind": hit.kind + _VIA_LABELS[hit.via],
            "score": number(hit.score),
            "vector": number(hit.scores.vector),
            "fulltext": number(hit.scores.fulltext),
            "date": hit.time.date().isoformat() if hit.time else None,
            "status": hit.fact.status if hit.fact else None,
            "id": hit.id,
            "text": clip(hit.text),
        }
        for rank, hit in enumerate(result.hits, start=1)
    ]
    timing = result.timing
    footer = (
        f"{len(result.hits)} hit(s) of {result.candidates} candidate(s), {result.gated} gated; "
        f"{timing.total_ms:.1f} ms (embed {timing.embed_ms:.1f}, db {timing.db_ms:.1f}, "
        f"stamp {timing.stamp_ms:.1f})"
    )
    if result.exact_fallback:
        footer += "; exact scoring"
    columns = ["rank", "kind", "score", "vector", "fulltext", "date", "id", "text"]
    if any(row["status"] not in (None, "active") for row in rows):  # retired facts were asked for
        columns.insert(6, "status")
    return render_table(rows, columns) + "\n\n" + footer


@main.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=10, show_default=True, help="How many hits at most.")
@filter_options
@click.option(
    "--fusion",
    type=click.Choice(["relative", "rrf", "linear"]),
    help="How the vector and fulltext rankings are combined (default: the setting).",
)
@click.option(
    "--importance-weight",
    type=FiniteFloat(0.0, 10.0),
    help="How much facts' importance scores move their ranks, 0 to 10 (default: the "
    "setting, 0: off).",
)
@ns_option
@output_options
@click.pass_context
def recall(
    ctx: click.Context,
    query: str,
    k: int,
    filters: dict[str, Any],
    fusion: str | None,
    importance_weight: float | None,
    ns: str | None,
    as_json: bool,
) -> None:
    """Search facts and episodes (hybrid: vector and fulltext), best first.

    Shows each hit's scores; retired facts are hidden unless --include-retired. --as-of
    and --valid-at travel in time (ISO 8601 with a zone, a date, or "3 days ago").

    Example:

    \b
        graphmem recall "where does the user work?" -k 5 --kind fact
    """
    with client_for(ctx, ns) as memory:
        given = {"fusion": fusion, "importance_weight": importance_weight}
        config = {name: value for name, value in given.items() if value is not None}
        # The rest of the ranking configuration: the client's.
        result = memory.recall(query, k=k, config=config or None, **filters)
        empty = not result.hits and _holds_nothing(memory.stats(ns=result.ns))
    if as_json or as_csv():
        emit(result.model_dump(mode="json"), as_json=True, rows=_hit_rows)
    else:
        click.echo(_recall_table(result))
    if result.hint is not None:
        click.echo(f"Hint: {_flags(result.hint)}", err=True)
    if empty:
        nothing(ctx, f"namespace {result.ns!r} holds nothing (is the name right?)")


def _flags(message: str) -> str:
    """``message`` with the names of the API's options (``valid_at=...``, ``as_of``) written
    as this command line's (``--valid-at ...``, ``--as-of``)."""
    return _OPTION_NAMES.sub(
        lambda m: _FLAGS[m[1]] + (" " if m[2] else ""),
        message,
    )


def _holds_nothing(stats: NamespaceStats) -> bool:
    """Whether a namespace holds no fact, message or tombstone: one never written to."""
    return not (stats.facts or stats.episodes or stats.forgotten_facts or stats.forgotten_episodes)


@main.command()
@click.argument("query")
@click.option("--budget", type=int, required=True, help="Most tokens the block may take.")
@click.option(
    "-k", "k", type=int, default=20, show_default=True, help="How many hits recall may use."
)
@click.option(
    "--tz",
    "timezone",
    metavar="ZONE",
    help="IANA time zone of the block's dates, such as Europe/Lisbon (default: UTC).",
)
@click.option(
    "--full-ids",
    is_flag=True,
    help="Show whole ids in the block (default: their first 8 characters where those name "
    "them alone; every command takes them back).",
)
@click.option(
    "--include-cold",
    is_flag=True,
    help="Show facts of the cold tier that recall finds (default: left out).",
)
@filter_options
@ns_option
@output_options
@click.pass_context
def context(
    ctx: click.Context,
    query: str,
    budget: int,
    k: int,
    timezone: str | None,
    full_ids: bool,
    include_cold: bool,
    filters: dict[str, Any],
    ns: str | None,
    as_json: bool,
) -> None:
    """Print a prompt-ready memory block for QUERY within --budget tokens.

    Pinned facts come first (whatever the query, within --tag, --kind, --since and
    --until), then what recall finds, one dated line each (dates in UTC, or in --tz). The
    block goes to stdout; a line with its size goes to stderr.

    Example:

    \b
        graphmem context "what do I know about the user?" --budget 300 --tz Europe/Lisbon
    """
    with client_for(ctx, ns) as memory:
        block = memory.context(
            query,
            budget_tokens=budget,
            k=k,
            timezone=timezone,
            short_ids=not full_ids,
            include_cold=include_cold,
            **filters,
        )
    if as_json:
        emit(block.model_dump(mode="json"), as_json=True)
        return
    if block.text:
        click.echo(block.text)
    click.echo(
        f"{block.tokens} of {block.budget_tokens} tokens ({block.tokenizer}); "
        f"{len(block.fact_ids)} fact(s), {len(block.episode_ids)} episode(s), "
        f"{block.omitted} left out",
        err=True,
    )
    if block.warning is not None:
        click.echo(f"Warning: {_flags(block.warning)}", err=True)


@main.command()
@click.argument("id")
@ns_option
@output_options
@click.pass_context
def get(ctx: click.Context, id: str, ns: str | None, as_json: bool) -> None:
    """Show the fact or episode with this id.

    Example:

    \b
        graphmem get 3f2a9c1e-... --json
    """
    from graphmem.models import Fact

    with client_for(ctx, ns) as memory:
        item = memory.get(id)
    data = {"kind": "fact" if isinstance(item, Fact) else "episode", **item.model_dump(mode="json")}
    emit(data, as_json=as_json, table=item_mapping)


def _history_table(history: Mapping[str, Any]) -> str:
    """The chain as a table, from the JSON form ``--json`` prints (so times read the same)."""
    rows = [
        {**fact, "": "*" if fact["id"] == history["head_id"] else "", "text": clip(fact["text"])}
        for fact in history["facts"]
    ]
    chain = render_table(
        rows, ["", "recorded_at", "recorded_by", "retired_at", "status", "id", "text"]
    )
    edges = render_table(
        [
            {
                "at": edge["at"],
                "actor": edge["actor"],
                "newer": edge["newer_id"],
                "older": edge["older_id"],
                "reason": edge["reason"],
            }
            for edge in history["edges"]
        ],
        ["at", "actor", "newer", "older", "reason"],
    )
    head = (
        f"head (believed now): {history['head_id']}, marked *"
        if history["head_id"]
        else "head: none (the chain ends in a retired fact)"
    )
    return f"{chain}\n\n{head}\n\nsupersedes edges (newer replaces older):\n{edges}"


@main.command()
@click.argument("id")
@ns_option
@output_options
@click.pass_context
def history(ctx: click.Context, id: str, ns: str | None, as_json: bool) -> None:
    """Show a fact's supersession chain, oldest first, with when, who and why (who created
    each fact too).

    The believed fact the chain leads to now (its head) is marked with *.

    Example:

    \b
        graphmem history 3f2a9c1e-...
    """
    with client_for(ctx, ns) as memory:
        chain = memory.history(id)
    emit(
        chain.model_dump(mode="json"),
        as_json=as_json,
        table=_history_table,
        rows=lambda d: list(d["facts"]),
    )


@main.command()
@ns_option
@output_options
@click.pass_context
def stats(ctx: click.Context, ns: str | None, as_json: bool) -> None:
    """Count the namespace's facts (by status), episodes, sessions and relationships.

    Example:

    \b
        graphmem stats --ns user-42 --json
    """
    with client_for(ctx, ns) as memory:
        counts = memory.stats()
    data = counts.model_dump(mode="json")

    def table(d: Mapping[str, Any]) -> str:
        counts = sorted(d["facts_by_status"].items())
        by_status = ", ".join(f"{k} {v}" for k, v in counts if v)  # the JSON has every status
        return render_mapping({**d, "facts_by_status": by_status or None})

    emit(data, as_json=as_json, table=table)
    if _holds_nothing(counts):
        nothing(ctx, f"namespace {counts.ns!r} holds nothing (is the name right?)")


@main.command()
@click.argument("id")
@click.option("--unpin", is_flag=True, help="Unpin the fact instead.")
@ns_option
@output_options
@click.pass_context
def pin(ctx: click.Context, id: str, unpin: bool, ns: str | None, as_json: bool) -> None:
    """Pin a fact so that `graphmem context` always shows it first (--unpin undoes it).

    Example:

    \b
        graphmem pin 3f2a9c1e-... --unpin
    """
    with client_for(ctx, ns) as memory:
        fact = memory.pin(id, pinned=not unpin)
    emit(fact_data(fact), as_json=as_json, table=item_mapping)


def _hit_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """recall --csv: a row per hit, its rank, scores, dates and text."""
    rows = []
    for rank, hit in enumerate(data["hits"], start=1):
        item = hit.get("fact") or hit.get("episode") or {}
        rows.append(
            {
                "rank": rank,
                "kind": hit["kind"],
                "id": hit["id"],
                "score": hit["score"],
                "vector": hit["scores"].get("vector"),
                "fulltext": hit["scores"].get("fulltext"),
                "recorded_at": item.get("recorded_at"),
                "text": hit["text"],
            }
        )
    return rows
