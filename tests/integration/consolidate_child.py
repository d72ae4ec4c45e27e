"""A consolidation run in a process of its own that SIGKILLs itself before its KILL_AT-th
consolidation statement (tests/integration/test_consolidation.py drives it). It prints how
many such statements it ran when it lives to the end."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping, Sequence
from typing import Any

from graphmem.client import Memory
from graphmem.settings import load_settings
from graphmem.store.cypher import CypherQuery

_PREFIXES = ("consolidate_", "rewrite_", "fact_lock")


class NoEmbedder:
    """The test graph's embedder, by name and dimension only: a run embeds nothing."""

    dimension = int(os.environ["KILL_DIMENSION"])
    model_id = os.environ["KILL_MODEL_ID"]
    legacy_model_id = None

    def embed(self, texts: Sequence[str]) -> Any:
        raise RuntimeError("a consolidation run embeds nothing")


def main() -> None:
    kill_at = int(os.environ["KILL_AT"])
    seen = 0
    check = CypherQuery.check_params

    def counting(self: CypherQuery, params: Mapping[str, Any]) -> None:
        nonlocal seen
        if self.name.startswith(_PREFIXES):
            seen += 1
            if seen == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        check(self, params)

    CypherQuery.check_params = counting  # type: ignore[method-assign, assignment]
    with Memory(load_settings(), embedder=NoEmbedder(), ns=os.environ["GRAPHMEM_NAMESPACE"]) as m:
        result = m.consolidate(force=True)
    print(json.dumps({"statements": seen, "status": result.status, "applied": len(result.applied)}))


if __name__ == "__main__":
    main()
