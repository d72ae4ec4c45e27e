"""The sync and async clients are twins: the same public names, and for each method the same
parameters, defaults and return type, the async one awaited. A method added to one client
only, or with another signature, fails here."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from graphmem.client import AsyncMemory, Memory
from graphmem.client.api_aio import AsyncAuditAPI as AsyncAudit
from graphmem.client.api_sync import AuditAPI as Audit

#: The async twin's names of types (``AsyncGraph``, ``AsyncAudit``), read as the sync ones.
_ASYNC_NAME = re.compile(r"\bAsync(?=[A-Z])")


def _public(cls: type) -> dict[str, Any]:
    return {
        name: inspect.getattr_static(cls, name) for name in dir(cls) if not name.startswith("_")
    }


def _shape(member: Any) -> str:
    """A member's kind and signature, with the async twin's names read as the sync ones."""
    if isinstance(member, property) and member.fget is not None:
        returns = inspect.signature(member.fget).return_annotation
        return "property -> " + _ASYNC_NAME.sub("", str(returns))
    func = member.__func__ if isinstance(member, classmethod | staticmethod) else member
    if not callable(func):
        return f"value {type(func).__name__}"
    return f"{type(member).__name__} {_ASYNC_NAME.sub('', str(inspect.signature(func)))}"


@pytest.mark.parametrize(("sync", "aio"), [(Memory, AsyncMemory), (Audit, AsyncAudit)])
def test_the_twins_have_the_same_public_signatures(sync: type, aio: type) -> None:
    mine, theirs = _public(sync), _public(aio)
    assert sorted(mine) == sorted(theirs)
    differ = {
        name: (_shape(mine[name]), _shape(theirs[name]))
        for name in mine
        if _shape(mine[name]) != _shape(theirs[name])
    }
    assert differ == {}


@pytest.mark.parametrize("aio", [AsyncMemory, AsyncAudit])
def test_every_async_method_is_awaited(aio: type) -> None:
    plain = {
        name
        for name, member in _public(aio).items()
        if inspect.isfunction(member) and not inspect.iscoroutinefunction(member)
    }
    assert plain == set()


def test_both_clients_open_the_graph_the_same_way() -> None:
    """Both open their graph through one method of the shared base: Graph.open, and
    AsyncGraph.open, which runs Graph.open's schema work before its async driver."""
    sync_source = inspect.getsource(Memory.connect)
    async_source = inspect.getsource(AsyncMemory.connect)
    assert "self._open_graph()" in sync_source
    assert "await self._open_async_graph()" in async_source
