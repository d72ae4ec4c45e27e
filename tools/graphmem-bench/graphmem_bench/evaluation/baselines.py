"""Two reference retrievers computed outside Neo4j over one conversation's messages.

* :class:`CosineBaseline` ranks every message by the exact cosine similarity of its vector to
  the question's vector (the same embedder, hence the same vectors, as graphmem's index).
* :class:`BM25` is Okapi BM25 with ``k1 = 1.2`` and ``b = 0.75``: a message ``d`` scores
  ``sum over query terms t of idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b *
  |d| / avgdl))`` with ``idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))`` (never negative),
  ``N`` messages, ``n(t)`` of them containing ``t``, ``|d|`` and ``avgdl`` in tokens. The
  tokenizer lower-cases the text and splits it into runs of Unicode letters and digits; there
  is no stemming and no stop-word list (idf discounts common words). Each distinct query term
  counts once. Messages sharing no term with the question are not returned.

* :func:`rrf` fuses the two rankings with plain reciprocal rank fusion: a message scores
  ``1 / (60 + rank)`` in each list it is in (each list cut at 100), the weights equal.

Ties keep the messages' conversation order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return [match.group(0).lower() for match in _TOKEN.finditer(text)]


class BM25:
    """Okapi BM25 over a fixed list of documents."""

    def __init__(self, documents: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._tf = [Counter(tokenize(doc)) for doc in documents]
        self._lengths = [sum(tf.values()) for tf in self._tf]
        self._avgdl = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        n = len(documents)
        self._idf = {
            term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()
        }

    def scores(self, query: str) -> list[float]:
        """One score per document, in document order."""
        terms = set(tokenize(query))
        out = []
        for tf, length in zip(self._tf, self._lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self._avgdl) if self._avgdl else 0.0
            score = 0.0
            for term in terms:
                freq = tf.get(term, 0)
                if freq:
                    score += self._idf[term] * freq * (self.k1 + 1) / (freq + norm)
            out.append(score)
        return out

    def rank(self, query: str, k: int) -> list[int]:
        """Indexes of the best ``k`` documents with a positive score, best first."""
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [i for _, i in scored[:k]]


class CosineBaseline:
    """Exact cosine similarity over a matrix of message vectors (one row per message)."""

    def __init__(self, vectors: npt.ArrayLike) -> None:
        matrix = np.asarray(vectors, dtype=np.float64)
        if matrix.ndim != 2:
            raise ValueError("vectors must be a matrix with one row per message")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self._unit = matrix / np.where(norms == 0, 1.0, norms)

    def scores(self, query: npt.ArrayLike) -> npt.NDArray[np.float64]:
        vector = np.asarray(query, dtype=np.float64).reshape(-1)
        norm = float(np.linalg.norm(vector))
        return np.asarray(self._unit @ (vector / norm if norm else vector), dtype=np.float64)

    def rank(self, query: npt.ArrayLike, k: int) -> list[int]:
        """Indexes of the ``k`` most similar messages, best first (stable on ties)."""
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")
        return [int(i) for i in order[:k]]


#: Plain RRF's constant and the depth of each list it fuses.
RRF_K = 60
RRF_DEPTH = 100


def rrf(rankings: Sequence[Sequence[int]], k: int) -> list[int]:
    """Plain reciprocal rank fusion of ``rankings`` (each best first), the best ``k``; ties keep
    the smaller index (conversation order)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, index in enumerate(ranking[:RRF_DEPTH], start=1):
            fused[index] = fused.get(index, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused, key=lambda i: (-fused[i], i))[:k]
