"""Context blocks: prompt-ready lines, dated in a time zone, within a token budget."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from graphmem._text import brief, printable
from graphmem._zones import named_zone, zone_names
from graphmem.embed.tokens import TokenCounter
from graphmem.errors import ClientUsageError, GraphmemError, InvalidInputError
from graphmem.models import (
    MAX_LABEL_CHARS,
    ContextBlock,
    Episode,
    Fact,
    Hit,
    Provenance,
    ReviewMark,
)


def context_header(zone: tzinfo = UTC) -> str:
    """The first line of a context block, naming the time zone of its dates."""
    return (
        f"Memory (newest belief per line; date or dates it holds, in {_zone_name(zone)}, then "
        "the memory, then its id):"
    )


def _zone_name(zone: tzinfo) -> str:
    return "UTC" if zone is UTC else getattr(zone, "key", None) or str(zone)


CONTEXT_HEADER = context_header()
_LINE_CHARS = 600


def time_zone(value: str | tzinfo | None) -> tzinfo:
    """The zone context dates are shown in: an IANA name such as ``Europe/Lisbon``, a
    :class:`~datetime.tzinfo`, or None for UTC."""
    if value is None:
        return UTC
    if isinstance(value, tzinfo):
        if value.utcoffset(datetime(2000, 1, 1)) is None:
            raise InvalidInputError(f"timezone {brief(value)} gives no UTC offset")
        if isinstance(value, ZoneInfo) and value.key not in zone_names():
            # A copy of a file that names no zone, or a file read with ZoneInfo.from_file
            # (no key): the header would have no name a reader knows.
            raise InvalidInputError(
                f"timezone {brief(value)} names no zone: give an IANA zone name such as "
                "'Europe/Lisbon'"
            )
        return value
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(
            f"timezone must be an IANA zone name such as 'Europe/Lisbon' or a tzinfo, got "
            f"{brief(value)}"
        )
    try:
        return named_zone(value)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from exc


def _day(moment: datetime, zone: tzinfo) -> str:
    """The day ``moment`` falls on in ``zone``, in ISO 8601. A time within the years 1 to 9999
    in UTC (all that is stored) can fall on a day just outside them in a zone ahead of or
    behind UTC, which Python's dates cannot hold: that day is written 10000-01-01 or
    0000-12-31."""
    try:
        return moment.astimezone(zone).date().isoformat()
    except OverflowError:
        wall = moment.astimezone(UTC).replace(tzinfo=None)
        # Read at the UTC wall time: hours from the instant, where no zone changes offset.
        offset = zone.utcoffset(wall) or timedelta(0)
        since_midnight = wall - datetime.combine(wall.date(), datetime.min.time())
        ordinal = wall.toordinal() + (since_midnight + offset).days
        if ordinal < 1:
            return "0000-12-31"
        if ordinal > date.max.toordinal():
            return "10000-01-01"
        return date.fromordinal(ordinal).isoformat()


def _clip(text: str, limit: int = _LINE_CHARS) -> str:
    """``text`` on one line (every run of whitespace, newlines included, one space), with its
    other control characters as escapes, and at most ``limit`` characters, so that no stored
    value can start a line of its own or drive the terminal that shows the block."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _fact_when(fact: Fact, at: datetime, zone: tzinfo, said: datetime | None = None) -> str:
    """A fact's date in ``zone`` (when it became true, else when the first message it was
    derived from was sent, ``said``, else when it was recorded), with its end when it has one,
    and whether at ``at`` it is not yet or no longer true (or never was: an empty interval,
    replaced in full)."""
    stated = said if said is not None and said <= fact.recorded_at else fact.recorded_at
    when = _day(fact.valid_from or stated, zone)
    if (
        fact.valid_from is not None
        and fact.valid_to is not None
        and fact.valid_to <= fact.valid_from
    ):
        # Only a supersession closes an interval this way: the update began before it did.
        return f"{when}, replaced before it began"
    if fact.valid_to is not None:
        end = _day(fact.valid_to, zone)
        when = f"until {end}" if fact.valid_from is None else f"{when} to {end}"
        if fact.valid_to <= at:
            return f"{when}, no longer true"
    if fact.valid_from is not None and fact.valid_from > at:
        return f"{when}, not yet true" if fact.valid_to else f"from {when}, not yet true"
    return when


#: The most source messages a fact's line names; the others are counted.
SOURCES_SHOWN = 3


def _sources(source: Provenance | None) -> str:
    """Where a fact came from, for its line: the messages it was derived from, by the caller's
    ids (by episode id when one of them has none), at most :data:`SOURCES_SHOWN` of them."""
    messages = source.messages if source is not None else ()
    if not messages:
        return ""
    external = [m.external_id for m in messages if m.external_id]
    if len(external) == len(messages):
        noun, ids = "message", external
    else:
        noun, ids = "episode", [m.episode_id for m in messages]
    named = ", ".join(_clip(i, MAX_LABEL_CHARS) for i in ids[:SOURCES_SHOWN])
    more = f" and {len(ids) - SOURCES_SHOWN} more" if len(ids) > SOURCES_SHOWN else ""
    return f", from {noun}{'s' if len(ids) > 1 else ''} {named}{more}"


def _fact_line(
    fact: Fact, pinned: bool, at: datetime, zone: tzinfo, source: Provenance | None = None
) -> str:
    if fact.status != "active":  # shown with include_retired: no longer believed, and no pin
        by = f", replaced by {fact.superseded_by}" if fact.superseded_by else ""
        label = f"{fact.status} fact {fact.id}{by}"
    else:
        label = f"{'pinned ' if pinned else ''}fact {fact.id}"
    sent = [m.occurred_at for m in source.messages if m.occurred_at] if source else []
    when = _fact_when(fact, at, zone, min(sent, default=None))
    line = f"- [{when}] {_clip(fact.text)} ({label}{_sources(source)})"
    if fact.contradictions:  # an open conflict: the reader must see both sides
        other = fact.contradictions[0]
        more = f" and {len(fact.contradictions) - 1} more" if len(fact.contradictions) > 1 else ""
        line += f" [contradicted by fact {other.id}: {_clip(other.text, 80)!r}{more}]"
    return line + _review(fact.review)


#: What a review flag's event says about the node it was flagged for, in a context line.
_FLAGGED = {
    "forgotten": "{kind} {cause} it rested on was forgotten",
    "superseded": "{kind} {cause} it rested on was replaced",
    "merged": "{kind} {cause} it rested on was merged into another",
    "retracted": "{kind} {cause} it rested on was retracted",
    "previously_forgotten": "the same words were forgotten before",
}


def _review(marks: Sequence[ReviewMark]) -> str:
    """The line's review mark: the first open flag in words, and how many more."""
    if not marks:
        return ""
    mark = marks[0]
    kind = "the message" if mark.relation == "derived_from" else "the fact"
    said = _FLAGGED.get(mark.event, "{kind} {cause} it rested on changed").format(
        kind=kind, cause=mark.cause_id
    )
    more = f" and {len(marks) - 1} more" if len(marks) > 1 else ""
    return f" [flagged for review: {said}{more}]"


def _episode_line(episode: Episode, zone: tzinfo) -> str:
    when = _day(episode.occurred_at or episode.recorded_at, zone)
    who = _clip(episode.speaker or episode.role, MAX_LABEL_CHARS)
    ext = f", message {_clip(episode.external_id, MAX_LABEL_CHARS)}" if episode.external_id else ""
    session = (
        f", session {_clip(episode.session_id, MAX_LABEL_CHARS)}" if episode.session_id else ""
    )
    line = f"- [{when}] {who}: {_clip(episode.content)} (episode {episode.id}{ext}{session})"
    return line + _review(episode.review)


def build_context(
    pinned: Sequence[Fact],
    hits: Sequence[Hit],
    budget: int,
    counter: TokenCounter,
    at: datetime | None = None,
    zone: tzinfo = UTC,
    sources: Mapping[str, Provenance] | None = None,
    short_ids: Mapping[str, str] | None = None,
) -> ContextBlock:
    """Pinned facts first, then the recall hits, one line each dated in ``zone``, never over
    ``budget``, ids in the text as ``short_ids`` gives them. A fact's line names the messages
    it was derived from: a hit's provenance, and ``sources`` (by fact id) for the pinned
    facts.

    A fact whose valid time has ended by ``at`` (default: now) is marked no longer true, one
    whose valid time starts after it not yet true. Lines are taken in order while the header,
    the lines taken and their newlines, each counted once by ``counter``, stay within the
    budget; a line that does not fit is left out (and counted in ``omitted``) and shorter later
    lines may still fit. The block is then counted whole, and where that is more than the sum
    (a tokenizer whose tokens span lines), lines come off its end until it fits.
    """
    return fit_lines(
        context_lines(pinned, hits, at, zone, sources), budget, counter, zone, short_ids
    )


def context_lines(
    pinned: Sequence[Fact],
    hits: Sequence[Hit],
    at: datetime | None = None,
    zone: tzinfo = UTC,
    sources: Mapping[str, Provenance] | None = None,
) -> list[tuple[str, str, str]]:
    """The candidate lines of a block, in order: (kind, id, line) for each pinned fact, then
    each hit not shown yet (see :func:`build_context`)."""
    at = at or datetime.now(UTC)
    entries: list[tuple[str, str, str]] = [
        ("fact", f.id, _fact_line(f, f.pinned, at, zone, (sources or {}).get(f.id))) for f in pinned
    ]
    shown = {f.id for f in pinned}
    for hit in hits:
        if hit.id in shown:
            continue
        shown.add(hit.id)
        if hit.fact is not None:
            line = _fact_line(hit.fact, hit.fact.pinned, at, zone, hit.provenance)
            entries.append(("fact", hit.id, line))
        elif hit.episode is not None:
            entries.append(("episode", hit.id, _episode_line(hit.episode, zone)))
    return entries


#: An id as a line shows it (a UUID).
IDS_IN_LINES = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def fit_lines(
    entries: Sequence[tuple[str, str, str]],
    budget: int,
    counter: TokenCounter,
    zone: tzinfo = UTC,
    short_ids: Mapping[str, str] | None = None,
) -> ContextBlock:
    """The block of ``entries`` (:func:`context_lines`) within ``budget``, each id in the
    text written as ``short_ids`` gives it (the block's ids stay whole); when not one entry
    fits, a warning that says so and how many tokens the header and the shortest line take."""
    counter = _CheckedCounter(counter)
    header_line = context_header(zone)
    if short_ids:
        entries = [
            (kind, i, IDS_IN_LINES.sub(lambda m: short_ids.get(m[0], m[0]), line))
            for kind, i, line in entries
        ]
    # Each line is counted once (for the default counter the sum is exact: WordPiece splits at
    # the newlines), so the work is linear in the block unless lines must come off its end.
    header = counter.count(header_line)
    newline = max(0, counter.count(f"{header_line}\n{header_line}") - 2 * header)
    kept: list[tuple[str, str, str]] = []
    omitted = 0
    total = header
    shortest: int | None = None
    for entry in entries:
        cost = counter.count(entry[2]) + newline
        shortest = cost if shortest is None else min(shortest, cost)
        if total + cost <= budget:
            kept.append(entry)
            total += cost
        else:
            omitted += 1
    while True:
        text = "\n".join([header_line, *(line for _, _, line in kept)]) if kept else ""
        tokens = counter.count(text)
        if tokens <= budget or not kept:
            break
        kept.pop()
        omitted += 1
    return ContextBlock(
        text=text,
        tokens=tokens,
        budget_tokens=budget,
        tokenizer=counter.name,
        fact_ids=tuple(i for kind, i, _ in kept if kind == "fact"),
        episode_ids=tuple(i for kind, i, _ in kept if kind == "episode"),
        omitted=omitted,
        warning=None if kept or shortest is None else _too_small(budget, header, shortest),
    )


def _too_small(budget: int, header: int, line: int) -> str:
    """The warning of a block whose ``budget`` holds not one line: the ``header`` and the
    shortest ``line`` take that many tokens."""
    return (
        f"budget_tokens={budget} is too small for one line: the header takes {header} "
        f"tokens and the shortest line {line}; raise budget_tokens to at least {header + line}"
    )


class _CheckedCounter:
    """A token counter whose counts are checked: any object with ``count`` may be one, and a
    count that is not a non-negative integer (or an exception of its own) would otherwise
    surface as an untyped error, or a block over its budget."""

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        name = getattr(counter, "name", None)  # the client only requires count
        self.name = name if isinstance(name, str) else type(counter).__name__

    def count(self, text: str) -> int:
        try:
            tokens = self._counter.count(text)
        except GraphmemError:
            raise
        except Exception as exc:
            raise ClientUsageError(
                f"the token counter {self.name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise ClientUsageError(
                f"the token counter {self.name!r} counted {tokens!r:.40} tokens; its count "
                "must return a non-negative int"
            )
        return tokens
