"""Only keys that `keys create` made are accepted, in the real Neo4j: a key node written by
hand, edited, or signed with another deployment's secret is an unknown key (401 at the door of
`graphmem serve`, REST and MCP); a rotated secret keeps keys working and `keys resign` moves
them; made-up key ids cost the database next to no reads."""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from pydantic import SecretStr

from graphmem.cli import main
from graphmem.client import AsyncMemory, Memory
from graphmem.client.graph import Graph
from graphmem.core.keys import key_hash
from graphmem.edge.keys import KeyCheck, KeyGate
from graphmem.embed.embedder import Embedder
from graphmem.errors import AuthenticationError
from graphmem.settings import GraphmemSettings
from tests.helpers import cli_env
from tests.service import Served, bearer, new_key, serve_process

OLD, NEW, FOREIGN = (secrets.token_urlsafe(32) for _ in range(3))
post = httpx.post


def _with_secret(settings: GraphmemSettings, secret: str, *previous: str) -> GraphmemSettings:
    update: dict[str, Any] = {"service_secret": SecretStr(secret)}
    if previous:
        update["service_secret_previous"] = SecretStr(",".join(previous))
    return settings.model_copy(update=update)


def _forge(graph: Graph, *, role: str = "admin", **extra: Any) -> str:
    """A key node written by hand with Cypher, as someone holding the database password
    would: its hash computed, every property keys create writes (and ``extra``)."""
    key_id, secret = uuid.uuid4().hex[:12], secrets.token_urlsafe(32)
    props = {
        "id": key_id,
        "name": f"forged-{key_id}",
        "hash": key_hash(key_id, secret),
        "role": role,
        "namespaces": [],
        "prefix": "",
        "created_at": datetime.now(UTC),
        "expires_at": None,
        **extra,
    }
    with graph.driver.session(database=graph.database) as session:
        session.run("CREATE (k:GraphmemApiKey) SET k = $props", props=props).consume()
    return f"gmk_{key_id}_{secret}"


def _set(graph: Graph, key_id: str, assignment: str) -> None:
    with graph.driver.session(database=graph.database) as session:
        session.run(f"MATCH (k:GraphmemApiKey {{id: $id}}) SET {assignment}", id=key_id).consume()


def _signature(memory: Memory, key_id: str) -> str | None:
    found = [k for k in memory.keys.list(include_revoked=True) if k.id == key_id]
    assert len(found) == 1
    return found[0].signature


def test_a_key_node_keys_create_did_not_write_is_refused(
    admin: Memory, graph: Graph, ns: str
) -> None:
    made = new_key(admin, "read", namespaces=[ns])
    assert admin.keys.check(made.key).signature == "valid"
    # Written by hand: no MAC, a MAC copied from a real key, a MAC of another deployment.
    unsigned = _forge(graph)
    copied = _forge(graph, mac=_mac_of(graph, made.api_key.id))
    foreign = _forge(graph, mac="00" * 32)
    for key in (unsigned, copied, foreign):
        with pytest.raises(AuthenticationError, match=r"^unknown API key$"):
            admin.keys.check(key)
    listed = {k.id: k.signature for k in admin.keys.list()}
    assert listed[unsigned.split("_")[1]] == "unsigned"
    assert listed[copied.split("_")[1]] == listed[foreign.split("_")[1]] == "invalid"
    # An edited role (or scope, or expiry) breaks the MAC; revocation is checked apart.
    _set(graph, made.api_key.id, "k.role = 'admin'")
    with pytest.raises(AuthenticationError, match=r"^unknown API key$"):
        admin.keys.check(made.key)
    _set(graph, made.api_key.id, "k.role = 'read'")
    assert admin.keys.check(made.key).role == "read"
    for edit in ("k.prefix = ''", "k.namespaces = k.namespaces + 'x'", "k.expires_at = null"):
        _set(graph, made.api_key.id, edit)
        with pytest.raises(AuthenticationError, match=r"^unknown API key$"):
            admin.keys.check(made.key)


def _mac_of(graph: Graph, key_id: str) -> str:
    with graph.driver.session(database=graph.database) as session:
        record = session.run("MATCH (k:GraphmemApiKey {id: $id}) RETURN k.mac AS m", id=key_id)
        mac = record.single()
    assert mac is not None and isinstance(mac["m"], str) and len(mac["m"]) == 64
    return str(mac["m"])


def test_forged_and_edited_keys_are_refused_at_the_door(
    served: Served, admin: Memory, graph: Graph, ns: str
) -> None:
    writer = new_key(admin, "write", namespaces=[ns])
    edited = new_key(admin, "read", namespaces=[ns])
    _set(graph, edited.api_key.id, "k.role = 'admin'")
    forged = _forge(graph)
    other = Memory(_with_secret(admin.settings, FOREIGN), target=graph.target)
    with other:
        foreign = new_key(other, "admin", prefix="")
    search = f"{served.url}/v1/namespaces/{ns}/search"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    answer = post(search, json={"query": "x"}, headers=bearer(writer), timeout=120)
    assert answer.status_code == 200, answer.text
    mcp = post(f"{served.url}/mcp", json=ping, headers={**accept, **bearer(writer)}, timeout=120)
    assert mcp.is_success, mcp.text
    for key in (forged, edited.key, foreign.key):
        answer = post(search, json={"query": "x"}, headers=bearer(key), timeout=120)
        assert answer.status_code == 401, answer.text
        # The same answer as a key no node has: nothing says which.
        assert answer.json()["error"]["message"] == "unknown API key"
        mcp = post(f"{served.url}/mcp", json=ping, headers={**accept, **bearer(key)}, timeout=120)
        assert mcp.status_code == 401


def test_a_rotated_secret_keeps_keys_working_and_resign_moves_them(
    graph: Graph, admin: Memory, ns: str
) -> None:
    env = {**cli_env(graph), "GRAPHMEM_SERVICE_SECRET": OLD}
    made = CliRunner().invoke(main, ["keys", "create", f"rot-{ns}", "--ns", ns, "--json"], env=env)
    assert made.exit_code == 0, made.output
    key, key_id = json.loads(made.stdout)["key"], json.loads(made.stdout)["id"]
    rotating = {**env, "GRAPHMEM_SERVICE_SECRET": NEW, "GRAPHMEM_SERVICE_SECRET_PREVIOUS": OLD}
    with serve_process(graph, env=rotating) as running:
        search = f"{running.url}/v1/namespaces/{ns}/search"
        assert post(search, json={"query": "x"}, headers=bearer(key), timeout=120).is_success
        listed = CliRunner().invoke(main, ["keys", "list", "--json"], env=rotating)
        mine = [k for k in json.loads(listed.stdout) if k["id"] == key_id]
        assert mine[0]["signature"] == "previous"
        resigned = CliRunner().invoke(main, ["keys", "resign", "--json"], env=rotating)
        assert resigned.exit_code == 0, resigned.output
        assert key_id in {k["id"] for k in json.loads(resigned.stdout)}
        # Signed with the new secret now: working without the old one, refused with it alone.
        with Memory(_with_secret(admin.settings, NEW), target=graph.target) as new:
            assert new.keys.check(key).signature == "valid"
        with (
            Memory(_with_secret(admin.settings, OLD), target=graph.target) as old,
            pytest.raises(AuthenticationError, match=r"^unknown API key$"),
        ):
            old.keys.check(key)
        assert post(search, json={"query": "x"}, headers=bearer(key), timeout=120).is_success


def test_unsigned_keys_are_signed_only_by_name(graph: Graph, admin: Memory, ns: str) -> None:
    legacy = new_key(admin, "read", namespaces=[ns])
    _set(graph, legacy.api_key.id, "k.mac = null")  # as a key made before MACs
    tampered = new_key(admin, "read", namespaces=[ns])
    _set(graph, tampered.api_key.id, "k.role = 'admin'")
    with pytest.raises(AuthenticationError):
        admin.keys.check(legacy.key)
    assert _signature(admin, legacy.api_key.id) == "unsigned"
    env = cli_env(graph)

    def resign(*names: str) -> Any:
        args = [a for n in names for a in ("--unsigned", n)]
        return CliRunner().invoke(main, ["keys", "resign", *args, "--json"], env=env)

    # An invalid key is never signed, an unknown name refuses the call: nothing changes.
    refused = resign(legacy.api_key.name, tampered.api_key.name)
    assert refused.exit_code != 0 and "invalid, not unsigned" in refused.output
    assert resign(legacy.api_key.name, f"nobody-{ns}").exit_code != 0
    assert _signature(admin, legacy.api_key.id) == "unsigned"
    signed = resign(legacy.api_key.name)
    assert signed.exit_code == 0, signed.output
    assert [k["id"] for k in json.loads(signed.stdout)] == [legacy.api_key.id]
    assert admin.keys.check(legacy.key).signature == "valid"
    assert _signature(admin, tampered.api_key.id) == "invalid"
    table = CliRunner().invoke(main, ["keys", "list"], env=env)
    assert "SIGNATURE" in table.output and "invalid" in table.output


def test_made_up_key_ids_cost_next_to_no_reads(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    async def flood() -> tuple[int, int, list[int]]:
        memory = AsyncMemory(test_settings, target=graph.target, embedder=embedder)
        await memory.connect()
        transactions = 0
        run_transaction = memory._transaction

        async def counted(step: Any) -> Any:
            nonlocal transactions
            transactions += 1
            return await run_transaction(step)

        memory._transaction = counted  # type: ignore[method-assign]
        check = KeyCheck(memory, cache_seconds=0)

        async def ok(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

        transport = httpx.ASGITransport(app=KeyGate(ok, check))
        statuses: list[int] = []
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                made = await memory.keys.create(f"flood-{ns}", role="read", namespaces=[ns])
                for _ in range(4):  # 4 waves of 250 made-up keys, then the real one
                    wave = [
                        f"gmk_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"
                        for _ in range(250)
                    ]
                    answers = await asyncio.gather(
                        *(client.get("/", headers=bearer(k)) for k in wave)
                    )
                    statuses += [a.status_code for a in answers]
                real = await client.get("/", headers=bearer(made.key))
                statuses.append(real.status_code)
        finally:
            await memory.close()
        return transactions, check.counts.id_reads, statuses

    transactions, id_reads, statuses = asyncio.run(flood())
    assert statuses[:-1] == [401] * 1000 and statuses[-1] == 200
    # One create, one read of the ids per wave at most (a wave is answered within the
    # interval, so fewer), and one read of the real key: never one per made-up key.
    assert id_reads <= 5 and transactions <= 1 + id_reads + 1, (transactions, id_reads)
