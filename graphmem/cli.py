"""The ``graphmem`` command line: a thin click layer over the library.

Every command prints a table or key/value block for people, and ``--json`` for machines.
Errors from graphmem's error tree become one ``Error:`` line on stderr and exit status 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from graphmem import __version__
from graphmem.errors import GraphmemError
from graphmem.settings import GraphmemSettings, load_settings

if TYPE_CHECKING:  # the embedder pulls in torch: import it only for commands that need it
    from graphmem.embeddings import SentenceTransformerEmbedder

F = TypeVar("F", bound=Callable[..., Any])


# --- output ------------------------------------------------------------------------------------
def output_options(func: F) -> F:
    """Add ``--json`` to a command; the command receives it as ``as_json``."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print JSON instead of a human-readable table."
    )(func)


def emit(data: Any, *, as_json: bool, table: Callable[[Any], str] | None = None) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
    else:
        click.echo(table(data) if table else render_mapping(data))


def render_mapping(data: Mapping[str, Any]) -> str:
    width = max((len(k) for k in data), default=0)
    return "\n".join(f"{k.ljust(width)}  {_cell(v)}" for k, v in data.items())


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    if not rows:
        return "(none)"
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


# --- errors and settings -----------------------------------------------------------------------
class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GraphmemError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)


def _settings(ctx: click.Context) -> GraphmemSettings:
    settings: GraphmemSettings = ctx.ensure_object(dict).setdefault("settings", load_settings())
    return settings


def _embedder(settings: GraphmemSettings) -> SentenceTransformerEmbedder:
    from graphmem.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.from_settings(settings)


# --- commands ----------------------------------------------------------------------------------
@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="graphmem")
def main() -> None:
    """graphmem: memory for AI agents on Neo4j.

    Which Neo4j is used is one setting, GRAPHMEM_NEO4J_URI: 'local' (default, a server
    graphmem builds and runs), 'docker', or the URI of an existing server.

    Example:

        graphmem neo4j start && graphmem init && graphmem demo
    """


@main.group()
def neo4j() -> None:
    """Start, stop and inspect the managed Neo4j (local server or Docker).

    Example:

        graphmem neo4j start
    """


def _status_table(data: Mapping[str, Any]) -> str:
    state = "running" if data["running"] else "stopped"
    head = f"Neo4j {data['version']} ({data['mode']}) {state} at {data['uri']}"
    details = {k: v for k, v in data.items() if k not in ("running", "uri", "version", "mode")}
    return head + "\n" + render_mapping({k: v for k, v in details.items() if v not in (None, "")})


@neo4j.command("start")
@output_options
@click.pass_context
def neo4j_start(ctx: click.Context, as_json: bool) -> None:
    """Start the managed Neo4j and wait until Bolt accepts connections.

    Idempotent: if it already runs, nothing changes. The first local start builds the
    server with Maven (downloading the Neo4j jars once); later starts reuse the build.

    Example:

        graphmem neo4j start --json
    """
    from graphmem.servers import managed_server

    server = managed_server(_settings(ctx))
    result = server.start()
    data = {
        **result.status.as_dict(),
        "mode": server.mode,
        "already_running": result.already_running,
        "seconds": round(result.seconds, 2),
    }
    data["password_file"] = str(server.password_file)
    emit(data, as_json=as_json, table=_status_table)


@neo4j.command("stop")
@output_options
@click.pass_context
def neo4j_stop(ctx: click.Context, as_json: bool) -> None:
    """Stop the managed Neo4j cleanly. Its data stays for the next start.

    Example:

        graphmem neo4j stop
    """
    from graphmem.servers import managed_server

    server = managed_server(_settings(ctx))
    stopped = server.stop()
    data = {
        "stopped": stopped,
        "mode": server.mode,
        "note": "stopped" if stopped else "was not running",
    }
    emit(data, as_json=as_json)


@neo4j.command("status")
@output_options
@click.pass_context
def neo4j_status(ctx: click.Context, as_json: bool) -> None:
    """Say whether the managed Neo4j runs, where, and since when.

    Exits 0 whether or not it runs; the JSON field "running" tells which.

    Example:

        graphmem neo4j status --json
    """
    from graphmem.servers import managed_server

    server = managed_server(_settings(ctx))
    emit({**server.status().as_dict(), "mode": server.mode}, as_json=as_json, table=_status_table)


@main.command()
@click.option("--check", is_flag=True, help="Only verify the schema; change nothing.")
@output_options
@click.pass_context
def init(ctx: click.Context, check: bool, as_json: bool) -> None:
    """Apply graphmem's schema (constraints, vector, fulltext and range indexes).

    Idempotent. Waits until every index is ONLINE and records the embedder's model and
    dimension; refuses a graph built with another embedder.

    Example:

        graphmem init --check
    """
    from graphmem.graph import Graph

    settings = _settings(ctx)
    with Graph.open(settings, _embedder(settings), apply_schema=not check) as graph:
        report = graph.schema
        data = {"uri": graph.target.uri, "database": graph.database, **report.as_dict()}

    def table(d: Mapping[str, Any]) -> str:
        applied = ", ".join(map(str, d["applied_now"])) or "none (already up to date)"
        head = render_mapping(
            {
                "neo4j": f"{d['uri']} (database {d['database']})",
                "schema version": f"{d['version']} of {d['latest_version']}",
                "applied now": applied,
                "embedder": f"{d['embedder_model']} ({d['embedding_dimension']}-d)",
            }
        )
        return (
            head
            + "\n\n"
            + render_table(d["indexes"], ["name", "type", "state", "labels", "properties"])
        )

    emit(data, as_json=as_json, table=table)


@main.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Write a few facts through Bolt and read them back through both indexes.

    Starts the managed Neo4j if needed and applies the schema first. Each run uses a fresh
    namespace; exits 1 if the indexes do not find what was written.

    Example:

        graphmem demo
    """
    from graphmem.demo import run_demo
    from graphmem.graph import Graph
    from graphmem.servers import managed_server

    settings = _settings(ctx)
    if settings.neo4j_mode != "external":
        result = managed_server(settings).start()
        click.echo(
            f"Neo4j at {result.status.uri} "
            f"({'already running' if result.already_running else 'started'})"
        )
    embedder = _embedder(settings)
    with Graph.open(settings, embedder) as graph:
        click.echo(
            f"schema version {graph.schema.version}, embedder "
            f"{graph.schema.embedder_model} ({graph.schema.embedding_dimension}-d)"
        )
        outcome = run_demo(graph, embedder, say=click.echo)
    if not outcome.ok:
        click.echo("Error: the indexes did not return the facts just written", err=True)
        sys.exit(1)
    click.echo("\ndemo OK: written through Bolt, found through the vector and fulltext indexes")


@main.command()
@output_options
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show the effective settings (environment, .env, defaults); secrets are masked.

    Example:

        GRAPHMEM_NEO4J_URI=docker graphmem config --json
    """
    settings = _settings(ctx)
    data = {
        k: ("********" if k == "neo4j_password" and v is not None else v)
        for k, v in settings.model_dump().items()
    }
    data["neo4j_mode"] = settings.neo4j_mode
    emit(data, as_json=as_json)


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="graphmem")
