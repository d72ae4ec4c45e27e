"""The package's shape: its public names, its command tree, its rooms and their sizes, and the
generated parts of the docs."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click

import graphmem
from graphmem.cli import main

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "graphmem"

PUBLIC_NAMES = [
    "AsyncMemory",
    "BadLinesError",
    "Beliefs",
    "ClientUsageError",
    "CommitUnknownError",
    "ConfigurationError",
    "ConsolidationBusyError",
    "ConsolidationResult",
    "ContextBlock",
    "DatabaseError",
    "Diff",
    "EmbedderMismatchError",
    "EmbeddingError",
    "Episode",
    "Explanation",
    "ExtractedFact",
    "ExtractionError",
    "Extractor",
    "Fact",
    "FactHistory",
    "FactInput",
    "ForgetResult",
    "ForgetVerification",
    "ForgottenContentError",
    "ForgottenError",
    "GraphmemError",
    "GraphmemSettings",
    "HeuristicProposer",
    "Hit",
    "IngestResult",
    "InvalidInputError",
    "LLMError",
    "Memory",
    "Message",
    "MessageConflictError",
    "NamespaceStats",
    "Neo4jServerError",
    "Neo4jUnavailableError",
    "NotFoundError",
    "QueryMemoryError",
    "QueryRefusedError",
    "RecallConfig",
    "RecallResult",
    "ResultTooLargeError",
    "RetiredFactError",
    "ReviewFlag",
    "SchemaError",
    "Timeline",
    "TransactionTimeoutError",
    "TransientDatabaseError",
    "UndoRefusedError",
    "__version__",
    "load_settings",
]

_FILTERS = ["--as-of", "--include-retired", "--kind", "--min-score", "--no-references"]
_FILTERS += ["--since", "--tag", "--until", "--valid-at"]
_SERVER = ["--heap", "--json", "--pagecache", "--server"]

COMMAND_TREE = {
    "graphmem": ["--version"],
    "graphmem audit": [],
    "graphmem audit beliefs": ["--as-of", "--json", "--limit", "--ns", "--query"],
    "graphmem audit contradictions": ["--all", "--json", "--limit", "--ns"],
    "graphmem audit diff": ["--json", "--ns", "SINCE", "UNTIL"],
    "graphmem audit explain": ["--json", "--ns", "ID"],
    "graphmem audit timeline": ["--json", "--ns", "ID"],
    "graphmem audit truths": ["--as-of", "--json", "--limit", "--ns", "--query", "VALID_AT"],
    "graphmem bench": sorted(
        [
            *_SERVER,
            *("--batch-size", "--consolidation", "--fail-on-miss", "--out", "--peer"),
            *("--backend-texts", "--mcp", "--queries", "--runs", "--seed", "--startup"),
            *("--sizes", "--warmup", "--warmup-facts"),
        ]
    ),
    "graphmem config": ["--json"],
    "graphmem context": sorted([*_FILTERS, "--budget", "--json", "--ns", "--tz", "-k", "QUERY"]),
    "graphmem demo": [],
    "graphmem eval": [],
    "graphmem eval beam": sorted(
        [*_SERVER, "--chats", "--export", "--no-time-shift", "--only", "--out", "--variant", "PATH"]
    ),
    "graphmem eval run": sorted(
        [
            *_SERVER,
            "--conversations",
            "--no-time-shift",
            "--only",
            "--out",
            "--questions",
            "--set",
            "--variant",
        ]
    ),
    "graphmem eval suite": sorted(
        [*_SERVER, "--no-time-shift", "--only", "--out", "--variant", "DATA"]
    ),
    "graphmem consolidate": ["--dry-run", "--every", "--force", "--json", "--ns", "--watch"],
    "graphmem consolidate runs": ["--json", "--limit", "--ns"],
    "graphmem consolidate undo": ["--json", "--ns", "RUN_ID"],
    "graphmem contradict": ["--json", "--ns", "--reason", "A", "B"],
    "graphmem cypher": [],
    "graphmem cypher list": ["--json"],
    "graphmem cypher run": sorted(
        [
            *("--csv", "--json", "--jsonl", "--limit", "--ns", "--param", "--query"),
            *("--raw-csv", "--timeout", "-p", "-q", "TARGET"),
        ]
    ),
    "graphmem cypher show": ["TARGET"],
    "graphmem forget": sorted(
        [
            *("--actor", "--all", "--batch-size", "--dry-run", "--json", "--ns", "--reason"),
            *("--physical", "--session", "--source", "--text", "--verify", "IDS"),
        ]
    ),
    "graphmem get": ["--json", "--ns", "ID"],
    "graphmem history": ["--json", "--ns", "ID"],
    "graphmem mcp": [
        "--allow-host",
        "--allow-namespace",
        "--allow-origin",
        "--full-ids",
        "--host",
        "--max-result-chars",
        "--namespace",
        "--port",
        "--read-only",
        "--tools",
        "--transport",
    ],
    "graphmem ingest": sorted(
        [
            *("--allow-forgotten", "--batch-size", "--extract", "--json", "--ns"),
            *("--session-id", "--skip-bad", "FILE"),
        ]
    ),
    "graphmem init": ["--check", "--json"],
    "graphmem neo4j": [],
    "graphmem neo4j start": ["--json", "--remove-unknown-users"],
    "graphmem neo4j status": ["--json"],
    "graphmem neo4j stop": ["--json"],
    "graphmem pin": ["--json", "--ns", "--unpin", "ID"],
    "graphmem recall": sorted([*_FILTERS, "--fusion", "--json", "--ns", "-k", "QUERY"]),
    "graphmem reembed": ["--again", "--batch-size", "--json", "--yes"],
    "graphmem remember": sorted(
        [
            *("--allow-forgotten", "--contradicts", "--json", "--metadata", "--ns"),
            *("--pinned", "--reason"),
            "--references",
            *("--source", "--supersedes", "--tag", "--valid-from", "--valid-to", "TEXT"),
        ]
    ),
    "graphmem resolve": ["--json", "--keep", "--ns", "--reason", "A", "B"],
    "graphmem retract": ["--json", "--ns", "--reason", "ID"],
    "graphmem review": ["--all", "--fact", "--json", "--limit", "--ns"],
    "graphmem review confirm": ["--json", "--ns", "--reason", "ID"],
    "graphmem stats": ["--json", "--ns"],
}

#: The rooms that make up the memory service itself; the benchmark and evaluation code is
#: built on them and never the other way round.
SERVICE_ROOMS = (
    "client",
    "core",
    "store",
    "servers",
    "embed",
    "models",
    "settings",
    "llm",
    "mcp",
)
MEASURING_ROOMS = ("graphmem.bench", "graphmem.evaluation")


def test_the_public_names_stay_as_they_are() -> None:
    assert sorted(graphmem.__all__) == PUBLIC_NAMES
    for name in PUBLIC_NAMES:
        assert getattr(graphmem, name) is not None


def _tree(command: click.Command, path: str) -> dict[str, list[str]]:
    names = []
    for param in command.params:
        if isinstance(param, click.Option):
            names += [*param.opts, *param.secondary_opts]
        else:
            names.append((param.name or "").upper())
    tree = {path: sorted(names)}
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            tree.update(_tree(sub, f"{path} {name}"))
    return tree


def test_the_command_tree_stays_as_it_is() -> None:
    assert _tree(main, "graphmem") == COMMAND_TREE


def _imports(path: Path, package: str) -> set[str]:
    """Every module ``path`` (a module of ``package``) imports, at module level or inside a
    function, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base]) if base else ".".join(parent)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith(MEASURING_ROOMS)  # importlib.import_module("...")
        ):
            found.add(node.value)
    return found


def test_the_service_rooms_never_import_the_benchmark_or_evaluation_code() -> None:
    offenders = {}
    checked = 0
    for room in SERVICE_ROOMS:
        for path in sorted((PACKAGE / room).rglob("*.py")):
            checked += 1
            package = ".".join(path.relative_to(ROOT).parts[:-1])
            bad = sorted(m for m in _imports(path, package) if m.startswith(MEASURING_ROOMS))
            if bad:
                offenders[str(path.relative_to(ROOT))] = bad
    assert checked > 40
    assert offenders == {}


def test_the_walk_sees_an_import_of_the_benchmark(tmp_path: Path) -> None:
    # The check above could pass by seeing nothing: it must see each form of import.
    module = tmp_path / "probe.py"
    forms = [
        "from graphmem.bench import runner",
        "from ...bench import runner",
        "import graphmem.evaluation.runner",
        "def f():\n    from graphmem.bench.report import BenchReport",
        "importlib.import_module('graphmem.evaluation.metrics')",
    ]
    for form in forms:
        module.write_text(form + "\n", encoding="utf-8")
        found = _imports(module, "graphmem.core.recall")
        assert any(m.startswith(MEASURING_ROOMS) for m in found), form


def test_no_module_is_over_500_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 60
    assert {path: n for path, n in sizes.items() if n > 500} == {}


def test_the_readme_is_a_short_front_door() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    assert lines[0] == "# graphmem"
    head = "\n".join(lines[:12])
    assert "make demo" in head and "make test" in head


def test_the_generated_docs_match_the_code() -> None:
    # The CLI reference is the commands' help, the settings table the settings classes, the
    # layout the rooms' docstrings: `python tools/docs.py` writes them, --check compares.
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "docs.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
