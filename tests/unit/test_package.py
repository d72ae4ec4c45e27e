from __future__ import annotations

import pytest

import graphmem
from graphmem import memory


def test_clients_and_errors_are_importable_from_the_package() -> None:
    assert graphmem.Memory is memory.Memory
    assert graphmem.AsyncMemory is memory.AsyncMemory
    assert issubclass(graphmem.NotFoundError, graphmem.InvalidInputError)
    assert issubclass(graphmem.InvalidInputError, graphmem.GraphmemError)
    with pytest.raises(AttributeError, match="no attribute"):
        _ = graphmem.NoSuchThing


def test_every_public_name_is_importable_and_import_stays_light() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, graphmem\n"
        "light = not {'torch', 'neo4j', 'numpy'} & set(sys.modules)\n"
        "names = [getattr(graphmem, n) for n in graphmem.__all__]\n"
        "from graphmem import RecallConfig, FactInput, ExtractedFact\n"
        "print(light, len(names), RecallConfig(fusion='linear').fusion)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.split() == ["True", str(len(graphmem.__all__)), "linear"]
