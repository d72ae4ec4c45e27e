"""A forget in a process of its own that SIGKILLs itself before its KILL_AT-th erasure
statement (tests/integration/test_forget.py drives it). It prints a JSON line for each unit
the forget reports done, and one at the end when it lives that long."""

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

_PREFIXES = ("forget_", "review_flag")


def main() -> None:
    kill_at = int(os.environ["KILL_AT"])
    seen = 0
    units = 0
    check = CypherQuery.check_params

    def counting(self: CypherQuery, params: Mapping[str, Any]) -> None:
        nonlocal seen
        if self.name.startswith(_PREFIXES) and self.name != "forget_select":
            seen += 1
            if seen == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        check(self, params)

    def report(count: int) -> None:
        nonlocal units
        units += 1
        print(json.dumps({"unit": units, "nodes": count}), flush=True)

    CypherQuery.check_params = counting  # type: ignore[method-assign, assignment]
    with Memory(load_settings(), embedder=NoEmbedder(), ns=os.environ["GRAPHMEM_NAMESPACE"]) as m:
        result = m.forget(session="doomed", reason="killed", batch_size=1, progress=report)
    print(json.dumps({"statements": seen, "erased": result.erased}), flush=True)


if __name__ == "__main__":
    main()
