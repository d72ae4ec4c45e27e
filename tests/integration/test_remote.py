"""The remote clients against a real `graphmem serve` on the test Neo4j: the issue's scenario
(remember, supersede, recall now and as of a time between the writes, history, forget, recall
again) gives the same results through Memory, RemoteMemory, AsyncRemoteMemory and plain HTTP;
the CLI talks to the server with no Neo4j settings; errors come back as the library's classes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.errors import (
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    ServiceError,
)
from graphmem.remote import AsyncRemoteMemory, RemoteMemory
from graphmem.settings import GraphmemSettings
from tests.helpers import free_port
from tests.service import Served, bearer, new_key

OLD = "The user works at Microsoft."
NEW = "The user works at Google."
QUERY = "where does the user work?"
WHY = "the user changed jobs"


@pytest.fixture(scope="module")
def local(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> Iterator[Memory]:
    """The library's client on the same graph (and the same embedder as the server)."""
    with Memory(test_settings, target=graph.target, embedder=embedder) as memory:
        yield memory


def _between(first: dict[str, Any], second: dict[str, Any]) -> datetime:
    """A transaction time after the first write and before the second."""
    start = datetime.fromisoformat(first["recorded_at"])
    end = datetime.fromisoformat(second["recorded_at"])
    assert start < end
    return start + (end - start) / 2


def _hits(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (hit["kind"], hit["text"], (hit["fact"] or {}).get("status"), hit["via"])
        for hit in result["hits"]
    ]


def _summary(steps: dict[str, Any]) -> dict[str, Any]:
    """What the scenario found, without ids and times (which differ by namespace)."""
    first, second, chain = steps["first"], steps["second"], steps["history"]
    assert chain["head_id"] == second["id"]
    assert [f["id"] for f in chain["facts"]] == [first["id"], second["id"]]
    erased = steps["forget"]
    return {
        "remembered": [(f["text"], f["status"]) for f in (first, second)],
        "now": _hits(steps["now"]),
        "as_of": _hits(steps["as_of"]),
        "history": [(f["text"], f["status"]) for f in chain["facts"]],
        "reasons": [e["reason"] for e in chain["edges"]],
        "forget": {k: len(erased[k]) for k in ("facts", "episodes", "derived", "already_forgotten")}
        | {"dry_run": erased["dry_run"], "selector": erased["selector"]},
        "after": _hits(steps["after"]),
    }


def _through_a_client(memory: Memory | RemoteMemory, ns: str) -> dict[str, Any]:
    first = memory.remember(OLD, ns=ns)
    second = memory.remember(NEW, ns=ns, supersedes=[first.id], reason=WHY)
    between = _between(first.model_dump(mode="json"), second.model_dump(mode="json"))
    steps = {
        "first": first,
        "second": second,
        "now": memory.recall(QUERY, ns=ns),
        "as_of": memory.recall(QUERY, ns=ns, as_of=between),
        "history": memory.history(second.id, ns=ns),
        "forget": memory.forget([first.id, second.id], reason="user request", ns=ns),
        "after": memory.recall(QUERY, ns=ns),
    }
    return {k: v.model_dump(mode="json") for k, v in steps.items()}


async def _through_the_async_client(memory: AsyncRemoteMemory, ns: str) -> dict[str, Any]:
    first = await memory.remember(OLD, ns=ns)
    second = await memory.remember(NEW, ns=ns, supersedes=[first.id], reason=WHY)
    between = _between(first.model_dump(mode="json"), second.model_dump(mode="json"))
    steps = {
        "first": first,
        "second": second,
        "now": await memory.recall(QUERY, ns=ns),
        "as_of": await memory.recall(QUERY, ns=ns, as_of=between),
        "history": await memory.history(second.id, ns=ns),
        "forget": await memory.forget([first.id, second.id], reason="user request", ns=ns),
        "after": await memory.recall(QUERY, ns=ns),
    }
    return {k: v.model_dump(mode="json") for k, v in steps.items()}


def _through_http(http: httpx.Client, ns: str) -> dict[str, Any]:
    def call(method: str, path: str, body: Any = None, status: int = 200) -> Any:
        answer = http.request(method, f"/v1/namespaces/{ns}{path}", json=body)
        assert answer.status_code == status, answer.text
        return answer.json()

    first = call("POST", "/facts", {"text": OLD}, 201)
    second = call("POST", "/facts", {"text": NEW, "supersedes": [first["id"]], "reason": WHY}, 201)
    between = _between(first, second).isoformat()
    return {
        "first": first,
        "second": second,
        "now": call("POST", "/search", {"query": QUERY}),
        "as_of": call("POST", "/search", {"query": QUERY, "as_of": between}),
        "history": call("GET", f"/facts/{second['id']}/history"),
        "forget": call(
            "POST",
            "/forget",
            {"ids": [first["id"], second["id"]], "reason": "user request", "confirm": True},
        ),
        "after": call("POST", "/search", {"query": QUERY}),
    }


def test_the_scenario_gives_the_same_results_through_every_client(
    served: Served, local: Memory
) -> None:
    names = {
        kind: f"remote-{kind}-{os.urandom(4).hex()}" for kind in ("lib", "sync", "async", "http")
    }
    keys = {kind: new_key(local, "write", namespaces=[ns]) for kind, ns in names.items()}
    found = {"lib": _through_a_client(local, names["lib"])}
    with RemoteMemory(served.url, keys["sync"].key) as remote:
        found["sync"] = _through_a_client(remote, names["sync"])

    async def run() -> dict[str, Any]:
        async with AsyncRemoteMemory(served.url, keys["async"].key) as remote:
            return await _through_the_async_client(remote, names["async"])

    found["async"] = asyncio.run(run())
    with httpx.Client(base_url=served.url, headers=bearer(keys["http"]), timeout=60) as http:
        found["http"] = _through_http(http, names["http"])

    summaries = {kind: _summary(steps) for kind, steps in found.items()}
    expected = summaries["lib"]
    assert expected["remembered"] == [(OLD, "active"), (NEW, "active")]
    assert expected["now"][0][:3] == ("fact", NEW, "active")
    assert expected["as_of"][0][:3] == ("fact", OLD, "active")
    assert expected["history"] == [(OLD, "superseded"), (NEW, "active")]
    assert expected["reasons"] == [WHY]
    assert expected["forget"]["facts"] == 2 and expected["forget"]["dry_run"] is False
    assert expected["after"] == []
    assert summaries == dict.fromkeys(summaries, expected)
    # Through the server, each change is the key's.
    for kind in ("sync", "async", "http"):
        (edge,) = found[kind]["history"]["edges"]
        assert edge["actor"] == keys[kind].api_key.name
    assert found["lib"]["history"]["edges"][0]["actor"] == "api"


def test_errors_come_back_as_the_librarys_classes(served: Served, local: Memory, ns: str) -> None:
    reader = new_key(local, "read", namespaces=[ns])
    with RemoteMemory(served.url, reader.key, ns=ns) as memory:
        with pytest.raises(NotFoundError) as missing:
            memory.get("00000000-no-such-id")
        assert "00000000-no-such-id" in str(missing.value)
        with pytest.raises(PermissionDeniedError, match="does not open namespace"):
            memory.stats(ns=f"{ns}-other")
        with pytest.raises(PermissionDeniedError, match="role 'read'"):
            memory.remember("A reader cannot write.")
    with (
        RemoteMemory(served.url, "gmk_000000000000_not-a-key", ns=ns) as stranger,
        pytest.raises(AuthenticationError),
    ):
        stranger.stats()
    with (
        RemoteMemory(f"http://127.0.0.1:{free_port()}", reader.key, ns=ns) as nowhere,
        pytest.raises(ServiceError, match="could not be reached"),
    ):
        nowhere.stats()


def test_the_other_flows_answer_with_the_librarys_models(
    served: Served, local: Memory, ns: str
) -> None:
    admin = new_key(local, "admin", namespaces=[ns, f"{ns}-copy"])
    with RemoteMemory(served.url, admin.key, ns=ns).connect() as memory:
        a, b = memory.remember_many(["The office is in Lisbon.", "The office is in Porto."])
        memory.ingest(["I moved to Porto last week."], session_id="chat-1")
        assert memory.pin(a.id).pinned
        assert len(memory.contradict(a.id, b.id, reason="two offices?")) == 2
        assert len(memory.audit.contradictions()) == 1
        kept, gone = memory.resolve(a.id, b.id, keep=b.id, reason="it moved")
        assert (kept.id, gone.status) == (b.id, "superseded")
        block = memory.context("where is the office?", budget_tokens=200)
        assert b.id in block.fact_ids
        tight = memory.context("where is the office?", budget_tokens=20)
        assert not tight.text and tight.warning and "too small for one line" in tight.warning
        assert block.warning is None
        then = memory.recall("where is the office?", as_of="2020-01-01T00:00:00Z")
        assert not then.hits and then.hint is not None and "valid_at=" in then.hint
        assert memory.audit.explain(a.id).fact_id == a.id
        assert memory.audit.timeline(a.id).events
        assert memory.audit.beliefs(query="office").facts
        assert memory.audit.diff("1 hour ago").believed
        assert memory.stats().facts == 2 and memory.stats().episodes == 1
        assert memory.review() == [] and memory.confirm(b.id) == []
        assert memory.consolidate(dry_run=True).status in ("dry_run", "skipped")
        assert memory.consolidation_runs(ids=["no-such-run"]) == []
        assert memory.retract(b.id, reason="never true").status == "retracted"
        preview = memory.forget(session="chat-1", reason="user request", dry_run=True)
        assert preview.dry_run and len(preview.episodes) == 1
        erased = memory.forget(session="chat-1", reason="user request")
        assert memory.verify_forgotten(erased.erasure).clean
        assert {n.ns for n in memory.namespaces()} == {ns}
        records = list(memory.export())
        assert records[0]["record"] == "header" and records[-1]["record"] == "end"
        copied = memory.import_(records, ns=f"{ns}-copy")
        assert copied.source_ns == ns
        assert memory.drop_namespace(f"{ns}-copy", dry_run=True).removed > 0
        assert memory.drop_namespace(f"{ns}-copy", confirm=True).removed > 0
        assert memory.stats(ns=f"{ns}-copy").facts == 0

    async def exported() -> list[dict[str, Any]]:
        async with AsyncRemoteMemory(served.url, admin.key, ns=ns) as remote:
            return [record async for record in await remote.export()]

    assert [r["record"] for r in asyncio.run(exported())] == [r["record"] for r in records]


def _cli_env(served: Served, key: str, home: Path) -> dict[str, str]:
    """The server and key, and no Neo4j setting at all (nor a data folder to find one in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    return env | {
        "GRAPHMEM_SERVER_URL": served.url,
        "GRAPHMEM_API_KEY": key,
        "GRAPHMEM_DATA_DIR": str(home / "data"),
        "GRAPHMEM_CACHE_DIR": str(home / "cache"),
    }


def test_the_cli_remembers_and_recalls_through_the_server(
    served: Served, local: Memory, ns: str, tmp_path: Path
) -> None:
    key = new_key(local, "write", namespaces=[ns])
    env = _cli_env(served, key.key, tmp_path)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "graphmem", *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    made = cli("remember", OLD, "--ns", ns, "--json")
    assert made.returncode == 0, made.stderr
    fact = json.loads(made.stdout)
    found = cli("recall", QUERY, "--ns", ns, "--json")
    assert found.returncode == 0, found.stderr
    assert [h["id"] for h in json.loads(found.stdout)["hits"]] == [fact["id"]]
    table = cli("history", fact["id"], "--ns", ns)
    assert table.returncode == 0 and fact["id"] in table.stdout

    for args, error in (
        (("get", "00000000-no-such-id", "--ns", ns), "NotFoundError"),
        (("stats", "--ns", f"{ns}-other"), "PermissionDeniedError"),
    ):
        failed = cli(*args, "--json")
        assert failed.returncode == 1, failed.stderr
        assert json.loads(failed.stderr)["error"]["type"] == error, failed.stderr
    env["GRAPHMEM_API_KEY"] = "gmk_000000000000_not-a-key"
    refused = cli("recall", QUERY, "--ns", ns, "--json")
    assert refused.returncode == 1, refused.stderr
    assert json.loads(refused.stderr)["error"]["type"] == "AuthenticationError", refused.stderr


def test_a_key_that_opens_one_namespace_makes_it_the_default(
    served: Served, local: Memory, ns: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRAPHMEM_NAMESPACE", raising=False)
    key = new_key(local, "write", namespaces=[ns])
    with RemoteMemory(served.url, key.key) as remote:
        assert remote.remember("Kai rows on Sundays.").ns == ns
        assert remote.ns == ns

    async def run() -> str:
        async with AsyncRemoteMemory(served.url, key.key) as remote:
            return (await remote.stats()).ns

    assert asyncio.run(run()) == ns
    # Named, a namespace is used as given; a key of two namespaces has no default of its own.
    with (
        RemoteMemory(served.url, key.key, ns=f"{ns}-x") as remote,
        pytest.raises(PermissionDeniedError),
    ):
        remote.stats()
    two = new_key(local, "write", namespaces=[ns, f"{ns}-2"])
    with RemoteMemory(served.url, two.key) as remote, pytest.raises(PermissionDeniedError):
        remote.stats()
    # The CLI in remote mode, with no GRAPHMEM_NAMESPACE and no --ns.
    made = subprocess.run(
        [sys.executable, "-m", "graphmem", "remember", "Kai swims on Mondays.", "--json"],
        env=_cli_env(served, key.key, tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["ns"] == ns
    assert {f.text for f in local.audit.beliefs(ns=ns).facts} == {
        "Kai rows on Sundays.",
        "Kai swims on Mondays.",
    }


def test_recall_through_the_server_loads_no_driver_and_no_model(
    served: Served, local: Memory, ns: str, tmp_path: Path
) -> None:
    key = new_key(local, "read", namespaces=[ns])
    probe = (
        "import sys\n"
        "from graphmem.cli import main\n"
        "try:\n"
        f"    main(['recall', {QUERY!r}, '--ns', {ns!r}, '--json'])\n"
        "except SystemExit as exit:\n"
        "    code = exit.code\n"
        "heavy = {'neo4j', 'numpy', 'onnxruntime', 'tokenizers', 'torch'} & set(sys.modules)\n"
        "print(code, sorted(heavy), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=_cli_env(served, key.key, tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # An empty namespace: exit 3 (it holds nothing), and nothing heavy was imported.
    assert done.stderr.splitlines()[-1] == "3 []", done.stderr
