"""``graphmem serve`` behind a TLS proxy that passes the client's ``Host`` on (as the serve
guide's Caddy and nginx examples do): with ``--allow-host`` for the proxy's name, MCP answers
requests that carry it, and still refuses other names and origins."""

from __future__ import annotations

import httpx

from graphmem.client import Memory
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.settings import GraphmemSettings
from tests.service import bearer, new_key, serve_process

PROXY = "memory.example.com"
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "search_memories", "arguments": {"query": "Where does Alice live?"}},
}


def test_mcp_answers_the_name_given_with_allow_host(
    graph: Graph, test_settings: GraphmemSettings, embedder: Embedder, ns: str
) -> None:
    with Memory(test_settings, target=graph.target, embedder=embedder) as memory:
        key = new_key(memory, "read", namespaces=[ns])
        try:
            with serve_process(graph, "--allow-host", PROXY) as served:

                def post(host: str, origin: str | None = None) -> httpx.Response:
                    headers = {
                        **bearer(key),
                        "Host": host,
                        "Accept": "application/json, text/event-stream",
                    }
                    if origin is not None:
                        headers["Origin"] = origin
                    return httpx.post(f"{served.url}/mcp", json=CALL, headers=headers, timeout=30)

                through_proxy = post(PROXY, origin=f"https://{PROXY}")
                assert through_proxy.status_code == 200, through_proxy.text
                assert '"isError":false' in through_proxy.text
                assert post(f"127.0.0.1:{served.port}").status_code == 200
                assert post("evil.example.com").status_code == 421
                assert post(PROXY, origin="https://evil.example.com").status_code == 403
        finally:
            memory.keys.revoke(key.api_key.name)
