"""The ``graphmem`` command line: a thin click layer over the library.

Every command prints a table or key/value block for people, and ``--json`` for machines.
Errors from graphmem's error tree become one ``Error:`` line on stderr and exit status 1.
"""

from graphmem.cli import (  # noqa: F401 - each registers its commands
    audit,
    consolidate,
    cypher,
    forget,
    mcp,
    read,
    schema,
    server,
    setup,
    write,
)
from graphmem.cli.benchmark import bench
from graphmem.cli.evaluate import eval_group
from graphmem.cli.root import main

main.add_command(bench)
main.add_command(eval_group)

__all__ = ["main"]
