"""API keys as plans: create (the secret shown once, stored as a hash, the node signed with the
service secret), list, revoke, resign, and the check a request's key must pass. Keys are the
service's, not a tenant's: their statements name no namespace, and no namespace's listing,
export or drop sees them.

A key node's MAC (:mod:`graphmem.core.key_mac`) is what makes it a key: a node without one
that verifies under the service secret is refused exactly as an unknown key is."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, get_args

from pydantic import ValidationError

from graphmem.core.base import CoreBase
from graphmem.core.checks import aware, checked_flag, checked_label, namespace
from graphmem.core.key_mac import KeySigner
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
#: The most key ids :meth:`KeyPlans.key_ids` reads at once.
MAX_KEY_IDS = 100_000


def key_hash(key_id: str, secret: str) -> str:
    """The hash the graph keeps of a key's secret. The secret is 256 random bits, so one
    SHA-256 is enough: there is nothing to guess that a slow hash would protect."""
    return hashlib.sha256(f"{key_id}:{secret}".encode()).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


def _same_hash(stored: Any, expected: str) -> bool:
    # compare_digest takes ASCII text only; a hash keys create did not write may be anything.
    return isinstance(stored, str) and stored.isascii() and hmac.compare_digest(stored, expected)


def _listed(row: dict[str, Any], signer: KeySigner) -> ApiKey:
    """A key as :meth:`KeyPlans.keys` lists it, with where its MAC stands."""
    return _as_key({**row["key"], "signature": signer.signature(_stored(row))})


def _as_key(fields: dict[str, Any]) -> ApiKey:
    try:
        return ApiKey.model_validate(fields)
    except ValidationError:
        # A node keys create did not write: shown as it is, so that it can be seen.
        return ApiKey.model_construct(**fields)


def _stored(row: dict[str, Any]) -> dict[str, Any]:
    """The properties a key's MAC covers, as a key_find or key_list row has them."""
    return {**row["key"], "hash": row["hash"], "mac": row["mac"]}


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


def _resignable(rows: Rows, signer: KeySigner, trusted: set[str]) -> list[dict[str, Any]]:
    """What :meth:`KeyPlans.resign_keys` signs: each key's id, its MAC now and its new one."""
    signs, named = [], set()
    for row in rows:
        stored, key = _stored(row), row["key"]
        signature = signer.signature(stored)
        names = {key.get("name"), key.get("id")} & trusted
        live = key.get("revoked_at") is None
        if names and live:
            named |= names
            if signature != "unsigned":
                raise InvalidInputError(
                    f"the key {key.get('name')!r} ({key.get('id')}) is {signature}, not unsigned: "
                    "only a key without a MAC is signed by name (a key whose MAC no secret gives "
                    "was forged or edited, or comes from another deployment: revoke it and "
                    "create a new one)"
                )
        if signature == "previous" or (names and live):
            signs.append({"id": key["id"], "old": stored["mac"], "mac": signer.sign(stored)})
    missing = sorted(trusted - named)
    if missing:
        raise InvalidInputError(
            f"no live key is named {', '.join(map(repr, missing))} or has that id: nothing "
            "was signed (graphmem keys list shows the unsigned keys)"
        )
    return signs


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
        signer: KeySigner,
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
        params["mac"] = signer.sign(params)

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
        made = ApiKey.model_validate({**rows[0]["key"], "signature": "valid"})
        return NewKey(key=f"gmk_{key_id}_{secret}", api_key=made)

    def keys(self, *, signer: KeySigner, include_revoked: bool = False) -> Plan[list[ApiKey]]:
        """Every key, each with where its MAC stands (``signature``)."""
        params = {"include_revoked": checked_flag("include_revoked", include_revoked)}
        rows: Rows = yield Transaction("read", lambda: single(Run(query("key_list"), params)))
        return [_listed(r, signer) for r in rows]

    def key_ids(self) -> Plan[frozenset[str]]:
        """The ids of every key node, revoked ones too (at most :data:`MAX_KEY_IDS`; more
        come back as MAX_KEY_IDS + 1 ids, which says that there are more)."""
        params = {"limit": MAX_KEY_IDS + 1}
        rows: Rows = yield Transaction("read", lambda: single(Run(query("key_ids"), params)))
        return frozenset(r["id"] for r in rows if isinstance(r["id"], str))

    def revoke_key(self, name: str) -> Plan[list[ApiKey]]:
        """Revokes the live keys with this name (or id); refuses a name that has none."""
        name = checked_label("name", name)
        params = {"name": name, "at": _now()}
        rows: Rows = yield Transaction("write", lambda: single(Run(query("key_revoke"), params)))
        if not rows:
            raise InvalidInputError(f"no live key is named {name!r} or has that id")
        return [_as_key(r["key"]) for r in rows]

    def resign_keys(self, *, signer: KeySigner, unsigned: Iterable[str] = ()) -> Plan[list[ApiKey]]:
        """Sign with the current service secret every key whose MAC verifies under a previous
        one, and the live keys named (or with the id) in ``unsigned`` that have no MAC at all
        (keys made before MACs, which an operator has reviewed and trusts). A name in
        ``unsigned`` that is no live unsigned key refuses the whole call (InvalidInputError)
        and changes nothing. Returns the keys signed now."""
        if isinstance(unsigned, str):
            unsigned = [unsigned]
        trusted = {checked_label("unsigned", n) for n in unsigned}

        def work() -> Work[Rows]:
            yield Run(query("key_lock"), {"key": SCHEMA_KEY})
            rows: Rows = yield Run(query("key_list"), {"include_revoked": True})
            signs = _resignable(rows, signer, trusted)
            if not signs:
                return []
            signed: Rows = yield Run(query("key_sign"), {"signs": signs})
            return signed

        rows: Rows = yield Transaction("write", work)
        return [_as_key({**r["key"], "signature": "valid"}) for r in rows]

    def check_key(self, key: str, *, signer: KeySigner) -> Plan[ApiKey]:
        """The live key whose secret ``key`` is; an AuthenticationError otherwise (one message
        for every failure but expiry and revocation, so that ids cannot be probed: a key node
        without a MAC that verifies is an unknown key)."""
        found = KEY_PATTERN.fullmatch(key) if isinstance(key, str) else None
        if found is None:
            raise AuthenticationError("not a graphmem API key")
        key_id, secret = found.groups()
        params = {"id": key_id}
        rows: Rows = yield Transaction("read", lambda: single(Run(query("key_find"), params)))
        if (
            len(rows) != 1
            or not _same_hash(rows[0]["hash"], key_hash(key_id, secret))
            or (signature := signer.signature(_stored(rows[0]))) not in ("valid", "previous")
        ):
            raise AuthenticationError("unknown API key")
        api_key = ApiKey.model_validate({**rows[0]["key"], "signature": signature})
        if api_key.revoked_at is not None:
            raise AuthenticationError(f"the API key {api_key.name!r} was revoked")
        if not api_key.live(_now()):
            raise AuthenticationError(f"the API key {api_key.name!r} has expired")
        return api_key


__all__ = ["KEY_PATTERN", "MAX_KEY_IDS", "KeyPlans", "key_hash"]
