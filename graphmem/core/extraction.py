"""The extractor interface: what ``ingest`` asks of an extractor and how its answer is checked."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from graphmem.core.plans import Extract, Plan
from graphmem.errors import ExtractionError, GraphmemError
from graphmem.models import AwareDatetime, Episode, FactInput, describe_validation_error


class ExtractedFact(BaseModel):
    """An atomic fact an extractor found, with the episodes (by id) it came from."""

    # A field it does not have (a misspelt one, or one such as valid_to) is refused rather
    # than dropped, so that nothing an extractor says is silently lost.
    model_config = ConfigDict(extra="forbid")

    text: str
    episode_ids: tuple[str, ...]
    tags: tuple[str, ...] = ()
    valid_from: AwareDatetime | None = None


class Extractor(Protocol):
    """Derives atomic facts from verbatim episodes (for example with an LLM).

    ``ingest`` calls it with the new episodes before it writes them (their ``recorded_at`` is
    the time of the call; the transaction that stores them sets the final one), then stores
    the episodes and the facts in one transaction; with ``batch_size``, once per batch. If it
    raises, or returns anything but a list of :class:`ExtractedFact` (or of mappings with its
    fields), the episodes it was shown are not written. :class:`~graphmem.client.AsyncMemory`
    also awaits what it returns when that is awaitable (an ``async def extract``).
    """

    @property
    def name(self) -> str: ...

    def extract(self, episodes: Sequence[Episode]) -> Sequence[ExtractedFact]: ...


@contextmanager
def extractor_errors(extractor: Extractor | None) -> Iterator[None]:
    """An extractor's own errors as :class:`ExtractionError` (graphmem's pass through)."""
    try:
        yield
    except GraphmemError:
        raise
    except Exception as exc:
        name = getattr(extractor, "name", type(extractor).__name__)
        raise ExtractionError(
            f"the extractor {name!r} failed, so none of the messages it was given was written: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def extracted_facts(result: Any) -> list[ExtractedFact]:
    """What an extractor returned, checked: a list (or other iterable) of
    :class:`ExtractedFact`, or of mappings with its fields. Anything else raises ``TypeError``
    or ``ValueError``, which :func:`extractor_errors` reports as the extractor's failure."""
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited: close it rather than leave a warning behind
        raise TypeError("extract returned an awaitable; an async extractor needs AsyncMemory")
    if isinstance(result, str | bytes | Mapping | BaseModel) or not isinstance(result, Iterable):
        raise TypeError(f"extract returned {type(result).__name__}, not a list of ExtractedFact")
    facts = []
    for i, item in enumerate(result):
        if isinstance(item, Mapping):
            try:
                item = ExtractedFact.model_validate(item)
            except ValidationError as exc:
                raise ValueError(f"extracted fact {i}: {describe_validation_error(exc)}") from None
        if not isinstance(item, ExtractedFact):
            raise TypeError(f"extracted fact {i} is {type(item).__name__}, not an ExtractedFact")
        facts.append(item)
    return facts


def extract_facts(
    fresh: Sequence[Mapping[str, Any] | Episode], extractor: str
) -> Plan[tuple[list[FactInput], list[list[str]]]]:
    """The facts the extractor finds in the messages about to be stored, and for each the
    ids of the episodes it came from."""
    now = datetime.now(UTC)
    pending = tuple(
        row
        if isinstance(row, Episode)
        else Episode.model_validate(
            {
                **{k: v for k, v in row.items() if k not in ("i", "embedding")},
                "recorded_at": now,
            }
        )
        for row in fresh
    )
    extracted: Sequence[ExtractedFact] = yield Extract(pending, extractor)
    known = {e.id for e in pending}
    inputs, sources = [], []
    for i, item in enumerate(extracted):
        unknown = set(item.episode_ids) - known
        if unknown or not item.episode_ids:
            named = f"episodes that were not given: {sorted(unknown)}" if unknown else "no episode"
            raise ExtractionError(
                f"extracted fact {i} names {named}, so none of the messages was written"
            )
        fields = {"text": item.text, "tags": item.tags, "valid_from": item.valid_from}
        try:
            inputs.append(FactInput.model_validate(fields))
        except ValidationError as exc:  # the extractor's output, not the caller's input
            raise ExtractionError(
                f"invalid extracted fact {i}: {describe_validation_error(exc)}, so none of "
                "the messages was written"
            ) from exc
        sources.append(list(dict.fromkeys(item.episode_ids)))  # one edge per episode
    return inputs, sources
