"""``memory.keys``: the API keys of ``graphmem serve``, kept in the graph (hashed, and signed
with the service secret, :mod:`graphmem.client.service_secret`).

:class:`Keys` serves :class:`~graphmem.client.Memory`, :class:`AsyncKeys` serves
:class:`~graphmem.client.AsyncMemory`, with the same methods. ``graphmem keys`` is the CLI."""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Protocol, TypeVar

from graphmem.core.key_mac import KeySigner
from graphmem.core.keys import KeyPlans
from graphmem.core.plans import Plan
from graphmem.models.keys import ApiKey, NewKey, Role

T = TypeVar("T")


class Runs(Protocol):
    """How the sync client carries out a plan."""

    def __call__(self, plan: Plan[T], /) -> T: ...


class RunsAsync(Protocol):
    """How the async client carries out a plan."""

    def __call__(self, plan: Plan[T], /) -> Awaitable[T]: ...


class Keys:
    """The API keys of a :class:`~graphmem.client.Memory` (``memory.keys``)."""

    def __init__(self, core: KeyPlans, run: Runs, signer: Callable[[], KeySigner]) -> None:
        self._core, self._run, self._signer = core, run, signer

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
                name,
                role=role,
                namespaces=namespaces,
                prefix=prefix,
                expires_at=expires_at,
                signer=self._signer(),
            )
        )

    def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """Every key without its secret, oldest first; revoked ones when asked for. Each says
        where its MAC stands (``signature``): only ``valid`` and ``previous`` keys work."""
        return self._run(self._core.keys(signer=self._signer(), include_revoked=include_revoked))

    def revoke(self, name: str) -> builtins.list[ApiKey]:
        """Revoke the live key with this name (or id); it stays listed, revoked."""
        return self._run(self._core.revoke_key(name))

    def check(self, key: str) -> ApiKey:
        """The live key whose secret ``key`` is; an AuthenticationError otherwise (also for a
        key node whose MAC does not verify under the service secret)."""
        return self._run(self._core.check_key(key, signer=self._signer()))

    def resign(self, *, unsigned: Iterable[str] = ()) -> builtins.list[ApiKey]:
        """Sign with the current service secret the keys signed with a previous one (after a
        rotation), and the live keys named in ``unsigned`` that have no MAC (made before
        MACs; review them with :meth:`list` first). Returns the keys signed now."""
        return self._run(self._core.resign_keys(signer=self._signer(), unsigned=unsigned))

    def ids(self) -> frozenset[str]:
        """The ids of every key node (revoked ones too): what a server keeps to refuse
        made-up keys without a read each."""
        return self._run(self._core.key_ids())


class AsyncKeys:
    """The API keys of an :class:`~graphmem.client.AsyncMemory` (``memory.keys``)."""

    def __init__(self, core: KeyPlans, run: RunsAsync, signer: Callable[[], KeySigner]) -> None:
        self._core, self._run, self._signer = core, run, signer

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
                name,
                role=role,
                namespaces=namespaces,
                prefix=prefix,
                expires_at=expires_at,
                signer=self._signer(),
            )
        )

    async def list(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """See :meth:`Keys.list`."""
        return await self._run(
            self._core.keys(signer=self._signer(), include_revoked=include_revoked)
        )

    async def revoke(self, name: str) -> builtins.list[ApiKey]:
        """See :meth:`Keys.revoke`."""
        return await self._run(self._core.revoke_key(name))

    async def check(self, key: str) -> ApiKey:
        """See :meth:`Keys.check`."""
        return await self._run(self._core.check_key(key, signer=self._signer()))

    async def resign(self, *, unsigned: Iterable[str] = ()) -> builtins.list[ApiKey]:
        """See :meth:`Keys.resign`."""
        return await self._run(self._core.resign_keys(signer=self._signer(), unsigned=unsigned))

    async def ids(self) -> frozenset[str]:
        """See :meth:`Keys.ids`."""
        return await self._run(self._core.key_ids())
