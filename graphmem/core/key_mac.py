"""The MAC each API key node carries: HMAC-SHA256, under the service secret, over what makes
the key what it is (its id, name, role, namespaces, prefix, expiry and the hash of its secret).

The secret is the service's, never the graph's (``GRAPHMEM_SERVICE_SECRET`` or its file, see
:mod:`graphmem.client.service_secret`), so a key node that ``keys create`` did not write (one
an import or a hand-written Cypher statement made, one copied from another deployment, one
whose role, scope or expiry was edited) has no MAC that verifies, and its key is refused as an
unknown one. Revocation is not part of the MAC: a revoked key is refused by its own check."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from graphmem.models.keys import MIN_SECRET_CHARS, Signature

#: Separates these MACs from any other use of the same secret; the number is the format's.
_DOMAIN = "graphmem-api-key-mac-v1"


def _moment(value: Any) -> str | None:
    """A stored time as one fixed text (UTC, microseconds), whichever type it came in."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        value = value.to_native()  # a neo4j.time.DateTime
    if value.tzinfo is None:
        raise ValueError("a key's expiry must carry a time zone")
    moment: str = value.astimezone(UTC).isoformat(timespec="microseconds")
    return moment


def mac_message(fields: Mapping[str, Any]) -> bytes:
    """The bytes a key's MAC covers, from its stored properties (``id``, ``name``, ``role``,
    ``namespaces``, ``prefix``, ``expires_at``, ``hash``): one canonical JSON text."""
    namespaces = fields.get("namespaces")
    payload = [
        _DOMAIN,
        fields.get("id"),
        fields.get("name"),
        fields.get("role"),
        list(namespaces) if namespaces is not None else None,
        fields.get("prefix"),
        _moment(fields.get("expires_at")),
        fields.get("hash"),
    ]
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode()


class KeySigner:
    """Signs key nodes with the current service secret and verifies them under it or any of
    the previous ones (a rotation in progress)."""

    def __init__(self, current: str, previous: Sequence[str] = ()) -> None:
        for secret in (current, *previous):
            if len(secret) < MIN_SECRET_CHARS:
                raise ValueError(f"a service secret needs at least {MIN_SECRET_CHARS} characters")
        self._current = current.encode()
        self._previous = tuple(s.encode() for s in previous if s != current)

    def sign(self, fields: Mapping[str, Any]) -> str:
        """The MAC of a key node with these properties, under the current secret."""
        return _mac(self._current, mac_message(fields))

    def signature(self, fields: Mapping[str, Any]) -> Signature:
        """Where the MAC stored in ``fields["mac"]`` stands (see :data:`Signature`)."""
        stored = fields.get("mac")
        if stored is None:
            return "unsigned"
        try:
            message = mac_message(fields)
        except (TypeError, ValueError, AttributeError):
            # A property of a shape keys create never writes: no MAC covers it.
            return "invalid"
        if not isinstance(stored, str) or not stored.isascii():
            return "invalid"  # (compare_digest takes ASCII text only)
        if hmac.compare_digest(stored, _mac(self._current, message)):
            return "valid"
        if any(hmac.compare_digest(stored, _mac(s, message)) for s in self._previous):
            return "previous"
        return "invalid"


def _mac(secret: bytes, message: bytes) -> str:
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


__all__ = ["KeySigner", "Signature", "mac_message"]
