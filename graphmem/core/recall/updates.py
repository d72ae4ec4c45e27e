"""Knowledge updates among verbatim messages: a newer message that changes what an older hit
said ranks above it, unless the question asks about the past.

Facts carry their updates as ``SUPERSEDES`` edges, and recall already returns only the believed
fact. Messages carry nothing of the kind, so recall reads it from what they hold. Two of the
hits are taken for an **update pair** when

* they are messages of the same speaker (or, without speakers, the same role): a reply does not
  update the message it answers;
* their cosine similarity is at least ``update_similarity`` (0.4): they are about the same thing;
* the newer one announces a change: a word such as *now*, *moved*, *changed*, *instead*,
  *rescheduled* or *no longer* (:data:`CHANGE_WORDS`) in a short message (at most
  :data:`SHORT_MESSAGE` characters), or, in a longer one, in a sentence that holds at least
  :data:`SENTENCE_COVERAGE` of the question's content words (a long message mentions many things,
  and its word "new" may be about any of them).

Within the hits (the best ``k``), the newer message of each pair is placed just above the older
one when the older ranks first; for a question about the past (*before*, *used to*,
*originally*, :data:`PAST_WORDS`) the older one is placed above the newer instead. ``as_of`` and
``valid_at`` need no special case: they hide what came later, so the newest message still
visible is what was current then.

Only a question about how things stand reorders: one about an event ("When did I join the
gym?", "How did my half marathon go?") or about anything ever so ("Have I ever used Flask?")
moves nothing (:data:`EVENT_WORDS`), since a newer message about the same thing does not answer
it better: on LoCoMo and BEAM such questions lost their right first hit to the reordering.

The words are English. The rule was chosen on BEAM, LoCoMo, RealMem and synthetic sets together
(``docs/evaluation.md``), where it leaves recall_any@k unchanged (it only reorders the hits) and
moves the updated message of most knowledge updates above the original.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphmem.core.recall.ranking import (
    Candidate,
    content_words,
    index_score_to_cosine,
    lexical_coverage,
)

CHANGE_WORDS = re.compile(
    r"\b(now|new|newly|latest|updated?|updates|updating|chang(?:e|ed|es|ing)|"
    r"mov(?:e|ed|es|ing)|revis(?:e|ed|ing)|switch(?:ed|ing)?|instead|no longer|anymore|"
    r"any more|actually|resched\w*|postpon\w*|pushed|increas\w*|decreas\w*|rais(?:e|ed)|"
    r"dropp(?:ed)?|replac\w*|these days|adjust\w*|shift(?:ed)?|extend(?:ed)?)\b",
    re.IGNORECASE,
)
PAST_WORDS = re.compile(
    r"\b(before|previous(?:ly)?|original(?:ly)?|initial(?:ly)?|former(?:ly)?|earlier|"
    r"used to|at first|in the past|prior)\b",
    re.IGNORECASE,
)
#: A question about an event ("When did I ...?", "How did it go?", "Was it ...?") or about
#: anything ever so ("Have I ever ...?") asks about what happened, not about the current state
#: of something: a newer message about the same thing does not answer it better.
EVENT_WORDS = re.compile(
    r"\b(did|didn't|was|wasn't|were|weren't|had|hadn't|ever|happened|summari[sz]e)\b",
    re.IGNORECASE,
)
#: A message up to this long is about one thing: a change word anywhere in it counts.
SHORT_MESSAGE = 160
#: In a longer message, the sentence with the change word must hold this share of the
#: question's content words.
SENTENCE_COVERAGE = 0.4
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


@dataclass(frozen=True)
class Message:
    """What the rule reads of one hit."""

    id: str
    text: str
    speaker: str | None
    role: str | None
    #: When it was sent (epoch ms), or None.
    at: int | None


def asks_about_the_past(question: str) -> bool:
    return PAST_WORDS.search(question) is not None


def asks_about_an_event(question: str) -> bool:
    """Whether the question asks what happened rather than how things stand (and is not
    about what was so before a change, which :func:`asks_about_the_past` reads)."""
    return EVENT_WORDS.search(question) is not None and not asks_about_the_past(question)


def announces_change(text: str, question_words: set[str]) -> bool:
    """Whether ``text`` says that something changed, about what the question asks."""
    if len(text) <= SHORT_MESSAGE:
        return CHANGE_WORDS.search(text) is not None
    return any(
        CHANGE_WORDS.search(sentence) is not None
        and lexical_coverage(question_words, sentence) >= SENTENCE_COVERAGE
        for sentence in (m.group(0) for m in _SENTENCE.finditer(text))
    )


def order_updates(
    question: str,
    ranked: Sequence[Message],
    similarity: Mapping[tuple[str, str], float],
    threshold: float,
) -> dict[str, str]:
    """Which hit to place just above which: ``{moved id: id it is placed above}``.

    ``ranked`` is best first; ``similarity`` holds the cosine of each pair of ids (either
    order). A hit is moved at most once, above the best-ranked hit it pairs with. A question
    about an event (:func:`asks_about_an_event`) moves nothing."""
    if asks_about_an_event(question):
        return {}
    past = asks_about_the_past(question)
    words = content_words(question)
    changes = {m.id: announces_change(m.text, words) for m in ranked}
    moves: dict[str, str] = {}
    for j, later in enumerate(ranked):
        for above in ranked[:j]:
            if not _same_voice(above, later) or above.at is None or later.at is None:
                continue
            if above.at == later.at:
                continue
            newer = later if above.at < later.at else above
            if not changes[newer.id]:
                continue
            pair = similarity.get((above.id, later.id), similarity.get((later.id, above.id)))
            if pair is None or pair < threshold:
                continue
            if (later is newer) != past:
                moves[later.id] = above.id
                break
    return moves


def _same_voice(a: Message, b: Message) -> bool:
    if a.speaker is not None and b.speaker is not None:
        return a.speaker == b.speaker
    return a.role == b.role


def place_updates(
    question: str,
    candidates: list[Candidate],
    episodes: Mapping[str, Mapping[str, Any]],
    threshold: float,
) -> None:
    """Reorder ``candidates`` (best first, in place) by :func:`order_updates` over the
    episodes among them: a moved one's ``final`` score is raised to just above the hit it is
    placed above, and ``placed_above`` names that hit. ``episodes`` maps an episode id to its
    details (``episode`` with its properties, ``similar`` with its similarity to the others on
    Neo4j's ``(1 + cos) / 2`` scale, each pair once); a candidate's time is its ``at``."""
    messages: list[Message] = []
    similarity: dict[tuple[str, str], float] = {}
    for cand in candidates:
        detail = episodes.get(cand.id) if cand.kind == "episode" else None
        if detail is None:
            continue
        episode = detail["episode"]
        messages.append(
            Message(cand.id, episode["content"], episode["speaker"], episode["role"], cand.at)
        )
        similarity.update(
            ((cand.id, o["id"]), index_score_to_cosine(o["similarity"])) for o in detail["similar"]
        )
    if len(messages) < 2:
        return
    by_id = {c.id: c for c in candidates if c.kind == "episode"}
    for moved, above in order_updates(question, messages, similarity, threshold).items():
        cand, other = by_id[moved], by_id[above]
        cand.score = max(cand.score, other.score)
        cand.placed_above = above
        candidates.remove(cand)
        candidates.insert(candidates.index(other), cand)
