"""The house rules the package keeps: the core is I/O-free, no module reaches into another's
private names, and every error graphmem raises belongs to one tree."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import graphmem
from graphmem.errors import GraphmemError
from tests.unit.test_layout import BENCH, PACKAGE, ROOT, _imports, house_modules

#: What the core's plans leave to the clients that drive them: the database driver, threads
#: and processes, the event loop, and the command line.
IO_MODULES = ("neo4j", "threading", "_thread", "concurrent", "asyncio", "multiprocessing", "click")


def _module_name(path: Path) -> str:
    home = BENCH.parent if path.is_relative_to(BENCH) else ROOT
    parts = path.relative_to(home).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_core_does_no_io_of_its_own() -> None:
    offenders = {}
    checked = 0
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        checked += 1
        package = ".".join(path.relative_to(ROOT).parts[:-1])
        found = _imports(path, package)
        bad = sorted(m for m in found if m.split(".")[0] in IO_MODULES)
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert checked > 30
    assert offenders == {}


def _private_imports(path: Path, module: str) -> list[str]:
    """``module.name`` for each private name (``_x``, not ``__x__``) that ``path`` (the
    module ``module``) imports from another graphmem module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = node.module or ""
        if node.level:
            parent = package.split(".")[: len(package.split(".")) - node.level + 1]
            source = ".".join([*parent, source]) if source else ".".join(parent)
        if not source.startswith("graphmem") or source == module:
            continue
        found += [
            f"{source}.{alias.name}"
            for alias in node.names
            if alias.name.startswith("_") and not alias.name.startswith("__")
        ]
    return found


def test_no_module_imports_another_modules_private_names(tmp_path: Path) -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in house_modules()
        if (found := _private_imports(path, _module_name(path)))
    }
    assert offenders == {}
    assert _module_name(BENCH / "bench" / "runner.py") == "graphmem_bench.bench.runner"
    # The walk sees both forms (a private module's public names are fine).
    probe = tmp_path / "probe.py"
    text = "from graphmem.store.db import _memory_error\nfrom .plans import _x\n"
    probe.write_text(text + "from graphmem._text import brief\n", encoding="utf-8")
    found = _private_imports(probe, "graphmem.core.probe")
    assert found == ["graphmem.store.db._memory_error", "graphmem.core.plans._x"]


def test_every_error_graphmem_defines_belongs_to_its_tree() -> None:
    """Every exception class graphmem defines derives from GraphmemError, except the private
    ones a module raises and catches itself to steer a transaction (a rollback on purpose, a
    query not to retry), which never leave it."""
    outside = []
    seen = 0
    without_extra = []
    for info in pkgutil.walk_packages(graphmem.__path__, "graphmem."):
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:
            # an adapter whose framework this virtualenv lacks (CrewAI has one of its own)
            if not info.name.startswith("graphmem.integrations.") or "pip install" not in str(exc):
                raise
            without_extra.append(info.name)
            continue
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                seen += 1
                if not issubclass(value, GraphmemError) and not name.startswith("_"):
                    outside.append(f"{info.name}.{name}")
    assert seen > 30
    assert outside == []
    assert without_extra == [] or without_extra == ["graphmem.integrations.crewai"]


#: The modules of graphmem the benchmark part may import: the public API, the models, the
#: testing front door and the plugin helpers of the command line.
BENCH_FRONT_DOOR = ("graphmem", "graphmem.models", "graphmem.testing", "graphmem.cli.plugins")


def _graphmem_imports(path: Path, module: str) -> set[str]:
    """The graphmem modules ``path`` imports (``from X import y`` counts as X), and every
    private name it imports from one as ``X._y``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*parent, source]) if source else ".".join(parent)
            found.add(source)
            found.update(
                f"{source}.{alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            )
    return {name for name in found if name == "graphmem" or name.startswith("graphmem.")}


def _outside_the_front_door(name: str) -> bool:
    parts = name.split(".")
    private = any(part.startswith("_") and not part.startswith("__") for part in parts)
    public = any(name == door or name.startswith(f"{door}.") for door in BENCH_FRONT_DOOR[1:])
    return private or not (name == "graphmem" or public)


def test_the_benchmark_part_uses_graphmem_through_its_front_door(tmp_path: Path) -> None:
    offenders = {}
    checked = 0
    for path in sorted(BENCH.rglob("*.py")):
        checked += 1
        found = _graphmem_imports(path, _module_name(path))
        bad = sorted(name for name in found if _outside_the_front_door(name))
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert checked > 30
    assert offenders == {}
    # The walk sees each way out: an internal module, a private one, a private name.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from graphmem.store import db\nimport graphmem._json\n"
        "def f():\n    from graphmem.testing import _LAZY\n"
        "from graphmem import Memory, __version__\nfrom graphmem.models import Fact\n",
        encoding="utf-8",
    )
    found = _graphmem_imports(probe, "graphmem_bench.probe")
    assert sorted(name for name in found if _outside_the_front_door(name)) == [
        "graphmem._json",
        "graphmem.store",
        "graphmem.testing._LAZY",
    ]
