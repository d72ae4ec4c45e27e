"""The configurations an evaluation compares: recall configurations over the full or the
user-only corpus, and the two baselines computed outside Neo4j."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from graphmem import InvalidInputError, RecallConfig
from graphmem.models import Hit, describe_validation_error

Corpus = Literal["all", "user"]
Baseline = Literal["cosine", "bm25", "rrf"]

#: How many configurations end the built-in list as baselines computed outside Neo4j.
BASELINES = 3


@dataclass(frozen=True)
class Configuration:
    """One way of retrieving: a recall configuration over a corpus, or a baseline."""

    name: str
    description: str
    config: RecallConfig | None = None
    corpus: Corpus = "all"
    baseline: Baseline | None = None
    #: Reorders recall's hits before they become message ids (an experiment on top of a
    #: recall configuration; run_sets' ``extra`` takes such configurations).
    rerank: Callable[[Sequence[Hit]], list[Hit]] | None = None


def variant(default: RecallConfig, spec: str) -> Configuration:
    """``NAME:key=value,key=value`` to a configuration: the default with those RecallConfig
    fields changed (``retrievers=vector+fulltext`` for a tuple)."""
    name, sep, body = spec.partition(":")
    if not sep or not name.strip() or not body.strip():
        raise InvalidInputError(f"variant {spec!r} is not NAME:key=value[,key=value...]")
    update: dict[str, Any] = {}
    for pair in body.split(","):
        key, eq, value = (part.strip() for part in pair.partition("="))
        if not eq or key not in RecallConfig.model_fields:
            raise InvalidInputError(
                f"variant {spec!r}: {pair.strip()!r} is not a RecallConfig field=value"
            )
        update[key] = tuple(value.split("+")) if key.endswith(("retrievers", "widen")) else value
    try:
        config = RecallConfig.model_validate({**default.model_dump(), **update})
    except ValidationError as exc:
        raise InvalidInputError(f"variant {spec!r}: {describe_validation_error(exc)}") from exc
    return Configuration(name.strip(), f"default with {body.strip()}", config)


def configurations(default: RecallConfig, variants: Sequence[str] = ()) -> list[Configuration]:
    """The product default first, then one change each, the variants, and the baselines.

    A variant may not take the name of a built-in configuration or of another variant: the
    report and each question's ranked lists are keyed by name."""
    builtin = _builtin(default)
    made = [variant(default, spec) for spec in variants]
    extra = with_new_names(builtin, made, "variant", "a built-in configuration")
    return [*builtin[:-BASELINES], *extra, *builtin[-BASELINES:]]


def with_new_names(
    specs: Sequence[Configuration],
    added: Sequence[Configuration],
    what: str = "configuration",
    owner: str = "a built-in configuration or a variant",
) -> list[Configuration]:
    """``added``, after checking that no name in it is taken by ``specs`` (each one ``owner``)
    or by an earlier one of ``added`` (the report and each question's ranked lists are keyed
    by name)."""
    taken = dict.fromkeys((spec.name for spec in specs), owner)
    for spec in added:
        if spec.name in taken:
            raise InvalidInputError(
                f"{what} name {spec.name!r} is already taken by {taken[spec.name]}; "
                "choose another name"
            )
        taken[spec.name] = f"another {what}"
    return list(added)


def _builtin(default: RecallConfig) -> list[Configuration]:
    """The built-in configurations in report order; the last :data:`BASELINES` are the
    baselines."""
    change = default.model_copy
    return [
        Configuration(
            "default",
            "relative fusion, next-message credit, update order, recency, question cues, "
            "quality gate (product default)",
            default,
        ),
        Configuration(
            "vector-only", "vector index only", change(update={"retrievers": ("vector",)})
        ),
        Configuration(
            "fulltext-only", "fulltext index only", change(update={"retrievers": ("fulltext",)})
        ),
        Configuration(
            "fusion-rrf",
            "plain reciprocal rank fusion (equal weights, k 60) instead of relative fusion",
            change(update={"fusion": "rrf", "vector_weight": 1.0, "fulltext_weight": 1.0}),
        ),
        Configuration(
            "fusion-linear",
            "linear fusion (cosine not divided by the best) instead of relative",
            change(update={"fusion": "linear"}),
        ),
        Configuration(
            "next-credit-off",
            "no credit from the next message in the session",
            change(update={"next_credit": 0.0}),
        ),
        Configuration(
            "update-order-off",
            "no reordering of knowledge updates",
            change(update={"update_order": False}),
        ),
        Configuration("recency-off", "without recency", change(update={"recency": False})),
        Configuration(
            "user-cue-off",
            "the user's messages not raised for a question in the first person",
            change(update={"user_weight": 0.0}),
        ),
        Configuration(
            "time-cue-off",
            "hits sent in a period the question names not raised",
            change(update={"time_weight": 0.0}),
        ),
        Configuration(
            "gate-off",
            "quality gate disabled (min_score 0, recall answers whatever it finds)",
            change(update={"min_score": 0.0, "answer_min_cosine": -1.0}),
        ),
        Configuration(
            "user-only", "product default over the user messages only", default, corpus="user"
        ),
        Configuration(
            "cosine-exact", "baseline: exact cosine over all messages (numpy)", baseline="cosine"
        ),
        Configuration(
            "bm25", "baseline: Okapi BM25 over all messages (k1 1.2, b 0.75)", baseline="bm25"
        ),
        Configuration(
            "rrf-plain",
            "baseline: plain reciprocal rank fusion of exact cosine and BM25 (k 60)",
            baseline="rrf",
        ),
    ]


def select(specs: list[Configuration], only: Sequence[str]) -> list[Configuration]:
    """The configurations named in ``only`` (all when empty), the default always first."""
    if not only:
        return specs
    known = {spec.name for spec in specs}
    unknown = sorted(set(only) - known)
    if unknown:
        raise InvalidInputError(
            f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return [spec for spec in specs if spec.name == "default" or spec.name in only]
