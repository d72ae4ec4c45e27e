"""The guard's reading of plan expressions (pure logic on the texts Neo4j prints; the path
itself is tested against Neo4j in tests/integration/test_read_secrets.py), and that the
guarded read is the only way in for Cypher that graphmem did not write."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from graphmem.errors import QueryRefusedError
from graphmem.store.guard_secrets import check_secrets

PACKAGE = Path(__file__).resolve().parents[2] / "graphmem"


def _plan(*details: str, identifiers: tuple[str, ...] = ()) -> dict[str, Any]:
    """A plan of one operator per text, each the child of the one before."""
    plan: dict[str, Any] = {}
    for text in reversed(details):
        node: dict[str, Any] = {"operatorType": "Projection@neo4j", "args": {"Details": text}}
        node["identifiers"] = list(identifiers)
        node["children"] = [plan] if plan else []
        plan = node
    return plan


@pytest.mark.parametrize(
    "details",
    [
        ("times[$autoint_1] AS t0, times[$autoint_2] AS t1",),
        ("rows[i] AS row, rows[..i + $autoint_4] AS upto",
         "range($autoint_2, size(rows) - $autoint_3) AS i"),
        ("[x IN [coalesce(new.id, new.fact_id)] WHERE x IS NOT NULL] AS related",),
        ("collect(s.actor)[$autoint_0] AS actor",
         "coalesce(cache[new.id], cache[new.fact_id]) AS id"),
        ("`[x IN range(1,3) | x]`",),
        ("list[$n] AS v",),
        ("x IN [$autoint_0, $autoint_1] AS found", "CASE WHEN a THEN [$autoint_2] END AS l"),
        ("f.text AS text, e.content_hash AS hash",),
    ],
)  # fmt: skip
def test_what_reads_no_secret_passes(details: tuple[str, ...]) -> None:
    check_secrets(_plan(*details), {"n": 2})


@pytest.mark.parametrize(
    ("details", "named"),
    [
        (("n:GraphmemSchema",), "label GraphmemSchema"),
        (("RANGE INDEX k:GraphmemApiKey(id) WHERE id = $x",), "label GraphmemApiKey"),
        (("RANGE INDEX t:Tombstone(ns, text_hash) WHERE ns = $a",), "property text_hash"),
        (("cache[n.erasure_key]",), "property erasure_key"),
        (("n{erasure_key: n.erasure_key} AS n",), "property erasure_key"),
        (("n{.*} AS n",), "whole property map"),
        (("properties(n) AS p",), "whole property map"),
        (("n[$k] AS v",), "computed property access [$k]"),
        (("n[$autostring_0 + $autostring_1] AS v",), "computed property access"),
        (("n[k] AS v", "range($autoint_0, $autoint_1) AS k", "keys(n) AS k"), "computed property"),
        (("CASE WHEN $autobool_0 THEN n END[$k] AS v",), "computed property access"),
        (("any(k IN keys(n) WHERE n[k] STARTS WITH $autostring_0)",), "computed property"),
        (("reverse(then[k]) AS v", "keys(then) AS k"), "computed property access [k]"),
        (("By[k] AS v",), "computed property access [k]"),
    ],
)  # fmt: skip
def test_what_could_read_a_secret_is_refused(details: tuple[str, ...], named: str) -> None:
    with pytest.raises(QueryRefusedError, match=re.escape(named)):
        check_secrets(_plan(*details), {"k": "erasure_key"})


def test_a_variable_named_cache_is_refused() -> None:
    with pytest.raises(QueryRefusedError, match="variable name cache"):
        check_secrets(_plan("cache[f.text] AS v", identifiers=("cache", "f")), {})


def test_only_the_client_graph_runs_cypher_it_did_not_write() -> None:
    """The MCP server and the service offer no Cypher of their callers: the guarded read is
    reached only through Graph.read and Graph.execute (and the CLI on them)."""
    importers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"graphmem\.store(\.guard\b| import .*\bguard\b)", path.read_text())
    }
    assert importers - {"store/guard.py", "store/guard_secrets.py"} == {"client/graph.py"}
    for folder in ("mcp", "service", "remote"):
        for path in (PACKAGE / folder).rglob("*.py"):
            text = path.read_text()
            assert not re.search(r"\.graph\.(read|execute)\(", text), path
