"""API keys in the real Neo4j: made (the secret shown once, only its hash stored), checked,
listed and revoked, through the library and `graphmem keys`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.errors import AuthenticationError, InvalidInputError
from graphmem.settings import GraphmemSettings
from tests.helpers import cli_env


@pytest.fixture
def memory(graph: Graph, test_settings: GraphmemSettings, embedder: Embedder) -> Any:
    with Memory(test_settings, target=graph.target, embedder=embedder) as client:
        yield client


def _stored(graph: Graph, key_id: str) -> dict[str, Any]:
    with graph.driver.session(database=graph.database) as session:
        record = session.run(
            "MATCH (k:GraphmemApiKey {id: $id}) RETURN properties(k) AS p", id=key_id
        ).single()
    assert record is not None
    return dict(record["p"])


def test_a_key_is_stored_hashed_checked_and_revoked(memory: Memory, graph: Graph, ns: str) -> None:
    made = memory.keys.create(f"bot-{ns}", role="read", namespaces=[ns, f"{ns}-b"])
    stored = _stored(graph, made.api_key.id)
    secret = made.key.rsplit("_", 1)[1]
    assert secret not in json.dumps(stored, default=str) and "ns" not in stored
    assert memory.keys.check(made.key) == made.api_key
    with pytest.raises(InvalidInputError, match="already named"):
        memory.keys.create(f"bot-{ns}", role="write", namespaces=[ns])
    with pytest.raises(AuthenticationError, match="unknown"):
        memory.keys.check(made.key[:-1] + ("x" if made.key[-1] != "x" else "y"))
    (gone,) = memory.keys.revoke(f"bot-{ns}")
    assert gone.revoked_at is not None
    with pytest.raises(AuthenticationError, match="revoked"):
        memory.keys.check(made.key)
    assert made.api_key.id not in {k.id for k in memory.keys.list()}
    assert made.api_key.id in {k.id for k in memory.keys.list(include_revoked=True)}
    # The name is free again once the key is revoked.
    again = memory.keys.create(f"bot-{ns}", role="write", namespaces=[ns])
    assert again.api_key.id != made.api_key.id


@pytest.mark.parametrize(
    ("scope", "message"),
    [
        ({}, "needs namespaces"),
        ({"namespaces": ["bad name"]}, "not allowed"),
        ({"prefix": "-x"}, "prefix"),
        ({"namespaces": ["a"], "role": "owner"}, "role"),
        ({"namespaces": ["a"], "expires_at": "2020-01-01"}, "not in the future"),
        ({"namespaces": ["a"], "expires_at": "2027-01-01T10:00"}, "zone"),
        ({"namespaces": ["a"], "name": "api"}, "own actors"),
        ({"namespaces": ["a"], "name": "0123456789ab"}, "looks like an id"),
        ({"namespaces": ["a"], "name": "two words"}, "letters, digits"),
    ],
)
def test_a_malformed_key_is_refused_and_nothing_is_stored(
    memory: Memory, scope: dict[str, Any], message: str, ns: str
) -> None:
    before = len(memory.keys.list(include_revoked=True))
    options = {"role": "read", "name": f"bad-{ns}", **scope}
    with pytest.raises(InvalidInputError, match=message):
        memory.keys.create(**options)
    assert len(memory.keys.list(include_revoked=True)) == before


def test_graphmem_keys_from_the_command_line(graph: Graph, ns: str) -> None:
    env = cli_env(graph)

    def cli(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env)

    expires = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()
    made = cli(
        "keys",
        "create",
        f"cli-{ns}",
        "--prefix",
        f"{ns}-",
        "--role",
        "admin",
        "--expires",
        expires,
        "--json",
    )
    assert made.exit_code == 0, made.output
    data = json.loads(made.stdout)
    assert data["key"].startswith("gmk_") and data["prefix"] == f"{ns}-"
    assert data["role"] == "admin" and data["expires_at"].startswith(expires)
    table = cli("keys", "create", f"cli2-{ns}", "--ns", ns)
    assert table.exit_code == 0 and "shown only now" in table.output
    listed = json.loads(cli("keys", "list", "--json").stdout)
    mine = [k for k in listed if k["name"] in (f"cli-{ns}", f"cli2-{ns}")]
    assert len(mine) == 2 and all("key" not in k and "hash" not in k for k in mine)
    revoked = cli("keys", "revoke", f"cli-{ns}", "--json")
    assert revoked.exit_code == 0 and json.loads(revoked.stdout)[0]["revoked_at"]
    again = cli("keys", "revoke", f"cli-{ns}")
    assert again.exit_code == 1 and "no live key" in again.output
