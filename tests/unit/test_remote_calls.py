"""The remote clients without a server: the requests each method sends (paths, bodies, query
parameters, headers), the answers read into the library's models, and the errors raised as the
library's own classes, through httpx's MockTransport."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from graphmem.errors import (
    AuthenticationError,
    ClientUsageError,
    ConfigurationError,
    ConfirmationRequiredError,
    ForgottenContentError,
    InvalidInputError,
    MessageConflictError,
    NotFoundError,
    PermissionDeniedError,
    ServiceError,
    UndoRefusedError,
)
from graphmem.models import Episode, Fact
from graphmem.models.wire import error_body
from graphmem.remote import AsyncRemoteMemory, RemoteMemory

URL = "http://memory.test:8080"
KEY = "gmk_test_secret"
NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

FACT = {
    "id": "f-1",
    "ns": "user-42",
    "text": "The user works at Microsoft.",
    "status": "active",
    "recorded_at": "2026-03-01T09:00:00Z",
    "text_hash": "h",
}
EPISODE = {
    "id": "e-1",
    "ns": "user-42",
    "content": "I work at Microsoft.",
    "role": "user",
    "recorded_at": "2026-03-01T09:00:00Z",
    "content_hash": "h",
}
STATS = {"ns": "team", "facts": 0, "facts_by_status": {}, "pinned": 0, "episodes": 0}
STATS |= dict.fromkeys(("sessions", "supersedes", "contradictions_open", "references"), 0)
STATS |= {"derived_from": 0}
FORGET = {"ns": "user-42", "erasure": "x-1", "selector": "ids", "facts": ["f-1"]}


class Server:
    """A MockTransport handler: records each request and answers from ``routes``."""

    def __init__(self, routes: dict[str, Any] | None = None, status: int = 200) -> None:
        self.routes = routes or {}
        self.status = status
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.routes.get(f"{request.method} {request.url.path}", {})
        if isinstance(answer, httpx.Response):
            return answer
        if isinstance(answer, bytes):
            return httpx.Response(self.status, content=answer)
        return httpx.Response(self.status, json=answer)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]

    def body(self) -> Any:
        return json.loads(self.last.content)


@pytest.fixture
def server() -> Server:
    return Server()


@pytest.fixture
def memory(server: Server) -> Iterator[RemoteMemory]:
    with RemoteMemory(URL, KEY, ns="user-42", transport=httpx.MockTransport(server)) as client:
        yield client


def test_a_fact_goes_as_its_fields_with_the_key_and_comes_back_as_a_fact(
    server: Server, memory: RemoteMemory
) -> None:
    server.routes["POST /v1/namespaces/user-42/facts"] = FACT
    fact = memory.remember("The user works at Microsoft.", tags=("job",), valid_from=NOW)
    assert isinstance(fact, Fact) and fact.text == "The user works at Microsoft."
    assert fact.recorded_at == NOW
    request = server.last
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["user-agent"].startswith("graphmem/")
    assert server.body() == {
        "text": "The user works at Microsoft.",
        "tags": ["job"],
        "valid_from": "2026-03-01T09:00:00Z",
        "allow_forgotten": False,
    }


def test_recall_sends_only_the_options_given_times_as_iso_text(
    server: Server, memory: RemoteMemory
) -> None:
    server.routes["POST /v1/namespaces/other/search"] = {"query": "q", "ns": "other", "hits": []}
    result = memory.recall("where?", ns="other", k=3, kinds=("fact",), as_of=NOW)
    assert result.hits == () and result.ns == "other"
    assert server.body() == {
        "query": "where?",
        "k": 3,
        "kinds": ["fact"],
        "as_of": "2026-03-01T09:00:00Z",
    }


def test_context_names_its_zone(server: Server, memory: RemoteMemory) -> None:
    block = {"text": "", "tokens": 0, "budget_tokens": 50, "tokenizer": "t"}
    server.routes["POST /v1/namespaces/user-42/context"] = block
    memory.context("q", budget_tokens=50, timezone=ZoneInfo("Europe/Lisbon"), config={"k": 1})
    assert server.body() == {
        "query": "q",
        "timezone": "Europe/Lisbon",
        "config": {"k": 1},
        "budget_tokens": 50,
    }
    memory.context("q", budget_tokens=50, timezone=UTC)
    assert server.body()["timezone"] == "UTC"


def test_get_reads_a_fact_or_an_episode(server: Server, memory: RemoteMemory) -> None:
    server.routes["GET /v1/namespaces/user-42/memories/f-1"] = FACT
    server.routes["GET /v1/namespaces/user-42/memories/e-1"] = EPISODE
    assert isinstance(memory.get("f-1"), Fact)
    assert isinstance(memory.get("e-1"), Episode)


def test_namespaces_and_ids_are_checked_and_quoted(server: Server, memory: RemoteMemory) -> None:
    server.routes["GET /v1/namespaces/user-42/memories/a b"] = FACT
    memory.get("a b")
    assert server.last.url.raw_path == b"/v1/namespaces/user-42/memories/a%20b"
    with pytest.raises(InvalidInputError):
        memory.get("f-1", ns="")
    with pytest.raises(InvalidInputError):
        memory.get("")
    assert len(server.requests) == 1  # refused before anything was sent


def test_forget_erases_unless_dry_run_and_the_actor_is_the_key(
    server: Server, memory: RemoteMemory
) -> None:
    server.routes["POST /v1/namespaces/user-42/forget"] = FORGET
    counts: list[int] = []
    result = memory.forget("f-1", reason="user request", progress=counts.append)
    assert result.erased == 1 and counts == [1]
    assert server.body() == {"reason": "user request", "ids": ["f-1"], "confirm": True}
    memory.forget(source="chat", reason="r", dry_run=True, batch_size=10)
    assert server.body() == {"reason": "r", "source": "chat", "batch_size": 10, "confirm": False}
    with pytest.raises(ClientUsageError, match="actor"):
        memory.forget("f-1", reason="r", actor="someone")


def test_consolidate_writes_unless_dry_run(server: Server, memory: RemoteMemory) -> None:
    result = {"run_id": "r-1", "ns": "user-42", "status": "finished", "proposer": "heuristic"}
    server.routes["POST /v1/namespaces/user-42/consolidate"] = result | {"clusters": 2}
    seen: list[tuple[int, int]] = []
    memory.consolidate(progress=lambda done, total: seen.append((done, total)))
    assert server.body() == {"force": False, "confirm": True}
    assert seen == [(2, 2)]
    memory.consolidate(dry_run=True, force=True, tiers=False, summaries=True)
    assert server.body() == {"force": True, "confirm": False, "tiers": False, "summaries": True}


def test_query_parameters_leave_out_what_is_not_given(server: Server, memory: RemoteMemory) -> None:
    server.routes["GET /v1/namespaces/user-42/review"] = []
    memory.review(open_only=False, limit=5)
    assert dict(server.last.url.params) == {"open_only": "false", "limit": "5"}
    diff = {"ns": "user-42", "since": NOW.isoformat(), "until": NOW.isoformat()}
    server.routes["GET /v1/namespaces/user-42/audit/diff"] = diff
    memory.audit.diff(NOW, "now")
    assert dict(server.last.url.params) == {"since": "2026-03-01T09:00:00Z", "until": "now"}
    server.routes["GET /v1/namespaces/user-42/consolidation/runs"] = []
    memory.consolidation_runs(ids=["r-1", "r-2"], limit=3)
    assert server.last.url.params.get_list("ids") == ["r-1", "r-2"]


def test_a_drop_needs_confirm_or_dry_run_before_anything_is_sent(
    server: Server, memory: RemoteMemory
) -> None:
    with pytest.raises(ConfirmationRequiredError):
        memory.drop_namespace("user-42")
    assert server.requests == []
    server.routes["POST /v1/namespaces/user-42/drop"] = {"ns": "user-42", "dry_run": True}
    memory.drop_namespace("user-42", dry_run=True)
    assert server.body() == {"confirm": False, "dry_run": True}


def test_vectors_cannot_go_to_the_server(memory: RemoteMemory) -> None:
    with pytest.raises(ClientUsageError, match="embeds"):
        memory.remember_many(["a"], vectors=[[0.1]])


def test_ingest_sends_every_message_and_reports_progress_once(
    server: Server, memory: RemoteMemory
) -> None:
    server.routes["POST /v1/namespaces/user-42/messages"] = {"ns": "user-42"}
    counts: list[int] = []
    messages: list[str | dict[str, Any]] = ["hello", {"content": "hi", "occurred_at": NOW}]
    memory.ingest(messages, session_id="s-1", progress=counts.append)
    sent = {"content": "hi", "occurred_at": "2026-03-01T09:00:00Z"}
    assert server.body() == {
        "messages": [{"content": "hello"}, sent],
        "session_id": "s-1",
        "allow_forgotten": False,
    }
    assert counts == [2]

    async def later(count: int) -> None:
        pass

    with pytest.raises(ClientUsageError, match="AsyncRemoteMemory"):
        memory.ingest(["x"], progress=later)


def test_export_streams_records_and_import_sends_json_lines(
    server: Server, memory: RemoteMemory
) -> None:
    lines = b'{"type": "header"}\n\n{"type": "end", "nodes": 0}\n'
    server.routes["GET /v1/namespaces/user-42/export"] = lines
    assert list(memory.export()) == [{"type": "header"}, {"type": "end", "nodes": 0}]
    imported = {"ns": "copy", "source_ns": "user-42", "format_version": 1}
    server.routes["POST /v1/namespaces/copy/import"] = imported
    counts: list[int] = []
    memory.import_(memory.export(), ns="copy", progress=counts.append)
    assert server.last.headers["content-type"] == "application/x-ndjson"
    assert server.last.content.decode().splitlines() == [
        '{"type": "header"}',
        '{"type": "end", "nodes": 0}',
    ]
    assert counts == [2]


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFoundError("no fact 'f-9'", ids=("f-9",)), 404),
        (PermissionDeniedError("the API key 'a' does not open namespace 'x'"), 403),
        (AuthenticationError("unknown key"), 401),
        (UndoRefusedError("built on", blockers=("fact f-1 superseded since",)), 409),
        (MessageConflictError("line 2 reuses an id", ids=("e-1",)), 409),
    ],
)
def test_error_answers_are_raised_as_the_librarys_classes(
    server: Server, memory: RemoteMemory, error: Exception, status: int
) -> None:
    body = error_body(error)  # type: ignore[arg-type]
    server.routes["GET /v1/namespaces/user-42/memories/f-9"] = httpx.Response(status, json=body)
    with pytest.raises(type(error)) as raised:
        memory.get("f-9")
    assert str(raised.value) == str(error)
    for extra in ("ids", "blockers"):
        assert getattr(raised.value, extra, None) == getattr(error, extra, None)


def test_a_raised_error_has_every_attribute_its_class_promises(
    server: Server, memory: RemoteMemory
) -> None:
    conflict = MessageConflictError("message 1 reuses m1", ids=("e-1",), index=1, external_id="m1")
    forgotten = ForgottenContentError("the namespace forgot it", indexes=(0, 2), ids=("f-1",))
    route = "POST /v1/namespaces/user-42/messages"
    server.routes[route] = httpx.Response(409, json=error_body(conflict))
    with pytest.raises(MessageConflictError) as raised:
        memory.ingest(["a", "b"])
    again = raised.value
    assert (again.index, again.other_index, again.external_id) == (1, None, "m1")
    assert again.session_id is None and again.conflicts == (again,)
    server.routes[route] = httpx.Response(422, json=error_body(forgotten))
    with pytest.raises(ForgottenContentError) as gone:
        memory.ingest(["a", "b", "c"])
    assert gone.value.indexes == (0, 2) and gone.value.ids == ("f-1",)


def test_answers_that_cannot_be_read_are_service_errors(
    server: Server, memory: RemoteMemory
) -> None:
    page = httpx.Response(502, content=b"<html>Bad Gateway</html>")
    server.routes["GET /v1/namespaces/user-42"] = page
    with pytest.raises(ServiceError, match="HTTP 502") as raised:
        memory.stats()
    assert raised.value.status == 502
    server.routes["GET /v1/namespaces/user-42"] = {"ns": 3}
    with pytest.raises(ServiceError, match="could not be read"):
        memory.stats()


def _failing(exc: type[httpx.TransportError]) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc("boom", request=request)

    return handler


def test_a_server_that_cannot_be_reached_is_a_service_error() -> None:
    down = RemoteMemory(URL, KEY, transport=httpx.MockTransport(_failing(httpx.ConnectError)))
    with pytest.raises(ServiceError, match=r"could not be reached at http://memory\.test:8080"):
        down.stats()
    slow = RemoteMemory(
        URL, KEY, timeout=2, transport=httpx.MockTransport(_failing(httpx.ReadTimeout))
    )
    with pytest.raises(ServiceError, match=r"within 2 s; the change may or may not"):
        slow.remember("x")
    with pytest.raises(ServiceError, match=r"within 2 s$"):
        slow.recall("x")


def test_url_and_key_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_SERVER_URL", "https://memory.example.com/base/")
    monkeypatch.setenv("GRAPHMEM_API_KEY", KEY)
    monkeypatch.setenv("GRAPHMEM_NAMESPACE", "team")
    seen = Server({"GET /base/v1/namespaces/team": STATS})
    with RemoteMemory(transport=httpx.MockTransport(seen)) as memory:
        assert memory.url == "https://memory.example.com/base" and memory.ns == "team"
        assert memory.client_options()["verify"] is True  # https: certificates checked
        memory.stats()
    assert str(seen.last.url) == "https://memory.example.com/base/v1/namespaces/team"
    assert KEY not in repr(memory)


def test_missing_or_malformed_settings_name_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAPHMEM_SERVER_URL", raising=False)
    monkeypatch.delenv("GRAPHMEM_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="GRAPHMEM_SERVER_URL"):
        RemoteMemory()
    with pytest.raises(ConfigurationError, match="GRAPHMEM_API_KEY"):
        RemoteMemory(URL)
    with pytest.raises(ConfigurationError, match="http:// or https://"):
        RemoteMemory("bolt://localhost:7687", KEY)
    with pytest.raises(ConfigurationError, match="credentials"):
        RemoteMemory("https://user:pw@memory.example.com", KEY)


def test_the_async_client_sends_the_same_requests() -> None:
    server = Server(
        {
            "POST /v1/namespaces/user-42/facts": FACT,
            "POST /v1/namespaces/user-42/forget": FORGET,
            "GET /v1/namespaces/user-42/export": b'{"type": "header"}\n',
            "GET /v1/namespaces/user-42/audit/explain/f-1": {
                "id": "f-1",
                "ns": "user-42",
                "status": "active",
                "text": "t",
            },
        }
    )

    async def run() -> list[dict[str, Any]]:
        seen: list[int] = []

        async def progress(count: int) -> None:
            seen.append(count)

        transport = httpx.MockTransport(server)
        async with AsyncRemoteMemory(URL, KEY, ns="user-42", transport=transport) as memory:
            await memory.remember("The user works at Microsoft.", allow_forgotten=True)
            assert server.body()["allow_forgotten"] is True
            await memory.forget(["f-1"], reason="r", progress=progress)
            assert server.body()["confirm"] is True and seen == [1]
            with pytest.raises(ServiceError, match="could not be read"):
                await memory.audit.explain("f-1")
            return [record async for record in await memory.export()]

    assert asyncio.run(run()) == [{"type": "header"}]
