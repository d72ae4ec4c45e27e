"""The namespace commands: ``namespaces`` (the listing) with ``namespaces drop``, ``export``
and ``import``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import click

from graphmem.cli.options import MAX_BATCH_SIZE, batch_size_option
from graphmem.cli.output import (
    Counter,
    emit,
    json_option,
    output_options,
    render_mapping,
    render_table,
)
from graphmem.cli.root import client_for, main, nothing, ns_option
from graphmem.errors import ConfigurationError, ExportFormatError


def _listing_table(rows: list[dict[str, Any]]) -> str:
    shown = [
        {
            "namespace": row["ns"],
            "believed": row["facts_believed"],
            "facts": row["facts"],
            "episodes": row["episodes"],
            "forgotten": row["forgotten_facts"] + row["forgotten_episodes"],
            "runs": row["consolidation_runs"],
            "last_write": row["last_write_at"],
            "pending_import": row["import_pending"] or None,
        }
        for row in rows
    ]
    columns = ["namespace", "believed", "facts", "episodes", "forgotten", "runs", "last_write"]
    if any(row["pending_import"] for row in shown):
        columns.append("pending_import")
    return render_table(shown, columns)


@main.group(invoke_without_command=True)
@output_options
@click.pass_context
def namespaces(ctx: click.Context, as_json: bool) -> None:
    """List every namespace of the database with its counts and its last write.

    BELIEVED counts the facts believed now, FACTS every fact, FORGOTTEN the tombstones of
    erased facts and messages, RUNS the consolidation runs; LAST_WRITE is the newest time a
    fact was recorded or retired, a message recorded, something erased or a run started or
    finished. PENDING_IMPORT shows nodes an import staged and has not made visible (one under
    way, or one cut short: importing again or dropping the namespace removes them).

    Example:

    \b
        graphmem namespaces --json
    """
    if ctx.invoked_subcommand is not None:
        return
    with client_for(ctx, None) as memory:
        found = memory.namespaces()
    data = [summary.model_dump(mode="json") for summary in found]
    emit(data, as_json=as_json, table=_listing_table)
    if not found:
        nothing(ctx, "the database holds no namespace")


def _drop_table(data: Mapping[str, Any]) -> str:
    nodes = ", ".join(f"{label} {n:,}" for label, n in data["nodes"].items())
    return render_mapping(
        {
            "namespace": data["ns"],
            "dry run": data["dry_run"] or None,
            "nodes": nodes or "none",
            "removed in all": sum(data["nodes"].values()),
            "lock nodes": data["locks"] or None,
            "staged by unfinished imports": data["staged"] or None,
            "batches": data["batches"] or None,
        }
    )


@namespaces.command("drop")
@click.argument("namespace")
@click.option("--dry-run", is_flag=True, help="Count what would be removed; remove nothing.")
@click.option(
    "--yes",
    is_flag=True,
    help="Drop without asking first (needed where no one can answer: scripts, pipes, --json).",
)
@batch_size_option(1000, "Nodes removed per transaction.")
@output_options
@click.pass_context
def drop(
    ctx: click.Context, namespace: str, dry_run: bool, yes: bool, batch_size: int, as_json: bool
) -> None:
    """Remove a whole namespace for good: every fact, message, tombstone and consolidation
    record of it, batch by batch.

    Unlike `forget --all`, which erases the content but keeps a tombstone of each erased item
    for the audits (and refuses the same text coming back), a drop leaves nothing: the
    namespace's audit trail is gone and the same texts may be stored again. Export it first
    (`graphmem export`) to keep a copy. Asks before dropping on a terminal; elsewhere needs
    --yes.

    Example:

    \b
        graphmem namespaces drop user-42 --dry-run
        graphmem namespaces drop user-42 --yes
    """
    if not dry_run and not yes and not (sys.stdin.isatty() and not as_json):
        raise click.UsageError(
            "namespaces drop removes a namespace for good: pass --yes to go ahead without a "
            "question (see what would go first with --dry-run)"
        )
    ns = namespace
    with client_for(ctx, ns) as memory:
        if not dry_run and not yes:
            preview = memory.drop_namespace(ns, dry_run=True)
            if not preview.removed:
                nothing(ctx, f"namespace {ns!r} holds nothing: nothing was dropped")
            click.echo(_drop_table(preview.model_dump(mode="json")), err=True)
            click.confirm(
                f"Remove these {preview.removed:,} node(s) of namespace {ns!r} for good?",
                abort=True,
                err=True,
            )
        counter = Counter("Dropping", "nodes")
        try:
            result = memory.drop_namespace(
                ns, confirm=True, dry_run=dry_run, batch_size=batch_size, progress=counter
            )
        finally:
            counter.done()
    emit(result.model_dump(mode="json"), as_json=as_json, table=_drop_table)
    if not result.removed:
        nothing(ctx, f"namespace {ns!r} holds nothing: nothing was dropped")


@main.command("export")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the export to this file (default: standard output). It is written under a "
    "temporary name and renamed once whole, so an interrupted export leaves no FILE.",
)
@click.option(
    "--page-size",
    type=click.IntRange(1, MAX_BATCH_SIZE),
    default=500,
    show_default=True,
    help="Nodes read per transaction.",
)
@ns_option
@json_option("With -o: print what was exported as JSON (errors too, on stderr).")
@click.pass_context
def export_command(
    ctx: click.Context, output: Path | None, page_size: int, ns: str | None, as_json: bool
) -> None:
    """Export a namespace with its whole history as JSON Lines.

    One record per line: a header (format graphmem-namespace, version, graphmem version,
    namespace, embedder, export time), every node (facts with both clocks, messages,
    tombstones, consolidation runs and records), every relationship between them, and an end
    record with the counts. `graphmem import` reads it back into an empty namespace, here or
    on another server. Each page is read in a transaction of its own: export a namespace no
    one writes to for an exact copy (the end record says whether it changed meanwhile).

    Example:

    \b
        graphmem export --ns user-42 -o user-42.jsonl
    """
    if as_json and output is None:
        raise click.UsageError("--json goes with -o: without it the export itself is stdout")
    with client_for(ctx, ns) as memory:
        end = _write_export(memory.export(ns, page_size=page_size), output)
    summary = {"ns": memory.ns if ns is None else ns, "output": str(output or "-"), **end}
    summary.pop("record", None)
    if as_json:
        emit(summary, as_json=True)
    elif output is not None:
        nodes = sum(end["nodes"].values())
        click.echo(
            f"Exported {nodes:,} node(s) and {end['relationships']:,} relationship(s) of "
            f"namespace {summary['ns']!r} to {output}.",
            err=True,
        )
    if end["changed_during_export"]:
        click.echo(
            "Warning: the namespace changed while it was exported; each page is consistent, "
            "but the pages may not be: export again once no one writes to it.",
            err=True,
        )
    if not end["nodes"]:
        nothing(ctx, f"namespace {summary['ns']!r} holds nothing: the export is empty")


def _write_export(records: Iterable[dict[str, Any]], output: Path | None) -> dict[str, Any]:
    """Writes ``records`` one per line to ``output`` (whole or not at all) or stdout; returns
    the end record."""
    if output is None:
        return _write_lines(records, sys.stdout)
    partial = output.with_name(output.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as file:
            end = _write_lines(records, file)
        os.replace(partial, output)
    except OSError as exc:
        raise ConfigurationError(f"cannot write {output}: {exc.strerror or exc}") from exc
    finally:
        partial.unlink(missing_ok=True)
    return end


def _write_lines(records: Iterable[dict[str, Any]], file: IO[str]) -> dict[str, Any]:
    last: dict[str, Any] = {}
    for record in records:
        file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        last = record
    return last


def _import_table(data: Mapping[str, Any]) -> str:
    tombstones = {
        None: None,
        True: "recognise the erased texts here",
        False: "keep the audit trail, but no longer recognise the erased texts (other "
        "namespace or server)",
    }[data["tombstones_match"]]
    return render_mapping(
        {
            "namespace": data["ns"],
            "exported from": data["source_ns"],
            "exported at": data["exported_at"],
            "nodes": ", ".join(f"{label} {n:,}" for label, n in data["nodes"].items()),
            "relationships": data["relationships"],
            "ids given new values": len(data["remapped"]) or None,
            "tombstones": tombstones,
            "left by unfinished imports, removed": data["stale_removed"] or None,
        }
    )


@main.command("import")
@click.argument("file", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True))
@batch_size_option(500, "Records staged per transaction.")
@ns_option
@output_options
@click.pass_context
def import_command(
    ctx: click.Context, file: str, batch_size: int, ns: str | None, as_json: bool
) -> None:
    """Import an export (FILE, or - for standard input) into an empty namespace.

    Ids and both clocks are kept exactly; an id another namespace of this database already
    holds gets a new one, with every reference to it (--json lists them under remapped). All
    or nothing: the records are staged out of sight and made visible in one transaction; an
    interrupted import leaves nothing visible, and running it again cleans up and imports.
    Refused, writing nothing: a namespace that holds anything, a file that is not a whole
    export of this format version, an export made with another embedder.

    Example:

    \b
        graphmem import user-42.jsonl --ns user-42
    """
    counter = Counter("Importing", "records")
    try:
        with _lines(file) as lines, client_for(ctx, ns) as memory:
            result = memory.import_(_records(lines), ns=ns, batch_size=batch_size, progress=counter)
    finally:
        counter.done()
    emit(result.model_dump(mode="json"), as_json=as_json, table=_import_table)


def _lines(file: str) -> IO[str]:
    if file == "-":
        return sys.stdin
    try:
        return Path(file).open(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot read {file}: {exc.strerror or exc}") from exc


def _bounded(lines: IO[str]) -> Iterator[str]:
    """The lines of the file, each read with a bound: a line longer than any record an export
    writes stops the import before it is read whole."""
    from graphmem.core.namespaces.contract import MAX_RECORD_BYTES

    number = 0
    while line := lines.readline(MAX_RECORD_BYTES + 1):
        number += 1
        if len(line) > MAX_RECORD_BYTES:
            raise ExportFormatError(
                f"line {number} is over {MAX_RECORD_BYTES:,} characters, far more than any "
                "record an export writes"
            )
        yield line


def _records(lines: IO[str]) -> Iterator[dict[str, Any]]:
    """The JSON object of each line; a line that is not one stops the import."""
    from graphmem._json import json_objects

    problems: list[tuple[int, str]] = []
    for _, record in json_objects(_bounded(lines), problems):
        if problems:
            break
        yield record
    if problems:
        line, why = problems[0]
        raise ExportFormatError(f"line {line}: {why}")
