"""Markdown tables, as every report of graphmem-bench prints them."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(
    header: Sequence[str], align: str | None, rows: Sequence[Sequence[str]]
) -> list[str]:
    """The lines of a Markdown table: ``align`` gives each column's alignment (``r`` right,
    anything else left), or None for columns without one."""
    if align is None:
        rule = "|" + "|".join(["---"] * len(header)) + "|"
    else:
        rule = "|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|"
    lines = ["| " + " | ".join(header) + " |", rule]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


__all__ = ["markdown_table"]
