"""Access to the optional LLM layer (the ``llm`` extra), built on graphiti-core.

graphiti-core sends usage telemetry unless ``GRAPHITI_TELEMETRY_ENABLED`` is false when it is
first imported. graphmem turns it off unless the user opts in with
``GRAPHMEM_GRAPHITI_TELEMETRY=true``; :func:`import_graphiti` is the one place that imports it.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from graphmem.errors import OptionalDependencyError
from graphmem.settings import GraphmemSettings


def import_graphiti(settings: GraphmemSettings) -> ModuleType:
    """Import ``graphiti_core`` with telemetry set as configured."""
    if not settings.graphiti_telemetry:
        os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
    try:
        return importlib.import_module("graphiti_core")
    except ImportError as exc:
        raise OptionalDependencyError(
            "the LLM layer needs graphiti-core: pip install '<graphmem checkout or wheel>[llm]' "
            f"(import failed: {exc})"
        ) from exc


def graphiti_telemetry_enabled(settings: GraphmemSettings) -> bool:
    """Whether graphiti-core will send telemetry in this process, as graphiti itself decides."""
    import_graphiti(settings)
    telemetry = importlib.import_module("graphiti_core.telemetry")
    return bool(telemetry.is_telemetry_enabled())
