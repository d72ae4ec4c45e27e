"""What the guarded read path hides: the graph's secrets, which no query it runs may read.

The graph holds values that must never reach an analyst's query: the erasure key that keys
every tombstone's hash (``GraphmemSchema.erasure_key``), the API keys' hashes and MACs
(``GraphmemApiKey.hash``, ``.mac``) and the keyed hashes a tombstone keeps of what it replaced
(``Tombstone.text_hash``, ``.source_hash``, ``.session_hash``): with the key and a hash, a short
erased text (a four-digit code) is found by trying every candidate. Two layers keep them out
of :func:`graphmem.store.guard.guarded_read`:

1. **The plan** (:func:`check_secrets`), before anything runs. Every operator's details (the
   expressions Neo4j prints for it, literals already replaced by ``$auto…`` parameters) are
   read, and the query is refused when they name an internal label (``:Graphmem…``), read a
   secret property key (``x.erasure_key``, ``x.hash``, ``x.mac``, ``x.text_hash``,
   ``x.source_hash``, ``x.session_hash``, an index on one of them), take a whole property map
   (``properties(x)``, ``x{.*}``), or read a property by a computed name (``x[k]``, where
   ``k`` is not a whole number: a list index such as ``times[0]`` or ``rows[i]`` over a
   ``range`` passes). A fact's ``text_hash`` (a plain SHA-256 of its text) is refused too: the
   plan does not say whether a variable holds a fact or a tombstone.
2. **The result** (:func:`redact`), in the read's own transaction. Every node returned (alone,
   in a list, a map or a path) loses its secret properties, and a node with an internal label
   loses all of them; a returned string holding the erasure key, a key's hash or MAC, or a
   tombstone's hash refuses the whole result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import neo4j
import neo4j.graph

from graphmem.errors import QueryRefusedError

#: Property keys that hold secrets (on ``GraphmemSchema``, ``GraphmemApiKey`` and
#: ``Tombstone``; ``text_hash`` is also a fact's plain hash, refused alike).
SECRET_PROPERTIES: frozenset[str] = frozenset(
    {"erasure_key", "hash", "mac", "text_hash", "source_hash", "session_hash"}
)
#: graphmem's own labels (schema, migrations, locks, API keys): no guarded read may name one.
INTERNAL_LABEL = re.compile(r"\b(Graphmem[A-Z]\w*)")

_PROPERTY = re.compile(r"\.\s*`?(\w+)`?")
_INDEX = re.compile(r"\bINDEX\b[^(]*\(([^)]*)\)", re.IGNORECASE)
_ALL_PROPERTIES = re.compile(r"\{\s*\.\s*\*|\bproperties\s*\(", re.IGNORECASE)
#: A whole number as the index of a subscript: literals, integer parameters, counts and sizes,
#: and arithmetic on them.
_WHOLE = re.compile(r"\d+|\$autoint_\d+|[-+*/%() ]")
_WHOLE_CALLS = ("size", "length", "toInteger", "count", "abs", "sign")
#: Words after which a ``[`` opens a list rather than a subscript (``END`` is not one:
#: ``CASE … END[k]`` subscripts the case's value).
_KEYWORDS = frozenset(
    {"IN", "AND", "OR", "XOR", "NOT", "WHEN", "THEN", "ELSE", "AS", "WHERE", "IS", "CONTAINS",
     "WITH", "RETURN", "UNWIND", "CASE", "DISTINCT", "BY"}
)  # fmt: skip
#: A quoted name (a column such as `[x IN list | x]` is no subscript).
_QUOTED = re.compile(r"`(?:[^`]|``)*`")
_HEX64 = re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])")


def _refuse(what: str, why: str) -> QueryRefusedError:
    return QueryRefusedError(
        f"refused {what}: {why}; the guarded read path never returns graphmem's secrets (the "
        "erasure key, API keys' hashes, tombstones' keyed hashes: see 'What the read path "
        "hides' in the docs)",
        refused=what,
    )


def _operators(plan: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    stack = [plan]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.get("children") or ())


def check_secrets(plan: Mapping[str, Any] | None, params: Mapping[str, Any]) -> None:
    """Raise :class:`~graphmem.errors.QueryRefusedError` when the ``EXPLAIN`` plan of a query
    could read a secret (see the module's description)."""
    if plan is None:
        raise _refuse("the query", "Neo4j returned no plan for it")
    operators = list(_operators(plan))
    if any("cache" in (node.get("identifiers") or ()) for node in operators):
        # cache[x.key] is how a plan shows a cached property: a variable of that name would
        # pass a computed key unseen.
        raise _refuse("the variable name cache", "plans use it for cached properties")
    # Each operator's details, and any other text among its arguments.
    details = [
        value
        for node in operators
        for value in (node.get("args") or {}).values()
        if isinstance(value, str)
    ]
    for text in details:
        label = INTERNAL_LABEL.search(text)
        if label:
            raise _refuse(
                f"the label {label.group(1)}", "it is graphmem's own bookkeeping, not memory"
            )
    for text in details:
        named = {m.group(1) for m in _PROPERTY.finditer(text)}
        for listed in _INDEX.finditer(text):
            named.update(re.findall(r"\w+", listed.group(1)))
        for key in sorted(named & SECRET_PROPERTIES):
            raise _refuse(f"the property {key}", "it holds a secret or a keyed hash")
    for text in details:
        if _ALL_PROPERTIES.search(text):
            raise _refuse(
                "a whole property map (properties(x), x{.*})",
                "it could hold a secret; name the properties you want",
            )
    whole = _whole_variables(details)
    for text in details:
        for index in _subscripts(_QUOTED.sub("_q_", text)):
            if not _is_whole(index, whole, params):
                raise _refuse(
                    f"the computed property access [{index}]",
                    "only a property named in the query, or a list index, is read",
                )


def _whole_variables(texts: Iterable[str]) -> set[str]:
    """Variables bound only by ``UNWIND range(…) AS i``: whole numbers. A name bound anywhere
    else too (``AS``, ``IN``, a ``reduce`` accumulator) is not one."""
    text = "\n".join(texts)
    ranges: dict[str, int] = {}
    for found in re.finditer(r"(?<![\w.`])range\s*\(", text):
        depth, j = 1, found.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        bound = re.match(r"\s+AS\s+`?(\w+)`?", text[j:])
        if bound:
            ranges[bound.group(1)] = ranges.get(bound.group(1), 0) + 1
    others = set(re.findall(r"(?<![\w.`$])`?(\w+)`?\s+IN\b", text))
    others.update(re.findall(r"\breduce\s*\(\s*`?(\w+)`?", text, re.IGNORECASE))
    bound_as = re.findall(r"\bAS\s+`?(\w+)`?", text)
    return {
        name
        for name, count in ranges.items()
        if name not in others and bound_as.count(name) == count
    }


def _subscripts(text: str) -> Iterator[str]:
    """The index of each subscript ``x[…]`` in ``text`` (quoted names replaced; slices
    ``x[a..b]`` and cached properties ``cache[x.key]`` left out): a ``[`` right after a name,
    ``)`` or ``]``, up to its matching ``]``."""
    i = 0
    while True:
        i = text.find("[", i)
        if i < 0:
            return
        before = text[:i].rstrip()
        start, depth, j = i + 1, 1, i + 1
        while j < len(text) and depth:
            depth += {"[": 1, "]": -1}.get(text[j], 0)
            j += 1
        inner = text[start : j - 1]
        i += 1
        if not before or not (before[-1].isalnum() or before[-1] in "_)]"):
            continue  # a list literal or comprehension, a pattern's relationship
        word = re.search(r"(?<![\w$.])(\w+)$", before)
        if word and word.group(1).upper() in _KEYWORDS and text[i - 2].isspace():
            # A list after a keyword: Neo4j prints `x IN [...]`, `THEN [...]` with a space,
            # and a subscript of a variable named like one (`then[k]`) without.
            continue
        if re.search(r"(?<!\w)cache$", before) and re.fullmatch(r"\w+\.\w+", inner):
            continue
        if _top_level_range(inner):
            continue
        yield inner


def _top_level_range(inner: str) -> bool:
    depth = 0
    for k, char in enumerate(inner):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if depth == 0 and inner.startswith("..", k):
            return True
    return False


def _is_whole(index: str, whole: set[str], params: Mapping[str, Any]) -> bool:
    """Whether a subscript's index is a whole number by its form: literals, integer
    parameters, ``range`` variables, sizes and counts, and arithmetic on them."""
    rest = index
    for call in _WHOLE_CALLS:
        rest = _drop_calls(rest, call)
    for name in re.findall(r"\$`?(\w+)`?", rest):
        if name.startswith("autoint_") or _is_int(params.get(name)):
            rest = re.sub(rf"\$`?{name}`?(?!\w)", " ", rest)
    for name in whole:
        rest = re.sub(rf"(?<![\w$.`])`?{re.escape(name)}`?(?![\w`])", " ", rest)
    return bool(index.strip()) and not _WHOLE.sub("", rest).strip()


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _drop_calls(text: str, name: str) -> str:
    """``text`` with each ``name(…)`` call replaced by ``1`` (its arguments are checked where
    they stand in the plan on their own)."""
    while True:
        found = re.search(rf"(?<![\w.`]){name}\s*\(", text, re.IGNORECASE)
        if not found:
            return text
        depth, j = 1, found.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        text = text[: found.start()] + " 1 " + text[j:]


# --- the result -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Secrets:
    """The secret values a result must not hold: the erasure keys and the API keys' hashes
    and MACs (read in the query's transaction by ``guard_secrets``)."""

    values: tuple[str, ...]

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]]) -> Secrets:
        found: set[str] = set()
        for row in rows:
            found.update(str(v) for v in row["secrets"] if v)
        return cls(tuple(sorted(found)))


def redact(records: list[neo4j.Record], secrets: Secrets) -> list[str]:
    """Remove the secret properties from every node in ``records`` (all the properties of a
    node with an internal label), and refuse a result holding a secret value. Returns the
    64-digit hex strings found, for the caller to check against tombstones' hashes."""
    hexes: set[str] = set()
    for record in records:
        for value in record.values():
            _walk(value, secrets, hexes)
    return sorted(hexes)


def _walk(value: object, secrets: Secrets, hexes: set[str]) -> None:
    if isinstance(value, str):
        if any(secret in value for secret in secrets.values):
            raise _refuse("the result", "it holds a secret value")
        hexes.update(found.lower() for found in _HEX64.findall(value))
    elif isinstance(value, neo4j.graph.Node):
        _strip(value, internal=any(INTERNAL_LABEL.match(label) for label in value.labels))
        for item in value.values():
            _walk(item, secrets, hexes)
    elif isinstance(value, neo4j.graph.Relationship):
        for node in (value.start_node, value.end_node):
            if node is not None:
                _walk(node, secrets, hexes)
        for item in value.values():
            _walk(item, secrets, hexes)
    elif isinstance(value, neo4j.graph.Path):
        for item in (*value.nodes, *value.relationships):
            _walk(item, secrets, hexes)
    elif isinstance(value, Mapping):
        for item in value.values():
            _walk(item, secrets, hexes)
    elif isinstance(value, list | tuple):
        for item in value:
            _walk(item, secrets, hexes)


def _strip(node: neo4j.graph.Node, *, internal: bool) -> None:
    """Take the secret properties (all of them, on an internal node) out of a returned node.
    The driver keeps a node's properties in one dict that every reference to it shares (in a
    path, a list, a relationship's ends), so one removal covers them all."""
    held = getattr(node, "_properties", None)
    if not isinstance(held, dict):
        raise _refuse("the result", "its nodes could not be checked for secrets")
    for key in list(held) if internal else sorted(SECRET_PROPERTIES & held.keys()):
        del held[key]


def refuse_tombstone_hashes(found: bool) -> None:
    """Refuse a result that held a tombstone's keyed hash (``guard_tombstone_hashes``)."""
    if found:
        raise _refuse("the result", "it holds a tombstone's keyed hash")
