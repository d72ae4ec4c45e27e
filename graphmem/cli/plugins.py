"""Commands from other packages: each installed distribution that names an entry point in the
group ``graphmem.plugins`` adds its commands to ``graphmem``, as simonw/llm's plugins do. The
entry point is a module (or any object) with ``register_commands(cli)``, called with the
``graphmem`` group; it should import what its commands need inside them, so that
``graphmem --help`` stays fast.

The benchmark and evaluation part, ``graphmem-bench`` (``tools/graphmem-bench`` in the
repository), registers ``graphmem bench`` and ``graphmem eval`` this way.

A plugin's commands print and write their reports as graphmem's own do, with the helpers
named here: :func:`json_option`, :func:`print_report`, :func:`writable_dir` and
:func:`memory_size`.
"""

from __future__ import annotations

import logging
from importlib.metadata import EntryPoint, entry_points

import click

from graphmem.cli.output import json_option, memory_size, print_report, writable_dir

#: The entry point group plugins register in.
GROUP = "graphmem.plugins"
#: graphmem's own plugins: the commands each adds, and how to install it (named when one of
#: its commands is asked for and it is not installed).
KNOWN = {
    "graphmem's benchmark and evaluation part, graphmem-bench": (
        ("bench", "eval"),
        "pip install -e tools/graphmem-bench (from a checkout of graphmem)",
    ),
}

logger = logging.getLogger(__name__)


def plugins() -> list[EntryPoint]:
    """The installed plugins' entry points, by name."""
    return sorted(entry_points(group=GROUP), key=lambda point: point.name)


def register_plugins(cli: click.Group) -> list[str]:
    """Lets every installed plugin add its commands to ``cli``; the names of those that did.
    A plugin that fails to load is logged and left out: the service's own commands stay."""
    loaded = []
    for point in plugins():
        try:
            point.load().register_commands(cli)
        except Exception as exc:  # a broken plugin must not take the command line down
            logger.warning("the graphmem plugin %r could not be loaded: %s", point.name, exc)
            continue
        loaded.append(point.name)
    return loaded


def missing_plugin(command: str) -> str | None:
    """What to install for ``command`` when it belongs to one of graphmem's own plugins that is
    not installed; None for any other name."""
    for name, (commands, install) in KNOWN.items():
        if command in commands:
            return f"'graphmem {command}' comes with {name}, which is not installed: {install}"
    return None


__all__ = [
    "GROUP",
    "KNOWN",
    "json_option",
    "memory_size",
    "missing_plugin",
    "plugins",
    "print_report",
    "register_plugins",
    "writable_dir",
]
