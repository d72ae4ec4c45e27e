"""API keys of ``graphmem serve``: who may call, on which namespaces, with which role.

A key is shown once, at creation, as ``gmk_<id>_<secret>``: the id finds the key, the secret
proves it; the graph keeps a hash of the secret, never the secret. A key's ``name`` is the
``actor`` of every change it makes, so audits and timelines say which agent did what."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from graphmem.models.fields import OutputModel, StoredDatetime

#: The shortest service secret (the one that signs API keys) accepted, in characters.
MIN_SECRET_CHARS = 32

Role = Literal["read", "write", "admin"]
#: Where a key's MAC stands: ``valid`` (under the current service secret), ``previous`` (under
#: a previous secret: still accepted; ``graphmem keys resign`` moves it to the current one),
#: ``unsigned`` (no MAC: a key made before MACs, or by hand) or ``invalid`` (a MAC that no
#: secret gives: forged, edited, or from another deployment). Only the first two are accepted.
Signature = Literal["valid", "previous", "unsigned", "invalid"]
#: Each role and the roles it includes: a write key also reads, an admin key also writes.
ROLE_RANK: dict[str, int] = {"read": 0, "write": 1, "admin": 2}


class ApiKey(OutputModel):
    """One API key as the graph holds it, without its secret.

    The key opens the namespaces in ``namespaces`` and every namespace whose name starts with
    ``prefix`` (either may be empty, not both). ``role``: ``read`` (recall, context, get,
    history, audits, review, export), ``write`` (also remember, ingest, contradictions,
    retractions, review confirmations, forget, consolidation and undo) or ``admin`` (also
    erase a whole namespace, import into one and drop one)."""

    id: str
    name: str
    role: Role
    namespaces: tuple[str, ...] = ()
    prefix: str | None = None
    created_at: StoredDatetime
    expires_at: StoredDatetime | None = None
    revoked_at: StoredDatetime | None = None
    signature: Signature | None = Field(
        None,
        description="Where the key's MAC stands: valid (the current service secret), previous "
        "(a previous one; `graphmem keys resign` moves it), unsigned or invalid (refused).",
    )

    def opens(self, ns: str) -> bool:
        """Whether the key's scope holds namespace ``ns``."""
        return ns in self.namespaces or (self.prefix is not None and ns.startswith(self.prefix))

    def allows(self, role: Role) -> bool:
        """Whether the key's role includes ``role``."""
        return ROLE_RANK[self.role] >= ROLE_RANK[role]

    def live(self, now: datetime) -> bool:
        """Neither revoked nor expired at ``now``."""
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    def scope(self) -> str:
        """The namespaces it opens, in words."""
        parts = list(self.namespaces)
        if self.prefix is not None:
            parts.append(f"{self.prefix}*")
        return ", ".join(parts)


class NewKey(OutputModel):
    """A key just created: the key, and its secret (``key``), shown this once."""

    key: str = Field(description="The secret to send as 'Authorization: Bearer <key>'.")
    api_key: ApiKey


__all__ = ["MIN_SECRET_CHARS", "ROLE_RANK", "ApiKey", "NewKey", "Role", "Signature"]
