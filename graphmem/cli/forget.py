"""The erasure commands: ``forget`` (with ``--dry-run`` and ``--verify``) and ``review`` (with
``review confirm``)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from graphmem.cli.options import batch_size_option, limit_option
from graphmem.cli.output import Counter, emit, output_options, render_mapping, render_table
from graphmem.cli.root import client_for, clip, is_remote, main, nothing, ns_option, settings_of
from graphmem.errors import ConfigurationError, InvalidInputError
from graphmem.models.erasure import ForgetResult
from graphmem.servers.physical import find_words


def _forget_table(data: dict[str, Any]) -> str:
    head = {
        "namespace": data["ns"],
        "erasure": data["erasure"],
        "dry run": data["dry_run"] or None,
        "facts": len(data["facts"]),
        "of which derived": len(data["derived"]),
        "episodes": len(data["episodes"]),
        "already forgotten": len(data["already_forgotten"]),
        "flagged for review": len(data["flagged"]),
        "runs scrubbed": len(data["runs_scrubbed"]),
        "units": data["units"],
    }
    parts = [render_mapping(head)]
    if data["flagged"]:
        parts.append(
            "\nFlagged:\n" + render_table(data["flagged"], ["flagged", "relation", "cause"])
        )
    kept = [
        {"fact": fact, "kept": " ".join(ids), "what": what}
        for key, what in (("messages_kept", "its messages"), ("same_text_kept", "same text"))
        for fact, ids in data[key].items()
    ]
    if kept:
        parts.append(
            "\nWords that stay (not named by this forget):\n"
            + render_table(kept, ["fact", "what", "kept"])
        )
    return "\n".join(parts)


def _verify_table(data: dict[str, Any]) -> str:
    clean = data["tombstones"] > 0 and not data["findings"]
    head = {
        "target": data["target"],
        "matched": data["matched"],
        "tombstones": data["tombstones"],
        "checked": ", ".join(data["checks"]),
        "result": "clean: nothing found" if clean else f"{len(data['findings'])} finding(s)",
    }
    physical = data.get("physical")
    if physical is not None:
        head["on disk"] = (
            "the text was found in no file of the local server (a byte search: a text of "
            "about 30 characters or less may be stored packed, out of its sight)"
            if not physical
            else f"the text remains in {len(physical)} file(s)"
        )
        if any(found["kind"] == "store" for found in physical):
            head["store"] = (
                "freed records keep their bytes until later writes reuse them; no checkpoint "
                "clears them (docs: Forget, 'On disk')"
            )
    parts = [render_mapping(head)]
    if data["findings"]:
        parts.append("\n" + render_table(data["findings"], ["check", "where", "detail"]))
    if physical:
        parts.append("\n" + render_table(physical, ["path", "kind", "count"]))
    return "\n".join(parts)


def _data_dir(ctx: click.Context) -> Path:
    """The local server's data directory, for --physical."""
    settings = settings_of(ctx)
    if settings.server_url is not None:
        raise ConfigurationError(
            "--physical reads the local server's files, but GRAPHMEM_SERVER_URL is set: the "
            "CLI calls graphmem serve, whose files it cannot read (run it where the server runs, "
            "without GRAPHMEM_SERVER_URL)"
        )
    if settings.neo4j_mode != "local":
        raise ConfigurationError(
            "--physical reads the local server's files, but GRAPHMEM_NEO4J_URI is "
            f"{settings.neo4j_uri!r}: on another server, check its transaction log retention "
            "and checkpoints instead (docs: Forget, 'On disk')"
        )
    from graphmem.servers.local import LocalNeo4jServer

    return LocalNeo4jServer(settings).home / "data"


@main.command()
@click.argument("ids", nargs=-1)
@click.option("--source", help="Forget the facts with this source.")
@click.option("--session", help="Forget the episodes of this session (and facts only from them).")
@click.option("--all", "everything", is_flag=True, help="Forget the whole namespace.")
@click.option("--reason", help="Why (kept on each tombstone; required to forget).")
@click.option("--actor", default="user", show_default=True, help="Who asks (kept on tombstones).")
@click.option(
    "--dry-run", is_flag=True, help="List what would be erased and flagged; write nothing."
)
@click.option(
    "--yes",
    is_flag=True,
    help="Erase without asking first (needed where no one can answer: scripts, pipes, --json).",
)
@batch_size_option(500, "Nodes per unit; each unit is erased in one transaction.")
@click.option(
    "--verify",
    "verify",
    metavar="ID|SOURCE",
    help="Instead of forgetting: search every read path for what this erased id, source, "
    "session or erasure id erased (exit 1 if anything is found).",
)
@click.option("--text", help="With --verify: the erased words, searched for as well.")
@click.option(
    "--physical",
    is_flag=True,
    help="With --verify and --text, on the local server: also search the server's files "
    "(store, indexes, transaction logs) for the words and say where they remain.",
)
@ns_option
@output_options
@click.pass_context
def forget(
    ctx: click.Context,
    ids: tuple[str, ...],
    source: str | None,
    session: str | None,
    everything: bool,
    reason: str | None,
    actor: str,
    dry_run: bool,
    yes: bool,
    batch_size: int,
    verify: str | None,
    text: str | None,
    physical: bool,
    ns: str | None,
    as_json: bool,
) -> None:
    """Erase facts and episodes for good, leaving content-free tombstones.

    Name exactly one of: IDS (facts or episodes), --source, --session or --all. Facts derived
    only from erased messages go with them; what referenced an erased fact or was derived with
    it is flagged for review (`graphmem review`); consolidation records lose their texts; the
    same text is refused afterwards (`--allow-forgotten` on remember and ingest stores it,
    flagged). Each unit of --batch-size nodes is erased whole or not at all; after an
    interruption, run the same command again.

    --verify ID|SOURCE searches the namespace for what was erased and prints what it finds.
    With --text and --physical, on the local server it also searches the server's files for
    the words: they leave the store once later writes reuse the records they freed (no
    checkpoint clears a freed record), and the transaction log at the first checkpoint after
    its file rotates (GRAPHMEM_LOCAL_NEO4J_TX_LOG_SIZE, GRAPHMEM_LOCAL_NEO4J_CHECKPOINT_SECONDS).

    Example:

    \b
        graphmem forget --session chat-7 --reason "user request 2026-11-02" --dry-run
        graphmem forget --session chat-7 --reason "user request 2026-11-02"
        graphmem forget --verify chat-7
    """
    if verify is not None:
        if ids or source or session or everything or dry_run:
            raise click.UsageError("--verify takes no other target and no --dry-run")
        _verify(ctx, verify, text, physical, ns, as_json)
        return
    if text is not None or physical:
        raise click.UsageError("--text and --physical go with --verify")
    if everything and ns is None:
        raise click.UsageError(
            "--all erases a whole namespace: name it with --ns (the default namespace is not "
            "taken for this)"
        )
    if reason is None:
        raise InvalidInputError("forget needs --reason: it is kept on every tombstone")
    interactive = _can_ask() and not as_json
    # With no target or several, the library's own error says what forget needs.
    named = sum((bool(ids), source is not None, session is not None, everything))
    if named == 1 and not dry_run and not yes and not interactive:
        raise click.UsageError(
            "forget erases for good: pass --yes to go ahead without a question (see what "
            "would go first with --dry-run)"
        )
    with client_for(ctx, ns) as memory:
        erase = functools.partial(
            memory.forget,
            list(ids) if ids else None,
            source=source,
            session=session,
            everything=everything,
            reason=reason,
            actor=_actor(ctx, actor),
            batch_size=batch_size,
        )
        total = _asked(ctx, erase) if named == 1 and not dry_run and not yes else None
        result = _erased(erase, dry_run, total)
    _report(ctx, result, total, as_json)


def _actor(ctx: click.Context, actor: str) -> str | None:
    """Who asks: ``--actor``; through graphmem serve, the API key's name, which the server
    records itself (an ``--actor`` given there is refused)."""
    if not is_remote(ctx):
        return actor
    if ctx.get_parameter_source("actor") is not click.core.ParameterSource.DEFAULT:
        raise ConfigurationError(
            "--actor cannot be chosen through graphmem serve (GRAPHMEM_SERVER_URL is set): "
            "the server records the API key's name as the actor"
        )
    return None


def _verify(
    ctx: click.Context,
    target: str,
    text: str | None,
    physical: bool,
    ns: str | None,
    as_json: bool,
) -> None:
    """``forget --verify``: prints what the namespace (and with ``physical``, the local
    server's files) still holds of what ``target`` erased; exit 1 if anything is found."""
    if physical and text is None:
        raise click.UsageError("--physical needs --text: the words to look for on disk")
    files = _data_dir(ctx) if physical else None
    with client_for(ctx, ns) as memory:
        report = memory.verify_forgotten(target, text=text)
    data = report.model_dump(mode="json")
    clean = report.clean
    if files is not None and text is not None:
        found = find_words(files, [text])
        data["physical"] = [asdict(f) for f in found]
        clean = clean and not found
    emit(data, as_json=as_json, table=_verify_table)
    if not clean:
        ctx.exit(1)


def _erased(
    erase: Callable[..., ForgetResult], preview: bool, total: int | None = None
) -> ForgetResult:
    """What ``erase`` (``memory.forget`` with the command's selector) erased, or with
    ``preview`` would erase; a real erasure's progress is counted towards ``total``."""
    counter = Counter("Erasing", "items", total=total)
    try:
        return erase(dry_run=preview, progress=None if preview else counter)
    finally:
        counter.done()


def _asked(ctx: click.Context, erase: Callable[..., ForgetResult]) -> int | None:
    """Shows what ``erase`` would erase and asks whether to go ahead (aborting if not); the
    number of items shown, or None when there is nothing to ask about."""
    preview = _erased(erase, True)
    if not preview.erased:  # nothing to ask about: matched nothing or all forgotten
        _nothing_forgotten(ctx, preview)
        return None
    click.echo(_forget_table(preview.model_dump(mode="json")), err=True)
    click.confirm(
        f"Erase these {preview.erased:,} item(s) of namespace {preview.ns!r} for good?",
        abort=True,
        err=True,
    )
    return preview.erased


def _report(ctx: click.Context, result: ForgetResult, total: int | None, as_json: bool) -> None:
    """Prints ``result``, with a note when it erased more than the ``total`` the question
    showed; exit 3 when it erased nothing."""
    emit(result.model_dump(mode="json"), as_json=as_json, table=_forget_table)
    if total is not None and result.erased > total:
        click.echo(
            f"Note: {result.erased - total:,} item(s) written after the preview matched too and "
            "were erased with the rest.",
            err=True,
        )
    if not result.erased:
        _nothing_forgotten(ctx, result)


def _can_ask() -> bool:
    """Whether someone can answer the question forget asks: standard input is a terminal."""
    return sys.stdin.isatty()


def _nothing_forgotten(ctx: click.Context, result: ForgetResult) -> None:
    """Exit 3 with a warning when the selector matched nothing to erase (ids already
    forgotten are reported as such, and are no surprise)."""
    if result.already_forgotten:
        return
    what = {
        "source": "no fact has this source",
        "session": "no message is in this session",
        "namespace": "the namespace holds nothing",
        "ids": "nothing matched",
    }[result.selector]
    nothing(ctx, f"{what} in namespace {result.ns!r}: nothing was erased")


@main.group(invoke_without_command=True)
@click.option("--all", "show_all", is_flag=True, help="Closed flags too.")
@click.option("--fact", "fact_id", metavar="ID", help="Only this fact's (or episode's) flags.")
@limit_option()
@ns_option
@output_options
@click.pass_context
def review(
    ctx: click.Context,
    show_all: bool,
    fact_id: str | None,
    limit: int,
    ns: str | None,
    as_json: bool,
) -> None:
    """List the facts flagged for review, oldest first.

    A fact is flagged when one it references, or one derived with it from the same message,
    is forgotten, superseded, merged or retracted, and when a forgotten text is stored again.
    Close a flag with `graphmem review confirm ID`, or by superseding, retracting or
    forgetting the fact.

    Example:

    \b
        graphmem review --ns user-42
    """
    if ctx.invoked_subcommand is not None:
        return
    with client_for(ctx, ns) as memory:
        flags = memory.review(fact_id=fact_id, open_only=not show_all, limit=limit)
    data = [f.model_dump(mode="json") for f in flags]
    rows = [
        {
            "flagged": f["flagged_id"],
            "text": clip(f["text"], 40),
            "event": f["event"],
            "relation": f["relation"],
            "cause": f["cause_id"],
            "at": f["at"],
            "closed": f["closing"],
        }
        for f in data
    ]
    columns = ["flagged", "text", "event", "relation", "cause", "at"] + (
        ["closed"] if show_all else []
    )
    emit(data, as_json=as_json, table=lambda _: render_table(rows, columns))


@review.command("confirm")
@click.argument("id")
@click.option("--reason", help="Why it stands (kept on the closed flags).")
@ns_option
@output_options
@click.pass_context
def confirm(ctx: click.Context, id: str, reason: str | None, ns: str | None, as_json: bool) -> None:
    """Close a fact's open review flags: it was looked at and stands.

    Example:

    \b
        graphmem review confirm 3f2a... --reason "checked with the user"
    """
    with client_for(ctx, ns) as memory:
        closed = memory.confirm(id, reason=reason)
    data = [f.model_dump(mode="json") for f in closed]
    rows = [{"flagged": f["flagged_id"], "event": f["event"], "cause": f["cause_id"]} for f in data]
    emit(data, as_json=as_json, table=lambda _: render_table(rows, ["flagged", "event", "cause"]))
