"""A griffe extension for the API reference: the docstrings' reST roles as Markdown code.

The docstrings cross-reference with Sphinx roles (:class:`Memory`, :meth:`~x.Memory.recall`),
which Markdown would print as they are. Each role becomes inline code: the name as written,
or only its last part after a ``~``, as Sphinx shows it.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


class RstRoles(griffe.Extension):
    """Rewrites the roles of every docstring griffe loads, before it is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
