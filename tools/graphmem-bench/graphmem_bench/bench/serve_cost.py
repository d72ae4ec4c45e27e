"""What ``graphmem serve``'s access log and metrics cost (``graphmem bench serve
--observe-cost``): half the servers run with both (the defaults: an access line per request
at ``--log-level info``, ``--metrics on``), the other half with neither (``--log-level off
--metrics off``), all at once under the same mix. Each client sends its operations in turn to
a server of each half (:class:`Alternating`), so that both halves serve every client, under
the same load at the same moments. The p50 of each half's operations is compared: the logs
and metrics may add at most :data:`MAX_COST` to it."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel, computed_field

from graphmem_bench.bench.report import Percentiles
from graphmem_bench.bench.serve_load import OPS, Client, Op

T = TypeVar("T")

#: What a server with neither logs nor metrics is started with.
QUIET_ARGS = ("--log-level", "off", "--metrics", "off")
#: The most the access log and metrics may add to the p50 of the operations (5%).
MAX_COST = 0.05


def server_args(servers: int) -> list[tuple[str, ...]]:
    """Each server's extra options: the even ones observed, the odd ones quiet."""
    return [() if n % 2 == 0 else QUIET_ARGS for n in range(servers)]


class Alternating:
    """A client that sends its operations in turn to an observed server and a quiet one,
    and keeps each one's wall time (ms) by the server's half and the operation."""

    def __init__(self, observed: Client, quiet: Client) -> None:
        self.pair = (observed, quiet)
        self.turn = 0
        self.times: dict[bool, dict[Op, list[float]]] = {
            quiet: {op: [] for op in OPS} for quiet in (False, True)
        }

    async def remember(self, ns: str, text: str, head: str | None) -> str:
        op: Op = "remember" if head is None else "supersede"
        return await self._timed(op, lambda c: c.remember(ns, text, head))

    async def recall(self, ns: str, query: str) -> int:
        return await self._timed("recall", lambda c: c.recall(ns, query))

    async def _timed(self, op: Op, call: Callable[[Client], Awaitable[T]]) -> T:
        quiet = self.turn % 2 == 1
        self.turn += 1
        began = time.perf_counter()
        result = await call(self.pair[quiet])
        self.times[quiet][op].append((time.perf_counter() - began) * 1000)
        return result


class OpCost(BaseModel):
    """One operation's p50 (ms) on the observed servers and on the quiet ones."""

    op: Op
    observed_n: int
    observed_p50: float
    quiet_n: int
    quiet_p50: float

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio(self) -> float:
        return self.observed_p50 / self.quiet_p50 if self.quiet_p50 else 0.0


class ObserveCost(BaseModel):
    """The operations' p50 (ms, every operation together and each apart) with the access log
    and metrics on, and with both off, in one run."""

    observed_p50: float
    quiet_p50: float
    ops: list[OpCost]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio(self) -> float:
        return self.observed_p50 / self.quiet_p50 if self.quiet_p50 else 0.0

    @property
    def passed(self) -> bool:
        return 0 < self.ratio <= 1 + MAX_COST

    def describe(self) -> str:
        each = ", ".join(f"{c.op} {c.ratio:.3f}" for c in self.ops)
        return (
            f"p50 {self.observed_p50:.1f} ms with logs and metrics, {self.quiet_p50:.1f} ms "
            f"without: {self.ratio:.3f}x (at most {1 + MAX_COST:.2f}x); each operation: {each}"
        )


def observe_cost(clients: Sequence[Alternating]) -> ObserveCost:
    """The cost from the alternating clients' timings."""
    on = {op: [ms for c in clients for ms in c.times[False][op]] for op in OPS}
    off = {op: [ms for c in clients for ms in c.times[True][op]] for op in OPS}
    ops = [
        OpCost(
            op=op,
            observed_n=len(on[op]),
            observed_p50=Percentiles.of(on[op]).p50,
            quiet_n=len(off[op]),
            quiet_p50=Percentiles.of(off[op]).p50,
        )
        for op in OPS
    ]
    return ObserveCost(
        observed_p50=Percentiles.of([ms for op in OPS for ms in on[op]]).p50,
        quiet_p50=Percentiles.of([ms for op in OPS for ms in off[op]]).p50,
        ops=ops,
    )


__all__ = [
    "MAX_COST",
    "QUIET_ARGS",
    "Alternating",
    "ObserveCost",
    "OpCost",
    "observe_cost",
    "server_args",
]
