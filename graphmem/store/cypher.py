"""Named Cypher files and their one loader.

Every query graphmem runs at runtime is a ``.cypher`` file under ``graphmem/store/queries``
(package data), in one folder per flow (``remember/``, ``ingest/``, ``recall/``, ``reads/``,
``reembed/``, ``schema/``, ``bench/``); the read-only analyst library lives in the top-level
``cypher/`` folder (:func:`analyst_queries` loads it, also from an installed wheel). Each file
opens with a header of ``//`` lines::

    // name: fact_vector_search
    // mode: read
    // params: ns, vector, candidates, k
    // returns: id, text, score
    // example: {"ns": "demo", "vector": [0.1, 0.2], "candidates": 50, "k": 5}
    // Free text after the keyed lines describes the query.

``name`` must match the file name and be unique across the folders, ``mode`` is ``read`` or
``write`` (reads are routed as reads), and ``params`` must list exactly the ``$parameters`` the
body uses, each optionally typed (``ns: string, as_of: datetime, limit: integer``; the types are
:data:`PARAM_TYPES`; the analyst library types every parameter, so ``graphmem cypher run`` can
read ``-p name=value`` as what the query expects). ``example`` is optional JSON used by the
test-suite to run analyst queries.

Runtime and analyst queries alike may include a shared predicate from
``graphmem/store/queries/fragments`` with ``{{fragment_name}}`` (a fragment may include others);
it is expanded when the file is loaded, before the parameters are checked, so the one
definition of, say, "believed at this time" serves every query that needs it, the analysts'
included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from graphmem._files import bundled_resource
from graphmem.errors import CypherFileError, InvalidInputError, QueryNotFoundError

QUERY_DIR = Path(__file__).resolve().parent / "queries"

_HEADER_KEY = re.compile(r"^//\s*(name|mode|params|returns|example)\s*:\s*(.*)$")
#: One left-to-right pass over a query's text: comments, strings and quoted names are skipped
#: whole (an apostrophe in a comment opens no string), and each ``$name`` (``$`quoted`` or
#: ``$0`` too) is a parameter.
_TOKEN = re.compile(
    r"//[^\n]*|/\*.*?\*/|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`]|``)*`"
    r"|\$(?:`((?:[^`]|``)+)`|([A-Za-z_][A-Za-z0-9_]*|[0-9]+))",
    re.DOTALL,
)
_INCLUDE = re.compile(r"\{\{\s*([a-z_]+)\s*(?:\(([^(){}]*)\))?\s*\}\}")
_ARGS = re.compile(r"^//\s*args\s*:\s*(.*)$")
FRAGMENT_DIR = QUERY_DIR / "fragments"

#: The types a header may give a parameter, with what each accepts.
PARAM_TYPES: dict[str, str] = {
    "string": "text",
    "integer": "a whole number",
    "float": "a number",
    "boolean": "true or false",
    "datetime": "an ISO-8601 time with a zone, or a friendly form ('2026-03-01', '3 days ago')",
    "list<string>": "a JSON list of texts, or texts separated by commas",
    "map": "a JSON object",
}


@dataclass(frozen=True)
class CypherQuery:
    """One named, parameterised Cypher query."""

    name: str
    text: str
    mode: Literal["read", "write"]
    params: tuple[str, ...]
    returns: str = ""
    #: The declared type of each typed parameter (a key of :data:`PARAM_TYPES`).
    param_types: Mapping[str, str] = field(default_factory=dict, compare=False)
    description: str = ""
    example: Mapping[str, Any] | None = field(default=None, compare=False)
    path: Path | None = field(default=None, compare=False)

    def check_params(self, given: Mapping[str, Any]) -> None:
        """Raise :class:`InvalidInputError` (a ``ValueError``) if ``given`` lacks a parameter or
        has an unknown one."""
        missing = sorted(set(self.params) - set(given))
        unknown = sorted(set(given) - set(self.params))
        if missing or unknown:
            raise InvalidInputError(
                f"query {self.name!r}: missing parameters {missing}, unknown parameters {unknown}"
            )


def parse_cypher(
    source: str, *, path: Path | None = None, fragments: Mapping[str, str] | None = None
) -> CypherQuery:
    """Parse a ``.cypher`` file's text into a :class:`CypherQuery`.

    ``{{name}}`` in the body is replaced by ``fragments[name]``.
    """
    keyed: dict[str, str] = {}
    description: list[str] = []
    body: list[str] = []
    in_header = True
    for line in source.splitlines():
        stripped = line.strip()
        if in_header and stripped.startswith("//"):
            match = _HEADER_KEY.match(stripped)
            if match:
                keyed[match.group(1)] = match.group(2).strip()
            else:
                description.append(stripped.lstrip("/").strip())
            continue
        if in_header and not stripped:
            continue
        in_header = False
        body.append(line)
    where = str(path) if path else "<string>"
    for key in ("name", "mode", "params"):
        if key not in keyed:
            raise CypherFileError(f"{where}: header lacks '// {key}:'")
    mode = keyed["mode"]
    if mode not in ("read", "write"):
        raise CypherFileError(f"{where}: mode must be 'read' or 'write', not {mode!r}")
    declared, param_types = _declared_params(keyed["params"], where)
    text = "\n".join(body).strip()
    text = _expand(text, fragments or {}, where)
    if not text:
        raise CypherFileError(f"{where}: no query after the header")
    used = set(used_params(text))
    if used != set(declared):
        raise CypherFileError(
            f"{where}: header params {sorted(declared)} differ from the body's {sorted(used)}"
        )
    if path is not None and keyed["name"] != path.stem:
        raise CypherFileError(f"{where}: name {keyed['name']!r} differs from the file name")
    example = None
    if "example" in keyed:
        try:
            example = json.loads(keyed["example"])
        except ValueError as exc:
            raise CypherFileError(f"{where}: example is not JSON: {exc}") from exc
    return CypherQuery(
        name=keyed["name"],
        text=text,
        mode=mode,  # type: ignore[arg-type]
        params=declared,
        returns=keyed.get("returns", ""),
        param_types=param_types,
        description=" ".join(d for d in description if d),
        example=example,
        path=path,
    )


def used_params(text: str) -> tuple[str, ...]:
    """The ``$parameters`` a query text uses, outside comments and strings, in order."""
    found = ((m.group(1) or "").replace("``", "`") or m.group(2) for m in _TOKEN.finditer(text))
    return tuple(dict.fromkeys(name for name in found if name))


def _declared_params(line: str, where: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """The names of a ``params:`` line (``a, b: integer, c: list<string>``) and the types given."""
    names: list[str] = []
    types: dict[str, str] = {}
    for item in (p.strip() for p in line.split(",")):
        if not item:
            continue
        name, _, kind = (part.strip() for part in item.partition(":"))
        name = name.lstrip("$")
        names.append(name)
        if kind:
            if kind not in PARAM_TYPES:
                raise CypherFileError(
                    f"{where}: parameter {name!r} has unknown type {kind!r} "
                    f"(known: {', '.join(PARAM_TYPES)})"
                )
            types[name] = kind
    return tuple(names), types


class Fragment(str):
    """A shared piece of Cypher; ``args`` are the names its body uses for what each include
    passes (``{{believed_at(f, $as_of)}}``), empty for a fragment that reads fixed names."""

    args: tuple[str, ...]

    def __new__(cls, text: str, args: tuple[str, ...] = ()) -> Fragment:
        fragment = super().__new__(cls, text)
        fragment.args = args
        return fragment


def _expand(
    text: str, fragments: Mapping[str, str], where: str, within: tuple[str, ...] = ()
) -> str:
    """``text`` with each ``{{name}}`` or ``{{name(arg, ...)}}`` replaced by its fragment, each
    argument put in place of the fragment's own name for it, fragments within fragments
    included."""

    def replace(match: re.Match[str]) -> str:
        name, given = match.group(1), match.group(2)
        if name not in fragments:
            raise CypherFileError(f"{where}: unknown fragment {{{{{name}}}}}")
        if name in within:
            raise CypherFileError(f"{where}: fragment {{{{{name}}}}} includes itself")
        fragment = fragments[name]
        names = fragment.args if isinstance(fragment, Fragment) else ()
        values = [] if given is None else [v.strip() for v in given.split(",")]
        if len(values) != len(names) or not all(values):
            raise CypherFileError(
                f"{where}: fragment {{{{{name}}}}} takes {len(names)} argument(s) "
                f"({', '.join(names) or 'none'}), given {given!r}"
            )
        body = str(fragment)
        if names:
            by_name = dict(zip(names, values, strict=True))
            own = re.compile(r"(?<![.$\w])(" + "|".join(map(re.escape, names)) + r")(?!\w)")
            body = own.sub(lambda m: by_name[m.group(1)], body)
        return _expand(body, fragments, where, (*within, name))

    return _INCLUDE.sub(replace, text)


def load_fragments(directory: Path) -> dict[str, Fragment]:
    """The predicates of ``directory/*.cypher`` by file name, comment lines dropped; a
    ``// args: a, b`` line names the fragment's arguments."""
    fragments: dict[str, Fragment] = {}
    for path in sorted(directory.glob("*.cypher")):
        lines = path.read_text(encoding="utf-8").splitlines()
        body = "\n".join(
            line for line in lines if line.strip() and not line.strip().startswith("//")
        )
        declared = [m.group(1) for m in map(_ARGS.match, (line.strip() for line in lines)) if m]
        args = tuple(a.strip() for a in ",".join(declared).split(",") if a.strip())
        fragments[path.stem] = Fragment(body.strip(), args)
    return fragments


def load_dir(
    directory: str | Path,
    *,
    fragments: Mapping[str, str] | None = None,
    recursive: bool = False,
    skip: Path | None = None,
) -> dict[str, CypherQuery]:
    """Every ``.cypher`` file of ``directory`` (and, with ``recursive``, of its folders but
    ``skip``), by name. A directory that does not exist is an error (``CypherFileError``), not
    an empty library, and so are two files of one name."""
    root = Path(directory)
    if not root.is_dir():
        raise CypherFileError(f"{directory}: no such directory of .cypher files")
    paths = root.rglob("*.cypher") if recursive else root.glob("*.cypher")
    queries: dict[str, CypherQuery] = {}
    for path in sorted(paths):
        if skip is not None and path.is_relative_to(skip):
            continue
        query = parse_cypher(path.read_text(encoding="utf-8"), path=path, fragments=fragments)
        if query.name in queries:
            raise CypherFileError(f"{path}: a query named {query.name!r} exists already")
        queries[query.name] = query
    return queries


@cache
def _fragments() -> dict[str, Fragment]:
    return load_fragments(FRAGMENT_DIR)


@cache
def _package_queries() -> dict[str, CypherQuery]:
    return load_dir(QUERY_DIR, fragments=_fragments(), recursive=True, skip=FRAGMENT_DIR)


def analyst_queries() -> dict[str, CypherQuery]:
    """The read-only analyst library (``beliefs_as_of``, ``true_at``, ``changes_between``,
    ``fact_history``, ``open_contradictions``), by name: the ``cypher/`` folder of a checkout,
    which an installed wheel carries inside the package. Its files use the runtime's fragments,
    so the two-clock predicates are written once."""
    return load_dir(bundled_resource("cypher", "_analyst"), fragments=_fragments())


def load_query_file(path: str | Path) -> CypherQuery:
    """One ``.cypher`` file of your own with a header (its ``name`` the file's name), read as the
    analyst library is: ``{{fragment}}`` includes expanded from the runtime's fragments. A file
    that cannot be read or parsed is a :class:`CypherFileError`."""
    file = Path(path)
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise CypherFileError(f"{file}: cannot read it: {reason}") from None
    return parse_cypher(source, path=file, fragments=_fragments())


def query(name: str) -> CypherQuery:
    """The runtime query ``name`` from ``graphmem/store/queries``."""
    try:
        return _package_queries()[name]
    except KeyError:
        raise QueryNotFoundError(f"no query named {name!r} in {QUERY_DIR}") from None
