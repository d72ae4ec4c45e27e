"""``graphmem neo4j``: start, stop and inspect the managed Neo4j."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from graphmem.cli.output import emit, output_options, render_mapping
from graphmem.cli.root import main, settings_of
from graphmem.errors import ConfigurationError


@main.group()
def neo4j() -> None:
    """Start, stop and inspect the managed Neo4j (local server or Docker).

    Example:

    \b
        graphmem neo4j start
    """


def _status_table(data: Mapping[str, Any]) -> str:
    state = "running" if data["running"] else "stopped"
    head = f"Neo4j {data['version']} ({data['mode']}) {state} at {data['uri']}"
    details = {k: v for k, v in data.items() if k not in ("running", "uri", "version", "mode")}
    return head + "\n" + render_mapping({k: v for k, v in details.items() if v not in (None, "")})


@neo4j.command("start")
@click.option(
    "--remove-unknown-users",
    is_flag=True,
    help="Local server: drop users other than graphmem's own before Bolt opens, instead of "
    "refusing to start (a server already running is left as it is).",
)
@output_options
@click.pass_context
def neo4j_start(ctx: click.Context, remove_unknown_users: bool, as_json: bool) -> None:
    """Start the managed Neo4j and wait until Bolt accepts connections.

    Idempotent: if it already runs, nothing changes. The first local start builds the
    server with Maven (downloading the Neo4j jars once); later starts reuse the build.

    The local server sets its password before Bolt opens, and refuses to start on a store
    with users it did not create (--remove-unknown-users drops them).

    Example:

    \b
        graphmem neo4j start --json
    """
    from graphmem.servers.local import LocalNeo4jServer
    from graphmem.servers.targets import managed_server

    server = managed_server(settings_of(ctx))
    if remove_unknown_users:
        if not isinstance(server, LocalNeo4jServer):
            raise ConfigurationError(
                "--remove-unknown-users applies to the local server (GRAPHMEM_NEO4J_URI=local)"
            )
        result = server.start(remove_unknown_users=True)
    else:
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

    \b
        graphmem neo4j stop
    """
    from graphmem.servers.targets import managed_server

    server = managed_server(settings_of(ctx))
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

    Exits 0 whether or not it runs; the JSON field "running" tells which. (An external
    GRAPHMEM_NEO4J_URI is not managed by graphmem: that is an error, exit 1.)

    Example:

    \b
        graphmem neo4j status --json
    """
    from graphmem.servers.targets import managed_server

    server = managed_server(settings_of(ctx))
    emit({**server.status().as_dict(), "mode": server.mode}, as_json=as_json, table=_status_table)
