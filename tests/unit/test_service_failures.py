"""The REST API answers what fails outside graphmem's own code in graphmem's error format: an
unknown route, a wrong method, a body that is not JSON, an unexpected exception."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from graphmem.edge.keys import SCOPE_KEY
from graphmem.models.keys import ApiKey
from graphmem.service.app import rest_api


class _Broken:
    """A client whose every method fails as no graphmem error does."""

    def __getattr__(self, name: str) -> Any:
        async def fail(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a bug, with an internal detail")

        return fail


def _client(key: ApiKey | None = None) -> TestClient:
    api = rest_api(_Broken())  # type: ignore[arg-type]
    if key is not None:

        async def keyed(scope: Any, receive: Any, send: Any) -> None:
            scope[SCOPE_KEY] = key
            await api(scope, receive, send)

        return TestClient(keyed, raise_server_exceptions=False)
    return TestClient(api, raise_server_exceptions=False)


def _admin() -> ApiKey:
    return ApiKey.model_validate(
        {
            "id": "k1",
            "name": "ops",
            "namespaces": ["n1"],
            "role": "admin",
            "created_at": "2026-01-01T00:00:00Z",
        }
    )


def test_an_unknown_route_is_a_not_found_error() -> None:
    answer = _client().get("/no/such/route")
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert error["type"] == "NotFoundError"
    assert "/no/such/route" in error["message"]


def test_a_wrong_method_is_405_naming_the_methods_the_route_takes() -> None:
    answer = _client().delete("/health")
    assert answer.status_code == 405
    assert answer.json()["error"]["type"] == "InvalidInputError"
    assert "DELETE is not allowed on /health; it answers GET" in answer.json()["error"]["message"]
    assert answer.headers["allow"] == "GET"


def test_a_body_that_is_not_json_names_the_place() -> None:
    answer = _client(_admin()).post(
        "/v1/namespaces/n1/facts",
        content=b'{"text":\n  "x",, }',
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["type"] == "InvalidInputError"
    assert error["message"] == (
        "the request body is not valid JSON: Expecting property name enclosed in double quotes"
        " at line 2 column 7"
    )


def test_an_unexpected_exception_is_500_without_its_detail() -> None:
    answer = _client(_admin()).get("/v1/namespaces/n1")
    assert answer.status_code == 500
    error = answer.json()["error"]
    assert error["type"] == "ServiceError"
    assert "internal detail" not in answer.text
    assert "/v1/namespaces/n1" in error["message"]
