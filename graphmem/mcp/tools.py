"""The MCP tools, read and write, bound to one client and one policy. Each is a thin call into
:class:`AsyncMemory`; its docstring is the description a model reads."""

from __future__ import annotations

from collections.abc import Callable

from graphmem.mcp.base import Result
from graphmem.mcp.reads import ReadTools
from graphmem.mcp.writes import WriteTools


class Tools(ReadTools, WriteTools):
    """Every tool of one server; :meth:`functions` gives the ones its options expose."""

    def functions(self) -> dict[str, Callable[..., Result]]:
        """The tools this server exposes, by name, in the options' order."""
        return {name: getattr(self, name) for name in self.options.tools}
