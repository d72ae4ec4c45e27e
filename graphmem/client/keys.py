"""``memory.keys``: the API keys of ``graphmem serve``, kept in the graph (hashed).

:class:`Keys` serves :class:`~graphmem.client.Memory`, :class:`AsyncKeys` serves
:class:`~graphmem.client.AsyncMemory`, with the same methods. ``graphmem keys`` is the CLI."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from datetime import datetime

from graphmem.client.audit import Runs, RunsAsync
from graphmem.core.keys import KeyPlans
from graphmem.models.keys import ApiKey, NewKey, Role


class Keys:
    """The API keys of a :class:`~graphmem.client.Memory` (``memory.keys``)."""

    def __init__(self, core: KeyPlans, run: Runs) -> None:
        self._core, self._run = core, run

    def create(
        self,
        name: str,
        *,
        role: Role,
        namespaces: Iterable[str] = (),
        prefix: str | None = None,
        expires_at: datetime | str | None = None,
    ) -> NewKey:
        """A new key named ``name`` (the actor of its changes; no other live key may have it)
        for ``namespaces`` and those starting with ``prefix`` (``""``: every namespace), with
        ``role``, until ``expires_at`` (None: until revoked). Its secret (``.key``) is shown
        only here: the graph keeps a hash."""
        return self._run(
            self._core.create_key(
                name, role=role, namespaces=namespaces, prefix=prefix, expires_at=expires_at
            )
        )

    def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """Every key without its secret, oldest first; revoked ones when asked for."""
        return self._run(self._core.keys(include_revoked=include_revoked))

    def revoke(self, name: str) -> builtins.list[ApiKey]:
        """Revoke the live key with this name (or id); it stays listed, revoked."""
        return self._run(self._core.revoke_key(name))

    def check(self, key: str) -> ApiKey:
        """The live key whose secret ``key`` is; an AuthenticationError otherwise."""
        return self._run(self._core.check_key(key))


class AsyncKeys:
    """The API keys of an :class:`~graphmem.client.AsyncMemory` (``memory.keys``)."""

    def __init__(self, core: KeyPlans, run: RunsAsync) -> None:
        self._core, self._run = core, run

    async def create(
        self,
        name: str,
        *,
        role: Role,
        namespaces: Iterable[str] = (),
        prefix: str | None = None,
        expires_at: datetime | str | None = None,
    ) -> NewKey:
        """See :meth:`Keys.create`."""
        return await self._run(
            self._core.create_key(
                name, role=role, namespaces=namespaces, prefix=prefix, expires_at=expires_at
            )
        )

    async def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """See :meth:`Keys.list`."""
        return await self._run(self._core.keys(include_revoked=include_revoked))

    async def revoke(self, name: str) -> builtins.list[ApiKey]:
        """See :meth:`Keys.revoke`."""
        return await self._run(self._core.revoke_key(name))

    async def check(self, key: str) -> ApiKey:
        """See :meth:`Keys.check`."""
        return await self._run(self._core.check_key(key))
