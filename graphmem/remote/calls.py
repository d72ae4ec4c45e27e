"""The REST calls of the memory flows (remember, ingest, recall, context, get, history, pin,
contradict, resolve, retract), each built from the arguments of the
:class:`~graphmem.client.Memory` method it serves. No I/O: each method returns a
:class:`~graphmem.remote.call.Call`; :class:`Calls` adds those of
:mod:`graphmem.remote.calls_admin`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from graphmem.errors import ClientUsageError
from graphmem.models import (
    ContextBlock,
    Episode,
    Fact,
    FactHistory,
    FactInput,
    IngestResult,
    Message,
    RecallResult,
)
from graphmem.models.bounds import check_items
from graphmem.remote.call import (
    Call,
    CallsBase,
    checked_progress,
    either,
    given,
    jsonable,
    model,
    models,
    one_id,
    zone_name,
)
from graphmem.remote.calls_admin import AdminCalls

if TYPE_CHECKING:
    import numpy.typing as npt

    from graphmem.core.recall.scope import ContextOptions, RecallOptions
    from graphmem.models import FactFields


#: The options the library reads a lone string of as a one-item list; a request names the list.
_LISTS = frozenset({"tags", "supersedes", "references", "contradicts", "kinds"})


def listed(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` with a lone string among :data:`_LISTS` as a one-item list."""
    return {k: [v] if k in _LISTS and isinstance(v, str) else v for k, v in fields.items()}


def fact_data(item: FactInput | Mapping[str, Any] | str, name: str) -> Any:
    """A fact of ``remember_many`` as the JSON the server reads (text alone as ``text``)."""
    if isinstance(item, str):
        return {"text": item}
    if isinstance(item, FactInput):
        return item.model_dump(mode="json", exclude_defaults=True)
    return jsonable(listed(item) if isinstance(item, Mapping) else item, name)


def message_data(item: Message | Mapping[str, Any] | str, name: str) -> Any:
    """A message of ``ingest`` as the JSON the server reads (text alone as ``content``)."""
    if isinstance(item, str):
        return {"content": item}
    if isinstance(item, Message):
        return item.model_dump(mode="json", exclude_defaults=True)
    return jsonable(item, name)


def search_body(query: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The body of a search or context: the query and the options given (a zone by name)."""
    body = {"query": query}
    for name, value in listed(options).items():
        if name == "timezone":
            value = zone_name(value)
        body |= given(name, value)
    return body


class MemoryCalls(CallsBase):
    """The calls of the memory flows, for a client whose default namespace is ``ns``."""

    def remember(
        self, text: str, *, ns: str | None, allow_forgotten: bool, **fields: Unpack[FactFields]
    ) -> Call[Fact]:
        fields_data = jsonable(listed(fields), "fields")
        body = {"text": text, **fields_data, "allow_forgotten": allow_forgotten}
        return Call("POST", self.path(ns, "facts"), model(Fact), json=body)

    def remember_many(
        self,
        facts: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None,
        vectors: npt.ArrayLike | None,
        allow_forgotten: bool,
    ) -> Call[list[Fact]]:
        if vectors is not None:
            raise ClientUsageError(
                "vectors cannot be sent to graphmem serve: the server embeds with its own "
                "model (leave vectors out, or use Memory against the database)"
            )
        items = [fact_data(item, f"facts[{i}]") for i, item in enumerate(facts)]
        check_items(items, "text")  # refused here as the server would, before sending
        body = {"facts": items, "allow_forgotten": allow_forgotten}
        return Call("POST", self.path(ns, "facts", "batch"), models(Fact), json=body)

    def ingest(
        self,
        messages: Iterable[Message | Mapping[str, Any] | str],
        *,
        ns: str | None,
        session_id: str | None,
        batch_size: int | None,
        progress: Callable[[int], object] | None,
        extract: bool | None,
        allow_forgotten: bool,
    ) -> Call[IngestResult]:
        items = [message_data(item, f"messages[{i}]") for i, item in enumerate(messages)]
        check_items(items, "content")  # refused here as the server would, before sending
        body = {
            "messages": items,
            **given("session_id", session_id),
            **given("batch_size", batch_size),
            **given("extract", extract),
            "allow_forgotten": allow_forgotten,
        }
        return Call(
            "POST",
            self.path(ns, "messages"),
            model(IngestResult),
            json=body,
            # Called once, with every message, when the server has stored them.
            progress=checked_progress(progress, "a number of messages"),
            report=lambda _: (len(items),) if items else None,
        )

    def recall(
        self, query: str, *, ns: str | None, **options: Unpack[RecallOptions]
    ) -> Call[RecallResult]:
        body = search_body(query, options)
        return Call("POST", self.path(ns, "search"), model(RecallResult), json=body)

    def context(
        self,
        query: str,
        *,
        ns: str | None,
        budget_tokens: int,
        **options: Unpack[ContextOptions],
    ) -> Call[ContextBlock]:
        body = search_body(query, options) | {"budget_tokens": budget_tokens}
        return Call("POST", self.path(ns, "context"), model(ContextBlock), json=body)

    def get(self, id: str, *, ns: str | None) -> Call[Fact | Episode]:
        path = self.path(ns, "memories", one_id("id", id))
        return Call("GET", path, either(Fact, Episode))

    def history(self, id: str, *, ns: str | None) -> Call[FactHistory]:
        path = self.path(ns, "facts", one_id("id", id), "history")
        return Call("GET", path, model(FactHistory))

    def pin(self, id: str, *, ns: str | None, pinned: bool) -> Call[Fact]:
        path = self.path(ns, "memories", one_id("id", id), "pin")
        return Call("POST", path, model(Fact), json={"pinned": pinned})

    def contradict(self, a: str, b: str, *, reason: str | None, ns: str | None) -> Call[list[Fact]]:
        body = {"a": a, "b": b, **given("reason", reason)}
        return Call("POST", self.path(ns, "contradictions"), models(Fact), json=body)

    def resolve(
        self, a: str, b: str, *, keep: str, reason: str | None, ns: str | None
    ) -> Call[list[Fact]]:
        body = {"a": a, "b": b, "keep": keep, **given("reason", reason)}
        path = self.path(ns, "contradictions", "resolve")
        return Call("POST", path, models(Fact), json=body)

    def retract(self, id: str, *, reason: str | None, ns: str | None) -> Call[Fact]:
        path = self.path(ns, "memories", one_id("id", id), "retract")
        return Call("POST", path, model(Fact), json=given("reason", reason))


class Calls(MemoryCalls, AdminCalls):
    """Every call of the REST API that the remote clients make."""


__all__ = ["Calls", "MemoryCalls", "fact_data", "message_data", "search_body"]
