"""remember and remember_many: facts stored as said, in one transaction, searchable on return."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Sized
from typing import Any

import numpy.typing as npt

from graphmem.core.actor import current_actor
from graphmem.core.base import CoreBase
from graphmem.core.checks import as_list, as_model, checked_flag, validate
from graphmem.core.plans import Plan, Transaction
from graphmem.core.writes import fact_rows, fact_work
from graphmem.embed.embedder import Vectors, check_vectors
from graphmem.errors import EmbeddingError, InvalidInputError
from graphmem.models import Fact, FactInput


class RememberPlans(CoreBase):
    def remember(
        self, text: str, *, ns: str | None, allow_forgotten: bool = False, **fields: Any
    ) -> Plan[Fact]:
        ns = self._ns(ns)
        allow = checked_flag("allow_forgotten", allow_forgotten)
        item = validate(FactInput, {"text": text, **fields}, "fact")
        facts = yield from self._write_facts(ns, [item], vectors=None, allow_forgotten=allow)
        return facts[0]

    def remember_many(
        self,
        items: Sequence[FactInput | Mapping[str, Any] | str],
        *,
        ns: str | None,
        vectors: npt.ArrayLike | None = None,
        allow_forgotten: bool = False,
    ) -> Plan[list[Fact]]:
        ns = self._ns(ns)
        allow = checked_flag("allow_forgotten", allow_forgotten)
        facts = as_list("remember_many", items, "facts")
        inputs = [as_model(FactInput, "text", item, f"fact {i}") for i, item in enumerate(facts)]
        if not inputs:
            if vectors is not None and (not isinstance(vectors, Sized) or len(vectors)):
                raise InvalidInputError("no facts but vectors were given")
            return []
        checked = None
        if vectors is not None:
            checked = self._user_vectors(vectors, len(inputs))
        return (yield from self._write_facts(ns, inputs, vectors=checked, allow_forgotten=allow))

    def _user_vectors(self, vectors: npt.ArrayLike, count: int) -> Vectors:
        try:
            checked = check_vectors(vectors, self.dimension)
        except (EmbeddingError, ValueError, TypeError) as exc:
            raise InvalidInputError(f"invalid vectors: {exc}") from exc
        if len(checked) != count:
            raise InvalidInputError(f"{count} facts but {len(checked)} vectors")
        return checked

    def _write_facts(
        self,
        ns: str,
        inputs: Sequence[FactInput],
        *,
        vectors: Vectors | None,
        derived_from: Sequence[Sequence[str]] | None = None,
        actor: str | None = None,
        allow_forgotten: bool = False,
    ) -> Plan[list[Fact]]:
        inputs = yield from self._full_targets(ns, inputs)
        superseded: dict[str, int] = {}
        for i, item in enumerate(inputs):
            for old in item.supersedes:
                if old in superseded:
                    raise InvalidInputError(
                        f"facts {superseded[old]} and {i} both supersede {old!r}; "
                        "a fact is superseded once"
                    )
                superseded[old] = i
        if vectors is None:
            vectors = yield from self._embed(tuple(item.text for item in inputs))
        rows = fact_rows(ns, inputs, vectors, derived_from)
        work = fact_work(
            ns, inputs, rows, actor or current_actor(), self._guard, allow_forgotten=allow_forgotten
        )
        facts: list[Fact] = yield Transaction("write", work)
        return facts

    def _full_targets(self, ns: str, inputs: Sequence[FactInput]) -> Plan[Sequence[FactInput]]:
        """``inputs`` with the shortened ids they supersede, reference or contradict made
        whole (:meth:`~graphmem.core.base.CoreBase._full_ids`)."""
        fields = ("supersedes", "references", "contradicts")
        named = [i for item in inputs for field in fields for i in getattr(item, field)]
        full = yield from self._full_ids(ns, named)
        if full == named:
            return inputs
        whole = dict(zip(named, full, strict=True))
        return [
            item.model_copy(
                update={field: tuple(whole[i] for i in getattr(item, field)) for field in fields}
            )
            for item in inputs
        ]
