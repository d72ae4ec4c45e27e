"""The analyst library in cypher/: big enough, every parameter typed, every file documented."""

from __future__ import annotations

import re
from pathlib import Path

from graphmem.store.cypher import FRAGMENT_DIR, PARAM_TYPES, load_dir, load_fragments

ANALYST_DIR = Path(__file__).resolve().parents[2] / "cypher"
README = ANALYST_DIR / "README.md"


def test_the_library_answers_at_least_twelve_questions() -> None:
    queries = load_dir(ANALYST_DIR, fragments=load_fragments(FRAGMENT_DIR))
    assert len(queries) >= 12
    # Other code runs these by name.
    assert {
        "beliefs_as_of",
        "true_at",
        "changes_between",
        "fact_history",
        "open_contradictions",
    } <= set(queries)


def test_every_parameter_of_every_library_file_is_typed() -> None:
    for query in load_dir(ANALYST_DIR, fragments=load_fragments(FRAGMENT_DIR)).values():
        assert set(query.param_types) == set(query.params), query.name
        assert set(query.param_types.values()) <= set(PARAM_TYPES), query.name
        assert query.param_types["ns"] == "string", query.name
        assert query.returns, f"{query.name} does not say what it returns"
        assert query.description, f"{query.name} has no description"


def test_every_library_file_is_listed_in_the_readme_with_its_parameters() -> None:
    text = README.read_text(encoding="utf-8")
    rows = {
        m.group(1): m.group(0)
        for m in re.finditer(r"^\|\s*`(\w+)\.cypher`.*$", text, flags=re.MULTILINE)
    }
    queries = load_dir(ANALYST_DIR, fragments=load_fragments(FRAGMENT_DIR))
    assert set(rows) == set(queries)
    for name, query in queries.items():
        for param in query.params:
            assert f"`{param}`" in rows[name], f"README's row for {name} lacks {param}"


def test_library_queries_are_read_only_text() -> None:
    # The planner check of the guarded read path is the real guard; this catches the obvious.
    writes = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DETACH|FOREACH|LOAD\s+CSV)\b", re.I)
    for path in ANALYST_DIR.glob("*.cypher"):
        body = "\n".join(
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if not line.lstrip().startswith("//")
        )
        assert not writes.search(body), path.name
