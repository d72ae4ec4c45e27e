"""Verification of an erasure: every read path searched for what a target's tombstones erased.

A tombstone keeps a keyed hash of the text it replaced, never the text, so the scan hashes
every string the namespace holds (each node's and relationship's properties, the texts inside
JSON values, and each sentence of a longer text) and compares. A caller who knows the erased
words may pass them too: then both fulltext and both vector indexes are asked for them
directly, and every stored string is searched for them as a phrase.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from graphmem.core.base import CoreBase
from graphmem.core.checks import QUERY_TEXT, checked_label, checked_value
from graphmem.core.forget.hashing import comparable, keyed_hash, namespace_key, pieces
from graphmem.core.plans import Plan, Rows, Run, Transaction, VectorParam, Work
from graphmem.core.recall.fulltext import lucene_query
from graphmem.core.recall.statements import ALL_STATUSES
from graphmem.models.erasure import Finding, ForgetVerification
from graphmem.store.cypher import query

#: What a tombstone may hold: nothing that carries content.
TOMBSTONE_PROPERTIES = frozenset(
    {
        "ns",
        "kind",
        "fact_id",
        "episode_id",
        "text_hash",
        "source_hash",
        "session_hash",
        "recorded_at",
        "retired_at",
        "occurred_at",
        "status_at_erasure",
        "at",
        "reason",
        "actor",
        "erasure",
    }
)
#: Tombstone properties that are themselves hashes, not searched as stored text.
_HASHES = frozenset({"text_hash", "source_hash", "session_hash"})
#: Index hits this close to the searched text count as finding it.
_NEAR = 0.95
_K = 100


def _strings(value: Any) -> Iterator[str]:
    """Every string in a property value: itself, list items, and the strings inside JSON."""
    if isinstance(value, str):
        yield value
        if value[:1] in "[{":
            try:
                parsed = json.loads(value)
            except ValueError:
                return
            yield from _strings(parsed)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


#: The checks a verification runs, as its result names them.
_CONTENT = "tombstones hold no content"
_IDS = "no fact or episode carries an erased id"
_SCAN = "raw scan of the namespace"
_TEXT = "raw scan for the given text"
_VECTORS = "vector indexes"
_FULLTEXT = "fulltext indexes"


class VerifyPlans(CoreBase):
    def verify_forgotten(
        self, target: str, *, text: str | None = None, ns: str | None
    ) -> Plan[ForgetVerification]:
        ns = self._ns(ns)
        target = checked_label("target", target)
        text = None if text is None else checked_value(QUERY_TEXT, "text", text)
        vector = None
        if text is not None:
            (vector,) = yield from self._embed((text,))
        phrase = None if text is None else lucene_query(text)
        words = None if text is None else comparable(text)

        def work() -> Work[tuple[str, Rows, list[Finding], list[str]]]:
            erasure_key = yield from self._guard()
            key = namespace_key(erasure_key, ns) if erasure_key else None
            probe = {"ns": ns, "target": target, "hash": key and keyed_hash(key, target)}
            found = yield Run(query("verify_tombstones"), probe)
            matched = found[0]["matched"] if found else "nothing"
            tombstones = [r["tombstone"] for r in found if r["matched"] == matched]
            checks = [_CONTENT, _IDS, _SCAN] + ([_TEXT] if words is not None else [])
            findings = _contents(tombstones)
            findings += yield from _scan(ns, tombstones, key, words)
            if vector is not None:
                checks.append(_VECTORS)
                findings += yield from _vectors(
                    ns, VectorParam(vector.tolist()), filtered=self.filtered_search
                )
            if phrase is not None and words:
                checks.append(_FULLTEXT)
                findings += yield from _fulltext(ns, phrase, words)
            return matched, tombstones, findings, checks

        matched, tombstones, findings, checks = yield Transaction("read", work)
        # One finding per place and check: a value found by both hash and phrase counts once.
        unique = list({(f.check, f.where): f for f in findings}.values())
        return ForgetVerification(
            ns=ns,
            target=target,
            matched=matched,
            tombstones=len(tombstones),
            checks=tuple(checks),
            findings=tuple(unique),
        )


def _contents(tombstones: Rows) -> list[Finding]:
    """A finding for each tombstone that holds more than :data:`TOMBSTONE_PROPERTIES`."""
    return [
        Finding(
            check=_CONTENT,
            where=f"tombstone {t.get('fact_id') or t.get('episode_id')}",
            detail=f"holds {', '.join(sorted(set(t) - TOMBSTONE_PROPERTIES))}",
        )
        for t in tombstones
        if set(t) - TOMBSTONE_PROPERTIES
    ]


def _scan(ns: str, tombstones: Rows, key: bytes | None, words: str | None) -> Work[list[Finding]]:
    """The raw scan: every node that still carries an erased id, and every stored string of
    the namespace whose hash (``key``) a tombstone holds, or that holds the given ``words``."""
    erased = [t.get("fact_id") or t.get("episode_id") for t in tombstones]
    hashes = {t["text_hash"] for t in tombstones if t.get("text_hash")}
    rows = yield Run(query("verify_scan"), {"ns": ns, "ids": erased})
    findings: list[Finding] = []
    for row in rows:
        where = f"{row['kind']} {':'.join(row['labels'])} {row['id']}"
        if row["kind"] == "erased id":
            findings.append(Finding(check=_IDS, where=where, detail="still there"))
            continue
        for name, value in row["properties"]:
            if "Tombstone" in row["labels"] and name in _HASHES:
                continue
            for found_text in _strings(value):
                if (
                    key is not None
                    and hashes
                    and any(keyed_hash(key, p) in hashes for p in pieces(found_text))
                ):
                    findings.append(Finding(check=_SCAN, where=f"{where} .{name}", detail=""))
                if words and words in comparable(found_text):
                    findings.append(Finding(check=_TEXT, where=f"{where} .{name}", detail=""))
    return findings


def _vectors(ns: str, vector: VectorParam, *, filtered: bool) -> Work[list[Finding]]:
    """The vector indexes' hits this close (:data:`_NEAR`) to the given text's ``vector``
    (searched within the namespace inside the index where the indexes filter)."""
    if filtered:
        # No more than the index holds of the namespace's (see search_counts).
        counts = {"ns": ns, "statuses": list(ALL_STATUSES), "cap": _K}
        (held,) = yield Run(query("search_counts"), counts)
        limits = {"fact_k": held["facts"], "episode_k": held["episodes"]}
        hits = yield Run(query("verify_vectors_filtered"), {"ns": ns, "vector": vector, **limits})
    else:
        hits = yield Run(query("verify_vectors"), {"ns": ns, "vector": vector, "k": _K})
    return [
        Finding(
            check=_VECTORS,
            where=f"{hit['index']} {hit['id']}",
            detail=f"similarity {hit['score']:.3f}",
        )
        for hit in hits
        if hit["score"] >= _NEAR
    ]


def _fulltext(ns: str, phrase: str, words: str) -> Work[list[Finding]]:
    """The fulltext indexes' hits for the given text's ``phrase`` that hold its ``words``."""
    params = {"ns": ns, "phrase": phrase, "k": _K}
    hits = yield Run(query("verify_fulltext"), params)
    return [
        Finding(
            check=_FULLTEXT,
            where=f"{hit['index']} {hit['id']}",
            detail="matches the text",
        )
        for hit in hits
        if words in comparable(hit["text"] or "")
    ]
