"""Where the multi-tenant benchmark's recalls spend their time, statement by statement
(``graphmem.testing.statement_times``): the figures, their aggregation, and their table's
header and notes (its rows are :func:`~graphmem_bench.bench.tenants_report.statement_rows`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from graphmem.testing import StatementTime
from graphmem_bench.bench.report import Percentiles

#: The two ways the benchmark calls recall.
RecallMode = Literal["default", "vector"]
#: How the report names each way recall is called.
MODE_LABELS: dict[str, str] = {
    "default": "default (hybrid, gated)",
    "vector": "vector index only, no gate",
}


class StatementFigures(BaseModel):
    """One statement (or whole transaction) of the recalls of one namespace and mode: how
    many times each recall ran it, the client's wall time for it (sent to last row) and the
    server's own (``result_available_after + result_consumed_after``), in ms; a transaction
    (``transaction:read``, ``transaction:write``) has no server time."""

    name: str
    per_recall: float
    client_ms: Percentiles
    server_ms: Percentiles | None = None


def statement_figures(recalls: Sequence[Sequence[StatementTime]]) -> list[StatementFigures]:
    """Where ``recalls`` (each one's timed statements) spent their time: per statement name,
    in the order first run, its runs per recall and its times summed within each recall."""
    names = list(dict.fromkeys(t.name for timed in recalls for t in timed))
    figures = []
    for name in names:
        client: list[float] = []
        server: list[float] = []
        runs = 0
        for timed in recalls:
            mine = [t for t in timed if t.name == name]
            runs += len(mine)
            if mine:
                client.append(sum(t.client_ms for t in mine))
                if all(t.server_ms is not None for t in mine):
                    server.append(sum(t.server_ms or 0.0 for t in mine))
        figures.append(
            StatementFigures(
                name=name,
                per_recall=runs / len(recalls),
                client_ms=Percentiles.of(client),
                server_ms=Percentiles.of(server) if server else None,
            )
        )
    return figures


#: The alignment of each column of the statement table.
STATEMENT_ALIGN = "llllrrrrr"
STATEMENT_HEADER = [
    "Neo4j",
    "namespace",
    "recall",
    "statement",
    "per recall",
    "client p50",
    "client p95",
    "server p50",
    "server p95",
]


STATEMENT_NOTES = [
    "- client: from sending the statement to reading its last row, as the client timed "
    "it; server: Neo4j's own time for it (`result_available_after + "
    "result_consumed_after`). `transaction:*`: the whole transaction as the client timed it "
    "(begin, statements, commit), so its gap to the statements is the round trips' and "
    "the driver's share.",
]

__all__ = [
    "MODE_LABELS",
    "STATEMENT_ALIGN",
    "STATEMENT_HEADER",
    "STATEMENT_NOTES",
    "RecallMode",
    "StatementFigures",
    "statement_figures",
]
