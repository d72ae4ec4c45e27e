"""The service's pure parts: errors over HTTP both ways, the request bodies against the
library's keyword arguments, and what a key opens."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphmem import errors
from graphmem.core.forget.plan import ForgetOptions
from graphmem.core.keys import KEY_PATTERN, key_hash
from graphmem.core.recall.scope import ContextOptions, RecallOptions
from graphmem.edge.keys import bearer, require
from graphmem.models.keys import ApiKey
from graphmem.models.requests import ContextRequest, ForgetRequest, RecallRequest
from graphmem.models.wire import error_body, error_reply, raise_error, status_of


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.AuthenticationError("no key"), 401),
        (errors.PermissionDeniedError("not yours"), 403),
        (errors.NotFoundError("no fact", ids=("a", "b")), 404),
        (errors.UndoRefusedError("later changes", blockers=("x",)), 409),
        (errors.NamespaceNotEmptyError("full", ns="n", counts={"Fact": 2}), 409),
        (errors.RetiredFactError("retired"), 422),
        (errors.InvalidInputError("bad"), 422),
        (errors.TransientDatabaseError("busy"), 503),
        (errors.TransactionTimeoutError("slow"), 504),
        (errors.SchemaError("broken"), 500),
    ],
)
def test_an_error_crosses_http_as_the_same_class_with_its_details(
    error: errors.GraphmemError, status: int
) -> None:
    assert status_of(error) == status
    body = error_body(error)
    with pytest.raises(type(error)) as raised:
        raise_error(status, body)
    assert str(raised.value) == str(error)
    for name in ("ids", "blockers", "ns", "counts"):
        if hasattr(error, name):
            assert getattr(raised.value, name) == getattr(error, name)


def test_an_error_reply_asks_for_a_bearer_key_only_on_401() -> None:
    refused = errors.AuthenticationError("no key")
    assert error_reply(refused) == (401, error_body(refused), {"www-authenticate": "Bearer"})
    broken = errors.SchemaError("index 7 is missing")
    status, body, headers = error_reply(broken, "the server could not complete it")
    assert (status, headers) == (500, {})
    assert body == {"error": {"type": "SchemaError", "message": "the server could not complete it"}}


def test_an_answer_that_is_not_a_graphmem_error_is_a_service_error() -> None:
    with pytest.raises(errors.ServiceError) as raised:
        raise_error(502, "<html>Bad Gateway</html>")
    assert raised.value.status == 502
    with pytest.raises(errors.ServiceError):
        raise_error(500, {"error": {"type": "SystemExit", "message": "no"}})


def test_the_request_bodies_take_the_library_keyword_arguments() -> None:
    recall = set(RecallRequest.model_fields) - {"query"}
    assert recall == set(RecallOptions.__annotations__)
    context = set(ContextRequest.model_fields) - {"query", "budget_tokens"}
    assert context == set(ContextOptions.__annotations__)
    # progress is a callable and actor is the key's name: neither travels.
    forget = set(ForgetRequest.model_fields) - {"reason", "ids", "confirm"}
    assert forget == set(ForgetOptions.__annotations__) - {"progress", "actor", "dry_run"}
    given = RecallRequest(query="q", k=5, as_of="3 days ago")
    assert given.options() == {"k": 5, "as_of": "3 days ago"}


def _key(**fields: object) -> ApiKey:
    base: dict[str, object] = {
        "id": "0123456789ab",
        "name": "bot",
        "role": "write",
        "created_at": datetime.now(UTC),
    }
    return ApiKey.model_validate(base | fields)


def test_what_a_key_opens_and_allows() -> None:
    key = _key(namespaces=("user-1",), prefix="team-")
    assert key.opens("user-1") and key.opens("team-a") and not key.opens("user-2")
    assert not key.opens("tea")
    assert _key(prefix="").opens("anything")
    assert key.allows("read") and key.allows("write") and not key.allows("admin")
    require(key, "team-b", "write")
    with pytest.raises(errors.PermissionDeniedError, match="does not open"):
        require(key, "user-2", "read")
    with pytest.raises(errors.PermissionDeniedError, match="role"):
        require(key, "user-1", "admin")
    now = datetime.now(UTC)
    assert not _key(expires_at=now - timedelta(seconds=1)).live(now)
    assert not _key(revoked_at=now).live(now)


def test_the_authorization_header() -> None:
    assert bearer({"authorization": "Bearer gmk_x"}) == "gmk_x"
    assert bearer({"authorization": "bearer  gmk_x "}) == "gmk_x"
    for headers in ({}, {"authorization": "Basic abc"}, {"authorization": "Bearer "}):
        with pytest.raises(errors.AuthenticationError):
            bearer(headers)


def test_a_key_is_its_id_and_a_secret_and_the_hash_binds_both() -> None:
    found = KEY_PATTERN.fullmatch("gmk_0123456789ab_" + "A" * 43)
    assert found is not None
    assert key_hash("0123456789ab", "s") != key_hash("0123456789ac", "s")
