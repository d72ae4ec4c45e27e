"""``graphmem init`` and ``graphmem reembed``: the schema and the embedder recorded in it."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from graphmem.cli.options import batch_size_option
from graphmem.cli.output import emit, output_options, render_mapping, render_table
from graphmem.cli.root import embedder_for, main, settings_of

if TYPE_CHECKING:  # for annotations only: the library loads when a command runs
    from graphmem.client.reembed import ReembedPlan


@main.command()
@click.option("--check", is_flag=True, help="Only verify the schema; change nothing.")
@output_options
@click.pass_context
def init(ctx: click.Context, check: bool, as_json: bool) -> None:
    """Apply graphmem's schema (constraints, vector, fulltext and range indexes).

    Idempotent. Waits until every index is ONLINE and records the embedder's model and
    dimension; refuses a graph built with another embedder.

    Example:

    \b
        graphmem init --check
    """
    from graphmem.client.graph import Graph

    settings = settings_of(ctx)
    with Graph.open(settings, embedder_for(settings), apply_schema=not check) as graph:
        report = graph.schema
        data = {"uri": graph.target.uri, "database": graph.database, **report.as_dict()}
    mismatches = report.checksum_mismatches

    def table(d: Mapping[str, Any]) -> str:
        applied = ", ".join(map(str, d["applied_now"])) or "none (already up to date)"
        head = render_mapping(
            {
                "neo4j": f"{d['uri']} (database {d['database']})",
                "schema version": f"{d['version']} of {d['latest_version']}",
                "applied now": applied,
                **({"restored": ", ".join(d["restored"])} if d["restored"] else {}),
                "embedder": f"{d['embedder_model']} ({d['embedding_dimension']}-d)",
                **(
                    {"checksums differ": "; ".join(m.describe() for m in mismatches)}
                    if mismatches
                    else {}
                ),
            }
        )
        return (
            head
            + "\n\n"
            + render_table(d["indexes"], ["name", "type", "state", "labels", "properties"])
        )

    emit(data, as_json=as_json, table=table)


@main.command()
@batch_size_option(256, "Items embedded and written per transaction.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--again",
    is_flag=True,
    help="Also when the graph has the configured model already: embed everything again "
    "(for episodes stored before they were embedded with their speaker).",
)
@output_options
@click.pass_context
def reembed(ctx: click.Context, batch_size: int, yes: bool, again: bool, as_json: bool) -> None:
    """Move the graph to the configured embedding model (GRAPHMEM_EMBEDDING_MODEL).

    Embeds every fact and episode of the database again, rebuilds the vector indexes for the
    model's dimension and records the model. Clients are refused meanwhile, and those of the
    old model afterwards. A run that stops (an error, Ctrl-C, SIGTERM) resumes where it was
    when started again. With --again, a graph that has the model already is embedded again.

    Example:

    \b
        GRAPHMEM_EMBEDDING_MODEL=/models/bge-small-en-v1.5 graphmem reembed --yes
    """
    from graphmem._signals import EndingSignals
    from graphmem.client.reembed import ReembedReport, reembed_plan, refuse_if_running
    from graphmem.client.reembed import reembed as run_reembed
    from graphmem.servers.connection import open_driver
    from graphmem.servers.targets import resolve_target

    settings = settings_of(ctx)
    embedder = embedder_for(settings)
    target = resolve_target(settings)
    with open_driver(target, connection_timeout=settings.neo4j_connection_timeout) as driver:
        plan = reembed_plan(driver, database=target.database, embedder=embedder)
        if plan.up_to_date and not again:
            # The keys of a run's report, so that a script reads the same ones either way.
            nothing = ReembedReport(plan=plan, facts=0, episodes=0, caught_up=0, seconds=0.0)
            report_data = {**nothing.model_dump(), "done": False}
            emit(report_data, as_json=as_json, table=lambda d: "Nothing to do: " + _plan_text(plan))
            return
        refuse_if_running(plan)  # before asking to go on with what it would refuse
        if not yes:
            click.confirm(f"{_plan_text(plan, again)}. Go on?", abort=True, err=True)
        total = plan.facts + plan.episodes
        with (
            # SIGTERM, SIGHUP and Ctrl-C stop the run after its current batch, and it gives its
            # claim up; a second signal stops it at once.
            EndingSignals(at_once=False) as ending,
            click.progressbar(
                length=total,
                label="Re-embedding",
                file=sys.stderr,
                hidden=not total or not sys.stderr.isatty(),
            ) as bar,
        ):
            report = run_reembed(
                driver,
                database=target.database,
                embedder=embedder,
                batch_size=batch_size,
                progress=bar.update,
                timeout=settings.schema_wait_timeout,
                checkpoint=ending.check,
                again=again,
            )

    def table(d: Mapping[str, Any]) -> str:
        return render_mapping(
            {
                "embedder": f"{d['plan']['to_model']} ({d['plan']['to_dimension']}-d)",
                "was": f"{d['plan']['from_model']} ({d['plan']['from_dimension']}-d)",
                "facts": d["facts"],
                "episodes": d["episodes"],
                "caught up": f"{d['caught_up']} (recorded while it ran)",
                "seconds": f"{d['seconds']:.1f}",
            }
        )

    emit({**report.model_dump(), "done": True}, as_json=as_json, table=table)


def _plan_text(plan: ReembedPlan, again: bool = False) -> str:
    counts = (
        f"{plan.facts} fact(s) and {plan.episodes} episode(s) in {plan.namespaces} namespace(s)"
    )
    model = f"{plan.to_model!r} ({plan.to_dimension}-d)"
    if plan.up_to_date and again:
        return (
            f"Re-embed {counts} again with {model}, the graph's model; clients are refused "
            "until it ends"
        )
    if plan.up_to_date:
        return f"the graph's vectors are already those of {model}"
    verb = (
        f"Resume re-embedding the graph's {counts} (some done already)"
        if plan.resumes
        else f"Re-embed {counts}"
    )
    replacing = (
        f", replacing the unfinished re-embedding to {plan.replaces!r}" if plan.replaces else ""
    )
    return (
        f"{verb} from {plan.from_model!r} ({plan.from_dimension}-d) to "
        f"{plan.to_model!r} ({plan.to_dimension}-d){replacing}; clients are refused until it "
        "ends"
    )
