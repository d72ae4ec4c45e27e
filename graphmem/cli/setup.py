"""``graphmem demo`` and ``graphmem config``."""

from __future__ import annotations

import sys

import click

from graphmem.cli.output import emit, output_options
from graphmem.cli.root import main, settings_of


@main.command()
@click.option(
    "--ns",
    "--namespace",
    "ns",
    metavar="NAMESPACE",
    help="Use this namespace and keep what the demo wrote (default: a fresh namespace whose "
    "words the demo erases when it is done).",
)
@click.option("--keep", is_flag=True, help="Keep the fresh namespace's memories afterwards.")
@click.pass_context
def demo(ctx: click.Context, ns: str | None, keep: bool) -> None:
    """Remember a few facts, update one, and recall them now and as believed before.

    Starts the managed Neo4j if needed and applies the schema first. Each run uses a fresh
    namespace and, once its checks pass, erases what it wrote there (`forget`, which leaves
    content-free tombstones); --keep or --ns keeps the memories for you to look at. Exits 1
    if recall does not give the expected answers.

    Example:

    \b
        graphmem demo
    """
    from graphmem.cli.demo import run_demo
    from graphmem.client import Memory
    from graphmem.servers.targets import managed_server

    settings = settings_of(ctx)
    if settings.neo4j_mode != "external":
        result = managed_server(settings).start()
        click.echo(
            f"Neo4j at {result.status.uri} "
            f"({'already running' if result.already_running else 'started'})"
        )
    erased = False
    with Memory(settings) as memory:
        outcome = run_demo(memory, ns=ns, say=click.echo)
        if outcome.ok and ns is None and not keep:
            memory.forget(everything=True, reason="graphmem demo cleans up", ns=outcome.namespace)
            erased = True
    if not outcome.ok:
        click.echo("Error: recall did not give the expected answers", err=True)
        sys.exit(1)
    click.echo(
        "\ndemo OK: the update wins now, the old fact answers for the past, and nothing was lost"
    )
    if erased:
        click.echo(
            f"(then the demo erased what it wrote in {outcome.namespace!r}; --keep keeps it)"
        )


@main.command()
@output_options
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show the effective settings and their defaults; secrets are masked.

    They come from GRAPHMEM_ variables and from the file GRAPHMEM_ENV_FILE names (no .env is
    read unless named).

    Example:

    \b
        GRAPHMEM_NEO4J_URI=docker graphmem config --json
    """
    settings = settings_of(ctx)
    data = {
        k: ("********" if k == "neo4j_password" and v is not None else v)
        for k, v in settings.model_dump().items()
    }
    data["neo4j_mode"] = settings.neo4j_mode
    emit(data, as_json=as_json)
