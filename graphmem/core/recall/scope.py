"""What a recall looks at and how, defined once.

:class:`RecallOptions` is the typed set of keyword arguments that ``recall`` takes (and
``context`` passes on); both clients, the core, the CLI and ``context`` use it, so a new filter
is one field here (with its CLI option in :data:`graphmem.cli.filters.FILTER_OPTIONS` and its
field in the REST body, :class:`graphmem.models.requests.RecallRequest`), its check in
:meth:`RecallScope.checked`, and the Cypher that reads it. :class:`RecallScope` is the checked
filter half of those options, as the Cypher parameters the recall queries take.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from typing import Any, TypedDict, cast

from graphmem._text import brief
from graphmem.core.checks import (
    as_list,
    aware,
    checked_flag,
    checked_ids,
    checked_integer,
    checked_label,
    resolve_config,
)
from graphmem.core.recall.ranking import MAX_INDEX_CANDIDATES, RecallConfig
from graphmem.errors import InvalidInputError
from graphmem.models import MAX_K, Kind, one_or_many


class RecallOptions(TypedDict, total=False):
    """The keyword arguments of ``recall`` (and, but for ``k``'s default, of ``context``)."""

    #: How many hits at most (1 to 100; default 10, for ``context`` 20).
    k: int
    #: ``"fact"`` and/or ``"episode"`` (default both).
    kinds: Sequence[Kind]
    #: Answer from what was believed at this transaction time (a datetime with a zone, or
    #: text: ISO 8601 with a zone, a date, ``now``, ``3 days ago``).
    as_of: datetime | str | None
    #: Answer from what was true at this valid time (the same forms).
    valid_at: datetime | str | None
    #: Also return retired (superseded) facts.
    include_retired: bool
    #: Only facts carrying one of these tags (episodes have none).
    tags: Sequence[str] | None
    #: Only messages said by one of these speakers (at most 100 names, case aside; facts have
    #: no speaker): a message's speaker as stored, or its role (``user``, ``assistant``, ...)
    #: when it was stored without one, as ``context`` shows it.
    speakers: Sequence[str] | None
    #: Only what was recorded (facts) or said (episodes) from then on.
    since: datetime | str | None
    #: Only what was recorded or said before then.
    until: datetime | str | None
    #: Add facts reached over ``REFERENCES`` from the hits (default True).
    expand_references: bool
    #: The score every hit needs in this call, in [0, 1]: the probability that it answers the
    #: question (see ``graphmem.core.recall.calibration``). It is then the whole gate: recall
    #: answers even when no candidate is close to the question.
    min_score: float | None
    #: The ranking configuration for this call (default: the client's).
    config: RecallConfig | Mapping[str, Any] | None
    #: Count the hits as accessed (``access_count``, ``last_accessed_at``; default True).
    track_access: bool


class ContextOptions(RecallOptions, total=False):
    """The keyword arguments of ``context`` besides the query, ``ns`` and ``budget_tokens``:
    recall's, with ``k`` 20 by default, and these."""

    #: Pinned facts shown at most (default 50).
    pinned_limit: int
    #: The zone of the block's dates: an IANA name such as ``"Europe/Lisbon"`` or a tzinfo
    #: (default UTC).
    timezone: str | tzinfo | None
    #: Show each id in the text by its first 8 characters where they name it alone (default
    #: True; every id argument takes them back). The block's ``fact_ids`` stay whole.
    short_ids: bool
    #: Show facts of the cold tier (faded: see docs/guides/importance.md) that recall finds
    #: (default False: they are left out).
    include_cold: bool


#: The names ``recall`` takes besides the query and ``ns``.
RECALL_OPTIONS: frozenset[str] = frozenset(RecallOptions.__annotations__)

#: How many speakers one recall may name.
MAX_SPEAKERS = 100


def _speakers(given: Any) -> tuple[str, ...] | None:
    """The ``speakers`` filter checked: None, or one or more names (each a label as a message's
    speaker is one), each once."""
    if given is None:
        return None
    names = as_list("speakers", one_or_many(given), "names")
    if not names:
        raise InvalidInputError(
            "speakers=[] would match no message; pass speakers=None for no speaker filter"
        )
    if len(names) > MAX_SPEAKERS:
        raise InvalidInputError(f"speakers: at most {MAX_SPEAKERS} names, got {len(names)}")
    return tuple(dict.fromkeys(checked_label("speakers", name) for name in names))


@dataclass(frozen=True)
class RecallScope:
    """The checked filters of one recall: which kinds, at which times, with which tags, said
    by whom."""

    kinds: tuple[Kind, ...] = ("fact", "episode")
    as_of: datetime | None = None
    valid_at: datetime | None = None
    include_retired: bool = False
    tags: tuple[str, ...] | None = None
    since: datetime | None = None
    until: datetime | None = None
    speakers: tuple[str, ...] | None = None

    @classmethod
    def checked(cls, options: Mapping[str, Any]) -> RecallScope:
        """The scope of ``options`` (recall's keyword arguments), each value checked: the kinds
        (facts only when tags are given, since episodes have none; episodes only when speakers
        are, since facts have none), the tags, the speakers, and the times as aware UTC
        datetimes."""
        kinds = options.get("kinds", cls.kinds)
        named = as_list("kinds", one_or_many(kinds), "kinds")
        if not named or any(kind not in ("fact", "episode") for kind in named):
            raise InvalidInputError(f"kinds must name 'fact' and/or 'episode', got {brief(kinds)}")
        wanted: tuple[Kind, ...] = tuple(dict.fromkeys(named))
        given_tags = options.get("tags")
        tags = None if given_tags is None else checked_ids("tags", given_tags)
        if tags == []:
            raise InvalidInputError("tags=[] would match no fact; pass tags=None for no tag filter")
        if tags is not None:
            if "fact" not in wanted:
                raise InvalidInputError(
                    "tags filter facts (episodes have none), but kinds asks for episodes only"
                )
            wanted = ("fact",)  # episodes have no tags
        speakers = _speakers(options.get("speakers"))
        if speakers is not None:
            if "episode" not in wanted:
                raise InvalidInputError(
                    "speakers filter messages (episodes; facts have no speaker), but "
                    + ("tags filter facts" if tags is not None else "kinds asks for facts only")
                )
            wanted = ("episode",)  # facts have no speaker
        since, until = aware("since", options.get("since")), aware("until", options.get("until"))
        if since and until and until <= since:
            raise InvalidInputError(
                f"until ({until.isoformat()}) must be after since ({since.isoformat()})"
            )
        return cls(
            kinds=wanted,
            as_of=aware("as_of", options.get("as_of")),
            valid_at=aware("valid_at", options.get("valid_at")),
            include_retired=checked_flag("include_retired", options.get("include_retired", False)),
            tags=None if tags is None else tuple(tags),
            since=since,
            until=until,
            speakers=speakers,
        )

    def _times(self) -> dict[str, Any]:
        return {
            "as_of": self.as_of,
            "valid_at": self.valid_at,
            "since": self.since,
            "until": self.until,
        }

    def params(self) -> dict[str, Any]:
        """The times and speakers, as the episode filters of the recall queries take them."""
        return {**self._times(), "speakers": None if self.speakers is None else list(self.speakers)}

    def fact_params(self) -> dict[str, Any]:
        """The times, tags and retired flag, as the fact filters of the recall queries take
        them."""
        return {
            **self._times(),
            "include_retired": self.include_retired,
            "tags": None if self.tags is None else list(self.tags),
        }

    def search_params(self) -> dict[str, Any]:
        """All of it, as the search statements (facts and episodes at once) take it."""
        return {**self.fact_params(), **self.params()}

    def current(self) -> RecallScope:
        """The same scope without retired facts (the pinned facts of ``context``)."""
        return replace(self, include_retired=False)


@dataclass(frozen=True)
class RecallRequest:
    """One recall's options, checked: the scope, and how many hits and how they are ranked."""

    scope: RecallScope
    k: int
    expand_references: bool
    config: RecallConfig
    track_access: bool

    @classmethod
    def checked(
        cls,
        options: Mapping[str, Any],
        base: RecallConfig,
        *,
        caller: str = "recall",
        own: str = "",
    ) -> RecallRequest:
        """``options`` checked against ``base``, the client's configuration; ``caller`` and
        its ``own`` arguments name the method in the error an unknown option gets."""
        unknown = sorted(set(options) - RECALL_OPTIONS)
        if unknown:
            takes = ", ".join(sorted(RECALL_OPTIONS))
            if own:
                takes = f"{own}, and recall's: " + ", ".join(sorted(RECALL_OPTIONS - {"k"}))
            raise InvalidInputError(f"{caller} got unknown options {unknown}; it takes {takes}")
        k = checked_integer("k", options.get("k", 10), 1, MAX_K)
        scope = RecallScope.checked(options)
        expand = checked_flag("expand_references", options.get("expand_references", True))
        track_access = checked_flag("track_access", options.get("track_access", True))
        config = resolve_config(options.get("config"), base, "config")
        if config.widest(k) > MAX_INDEX_CANDIDATES:
            raise InvalidInputError(
                f"this recall config would ask an index for {config.widest(k):,} entries at "
                f"k={k} (candidates times the widest retry factor); at most "
                f"{MAX_INDEX_CANDIDATES:,}"
            )
        min_score = options.get("min_score")
        if min_score is not None:
            if isinstance(min_score, bool) or not isinstance(min_score, numbers.Real):
                raise InvalidInputError(f"min_score must be a number, got {brief(min_score)}")
            if not 0.0 <= cast(float, min_score) <= 1.0:
                raise InvalidInputError(f"min_score must lie in [0, 1], got {brief(min_score)}")
            # A threshold named for the call is the whole gate: every hit needs it, and
            # nothing else (recall answers even when no candidate is close to the question).
            config = config.model_copy(
                update={"min_score": float(min_score), "answer_min_cosine": -1.0}
            )
        return cls(scope, k, expand, config, track_access)


def listed_once(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``kinds`` and ``tags`` given as iterators turned into lists, for a
    caller (``context``) that reads them twice."""
    return {
        name: list(value) if name in ("kinds", "tags") and isinstance(value, Iterator) else value
        for name, value in options.items()
    }
