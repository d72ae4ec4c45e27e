"""The write commands: ``remember`` and ``ingest``."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from graphmem._text import and_more
from graphmem.cli.options import batch_size_option
from graphmem.cli.output import FiniteFloat, emit, output_options, render_mapping
from graphmem.cli.root import client_for, fact_data, item_mapping, json_object, main, ns_option
from graphmem.errors import BadLinesError, ForgottenContentError, MessageConflictError

if TYPE_CHECKING:
    from graphmem.models import IngestResult, Message

_ALLOW_FORGOTTEN = click.option(
    "--allow-forgotten",
    is_flag=True,
    help="Store a text the namespace forgot (refused otherwise), flagged for review.",
)


@main.command()
@click.argument("text")
@click.option("--source", help="Where the fact comes from (a label of your choice).")
@click.option("--tag", "tags", multiple=True, help="A tag for the fact; repeat for several.")
@click.option(
    "--valid-from",
    metavar="TIME",
    help="When it became true: ISO 8601 with a zone, a date (midnight UTC), or '3 days ago'.",
)
@click.option(
    "--valid-to",
    metavar="TIME",
    help="When it stopped being true (the same forms as --valid-from).",
)
@click.option(
    "--supersedes",
    multiple=True,
    metavar="ID",
    help="Id of a believed fact this one replaces (it is retired); repeat for several.",
)
@click.option(
    "--references", multiple=True, metavar="ID", help="Id of a related fact; repeat for several."
)
@click.option(
    "--contradicts",
    multiple=True,
    metavar="ID",
    help="Id of a believed fact this one conflicts with (an open CONTRADICTS edge).",
)
@click.option("--reason", help="Why it supersedes, references or contradicts the others.")
@click.option("--pinned", is_flag=True, help="Pin it: `graphmem context` shows it first.")
@click.option(
    "--importance",
    type=FiniteFloat(0.0, 1.0),
    help="How much it matters, from 0 to 1 (default: none given; the importance_default "
    "setting counts).",
)
@_ALLOW_FORGOTTEN
@click.option(
    "--metadata", metavar="JSON", callback=json_object, help="A JSON object stored with the fact."
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
    contradicts: tuple[str, ...],
    reason: str | None,
    pinned: bool,
    importance: float | None,
    allow_forgotten: bool,
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
    with client_for(ctx, ns) as memory:
        fact = memory.remember(
            text,
            source=source,
            tags=tags,
            valid_from=valid_from,
            valid_to=valid_to,
            supersedes=supersedes,
            references=references,
            contradicts=contradicts,
            metadata=metadata,
            pinned=pinned,
            importance=importance,
            reason=reason,
            allow_forgotten=allow_forgotten,
        )
    emit(fact_data(fact), as_json=as_json, table=item_mapping)


@main.command()
@click.argument("file", type=click.File("rb"), default="-", required=False)
@click.option("--session-id", help="Session for messages whose line names none (their session_id).")
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Write the good lines and report the bad ones (malformed, or reusing another line's "
    "external id), instead of writing nothing.",
)
@batch_size_option(256, "New messages per write transaction.")
@click.option(
    "--extract",
    is_flag=True,
    help="Derive atomic facts from the messages with the LLM of GRAPHMEM_LLM (once per "
    "message and extractor).",
)
@_ALLOW_FORGOTTEN
@ns_option
@output_options
@click.pass_context
def ingest(
    ctx: click.Context,
    file: BinaryIO,
    session_id: str | None,
    skip_bad: bool,
    batch_size: int,
    extract: bool,
    allow_forgotten: bool,
    ns: str | None,
    as_json: bool,
) -> None:
    """Store messages from JSON Lines (a FILE, or stdin for '-' or none) as episodes.

    One JSON object per line with the fields of a message: content (required), role,
    speaker, occurred_at (ISO 8601 with a zone, a date, or "3 days ago"), external_id,
    session_id, metadata. Blank lines
    are ignored. Every line is checked before anything is written: a malformed line, or one
    that reuses another message's external id with other content, stops the whole input
    (exit 1, nothing written) unless --skip-bad is given, which writes the good lines and
    reports the bad ones (exit 1 when no line is good). The file is one ingest call written
    --batch-size new messages per transaction; re-sent messages are recognised and not stored
    twice, so after a failure the same file can be sent again. Against graphmem serve
    (GRAPHMEM_SERVER_URL) one call holds at most 1,000 messages and 4 MB of text: split a
    longer file (for example with split -l 1000) and send the parts in order.

    Example:

    \b
        graphmem ingest chat.jsonl --session-id s-1 --ns user-42
    """
    messages, lines, problems = _read_lines(file, skip_bad)
    with client_for(ctx, ns) as memory:
        # One call: repeats and conflicts are found across the whole file before anything is
        # written; the new messages go batch_size per transaction.
        send = functools.partial(
            memory.ingest,
            session_id=session_id,
            batch_size=batch_size,
            extract=extract or None,
            allow_forgotten=allow_forgotten,
        )
        result = _send(send, messages, lines, problems, skip_bad)
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
        "facts": len(result.facts),
        "fact_ids": [f.id for f in result.facts],
        "forgotten_skipped": result.forgotten_skipped,
    }
    emit(data, as_json=as_json, table=lambda d: _ingest_table(d, extract))


def _read_lines(
    file: BinaryIO, skip_bad: bool
) -> tuple[list[Message], list[int], list[tuple[int, str]]]:
    """The messages of ``file``'s JSON Lines, their line numbers, and its bad lines (line
    number, reason): reported, when ``skip_bad`` leaves them out and good lines remain, or
    else the end of the command."""
    from graphmem.cli.jsonl import parse_message_lines

    if file.isatty():
        click.echo("Reading JSON Lines from the terminal; end with Ctrl-D.", err=True)
    parsed = parse_message_lines(file)
    if parsed.problems and not (skip_bad and parsed.messages):
        raise BadLinesError(parsed.problems, none_good=skip_bad)
    for number, reason in parsed.problems:
        click.echo(f"skipped line {number}: {reason}", err=True)
    return list(parsed.messages), list(parsed.line_numbers), list(parsed.problems)


def _send(
    send: Callable[..., IngestResult],
    messages: list[Message],
    lines: list[int],
    problems: list[tuple[int, str]],
    skip_bad: bool,
) -> IngestResult:
    """``messages`` (read from ``lines``) ingested by ``send`` in one call, with a progress
    bar. With ``skip_bad``, the messages the call refuses as conflicting are reported, added to
    ``problems`` and left out of ``messages`` and ``lines``, and the others sent again."""
    while True:
        with click.progressbar(
            length=len(messages),
            label="Ingesting",
            file=sys.stderr,
            hidden=not messages or not sys.stderr.isatty(),
        ) as bar:
            try:
                return send(messages, progress=bar.update)
            except ForgottenContentError as exc:
                named = [str(lines[i]) for i in exc.indexes]
                raise ForgottenContentError(
                    f"line {named[0]}{and_more(named[1:], 'line')}: the namespace forgot "
                    "this text; nothing was stored (--allow-forgotten stores it, flagged)",
                    indexes=exc.indexes,
                ) from exc
            except MessageConflictError as exc:
                refused = _refused(exc, lines, skip_bad)
        # --skip-bad: report the lines the check refused and send the others again (a
        # concurrent writer may still make another line conflict).
        for position in sorted((i for i, _ in refused), reverse=True):
            del messages[position], lines[position]
        for _, problem in sorted(refused):
            click.echo(f"skipped line {problem[0]}: {problem[1]}", err=True)
            problems.append(problem)
        if not messages:
            raise BadLinesError(sorted(problems), none_good=True)


def _refused(
    exc: MessageConflictError, lines: Sequence[int], skip_bad: bool
) -> list[tuple[int, tuple[int, str]]]:
    """The messages ``exc`` refused, as their positions with their lines' problems, when
    ``skip_bad`` leaves them out; else ``exc`` again, naming lines."""
    refused = [(c.index, _conflict_line(c, lines)) for c in exc.conflicts if c.index is not None]
    if len(refused) < len(exc.conflicts):
        raise exc
    if not skip_bad:
        raise _conflicting_lines(exc, [p for _, p in refused]) from exc
    return refused


def _ingest_table(d: Mapping[str, Any], extract: bool) -> str:
    """An ingest's result as a table; its facts shown with ``--extract``, or when it has any."""
    shown = {
        "namespace": d["ns"],
        "messages": d["messages"],
        "created": d["created"],
        "duplicates": f"{d['duplicates']} (already stored, not written again)",
        "skipped": f"{d['skipped']} bad line(s)",
    }
    if extract or d["facts"] or d["forgotten_skipped"]:
        shown["facts"] = f"{d['facts']} extracted"
        shown["forgotten"] = (
            f"{d['forgotten_skipped']} extracted fact(s) left out: the namespace forgot their text"
        )
    return render_mapping(shown)


def _conflicting_lines(
    exc: MessageConflictError, problems: Sequence[tuple[int, str]]
) -> MessageConflictError:
    """The refusal of an input whose lines ``problems`` conflict, naming lines, not positions."""
    (line, reason), others = problems[0], [str(n) for n, _ in problems[1:]]
    return MessageConflictError(f"line {line}: {reason}{and_more(others, 'line')}", ids=exc.ids)


def _conflict_line(exc: MessageConflictError, lines: Sequence[int]) -> tuple[int, str]:
    """The line number and reason of a refused message, naming lines instead of positions."""
    from graphmem.core.messages import conflict_reason

    assert exc.index is not None
    if exc.other_index is not None:
        other = f"line {lines[exc.other_index]}"
    else:
        other = f"stored episode {exc.ids[0]}" if exc.ids else "a stored episode"
    return lines[exc.index], conflict_reason(exc.external_id or "", exc.session_id, other)
