"""The offline proposer: merges exact and near-exact duplicates, and lists pairs that look
like the same attribute with another value for review. It never claims a supersession, a
contradiction or a retraction: without an LLM it cannot know which of two values is current,
or whether both are true."""

from __future__ import annotations

import json
from functools import lru_cache

from graphmem._text import normalised as normalised_text
from graphmem.models.consolidation import (
    Cluster,
    Proposal,
    ProposedOperation,
    ProposedPlan,
    ReviewCandidate,
)

#: Words whose difference turns a near-duplicate into another statement.
_NEGATIONS = frozenset(
    (
        "not",
        "no",
        "never",
        "none",
        "nobody",
        "nothing",
        "neither",
        "nor",
        "cannot",
        "cant",
        "dont",
        "doesnt",
        "didnt",
        "isnt",
        "wasnt",
        "arent",
        "werent",
        "wont",
        "without",
    )
)


#: A cluster's texts are compared pair by pair: each is normalised once.
normalised = lru_cache(maxsize=4096)(normalised_text)


def _words(text: str) -> list[str]:
    return normalised(text).split()


class HeuristicProposer:
    """Merges a new fact into a believed one when their normalised texts are equal, or when
    they are near-identical: cosine at least ``merge_similarity`` and at least
    ``merge_overlap`` of their words shared, with no negation or number between the words
    that differ. A pair at cosine ``review_similarity`` or more that reads the same around
    one short run of other words (on both sides) is listed for review."""

    name = "heuristic"
    model: str | None = None

    def __init__(
        self,
        *,
        merge_similarity: float = 0.95,
        merge_overlap: float = 0.8,
        review_similarity: float = 0.5,
        review_differences: int = 3,
    ) -> None:
        self.merge_similarity = merge_similarity
        self.merge_overlap = merge_overlap
        self.review_similarity = review_similarity
        self.review_differences = review_differences

    def propose(self, cluster: Cluster) -> Proposal:
        active = {f.number for f in cluster.facts if f.status == "active"}
        similarity = {(a, b): s for a, b, s in cluster.similar}
        parent = {n: n for n in active}

        def root(n: int) -> int:
            while parent[n] != n:
                n = parent[n]
            return n

        reasons: dict[tuple[int, int], str] = {}
        review: list[ReviewCandidate] = []
        numbers = sorted(active)
        for i, a in enumerate(numbers):
            for b in numbers[i + 1 :]:
                fa, fb = cluster.fact(a), cluster.fact(b)
                if not (fa.new or fb.new):
                    continue  # two old facts were weighed by an earlier run
                why = self._duplicate(fa.text, fb.text, similarity.get((a, b)))
                if why is not None:
                    ra, rb = root(a), root(b)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
                        reasons[(min(ra, rb), max(ra, rb))] = why
                    continue
                candidate = self._review(fa.text, fb.text, similarity.get((a, b)))
                if candidate is not None:
                    review.append(
                        ReviewCandidate(
                            facts=(fa.id, fb.id),
                            texts=(fa.text, fb.text),
                            similarity=similarity.get((a, b), 0.0),
                            reason=candidate,
                        )
                    )
        groups: dict[int, list[int]] = {}
        for n in numbers:
            groups.setdefault(root(n), []).append(n)
        operations = []
        for survivor, members in sorted(groups.items()):
            if len(members) < 2:
                continue
            why = "; ".join(
                reason for (a, _), reason in sorted(reasons.items()) if root(a) == survivor
            )
            operations.append(ProposedOperation(op="MERGE", facts=members, reason=why))
        # A pair is listed once per wording, and not for a duplicate that is merged away.
        retired = {n for op in operations for n in op.facts[1:]}
        listed: set[tuple[str, str]] = set()
        kept = []
        for r in review:
            key = (normalised(r.texts[0]), normalised(r.texts[1]))
            if key in listed or {cluster_number(cluster, i) for i in r.facts} & retired:
                continue
            listed.add(key)
            kept.append(r)
        review = kept
        plan = ProposedPlan(
            reasoning="exact and near-exact duplicates are merged into the earliest recorded; "
            "nothing else is decided without an LLM",
            operations=operations,
        )
        dumped = plan.model_dump()
        return Proposal(
            reasoning=plan.reasoning,
            operations=dumped["operations"],
            raw=json.dumps(dumped),
            review=review,
        )

    def _duplicate(self, a: str, b: str, similarity: float | None) -> str | None:
        if normalised(a) == normalised(b):
            return "same text once case, punctuation and spacing are ignored"
        if similarity is None or similarity < self.merge_similarity:
            return None
        wa, wb = set(_words(a)), set(_words(b))
        overlap = len(wa & wb) / max(len(wa | wb), 1)
        differing = wa ^ wb
        if overlap < self.merge_overlap or differing & _NEGATIONS:
            return None
        if wa - wb and wb - wa:
            return None  # a word swapped for another: perhaps another value, for review
        if any(word.isdigit() for word in differing):
            return None
        return f"near-identical: cosine {similarity:.3f}, {overlap:.0%} of the words shared"

    def _review(self, a: str, b: str, similarity: float | None) -> str | None:
        """Why two facts look like one attribute with two values: the same words around one
        run of one to ``review_differences`` words that differ ("works at Google" / "works at
        Microsoft"), the shared words at least two and half the shorter text."""
        if similarity is None or similarity < self.review_similarity:
            return None
        wa, wb = _words(a), _words(b)
        prefix = 0
        while prefix < min(len(wa), len(wb)) and wa[prefix] == wb[prefix]:
            prefix += 1
        suffix = 0
        while suffix < min(len(wa), len(wb)) - prefix and wa[-1 - suffix] == wb[-1 - suffix]:
            suffix += 1
        only_a, only_b = wa[prefix : len(wa) - suffix], wb[prefix : len(wb) - suffix]
        shared = prefix + suffix
        if not only_a or not only_b or shared < max(2, min(len(wa), len(wb)) // 2):
            return None
        if len(only_a) > self.review_differences or len(only_b) > self.review_differences:
            return None
        return (
            f"same wording but {' '.join(only_a)!r} / {' '.join(only_b)!r}: the same attribute "
            "with another value? Decide which holds (supersede, contradict or keep both)"
        )


def cluster_number(cluster: Cluster, fact_id: str) -> int:
    return next(f.number for f in cluster.facts if f.id == fact_id)
