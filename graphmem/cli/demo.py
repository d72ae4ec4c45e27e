"""A short end-to-end check through the client: remember, update, recall now and in the past."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from graphmem.client import Memory
from graphmem.models import RecallResult

DEMO_FACTS = (
    "The user works at Google as a data engineer.",
    "The user's sister Ana lives in Lisbon.",
    "The user drinks oat-milk flat whites every morning.",
    "The user is allergic to peanuts.",
    "The user is training for the Berlin marathon in September.",
    "The user's laptop is a ThinkPad X1 running Debian.",
)
UPDATE = "The user now works at Microsoft as a data engineer."
QUESTION = "Where does the user work?"


@dataclass
class DemoResult:
    namespace: str
    written: int
    write_seconds: float
    now: RecallResult | None = None
    before_update: RecallResult | None = None
    keyword: RecallResult | None = None
    history: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Microsoft first now, Google first before the update, the keyword hit found."""
        return bool(
            self.now
            and self.now.hits
            and self.now.hits[0].text == UPDATE
            and DEMO_FACTS[0] not in self.now.texts
            and self.before_update
            and self.before_update.hits
            and self.before_update.hits[0].text == DEMO_FACTS[0]
            and self.keyword
            and self.keyword.hits
            and self.keyword.hits[0].text == DEMO_FACTS[4]
        )


def run_demo(
    memory: Memory, *, ns: str | None = None, say: Callable[[str], None] = print
) -> DemoResult:
    """Write the demo facts into ``ns`` (default: a fresh namespace), update one, recall."""
    ns = ns or f"demo-{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(2)}"
    began = time.perf_counter()
    facts = memory.remember_many(
        [{"text": text, "source": "graphmem demo", "tags": ["demo"]} for text in DEMO_FACTS], ns=ns
    )
    result = DemoResult(ns, len(facts), time.perf_counter() - began)
    say(f"remembered {result.written} facts in namespace {ns!r} in {result.write_seconds:.2f} s")
    time.sleep(0.01)
    before = datetime.now(UTC)
    time.sleep(0.01)
    update = memory.remember(UPDATE, ns=ns, supersedes=[facts[0].id], reason="changed jobs")
    say(f"remembered an update that supersedes {facts[0].id}")

    result.now = _show(say, f"recall {QUESTION!r}", memory.recall(QUESTION, ns=ns, k=3))
    result.before_update = _show(
        say,
        f"recall {QUESTION!r} as believed before the update",
        memory.recall(QUESTION, ns=ns, k=3, as_of=before),
    )
    result.keyword = _show(say, "recall 'marathon'", memory.recall("marathon", ns=ns, k=3))
    history = memory.history(update.id, ns=ns)
    result.history = [f.text for f in history.facts]
    say("\nhistory of the updated fact:")
    for edge in history.edges:
        say(f"  {edge.at:%Y-%m-%d %H:%M:%S} {edge.actor}: {edge.older_id} -> {edge.newer_id}")
        say(f"    reason: {edge.reason}")
    return result


def _show(say: Callable[[str], None], title: str, result: RecallResult) -> RecallResult:
    say(f"\n{title}:")
    for hit in result.hits:
        vector = f"{hit.scores.vector:.2f}" if hit.scores.vector is not None else "-"
        fulltext = f"{hit.scores.fulltext:.2f}" if hit.scores.fulltext is not None else "-"
        say(f"  {hit.score:.4f} (vector {vector}, fulltext {fulltext})  {hit.text}")
    if not result.hits:
        say("  (nothing)")
    return result
