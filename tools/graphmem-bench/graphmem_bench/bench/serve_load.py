"""The load of the service benchmark: concurrent clients, each in a namespace of its own,
running one seeded mix of remember, recall and supersede for a fixed time, through REST
(``graphmem serve``) or through the in-process :class:`~graphmem.AsyncMemory`.

Each client first writes the root of its supersession chain and asks one question (untimed,
so that every connection and code path is warm), then, until the time is up, draws each next
operation from :data:`MIX`: *remember* a new fact, *recall* (k=10) a question, or *supersede*
its chain's head with a new fact that becomes the head. A client's operations run one after
the other, so its supersessions never race; the clients run at once. Every operation's wall
time is kept, every acknowledged write's id and text, and every failure with its kind; a write
that failed (an error answer, a timeout, a broken connection) may still have been stored, so
its text is kept too. After a failed supersession the client's head is unknown, and it only
remembers from then on.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx

from graphmem import AsyncMemory
from graphmem.testing import Progress

Op = Literal["remember", "recall", "supersede"]
OPS: tuple[Op, ...] = ("remember", "recall", "supersede")
#: The share of each operation in every client's mix.
MIX: dict[Op, float] = {"remember": 0.4, "recall": 0.4, "supersede": 0.2}
RECALL_K = 10
#: The reason every supersession gives.
REASON = "a newer version (graphmem bench --serve)"
#: Seconds between two progress lines while the clients run.
PROGRESS_EVERY_S = 15.0
#: Seconds an operation may take before its client gives up on it (a failure, TimeoutError):
#: a stalled operation never holds the run up for longer.
OP_TIMEOUT_S = 90.0
#: The most characters of a failure's message the report keeps.
EXAMPLE_CHARS = 300


class OpFailure(Exception):
    """An operation answered with an error: ``label`` says which (``HTTP 503
    TransientDatabaseError``), the message what the answer said."""

    def __init__(self, label: str, message: str = "") -> None:
        super().__init__(message or label)
        self.label = label


class Client(Protocol):
    """One way to reach memory: the two operations the mix needs."""

    async def remember(self, ns: str, text: str, head: str | None) -> str:
        """Store ``text`` (superseding ``head`` when given) and return the new fact's id."""

    async def recall(self, ns: str, query: str) -> int:
        """Recall ``query`` (k=10) and return the number of hits."""


class RestClient:
    """The REST API of one ``graphmem serve`` through a shared ``httpx.AsyncClient`` (its
    base URL and the ``Authorization`` header set)."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def remember(self, ns: str, text: str, head: str | None) -> str:
        body: dict[str, Any] = {"text": text}
        if head is not None:
            body.update(supersedes=[head], reason=REASON)
        data = await self._post(f"/v1/namespaces/{ns}/facts", body)
        return str(data["id"])

    async def recall(self, ns: str, query: str) -> int:
        data = await self._post(f"/v1/namespaces/{ns}/search", {"query": query, "k": RECALL_K})
        return len(data["hits"])

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        response = await self.http.post(path, json=body)
        if not 200 <= response.status_code < 300:
            kind, message = "", response.text
            with contextlib.suppress(ValueError, KeyError, TypeError):
                error = response.json()["error"]
                kind, message = str(error["type"]), str(error["message"])
            raise OpFailure(f"HTTP {response.status_code} {kind}".strip(), message)
        return response.json()


class DirectClient:
    """The in-process :class:`~graphmem.AsyncMemory`, shared by every client."""

    def __init__(self, memory: AsyncMemory) -> None:
        self.memory = memory

    async def remember(self, ns: str, text: str, head: str | None) -> str:
        if head is None:
            fact = await self.memory.remember(text, ns=ns)
        else:
            fact = await self.memory.remember(text, ns=ns, supersedes=[head], reason=REASON)
        return fact.id

    async def recall(self, ns: str, query: str) -> int:
        return len(await self.memory.recall(query, ns=ns, k=RECALL_K))


@dataclass
class Script:
    """One client's seeded sequence: the operations it draws, the texts it writes (distinct in
    its namespace) and the questions it asks. Both paths get the same scripts."""

    index: int
    clients: int
    texts: Sequence[str]
    questions: Sequence[str]
    seed: int
    rng: random.Random = field(init=False)
    written: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.seed}:{self.index}")

    def next_op(self) -> Op:
        draw = self.rng.random()
        for op in OPS:
            draw -= MIX[op]
            if draw < 0:
                return op
        return OPS[-1]

    def next_text(self) -> str:
        """The client's next text: the pool's texts dealt round the clients; past the pool's
        end they come round again, marked with the round."""
        spot = self.index + self.written * self.clients
        self.written += 1
        text = self.texts[spot % len(self.texts)]
        rounds = spot // len(self.texts)
        return text if rounds == 0 else f"{text} (round {rounds + 1})"

    def question(self) -> str:
        return self.questions[self.rng.randrange(len(self.questions))]


@dataclass
class ClientLog:
    """What one client did: its namespace, its timings (ms) per operation, its failures, its
    acknowledged writes (id to text), the texts of its failed writes, and its chain."""

    ns: str
    times: dict[Op, list[float]] = field(default_factory=lambda: {op: [] for op in OPS})
    failures: list[tuple[Op, str]] = field(default_factory=list)
    #: The first message of each kind of failure (``op: label``).
    examples: dict[str, str] = field(default_factory=dict)
    acknowledged: dict[str, str] = field(default_factory=dict)
    unconfirmed: list[str] = field(default_factory=list)
    #: The acknowledged ids of its supersession chain, root first: the last is the head.
    chain: list[str] = field(default_factory=list)
    #: False after a failed supersession: the head is then unknown.
    chain_known: bool = True
    hits: int = 0

    def fail(self, op: Op, exc: Exception, text: str | None) -> None:
        label = exc.label if isinstance(exc, OpFailure) else type(exc).__name__
        self.failures.append((op, label))
        message = " ".join(str(exc).split()) or label
        self.examples.setdefault(f"{op}: {label}", message[:EXAMPLE_CHARS])
        if text is not None:
            self.unconfirmed.append(text)
        if op == "supersede":
            self.chain_known = False


async def _seed(client: Client, script: Script, log: ClientLog, timeout: float) -> None:
    """Untimed: the chain's root, then one question."""
    text = script.next_text()
    try:
        async with asyncio.timeout(timeout):
            fact = await client.remember(log.ns, text, None)
        log.acknowledged[fact] = text
        log.chain.append(fact)
    except Exception as exc:  # every failure is counted, whatever it is
        log.fail("remember", exc, text)
    try:
        async with asyncio.timeout(timeout):
            await client.recall(log.ns, script.question())
    except Exception as exc:
        log.fail("recall", exc, None)


async def _work(
    client: Client, script: Script, log: ClientLog, deadline: float, timeout: float
) -> None:
    while time.monotonic() < deadline:
        op = script.next_op()
        if op == "supersede" and not (log.chain and log.chain_known):
            op = "remember"
        text = None if op == "recall" else script.next_text()
        began = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):
                if text is None:
                    hits = await client.recall(log.ns, script.question())
                else:
                    head = log.chain[-1] if op == "supersede" else None
                    fact = await client.remember(log.ns, text, head)
        except Exception as exc:  # every failure is counted, whatever it is
            log.fail(op, exc, text)
            continue
        log.times[op].append((time.perf_counter() - began) * 1000)
        if text is None:
            log.hits += hits
            continue
        log.acknowledged[fact] = text
        if op == "supersede":
            log.chain.append(fact)


async def run_clients(
    clients: Sequence[Client],
    namespaces: Sequence[str],
    scripts: Sequence[Script],
    duration: float,
    say: Progress,
    *,
    timeout: float = OP_TIMEOUT_S,
) -> tuple[list[ClientLog], float]:
    """Every client at once: seeded (untimed), then the mix for ``duration`` seconds (an
    operation under way when the time is up finishes, or fails after ``timeout`` seconds).
    Returns each client's log and the seconds from the start of the mix until its last
    operation ended."""
    logs = [ClientLog(ns) for ns in namespaces]
    work = list(zip(clients, scripts, logs, strict=True))
    await asyncio.gather(*(_seed(client, script, log, timeout) for client, script, log in work))
    began = time.perf_counter()
    deadline = time.monotonic() + duration
    ticker = asyncio.create_task(_progress(logs, began, say))
    try:
        await asyncio.gather(*(_work(client, s, log, deadline, timeout) for client, s, log in work))
    finally:
        ticker.cancel()
    return logs, time.perf_counter() - began


async def _progress(logs: Sequence[ClientLog], began: float, say: Progress) -> None:
    while True:
        await asyncio.sleep(PROGRESS_EVERY_S)
        done = sum(len(values) for log in logs for values in log.times.values())
        failed = sum(len(log.failures) for log in logs)
        say(f"  {time.perf_counter() - began:.0f} s: {done:,} operations, {failed:,} failed")


def latencies(logs: Sequence[ClientLog]) -> dict[Op, list[float]]:
    """Every client's timings of each operation together (ms)."""
    return {op: [ms for log in logs for ms in log.times[op]] for op in OPS}


def failure_counts(logs: Sequence[ClientLog]) -> dict[str, int]:
    """Failures by operation and kind (``remember: HTTP 503 TransientDatabaseError``), most
    frequent first."""
    counts = Counter(f"{op}: {label}" for log in logs for op, label in log.failures)
    return dict(counts.most_common())


def failure_examples(logs: Sequence[ClientLog]) -> dict[str, str]:
    """One message of each kind of failure (the first client's that had one)."""
    found: dict[str, str] = {}
    for log in logs:
        for kind, message in log.examples.items():
            found.setdefault(kind, message)
    return found


__all__ = [
    "MIX",
    "OPS",
    "OP_TIMEOUT_S",
    "REASON",
    "RECALL_K",
    "Client",
    "ClientLog",
    "DirectClient",
    "Op",
    "OpFailure",
    "RestClient",
    "Script",
    "failure_counts",
    "failure_examples",
    "latencies",
    "run_clients",
]
