"""Every write records its actor, the creation of a fact included: ``api`` for the library's
own calls, the name given to :func:`~graphmem.core.actor.acting_as` (what ``graphmem serve``
does with each API key's name), a consolidation run's id for what the run writes."""

from __future__ import annotations

from graphmem.core.actor import acting_as
from graphmem.models import FactInput
from tests.integration.conftest import Client


def test_a_creation_names_its_actor_in_the_graph_and_the_timeline(memory: Client) -> None:
    plain = memory.remember("Ivy lives in Turin.")
    assert plain.recorded_by == "api"
    with acting_as("ivy-assistant"):
        moved = memory.remember("Ivy lives in Genoa.", supersedes=[plain.id])
        batch = memory.remember_many([FactInput(text="Ivy likes sailing.")])
    assert (
        moved.recorded_by == "ivy-assistant"
        and memory.get(moved.id).recorded_by == moved.recorded_by
    )
    assert batch[0].recorded_by == "ivy-assistant"
    line = memory.audit.timeline(moved.id)
    assert [(e.kind, e.fact_id, e.actor) for e in line.events] == [
        ("recorded", plain.id, "api"),
        ("recorded", moved.id, "ivy-assistant"),
        ("superseded", plain.id, "ivy-assistant"),
    ]
    assert line.events[1].words.endswith("(by ivy-assistant)")
    # A message records who stored it too.
    with acting_as("ivy-assistant"):
        said = memory.ingest([{"content": "I moved to Genoa."}], session_id="s1").episodes
    assert said[0].recorded_by == "ivy-assistant"
    assert memory.get(said[0].id).recorded_by == "ivy-assistant"
