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
