"""graphmem-bench: the benchmark and evaluation part of graphmem, installed apart from the
service. It adds ``graphmem bench`` (write and recall speed, embedding backends, start-up,
MCP, consolidation, graphiti-core beside graphmem) and ``graphmem eval`` (retrieval quality on
BEAM, RealMem and synthetic sets) to the ``graphmem`` command line through the entry point
group ``graphmem.plugins``.
"""

from __future__ import annotations

import click


def register_commands(cli: click.Group) -> None:
    """Adds ``bench`` and ``eval`` to the ``graphmem`` group (their heavy imports wait until
    a command runs)."""
    from graphmem_bench.cli.benchmark import bench
    from graphmem_bench.cli.evaluate import eval_group

    cli.add_command(bench)
    cli.add_command(eval_group)


__all__ = ["register_commands"]
