"""The CrewAI adapter: ``crewai.Memory`` saving, searching, updating and deleting through
:class:`GraphmemStorage` (no network, no LLM: the records are given their scope, categories and
importance, so CrewAI's analysis model is never called), and the guide's example.

CrewAI pins mcp<2, openai<3 and pydantic<2.13, which graphmem's other extras cannot share, so
this module runs from the virtualenv that ``make test`` builds for it (``.venv-crewai``): in the
main one it is skipped, and test_crewai_venv.py runs it there on the session's Neo4j."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

for _name, _value in {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
    "ANONYMIZED_TELEMETRY": "false",
}.items():
    os.environ.setdefault(_name, _value)

crewai = pytest.importorskip(
    "crewai", reason="CrewAI runs from its own virtualenv: make test runs this module there"
)

from graphmem.client import AsyncMemory, Memory  # noqa: E402
from graphmem.client.graph import Graph  # noqa: E402
from graphmem.errors import ClientUsageError, InvalidInputError  # noqa: E402
from graphmem.integrations.crewai import ACTOR, GraphmemStorage  # noqa: E402
from graphmem.models import Fact  # noqa: E402
from graphmem.settings import GraphmemSettings  # noqa: E402
from tests.helpers import cli_env  # noqa: E402

#: crewai.Memory (the main virtualenv, where mypy runs, has no CrewAI to type it with).
CrewMemory = Any
GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guides" / "integrations" / "crewai.md"


@pytest.fixture
def storage(admin: Memory) -> GraphmemStorage:
    """A storage whose namespaces are this test's own (a prefix of its own)."""
    return GraphmemStorage(admin, prefix=f"crew-{uuid.uuid4().hex[:10]}")


@pytest.fixture
def crew_memory(storage: GraphmemStorage) -> Iterator[CrewMemory]:
    memory = crewai.Memory(storage=storage, embedder=storage.embedder)
    yield memory
    memory.close()


def remember(crew_memory: CrewMemory, text: str, scope: str, *tags: str) -> object:
    return crew_memory.remember(text, scope=scope, categories=list(tags), importance=0.7)


def test_crewai_memory_saves_and_searches_through_graphmem(
    crew_memory: CrewMemory, storage: GraphmemStorage, admin: Memory
) -> None:
    alpha = remember(
        crew_memory, "Project Alpha ships on the 3rd of March.", "/project/alpha", "dates"
    )
    remember(crew_memory, "Project Beta's budget is 40,000 euros.", "/project/beta", "budget")
    remember(crew_memory, "The team meets every Monday at nine.", "/", "meetings")

    ns = storage.namespace("/project/alpha")
    fact = admin.get(alpha.id.rpartition("/")[2], ns=ns)  # type: ignore[attr-defined]
    assert isinstance(fact, Fact)
    assert (fact.text, fact.tags, fact.importance) == (
        "Project Alpha ships on the 3rd of March.",
        ("dates",),
        0.7,
    )
    assert admin.history(fact.id, ns=ns).facts[0].source == ACTOR

    found = crew_memory.recall("When does Project Alpha ship?", depth="shallow", limit=3)
    assert found[0].record.content == "Project Alpha ships on the 3rd of March."
    assert found[0].record.scope == "/project/alpha"
    scoped = crew_memory.recall("budget", scope="/project/beta", depth="shallow")
    assert [m.record.content for m in scoped] == ["Project Beta's budget is 40,000 euros."]

    assert crew_memory.list_scopes("/") == ["/project"]
    assert crew_memory.list_scopes("/project") == ["/project/alpha", "/project/beta"]
    assert storage.count() == 3 and storage.count("/project") == 2
    assert crew_memory.list_categories("/project") == {"dates": 1, "budget": 1}
    info = crew_memory.info("/project")
    assert (info.record_count, info.child_scopes) == (2, ["/project/alpha", "/project/beta"])
    newest = crew_memory.list_records()
    assert newest[0].content == "The team meets every Monday at nine."


def test_an_update_supersedes_and_a_forget_retracts(
    crew_memory: CrewMemory, storage: GraphmemStorage, admin: Memory
) -> None:
    first = remember(crew_memory, "The client's contact is Ana Silva.", "/clients", "contacts")
    updated = crew_memory.update(first.id, content="The client's contact is Rui Costa.")  # type: ignore[attr-defined]
    assert updated.id != first.id  # type: ignore[attr-defined]

    ns = storage.namespace("/clients")
    new_id = updated.id.rpartition("/")[2]
    (edge,) = admin.history(new_id, ns=ns).edges
    assert edge.actor == ACTOR and edge.older_id == first.id.rpartition("/")[2]  # type: ignore[attr-defined]
    # the earlier id now reads as its latest version
    latest = storage.get_record(first.id)  # type: ignore[attr-defined]
    assert latest is not None and latest.content == "The client's contact is Rui Costa."
    hits = crew_memory.recall("Who is the client's contact?", depth="shallow")
    assert [m.record.content for m in hits] == ["The client's contact is Rui Costa."]

    assert crew_memory.forget(record_ids=[updated.id]) == 1
    assert storage.count("/clients") == 0
    retracted = admin.get(new_id, ns=ns)
    assert isinstance(retracted, Fact) and retracted.status == "retracted"  # audits keep it


def test_bad_scopes_and_clients_are_refused(storage: GraphmemStorage, graph: Graph) -> None:
    with pytest.raises(InvalidInputError, match="segment 'a b'"):
        storage.namespace("/team/a b")
    with pytest.raises(ClientUsageError, match="async client"):
        GraphmemStorage(AsyncMemory())  # type: ignore[arg-type]
    with pytest.raises(ClientUsageError, match="embedder"):
        storage.search([0.5] * 64)


def test_the_guide_runs(
    graph: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, test_settings: GraphmemSettings
) -> None:
    from tests.integration.test_docs_examples import blocks

    for name, value in cli_env(graph).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    codes = blocks(GUIDE, "python")
    assert codes
    for n, code in enumerate(codes, 1):
        exec(compile(code, f"{GUIDE.name} (python block {n})", "exec"), namespace)
