"""Pure ranking logic of recall: fusion, recency, the lexical measure and the quality gate.

Nothing here touches the database; the sync and async clients share it.

* **Fusion.** Each retriever (the vector index and the fulltext index, over facts and over
  episodes) gives a candidate list. Relative fusion (the default) scores an item
  ``vector_weight * max(cosine, 0) / best_cosine + fulltext_weight * fulltext /
  best_fulltext``, each retriever's score divided by the best one among the candidates (the
  best cosine of facts and episodes together, which one embedder puts on one scale; the best
  fulltext score of the item's own kind, since two Lucene indexes score on different scales),
  so that both lie in [0, 1] whatever the query; an item one list left out is
  scored by its cosine all the same (a fulltext score of 0 when the text did not match).
  Linear fusion is the same without dividing the cosine by the best one. Reciprocal rank
  fusion scores ``sum(weight / (rrf_k + rank))`` over the lists an item appears in, with
  ``rrf_k = 60`` (equal weights give plain RRF). Relative fusion was chosen on BEAM, RealMem
  and synthetic sets together (``docs/evaluation.md``): it keeps how much better the best
  match is, which ranks throw away.
* **The next message.** An episode gains ``next_credit`` times the fused score of the message
  that follows it in its session, when that one is a candidate too: a reply that matches the
  query says what the message it answers was about.
* **Recency.** The odds of a hit's score (:mod:`.calibration`) are multiplied by
  ``1 + recency_weight * 0.5 ** (age / half_life)``, age measured from when the fact was
  recorded or the message was sent to the start of the hour of the reference time (``as_of``
  or now), so that the same question asked twice scores the same. With the defaults a
  brand-new item gains at most 1 %, a tie-breaker.
* **Importance.** With ``importance_weight`` above 0 (off by default), the odds of a fact's
  score are also multiplied by ``max(0, 1 + importance_weight * (score - default))``,
  ``score`` being the fact's importance score at the time of the call
  (:mod:`graphmem.core.importance`) and ``default`` the importance of a fact remembered
  without one. Episodes are not weighed.
* **Question cues.** A message sent in, or a fact true in, a period the question names
  ("yesterday", "last week", "in March") is multiplied by ``1 + time_weight`` (0.2), and for a
  question in the first person a user's message by ``1 + user_weight`` (0.5); see :mod:`.cues`.
* **Rank score and score.** A candidate's rank score (``final``) is its fused score times its
  cue plus ``lexical_weight`` times the share of the question's content words in its text;
  its score is the calibrated probability that it answers (:mod:`.calibration`).
* **Quality gate.** Every hit needs ``min_score``; and recall answers only when some candidate
  has a cosine similarity of at least ``answer_min_cosine`` or holds ``min_lexical`` of the
  query's content words (for an episode, ``speaker: content``, as it is embedded): when none
  does, recall returns nothing rather than the least bad noise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from graphmem.core.importance import ImportanceConfig, importance_score

Retriever = Literal["vector", "fulltext"]

# Lucene's English stop words plus question words, which carry no topic of their own.
_STOP_WORD_TEXT = """
    a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with what when where which who whom whose why how
    do does did done i me my we our you your he she his her its them am been being have has
    had can could would should shall may might must about tell please any some
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())
# A word keeps the apostrophes inside it (straight or typographic), as Lucene's tokenizer does:
# "user's" and "O'Brien" are one word each, not "user" and a stray "s".
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*", re.UNICODE)
# The clitics "'s", "'m", "'d", "'ll", "'re" and "'ve" are dropped before the stop words are:
# "what's" is "what" and "I'm" is "I", so neither counts as a content word.
_CLITIC = re.compile(r"['\u2019](?:s|m|d|ll|re|ve)$")


#: The score every hit needs by default: chosen on the development sets, where the hits below it
#: were nearly all noise (``docs/evaluation.md``).
DEFAULT_MIN_SCORE = 0.005

#: The most entries recall may ask one index query for: a bigger request could exhaust the
#: server's heap (the index collects its hits in memory) for every namespace it serves.
MAX_INDEX_CANDIDATES = 100_000

#: The largest ``rrf_k`` and retriever weight: fused scores stay finite floats (weights are
#: relative, so larger ones would change nothing but the scale).
MAX_FUSION_PARAMETER = 1_000_000


def _list_as_tuple(value: object) -> object:
    """A list given for a tuple field is that tuple (also when validated strictly)."""
    return tuple(value) if isinstance(value, list) else value


#: A tuple field that takes a list too.
_Listed = BeforeValidator(_list_as_tuple)


class RecallConfig(BaseModel):
    """How recall ranks; immutable, set per client and overridable per call."""

    # Finite numbers only: an infinite weight makes every score infinite, and so every hit tie.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    fusion: Literal["relative", "rrf", "linear"] = "relative"
    rrf_k: int = Field(default=60, ge=1, le=MAX_FUSION_PARAMETER)
    vector_weight: float = Field(default=0.7, ge=0.0, le=MAX_FUSION_PARAMETER)
    fulltext_weight: float = Field(default=0.3, ge=0.0, le=MAX_FUSION_PARAMETER)
    retrievers: Annotated[tuple[Retriever, ...], _Listed] = Field(
        default=("vector", "fulltext"), min_length=1
    )
    recency: bool = True
    recency_weight: float = Field(default=0.01, ge=0.0, le=1.0)
    recency_half_life_days: float = Field(default=30.0, gt=0)
    #: The score (a probability, :mod:`.calibration`) every hit needs.
    min_score: float = Field(default=DEFAULT_MIN_SCORE, ge=0.0, le=1.0)
    #: Recall answers only when one candidate reaches this cosine similarity to the question,
    #: or holds ``min_lexical`` of its content words; otherwise it returns nothing rather than
    #: the least bad noise.
    answer_min_cosine: float = Field(default=0.2, ge=-1.0, le=1.0)
    min_lexical: float = Field(default=0.5, gt=0.0, le=1.0)
    #: Candidates kept per retriever and kind: max(pool_min, k * pool_factor).
    pool_factor: int = Field(default=3, ge=1, le=100)
    pool_min: int = Field(default=30, ge=1, le=MAX_INDEX_CANDIDATES)
    #: The indexes are asked for max(candidates_min, pool * overfetch) entries before filtering.
    overfetch: int = Field(default=2, ge=1, le=100)
    candidates_min: int = Field(default=50, ge=1, le=MAX_INDEX_CANDIDATES)
    #: When filters leave fewer than ``k`` visible candidates in a list, the index is asked
    #: again for ``candidates * factor`` entries, for each factor in turn; a vector list still
    #: short after that is scored exactly over the namespace, a fulltext list is kept as it is.
    vector_widen: Annotated[tuple[Annotated[int, Field(ge=1, le=1000)], ...], _Listed] = Field(
        default=(10,), max_length=5
    )
    fulltext_widen: Annotated[tuple[Annotated[int, Field(ge=1, le=1000)], ...], _Listed] = Field(
        default=(10,), max_length=5
    )
    #: Share of the score of the next message in its session that an episode gains.
    next_credit: float = Field(default=0.3, ge=0.0, le=1.0)
    #: Rank a newer message that restates an older hit with a changed value above it (and an
    #: older one first for a question about the past); see :mod:`.updates`.
    update_order: bool = True
    #: The cosine similarity two messages need to count as statements of the same thing.
    update_similarity: float = Field(default=0.4, ge=-1.0, le=1.0)
    #: Score of a fact reached over REFERENCES, relative to the hit that led to it.
    reference_discount: float = Field(default=0.5, ge=0.0, le=1.0)
    #: How much a fact's importance score moves its rank (0: not at all); see
    #: :func:`importance_factor`.
    importance_weight: float = Field(default=0.0, ge=0.0, le=10.0)
    #: How much more a message sent in, or a fact true in, a period the question names counts
    #: (0: not at all); see :mod:`.cues`.
    time_weight: float = Field(default=0.2, ge=0.0, le=10.0)
    #: How much more a user's message counts when the question is in the first person (0:
    #: not at all); see :mod:`.cues`.
    user_weight: float = Field(default=0.5, ge=0.0, le=10.0)
    #: What the share of the question's content words in a hit adds to its rank score (0:
    #: nothing); see :mod:`.calibration`.
    lexical_weight: float = Field(default=0.2, ge=0.0, le=10.0)

    def pool(self, k: int) -> int:
        return max(self.pool_min, k * self.pool_factor)

    def candidates(self, k: int) -> int:
        return max(self.candidates_min, self.pool(k) * self.overfetch)

    def widest(self, k: int) -> int:
        """The most entries one index query may ask for at ``k`` (widened retries included)."""
        factor = max((*self.vector_widen, *self.fulltext_widen, 1))
        return self.candidates(k) * factor


@dataclass
class Candidate:
    """One fact or episode on its way through fusion."""

    kind: Literal["fact", "episode"]
    id: str
    vector: float | None = None  # cosine, -1..1
    vector_rank: int | None = None
    fulltext: float | None = None
    fulltext_rank: int | None = None
    fused: float = 0.0
    lexical: float = 0.0
    recency: float = 1.0
    #: A fact's importance score, when recall weighs importance.
    importance: float | None = None
    #: What the question's cues multiplied its score by (see :mod:`.cues`).
    cue: float = 1.0
    #: For a fact that replaced the superseded fact the search found: that fact's id.
    matched: str | None = None
    #: When it was recorded (a fact) or sent (an episode), epoch ms, once the gate read it.
    at: int | None = None
    #: The rank score within the question: fused times the cue, plus ``lexical_weight`` times
    #: the share of the question's words (see :mod:`.calibration`).
    final: float = 0.0
    #: What a fact's importance multiplies the odds of its score by (1.0 unless recall
    #: weighs importance).
    weight: float = 1.0
    #: The calibrated score recall ranks by (:mod:`.calibration`), raised for an update
    #: (see :mod:`.updates`).
    score: float = 0.0
    #: The hit this one was placed just above as the newer (or older) message of an update.
    placed_above: str | None = None


def index_score_to_cosine(score: float) -> float:
    """Neo4j's cosine scores are ``(1 + cos) / 2``; this gives back ``cos``."""
    return 2.0 * score - 1.0


def fuse(
    lists: Iterable[tuple[str, Literal["fact", "episode"], Sequence[tuple[str, float]]]],
    config: RecallConfig,
    cosines: Mapping[tuple[str, str], float] | None = None,
    cut: Mapping[tuple[str, str], float] | None = None,
) -> list[Candidate]:
    """Fuse ranked ``(retriever, kind, [(id, score), ...])`` lists into candidates, best first.

    Vector scores are cosines (-1..1); fulltext scores are Lucene scores. Relative and linear
    fusion take the cosine of a candidate the vector list left out from ``cosines`` (keyed by
    kind and id), so that a fulltext match is not scored as if it resembled nothing: the
    vector list is cut at the pool size, and whether a candidate made it should not decide
    its score. For the same reason a candidate the fulltext list cut off but matched is scored
    by the fulltext score ``cut`` gives it (keyed by kind and id; see :func:`cut_matches`),
    though ``Candidate.fulltext`` stays empty: the index gave it no score of its own.
    """
    found: dict[tuple[str, str], Candidate] = {}
    best_fulltext: dict[str, float] = {}
    for retriever, kind, ranked in lists:
        for rank, (item_id, score) in enumerate(ranked, start=1):
            cand = found.setdefault((kind, item_id), Candidate(kind=kind, id=item_id))
            if retriever == "vector":
                cand.vector, cand.vector_rank = score, rank
            else:
                cand.fulltext, cand.fulltext_rank = score, rank
                best_fulltext[kind] = max(best_fulltext.get(kind, 0.0), score)
    for cand in found.values():
        if cand.vector is None and cosines is not None:
            cand.vector = cosines.get((cand.kind, cand.id))
    # Cosines of facts and of episodes lie on one scale (one embedder), so they share the best;
    # Lucene scores of two indexes do not, so each kind keeps its own best fulltext score.
    best_cosine = max((cand.vector or 0.0 for cand in found.values()), default=0.0)
    for cand in found.values():
        if config.fusion == "rrf":
            cand.fused = sum(
                weight / (config.rrf_k + rank)
                for weight, rank in (
                    (config.vector_weight, cand.vector_rank),
                    (config.fulltext_weight, cand.fulltext_rank),
                )
                if rank is not None
            )
        else:
            vector_part = max(cand.vector or 0.0, 0.0)
            if config.fusion == "relative" and best_cosine > 0:
                vector_part /= best_cosine
            top = best_fulltext.get(cand.kind, 0.0)
            fulltext = cand.fulltext
            if fulltext is None and cut is not None:
                fulltext = cut.get((cand.kind, cand.id))
            fulltext_part = (fulltext or 0.0) / top if top > 0 else 0.0
            cand.fused = config.vector_weight * vector_part + config.fulltext_weight * fulltext_part
    return sorted(found.values(), key=lambda c: (-c.fused, c.kind, c.id))


def cut_matches(
    query: str,
    lists: Sequence[tuple[str, Literal["fact", "episode"], Sequence[tuple[str, float]]]],
    briefs: Mapping[str, Mapping[str, Any]],
    pool: int,
) -> dict[tuple[str, str], float]:
    """Facts the fulltext list cut off though they match the query's names, each with the
    last score the list kept: what :func:`fuse` scores them by.

    When a question names someone ("Which concert did Leila go to?"), its other words are
    few, and a namespace holds many facts about that person, the fulltext list fills up with
    those of them that match the name and some incidental word, and the fact that answers,
    which matches the name alone, falls past the pool: its fulltext score would be 0 while its
    rivals gain up to ``fulltext_weight``. A fact the vector list found whose text (its
    ``briefs`` entry, by id) holds every proper name of the query (:func:`proper_names`) did
    match the fulltext query, only not well enough for the list, whose last score is the most
    it could have scored. Facts only: the rule was chosen on the benchmark's facts
    (``docs/benchmarks.md``)."""
    names = proper_names(query)
    fulltext = next(
        (ranked for retriever, kind, ranked in lists if (retriever, kind) == ("fulltext", "fact")),
        None,
    )
    if not names or fulltext is None or len(fulltext) < pool:
        return {}
    last, listed = fulltext[-1][1], {item_id for item_id, _ in fulltext}
    return {
        ("fact", item_id): last
        for retriever, kind, ranked in lists
        if (retriever, kind) == ("vector", "fact")
        for item_id, _ in ranked
        if item_id not in listed and holds_names(names, briefs.get(item_id, {}).get("text", ""))
    }


def credit_next(
    fused: list[Candidate], following: Mapping[str, str], config: RecallConfig
) -> list[Candidate]:
    """Each episode gains ``next_credit`` times the fused score of the next message in its
    session (``following``: episode id -> the next one's id) when that one is a candidate
    too; best first again."""
    if config.next_credit == 0:
        return fused
    episodes = {c.id: c for c in fused if c.kind == "episode"}
    gains = {
        item_id: config.next_credit * episodes[following[item_id]].fused
        for item_id in episodes
        if following.get(item_id) in episodes
    }
    for item_id, gain in gains.items():
        episodes[item_id].fused += gain
    return sorted(fused, key=lambda c: (-c.fused, c.kind, c.id))


def recency_factor(when: datetime | None, now: datetime, config: RecallConfig) -> float:
    """``1 + weight * 0.5 ** (age_days / half_life)``; 1.0 when off or the time is unknown."""
    if not config.recency or when is None or config.recency_weight == 0:
        return 1.0
    # Ages count from the start of the hour, so that the same question asked twice scores the
    # same (a message of the last hour is as new as one of this instant).
    hour = now.replace(minute=0, second=0, microsecond=0)
    age_days = max((hour - when).total_seconds(), 0.0) / 86_400
    return 1.0 + config.recency_weight * math.pow(0.5, age_days / config.recency_half_life_days)


def importance_factor(score: float, default: float, config: RecallConfig) -> float:
    """``max(0, 1 + importance_weight * (score - default))``: what a fact's importance
    ``score`` multiplies its fused score by (1.0 at ``default``, the importance of a fact
    remembered without one, and whenever the weight is 0)."""
    if config.importance_weight == 0:
        return 1.0
    return max(0.0, 1.0 + config.importance_weight * (score - default))


@dataclass(frozen=True)
class ImportanceWeighing:
    """How one recall weighs facts by importance: the score's parameters, and the time it is
    computed at (the time of the call, also for an ``as_of`` recall: access counts are
    current values, not history)."""

    config: ImportanceConfig
    now: datetime

    def score(self, use: Mapping[str, Any] | None, recorded_at: datetime) -> float:
        """The importance score of a fact recorded at ``recorded_at`` whose importance, access
        count and last access (epoch ms) ``use`` holds (``fact_use``'s map)."""
        use = use or {}
        accessed = use.get("accessed")
        return importance_score(
            use.get("importance"),
            recorded_at,
            None if accessed is None else datetime.fromtimestamp(accessed / 1000, UTC),
            use.get("access_count"),
            self.now,
            self.config,
        )


def _stem(word: str) -> str:
    """A light suffix stripper: works/working/worked -> work, moves/moved/move -> mov."""
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def proper_names(text: str) -> set[str]:
    """The capitalised words of ``text`` that do not open a sentence (names, most often),
    lower-cased and without their clitics ("Leila's" is "leila"); "I" is none."""
    names, after = set(), 0
    for m in _WORD.finditer(text):
        word = _CLITIC.sub("", m.group(0))
        # The first word, or one after the end of a sentence, opens one.
        opens = after == 0 or any(c in ".!?\n" for c in text[after : m.start()])
        if word[:1].isupper() and word != "I" and not opens:
            names.add(word.lower())
        after = m.end()
    return names


def holds_names(names: set[str], text: str) -> bool:
    """Whether every one of ``names`` (see :func:`proper_names`) is a word of ``text``."""
    return names <= {_CLITIC.sub("", m.group(0).lower()) for m in _WORD.finditer(text)}


def content_words(text: str) -> set[str]:
    """Lower-cased, lightly stemmed words of ``text`` without their clitics and stop words."""
    return {
        _stem(w)
        for w in (_CLITIC.sub("", m.group(0).lower()) for m in _WORD.finditer(text))
        if w not in STOP_WORDS
    }


def lexical_coverage(query_words: set[str], text: str) -> float:
    """The share of the query's content words that occur in ``text`` (0 when it has none)."""
    if not query_words:
        return 0.0
    return len(query_words & content_words(text)) / len(query_words)
