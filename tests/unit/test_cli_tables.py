"""The CLI's recall table says how each hit was reached."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.cli.read import _recall_table
from graphmem.models import Fact, Hit, Provenance, RecallResult, Scores

_AT = datetime(2026, 3, 1, tzinfo=UTC)


def _hit(fact_id: str, text: str, **how: str) -> Hit:
    fact = Fact(id=fact_id, ns="n", text=text, status="active", recorded_at=_AT, text_hash="h")
    scores = Scores(fused=0.01, recency=1.0, lexical=0.0, final=0.01)
    return Hit(
        kind="fact",
        id=fact_id,
        text=text,
        score=0.01,
        scores=scores,
        provenance=Provenance(),
        fact=fact,
        **how,  # type: ignore[arg-type]
    )


def test_a_hit_found_through_what_it_replaced_is_not_labelled_a_reference() -> None:
    result = RecallResult(
        query="where does the user work",
        ns="n",
        hits=(
            _hit("f-search", "The user likes tea."),
            _hit(
                "f-update",
                "The user joined Microsoft.",
                via="supersession",
                superseded_match="f-old",
            ),
            _hit("f-ref", "Microsoft is in Redmond.", via="reference", referenced_from="f-update"),
        ),
    )
    lines = {
        fact_id: next(line for line in _recall_table(result).splitlines() if fact_id in line)
        for fact_id in ("f-search", "f-update", "f-ref")
    }
    assert "(ref)" not in lines["f-search"] and "(update)" not in lines["f-search"]
    assert "(ref)" in lines["f-ref"]
    assert "(ref)" not in lines["f-update"]
    assert "fact (update)" in lines["f-update"]


def test_csv_text_escapes_formula_cells_only() -> None:
    from graphmem.cli.output import csv_cell, csv_text

    for formula in ("=1+1", "+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1"):
        assert csv_cell(formula) == f"'{formula}"
    assert csv_cell("plain =text") == "plain =text"
    text = csv_text(["a", "b", "c"], [["=1+1", -2, "ok"]])
    assert text == "a,b,c\r\n'=1+1,-2,ok\r\n"
    assert csv_text(["a"], [["=1+1"]], escape=False) == "a\r\n=1+1\r\n"
    assert csv_text(["a"], [["'\r=1"]]) == 'a\r\n"\'\r=1"\r\n'  # quoted: it holds a CR
