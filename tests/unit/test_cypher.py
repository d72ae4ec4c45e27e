from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphmem.errors import CypherFileError, QueryNotFoundError
from graphmem.store.cypher import (
    FRAGMENT_DIR,
    QUERY_DIR,
    Fragment,
    analyst_queries,
    load_dir,
    load_fragments,
    parse_cypher,
    query,
)

ANALYST_DIR = Path(__file__).resolve().parents[2] / "cypher"


def test_every_runtime_query_parses_and_declares_its_parameters() -> None:
    queries = load_dir(
        QUERY_DIR, fragments=load_fragments(FRAGMENT_DIR), recursive=True, skip=FRAGMENT_DIR
    )
    assert {"fact_create", "recall_search", "episode_create", "access_stamp"} <= set(queries)
    for q in queries.values():
        assert q.mode in ("read", "write")
        assert q.description, f"{q.name} has no description"


def test_analyst_queries_are_all_reads_scoped_to_a_namespace() -> None:
    queries = load_dir(ANALYST_DIR, fragments=load_fragments(FRAGMENT_DIR))
    assert queries
    for q in queries.values():
        assert q.mode == "read", q.name
        assert "ns" in q.params, f"{q.name} is not scoped to a namespace"
        assert q.example is not None and set(q.example) == set(q.params), q.name
    as_text = load_dir(str(ANALYST_DIR), fragments=load_fragments(FRAGMENT_DIR))
    assert as_text.keys() == queries.keys()  # a path as text works too
    assert analyst_queries() == queries


def test_a_missing_directory_is_an_error_not_an_empty_library(tmp_path: Path) -> None:
    with pytest.raises(CypherFileError, match="no such directory"):
        load_dir(tmp_path / "cypher")


def test_query_lookup() -> None:
    assert query("recall_search").mode == "read"
    assert query("fact_create").mode == "write"
    with pytest.raises(QueryNotFoundError):
        query("no_such_query")


GOOD = """// name: sample
// mode: read
// params: ns, k
// returns: id
// Finds things.
MATCH (f:Fact {ns: $ns}) // a trailing comment with $ignored
WHERE f.text <> '$not_a_param'
RETURN f.id AS id LIMIT $k
"""


def test_parse_header_and_body() -> None:
    q = parse_cypher(GOOD)
    assert q.name == "sample"
    assert q.params == ("ns", "k")
    assert q.returns == "id"
    assert q.description == "Finds things."
    assert q.text.startswith("MATCH")
    q.check_params({"ns": "a", "k": 1})
    with pytest.raises(ValueError, match="missing parameters \\['k'\\]"):
        q.check_params({"ns": "a"})
    with pytest.raises(ValueError, match="unknown parameters \\['x'\\]"):
        q.check_params({"ns": "a", "k": 1, "x": 2})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (GOOD.replace("// name: sample\n", ""), "lacks '// name:'"),
        (GOOD.replace("mode: read", "mode: maybe"), "mode must be"),
        (GOOD.replace("params: ns, k", "params: ns"), "differ from the body"),
        (GOOD.replace("params: ns, k", "params: ns, k, extra"), "differ from the body"),
        ("// name: x\n// mode: read\n// params:\n", "no query after the header"),
        (GOOD.replace("// returns: id", "// example: {not json"), "example is not JSON"),
    ],
)
def test_malformed_files_are_rejected(text: str, fragment: str) -> None:
    with pytest.raises(CypherFileError, match=fragment):
        parse_cypher(text)


def test_name_must_match_the_file(tmp_path: Path) -> None:
    path = tmp_path / "other.cypher"
    path.write_text(GOOD)
    with pytest.raises(CypherFileError, match="differs from the file name"):
        load_dir(tmp_path)


def test_fragments_are_expanded_and_unknown_ones_refused() -> None:
    body = "// name: f\n// mode: read\n// params: ns\nMATCH (node) WHERE {{visible}} RETURN node"
    q = parse_cypher(body, fragments={"visible": "(node.ns = $ns)"})
    assert "WHERE (node.ns = $ns) RETURN" in q.text
    with pytest.raises(CypherFileError, match="unknown fragment"):
        parse_cypher(body, fragments={})
    assert "fact_visible" in load_fragments(FRAGMENT_DIR)


def test_fragments_may_include_fragments_but_not_themselves() -> None:
    body = "// name: f\n// mode: read\n// params: ns, k\nMATCH (node) WHERE {{outer}} RETURN node"
    fragments = {"outer": "{{inner}} AND node.k = $k", "inner": "(node.ns = $ns)"}
    q = parse_cypher(body, fragments=fragments)
    assert "WHERE (node.ns = $ns) AND node.k = $k RETURN" in q.text
    with pytest.raises(CypherFileError, match="includes itself"):
        parse_cypher(body, fragments={"outer": "{{inner}}", "inner": "x AND {{outer}}"})


#: Files allowed to delete :Fact or :Episode nodes: none. Erasure (``forget``) keeps the node
#: and turns it into a :Tombstone; only its file may take the label away or replace every
#: property.
_ERASURE_FILES: frozenset[str] = frozenset()
_TOMBSTONE_FILES = frozenset({"forget_erase.cypher"})


def test_no_code_path_deletes_a_fact_or_an_episode() -> None:
    # Invariant 1: history is never lost. Cypher keywords are case-insensitive, and Cypher
    # lives in the package's .cypher files and in strings of its modules.
    package = Path(QUERY_DIR).parents[1]
    # The framework adapters implement their frameworks' own ``delete`` methods (which retract
    # or erase through the client); they hold no Cypher at all.
    adapters = package / "integrations"
    assert not [
        p for p in adapters.rglob("*.py") if re.search(r"\b(MATCH|MERGE|DETACH)\b", p.read_text())
    ]
    sources = [
        *(p for p in package.rglob("*.py") if adapters not in p.parents),
        *package.rglob("*.cypher"),
        *ANALYST_DIR.rglob("*.cypher"),
    ]
    assert len(sources) > 50
    deleting = re.compile(r"\bdelete\b", re.IGNORECASE)
    offenders = [
        str(path)
        for path in sources
        if path.name
        not in _ERASURE_FILES | _RELATIONSHIP_DELETES | _NAMESPACE_DROPS | _REQUEST_RECORD_DELETES
        and deleting.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    # Dropping a whole namespace (confirmed by its caller) is the one other removal of nodes:
    # its queries are run by the namespace drop's modules only, batch by batch.
    runners = {
        path.relative_to(package.parent).as_posix()
        for path in package.rglob("*.py")
        if re.search(r'query\("ns_drop(_locks)?"\)', path.read_text(encoding="utf-8"))
    }
    assert runners == {"graphmem/core/namespaces/drop.py", "graphmem/core/namespaces/plan.py"}
    unmaking = re.compile(r"\bREMOVE\s+\w+:(Fact|Episode)\b|\bSET\s+\w+\s*=\s*[{$]")
    unmade = [p.name for p in sources if unmaking.search(p.read_text(encoding="utf-8"))]
    assert sorted(unmade) == sorted(_TOMBSTONE_FILES)
    # The answers recorded for idempotent requests are internal lock nodes, and only those go.
    for name in _REQUEST_RECORD_DELETES:
        text = (Path(QUERY_DIR) / "requests" / name).read_text(encoding="utf-8")
        assert re.findall(r"\bMATCH\s+\((\w+):(\w+)\)", text) == [("r", "GraphmemLock")]
        assert re.findall(r"\bDELETE\s+(\w+)", text) == ["r"]
    # Undoing a consolidation run removes the relationships the run made, and only those.
    for name in _RELATIONSHIP_DELETES:
        text = (Path(QUERY_DIR) / "consolidate" / name).read_text(encoding="utf-8")
        assert not re.search(r"\bdetach\b", text, re.IGNORECASE)
        for variable in re.findall(r"\bDELETE\s+(\w+)", text):
            assert re.search(rf"-\[{variable}[\]:]", text), variable


#: The queries of dropping a whole namespace (nodes of one namespace, with their relationships).
_NAMESPACE_DROPS = frozenset({"ns_drop.cypher", "ns_drop_locks.cypher", "import_sweep.cypher"})

#: The queries that delete the answers recorded for idempotent write requests (lock nodes).
_REQUEST_RECORD_DELETES = frozenset({"request_prune.cypher", "request_forget.cypher"})

#: Files that delete relationships (never nodes): the undo of a consolidation run.
_RELATIONSHIP_DELETES = frozenset({"consolidate_undo.cypher"})


def test_the_two_clock_predicates_are_written_once_and_shared_with_the_analysts() -> None:
    # Invariants 2 and 3 live in one fragment each; runtime and analyst queries include them.
    fragments = load_fragments(FRAGMENT_DIR)
    assert fragments["believed_at"].args == ("node", "at")
    analyst = load_dir(ANALYST_DIR, fragments=fragments)
    assert "f.recorded_at <= t AND (f.retired_at IS NULL OR f.retired_at > t)" in (
        analyst["beliefs_as_of"].text
    )
    assert "(f.valid_from IS NULL OR f.valid_from <= v)" in analyst["true_at"].text
    handwritten = re.compile(r"\.retired_at IS NULL OR \w+\.retired_at >|\.valid_from <=")
    sources = [*ANALYST_DIR.glob("*.cypher"), *Path(QUERY_DIR).rglob("*.cypher")]
    owners = {p.name for p in sources if handwritten.search(p.read_text(encoding="utf-8"))}
    assert owners == {"believed_at.cypher"}  # true_at names its interval lo and hi


def test_a_fragment_argument_replaces_the_name_only_where_it_stands_alone() -> None:
    fragments = {"between": Fragment("(lo <= at AND at < node.lo_at)", ("lo", "at"))}
    q = parse_cypher(
        "// name: q\n// mode: read\n// params: x\nRETURN {{between(f.lo, $x)}}", fragments=fragments
    )
    assert q.text == "RETURN (f.lo <= $x AND $x < node.lo_at)"
    with pytest.raises(CypherFileError, match="takes 2 argument"):
        parse_cypher(
            "// name: q\n// mode: read\n// params:\nRETURN {{between(a)}}", fragments=fragments
        )
