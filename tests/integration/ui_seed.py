"""The demo namespace the web UI's tests look at, written through the REST API of a running
``graphmem serve`` with a write key, as a person's agent would write it.

The server's LLM is a stub (:func:`stub_answers`, served by
:class:`~graphmem.testing.llm_stub.StubLLMServer`): it extracts two facts from the two ingested
messages (so that they have provenance, ``DERIVED_FROM``) and merges the two hiking facts when a
consolidation run shows it both. :func:`seed_demo` writes, in this order (``FACTS`` names them):

1. ``acme`` (source ``hr``, tag ``work``, valid from 2019-01-01); then :attr:`Demo.t_between`,
   a time after ``acme`` was recorded and before ``globex`` was; then ``globex``, which
   supersedes ``acme`` (reason "changed jobs", valid from 2023-05-01);
2. ``hike1`` and ``hike2`` (source ``chat``, tag ``hobby``);
3. ``veg`` (source ``profile``) and ``fish`` (source ``chat``), both tagged ``food``, then a
   contradiction between them (``POST /contradictions``), left open;
4. ``phone`` (source ``crm``, tag ``contact``), ``call``, which references it, then ``phone2``,
   which supersedes ``phone``: ``call`` is flagged for review (relation ``references``, event
   ``superseded``);
5. ``name``, pinned (source ``profile``);
6. the messages ``m1`` and ``m2`` (speaker Ada, session ``s1``) ingested with extraction:
   ``tea`` derived from ``m1``, ``coffee`` from ``m1`` and ``m2``;
7. a consolidation run (``force``, ``confirm``) that merges ``hike1`` and ``hike2``."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from graphmem.client import Memory
from graphmem.testing.llm_stub import StubLLMServer, prompt_of
from tests.service import Served, bearer

#: The demo's fact texts, by the names :attr:`Demo.facts` keys them with.
FACTS = {
    "acme": "Ada works at Acme.",
    "globex": "Ada works at Globex.",
    "hike1": "Ada likes hiking.",
    "hike2": "Ada enjoys hiking in the hills.",
    "veg": "Ada is vegetarian.",
    "fish": "Ada eats fish every Friday.",
    "phone": "Ada's phone number is 555-0100.",
    "call": "Call Ada on her mobile.",
    "phone2": "Ada's phone number is 555-0199.",
    "name": "Ada prefers to be called Ada, not Adelaide.",
    "tea": "Ada drinks green tea.",
    "coffee": "Ada stopped drinking coffee.",
}
#: The ingested messages, by external id.
MESSAGES = {
    "m1": "I only drink green tea these days.",
    "m2": "Yes, I stopped coffee in January.",
}
#: What the stub extracts: each fact with the messages it comes from.
EXTRACTED = {"tea": ("m1",), "coffee": ("m1", "m2")}
#: The reason of the merge the stub proposes.
MERGE_REASON = "the same liking"

_LISTED = re.compile(r"^\[(\d+)\] (['\"])(.*)\2 \(", re.MULTILINE)  # a cluster's facts
_MESSAGE = re.compile(r"^\[(\d+)\] \S+ [^:\n]+: (.*)$", re.MULTILINE)  # an extraction's


@dataclass(frozen=True)
class Demo:
    """The seeded namespace: its name, a key of each role for it alone (the secrets), the
    write key's name (the actor of every change), fact ids by :data:`FACTS` name, episode ids
    by external id, ``t_between`` (UTC, ISO 8601 with milliseconds and ``Z``: ``acme`` is
    believed then, ``globex`` not yet recorded), and the consolidation run's id."""

    ns: str
    read_key: str
    write_key: str
    admin_key: str
    actor: str
    facts: dict[str, str]
    episodes: dict[str, str]
    t_between: str
    run_id: str


def stub_answers(body: dict[str, Any]) -> dict[str, Any]:
    """The stub LLM: a consolidation prompt that shows both hiking facts gets a MERGE of them
    (any other cluster, no operation); an extraction prompt gets the :data:`EXTRACTED` facts
    whose messages it shows."""
    prompt = prompt_of(body)
    shown = {m.group(3): int(m.group(1)) for m in _LISTED.finditer(prompt)}
    if shown:
        hikes = [shown[FACTS[k]] for k in ("hike1", "hike2") if FACTS[k] in shown]
        ops = [{"op": "MERGE", "facts": hikes, "reason": MERGE_REASON}] if len(hikes) == 2 else []
        return {"reasoning": "scripted", "operations": ops}
    numbers = {m.group(2).strip(): int(m.group(1)) for m in _MESSAGE.finditer(prompt)}
    facts = [
        {"text": FACTS[name], "messages": [numbers[MESSAGES[m]] for m in sources]}
        for name, sources in EXTRACTED.items()
        if all(MESSAGES[m] in numbers for m in sources)
    ]
    return {"reasoning": "scripted", "facts": facts}


def llm_env(stub: StubLLMServer) -> dict[str, str]:
    """The environment that makes ``graphmem serve`` use the stub as its LLM."""
    return {
        "GRAPHMEM_LLM": "openai-compatible:stub",
        "GRAPHMEM_LLM_BASE_URL": stub.base_url,
        "GRAPHMEM_LLM_RETRIES": "0",
    }


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class _Writer:
    """Sends the demo's requests with the write key; any answer but a success fails."""

    def __init__(self, served: Served, ns: str, key: str) -> None:
        self.http = httpx.Client(
            base_url=f"{served.url}/v1/namespaces/{ns}", headers=bearer(key), timeout=120
        )

    def send(self, path: str, body: dict[str, Any]) -> Any:
        answer = self.http.post(path, json=body)
        assert answer.status_code < 300, f"POST {path}: {answer.status_code} {answer.text}"
        return answer.json()

    def get(self, path: str) -> Any:
        answer = self.http.get(path)
        assert answer.status_code == 200, f"GET {path}: {answer.status_code} {answer.text}"
        return answer.json()


def seed_demo(served: Served, admin: Memory, ns: str) -> Demo:
    """Makes the keys (through ``admin``, a library client on the served graph) and writes the
    demo into ``ns`` (see the module's docstring)."""
    keys = {
        role: admin.keys.create(f"{ns}-{role}", role=role, namespaces=[ns])
        for role in ("read", "write", "admin")
    }
    out = _Writer(served, ns, keys["write"].key)
    ids: dict[str, str] = {}

    def fact(name: str, **fields: Any) -> dict[str, Any]:
        made: dict[str, Any] = out.send("/facts", {"text": FACTS[name], **fields})
        ids[name] = made["id"]
        return made

    acme = fact("acme", source="hr", tags=["work"], valid_from="2019-01-01T00:00:00Z")
    time.sleep(0.05)
    between = datetime.now(UTC)
    between = between.replace(microsecond=between.microsecond // 1000 * 1000)
    time.sleep(0.05)
    globex = fact(
        "globex",
        source="hr",
        tags=["work"],
        valid_from="2023-05-01T00:00:00Z",
        supersedes=[ids["acme"]],
        reason="changed jobs",
    )
    assert _when(acme["recorded_at"]) < between < _when(globex["recorded_at"]), (acme, globex)
    for name in ("hike1", "hike2"):
        fact(name, source="chat", tags=["hobby"])
    fact("veg", source="profile", tags=["food"])
    fact("fish", source="chat", tags=["food"])
    out.send("/contradictions", {"a": ids["veg"], "b": ids["fish"], "reason": "she said so"})
    fact("phone", source="crm", tags=["contact"])
    fact("call", source="crm", tags=["contact"], references=[ids["phone"]])
    fact("phone2", source="crm", tags=["contact"], supersedes=[ids["phone"]], reason="new number")
    fact("name", source="profile", tags=["profile"], pinned=True)
    messages = [
        {
            "content": text,
            "speaker": "Ada",
            "external_id": m,
            "occurred_at": f"2026-01-10T09:0{i}:00Z",
        }
        for i, (m, text) in enumerate(MESSAGES.items())
    ]
    ingested = out.send("/messages", {"messages": messages, "session_id": "s1", "extract": True})
    by_text = {f["text"]: f["id"] for f in ingested["facts"]}
    for name in EXTRACTED:
        ids[name] = by_text[FACTS[name]]
    flags = out.get("/review")
    assert [f["flagged_id"] for f in flags] == [ids["call"]], flags
    run = out.send("/consolidate", {"force": True, "confirm": True})
    merged = [a for a in run["applied"] if a["op"] == "MERGE"]
    assert len(merged) == 1 and set(merged[0]["facts"]) >= {ids["hike1"], ids["hike2"]}, run
    out.http.close()
    return Demo(
        ns=ns,
        read_key=keys["read"].key,
        write_key=keys["write"].key,
        admin_key=keys["admin"].key,
        actor=keys["write"].api_key.name,
        facts=ids,
        episodes={e["external_id"]: e["id"] for e in ingested["episodes"]},
        t_between=between.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        run_id=run["run_id"],
    )
