"""The bounds and strictness of a call over the network, without a server: the REST request
bodies refuse what lax validation would coerce (naming the field) yet read times given as ISO
text, and the remote clients refuse an oversized call before sending it, with the error the
server would answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from graphmem.errors import RequestTooLargeError, ServiceError
from graphmem.models import Message
from graphmem.models.bounds import MAX_CALL_BYTES, MAX_CALL_ITEMS, check_call_size
from graphmem.models.requests import (
    ContextRequest,
    ForgetRequest,
    IngestRequest,
    RecallRequest,
    RememberManyRequest,
    RememberRequest,
)
from graphmem.models.wire import status_of
from graphmem.remote import RemoteMemory


@pytest.mark.parametrize(
    ("model", "body", "field"),
    [
        (RememberRequest, {"text": "x", "tags": "x"}, "tags"),
        (RememberRequest, {"text": "x", "supersedes": "id"}, "supersedes"),
        (RememberRequest, {"text": "x", "references": "id"}, "references"),
        (RememberRequest, {"text": "x", "allow_forgotten": 1}, "allow_forgotten"),
        (RememberRequest, {"text": "x", "pinned": "true"}, "pinned"),
        (RememberRequest, {"text": "x", "importance": True}, "importance"),
        (RememberManyRequest, {"facts": [{"text": "x", "contradicts": "id"}]}, "contradicts"),
        (RememberManyRequest, {"facts": [{"text": "x"}], "allow_forgotten": "no"}, "allow_"),
        (RecallRequest, {"query": "q", "k": True}, "k"),
        (RecallRequest, {"query": "q", "k": "5"}, "k"),
        (RecallRequest, {"query": "q", "k": 5.0}, "k"),
        (RecallRequest, {"query": "q", "include_retired": 1}, "include_retired"),
        (RecallRequest, {"query": "q", "tags": "x"}, "tags"),
        (ContextRequest, {"query": "q", "budget_tokens": "100"}, "budget_tokens"),
        (IngestRequest, {"messages": [{"content": "hi", "role": "root"}]}, "role"),
        (IngestRequest, {"messages": [{"content": 5}]}, "content"),
        (IngestRequest, {"messages": [{"content": "hi"}], "batch_size": "10"}, "batch_size"),
        (IngestRequest, {"messages": [{"content": "hi"}], "extract": "false"}, "extract"),
        (ForgetRequest, {"reason": "r", "ids": ["a"], "confirm": "true"}, "confirm"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_its_field(
    model: type[BaseModel], body: dict[str, Any], field: str
) -> None:
    # As the REST service validates a body (the JSON decoded, then validated), and as JSON.
    with pytest.raises(ValidationError) as decoded:
        model.model_validate(body)
    with pytest.raises(ValidationError) as text:
        model.model_validate_json(json.dumps(body))
    for caught in (decoded, text):
        fields = [".".join(str(p) for p in e["loc"]) for e in caught.value.errors()]
        assert any(field in f for f in fields), fields


def test_times_given_as_iso_text_and_the_usual_forms_are_still_read() -> None:
    body = {
        "messages": [
            {"content": "hi", "occurred_at": "2026-03-01T09:00:00+01:00", "role": "assistant"},
            {"content": "yo", "occurred_at": "2026-03-02", "role": None},
        ],
        "session_id": "s-1",
        "batch_size": 10,
        "extract": False,
    }
    for request in (
        IngestRequest.model_validate(body),
        IngestRequest.model_validate_json(json.dumps(body)),
    ):
        first, second = request.messages
        assert (
            first.occurred_at is not None
            and first.occurred_at.isoformat() == "2026-03-01T08:00:00+00:00"
        )
        assert second.role == "user" and second.occurred_at is not None
    fact = RememberRequest.model_validate(
        {"text": "x", "tags": ["a"], "supersedes": ["i"], "valid_from": "2026-03-01T09:00:00Z"}
    )
    assert fact.tags == ("a",) and fact.supersedes == ("i",) and fact.valid_from is not None
    recall = RecallRequest.model_validate({"query": "q", "k": 3, "min_score": 0, "as_of": "now"})
    assert recall.options() == {"k": 3, "min_score": 0.0, "as_of": "now"}


def test_the_library_keeps_its_own_forms_but_not_unknown_roles() -> None:
    # The library takes a lone string as one tag; a role is one of the chat formats'.
    from graphmem.models import FactInput

    assert FactInput(text="x", tags="a").tags == ("a",)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="role must be one of user, assistant"):
        Message(content="hi", role="root")


def test_the_call_size_check_names_the_limit_and_answers_413() -> None:
    check_call_size(MAX_CALL_ITEMS, MAX_CALL_BYTES)
    with pytest.raises(
        RequestTooLargeError, match="1,001 items in one call; at most 1,000"
    ) as items:
        check_call_size(MAX_CALL_ITEMS + 1, 0)
    assert items.value.limit == MAX_CALL_ITEMS and status_of(items.value) == 413
    with pytest.raises(RequestTooLargeError, match="bytes of text in one call") as text:
        check_call_size(1, MAX_CALL_BYTES + 1)
    assert text.value.limit == MAX_CALL_BYTES


@pytest.fixture
def sent() -> list[httpx.Request]:
    return []


@pytest.fixture
def remote(sent: list[httpx.Request]) -> Iterator[RemoteMemory]:
    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500, json={})

    transport = httpx.MockTransport(handler)
    with RemoteMemory("http://memory.test", "gmk_x_y", ns="n", transport=transport) as client:
        yield client


def test_the_remote_client_refuses_an_oversized_call_before_sending_it(
    remote: RemoteMemory, sent: list[httpx.Request]
) -> None:
    with pytest.raises(RequestTooLargeError, match="at most 1,000") as many:
        remote.ingest([f"message {i}" for i in range(MAX_CALL_ITEMS + 1)])
    assert many.value.limit == MAX_CALL_ITEMS
    with pytest.raises(RequestTooLargeError, match="bytes of text"):
        remote.ingest([{"content": "é" * 100_000} for _ in range(21)])  # 4.2 MB of UTF-8
    with pytest.raises(RequestTooLargeError, match="at most 1,000"):
        remote.remember_many([{"text": f"fact {i}"} for i in range(MAX_CALL_ITEMS + 1)])
    assert sent == []


def test_the_remote_client_sends_a_lone_string_as_the_list_the_library_reads(
    remote: RemoteMemory, sent: list[httpx.Request]
) -> None:
    with pytest.raises(ServiceError):  # the mock answers 500; the request is what counts
        remote.remember("x", tags="a", supersedes="abcdefgh")
    body = json.loads(sent[-1].content)
    assert body["tags"] == ["a"] and body["supersedes"] == ["abcdefgh"]
    with pytest.raises(ServiceError):
        remote.remember_many([{"text": "x", "references": "abcdefgh"}])
    assert json.loads(sent[-1].content)["facts"][0]["references"] == ["abcdefgh"]
