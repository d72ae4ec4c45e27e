"""graphmem without PyTorch: a process in which torch, sentence-transformers and transformers
cannot be imported remembers and recalls through the default (ONNX) embedder, and the
commands that embed nothing or embed on ONNX never try to import them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from graphmem.client.graph import Graph
from tests.helpers import cli_env

#: Run first in the child: any import of torch, sentence-transformers or transformers raises
#: ImportError, as where they are not installed, and each attempt is written to stderr, so
#: that a caught attempt still shows; the other heavy packages the child imported are written
#: to stderr at exit as ``heavy: [...]``.
_BLOCK = textwrap.dedent(
    """
    import atexit
    import json
    import sys

    class _Blocker:
        blocked = ("torch", "sentence_transformers", "transformers")

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.blocked:
                sys.stderr.write(f"blocked import: {name}\\n")
                raise ImportError(f"{name} is blocked in this test")
            return None

    def _heavy():
        loaded = {m.split(".")[0] for m in sys.modules}
        heavy = sorted(loaded & {"onnxruntime", "onnx", "tokenizers", "neo4j", "mcp"})
        sys.stderr.write(f"heavy: {json.dumps(heavy)}\\n")

    sys.meta_path.insert(0, _Blocker())
    atexit.register(_heavy)
    """
)

_SCRIPT = _BLOCK + textwrap.dedent(
    """
    import json
    from graphmem import Memory

    with Memory(ns=sys.argv[1]) as memory:
        old = memory.remember("The user works at Google.")
        memory.remember("The user works at Microsoft.", supersedes=[old.id], reason="new job")
        texts = memory.recall("Where does the user work?", k=3).texts
    print(json.dumps({"texts": texts, "heavy": sorted(
        m for m in sys.modules if m.split(".")[0] in _Blocker.blocked)}))
    """
)


def _child(graph: Graph, ns: str, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **cli_env(graph, ns)}
    env.pop("GRAPHMEM_EMBEDDING_BACKEND", None)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_remember_and_recall_without_torch(graph: Graph, ns: str) -> None:
    done = _child(graph, ns, _SCRIPT, ns)
    assert done.returncode == 0, done.stderr
    assert "blocked import" not in done.stderr  # nothing even tried
    answer = json.loads(done.stdout)
    assert answer["texts"] == ["The user works at Microsoft."]
    assert answer["heavy"] == []


def _heavy(stderr: str) -> list[str]:
    line = next(line for line in stderr.splitlines() if line.startswith("heavy: "))
    return list(json.loads(line.removeprefix("heavy: ")))


def test_the_commands_import_nothing_heavy(graph: Graph, ns: str) -> None:
    command = _BLOCK + textwrap.dedent(
        """
        from graphmem.cli import main
        main(sys.argv[1:])
        """
    )
    expected = {
        # Neither the database driver nor an embedder for the help.
        ("--help",): [],
        # The ONNX embedder and its tokenizer, never torch.
        ("remember", "The user likes green tea.", "--ns", ns): [
            "neo4j",
            "onnxruntime",
            "tokenizers",
        ],
        ("recall", "what does the user drink", "--ns", ns, "--json"): [
            "neo4j",
            "onnxruntime",
            "tokenizers",
        ],
        # The driver, no embedder: stats embeds nothing.
        ("stats", "--ns", ns): ["neo4j"],
    }
    for args, heavy in expected.items():
        done = _child(graph, ns, command, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "blocked import" not in done.stderr, args
        assert _heavy(done.stderr) == heavy, args
        if args[0] == "recall":
            assert "green tea" in done.stdout
