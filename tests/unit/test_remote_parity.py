"""The remote clients stand in for the library's: every method of RemoteMemory and
AsyncRemoteMemory that Memory or AsyncMemory also has takes the same parameters, defaults and
returns the same type (``Remote`` read away from the names), the flows of the service are all
there, and the two remote clients are twins as Memory and AsyncMemory are."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from graphmem.client import AsyncMemory, Memory
from graphmem.client.api_aio import AsyncAuditAPI as AsyncAudit
from graphmem.client.api_aio import AsyncAuditAPI as AsyncRemoteAudit
from graphmem.client.api_sync import AuditAPI as Audit
from graphmem.client.api_sync import AuditAPI as RemoteAudit
from graphmem.remote import AsyncRemoteMemory, RemoteMemory

#: What the remote clients must share with the library's: the flows the service serves.
SHARED = {
    "audit",
    "close",
    "confirm",
    "connect",
    "consolidate",
    "consolidation_runs",
    "context",
    "contradict",
    "drop_namespace",
    "export",
    "forget",
    "get",
    "history",
    "import_",
    "ingest",
    "namespaces",
    "pin",
    "recall",
    "remember",
    "remember_many",
    "resolve",
    "retract",
    "review",
    "stats",
    "undo",
    "verify_forgotten",
}
#: What only the remote clients have: where the server is, the request headers, and when a
#: write is sent again.
REMOTE_ONLY = {
    "bookmark",
    "client_options",
    "failure",
    "headers",
    "ns",
    "retry_after",
    "retry_delays",
    "timeout",
    "url",
}

#: Names of types read without ``Remote`` and, for the twins test, without ``Async``.
_REMOTE = re.compile(r"\bRemote(?=[A-Z])|(?<=Async)Remote(?=[A-Z])")
_ASYNC = re.compile(r"\bAsync(?=[A-Z])")


def _public(cls: type) -> dict[str, Any]:
    return {
        name: inspect.getattr_static(cls, name) for name in dir(cls) if not name.startswith("_")
    }


def _shape(member: Any, *names: re.Pattern[str]) -> str:
    """A member's kind and signature, with the given patterns read away from type names."""
    if isinstance(member, property) and member.fget is not None:
        text = "property -> " + str(inspect.signature(member.fget).return_annotation)
    else:
        text = f"{type(member).__name__} {inspect.signature(member)}"
    for pattern in names:
        text = pattern.sub("", text)
    return text


@pytest.mark.parametrize(
    ("remote", "local"),
    [
        (RemoteMemory, Memory),
        (AsyncRemoteMemory, AsyncMemory),
        (RemoteAudit, Audit),
        (AsyncRemoteAudit, AsyncAudit),
    ],
)
def test_what_the_remote_client_shares_has_the_librarys_signature(
    remote: type, local: type
) -> None:
    mine, theirs = _public(remote), _public(local)
    shared = set(mine) & set(theirs)
    if remote in (RemoteMemory, AsyncRemoteMemory):
        assert shared >= SHARED, f"missing: {sorted(SHARED - shared)}"
        assert set(mine) - shared <= REMOTE_ONLY, f"unexpected: {sorted(set(mine) - shared)}"
    else:
        assert set(mine) == set(theirs)
    differ = {
        name: (_shape(mine[name], _REMOTE), _shape(theirs[name]))
        for name in shared
        if callable(mine[name]) or isinstance(mine[name], property)
        if _shape(mine[name], _REMOTE) != _shape(theirs[name])
    }
    assert differ == {}


@pytest.mark.parametrize(
    ("sync", "aio"), [(RemoteMemory, AsyncRemoteMemory), (RemoteAudit, AsyncRemoteAudit)]
)
def test_the_remote_clients_are_twins(sync: type, aio: type) -> None:
    mine, theirs = _public(sync), _public(aio)
    assert sorted(mine) == sorted(theirs)
    differ = {
        name: (_shape(mine[name]), _shape(theirs[name], _ASYNC))
        for name in mine
        if callable(mine[name]) or isinstance(mine[name], property)
        if _shape(mine[name]) != _shape(theirs[name], _ASYNC)
    }
    assert differ == {}


@pytest.mark.parametrize("aio", [AsyncRemoteMemory, AsyncRemoteAudit])
def test_every_async_remote_method_is_awaited(aio: type) -> None:
    plain = {
        name
        for name, member in _public(aio).items()
        if inspect.isfunction(member) and not inspect.iscoroutinefunction(member)
    }
    assert plain <= {"client_options", "failure", "headers", "retry_after"}
