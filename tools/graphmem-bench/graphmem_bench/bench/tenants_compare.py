"""The multi-tenant benchmark on several Neo4j versions (``graphmem bench tenants --neo4j A
--neo4j B``): the runs' reports side by side, and the targets that compare them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, computed_field

from graphmem_bench.bench.render import targets_table
from graphmem_bench.bench.report import TargetResult
from graphmem_bench.bench.tenants_report import (
    BARE_ALIGN,
    BARE_HEADER,
    RECALL_ALIGN,
    RECALL_HEADER,
    TenantsReport,
    bare_rows,
    recall_rows,
    render_tenants_markdown,
    statement_rows,
)
from graphmem_bench.bench.tenants_statements import STATEMENT_ALIGN, STATEMENT_HEADER
from graphmem_bench.markdown import markdown_table


class TenantsComparison(BaseModel):
    """The same run on several Neo4j versions (``--neo4j`` given more than once): each run's
    report, and the targets that compare them (:func:`comparison_targets`)."""

    runs: list[TenantsReport]
    targets: list[TargetResult]

    @property
    def started_at(self) -> datetime:
        return self.runs[0].started_at

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        return all(t.status != "fail" for t in self.targets) and all(r.passed for r in self.runs)


#: The default recall's database p95 may be at most this many times the vector-only one's.
DEFAULT_OVER_VECTOR = 1.3


def comparison_targets(runs: Sequence[TenantsReport]) -> list[TargetResult]:
    """For each namespace of the newest server's run: its default recall's db p95 at most
    each older server's (same namespace), and at most :data:`DEFAULT_OVER_VECTOR` times its
    own vector-only recall's."""
    if not runs:
        return []
    ordered = sorted(runs, key=lambda r: _version_key(r.server.neo4j_version))
    newest, older = ordered[-1], ordered[:-1]
    targets = []
    for figures in newest.namespaces:
        default, vector = figures.mode("default"), figures.mode("vector")
        if default is None:
            continue
        for other in older:
            theirs = next((n for n in other.namespaces if n.name == figures.name), None)
            mode = None if theirs is None else theirs.mode("default")
            if mode is None:
                continue
            targets.append(
                TargetResult.check(
                    f"{figures.name} namespace: db p95 on {newest.server.neo4j_version} / "
                    f"on {other.server.neo4j_version}",
                    figures.facts,
                    default.db_ms.p95 / mode.db_ms.p95 if mode.db_ms.p95 else 0.0,
                    1.0,
                    "<=",
                    "ratio",
                )
            )
        if vector is not None and vector.db_ms.p95:
            targets.append(
                TargetResult.check(
                    f"{figures.name} namespace on {newest.server.neo4j_version}: db p95 "
                    "default / vector only",
                    figures.facts,
                    default.db_ms.p95 / vector.db_ms.p95,
                    DEFAULT_OVER_VECTOR,
                    "<=",
                    "ratio",
                )
            )
    return targets


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def render_comparison_markdown(comparison: TenantsComparison) -> str:
    """The runs' reports one after the other, after one table of every run's recalls, one of
    where their time went, and the targets that compare them."""
    runs = comparison.runs
    o = runs[0].options
    lines = [
        f"# graphmem bench --tenants on {len(runs)} Neo4j versions "
        f"({comparison.started_at:%Y-%m-%d %H:%M} UTC)",
        "",
        f"{o.namespaces:,}x{o.facts:,} tenants, small {o.small:,}, large {o.large:,}; the same "
        "data and questions on each server, one run after the other on this machine "
        "(load averages: "
        + "; ".join(
            f"{r.server.neo4j_version} {r.load_average[0]:.1f} to {r.load_average[1]:.1f}"
            for r in runs
            if r.load_average
        )
        + ").",
        "",
        "## Recall (ms)",
        "",
    ]
    lines += markdown_table(
        RECALL_HEADER, RECALL_ALIGN, [row for r in runs for row in recall_rows(r)]
    )
    lines += ["", "## Beside a bare vector read (ms)", ""]
    lines += markdown_table(BARE_HEADER, BARE_ALIGN, [row for r in runs for row in bare_rows(r)])
    lines += ["", "## Where the time goes (ms)", ""]
    lines += markdown_table(
        STATEMENT_HEADER, STATEMENT_ALIGN, [row for r in runs for row in statement_rows(r)]
    )
    lines += ["", "## Targets", ""]
    lines += targets_table(comparison.targets) if comparison.targets else ["(none applies)"]
    for run in runs:
        body = render_tenants_markdown(run).split("\n", 1)[1]
        lines += ["", f"# The run on Neo4j {run.server.neo4j_version}", body.rstrip()]
    return "\n".join(lines) + "\n"


__all__ = [
    "DEFAULT_OVER_VECTOR",
    "TenantsComparison",
    "comparison_targets",
    "render_comparison_markdown",
]
