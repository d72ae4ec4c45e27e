"""Every adapter imports its framework only when it is itself imported, and without its extra
it raises an ImportError that names the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: Each adapter's module, the framework package it imports, and its extra.
ADAPTERS = [
    ("langgraph", "langgraph", "langgraph"),
    ("langchain", "langchain_core", "langchain"),
    ("llama_index", "llama_index", "llama-index"),
    ("openai_agents", "agents", "openai-agents"),
    ("adk", "google.adk", "google-adk"),
    ("crewai", "crewai", "crewai"),
]


@pytest.mark.parametrize(("module", "framework", "extra"), ADAPTERS)
def test_without_the_extra_the_import_names_it(module: str, framework: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{framework!r}] = None\n"
        "import graphmem, graphmem.integrations\n"
        "try:\n"
        f"    import graphmem.integrations.{module}\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"pip install '<graphmem checkout or wheel>[{extra}]'" in done.stdout


def test_importing_graphmem_imports_no_framework() -> None:
    frameworks = tuple(framework for _, framework, _ in ADAPTERS)
    code = (
        "import sys, graphmem, graphmem.integrations\n"
        f"print(sorted(m for m in {frameworks!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr
