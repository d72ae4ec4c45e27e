"""An import in a process of its own that SIGKILLs itself just before its KILL_AT-th statement
named KILL_QUERY (tests/integration/test_namespaces.py drives it): a process killed in the
middle of staging, or before its last transaction commits. It prints a JSON line at the end
when it lives that long."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping
from typing import Any

from graphmem.client import Memory
from graphmem.settings import load_settings
from graphmem.store.cypher import CypherQuery
from tests.integration.consolidate_child import NoEmbedder


def main() -> None:
    kill_query, kill_at = os.environ["KILL_QUERY"], int(os.environ["KILL_AT"])
    seen = 0
    check = CypherQuery.check_params

    def counting(self: CypherQuery, params: Mapping[str, Any]) -> None:
        nonlocal seen
        if self.name == kill_query:
            seen += 1
            if seen == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        check(self, params)

    CypherQuery.check_params = counting  # type: ignore[method-assign, assignment]
    with open(os.environ["IMPORT_FILE"], encoding="utf-8") as lines:
        records = (json.loads(line) for line in lines)
        with Memory(load_settings(), embedder=NoEmbedder()) as memory:
            result = memory.import_(
                records, ns=os.environ["GRAPHMEM_NAMESPACE"], batch_size=int(os.environ["BATCH"])
            )
    print(json.dumps({"imported": result.nodes}), flush=True)


if __name__ == "__main__":
    main()
