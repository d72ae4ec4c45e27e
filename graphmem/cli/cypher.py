"""``graphmem cypher``: the analyst library (``list``, ``show``) and read-only Cypher (``run``),
run on the guarded read path (:meth:`graphmem.client.graph.Graph.read`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from graphmem.cli import root
from graphmem.cli.output import FiniteFloat, json_option, note_json, render_table
from graphmem.cli.root import clip, main, ns_option, settings_of
from graphmem.errors import (
    ConfigurationError,
    InvalidInputError,
    QueryNotFoundError,
    TransactionTimeoutError,
)
from graphmem.settings.common import MAX_WAIT_SECONDS

if TYPE_CHECKING:  # for annotations only: the store loads when a command runs
    from graphmem.store.cypher import CypherQuery

_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)", re.DOTALL)


def _library() -> dict[str, CypherQuery]:
    from graphmem.errors import CypherFileError
    from graphmem.store.cypher import analyst_queries

    try:
        return analyst_queries()
    except CypherFileError as exc:
        raise ConfigurationError(f"the analyst library cannot be read: {exc}") from None


def resolve(target: str) -> CypherQuery:
    """A library query by name, or a ``.cypher`` file of your own by path (a TARGET ending in
    ``.cypher`` or naming a folder)."""
    from graphmem.errors import CypherFileError
    from graphmem.store.cypher import load_query_file

    if target.endswith(".cypher") or "/" in target or "\\" in target:
        try:
            return load_query_file(Path(target))
        except CypherFileError as exc:
            raise InvalidInputError(str(exc)) from None
    library = _library()
    if target not in library:
        raise QueryNotFoundError(
            f"no query named {target!r} in the analyst library (it has: "
            f"{', '.join(sorted(library))}); a file of your own is a path ending in .cypher"
        )
    return library[target]


def first_sentence(text: str) -> str:
    found = _SENTENCE.match(" ".join(text.split()))
    return found.group(1) if found else " ".join(text.split())


def header_data(query: CypherQuery) -> dict[str, Any]:
    """A query's header as JSON: what ``graphmem cypher list --json`` prints for it."""
    from graphmem.cli import cypher_values as values  # loads neo4j

    return {
        "name": query.name,
        "mode": query.mode,
        "description": query.description,
        "params": [{"name": p, "type": query.param_types.get(p)} for p in query.params],
        "returns": [c.strip() for c in query.returns.split(",") if c.strip()],
        "example": values.plain(query.example),
        "path": str(query.path) if query.path else None,
    }


@main.group("cypher")
def cypher_group() -> None:
    """Run read-only Cypher: the analyst library, a .cypher file, or a query of your own.

    Every query is planned first and runs only if its plan reads and nothing else (no
    writes, schema or admin commands, LOAD CSV, or procedures off a short allow-list), in a
    read transaction with a time limit and a row limit (GRAPHMEM_READ_TIMEOUT,
    GRAPHMEM_READ_ROW_LIMIT). A refused query is an error naming what was refused (exit 1).

    Example:

    \b
        graphmem cypher list
        graphmem cypher run beliefs_as_of -p as_of='3 days ago'
        graphmem cypher run -q 'MATCH (f:Fact {ns: $ns}) RETURN f.text LIMIT 5'
    """


@cypher_group.command("list")
@json_option("Print the full headers as JSON (errors too, on stderr).")
@click.pass_context
def list_queries(ctx: click.Context, as_json: bool) -> None:
    """List the analyst library: each query's name, parameters with their types, the
    columns it returns, and what it answers.

    Example:

    \b
        graphmem cypher list --json
    """
    queries = sorted(_library().values(), key=lambda q: q.name)
    if as_json:
        click.echo(json.dumps([header_data(q) for q in queries], indent=2, ensure_ascii=False))
        return
    # One short line each: `graphmem cypher show NAME` has the types, columns and example.
    rows = [
        {
            "name": q.name,
            "params": ", ".join(p for p in q.param_types if p != "ns") or "-",
            "answers": clip(first_sentence(q.description), 70),
        }
        for q in queries
    ]
    click.echo(render_table(rows, ["name", "params", "answers"]))
    click.echo("\n(each takes --ns; `graphmem cypher show NAME` gives its types and columns)")


@cypher_group.command("show")
@click.argument("target")
def show(target: str) -> None:
    """Print a query with its header, fragments expanded, ready to paste into cypher-shell.

    TARGET is a library query's name or a path to a .cypher file.

    Example:

    \b
        graphmem cypher show beliefs_as_of
    """
    query = resolve(target)
    header: list[str] = []
    if query.path is not None:
        for line in query.path.read_text(encoding="utf-8").splitlines():
            if line.strip().startswith("//"):
                header.append(line.rstrip())
            elif line.strip():
                break
    click.echo("\n".join([*header, query.text.rstrip().rstrip(";") + ";"]))


def _output(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """The callback of --json, --csv and --jsonl: at most one of them."""
    if value:
        flag = param.opts[0]
        chosen = ctx.ensure_object(dict).setdefault("cypher_format", flag)
        if chosen != flag:
            raise click.UsageError(f"{chosen} and {flag} cannot go together")
        if flag in ("--json", "--jsonl"):
            note_json(ctx, param, value)
    return value


@cypher_group.command("run")
@click.argument("target", required=False)
@click.option("-q", "--query", "text", metavar="CYPHER", help="Run this query text instead.")
@click.option(
    "-p",
    "--param",
    "param_options",
    multiple=True,
    metavar="NAME[:TYPE]=VALUE",
    help="A parameter; repeat for several. Read as the type the query's header declares "
    "(TYPE names one otherwise; without either, JSON if it parses, else text).",
)
@click.option(
    "--limit",
    type=click.IntRange(1, 10_000_000),
    help="Keep at most this many rows (default: GRAPHMEM_READ_ROW_LIMIT); a cut is said on stderr.",
)
@click.option(
    "--timeout",
    type=FiniteFloat(0, MAX_WAIT_SECONDS, min_open=True),
    metavar="SECONDS",
    help="Stop the query after this long (default: GRAPHMEM_READ_TIMEOUT).",
)
@ns_option
@click.option(
    "--json", "as_json", is_flag=True, callback=_output, help="Print one JSON array of rows."
)
@click.option(
    "--jsonl", "as_jsonl", is_flag=True, callback=_output, help="Print a JSON object a line."
)
@click.option(
    "--csv", "as_csv", is_flag=True, callback=_output, help="Print CSV with a header line."
)
@click.option(
    "--raw-csv",
    is_flag=True,
    help="With --csv, write text cells that start with =, +, -, @, a tab or a carriage return "
    "as they are, instead of with a ' before them (which keeps a spreadsheet from running "
    "them as formulas).",
)
@click.pass_context
def run(
    ctx: click.Context,
    target: str | None,
    text: str | None,
    param_options: tuple[str, ...],
    limit: int | None,
    timeout: float | None,
    ns: str | None,
    as_json: bool,
    as_jsonl: bool,
    as_csv: bool,
    raw_csv: bool,
) -> None:
    """Run a library query, a .cypher file or a query text (-q) on the guarded read path.

    TARGET is a name from `graphmem cypher list` or a path to a .cypher file with a header.
    Typed parameters are read as their type: string, integer, float, boolean
    (true/false/yes/no/1/0), datetime (ISO 8601 with a zone, '2026-03-01', 'now', '3 days
    ago'), list<string> (a JSON list or a,b,c) and map (a JSON object). $ns is the namespace
    (--ns or GRAPHMEM_NAMESPACE) unless -p gives it, and $limit is --limit.
    Prints a table, or with --json, --jsonl or --csv the rows as data (times as ISO 8601;
    nodes, relationships and paths as maps without embeddings).

    Exit status: 0 on success; 1 when the query is refused, runs past --timeout, or a
    parameter is missing, unknown or not of its type (nothing runs); 2 for a malformed
    command line.

    Example:

    \b
        graphmem cypher run beliefs_as_of -p as_of='1 hour ago' --limit 20
        graphmem cypher run fact_history -p fact_id=3f2a... --json
        graphmem cypher run ./my_query.cypher -p since=2026-03-01 --csv
        graphmem cypher run -q 'MATCH (f:Fact {ns: $ns}) RETURN f.text LIMIT $n' -p n=5
    """
    from graphmem.cli import cypher_values as values  # loads neo4j
    from graphmem.core.checks import namespace

    if (target is None) == (text is None):
        raise click.UsageError("give a TARGET (a query's name or a .cypher file) or -q, not both")
    try:
        options = values.parse_options(param_options)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'-p' / '--param'") from None
    settings = settings_of(ctx)
    limit = settings.read_row_limit if limit is None else limit
    timeout = settings.read_timeout if timeout is None else timeout
    query = resolve(target) if target is not None else None
    body = query.text if query is not None else str(text)
    if not body.strip():
        raise InvalidInputError("the query is empty")
    params = values.query_params(
        query, body, options, ns=namespace(ns, settings.namespace), limit=limit
    )
    from graphmem.client.graph import Graph

    with Graph.open(settings, root.embedder_for(settings), apply_schema=False) as graph:
        try:
            rows = graph.read(query or body, params, timeout=timeout, limit=limit)
        except TransactionTimeoutError as exc:
            raise TransactionTimeoutError(
                f"the query ran past --timeout {timeout:g} s and was stopped ({exc}); give it "
                "more time with --timeout, or narrow it"
            ) from exc
    columns = list(rows.columns)
    data = values.plain_rows(columns, rows.records)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif as_jsonl:
        click.echo(values.to_jsonl(data), nl=False)
    elif as_csv:
        click.echo(values.to_csv(columns, data, escape=not raw_csv), nl=False)
    else:
        click.echo(_table(columns, data))
    if rows.truncated:
        click.echo(
            f"Note: cut at {limit} rows (--limit); the query returned more. Raise --limit or "
            "narrow the query.",
            err=True,
        )


def _table(columns: list[str], data: list[dict[str, Any]]) -> str:
    from graphmem.cli import cypher_values as values  # loads neo4j

    if not columns:
        return "(no columns)"
    if not data:
        return "  ".join(c.upper() for c in columns) + "\n(no rows)"
    shown = [{c: None if row[c] is None else values.cell(row[c]) for c in columns} for row in data]
    count = f"({len(data)} row{'s' if len(data) != 1 else ''})"
    return render_table(shown, columns) + "\n" + count
