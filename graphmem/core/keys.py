"""API keys as plans: create (the secret shown once, stored as a hash), list, revoke, and the
check a request's key must pass. Keys are the service's, not a tenant's: their statements name
no namespace, and no namespace's listing, export or drop sees them."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import get_args

from graphmem.core.base import CoreBase
from graphmem.core.checks import aware, checked_flag, checked_label, namespace
from graphmem.core.plans import Plan, Rows, Run, Transaction, Work, single
from graphmem.errors import AuthenticationError, InvalidInputError
from graphmem.models.keys import ApiKey, NewKey, Role
from graphmem.store.cypher import query
from graphmem.store.schema import SCHEMA_KEY

#: What a key looks like: ``gmk_``, 12 hex digits of id, ``_``, the secret.
KEY_PATTERN = re.compile(r"gmk_([0-9a-f]{12})_([A-Za-z0-9_-]{32,64})")
#: A key's name: it becomes the actor of the key's changes, so it is one plain word of
#: letters, digits and . _ - : @ and never one of graphmem's own actors, a run id or a key id.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
_RESERVED = frozenset({"api", "user", "mcp", "extractor", "system", "graphmem"})
_ID_SHAPES = re.compile(
    r"[0-9a-f]{12}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
#: A namespace prefix: empty (every namespace), or the start of a namespace name.
_PREFIX = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9._:@-]*)?")


def key_hash(key_id: str, secret: str) -> str:
    """The hash the graph keeps of a key's secret. The secret is 256 random bits, so one
    SHA-256 is enough: there is nothing to guess that a slow hash would protect."""
    return hashlib.sha256(f"{key_id}:{secret}".encode()).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


def _name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInputError(
            f"key name {name!r}: 1 to 128 letters, digits and . _ - : @, starting with a letter "
            "or digit (the name is the actor of the key's changes)"
        )
    if name.lower() in _RESERVED or _ID_SHAPES.fullmatch(name.lower()):
        raise InvalidInputError(
            f"key name {name!r} is one of graphmem's own actors or looks like an id: choose "
            "another (the name is the actor of the key's changes)"
        )
    return name


def _scope(namespaces: Iterable[str], prefix: str | None) -> tuple[list[str], str | None]:
    if isinstance(namespaces, str):
        namespaces = [namespaces]
    names = sorted({namespace(n, None) for n in namespaces})
    if prefix is not None and (not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix)):
        raise InvalidInputError(
            f"prefix {prefix!r}: a namespace prefix is letters, digits and . _ - : @, "
            "starting with a letter or digit ('' opens every namespace)"
        )
    if not names and prefix is None:
        raise InvalidInputError(
            "a key needs namespaces, a namespace prefix, or both (prefix '' opens every namespace)"
        )
    return names, prefix


class KeyPlans(CoreBase):
    """API keys: :meth:`create_key`, :meth:`keys`, :meth:`revoke_key`, :meth:`check_key`."""

    def create_key(
        self,
        name: str,
        *,
        role: Role,
        namespaces: Iterable[str] = (),
        prefix: str | None = None,
        expires_at: datetime | str | None = None,
    ) -> Plan[NewKey]:
        name = _name(name)
        if role not in get_args(Role):
            raise InvalidInputError(f"role must be read, write or admin, got {role!r}")
        names, prefix = _scope(namespaces, prefix)
        now = _now()
        expires = aware("expires_at", expires_at)
        if expires is not None and expires <= now:
            raise InvalidInputError(f"expires_at ({expires.isoformat()}) is not in the future")
        key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        params = {
            "id": key_id,
            "name": name,
            "hash": key_hash(key_id, secret),
            "role": role,
            "namespaces": names,
            "prefix": prefix,
            "created_at": now,
            "expires_at": expires,
        }

        def work() -> Work[Rows]:
            yield Run(query("key_lock"), {"key": SCHEMA_KEY})
            (taken,) = yield Run(query("key_name_taken"), {"name": name, "now": now})
            if taken["taken"]:
                raise InvalidInputError(
                    f"a live key is already named {name!r}: revoke it first, or choose another "
                    "name (the name is the actor of the key's changes)"
                )
            rows: Rows = yield Run(query("key_create"), params)
            return rows

        rows: Rows = yield Transaction("write", work)
        return NewKey(key=f"gmk_{key_id}_{secret}", api_key=ApiKey.model_validate(rows[0]["key"]))

    def keys(self, *, include_revoked: bool = False) -> Plan[list[ApiKey]]:
        params = {"include_revoked": checked_flag("include_revoked", include_revoked)}
        rows: Rows = yield Transaction("read", lambda: single(Run(query("key_list"), params)))
        return [ApiKey.model_validate(r["key"]) for r in rows]

    def revoke_key(self, name: str) -> Plan[list[ApiKey]]:
        """Revokes the live keys with this name (or id); refuses a name that has none."""
        name = checked_label("name", name)
        params = {"name": name, "at": _now()}
        rows: Rows = yield Transaction("write", lambda: single(Run(query("key_revoke"), params)))
        if not rows:
            raise InvalidInputError(f"no live key is named {name!r} or has that id")
        return [ApiKey.model_validate(r["key"]) for r in rows]

    def check_key(self, key: str) -> Plan[ApiKey]:
        """The live key whose secret ``key`` is; an AuthenticationError otherwise (one message
        for every failure but expiry and revocation, so that ids cannot be probed)."""
        found = KEY_PATTERN.fullmatch(key) if isinstance(key, str) else None
        if found is None:
            raise AuthenticationError("not a graphmem API key")
        key_id, secret = found.groups()
        params = {"id": key_id}
        rows: Rows = yield Transaction("read", lambda: single(Run(query("key_find"), params)))
        if not rows or not hmac.compare_digest(rows[0]["hash"], key_hash(key_id, secret)):
            raise AuthenticationError("unknown API key")
        api_key = ApiKey.model_validate(rows[0]["key"])
        if api_key.revoked_at is not None:
            raise AuthenticationError(f"the API key {api_key.name!r} was revoked")
        if not api_key.live(_now()):
            raise AuthenticationError(f"the API key {api_key.name!r} has expired")
        return api_key


__all__ = ["KEY_PATTERN", "KeyPlans", "key_hash"]
