"""The bounds of a call to a real `graphmem serve` on the test Neo4j: an oversized call is
413 naming its limit, a value of the wrong type is 422 naming its field, a request framed by
both Content-Length and Transfer-Encoding is 400 on a closed connection; each writes nothing,
and a call within the bounds is served as before."""

from __future__ import annotations

import functools
import json
import socket
from typing import Any

import httpx
import pytest

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.errors import RequestTooLargeError
from graphmem.models.bounds import MAX_CALL_BYTES, MAX_CALL_ITEMS
from graphmem.remote import RemoteMemory
from tests.service import Served, bearer, new_key

#: A loaded test machine can take a while to answer; nothing here is about speed.
post = functools.partial(httpx.post, timeout=180)


def _nodes(graph: Graph, ns: str, label: str = "") -> int:
    """The nodes of the namespace (of ``label``, when given)."""
    with graph.driver.session(database=graph.database) as session:
        query = f"MATCH (n{label}) WHERE n.ns = $ns RETURN count(n) AS n"
        record = session.run(query, ns=ns).single()
    assert record is not None
    return int(record["n"])


def _error(answer: httpx.Response) -> dict[str, Any]:
    error: dict[str, Any] = answer.json()["error"]
    return error


def test_an_oversized_call_is_413_naming_its_limit_and_writes_nothing(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    api = f"{served.url}/v1/namespaces/{ns}"
    many = [{"content": f"message {i}"} for i in range(MAX_CALL_ITEMS + 1)]
    facts = [{"text": f"Fact number {i}."} for i in range(MAX_CALL_ITEMS + 1)]
    # 45 messages of 100,000 characters: each within its own limit, 4.5 MB together.
    text = [{"content": ("word " * 20_000)[:100_000]} for _ in range(45)]
    cases = [
        ("/messages", {"messages": many}, MAX_CALL_ITEMS, "1,001 items in one call"),
        ("/facts/batch", {"facts": facts}, MAX_CALL_ITEMS, "1,001 items in one call"),
        ("/messages", {"messages": text}, MAX_CALL_BYTES, "4,500,000 bytes of text"),
    ]
    for path, body, limit, words in cases:
        answer = post(api + path, json=body, headers=bearer(key))
        assert answer.status_code == 413, (path, answer.text)
        error = _error(answer)
        assert error["type"] == "RequestTooLargeError" and error["limit"] == limit, error
        assert words in error["message"], error
    # A body over the server's limit (8 MB) is refused by its length before it is read.
    huge = [{"content": "z" * 100_000} for _ in range(90)]
    answer = post(api + "/messages", json={"messages": huge}, headers=bearer(key))
    assert answer.status_code == 413, answer.text
    assert _error(answer)["limit"] == 8 * 1024 * 1024
    assert "8,388,608 bytes" in _error(answer)["message"]
    # The remote client refuses the same call with the same error, before sending it.
    with RemoteMemory(served.url, key.key, ns=ns) as remote:
        with pytest.raises(RequestTooLargeError, match="at most 1,000") as refused:
            remote.ingest(many)
        assert refused.value.limit == MAX_CALL_ITEMS
    assert _nodes(graph, ns) == 0


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/facts", {"text": "Ada likes tea.", "tags": "x"}, "tags"),
        ("/facts", {"text": "Ada likes tea.", "supersedes": "id"}, "supersedes"),
        ("/facts", {"text": "Ada likes tea.", "pinned": "true"}, "pinned"),
        ("/facts/batch", {"facts": [{"text": "Ada likes tea.", "tags": "x"}]}, "facts.0.tags"),
        ("/messages", {"messages": [{"content": "hi", "role": "root"}]}, "messages.0.role"),
        ("/messages", {"messages": [{"content": "hi"}], "batch_size": "5"}, "batch_size"),
        ("/search", {"query": "tea", "k": True}, "k"),
        ("/context", {"query": "tea", "budget_tokens": "200"}, "budget_tokens"),
        ("/forget", {"reason": "asked", "everything": True, "confirm": "yes"}, "confirm"),
    ],
)
def test_a_value_of_the_wrong_type_is_422_naming_its_field_and_writes_nothing(
    served: Served, admin: Memory, graph: Graph, ns: str, path: str, body: Any, field: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    answer = post(f"{served.url}/v1/namespaces/{ns}{path}", json=body, headers=bearer(key))
    assert answer.status_code == 422, answer.text
    error = _error(answer)
    assert error["type"] == "InvalidInputError"
    assert error["message"].startswith(f"{field}: "), error
    assert _nodes(graph, ns) == 0


def test_a_call_within_the_bounds_is_served(served: Served, admin: Memory, ns: str) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    api = f"{served.url}/v1/namespaces/{ns}"
    messages = [
        {"content": "I adopted a dog.", "occurred_at": "2026-03-01T09:00:00+01:00"},
        {"content": "What is its name?", "role": "assistant", "occurred_at": "2026-03-01"},
    ]
    stored = post(api + "/messages", json={"messages": messages}, headers=bearer(key))
    assert stored.status_code == 201, stored.text
    assert [e["role"] for e in stored.json()["episodes"]] == ["user", "assistant"]
    assert stored.json()["episodes"][0]["occurred_at"].startswith("2026-03-01T08:00:00")
    facts = [{"text": "The dog is called Rex.", "tags": ["pets"]}, {"text": "Rex is two."}]
    written = post(api + "/facts/batch", json={"facts": facts}, headers=bearer(key))
    assert written.status_code == 201, written.text
    found = post(
        api + "/search", json={"query": "dog", "k": 5, "tags": ["pets"]}, headers=bearer(key)
    )
    assert [h["text"] for h in found.json()["hits"]] == ["The dog is called Rex."]


def _exchange(port: int, data: bytes) -> bytes:
    """``data`` sent on one raw connection, and all the server sends back until it closes the
    connection (a timeout error if it keeps it open)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65_536):
            received += chunk
    return received


def test_content_length_with_transfer_encoding_is_400_and_the_connection_closed(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    key = new_key(admin, "write", namespaces=[ns])
    path = f"/v1/namespaces/{ns}/facts"

    def request(body: bytes, framing: str) -> bytes:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key.key}\r\n"
            f"Content-Type: application/json\r\n{framing}\r\n"
        )
        return head.encode() + body

    first = json.dumps({"text": "Ada likes tea."}).encode()
    smuggled = json.dumps({"text": "Ada likes coffee."}).encode()
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(first), first)
    second = request(smuggled, f"Content-Length: {len(smuggled)}\r\nConnection: close\r\n")
    # Content-Length covers the whole payload, Transfer-Encoding only its first request.
    payload = chunked + second
    framing = f"Content-Length: {len(payload)}\r\nTransfer-Encoding: chunked\r\n"
    answer = _exchange(served.port, request(payload, framing))
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # the smuggled request was not served
    assert b"Content-Length and Transfer-Encoding" in answer
    assert _nodes(graph, ns) == 0
    # Either framing alone is served.
    alone = _exchange(
        served.port, request(chunked, "Transfer-Encoding: chunked\r\nConnection: close\r\n")
    )
    assert alone.startswith(b"HTTP/1.1 201 "), alone
    assert _exchange(served.port, second).startswith(b"HTTP/1.1 201 ")
    assert _nodes(graph, ns, ":Fact") == 2
