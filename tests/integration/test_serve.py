"""`graphmem serve` against the real Neo4j, as a separate process: its API keys (refusals
leave the graph unchanged), the actor of each change, MCP over HTTP behind the same keys,
and the limits and probes."""

from __future__ import annotations

import asyncio
import functools
import json
import posixpath
import re
import signal
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.mcp.options import READ_TOOLS
from graphmem.ops.table import OPERATIONS
from graphmem.settings import GraphmemSettings
from tests.service import Served, bearer, new_key, serve_process

#: A loaded test machine can take a while to answer; nothing here is about speed.
post = functools.partial(httpx.post, timeout=120)
get = functools.partial(httpx.get, timeout=120)


@pytest.fixture(scope="module")
def served(graph: Graph) -> Iterator[Served]:
    with serve_process(graph, "--max-body-mb", "0.05") as running:
        yield running


@pytest.fixture
def admin(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> Iterator[Memory]:
    """A library client on the test graph, for making keys and looking at the graph."""
    with Memory(test_settings, target=graph.target, embedder=embedder) as memory:
        yield memory


def _snapshot(graph: Graph, ns: str) -> list[str]:
    """Every node of the namespace and every relationship touching one, with properties."""
    with graph.driver.session(database=graph.database) as session:
        rows = session.run(
            "MATCH (n) WHERE n.ns = $ns OPTIONAL MATCH (n)-[r]-() "
            "RETURN labels(n) AS labels, properties(n) AS props, "
            "collect(DISTINCT [type(r), properties(r)]) AS rels",
            ns=ns,
        ).data()
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["type"]


def test_every_refused_key_leaves_the_graph_unchanged(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    writer = new_key(admin, "write", namespaces=[ns])
    url = f"{served.url}/v1/namespaces/{ns}/facts"
    first = post(url, json={"text": "Ada works at Acme."}, headers=bearer(writer))
    assert first.status_code == 201, first.text
    before = _snapshot(graph, ns)

    reader = new_key(admin, "read", namespaces=[ns])
    revoked = new_key(admin, "write", namespaces=[ns])
    admin.keys.revoke(revoked.api_key.name)
    expired = new_key(admin, "write", namespaces=[ns])
    with graph.driver.session(database=graph.database) as session:
        session.run(
            "MATCH (k:GraphmemApiKey {id: $id}) SET k.expires_at = datetime() - duration('PT1M')",
            id=expired.api_key.id,
        ).consume()
    other_tenant = new_key(admin, "admin", namespaces=[f"{ns}-other"])
    wrong = writer.key[:-4] + ("aaaa" if not writer.key.endswith("aaaa") else "bbbb")
    body = {"text": "Ada moved to Globex.", "supersedes": [first.json()["id"]]}
    cases: dict[str, tuple[dict[str, str], tuple[int, str]]] = {
        "missing": ({}, (401, "AuthenticationError")),
        "not a key": ({"Authorization": "Bearer hello"}, (401, "AuthenticationError")),
        "wrong secret": (bearer(wrong), (401, "AuthenticationError")),
        "revoked": (bearer(revoked), (401, "AuthenticationError")),
        "expired": (bearer(expired), (401, "AuthenticationError")),
        "read-only writing": (bearer(reader), (403, "PermissionDeniedError")),
        "another tenant": (bearer(other_tenant), (403, "PermissionDeniedError")),
    }
    for case, (headers, expected) in cases.items():
        answer = post(url, json=body, headers=headers)
        assert _error(answer) == expected, case
        if expected[0] == 401:
            assert answer.headers["www-authenticate"] == "Bearer", case
    forget = {"reason": "asked", "ids": [first.json()["id"]], "confirm": True}
    for headers in (bearer(reader), bearer(other_tenant), {}):
        answer = post(f"{served.url}/v1/namespaces/{ns}/forget", json=forget, headers=headers)
        assert answer.status_code in (401, 403)
    assert _snapshot(graph, ns) == before
    # The read key reads, and the refusals left the first fact believed; a read key's
    # searches count no access, so they leave the graph as it was.
    found = post(
        f"{served.url}/v1/namespaces/{ns}/search", json={"query": "Ada"}, headers=bearer(reader)
    )
    assert [h["text"] for h in found.json()["hits"]] == ["Ada works at Acme."]
    assert _snapshot(graph, ns) == before


def test_the_actor_of_each_change_is_the_name_of_the_key_that_made_it(
    served: Served, admin: Memory, ns: str
) -> None:
    key = new_key(admin, "write", prefix=f"{ns}")
    name, api = key.api_key.name, f"{served.url}/v1/namespaces/{ns}"

    def send(path: str, body: dict[str, Any]) -> Any:
        answer = post(api + path, json=body, headers=bearer(key))
        assert answer.status_code < 300, answer.text
        return answer.json()

    old = send("/facts", {"text": "The office is in Lisbon."})
    new = send("/facts", {"text": "The office is in Porto.", "supersedes": [old["id"]]})
    other = send("/facts", {"text": "The office is in Braga."})
    send("/contradictions", {"a": new["id"], "b": other["id"], "reason": "two answers"})
    send("/memories/" + other["id"] + "/retract", {"reason": "never true"})
    send("/forget", {"reason": "privacy", "ids": [old["id"]], "confirm": True})
    timeline = get(f"{api}/audit/timeline/{new['id']}", headers=bearer(key)).json()
    actors = {e["kind"]: e["actor"] for e in timeline["events"] if e["actor"] is not None}
    assert actors and set(actors.values()) == {name}, timeline["events"]
    assert {"superseded", "contradicted"} <= set(actors), actors
    run = send("/consolidate", {"force": True, "confirm": True})
    (record,) = admin.consolidation_runs(ns=ns, ids=[run["run_id"]])
    assert record.started_by == name
    everything = post(
        api + "/forget",
        json={"reason": "all", "everything": True, "confirm": True},
        headers=bearer(key),
    )
    assert _error(everything) == (403, "PermissionDeniedError")
    erased = admin.audit.diff("1 hour ago", ns=ns)
    assert [f.actor for f in erased.forgotten] == [name]
    retracted = admin.audit.timeline(other["id"], ns=ns)
    assert name in {e.actor for e in retracted.events}


def test_a_prefix_key_opens_its_namespaces_and_lists_only_them(
    served: Served, admin: Memory, ns: str
) -> None:
    key = new_key(admin, "write", prefix=f"{ns}-team-")
    for suffix in ("a", "b"):
        answer = post(
            f"{served.url}/v1/namespaces/{ns}-team-{suffix}/facts",
            json={"text": f"Team {suffix} meets on Monday."},
            headers=bearer(key),
        )
        assert answer.status_code == 201
    refused = post(
        f"{served.url}/v1/namespaces/{ns}-teams/facts", json={"text": "x"}, headers=bearer(key)
    )
    assert _error(refused) == (403, "PermissionDeniedError")
    listed = get(f"{served.url}/v1/namespaces", headers=bearer(key)).json()
    assert sorted(n["ns"] for n in listed) == [f"{ns}-team-a", f"{ns}-team-b"]


def test_bad_input_is_a_typed_error_and_writes_nothing(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    key = new_key(admin, "admin", namespaces=[ns])
    api = f"{served.url}/v1/namespaces/{ns}"
    cases = [
        ("/facts", {"text": ""}, 422, "InvalidInputError"),
        ("/facts", {"text": "x", "colour": "red"}, 422, "InvalidInputError"),
        ("/facts", {"text": "x", "supersedes": ["0" * 36]}, 404, "NotFoundError"),
        ("/search", {"query": "x", "k": 0}, 422, "InvalidInputError"),
        ("/drop", {"confirm": False}, 409, "ConfirmationRequiredError"),
        ("/drop", {}, 409, "ConfirmationRequiredError"),
        ("/facts", {"text": "y" * 60_000}, 413, "RequestTooLargeError"),
    ]
    for path, body, status, kind in cases:
        answer = post(api + path, json=body, headers=bearer(key))
        assert _error(answer) == (status, kind), (path, body, answer.text)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the size is counted as it comes
        yield b'{"text": "'
        for _ in range(80):
            yield b"z" * 1000
        yield b'"}'

    streamed = post(
        api + "/facts",
        content=chunks(),
        headers={**bearer(key), "content-type": "application/json"},
    )
    assert _error(streamed) == (413, "RequestTooLargeError")
    # Without a key, nothing of the body is read: malformed JSON is still a 401.
    unkeyed = post(api + "/facts", content=b"{not json", headers={"x": "y"})
    assert _error(unkeyed) == (401, "AuthenticationError")
    bad_ns = post(
        f"{served.url}/v1/namespaces/no%20spaces/facts", json={"text": "x"}, headers=bearer(key)
    )
    assert bad_ns.status_code in (403, 422)
    assert _snapshot(graph, ns) == []


def test_what_fails_outside_the_routes_answers_in_graphmem_s_format(
    served: Served, admin: Memory, ns: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    api = f"{served.url}/v1/namespaces/{ns}"
    unknown = get(f"{api}/no-such-route", headers=bearer(key))
    assert _error(unknown) == (404, "NotFoundError")
    assert _error(get(f"{served.url}/nowhere")) == (404, "NotFoundError")
    wrong_method = httpx.delete(f"{api}/facts", headers=bearer(key), timeout=120)
    assert _error(wrong_method) == (405, "InvalidInputError")
    assert "POST" in wrong_method.headers["allow"]
    not_json = post(
        f"{api}/facts",
        content=b'{"text": "x"',
        headers={**bearer(key), "content-type": "application/json"},
    )
    assert _error(not_json) == (422, "InvalidInputError")
    assert not_json.json()["error"]["message"].startswith(
        "the request body is not valid JSON: Expecting ',' delimiter at line 1 column 13"
    )


def test_a_fact_created_over_rest_is_recorded_by_the_key(
    served: Served, admin: Memory, ns: str
) -> None:
    writer = new_key(admin, "write", namespaces=[ns])
    api = f"{served.url}/v1/namespaces/{ns}"
    created = post(f"{api}/facts", json={"text": "Eve plays chess."}, headers=bearer(writer))
    assert created.status_code == 201 and created.json()["recorded_by"] == writer.api_key.name
    line = get(f"{api}/audit/timeline/{created.json()['id']}", headers=bearer(writer)).json()
    assert [(e["kind"], e["actor"]) for e in line["events"]] == [("recorded", writer.api_key.name)]


def test_probes_and_the_openapi_schema(served: Served) -> None:
    assert get(f"{served.url}/health").json()["status"] == "ok"
    assert get(f"{served.url}/ready").json() == {"status": "ready"}
    schema = get(f"{served.url}/openapi.json").json()
    assert "/v1/namespaces/{ns}/facts" in schema["paths"]
    assert "Fact" in schema["components"]["schemas"]
    assert "RecallRequest" in schema["components"]["schemas"]
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    remember = schema["paths"]["/v1/namespaces/{ns}/facts"]["post"]
    assert remember["security"] == [{"HTTPBearer": []}]
    assert {"401", "403", "422"} <= set(remember["responses"])


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_pages_work_with_no_network(served: Served, page: str) -> None:
    html = get(f"{served.url}{page}")
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    # Every URL the page names is the service's own: nothing is fetched from elsewhere.
    assert re.findall(r"(?:https?:)?//[\w.-]+", html.text) == []
    named = re.findall(r"""(?:href|src|url)\s*[=:]\s*["']([^"']+)["']""", html.text)
    assert "/openapi.json" in named and any(u.endswith(".js") for u in named)
    for url in named:
        assert url.startswith("/"), url
        fetched = get(f"{served.url}{url}")
        assert fetched.status_code == 200 and fetched.content, url
    home = get(f"{served.url}/", follow_redirects=False)
    assert home.status_code == 307 and home.headers["location"] == "/ui/"


def test_the_web_ui_is_served_from_the_package_under_a_policy_that_keeps_it_local(
    served: Served,
) -> None:
    ui = get(f"{served.url}/ui", follow_redirects=False)
    assert ui.status_code == 307 and ui.headers["location"] == "/ui/"
    page = get(f"{served.url}/ui/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "connect-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy and "unsafe" not in policy
    assert re.findall(r"(?:https?:)?//[\w.-]+", page.text) == []
    # Every script the page loads, and every module those import, is the service's own.
    pending, seen = ["/ui/js/app.js"], set()
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        script = get(f"{served.url}{path}")
        assert script.status_code == 200, path
        assert "javascript" in script.headers["content-type"], path
        assert script.headers["content-security-policy"] == policy
        assert re.findall(r"https?://(?!www\.w3\.org/2000/svg)[\w.-]+", script.text) == [], path
        base = posixpath.dirname(path)
        for name in re.findall(r'from "(\.{1,2}/[\w./-]+)"', script.text):
            pending.append(posixpath.normpath(posixpath.join(base, name)))
    assert {"/ui/js/api.js", "/ui/js/pages/audit.js", "/ui/js/charts.js"} <= seen
    assert get(f"{served.url}/ui/ui.css").status_code == 200
    # The pages know the API from the operation table, as every other client does.
    table = get(f"{served.url}/ui/operations.json").json()
    assert {op["name"]: (op["http"], op["path"], op["role"]) for op in table} == {
        op.name: (op.http, op.path, op.role) for op in OPERATIONS
    }
    assert get(f"{served.url}/ui/missing.js").status_code == 404


def test_mcp_over_http_needs_a_key_and_an_allowed_origin(
    served: Served, admin: Memory, ns: str
) -> None:
    writer = new_key(admin, "write", namespaces=[ns])
    reader = new_key(admin, "read", namespaces=[ns])
    mcp_url = f"{served.url}/mcp"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    assert post(mcp_url, json=ping, headers=accept).status_code == 401
    wrong = post(mcp_url, json=ping, headers={**accept, "Authorization": "Bearer gmk_x"})
    assert wrong.status_code == 401
    foreign = {**accept, **bearer(writer), "Origin": "http://evil.example"}
    assert post(mcp_url, json=ping, headers=foreign).status_code == 403

    def connect(key: Any) -> Client:
        # The SDK's own HTTP client, carrying the key on every request (with more than its
        # default 5 s to answer: a loaded CI machine can take longer for one write).
        http = httpx2.AsyncClient(headers=bearer(key), timeout=60)
        return Client(streamable_http_client(mcp_url, http_client=http))

    async def flow() -> None:
        async with connect(writer) as session:
            listed = {t.name for t in (await session.list_tools()).tools}
            assert {"add_memory", "forget", "search_memories"} <= listed
            first = await session.call_tool("add_memory", {"text": "Bo likes tea."})
            fact = json.loads(first.content[0].text)["memory"]  # type: ignore[union-attr]
            second = await session.call_tool(
                "add_memory", {"text": "Bo likes coffee.", "supersedes": [fact["id"]]}
            )
            assert not second.is_error, second.content
            outside = await session.call_tool(
                "search_memories", {"query": "Bo", "namespace": f"{ns}-x"}
            )
            assert outside.is_error
            assert "PermissionDeniedError" in outside.content[0].text  # type: ignore[union-attr]
        async with connect(reader) as session:
            # A read key is shown only the tools it may call.
            listed = {t.name for t in (await session.list_tools()).tools}
            assert "search_memories" in listed and listed <= set(READ_TOOLS), listed
            found = await session.call_tool("search_memories", {"query": "what does Bo drink"})
            assert "coffee" in found.content[0].text  # type: ignore[union-attr]
            refused = await session.call_tool("add_memory", {"text": "Bo likes water."})
            assert refused.is_error
            assert "PermissionDeniedError" in refused.content[0].text  # type: ignore[union-attr]

    asyncio.run(flow())
    believed = admin.recall("Bo", ns=ns, track_access=False)
    assert [h.text for h in believed.hits] == ["Bo likes coffee."]
    # The read key's searches counted no access: it writes nothing.
    assert believed.hits[0].fact is not None and believed.hits[0].fact.access_count == 0
    lineage = admin.audit.timeline(believed.hits[0].id, ns=ns)
    # Every event, the creations included, is the writing key's.
    assert {e.actor for e in lineage.events} == {writer.api_key.name}


def test_sigterm_stops_the_server_gracefully(graph: Graph) -> None:
    with serve_process(graph) as running:
        running.process.send_signal(signal.SIGTERM)
        # uvicorn finishes the requests in flight, runs the shutdown (the client closes),
        # then ends by the signal it caught, as a process stopped by SIGTERM does.
        assert running.process.wait(timeout=60) in (0, -signal.SIGTERM)
        assert "Traceback" not in running.log(), running.log()


def test_export_drop_and_import_through_rest(served: Served, admin: Memory, ns: str) -> None:
    owner = new_key(admin, "admin", namespaces=[ns])
    writer = new_key(admin, "write", namespaces=[ns])
    api = f"{served.url}/v1/namespaces/{ns}"
    old = post(
        f"{api}/facts", json={"text": "Di lives in Oslo."}, headers=bearer(owner), timeout=60
    )
    body = {"text": "Di lives in Bergen.", "supersedes": [old.json()["id"]]}
    assert post(f"{api}/facts", json=body, headers=bearer(owner)).status_code == 201

    def export() -> list[dict[str, Any]]:
        answer = get(f"{api}/export", headers=bearer(owner))
        assert answer.status_code == 200
        lines = [json.loads(line) for line in answer.text.splitlines()]
        return [
            {k: v for k, v in r.items() if k not in ("exported_at", "finished_at")} for r in lines
        ]

    before = export()
    assert before[0]["format"] == "graphmem-namespace" and len(before) > 2
    refused = post(f"{api}/drop", json={"confirm": True}, headers=bearer(writer))
    assert _error(refused) == (403, "PermissionDeniedError")
    dropped = post(f"{api}/drop", json={"confirm": True}, headers=bearer(owner))
    assert dropped.status_code == 200 and sum(dropped.json()["nodes"].values()) > 0
    document = "\n".join(json.dumps(r) for r in before)
    imported = post(f"{api}/import", content=document, headers=bearer(owner))
    assert imported.status_code == 201, imported.text
    assert export() == before
