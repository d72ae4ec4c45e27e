"""A scripted history with known answers, for the audit API and the analyst library.

One namespace gets, in this order (each step its own transaction, so each has its own
transaction time):

1. the employer line: ``emp1`` Acme (valid 2019-01-01) superseded by ``emp2`` Globex
   (2021-03-01), by ``emp3`` Initech (2023-05-01), by ``emp4`` Umbrella (2025-02-01): three
   supersessions of one fact, each with its reason;
2. ``hike1`` and ``hike2`` merged by a consolidation run (a stub LLM proposer), whose plan also
   holds one operation on an unknown number (rejected);
3. ``veg`` contradicted by ``fish`` (left open), ``london`` contradicted by ``paris``, then
   resolved keeping ``paris`` (``london`` superseded);
4. ``cat`` retracted;
5. two messages ingested with extraction: ``tea`` derived from the first, ``coffee`` from
   both;
6. ``phone`` (source ``crm``), referenced by ``call``, forgotten: a tombstone, and a review
   flag on ``call``;
7. recall of "Where does Ada work now?" twice, k=1 (``emp4`` recalled twice).

``History.at[step]`` is the transaction time of each step (``at["emp1"]``, ...,
``at["merge"]``, ``at["resolve"]``, ``at["retract"]``, ``at["ingest"]``, ``at["forget"]``);
``between(a, b)`` is a probe time strictly between two steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graphmem.settings import GraphmemSettings
from graphmem.testing.llm_stub import StubLLMServer, prompt_of

_LISTED = re.compile(r"^\[(\d+)\] (['\"])(.*)\2 \(", re.MULTILINE)

TEXTS = {
    "emp1": "Ada works at Acme.",
    "emp2": "Ada works at Globex.",
    "emp3": "Ada works at Initech.",
    "emp4": "Ada works at Umbrella.",
    "hike1": "Ada likes hiking.",
    "hike2": "Ada enjoys hiking in the hills.",
    "veg": "Ada is vegetarian.",
    "fish": "Ada eats fish every Friday.",
    "london": "Ada lives in London.",
    "paris": "Ada lives in Paris.",
    "cat": "Ada has a cat.",
    "tea": "Ada drinks green tea.",
    "coffee": "Ada stopped drinking coffee.",
    "phone": "Ada's phone number is 555-0100.",
    "call": "Call Ada on her mobile.",
}
VALID = {
    "emp1": datetime(2019, 1, 1, tzinfo=UTC),
    "emp2": datetime(2021, 3, 1, tzinfo=UTC),
    "emp3": datetime(2023, 5, 1, tzinfo=UTC),
    "emp4": datetime(2025, 2, 1, tzinfo=UTC),
    "london": datetime(2018, 6, 1, tzinfo=UTC),
    "paris": datetime(2024, 9, 1, tzinfo=UTC),
}
REASONS = {
    "emp2": "changed jobs",
    "emp3": "changed jobs again",
    "emp4": "new employer",
    "merge": "the same liking",
    "rejected": "no such fact",
    "fish": "she said so at dinner",
    "resolve": "she moved to Paris",
    "retract": "it was her neighbour's cat",
    "forget": "erasure request",
}
MESSAGES = [
    {
        "content": "I only drink green tea these days.",
        "external_id": "m1",
        "session_id": "s1",
        "occurred_at": "2026-01-10T09:00:00Z",
    },
    {
        "content": "Yes, I stopped coffee in January.",
        "external_id": "m2",
        "session_id": "s1",
        "occurred_at": "2026-01-10T09:05:00Z",
    },
]


@dataclass
class History:
    ns: str
    ids: dict[str, str] = field(default_factory=dict)
    at: dict[str, datetime] = field(default_factory=dict)
    run_id: str = ""
    erasure: str = ""
    episodes: dict[str, str] = field(default_factory=dict)

    def between(self, a: str, b: str) -> datetime:
        """A time strictly after step ``a`` and before step ``b``."""
        return self.at[a] + (self.at[b] - self.at[a]) / 2


def stub_answers(body: dict[str, Any]) -> dict[str, Any]:
    """The stub LLM: merges the two hiking facts (plus an operation on an unknown number),
    and extracts ``tea`` from message 1 and ``coffee`` from messages 1 and 2."""
    prompt = prompt_of(body)
    shown = {m.group(3): int(m.group(1)) for m in _LISTED.finditer(prompt)}
    if shown:
        ops = []
        if TEXTS["hike1"] in shown and TEXTS["hike2"] in shown:
            ops = [
                {
                    "op": "MERGE",
                    "facts": [shown[TEXTS["hike1"]], shown[TEXTS["hike2"]]],
                    "reason": REASONS["merge"],
                },
                {"op": "RETRACT", "facts": [99], "reason": REASONS["rejected"]},
            ]
        return {"reasoning": "scripted", "operations": ops}
    count = len(re.findall(r"^\[\d+\]", prompt, re.MULTILINE))
    facts = []
    if count >= 1:
        facts.append({"text": TEXTS["tea"], "messages": [1], "valid_from": None})
    if count >= 2:
        facts.append({"text": TEXTS["coffee"], "messages": [1, 2], "valid_from": None})
    return {"reasoning": "scripted", "facts": facts}


def llm_settings(settings: GraphmemSettings, stub: StubLLMServer) -> GraphmemSettings:
    return settings.model_copy(
        update={"llm": "openai-compatible:stub", "llm_base_url": stub.base_url}
    )


def build_history(memory: Any, ns: str) -> History:
    """Writes the scripted history through ``memory`` (a sync client whose LLM is the stub
    answering with :func:`stub_answers`) into ``ns``."""
    h = History(ns=ns)
    ids, at = h.ids, h.at
    previous: str | None = None
    for key in ("emp1", "emp2", "emp3", "emp4"):
        fact = memory.remember(
            TEXTS[key],
            valid_from=VALID[key],
            source="hr",
            supersedes=[ids[previous]] if previous else [],
            reason=REASONS.get(key),
            ns=ns,
        )
        ids[key], at[key] = fact.id, fact.recorded_at
        previous = key
    for key in ("hike1", "hike2"):
        fact = memory.remember(TEXTS[key], ns=ns)
        ids[key], at[key] = fact.id, fact.recorded_at
    run = memory.consolidate(ns=ns, force=True)
    assert [a.op for a in run.applied] == ["MERGE"], run
    assert len(run.rejected) == 1, run
    h.run_id = run.run_id
    at["merge"] = memory.get(ids["hike2"], ns=ns).retired_at
    veg = memory.remember(TEXTS["veg"], ns=ns)
    fish = memory.remember(TEXTS["fish"], contradicts=[veg.id], reason=REASONS["fish"], ns=ns)
    london = memory.remember(TEXTS["london"], valid_from=VALID["london"], ns=ns)
    paris = memory.remember(
        TEXTS["paris"], valid_from=VALID["paris"], contradicts=[london.id], ns=ns
    )
    for key, fact in (("veg", veg), ("fish", fish), ("london", london), ("paris", paris)):
        ids[key], at[key] = fact.id, fact.recorded_at
    _kept, lost = memory.resolve(
        london.id, paris.id, keep=paris.id, reason=REASONS["resolve"], ns=ns
    )
    at["resolve"] = lost.retired_at
    cat = memory.remember(TEXTS["cat"], ns=ns)
    ids["cat"], at["cat"] = cat.id, cat.recorded_at
    at["retract"] = memory.retract(cat.id, reason=REASONS["retract"], ns=ns).retired_at
    ingested = memory.ingest(MESSAGES, extract=True, ns=ns)
    by_text = {f.text: f for f in ingested.facts}
    for key in ("tea", "coffee"):
        ids[key] = by_text[TEXTS[key]].id
    h.episodes = {e.external_id: e.id for e in ingested.episodes}
    at["ingest"] = max(f.recorded_at for f in ingested.facts)
    phone = memory.remember(TEXTS["phone"], source="crm", ns=ns)
    call = memory.remember(TEXTS["call"], references=[phone.id], ns=ns)
    ids["phone"], at["phone"] = phone.id, phone.recorded_at
    ids["call"], at["call"] = call.id, call.recorded_at
    erased = memory.forget([phone.id], reason=REASONS["forget"], ns=ns)
    h.erasure = erased.erasure
    at["forget"] = erased.at
    for _ in range(2):
        hits = memory.recall("Where does Ada work now?", k=1, kinds=["fact"], ns=ns).hits
        assert [hit.id for hit in hits] == [ids["emp4"]], hits
    return h
