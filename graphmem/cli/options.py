"""Click options several commands share: ``--batch-size``, ``--limit``, and the address that
``graphmem serve`` and ``graphmem mcp`` bind with the Host and Origin values they accept besides
it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

#: The most items a ``--batch-size`` may put in one transaction.
MAX_BATCH_SIZE = 10_000


def batch_size_option(default: int, help_text: str) -> Callable[[F], F]:
    """``--batch-size``, received as ``batch_size``: a whole number from 1 to
    :data:`MAX_BATCH_SIZE`, ``default`` shown in the help."""
    return click.option(
        "--batch-size",
        type=click.IntRange(1, MAX_BATCH_SIZE),
        default=default,
        show_default=True,
        help=help_text,
    )


def limit_option(most: int = 10_000, default: int = 100) -> Callable[[F], F]:
    """``--limit``, received as ``limit``: the most items a listing shows, from 1 to ``most``,
    ``default`` shown in the help."""
    return click.option("--limit", type=click.IntRange(1, most), default=default, show_default=True)


def bind_options(port: int, *, host_help: str, port_help: str) -> Callable[[F], F]:
    """``--host`` (default 127.0.0.1) and ``--port`` (default ``port``), received as ``host``
    and ``port``: the address a server binds."""
    with_host = click.option("--host", default="127.0.0.1", show_default=True, help=host_help)
    with_port = click.option(
        "--port", type=click.IntRange(1, 65_535), default=port, show_default=True, help=port_help
    )

    def add(func: F) -> F:
        return with_host(with_port(func))

    return add


def allow_options(*, host_help: str, origin_help: str) -> Callable[[F], F]:
    """``--allow-host`` and ``--allow-origin`` (repeatable), received as ``allowed_hosts`` and
    ``allowed_origins``: the Host headers and browser Origins a server accepts besides its bound
    address (with it, what the HTTP edge's policy is made of)."""
    with_hosts = click.option(
        "--allow-host",
        "allowed_hosts",
        metavar="HOST[:PORT]",
        multiple=True,
        help=host_help,
    )
    with_origins = click.option(
        "--allow-origin", "allowed_origins", metavar="URL", multiple=True, help=origin_help
    )

    def add(func: F) -> F:
        return with_hosts(with_origins(func))

    return add
