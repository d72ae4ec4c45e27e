"""Recall's reads and ranking: the search statement and its retries, fusion, the quality gate,
and the hits assembled from what was read."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graphmem.core.messages import episode_text
from graphmem.core.plans import Plan, Run, Transaction, Work, single
from graphmem.core.recall.calibration import shipped
from graphmem.core.recall.cues import Cues, names_period, past_facts
from graphmem.core.recall.fulltext import lucene_query
from graphmem.core.recall.ranking import (
    Candidate,
    ImportanceWeighing,
    RecallConfig,
    Retriever,
    content_words,
    credit_next,
    cut_matches,
    fuse,
    importance_factor,
    index_score_to_cosine,
    lexical_coverage,
    recency_factor,
)
from graphmem.core.recall.scope import RecallRequest
from graphmem.core.recall.statements import KINDS, SearchStatements
from graphmem.core.recall.updates import place_updates
from graphmem.models import Episode, Fact, Hit, Kind, Provenance, Scores, SourceMessage
from graphmem.store.cypher import query

#: How many times recall reads a kept fact's details before it gives up on it (a fact erased
#: since the search has none), when a concurrent update made a read come back without it.
DETAIL_READS = 3


@dataclass
class RecallReads:
    """What one recall read: its candidates, their briefs and then details, and how it searched."""

    candidates: list[Candidate]
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    episodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: A fact that replaced superseded facts the search found -> those facts, in the order
    #: found, and when the replacing fact was recorded (epoch ms).
    through: dict[str, list[str]] = field(default_factory=dict)
    head_at: dict[str, int] = field(default_factory=dict)
    #: What the importance score of such a fact reads (``fact_use``'s map).
    head_use: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    #: And its valid time (``fact_valid_time``'s map).
    head_valid: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    widened: bool = False
    exact: bool = False
    #: The path each kind's first vector read took (RecallResult.vector_paths).
    paths: dict[str, Any] = field(default_factory=dict)
    seen: int = 0
    gated: int = 0

    def add_briefs(self, row: Mapping[str, Any]) -> None:
        """Text, time and similarity of candidates, until details replace them."""
        self.facts.update((b["id"], b) for b in row["fact_briefs"])
        self.episodes.update((b["id"], b) for b in row["episode_briefs"])


def _merged(hits: list[dict[str, Any]], followed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``hits`` and the superseded candidates an earlier read ``followed`` that they lack."""
    seen = {h["id"] for h in hits}
    return [*hits, *(h for h in followed if h["id"] not in seen)]


def _cosines(reads: RecallReads) -> dict[tuple[str, str], float]:
    """Every candidate's cosine similarity to the query, keyed by kind and id; a fact that
    replaced superseded facts the search found takes the best of its own and theirs, as in the
    vector list."""
    cosines = {
        (kind, item_id): index_score_to_cosine(brief["similarity"])
        for kind, briefs in (("fact", reads.facts), ("episode", reads.episodes))
        for item_id, brief in briefs.items()
        if brief.get("similarity") is not None
    }
    for target, olds in reads.through.items():
        found = [cosines[("fact", i)] for i in (target, *olds) if ("fact", i) in cosines]
        if found:
            cosines[("fact", target)] = max(found)
    return cosines


def _exact_cosine(hit: Mapping[str, Any], briefs: Mapping[str, Mapping[str, Any]]) -> float:
    """A vector hit's exact cosine similarity to the query.

    The vector index only selects the candidates: its score may come from quantised vectors,
    so the list is ranked by the similarity the search computed on the stored embeddings (both
    on Neo4j's ``(1 + cos) / 2`` scale).
    """
    similarity = briefs.get(hit["id"], {}).get("similarity")
    return index_score_to_cosine(hit["score"] if similarity is None else similarity)


def _ran_out(retriever: str, fetched: int, asked: int, nodes: int, path: str | None) -> bool:
    """Whether a read that asked for ``asked`` entries returned all the index holds for it
    (``fetched`` of them, the vector index covering ``nodes``): a fulltext index returns every
    match up to the number asked, and so do an exact scan of the namespace and a vector index
    that filters inside itself (``path`` ``exact`` and ``filtered``: it searches on until it has
    found as many of the namespace's entries as asked, or scores all of them), while a vector
    index's unfiltered approximate search may return fewer than asked though it holds more (its
    graph loses the links that ran through deleted nodes)."""
    if retriever == "vector" and path == "unfiltered":
        return fetched >= nodes
    return fetched < asked


def recall_reads(
    ns: str,
    text: str,
    vector: list[float],
    request: RecallRequest,
    now: datetime,
    check_state: Callable[[Mapping[str, Any] | None], None],
    *,
    filtered: bool = False,
    weighing: ImportanceWeighing | None = None,
) -> Work[RecallReads]:
    """The search for ``text`` in ``ns``, widened or done exactly where the filters left too
    few candidates, fused, gated (facts weighed by importance with ``weighing``), and the
    details of what passed; ``check_state`` checks the graph's embedder state that the search
    statement read (when SEARCH fails to plan because a re-embedding dropped the vector
    indexes, the recall plan reads the state in a transaction of its own)."""
    cfg = request.config
    search = SearchStatements(ns, vector, lucene_query(text), request, filtered)
    search.keep_superseded = names_period(text, now, cfg.time_weight)
    found = yield search.run(search.candidates, request.scope.kinds, search.retrievers())
    row = found[0]
    check_state(row["schema_state"])
    reads = RecallReads(candidates=[])
    reads.paths = {k: row[f"{k}_path"] for k in KINDS if row.get(f"{k}_path") is not None}
    reads.add_briefs(row)
    lists: list[tuple[str, Kind, list[tuple[str, float]]]] = []
    for kind, retriever in search.lists():
        hits = yield from _index_hits(search, row, kind, retriever, reads)
        lists.append((retriever, kind, _ranked(hits, kind, retriever, reads)))
    by_score = "vector" in search.retrievers() and cfg.fusion != "rrf"
    following = {i: b["next"] for i, b in reads.episodes.items() if b.get("next")}
    cosines, cut = None, None
    if by_score:
        cosines, cut = _cosines(reads), cut_matches(text, lists, reads.facts, cfg.pool(request.k))
    fused = credit_next(fuse(lists, cfg, cosines, cut), following, cfg)
    reads.seen = len(fused)
    reads.candidates, reads.gated = _gate(text, fused, reads, request.k, now, cfg, weighing)
    yield from _read_details(search, reads)
    if cfg.update_order:
        place_updates(text, reads.candidates, reads.episodes, cfg.update_similarity)
    return reads


def _index_hits(
    search: SearchStatements,
    row: Mapping[str, Any],
    kind: Kind,
    retriever: Retriever,
    reads: RecallReads,
) -> Work[list[dict[str, Any]]]:
    """One index's hits for ``kind``, from the search's ``row``: widened while the filters hid
    too many of them, then, from the vector index, scored exactly if still too few."""
    # Superseded facts standing for their successors, kept through the retries.
    followed = [h for h in row[f"{kind[0]}{retriever[0]}_hits"] if h.get("head")]
    hits, exhausted = yield from _widened(search, row, kind, retriever, followed, reads)
    if retriever == "vector" and len(hits) < search.request.k and not exhausted:
        # Still short: score every visible node of the namespace exactly (and, for facts,
        # every superseded one, which stands for its successor).
        exact = yield search.exact(kind)
        hits = _merged(exact, followed)
        briefs = reads.facts if kind == "fact" else reads.episodes
        briefs.update((h["id"], h["brief"]) for h in exact)
        reads.exact = True
    return hits


def _widened(
    search: SearchStatements,
    row: Mapping[str, Any],
    kind: Kind,
    retriever: Retriever,
    followed: list[dict[str, Any]],
    reads: RecallReads,
) -> Work[tuple[list[dict[str, Any]], bool]]:
    """The index's hits in ``row``, or, while they are fewer than ``k`` and the index holds
    more, those of the search run again asking it for more; and whether the index ran out."""
    cfg, k = search.request.config, search.request.k
    key = f"{kind[0]}{retriever[0]}"
    hits, fetched, asked = row[f"{key}_hits"], row[f"{key}_fetched"], search.candidates
    nodes, path = row[f"{kind}_nodes"], row[f"{kind}_path"]
    for factor in cfg.vector_widen if retriever == "vector" else cfg.fulltext_widen:
        if len(hits) >= k or _ran_out(retriever, fetched, asked, nodes, path):
            break  # enough visible candidates, or the index has no more
        # The filters hid most of what the index returned: ask for more.
        asked = search.candidates * factor
        wider = yield search.run(asked, (kind,), (retriever,))
        hits, fetched, nodes, path = (
            _merged(wider[0][f"{key}_hits"], followed),
            wider[0][f"{key}_fetched"],
            wider[0][f"{kind}_nodes"],
            wider[0][f"{kind}_path"],
        )
        reads.add_briefs(wider[0])
        reads.widened = True
    return hits, _ran_out(retriever, fetched, asked, nodes, path)


def _ranked(
    hits: list[dict[str, Any]], kind: Kind, retriever: Retriever, reads: RecallReads
) -> list[tuple[str, float]]:
    """One index's ranked list of ``hits``: each candidate's id and score, best first."""
    briefs = reads.facts if kind == "fact" else reads.episodes
    # A superseded fact's match ranks the fact that replaced it, in the same list as that
    # fact's own match (the better of the two counts), so that fusion adds its ranks from both
    # retrievers, whichever fact each one found.
    best: dict[str, float] = {}
    for h in hits:
        score = _exact_cosine(h, briefs) if retriever == "vector" else h["score"]
        target = h.get("head") or h["id"]
        if target != h["id"]:
            via = reads.through.setdefault(target, [])
            if h["id"] not in via:
                via.append(h["id"])
            reads.head_at[target] = h["head_at"]
            reads.head_use[target] = h.get("head_use")
            reads.head_valid[target] = h.get("head_valid")
        best[target] = max(score, best.get(target, score))
    return sorted(best.items(), key=lambda x: -x[1])


def _read_details(search: SearchStatements, reads: RecallReads) -> Work[None]:
    """The details of the candidates that passed the gate, in place of their briefs."""
    facts = [c.id for c in reads.candidates if c.kind == "fact"]
    episodes = [c.id for c in reads.candidates if c.kind == "episode"]
    reads.facts, reads.episodes = {}, {}
    for _ in range(DETAIL_READS):
        if not facts and not episodes:
            break
        (details,) = yield search.details(facts, episodes, past_facts(facts, reads.through))
        reads.facts.update((r["id"], r) for r in details["facts"])  # by the id asked for
        reads.episodes.update((r["episode"]["id"], r) for r in details["episodes"])
        # A fact replaced while the statement walked its chain can come back with nothing (it
        # read the fact retired but not yet the edge to its successor): read it again.
        facts, episodes = [i for i in facts if i not in reads.facts], []


def _gate(
    text: str,
    fused: Sequence[Candidate],
    reads: RecallReads,
    k: int,
    now: datetime,
    cfg: RecallConfig,
    weighing: ImportanceWeighing | None = None,
) -> tuple[list[Candidate], int]:
    """The best ``k`` candidates that reach ``min_score`` (:mod:`.calibration`), and how many
    it dropped; nothing when no candidate is about the question (``answer_min_cosine``,
    ``min_lexical``). A fact's odds are weighed by its importance with ``weighing``."""
    words = content_words(text)
    cues = Cues.read(text, now) if cfg.time_weight or cfg.user_weight else None
    if cues is not None:  # a superseded fact true in a period the question names
        fused = cues.with_past_facts(
            fused, reads.through, reads.facts, reads.head_valid, time_weight=cfg.time_weight
        )
    calibration = shipped()
    kept: list[Candidate] = []
    gated = 0
    for cand in fused:
        briefs = reads.facts if cand.kind == "fact" else reads.episodes
        own = briefs.get(cand.id)
        olds = reads.through.get(cand.id, []) if cand.kind == "fact" else []
        tries = [(own, None), *((briefs.get(old_id), old_id) for old_id in olds)]
        if all(brief is None for brief, _ in tries):  # vanished between the index and the read
            continue
        _rank_score(cand, own, reads, now, cfg, cues, weighing)
        # The fact itself, or one of the superseded facts the search found, which then stands
        # for it (its scores shown, via "supersession"): whichever scores best.
        best: tuple[float, str | None, float | None, float, float] | None = None
        for brief, matched in tries:
            if brief is None:
                continue
            similarity = brief["similarity"]
            vector = cand.vector if similarity is None else index_score_to_cosine(similarity)
            # An episode's speaker counts as a word of it, as in its embedding.
            lexical = lexical_coverage(words, episode_text(brief["text"], brief.get("speaker")))
            final = cand.final + cfg.lexical_weight * lexical
            features = {"final": final, "cosine": max(vector or 0.0, 0.0), "lexical": lexical}
            score = calibration.score(features, cand.recency * cand.weight)
            if best is None or score > best[0]:
                best = (score, matched, vector, lexical, final)
        if best is None or best[0] < cfg.min_score:
            gated += 1
            continue
        cand.score, cand.matched, cand.vector, cand.lexical, cand.final = best
        kept.append(cand)
    # Ranked by the rank score (times recency and importance, which multiply the odds); a hit's
    # score is its own probability, or the one above it when that is lower, so that scores
    # fall down the list.
    kept.sort(key=lambda c: (-c.final * c.recency * c.weight, c.kind, c.id))
    for above, below in itertools.pairwise(kept):
        below.score = min(below.score, above.score)
    passing = [c for c in kept if c.score >= cfg.min_score]
    if not any(
        (c.vector or 0.0) >= cfg.answer_min_cosine or c.lexical >= cfg.min_lexical for c in passing
    ):
        return [], gated + len(kept)  # nothing is about the question: no least bad noise
    return passing[:k], gated + len(kept) - len(passing)


def _rank_score(
    cand: Candidate,
    own: Mapping[str, Any] | None,
    reads: RecallReads,
    now: datetime,
    cfg: RecallConfig,
    cues: Cues | None,
    weighing: ImportanceWeighing | None,
) -> None:
    """Set the candidate's time, recency, cue and importance, and its rank score ``final``
    (fused times its cue); recency and importance are kept apart in ``recency`` and
    ``weight``, since the score multiplies the odds by them."""
    cand.at = own["at"] if own is not None else reads.head_at.get(cand.id)
    when = datetime.fromtimestamp(cand.at / 1000, UTC) if cand.at else None
    cand.recency = recency_factor(when, now, cfg)
    cand.final = cand.fused
    if cues is not None:
        role = own.get("role") if own is not None and cand.kind == "episode" else None
        valid = own.get("valid") if own is not None else reads.head_valid.get(cand.id)
        cand.cue = cues.factor(
            when, role, valid, time_weight=cfg.time_weight, user_weight=cfg.user_weight
        )
        cand.final *= cand.cue
    if weighing is not None and cand.kind == "fact" and when is not None:
        use = own["use"] if own is not None else reads.head_use.get(cand.id)
        cand.importance = weighing.score(use, when)
        cand.weight = importance_factor(cand.importance, weighing.config.default, cfg)


def assemble(reads: RecallReads, k: int, cfg: RecallConfig, as_of: datetime | None) -> list[Hit]:
    """Hits for the gated candidates, plus one hop of REFERENCES, best first; with ``as_of``,
    each fact as it was believed then."""

    def fact_of(data: Mapping[str, Any]) -> Fact:
        fact = Fact.model_validate(data)
        return fact if as_of is None else fact.as_believed_at(as_of)

    hits: dict[tuple[str, str], Hit] = {}
    details: dict[tuple[str, str], Mapping[str, Any]] = {}
    for cand in reads.candidates:  # best first
        detail = (reads.facts if cand.kind == "fact" else reads.episodes).get(cand.id)
        if detail is None:
            continue
        fact = fact_of(detail["fact"]) if cand.kind == "fact" else None
        episode = Episode.model_validate(detail["episode"]) if cand.kind == "episode" else None
        # A fact superseded since the search comes back as the fact that replaced it, which a
        # better candidate may have brought already.
        key = (cand.kind, fact.id if fact else cand.id)
        if key in hits:
            continue
        matched = cand.matched or (detail.get("superseded_match") if fact else None)
        details[key] = detail
        hits[key] = Hit(
            kind=cand.kind,
            id=key[1],
            text=fact.text if fact else episode.content,  # type: ignore[union-attr]
            score=cand.score,
            scores=Scores(
                vector=cand.vector,
                vector_rank=cand.vector_rank,
                fulltext=cand.fulltext,
                fulltext_rank=cand.fulltext_rank,
                fused=cand.fused,
                recency=cand.recency,
                importance=cand.importance,
                cue=cand.cue,
                lexical=cand.lexical,
                final=cand.final,
                placed_above=cand.placed_above,
            ),
            provenance=hit_provenance(detail.get("provenance"), episode),
            fact=fact,
            episode=episode,
            via="search" if matched is None else "supersession",
            superseded_match=matched,
        )
    # One hop over REFERENCES from the facts that passed, at a discount.
    for (kind, item_id), hit in list(hits.items()):
        if kind != "fact":
            continue
        for ref in details[(kind, item_id)]["references"]:
            fact = fact_of(ref["fact"])
            key = ("fact", fact.id)
            score = hit.score * cfg.reference_discount
            if key in hits and (hits[key].via != "reference" or hits[key].score >= score):
                continue  # found by the search, or through a better-scoring hit
            cosine = (
                index_score_to_cosine(ref["similarity"]) if ref["similarity"] is not None else None
            )
            hits[key] = Hit(
                kind="fact",
                id=fact.id,
                text=fact.text,
                score=score,
                scores=Scores(vector=cosine, fused=0.0, recency=1.0, lexical=0.0, final=score),
                provenance=hit_provenance(ref["provenance"], None),
                fact=fact,
                via="reference",
                referenced_from=item_id,
                superseded_match=ref["superseded_match"],
            )
    # Equal scores keep the candidates' order (an update placed just above its original may
    # share its score when that one is already 1).
    place = {key: n for n, key in enumerate(hits)}
    ranked = sorted(
        hits.items(), key=lambda item: (-item[1].score, item[1].via == "reference", place[item[0]])
    )
    return [hit for _, hit in ranked[:k]]


_DIGITS = re.compile(r"(\d+)")
#: Before any message's time: what messages sent without one are compared by among themselves.
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)


def _message_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Messages in the order they were sent: by ``occurred_at``, those without one last; then
    by the caller's id, its numbers compared as numbers (m2 before m10); then by episode id."""
    sent = row["occurred_at"]
    external = row["external_id"] or ""
    parts = tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in _DIGITS.split(external)
        if part
    )
    return (sent is None, sent or _EPOCH, not external, parts, row["id"])


def hit_provenance(rows: Sequence[Mapping[str, Any]] | None, episode: Episode | None) -> Provenance:
    """A hit's provenance: ``episode`` itself, or the episodes (``fact_provenance`` rows) a
    fact was derived from, in the order they were sent (:func:`_message_order`), so that the
    order is the same from run to run and reads as the conversation did."""
    if episode is not None:
        rows = [
            {
                "id": episode.id,
                "external_id": episode.external_id,
                "session_id": episode.session_id,
                "occurred_at": episode.occurred_at,
            }
        ]
    rows = sorted(rows or (), key=_message_order)
    return Provenance(
        episode_ids=tuple(r["id"] for r in rows),
        external_ids=tuple(r["external_id"] for r in rows if r["external_id"]),
        session_ids=tuple(dict.fromkeys(r["session_id"] for r in rows if r["session_id"])),
        messages=tuple(
            SourceMessage(
                episode_id=r["id"],
                external_id=r["external_id"],
                session_id=r["session_id"],
                occurred_at=r["occurred_at"],
            )
            for r in rows
        ),
    )


def stamp_access(ns: str, fact_ids: list[str], episode_ids: list[str]) -> Plan[float]:
    """Adds 1 to the access count of each fact and episode, in one write; its time in ms."""
    if not fact_ids and not episode_ids:
        return 0.0
    started = time.perf_counter()
    # Stamped in id order, not rank order: concurrent recalls that found the same nodes then
    # take their locks in the same order, and wait for each other instead of deadlocking.
    params = {"ns": ns, "fact_ids": sorted(fact_ids), "episode_ids": sorted(episode_ids)}
    yield Transaction("write", lambda: single(Run(query("access_stamp"), params)))
    return (time.perf_counter() - started) * 1000
