"""Writes whose commit went through but whose answer was lost, against the real Neo4j and real
``graphmem serve`` processes: a transaction run again by the driver returns what its first run
stored; a request sent again with its ``Idempotency-Key`` is answered with its first answer,
by the same or another server, and stores nothing twice; a key reused for another request is
refused; the remote client sends a write again with the same key when the answer is lost."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.core.plans import Transaction
from graphmem.core.replay import request_ids
from graphmem.embed.embedder import Embedder
from graphmem.models import Fact
from graphmem.remote import RemoteMemory
from graphmem.settings import GraphmemSettings
from tests.helpers import SentenceExtractor
from tests.service import Served, bearer, new_key, serve_process

post = functools.partial(httpx.post, timeout=120)


@pytest.fixture(scope="module")
def servers(graph: Graph) -> Iterator[tuple[Served, Served]]:
    """Two serve processes on the one test graph."""
    with serve_process(graph) as first, serve_process(graph) as second:
        yield first, second


@pytest.fixture
def local(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> Iterator[Memory]:
    with Memory(test_settings, target=graph.target, embedder=embedder) as memory:
        yield memory


def _count(graph: Graph, label: str, ns: str) -> int:
    with graph.driver.session(database=graph.database) as session:
        record = session.run(
            f"MATCH (n:{label}) WHERE n.ns = $ns RETURN count(n) AS n", ns=ns
        ).single()
    assert record is not None
    return int(record["n"])


# --- the driver's retry: a transaction function run again after its commit ---------------------
def _committed_twice(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Makes every write transaction of ``memory`` commit, then run again as the driver runs a
    transaction function whose commit it could not confirm: the same work, a second time. The
    first runs' answers are collected."""
    firsts: list[Any] = []
    run = memory._transaction

    def twice(step: Transaction[Any]) -> Any:
        if step.mode == "write":
            firsts.append(run(step))
        return run(step)

    monkeypatch.setattr(memory, "_transaction", twice)
    return firsts


def test_a_transaction_run_again_after_its_commit_returns_what_it_stored(
    local: Memory, graph: Graph, ns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    firsts = _committed_twice(local, monkeypatch)
    fact = local.remember("Ada keeps bees on the roof.", ns=ns, tags=["bees"])
    assert [f.model_dump() for f in firsts[-1]] == [fact.model_dump()]
    batch = local.remember_many(["Ada's hives are blue.", "Ada sells honey in May."], ns=ns)
    assert [f.model_dump() for f in firsts[-1]] == [f.model_dump() for f in batch]
    result = local.ingest(["I moved the hives today.", "They like the lavender."], ns=ns)
    assert len(result.episodes) == 2 and not result.duplicates
    assert firsts[-1][0] == list(result.episodes)
    assert _count(graph, "Fact", ns) == 3
    assert _count(graph, "Episode", ns) == 2


def test_an_ingest_with_extraction_run_again_after_its_commit_returns_what_it_stored(
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
    ns: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Memory(
        test_settings, target=graph.target, embedder=embedder, extractor=SentenceExtractor()
    ) as memory:
        firsts = _committed_twice(memory, monkeypatch)
        result = memory.ingest(["Gil owns a kayak. It is green."], ns=ns, extract=True)
        assert firsts[-1] == (list(result.episodes), {}, list(result.facts), 0)
        assert [f.text for f in result.facts] == ["Gil owns a kayak.", "It is green."]
        # A stored message that this extractor has not read: the facts are written apart.
        memory.ingest(["Gil paddles on Lake Annecy."], ns=ns, extract=False)
        again = memory.ingest(["Gil paddles on Lake Annecy."], ns=ns, extract=True)
        assert firsts[-1] == (list(again.facts), 0)
        assert [f.text for f in again.facts] == ["Gil paddles on Lake Annecy."]
    assert _count(graph, "Fact", ns) == 3
    assert _count(graph, "Episode", ns) == 2


# --- the caller's retry: the same request again, with its idempotency key ---------------------
def _send(server: Served, secret: str, path: str, body: Any, key: str) -> httpx.Response:
    headers = {**bearer(secret), "Idempotency-Key": key}
    return post(f"{server.url}/v1/namespaces/{path}", json=body, headers=headers)


@pytest.mark.parametrize(
    ("route", "body", "label", "stored"),
    [
        ("facts", {"text": "Bo's bike is red.", "tags": ["bike"]}, "Fact", 1),
        (
            "facts/batch",
            {"facts": [{"text": "Bo rides at six."}, {"text": "Bo has a bell."}]},
            "Fact",
            2,
        ),
        (
            "messages",
            {"messages": [{"content": "Hi, I'm Bo."}, {"content": "I ride to work."}]},
            "Episode",
            2,
        ),
    ],
)
def test_a_write_sent_again_with_its_key_is_answered_once_by_either_server(
    servers: tuple[Served, Served],
    local: Memory,
    graph: Graph,
    ns: str,
    route: str,
    body: dict[str, Any],
    label: str,
    stored: int,
) -> None:
    secret = new_key(local, namespaces=[ns]).key
    key = str(uuid.uuid4())
    first = _send(servers[0], secret, f"{ns}/{route}", body, key)
    assert first.status_code == 201, first.text
    again = _send(servers[0], secret, f"{ns}/{route}", body, key)
    elsewhere = _send(servers[1], secret, f"{ns}/{route}", body, key)
    for answer in (again, elsewhere):
        assert (answer.status_code, answer.content) == (201, first.content)
        assert answer.headers["Idempotency-Replayed"] == "true"
    assert "Idempotency-Replayed" not in first.headers
    assert _count(graph, label, ns) == stored
    # A new key is a new request: a fact is stored again; a message stays stored once.
    fresh = _send(servers[1], secret, f"{ns}/{route}", body, str(uuid.uuid4()))
    assert fresh.status_code == 201 and fresh.content != first.content
    assert _count(graph, label, ns) == (2 * stored if label == "Fact" else stored)


def test_the_same_request_sent_to_both_servers_at_once_is_stored_once(
    servers: tuple[Served, Served], local: Memory, graph: Graph, ns: str
) -> None:
    secret = new_key(local, namespaces=[ns]).key
    key = str(uuid.uuid4())
    body = {"facts": [{"text": f"Gus planted tree number {i}."} for i in range(20)]}

    def send(server: Served) -> httpx.Response:
        return _send(server, secret, f"{ns}/facts/batch", body, key)

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(send, [*servers, *servers]))
    assert [a.status_code for a in answers] == [201] * 4
    assert len({a.content for a in answers}) == 1
    assert _count(graph, "Fact", ns) == 20


def test_a_retract_sent_again_while_the_first_runs_gets_the_first_answer(
    servers: tuple[Served, Served], local: Memory, graph: Graph, ns: str
) -> None:
    # A retract run twice would be refused the second time (the fact is retired by then): on
    # one process, the copies of one request wait for the first and get its answer.
    secret = new_key(local, namespaces=[ns]).key
    fact = local.remember("Dee owns a kayak.", ns=ns)
    key = str(uuid.uuid4())

    def send(_: int) -> httpx.Response:
        return _send(servers[0], secret, f"{ns}/memories/{fact.id}/retract", {}, key)

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(send, range(4)))
    assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
    assert len({a.content for a in answers}) == 1
    assert sum(a.headers.get("Idempotency-Replayed") == "true" for a in answers) == 3


def test_a_key_used_again_for_another_request_is_refused(
    servers: tuple[Served, Served], local: Memory, graph: Graph, ns: str
) -> None:
    secret = new_key(local, namespaces=[ns]).key
    key = str(uuid.uuid4())
    assert _send(servers[0], secret, f"{ns}/facts", {"text": "Cy is 40."}, key).status_code == 201
    for server, path, body in (
        (servers[0], f"{ns}/facts", {"text": "Cy is 41."}),
        (servers[1], f"{ns}/facts/batch", {"facts": [{"text": "Cy is 40."}]}),
    ):
        refused = _send(server, secret, path, body, key)
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["type"] == "IdempotencyConflictError"
    assert _count(graph, "Fact", ns) == 1
    bad = _send(servers[0], secret, f"{ns}/facts", {"text": "Cy is 42."}, "no spaces allowed")
    assert bad.status_code == 422 and _count(graph, "Fact", ns) == 1


def test_a_write_committed_without_an_answer_is_answered_on_retry_and_stored_once(
    servers: tuple[Served, Served], local: Memory, graph: Graph, ns: str
) -> None:
    """The server stopped between the commit and the answer: the write is in the graph, its
    answer nowhere. The retry (its ids derived from the same key) finds it and answers it."""
    secret = new_key(local, namespaces=[ns]).key
    key = str(uuid.uuid4())
    with request_ids(ns, key):
        stored = local.remember("Dee's train leaves at 7:12.", ns=ns)
    answer = _send(servers[1], secret, f"{ns}/facts", {"text": "Dee's train leaves at 7:12."}, key)
    assert answer.status_code == 201, answer.text
    assert answer.json()["id"] == stored.id and answer.json()["text"] == stored.text
    key2 = str(uuid.uuid4())
    with request_ids(ns, key2):
        said = ["Dee: see you at the station.", "Dee: bring the map."]
        episodes = local.ingest(said, ns=ns)
    again = _send(
        servers[0],
        secret,
        f"{ns}/messages",
        {"messages": [{"content": m} for m in said]},
        key2,
    )
    assert again.status_code == 201, again.text
    assert [e["id"] for e in again.json()["episodes"]] == [e.id for e in episodes.episodes]
    assert _count(graph, "Fact", ns) == 1
    assert _count(graph, "Episode", ns) == 2


class _LostAnswers(httpx.BaseTransport):
    """Sends each request to the server; the first ``lose`` answers never reach the client
    (the connection breaks after the server committed)."""

    def __init__(self, lose: int) -> None:
        self.inner, self.lose = httpx.HTTPTransport(), lose
        self.keys: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(request.headers.get("Idempotency-Key", ""))
        response = self.inner.handle_request(request)
        response.read()
        if self.lose:
            self.lose -= 1
            raise httpx.ReadError("the connection broke before the answer came", request=request)
        return response


def test_the_remote_client_sends_a_write_again_with_its_key_when_the_answer_is_lost(
    servers: tuple[Served, Served], local: Memory, graph: Graph, ns: str
) -> None:
    secret = new_key(local, namespaces=[ns]).key
    lost = _LostAnswers(lose=2)
    with RemoteMemory(servers[0].url, secret, ns=ns, transport=lost) as remote:
        remote.retry_delays = (0.05, 0.05, 0.05)
        fact = remote.remember("Eve waters the ferns on Sundays.")
        assert len(lost.keys) == 3 and len(set(lost.keys)) == 1 and lost.keys[0]
        got = remote.get(fact.id)
        assert isinstance(got, Fact) and got.text == fact.text
        lost.lose = 1
        facts = remote.remember_many(["Eve's ferns are in the hall.", "Eve has six ferns."])
        assert len(set(lost.keys[4:6])) == 1 and lost.keys[4] != lost.keys[0]
    assert _count(graph, "Fact", ns) == 3
    assert {f.text for f in facts} == {"Eve's ferns are in the hall.", "Eve has six ferns."}


def test_recorded_answers_are_not_exported_and_go_with_an_erasure_and_a_drop(
    servers: tuple[Served, Served], local: Memory, graph: Graph, ns: str
) -> None:
    secret = new_key(local, role="admin", namespaces=[ns]).key
    text = "Flo's PIN is 2468."
    made = _send(servers[0], secret, f"{ns}/facts", {"text": text}, str(uuid.uuid4())).json()
    _send(servers[0], secret, f"{ns}/facts", {"text": "Flo bakes bread."}, str(uuid.uuid4()))
    assert _count(graph, "GraphmemRequest", ns) == 2
    nodes = [r for r in local.export(ns) if r["record"] == "node"]
    assert len(nodes) == 2 and all(r["labels"] == ["Fact"] for r in nodes)
    (listed,) = [s for s in local.namespaces() if s.ns == ns]
    assert listed.facts == 2
    forget = {"ids": [made["id"]], "reason": "asked", "confirm": True}
    erased = _send(servers[1], secret, f"{ns}/forget", forget, str(uuid.uuid4()))
    assert erased.status_code == 200, erased.text
    with graph.driver.session(database=graph.database) as session:
        kept = session.run(
            "MATCH (r:GraphmemRequest) WHERE r.ns = $ns RETURN r.result AS result", ns=ns
        ).value()
    assert len(kept) == 1 and text not in kept[0]  # the erasure's own answer, without the text
    local.drop_namespace(ns, confirm=True)
    assert _count(graph, "GraphmemRequest", ns) == 0
    assert _count(graph, "GraphmemLock", ns) == 0
