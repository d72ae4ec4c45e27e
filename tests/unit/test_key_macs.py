"""The pure parts of API-key trust: the MAC over a key node (what it covers, rotation), the
service secret's file, and the in-memory key ids that refuse made-up keys without a read."""

from __future__ import annotations

import asyncio
import stat
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from graphmem.client.service_secret import service_signer
from graphmem.core.key_mac import KeySigner
from graphmem.edge.keys import KeyCheck, KeyIds
from graphmem.errors import AuthenticationError, ConfigurationError
from graphmem.settings import load_settings

CURRENT, OLD, OTHER = "c" * 43, "o" * 43, "x" * 43


def _node(**changes: Any) -> dict[str, Any]:
    node = {
        "id": "0123456789ab",
        "name": "support-bot",
        "role": "read",
        "namespaces": ["user-42"],
        "prefix": None,
        "expires_at": datetime(2030, 1, 1, tzinfo=UTC),
        "hash": "ab" * 32,
    }
    return {**node, **changes}


def test_the_mac_covers_every_field_that_makes_the_key() -> None:
    signer = KeySigner(CURRENT)
    node = _node()
    signed = {**node, "mac": signer.sign(node)}
    assert signer.signature(signed) == "valid"
    edits = {
        "id": "ffffffffffff",
        "name": "admin-bot",
        "role": "admin",
        "namespaces": ["user-42", "user-43"],
        "prefix": "",
        "expires_at": None,
        "hash": "cd" * 32,
    }
    for field, value in edits.items():
        assert signer.signature({**signed, field: value}) == "invalid", field
    # The same moment in another zone is the same key; revocation is not covered.
    moved = node["expires_at"].astimezone(timezone(timedelta(hours=2)))
    assert signer.signature({**signed, "expires_at": moved}) == "valid"
    assert signer.signature({**signed, "revoked_at": datetime.now(UTC)}) == "valid"


def test_unsigned_foreign_and_malformed_macs() -> None:
    signer = KeySigner(CURRENT)
    node = _node()
    assert signer.signature(node) == "unsigned"
    assert signer.signature({**node, "mac": KeySigner(OTHER).sign(node)}) == "invalid"
    for mac in ("", "é" * 64, 42, ["x"]):
        assert signer.signature({**node, "mac": mac}) == "invalid", mac
    naive = {**node, "expires_at": datetime(2030, 1, 1), "mac": signer.sign(node)}
    assert signer.signature(naive) == "invalid"


def test_a_previous_secret_verifies_until_resigned() -> None:
    node = _node()
    old_mac = KeySigner(OLD).sign(node)
    rotating = KeySigner(CURRENT, [OLD])
    assert rotating.signature({**node, "mac": old_mac}) == "previous"
    assert rotating.signature({**node, "mac": rotating.sign(node)}) == "valid"
    assert KeySigner(CURRENT).signature({**node, "mac": old_mac}) == "invalid"
    with pytest.raises(ValueError, match="at least 32"):
        KeySigner("short")


def test_the_secret_file_is_made_once_private_and_shared(tmp_path: Path) -> None:
    path = tmp_path / "home" / "service-secret"
    settings = load_settings(service_secret_file=path)
    first = service_signer(settings)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    node = _node()
    mac = first.sign(node)
    # Another process (a new settings object) reads the same secret.
    again = service_signer(load_settings(service_secret_file=path))
    assert again.signature({**node, "mac": mac}) == "valid"
    # The secret given as a value wins over the file.
    given = service_signer(load_settings(service_secret_file=path, service_secret=OTHER))
    assert given.signature({**node, "mac": mac}) == "invalid"
    # Rotation: the file's secret as a previous one.
    secret = path.read_text().strip()
    rotated = service_signer(
        load_settings(service_secret=OTHER, service_secret_previous=f"{OLD},{secret}")
    )
    assert rotated.signature({**node, "mac": mac}) == "previous"


def test_a_bad_secret_is_a_configuration_error(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("too-short\n")
    with pytest.raises(ConfigurationError, match="at least 32"):
        service_signer(load_settings(service_secret_file=short))
    with pytest.raises(ConfigurationError, match="SERVICE_SECRET"):
        load_settings(service_secret="short")
    with pytest.raises(ConfigurationError, match="SERVICE_SECRET_PREVIOUS"):
        load_settings(service_secret_previous=f"{OLD},short")
    blocked = tmp_path / "file"
    blocked.write_text("x")
    with pytest.raises(ConfigurationError, match="cannot read or create"):
        service_signer(load_settings(service_secret_file=blocked / "service-secret"))


def test_key_ids_answer_only_requests_that_arrived_before_their_read() -> None:
    ids = KeyIds(refresh_seconds=1.0)
    assert not ids.known("0123456789ab") and not ids.answers(0.0) and ids.wait(5.0) == 0.0
    ids.tried_at = 10.0
    ids.update(frozenset({"0123456789ab"}), 10.0)
    assert ids.known("0123456789ab") and not ids.known("ffffffffffff")
    assert ids.answers(9.5) and ids.answers(10.0) and not ids.answers(10.1)
    assert ids.wait(10.25) == pytest.approx(0.75) and ids.wait(12.0) == 0.0
    ids.update(frozenset(f"{n:012x}" for n in range(100_001)), 11.0)
    assert ids.overflow and ids.known("ffffffffffff")


class _FakeKeys:
    """Stands in for ``memory.keys``: counts the reads of ids and the checks."""

    def __init__(self) -> None:
        self.ids_read = 0
        self.checked = 0
        self.known: set[str] = set()

    async def ids(self) -> frozenset[str]:
        self.ids_read += 1
        await asyncio.sleep(0.01)
        return frozenset(self.known)

    async def check(self, secret: str) -> Any:
        self.checked += 1
        raise AuthenticationError("unknown API key")


class _FakeMemory:
    def __init__(self) -> None:
        self.keys = _FakeKeys()


def test_a_flood_of_made_up_keys_reads_the_ids_once_a_second() -> None:
    memory = _FakeMemory()
    check = KeyCheck(memory, id_refresh_seconds=0.5)  # type: ignore[arg-type]

    async def flood() -> list[BaseException | Any]:
        keys = [f"gmk_{n:012x}_{'s' * 43}" for n in range(300)]
        return await asyncio.gather(*(check.key(k) for k in keys), return_exceptions=True)

    answers = asyncio.run(flood())
    assert all(isinstance(a, AuthenticationError) for a in answers)
    # Every request arrived before the first read began, so that one read answered them all.
    assert memory.keys.ids_read == 1 and check.counts.id_reads == 1
    assert memory.keys.checked == 0 and check.counts.unknown == 300
    # A key made meanwhile is found by the next read, which waits out the interval.
    memory.keys.known.add("00000000abcd")
    made = f"gmk_00000000abcd_{'s' * 43}"
    with pytest.raises(AuthenticationError):
        asyncio.run(check.key(made))
    assert memory.keys.ids_read == 2 and memory.keys.checked == 1
    with pytest.raises(AuthenticationError, match="not a graphmem API key"):
        asyncio.run(check.key("gmk_nothex"))
    assert memory.keys.ids_read == 2
