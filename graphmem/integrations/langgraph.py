"""LangGraph's long-term store on graphmem: :class:`GraphmemStore`, a ``BaseStore`` over a
graphmem client (``Memory``, ``AsyncMemory``, ``RemoteMemory`` or ``AsyncRemoteMemory``).

How LangGraph's items map onto graphmem (``docs/guides/integrations/langgraph.md``):

* a namespace tuple is one graphmem namespace: the store's ``prefix`` and the labels joined
  by ``.`` (LangGraph refuses ``.`` in a label), ``("memories", "u-42")`` becoming
  ``langgraph.memories.u-42``; a character other than an ASCII letter, a digit, ``_``, ``@``
  or ``-`` is written as ``:`` and two hex digits per UTF-8 byte (``"a b"`` as ``a:20b``);
* an item is a fact in that namespace tagged ``key:<key>``, its value kept in the fact's
  metadata (``{"value": ..., "langgraph": {"key": ..., "created_at": ...}}``) and its text
  the indexed fields of the value (``fields``, by default the whole value as JSON), which
  graphmem embeds and indexes;
* ``put`` of a key that holds a value stores a new fact that supersedes the one before (history
  and audits keep every version), ``delete`` retracts the current fact; erasing a key for good
  is :meth:`GraphmemStore.erase` (graphmem's ``forget`` of every version);
* ``search`` with a query is recall in each namespace under the prefix (``SearchItem.score``
  is recall's score), without one the newest believed items; ``filter`` is matched against the
  values; ``list_namespaces`` lists the graphmem namespaces under the store's prefix that hold
  a believed item.

Writes are attributed to ``actor`` (``langgraph``); through ``graphmem serve`` the actor is
the API key's name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graphmem.errors import RetiredFactError
from graphmem.integrations._support import Call, Steps, missing_extra, run_async, run_sync
from graphmem.models import MAX_TEXT_CHARS, Fact

if TYPE_CHECKING:
    from graphmem.integrations._support import AnyClient

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        get_text_at_path,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
    raise missing_extra("langgraph", "LangGraph", exc) from exc

#: The tag that names an item's key on its facts.
KEY_TAG = "key:"
#: The most namespaces' hits a search ranks, and the most facts it reads per namespace.
SEARCH_K = 100
LIST_LIMIT = 1000
_PLAIN = re.compile(r"[A-Za-z0-9_@-]")
_ESCAPE = re.compile(r"(?::[0-9A-F]{2})+")
_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_@:-]{0,63}")
_MAX_NS = 128


# --- the mapping --------------------------------------------------------------------------------
def _escape(label: str) -> str:
    return "".join(
        c if _PLAIN.fullmatch(c) else "".join(f":{b:02X}" for b in c.encode()) for c in label
    )


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: bytes.fromhex(m.group(0).replace(":", "")).decode(), text)


def graphmem_namespace(prefix: str, namespace: tuple[str, ...]) -> str:
    """The graphmem namespace of LangGraph's ``namespace`` under ``prefix``."""
    name = ".".join((prefix, *(_escape(label) for label in namespace)))
    if len(name) > _MAX_NS:
        raise InvalidNamespaceError(
            f"namespace {namespace} is {len(name)} characters as the graphmem namespace "
            f"{name[:40]}...; graphmem's namespaces hold at most {_MAX_NS}"
        )
    return name


def langgraph_namespace(prefix: str, name: str) -> tuple[str, ...] | None:
    """LangGraph's namespace of the graphmem namespace ``name``, or None when it does not lie
    under ``prefix``."""
    if not name.startswith(prefix + "."):
        return None
    try:
        return tuple(_unescape(label) for label in name[len(prefix) + 1 :].split("."))
    except ValueError:  # not one this mapping writes
        return None


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


def _compare(value: Any, wanted: Any) -> bool:
    """Whether an item's ``value`` matches a filter's ``wanted`` (as LangGraph's stores match
    it: equality, nested objects, and the operators ``$eq``, ``$ne``, ``$gt``, ``$gte``,
    ``$lt``, ``$lte``)."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(v, w) for v, w in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"filter operator {op!r} is not one of $eq $ne $gt $gte $lt $lte")
    if value is None:
        return False
    a, b = float(value), float(operand)
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _passes(filter: Mapping[str, Any] | None, value: Mapping[str, Any]) -> bool:
    return not filter or all(_compare(value.get(k), w) for k, w in filter.items())


class GraphmemStore(BaseStore):
    """LangGraph's ``BaseStore`` on graphmem (see the module's docstring for the mapping).

    ``memory`` is a graphmem client: a sync one (``Memory``, ``RemoteMemory``) serves both the
    sync and the async methods (those in a worker thread), an async one (``AsyncMemory``,
    ``AsyncRemoteMemory``) the async methods only. ``prefix`` starts every graphmem namespace
    the store uses; ``fields`` are the paths of a value whose text graphmem embeds (``"$"``:
    the whole value as JSON), unless a ``put`` names its own; ``recall_options`` go to every
    search's recall (``min_score``, ``config``, ...); ``actor`` is who the writes are
    attributed to."""

    def __init__(
        self,
        memory: AnyClient,
        *,
        prefix: str = "langgraph",
        fields: Sequence[str] = ("$",),
        recall_options: Mapping[str, Any] | None = None,
        actor: str = "langgraph",
    ) -> None:
        if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
            raise InvalidNamespaceError(
                f"prefix {prefix!r}: 1 to 64 ASCII letters, digits and _ @ : -, starting with a "
                "letter or a digit"
            )
        self.memory = memory
        self.prefix = prefix
        self.fields = tuple(fields)
        self.recall_options = dict(recall_options or {})
        self.actor = actor

    # --- BaseStore --------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Carry out ``ops`` in order, one after the other (a get after a put of the same key
        sees the new value)."""
        return run_sync(self.memory, self._batch(list(ops)), self.actor)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch`, awaited."""
        return await run_async(self.memory, self._batch(list(ops)), self.actor)

    def erase(self, namespace: tuple[str, ...], key: str, *, reason: str) -> int:
        """Erase every version of the item for good (graphmem's ``forget``: the texts and
        values leave the graph, tombstones stay); returns how many facts were erased."""
        return run_sync(self.memory, self._erase(namespace, key, reason), self.actor)

    async def aerase(self, namespace: tuple[str, ...], key: str, *, reason: str) -> int:
        """:meth:`erase`, awaited."""
        return await run_async(self.memory, self._erase(namespace, key, reason), self.actor)

    # --- the operations, as client calls ----------------------------------------------------
    def _batch(self, ops: list[Op]) -> Steps[list[Result]]:
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                fact = yield from self._current(op.namespace, op.key)
                results.append(None if fact is None else self._item(fact, op.namespace))
            elif isinstance(op, PutOp):
                yield from self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(op)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list(op)))
            else:
                raise TypeError(f"unknown store operation {op!r}")
        return results

    def _key_tag(self, key: str) -> str:
        return KEY_TAG + str(key)

    def _current(self, namespace: tuple[str, ...], key: str) -> Steps[Fact | None]:
        """The believed fact of ``key`` (the newest, should two have been written at once)."""
        result = yield Call(
            "recall",
            {
                "query": str(key),
                "ns": graphmem_namespace(self.prefix, namespace),
                "kinds": ["fact"],
                "tags": [self._key_tag(key)],
                "k": 10,
                "min_score": 0.0,
                "expand_references": False,
                "track_access": False,
            },
        )
        facts = [h.fact for h in result.hits if h.fact is not None and self._key_of(h.fact) == key]
        return max(facts, key=lambda f: f.recorded_at, default=None)

    def _key_of(self, fact: Fact) -> str | None:
        own = (fact.metadata or {}).get("langgraph")
        return own.get("key") if isinstance(own, dict) and fact.status == "active" else None

    def _text(self, value: Mapping[str, Any], index: Sequence[str] | None) -> str:
        paths = self.fields if index is None else index
        texts = [t for path in paths for t in get_text_at_path(dict(value), path)]
        text = "\n".join(texts) or json.dumps(dict(value), sort_keys=True, ensure_ascii=False)
        return text[:MAX_TEXT_CHARS]

    def _put(self, op: PutOp) -> Steps[None]:
        if op.ttl is not None:
            raise NotImplementedError("GraphmemStore keeps items until deleted: give ttl=None")
        ns = graphmem_namespace(self.prefix, op.namespace)
        for attempt in range(3):
            current = yield from self._current(op.namespace, op.key)
            try:
                if op.value is None:
                    if current is not None:
                        reason = f"deleted through LangGraph (key {op.key!r})"
                        yield Call("retract", {"id": current.id, "reason": reason, "ns": ns})
                    return
                yield from self._write(op, ns, current)
                return
            except RetiredFactError:
                if attempt == 2:  # another writer keeps replacing it
                    raise

    def _write(self, op: PutOp, ns: str, current: Fact | None) -> Steps[None]:
        assert op.value is not None
        created = None if current is None else self._item(current, op.namespace).created_at
        own: dict[str, Any] = {"key": op.key, "namespace": list(op.namespace)}
        if created is not None:
            own["created_at"] = created.isoformat()
        index = op.index if isinstance(op.index, list) else None
        fields: dict[str, Any] = {
            "ns": ns,
            "tags": [self._key_tag(op.key)],
            "source": "langgraph",
            "metadata": {"value": dict(op.value), "langgraph": own},
        }
        if current is not None:
            fields["supersedes"] = [current.id]
            fields["reason"] = f"new value for key {op.key!r} (LangGraph put)"
        yield Call("remember", {"text": self._text(op.value, index), **fields})

    def _item(self, fact: Fact, namespace: tuple[str, ...], score: float | None = None) -> Item:
        metadata = fact.metadata or {}
        own = metadata.get("langgraph") or {}
        created = own.get("created_at")
        values: dict[str, Any] = {
            "namespace": namespace,
            "key": own.get("key", fact.id),
            "value": dict(metadata.get("value") or {}),
            "created_at": datetime.fromisoformat(created) if created else fact.recorded_at,
            "updated_at": fact.recorded_at,
        }
        return SearchItem(**values, score=score)

    def _namespaces(self, prefix: tuple[str, ...] = ()) -> Steps[list[tuple[str, tuple[str, ...]]]]:
        """The graphmem namespaces under the store's prefix that hold a believed fact and map
        to a LangGraph namespace starting with ``prefix``: (graphmem name, LangGraph's)."""
        summaries = yield Call("namespaces")
        found = []
        for summary in summaries:
            namespace = langgraph_namespace(self.prefix, summary.ns)
            if (
                namespace is not None
                and summary.facts_believed
                and namespace[: len(prefix)] == prefix
            ):
                found.append((summary.ns, namespace))
        return found

    def _search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        hits: list[tuple[float, datetime, SearchItem]] = []
        for ns, namespace in (yield from self._namespaces(tuple(op.namespace_prefix))):
            if op.query:
                options = {"kinds": ["fact"], "k": SEARCH_K, **self.recall_options}
                result = yield Call("recall", {"query": op.query, "ns": ns, **options})
                found = [(h.fact, h.score) for h in result.hits if h.fact is not None]
            else:
                beliefs = yield Call("audit.beliefs", {"ns": ns, "limit": LIST_LIMIT})
                found = [(fact, None) for fact in beliefs.facts]
            for fact, score in found:
                if self._key_of(fact) is None or not _passes(op.filter, fact.metadata["value"]):
                    continue
                item = self._item(fact, namespace, score)
                assert isinstance(item, SearchItem)
                hits.append((score or 0.0, item.updated_at, item))
        hits.sort(key=lambda h: (h[0], h[1]), reverse=True)
        return [h[2] for h in hits[op.offset : op.offset + op.limit]]

    def _list(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        conditions = op.match_conditions or ()
        names = [n for _, n in (yield from self._namespaces())]
        kept = [n for n in names if all(_matches(c, n) for c in conditions)]
        if op.max_depth is not None:
            kept = [n[: op.max_depth] for n in kept]
        return sorted(set(kept))[op.offset : op.offset + op.limit]

    def _erase(self, namespace: tuple[str, ...], key: str, reason: str) -> Steps[int]:
        ns = graphmem_namespace(self.prefix, namespace)
        result = yield Call(
            "recall",
            {
                "query": str(key),
                "ns": ns,
                "kinds": ["fact"],
                "tags": [self._key_tag(key)],
                "k": SEARCH_K,
                "min_score": 0.0,
                "include_retired": True,
                "expand_references": False,
                "track_access": False,
            },
        )
        ids: set[str] = set()
        for hit in result.hits:
            if hit.id not in ids:  # every version of its chain, past the k recall returns
                history = yield Call("history", {"id": hit.id, "ns": ns})
                ids.update(fact.id for fact in history.facts)
                ids.add(hit.id)
        if not ids:
            return 0
        erased = yield Call("forget", {"ids": sorted(ids), "reason": reason, "ns": ns})
        return len(erased.facts)


__all__ = ["GraphmemStore", "graphmem_namespace", "langgraph_namespace"]
