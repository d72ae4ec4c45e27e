from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import graphmem
import graphmem.client as memory
from graphmem.store.cypher import FRAGMENT_DIR, load_dir, load_fragments


def test_clients_and_errors_are_importable_from_the_package() -> None:
    assert graphmem.Memory is memory.Memory
    assert graphmem.AsyncMemory is memory.AsyncMemory
    assert issubclass(graphmem.NotFoundError, graphmem.InvalidInputError)
    assert issubclass(graphmem.InvalidInputError, graphmem.GraphmemError)
    with pytest.raises(AttributeError, match="no attribute"):
        _ = graphmem.NoSuchThing


def test_every_public_name_is_importable_and_import_stays_light() -> None:
    probe = (
        "import sys, graphmem\n"
        "light = not {'torch', 'neo4j', 'numpy'} & set(sys.modules)\n"
        "names = [getattr(graphmem, n) for n in graphmem.__all__]\n"
        "from graphmem import RecallConfig, FactInput, ExtractedFact\n"
        "print(light, len(names), RecallConfig(fusion='linear').fusion)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.split() == ["True", str(len(graphmem.__all__)), "linear"]


def test_the_wheel_carries_the_files_graphmem_reads_outside_its_code(tmp_path: Path) -> None:
    # Built from this checkout, unpacked and imported from there, with no checkout beside it.
    root = Path(__file__).resolve().parents[2]
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path / "dist")],
        cwd=root,
        capture_output=True,
        check=True,
        timeout=300,
    )
    (wheel,) = (tmp_path / "dist").glob("graphmem-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
        names = archive.namelist()
    # The service alone: the benchmark and evaluation part is graphmem-bench's wheel.
    assert not [n for n in names if n.startswith(("graphmem_bench", "graphmem/bench"))]
    assert not [n for n in names if n.startswith("graphmem/evaluation")]
    assert "graphmem/testing/llm_stub.py" in names and "graphmem/cli/plugins.py" in names
    probe = (
        "import graphmem, graphmem.store.cypher as c, graphmem._files as f\n"
        "print(graphmem.__file__)\n"
        "print(sorted(c.analyst_queries()))\n"
        "print(len(c._package_queries()))\n"
        "print(f.bundled_resource('docker/compose.yaml', '_docker/compose.yaml'))\n"
        "print(f.bundled_resource('docker/local-neo4j', '_local_neo4j') / 'pom.xml')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    package, analyst, runtime, compose, pom = done.stdout.splitlines()
    assert package.startswith(str(site))
    assert analyst == str(sorted(load_dir(root / "cypher", fragments=load_fragments(FRAGMENT_DIR))))
    queries = root / "graphmem" / "store" / "queries"
    assert int(runtime) == len(
        [p for p in queries.rglob("*.cypher") if p.parent.name != "fragments"]
    )
    for path in (compose, pom):
        assert path.startswith(str(site)) and Path(path).is_file()


def test_every_exported_name_is_in_the_python_reference() -> None:
    """Each name `import graphmem` offers has an entry in docs/reference/python.md (the
    errors through the one for graphmem.errors)."""
    import graphmem.errors

    reference = (Path(__file__).parents[2] / "docs" / "reference" / "python.md").read_text()
    documented = set(re.findall(r"^::: graphmem\.(\w+)", reference, flags=re.MULTILINE))
    errors = {n for n in dir(graphmem.errors) if n.endswith("Error")}
    missing = [
        name
        for name in graphmem.__all__
        if name not in documented and name not in errors and not name.startswith("_")
    ]
    assert "errors" in documented and missing == []
