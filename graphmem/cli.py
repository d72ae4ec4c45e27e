"""The ``graphmem`` command line: a thin click layer over the library.

Every command prints a table or key/value block for people, and ``--json`` for machines.
Errors from graphmem's error tree become one ``Error:`` line on stderr and exit status 1.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import click

from graphmem import __version__
from graphmem._text import and_more
from graphmem.cli_output import emit, error_data, output_options, render_mapping, render_table
from graphmem.errors import BadLinesError, GraphmemError, MessageConflictError
from graphmem.settings import GraphmemSettings, load_settings

if TYPE_CHECKING:  # the embedder pulls in torch: import it only for commands that need it
    from graphmem.embeddings import SentenceTransformerEmbedder
    from graphmem.memory import Memory
    from graphmem.models import Fact, RecallResult
    from graphmem.reembed import ReembedPlan

F = TypeVar("F", bound=Callable[..., Any])


# --- errors and settings -----------------------------------------------------------------------
class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GraphmemError as exc:
            if isinstance(ctx.obj, dict) and ctx.obj.get("as_json"):
                click.echo(json.dumps(error_data(exc), indent=2, ensure_ascii=False), err=True)
            else:
                click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)


def _settings(ctx: click.Context) -> GraphmemSettings:
    settings: GraphmemSettings = ctx.ensure_object(dict).setdefault("settings", load_settings())
    return settings


def _embedder(settings: GraphmemSettings) -> SentenceTransformerEmbedder:
    from graphmem.embeddings import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.from_settings(settings, lazy=True)


# --- commands ----------------------------------------------------------------------------------
@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="graphmem")
@click.pass_context
def main(ctx: click.Context) -> None:
    """graphmem: memory for AI agents on Neo4j.

    Which Neo4j is used is one setting, GRAPHMEM_NEO4J_URI: 'local' (default, a server
    graphmem builds and runs), 'docker', or the URI of an existing server.

    Exit status: 0 on success; 1 when graphmem reports an error (an 'Error:' line on stderr,
    or with --json a JSON object {"error": {"type", "message", ...}} there); 2 when the
    command line itself is malformed.

    Example:

    \b
        graphmem neo4j start && graphmem init && graphmem demo
    """
    ctx.ensure_object(dict)  # shared with the subcommands: settings, and whether --json is on
    # stderr carries graphmem's own error line (or JSON): the driver's warnings, such as a
    # transaction it retries after a deadlock and then commits, are not errors of the command.
    logging.getLogger("neo4j").setLevel(logging.ERROR)


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
@output_options
@click.pass_context
def neo4j_start(ctx: click.Context, as_json: bool) -> None:
    """Start the managed Neo4j and wait until Bolt accepts connections.

    Idempotent: if it already runs, nothing changes. The first local start builds the
    server with Maven (downloading the Neo4j jars once); later starts reuse the build.

    Example:

    \b
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

    \b
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

    Exits 0 whether or not it runs; the JSON field "running" tells which. (An external
    GRAPHMEM_NEO4J_URI is not managed by graphmem: that is an error, exit 1.)

    Example:

    \b
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

    \b
        graphmem init --check
    """
    from graphmem.graph import Graph

    settings = _settings(ctx)
    with Graph.open(settings, _embedder(settings), apply_schema=not check) as graph:
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
@click.option(
    "--batch-size",
    type=click.IntRange(1, 10_000),
    default=256,
    show_default=True,
    help="Items embedded and written per transaction.",
)
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
    from graphmem.connection import open_driver
    from graphmem.reembed import ReembedReport, reembed_plan, refuse_if_running
    from graphmem.reembed import reembed as run_reembed
    from graphmem.servers import resolve_target

    settings = _settings(ctx)
    embedder = _embedder(settings)
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


@main.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Remember a few facts, update one, and recall them now and as believed before.

    Starts the managed Neo4j if needed and applies the schema first. Each run uses a fresh
    namespace; exits 1 if recall does not give the expected answers.

    Example:

    \b
        graphmem demo
    """
    from graphmem.demo import run_demo
    from graphmem.memory import Memory
    from graphmem.servers import managed_server

    settings = _settings(ctx)
    if settings.neo4j_mode != "external":
        result = managed_server(settings).start()
        click.echo(
            f"Neo4j at {result.status.uri} "
            f"({'already running' if result.already_running else 'started'})"
        )
    with Memory(settings) as memory:
        outcome = run_demo(memory, say=click.echo)
    if not outcome.ok:
        click.echo("Error: recall did not give the expected answers", err=True)
        sys.exit(1)
    click.echo(
        "\ndemo OK: the update wins now, the old fact answers for the past, and nothing was lost"
    )


@main.command()
@output_options
@click.pass_context
def config(ctx: click.Context, as_json: bool) -> None:
    """Show the effective settings (environment, .env, defaults); secrets are masked.

    Example:

    \b
        GRAPHMEM_NEO4J_URI=docker graphmem config --json
    """
    settings = _settings(ctx)
    data = {
        k: ("********" if k == "neo4j_password" and v is not None else v)
        for k, v in settings.model_dump().items()
    }
    data["neo4j_mode"] = settings.neo4j_mode
    emit(data, as_json=as_json)


# --- memory commands ---------------------------------------------------------------------------
def ns_option(func: F) -> F:
    """Add ``--ns`` to a command; the command receives it as ``ns``."""
    return click.option(
        "--ns",
        "ns",
        metavar="NAMESPACE",
        default=None,
        help="Namespace to use (default: the GRAPHMEM_NAMESPACE setting).",
    )(func)


def _memory(ctx: click.Context, ns: str | None) -> Memory:
    """The sync client for the settings and ``--ns``; it connects when entered.

    The embedding model loads on first use, so that commands that embed nothing, and input
    refused before anything is embedded, do not wait for it (recall loads it after its checks
    and before it times the query's embedding).
    """
    from graphmem.memory import Memory

    settings = _settings(ctx)
    return Memory(settings, ns=ns, embedder=_embedder(settings))


def _json_object(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None:
        return None
    from graphmem.jsonl import json_error, load_json

    try:
        data = load_json(value)
    except (ValueError, RecursionError) as exc:
        raise click.BadParameter(f"not valid JSON: {json_error(exc)}") from None
    if not isinstance(data, dict):
        raise click.BadParameter('must be a JSON object, e.g. \'{"key": "value"}\'')
    return data


def _clip(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _number(value: float | None) -> str | None:
    return None if value is None else f"{value:.3f}"


def _item_mapping(data: Mapping[str, Any]) -> str:
    """A dumped fact or episode as a key/value block (metadata as compact JSON)."""
    shown = {
        k: (json.dumps(v, sort_keys=True) if k == "metadata" and v is not None else v)
        for k, v in data.items()
    }
    shown.update({k: None for k, v in shown.items() if v == []})
    return render_mapping(shown)


def _fact_data(fact: Fact) -> dict[str, Any]:
    return fact.model_dump(mode="json")


@main.command()
@click.argument("text")
@click.option("--source", help="Where the fact comes from (a label of your choice).")
@click.option("--tag", "tags", multiple=True, help="A tag for the fact; repeat for several.")
@click.option("--valid-from", metavar="ISO", help="When it became true (ISO 8601 with zone).")
@click.option("--valid-to", metavar="ISO", help="When it stopped being true (ISO 8601 with zone).")
@click.option(
    "--supersedes",
    multiple=True,
    metavar="ID",
    help="Id of a believed fact this one replaces (it is retired); repeat for several.",
)
@click.option(
    "--references", multiple=True, metavar="ID", help="Id of a related fact; repeat for several."
)
@click.option("--reason", help="Why this fact supersedes the others (kept on the edge).")
@click.option("--pinned", is_flag=True, help="Pin it: `graphmem context` shows it first.")
@click.option(
    "--metadata", metavar="JSON", callback=_json_object, help="A JSON object stored with the fact."
)
@ns_option
@output_options
@click.pass_context
def remember(
    ctx: click.Context,
    text: str,
    source: str | None,
    tags: tuple[str, ...],
    valid_from: str | None,
    valid_to: str | None,
    supersedes: tuple[str, ...],
    references: tuple[str, ...],
    reason: str | None,
    pinned: bool,
    metadata: dict[str, Any] | None,
    ns: str | None,
    as_json: bool,
) -> None:
    """Store one fact as said and print it (id, status, recorded_at, ...).

    Facts are append-only: to change one, remember the new version with --supersedes; the
    old one is retired, not deleted, and `graphmem history` shows the chain. Datetimes must
    carry a time zone.

    Example:

    \b
        graphmem remember "The user moved to Berlin." --tag location --supersedes 3f2a...
    """
    with _memory(ctx, ns) as memory:
        fact = memory.remember(
            text,
            source=source,
            tags=tags,
            valid_from=valid_from,
            valid_to=valid_to,
            supersedes=supersedes,
            references=references,
            metadata=metadata,
            pinned=pinned,
            reason=reason,
        )
    emit(_fact_data(fact), as_json=as_json, table=_item_mapping)


@main.command()
@click.argument("file", type=click.File("rb"), default="-", required=False)
@click.option("--session-id", help="Session for messages whose line names none (their session_id).")
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Write the good lines and report the bad ones (malformed, or reusing another line's "
    "external id), instead of writing nothing.",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=256,
    show_default=True,
    help="New messages per write transaction.",
)
@ns_option
@output_options
@click.pass_context
def ingest(
    ctx: click.Context,
    file: BinaryIO,
    session_id: str | None,
    skip_bad: bool,
    batch_size: int,
    ns: str | None,
    as_json: bool,
) -> None:
    """Store messages from JSON Lines (a FILE, or stdin for '-' or none) as episodes.

    One JSON object per line with the fields of a message: content (required), role,
    speaker, occurred_at (ISO 8601 with zone), external_id, session_id, metadata. Blank lines
    are ignored. Every line is checked before anything is written: a malformed line, or one
    that reuses another message's external id with other content, stops the whole input
    (exit 1, nothing written) unless --skip-bad is given, which writes the good lines and
    reports the bad ones (exit 1 when no line is good). The file is one ingest call written
    --batch-size new messages per transaction; re-sent messages are recognised and not stored
    twice, so after a failure the same file can be sent again.

    Example:

    \b
        graphmem ingest chat.jsonl --session-id s-1 --ns user-42
    """
    from graphmem.jsonl import parse_message_lines

    if file.isatty():
        click.echo("Reading JSON Lines from the terminal; end with Ctrl-D.", err=True)
    parsed = parse_message_lines(file)
    if parsed.problems and not (skip_bad and parsed.messages):
        raise BadLinesError(parsed.problems, none_good=skip_bad)
    for number, reason in parsed.problems:
        click.echo(f"skipped line {number}: {reason}", err=True)

    messages, lines = list(parsed.messages), list(parsed.line_numbers)
    problems = list(parsed.problems)
    with _memory(ctx, ns) as memory:
        while True:
            with click.progressbar(
                length=len(messages),
                label="Ingesting",
                file=sys.stderr,
                hidden=not messages or not sys.stderr.isatty(),
            ) as bar:
                try:
                    # One call: repeats and conflicts are found across the whole file before
                    # anything is written; the new messages go batch_size per transaction.
                    result = memory.ingest(
                        messages, session_id=session_id, batch_size=batch_size, progress=bar.update
                    )
                    break
                except MessageConflictError as exc:
                    refused = [
                        (c.index, _conflict_line(c, lines))
                        for c in exc.conflicts
                        if c.index is not None
                    ]
                    if len(refused) < len(exc.conflicts):
                        raise
                    if not skip_bad:
                        raise _conflicting_lines(exc, [p for _, p in refused]) from exc
            # --skip-bad: report the lines the check refused and send the others again (a
            # concurrent writer may still make another line conflict).
            for position in sorted((i for i, _ in refused), reverse=True):
                del messages[position], lines[position]
            for _, problem in sorted(refused):
                click.echo(f"skipped line {problem[0]}: {problem[1]}", err=True)
                problems.append(problem)
            if not messages:
                raise BadLinesError(sorted(problems), none_good=True)
        used_ns = memory.ns
    problems.sort()
    data = {
        "ns": used_ns,
        "messages": len(messages),
        "created": len(result.episodes),
        "duplicates": len(result.duplicates),
        "skipped": len(problems),
        "bad_lines": [{"line": n, "reason": why} for n, why in problems],
        "episode_ids": [e.id for e in result.episodes],
        "duplicate_ids": list(result.duplicates),
    }

    def table(d: Mapping[str, Any]) -> str:
        return render_mapping(
            {
                "namespace": d["ns"],
                "messages": d["messages"],
                "created": d["created"],
                "duplicates": f"{d['duplicates']} (already stored, not written again)",
                "skipped": f"{d['skipped']} bad line(s)",
            }
        )

    emit(data, as_json=as_json, table=table)


def _conflicting_lines(
    exc: MessageConflictError, problems: Sequence[tuple[int, str]]
) -> MessageConflictError:
    """The refusal of an input whose lines ``problems`` conflict, naming lines, not positions."""
    (line, reason), others = problems[0], [str(n) for n, _ in problems[1:]]
    return MessageConflictError(f"line {line}: {reason}{and_more(others, 'line')}", ids=exc.ids)


def _conflict_line(exc: MessageConflictError, lines: Sequence[int]) -> tuple[int, str]:
    """The line number and reason of a refused message, naming lines instead of positions."""
    from graphmem.messages import conflict_reason

    assert exc.index is not None
    if exc.other_index is not None:
        other = f"line {lines[exc.other_index]}"
    else:
        other = f"stored episode {exc.ids[0]}" if exc.ids else "a stored episode"
    return lines[exc.index], conflict_reason(exc.external_id or "", exc.session_id, other)


def filter_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options recall and context share (--kind, --as-of, --valid-at, --tag,
    --include-retired, --since, --until, --no-references, --min-score); the command receives
    them as ``filters``, keyword arguments of recall and context. An option not given is left
    out, so recall's own default applies (both kinds, no tag filter, ...)."""

    @functools.wraps(func)
    def with_filters(
        *args: Any,
        kinds: tuple[str, ...],
        as_of: str | None,
        valid_at: str | None,
        tags: tuple[str, ...],
        include_retired: bool,
        since: str | None,
        until: str | None,
        no_references: bool,
        min_score: float | None,
        **kwargs: Any,
    ) -> Any:
        given = {
            "kinds": kinds,
            "as_of": as_of,
            "valid_at": valid_at,
            "tags": tags,
            "include_retired": include_retired or None,
            "since": since,
            "until": until,
            "expand_references": False if no_references else None,
            "min_score": min_score,
        }
        filters = {name: value for name, value in given.items() if value not in (None, ())}
        return func(*args, filters=filters, **kwargs)

    command: Callable[..., Any] = with_filters
    for option in reversed(
        [
            click.option(
                "--kind",
                "kinds",
                type=click.Choice(["fact", "episode"]),
                multiple=True,
                help="Only this kind of hit; repeat for both (default: both).",
            ),
            click.option(
                "--as-of", metavar="ISO", help="Answer from what was believed at that time."
            ),
            click.option(
                "--valid-at", metavar="ISO", help="Answer from what was true at that time."
            ),
            click.option(
                "--tag", "tags", multiple=True, help="Only facts with this tag; repeat for several."
            ),
            click.option("--include-retired", is_flag=True, help="Also return superseded facts."),
            click.option(
                "--since", metavar="ISO", help="Only what was recorded or said from then on."
            ),
            click.option(
                "--until", metavar="ISO", help="Only what was recorded or said before then."
            ),
            click.option(
                "--no-references", is_flag=True, help="Do not add facts reached over REFERENCES."
            ),
            click.option(
                "--min-score", type=float, help="Cosine similarity a hit needs (quality gate)."
            ),
        ]
    ):
        command = option(command)
    return command


#: How the recall table marks a hit not matched by the search itself: reached over REFERENCES,
#: or found through the superseded fact it replaced.
_VIA_LABELS = {"search": "", "reference": " (ref)", "supersession": " (update)"}


def _recall_table(result: RecallResult) -> str:
    rows = [
        {
            "rank": rank,
            "kind": hit.kind + _VIA_LABELS[hit.via],
            "score": _number(hit.score),
            "vector": _number(hit.scores.vector),
            "fulltext": _number(hit.scores.fulltext),
            "date": hit.time.date().isoformat() if hit.time else None,
            "status": hit.fact.status if hit.fact else None,
            "id": hit.id,
            "text": _clip(hit.text),
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
    type=click.Choice(["rrf", "linear"]),
    help="How the vector and fulltext rankings are combined (default: the setting).",
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
    ns: str | None,
    as_json: bool,
) -> None:
    """Search facts and episodes (hybrid: vector and fulltext), best first.

    Shows each hit's scores; retired facts are hidden unless --include-retired. --as-of
    and --valid-at travel in time (ISO 8601 with zone).

    Example:

    \b
        graphmem recall "where does the user work?" -k 5 --kind fact
    """
    with _memory(ctx, ns) as memory:
        config = None
        if fusion is not None:
            config = memory.recall_config.model_copy(update={"fusion": fusion})
        result = memory.recall(query, k=k, config=config, **filters)
    if as_json:
        emit(result.model_dump(mode="json"), as_json=True)
    else:
        click.echo(_recall_table(result))


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
    with _memory(ctx, ns) as memory:
        block = memory.context(query, budget_tokens=budget, k=k, timezone=timezone, **filters)
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
    if not block.text and block.omitted:
        click.echo("Nothing fit in the budget; raise --budget.", err=True)


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

    with _memory(ctx, ns) as memory:
        item = memory.get(id)
    data = {"kind": "fact" if isinstance(item, Fact) else "episode", **item.model_dump(mode="json")}
    emit(data, as_json=as_json, table=_item_mapping)


def _history_table(history: Mapping[str, Any]) -> str:
    """The chain as a table, from the JSON form ``--json`` prints (so times read the same)."""
    rows = [
        {
            "": "*" if fact["id"] == history["head_id"] else "",
            "recorded_at": fact["recorded_at"],
            "retired_at": fact["retired_at"],
            "status": fact["status"],
            "id": fact["id"],
            "text": _clip(fact["text"]),
        }
        for fact in history["facts"]
    ]
    chain = render_table(rows, ["", "recorded_at", "retired_at", "status", "id", "text"])
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
    """Show a fact's supersession chain, oldest first, with when, who and why.

    The believed fact the chain leads to now (its head) is marked with *.

    Example:

    \b
        graphmem history 3f2a9c1e-...
    """
    with _memory(ctx, ns) as memory:
        chain = memory.history(id)
    emit(chain.model_dump(mode="json"), as_json=as_json, table=_history_table)


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
    with _memory(ctx, ns) as memory:
        counts = memory.stats()
    data = counts.model_dump(mode="json")

    def table(d: Mapping[str, Any]) -> str:
        counts = sorted(d["facts_by_status"].items())
        by_status = ", ".join(f"{k} {v}" for k, v in counts if v)  # the JSON has every status
        return render_mapping({**d, "facts_by_status": by_status or None})

    emit(data, as_json=as_json, table=table)


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
    with _memory(ctx, ns) as memory:
        fact = memory.pin(id, pinned=not unpin)
    emit(_fact_data(fact), as_json=as_json, table=_item_mapping)


# --- optional commands -------------------------------------------------------------------------
from graphmem.cli_bench import bench  # noqa: E402 - registered after the core commands
from graphmem.cli_eval import eval_group  # noqa: E402

main.add_command(bench)
main.add_command(eval_group)


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="graphmem")
