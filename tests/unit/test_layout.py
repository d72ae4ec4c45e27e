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
#: The benchmark and evaluation part: installed apart, held to the same house rules.
BENCH = ROOT / "tools" / "graphmem-bench" / "graphmem_bench"


def house_modules() -> list[Path]:
    """Every module the house rules read: the package's and the benchmark part's."""
    return [*sorted(PACKAGE.rglob("*.py")), *sorted(BENCH.rglob("*.py"))]


PUBLIC_NAMES = [
    "AsyncMemory",
    "AsyncRemoteMemory",
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
    "DropResult",
    "EmbedderMismatchError",
    "EmbeddingError",
    "Episode",
    "Explanation",
    "ExportFormatError",
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
    "ImportResult",
    "IngestResult",
    "InvalidInputError",
    "LLMError",
    "Memory",
    "Message",
    "MessageConflictError",
    "NamespaceNotEmptyError",
    "NamespaceStats",
    "NamespaceSummary",
    "Neo4jServerError",
    "Neo4jUnavailableError",
    "NotFoundError",
    "QueryMemoryError",
    "QueryRefusedError",
    "RecallConfig",
    "RecallResult",
    "RemoteMemory",
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


COMMAND_TREE = {
    "graphmem": ["--version"],
    "graphmem audit": [],
    "graphmem audit beliefs": [
        "--as-of",
        "--csv",
        "--json",
        "--limit",
        "--namespace",
        "--ns",
        "--query",
    ],
    "graphmem audit contradictions": ["--all", "--csv", "--json", "--limit", "--namespace", "--ns"],
    "graphmem audit diff": ["--csv", "--json", "--namespace", "--ns", "SINCE", "UNTIL"],
    "graphmem audit explain": ["--csv", "--json", "--namespace", "--ns", "ID"],
    "graphmem audit timeline": ["--csv", "--json", "--namespace", "--ns", "ID"],
    "graphmem audit truths": [
        "--as-of",
        "--csv",
        "--json",
        "--limit",
        "--namespace",
        "--ns",
        "--query",
        "VALID_AT",
    ],
    "graphmem bench": [
        "--backend-texts",
        "--batch-size",
        "--clients",
        "--consolidation",
        "--duration",
        "--fail-on-miss",
        "--heap",
        "--json",
        "--large",
        "--mcp",
        "--neo4j",
        "--observe-cost",
        "--out",
        "--pagecache",
        "--peer",
        "--pool",
        "--queries",
        "--runs",
        "--seed",
        "--serve",
        "--server",
        "--servers",
        "--sizes",
        "--small",
        "--startup",
        "--tenants",
        "--warmup",
        "--warmup-facts",
    ],
    "graphmem bench consolidation": [
        "--batch-size",
        "--facts",
        "--fail-on-miss",
        "--heap",
        "--json",
        "--out",
        "--pagecache",
        "--seed",
        "--server",
    ],
    "graphmem bench mcp": [
        "--batch-size",
        "--facts",
        "--heap",
        "--json",
        "--out",
        "--pagecache",
        "--queries",
        "--seed",
        "--server",
        "--warmup",
    ],
    "graphmem bench peer": [
        "--batch-size",
        "--fail-on-miss",
        "--heap",
        "--json",
        "--out",
        "--pagecache",
        "--queries",
        "--seed",
        "--server",
        "--sizes",
        "--warmup",
        "--warmup-facts",
        "SYSTEM",
    ],
    "graphmem bench serve": [
        "--clients",
        "--duration",
        "--heap",
        "--json",
        "--observe-cost",
        "--out",
        "--pagecache",
        "--seed",
        "--server",
        "--servers",
    ],
    "graphmem bench speed": [
        "--backend-texts",
        "--batch-size",
        "--fail-on-miss",
        "--heap",
        "--json",
        "--out",
        "--pagecache",
        "--queries",
        "--seed",
        "--server",
        "--sizes",
        "--warmup",
        "--warmup-facts",
    ],
    "graphmem bench startup": [
        "--fail-on-miss",
        "--heap",
        "--json",
        "--out",
        "--pagecache",
        "--runs",
        "--server",
    ],
    "graphmem bench tenants": [
        "--batch-size",
        "--fail-on-miss",
        "--heap",
        "--json",
        "--large",
        "--neo4j",
        "--out",
        "--pagecache",
        "--pool",
        "--queries",
        "--seed",
        "--server",
        "--small",
        "--warmup",
        "SHAPE",
    ],
    "graphmem config": ["--csv", "--json"],
    "graphmem consolidate": [
        "--csv",
        "--dry-run",
        "--every",
        "--force",
        "--json",
        "--namespace",
        "--no-summaries",
        "--no-tiers",
        "--ns",
        "--summaries",
        "--tiers",
        "--watch",
    ],
    "graphmem consolidate runs": ["--csv", "--json", "--limit", "--namespace", "--ns"],
    "graphmem consolidate undo": ["--csv", "--json", "--namespace", "--ns", "RUN_ID"],
    "graphmem context": [
        "--as-of",
        "--budget",
        "--csv",
        "--full-ids",
        "--include-cold",
        "--include-retired",
        "--json",
        "--kind",
        "--min-score",
        "--namespace",
        "--no-references",
        "--ns",
        "--since",
        "--speaker",
        "--tag",
        "--tz",
        "--until",
        "--valid-at",
        "-k",
        "QUERY",
    ],
    "graphmem contradict": ["--csv", "--json", "--namespace", "--ns", "--reason", "A", "B"],
    "graphmem cypher": [],
    "graphmem cypher list": ["--json"],
    "graphmem cypher run": [
        "--csv",
        "--json",
        "--jsonl",
        "--limit",
        "--namespace",
        "--ns",
        "--param",
        "--query",
        "--raw-csv",
        "--timeout",
        "-p",
        "-q",
        "TARGET",
    ],
    "graphmem cypher show": ["TARGET"],
    "graphmem demo": ["--keep", "--namespace", "--ns"],
    "graphmem eval": [],
    "graphmem eval beam": [
        "--chats",
        "--export",
        "--heap",
        "--json",
        "--no-time-shift",
        "--only",
        "--out",
        "--pagecache",
        "--server",
        "--variant",
        "PATH",
    ],
    "graphmem eval context": [
        "--budget",
        "--conversations",
        "--heap",
        "--json",
        "--out",
        "--pagecache",
        "--questions",
        "--server",
        "--sets",
        "DATA",
    ],
    "graphmem eval fit": ["--configuration", "--dry-run", "--write", "RESULTS"],
    "graphmem eval run": [
        "--conversations",
        "--heap",
        "--json",
        "--no-time-shift",
        "--only",
        "--out",
        "--pagecache",
        "--questions",
        "--server",
        "--set",
        "--variant",
    ],
    "graphmem eval suite": [
        "--heap",
        "--json",
        "--no-time-shift",
        "--only",
        "--out",
        "--pagecache",
        "--server",
        "--variant",
        "DATA",
    ],
    "graphmem forget": [
        "--actor",
        "--all",
        "--batch-size",
        "--csv",
        "--dry-run",
        "--json",
        "--namespace",
        "--ns",
        "--physical",
        "--reason",
        "--session",
        "--source",
        "--text",
        "--verify",
        "--yes",
        "IDS",
    ],
    "graphmem get": ["--csv", "--json", "--namespace", "--ns", "ID"],
    "graphmem history": ["--csv", "--json", "--namespace", "--ns", "ID"],
    "graphmem export": ["--json", "--namespace", "--ns", "--output", "--page-size", "-o"],
    "graphmem import": ["--batch-size", "--csv", "--json", "--namespace", "--ns", "FILE"],
    "graphmem ingest": [
        "--allow-forgotten",
        "--batch-size",
        "--csv",
        "--extract",
        "--json",
        "--namespace",
        "--ns",
        "--session-id",
        "--skip-bad",
        "FILE",
    ],
    "graphmem init": ["--check", "--csv", "--json"],
    "graphmem keys": [],
    "graphmem keys create": ["--csv", "--expires", "--json", "--ns", "--prefix", "--role", "NAME"],
    "graphmem keys list": ["--all", "--csv", "--json"],
    "graphmem keys resign": ["--csv", "--json", "--unsigned"],
    "graphmem keys revoke": ["--csv", "--json", "NAME"],
    "graphmem mcp": [
        "--allow-host",
        "--allow-namespace",
        "--allow-origin",
        "--full-ids",
        "--host",
        "--max-result-chars",
        "--namespace",
        "--no-auth",
        "--ns",
        "--port",
        "--read-only",
        "--tools",
        "--transport",
    ],
    "graphmem namespaces": ["--csv", "--json"],
    "graphmem namespaces drop": [
        "--batch-size",
        "--csv",
        "--dry-run",
        "--json",
        "--yes",
        "NAMESPACE",
    ],
    "graphmem neo4j": [],
    "graphmem neo4j start": ["--csv", "--json", "--remove-unknown-users"],
    "graphmem neo4j status": ["--csv", "--json"],
    "graphmem neo4j stop": ["--csv", "--json"],
    "graphmem pin": ["--csv", "--json", "--namespace", "--ns", "--unpin", "ID"],
    "graphmem recall": [
        "--as-of",
        "--csv",
        "--fusion",
        "--importance-weight",
        "--include-retired",
        "--json",
        "--kind",
        "--min-score",
        "--namespace",
        "--no-references",
        "--ns",
        "--since",
        "--speaker",
        "--tag",
        "--until",
        "--valid-at",
        "-k",
        "QUERY",
    ],
    "graphmem reembed": ["--again", "--batch-size", "--csv", "--json", "--yes"],
    "graphmem remember": [
        "--allow-forgotten",
        "--contradicts",
        "--csv",
        "--importance",
        "--json",
        "--metadata",
        "--namespace",
        "--ns",
        "--pinned",
        "--reason",
        "--references",
        "--source",
        "--supersedes",
        "--tag",
        "--valid-from",
        "--valid-to",
        "TEXT",
    ],
    "graphmem resolve": ["--csv", "--json", "--keep", "--namespace", "--ns", "--reason", "A", "B"],
    "graphmem retract": ["--csv", "--json", "--namespace", "--ns", "--reason", "ID"],
    "graphmem review": ["--all", "--csv", "--fact", "--json", "--limit", "--namespace", "--ns"],
    "graphmem review confirm": ["--csv", "--json", "--namespace", "--ns", "--reason", "ID"],
    "graphmem serve": [
        "--allow-host",
        "--allow-origin",
        "--graceful",
        "--host",
        "--key-cache",
        "--log-format",
        "--log-level",
        "--max-body-mb",
        "--max-import-mb",
        "--metrics",
        "--port",
        "--timeout",
        "--tools",
    ],
    "graphmem stats": ["--csv", "--json", "--namespace", "--ns"],
}

#: The benchmark and evaluation part (tools/graphmem-bench): built on the service, which never
#: imports it (its commands join the CLI through the plugin entry point).
MEASURING_ROOMS = ("graphmem_bench",)


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
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
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


def test_the_service_never_imports_the_benchmark_or_evaluation_code() -> None:
    offenders = {}
    checked = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        checked += 1
        package = ".".join(path.relative_to(ROOT).parts[:-1])
        bad = sorted(m for m in _imports(path, package) if m.startswith(MEASURING_ROOMS))
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert checked > 100
    assert offenders == {}
    assert not (PACKAGE / "bench").exists() and not (PACKAGE / "evaluation").exists()


def test_the_walk_sees_an_import_of_the_benchmark(tmp_path: Path) -> None:
    # The check above could pass by seeing nothing: it must see each form of import.
    module = tmp_path / "probe.py"
    forms = [
        "from graphmem_bench.bench import runner",
        "import graphmem_bench.evaluation.runner",
        "def f():\n    from graphmem_bench.bench.report import BenchReport",
        "importlib.import_module('graphmem_bench.evaluation.metrics')",
    ]
    for form in forms:
        module.write_text(form + "\n", encoding="utf-8")
        found = _imports(module, "graphmem.core.recall")
        assert any(m.startswith(MEASURING_ROOMS) for m in found), form


def test_no_module_is_over_500_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in house_modules()
    }
    assert len(sizes) > 60 and any(path.startswith("tools/graphmem-bench") for path in sizes)
    assert {path: n for path, n in sizes.items() if n > 500} == {}


def test_no_function_is_longer_than_80_lines() -> None:
    # From the def line to the last, docstring included (decorators not counted).
    long = []
    checked = 0
    for path in house_modules():
        name = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                checked += 1
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > 80:
                    long.append(f"{name}:{node.lineno} {node.name} ({lines} lines)")
    assert checked > 500
    assert long == []


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
