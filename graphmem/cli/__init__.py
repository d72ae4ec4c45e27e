"""The ``graphmem`` command line: a thin click layer over the library.

Every command prints a table or key/value block for people, and ``--json`` for machines.
Errors from graphmem's error tree become one ``Error:`` line on stderr and exit status 1.

Installed plugins add commands (:mod:`graphmem.cli.plugins`), looked up when a command is not
a built-in one or the commands are listed: the benchmark and evaluation part,
``graphmem-bench``, adds ``graphmem bench`` and ``graphmem eval``.
"""

from graphmem.cli import (  # noqa: F401 - each registers its commands
    audit,
    consolidate,
    cypher,
    forget,
    keys,
    mcp,
    namespaces,
    read,
    schema,
    serve,
    server,
    setup,
    write,
)
from graphmem.cli.root import main

__all__ = ["main"]
