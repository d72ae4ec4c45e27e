"""The audit API on a scripted history with known answers (tests/history.py): three
supersessions of one fact, a merge by a consolidation run, an open and a resolved
contradiction, a retraction and a forget, probed at several times on both clocks, through
both clients."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from graphmem.client.graph import Graph
from graphmem.core.audit.words import when
from graphmem.embed.embedder import Embedder
from graphmem.errors import InvalidInputError, NotFoundError
from graphmem.settings import GraphmemSettings
from tests.history import REASONS, TEXTS, VALID, History
from tests.integration.conftest import Client, close_client, make_client


@pytest.fixture(params=["sync", "async"], scope="module")
def auditor(
    request: pytest.FixtureRequest,
    history: History,
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
) -> Iterator[Client]:
    """A client of each kind on the history's namespace; ``auditor.audit`` works for both."""
    client = make_client(
        request.param, settings=test_settings, graph=graph, embedder=embedder, ns=history.ns
    )
    yield client
    close_client(client)


def names(history: History, ids: object) -> list[str]:
    by_id = {v: k for k, v in history.ids.items()}
    return [by_id.get(i, i) for i in ids]  # type: ignore[attr-defined]


def believed(history: History, beliefs: object) -> dict[str, tuple[str, object, object]]:
    """Each fact of a Beliefs by its history name: (status, valid_from, valid_to)."""
    by_id = {v: k for k, v in history.ids.items()}
    return {
        by_id[f.id]: (f.status, f.valid_from, f.valid_to)
        for f in beliefs.facts  # type: ignore[attr-defined]
    }


def test_beliefs_at_transaction_times(auditor: Client, history: History) -> None:
    at, audit = history.between, auditor.audit
    assert believed(history, audit.beliefs(at("emp1", "emp2"))) == {
        "emp1": ("active", VALID["emp1"], None)
    }
    # emp2 was believed then, with no end to its valid time (its supersession came later)
    assert believed(history, audit.beliefs(at("emp2", "emp3"))) == {
        "emp2": ("active", VALID["emp2"], None)
    }
    assert believed(history, audit.beliefs(at("hike2", "merge"))) == {
        "emp4": ("active", VALID["emp4"], None),
        "hike1": ("active", None, None),
        "hike2": ("active", None, None),
    }
    both = believed(history, audit.beliefs(at("paris", "resolve")))
    assert set(both) == {"emp4", "hike1", "veg", "fish", "london", "paris"}
    assert both["london"] == ("active", VALID["london"], None)
    # the contradiction open then, though resolved since
    then = {f.id: f for f in audit.beliefs(at("paris", "resolve")).facts}
    assert [c.id for c in then[history.ids["london"]].contradictions] == [history.ids["paris"]]
    assert [c.id for c in then[history.ids["veg"]].contradictions] == [history.ids["fish"]]
    assert then[history.ids["london"]].superseded_by is None
    assert set(believed(history, audit.beliefs(at("resolve", "cat")))) == {
        "emp4",
        "hike1",
        "veg",
        "fish",
        "paris",
    }
    assert "cat" in believed(history, audit.beliefs(at("cat", "retract")))
    before_forget = audit.beliefs(at("call", "forget"))
    assert set(believed(history, before_forget)) == {
        "emp4",
        "hike1",
        "veg",
        "fish",
        "paris",
        "tea",
        "coffee",
        "call",
    }
    (phone,) = before_forget.forgotten  # believed then, erased since: no words
    assert (phone.id, phone.kind, phone.reason, phone.erasure, phone.erased_at) == (
        history.ids["phone"],
        "fact",
        REASONS["forget"],
        history.erasure,
        history.at["forget"],
    )
    for answer in (before_forget, audit.diff(history.at["emp1"])):
        assert TEXTS["phone"] not in answer.model_dump_json()
    # call's review flag came with the erasure: none before it, open from then on
    call_then = next(f for f in before_forget.facts if f.id == history.ids["call"])
    assert call_then.review == ()
    call_now = next(f for f in audit.beliefs().facts if f.id == history.ids["call"])
    assert [(m.event, m.cause_id) for m in call_now.review] == [("forgotten", history.ids["phone"])]
    after = audit.beliefs(history.at["forget"])
    assert after.forgotten == () and "phone" not in believed(history, after)
    assert set(believed(history, audit.beliefs())) == {
        "emp4",
        "hike1",
        "veg",
        "fish",
        "paris",
        "tea",
        "coffee",
        "call",
    }
    # newest first, and a limit says it cut
    cut = audit.beliefs(limit=2)
    assert cut.truncated and len(cut.facts) == 2
    assert [f.recorded_at for f in cut.facts] == sorted(
        (f.recorded_at for f in cut.facts), reverse=True
    )
    assert audit.beliefs(history.at["emp1"] - timedelta(seconds=1)).facts == ()


def test_beliefs_ranked_by_a_query_count_no_access(auditor: Client, history: History) -> None:
    before = auditor.get(history.ids["emp2"]).access_count
    ranked = auditor.audit.beliefs(history.between("emp2", "emp3"), query="Where does Ada work?")
    assert names(history, [f.id for f in ranked.facts]) == ["emp2"]
    assert ranked.facts[0].status == "active" and ranked.facts[0].superseded_by is None
    assert auditor.get(history.ids["emp2"]).access_count == before


def test_truths_at_valid_times_as_believed_now_and_then(auditor: Client, history: History) -> None:
    audit = auditor.audit
    # As believed now: what was true in 2020 includes the facts replaced since (within their
    # closed intervals), and the facts with no valid time.
    now_2020 = believed(history, audit.truths("2020-01-01"))
    assert set(now_2020) == {"emp1", "london", "veg", "fish", "hike1", "call"}
    assert now_2020["emp1"] == ("superseded", VALID["emp1"], VALID["emp2"])
    now_2024 = believed(history, audit.truths(datetime(2024, 1, 1, tzinfo=UTC)))
    assert now_2024["emp3"] == ("superseded", VALID["emp3"], VALID["emp4"])
    assert "emp4" not in now_2024 and "paris" not in now_2024
    assert "paris" in believed(history, audit.truths("2025-01-01T00:00:00+01:00"))
    # As believed before Umbrella was recorded: Initech, open-ended then.
    then = audit.truths("2024-01-01", as_of=history.between("emp3", "emp4"))
    assert believed(history, then) == {"emp3": ("active", VALID["emp3"], None)}
    # As believed after it: 2022 was Globex, closed by Initech's start.
    earlier = audit.truths("2022-01-01", as_of=history.between("emp4", "hike1"))
    assert believed(history, earlier) == {"emp2": ("superseded", VALID["emp2"], VALID["emp3"])}
    # the extracted facts are true from their message's time
    assert {"tea", "coffee"} <= set(believed(history, audit.truths("2026-02-01")))
    assert not {"tea", "coffee"} & set(believed(history, audit.truths("2025-12-31")))


def test_diff_between_two_times(auditor: Client, history: History) -> None:
    ids, at = history.ids, history.at
    early = auditor.audit.diff(at["emp1"], at["emp4"])
    assert names(history, [c.fact_id for c in early.believed]) == ["emp2", "emp3", "emp4"]
    assert [
        (names(history, [c.fact_id])[0], c.change, names(history, [c.by])[0], c.actor, c.reason)
        for c in early.retired
    ] == [
        ("emp1", "superseded", "emp2", "api", REASONS["emp2"]),
        ("emp2", "superseded", "emp3", "api", REASONS["emp3"]),
        ("emp3", "superseded", "emp4", "api", REASONS["emp4"]),
    ]
    assert early.retired[0].by_text == TEXTS["emp2"]
    assert early.forgotten == () and early.contradictions_opened == ()

    later = auditor.audit.diff(at["emp4"], at["forget"])
    assert set(names(history, [c.fact_id for c in later.believed])) == {
        "hike1",
        "hike2",
        "veg",
        "fish",
        "london",
        "paris",
        "cat",
        "tea",
        "coffee",
        "phone",
        "call",
    }
    phone = next(c for c in later.believed if c.fact_id == ids["phone"])
    assert phone.text is None  # forgotten since: no words
    assert [
        (names(history, [c.fact_id])[0], c.change, names(history, [c.by])[0], c.actor, c.reason)
        for c in later.retired
    ] == [
        ("hike2", "merged", "hike1", history.run_id, REASONS["merge"]),
        ("london", "superseded", "paris", "api", REASONS["resolve"]),
        ("cat", "retracted", None, "api", REASONS["retract"]),
    ]
    assert [(f.kind, f.id, f.reason) for f in later.forgotten] == [
        ("fact", ids["phone"], REASONS["forget"])
    ]
    assert [(c.a, c.b, c.reason) for c in later.contradictions_opened] == [
        (ids["fish"], ids["veg"], REASONS["fish"]),
        (ids["paris"], ids["london"], None),
    ]
    assert [(c.a, c.b, c.kept, c.resolution) for c in later.contradictions_resolved] == [
        (ids["paris"], ids["london"], ids["paris"], REASONS["resolve"])
    ]
    # the window excludes its start: the contradiction opened with paris is not in it
    edge = auditor.audit.diff(at["paris"], at["resolve"])
    assert edge.contradictions_opened == ()
    assert [c.a for c in edge.contradictions_resolved] == [ids["paris"]]
    assert names(history, [c.fact_id for c in edge.retired]) == ["london"]


def events_of(history: History, timeline: object) -> list[tuple[str, str, str | None]]:
    by_id = {v: k for k, v in history.ids.items()}
    return [
        (e.kind, by_id.get(e.fact_id, e.fact_id), by_id.get(e.other_id, e.other_id))
        for e in timeline.events  # type: ignore[attr-defined]
    ]


def test_timeline_of_a_superseded_fact(auditor: Client, history: History) -> None:
    ids = history.ids
    for key in ("emp1", "emp2", "emp4"):
        line = auditor.audit.timeline(ids[key])
        assert line.head_id == ids["emp4"]
        assert names(history, [f.id for f in line.facts]) == ["emp1", "emp2", "emp3", "emp4"]
        assert events_of(history, line) == [
            ("recorded", "emp1", None),
            ("recorded", "emp2", None),
            ("superseded", "emp1", "emp2"),
            ("recorded", "emp3", None),
            ("superseded", "emp2", "emp3"),
            ("recorded", "emp4", None),
            ("superseded", "emp3", "emp4"),
        ]
    line = auditor.audit.timeline(ids["emp2"])
    first = line.events[0]
    assert (first.at, first.valid_from, first.valid_to) == (history.at["emp1"], VALID["emp1"], None)
    # The creation has its actor too: the library's own calls are "api".
    assert first.actor == "api" and first.words.endswith("(by api)")
    step = line.events[4]
    assert (step.at, step.actor, step.reason) == (history.at["emp3"], "api", REASONS["emp3"])
    assert step.words == (
        f"'Ada works at Globex.' (fact {ids['emp2']}) was replaced by 'Ada works at Initech.' "
        f"(fact {ids['emp3']}) because changed jobs again (by api)"
    )


def test_timeline_of_a_merge_names_its_run(auditor: Client, history: History) -> None:
    line = auditor.audit.timeline(history.ids["hike2"])
    assert line.head_id == history.ids["hike1"]
    assert events_of(history, line) == [
        ("recorded", "hike1", None),
        ("recorded", "hike2", None),
        ("merged", "hike2", "hike1"),
    ]
    assert line.events[-1].actor == history.run_id
    (run,) = line.runs
    assert (run.id, run.proposer, run.model, run.status) == (
        history.run_id,
        "llm",
        "openai-compatible:stub",
        "finished",
    )
    assert f"(consolidation run {history.run_id}, llm, openai-compatible:stub)" in (
        line.events[-1].words
    )


def test_timeline_of_contradictions_retraction_and_forget(
    auditor: Client, history: History
) -> None:
    ids = history.ids
    london = auditor.audit.timeline(ids["london"])
    assert events_of(history, london) == [
        ("recorded", "london", None),
        ("recorded", "paris", None),
        ("contradicted", "paris", "london"),
        ("superseded", "london", "paris"),
        ("resolved", "paris", "london"),
    ]
    assert london.events[-1].reason == REASONS["resolve"]
    veg = auditor.audit.timeline(ids["veg"])
    assert events_of(history, veg) == [("recorded", "veg", None), ("contradicted", "fish", "veg")]
    assert TEXTS["fish"] in veg.events[-1].words
    cat = auditor.audit.timeline(ids["cat"])
    assert events_of(history, cat) == [("recorded", "cat", None), ("retracted", "cat", None)]
    assert (cat.events[-1].at, cat.events[-1].reason) == (history.at["retract"], REASONS["retract"])
    assert cat.head_id is None
    phone = auditor.audit.timeline(ids["phone"])  # forgotten: still has a timeline
    assert phone.facts == () and [g.id for g in phone.forgotten] == [ids["phone"]]
    assert events_of(history, phone) == [
        ("recorded", "phone", None),
        ("referenced", "call", "phone"),
        ("forgotten", "phone", None),
    ]
    assert TEXTS["phone"] not in str(phone.model_dump())
    call = auditor.audit.timeline(ids["call"])
    assert events_of(history, call) == [
        ("recorded", "call", None),
        ("referenced", "call", "phone"),
        ("flagged", "call", "phone"),
    ]
    assert call.events[-1].words == (
        f"'Call Ada on her mobile.' (fact {ids['call']}) was flagged for review: fact "
        f"{ids['phone']} (since forgotten), which it references, was forgotten because "
        "erasure request (by api)"
    )


def test_explanations_in_words(auditor: Client, history: History) -> None:
    ids, at = history.ids, history.at
    explain = auditor.audit.explain
    assert explain(ids["emp2"]).text == (
        f"'Ada works at Globex.' (fact {ids['emp2']}) was believed from {when(at['emp2'])} "
        f"until {when(at['emp3'])}, as true from 2021-03-01 on; it was replaced by 'Ada works "
        f"at Initech.' (fact {ids['emp3']}) because changed jobs again (by api). That was "
        f"replaced in turn; what is believed now is 'Ada works at Umbrella.' (fact "
        f"{ids['emp4']})."
    )
    merged = explain(ids["hike2"])
    assert merged.text.endswith(
        f"it was merged into 'Ada likes hiking.' (fact {ids['hike1']}) because the same liking "
        f"(consolidation run {history.run_id}, llm, openai-compatible:stub)."
    )
    assert merged.event is not None and merged.event.kind == "merged"
    assert explain(ids["cat"]).text == (
        f"'Ada has a cat.' (fact {ids['cat']}) was believed from {when(at['cat'])} until "
        f"{when(at['retract'])}; it was retracted as never true because it was her "
        "neighbour's cat (by api)."
    )
    assert explain(ids["phone"]).text == (
        f"Fact {ids['phone']} was believed from {when(at['phone'])}; it was forgotten on "
        f"{when(at['forget'])} because erasure request (by api), and its words are gone."
    )
    assert explain(ids["veg"]).text == (
        f"'Ada is vegetarian.' (fact {ids['veg']}) is believed since {when(at['veg'])}. It is "
        f"contradicted by 'Ada eats fish every Friday.' (fact {ids['fish']}) since "
        f"{when(at['fish'])} because she said so at dinner (by api)."
    )
    assert explain(ids["emp4"]).text == (
        f"'Ada works at Umbrella.' (fact {ids['emp4']}) is believed since {when(at['emp4'])}, "
        "as true from 2025-02-01 on. Nothing has replaced it."
    )


def test_contradictions(auditor: Client, history: History) -> None:
    ids = history.ids
    assert [(c.a, c.b, c.open) for c in auditor.audit.contradictions()] == [
        (ids["fish"], ids["veg"], True)
    ]
    every = auditor.audit.contradictions(open_only=False)
    assert [(c.a, c.b, c.open, c.kept) for c in every] == [
        (ids["fish"], ids["veg"], True, None),
        (ids["paris"], ids["london"], False, ids["paris"]),
    ]
    assert (every[0].a_text, every[0].b_text) == (TEXTS["fish"], TEXTS["veg"])


def test_friendly_times_and_bad_input(auditor: Client, history: History) -> None:
    audit = auditor.audit
    assert audit.beliefs("3 days ago").facts == ()  # before the history was written
    assert audit.beliefs("now").facts == audit.beliefs().facts
    assert len(audit.diff("1 hour ago").believed) == 15
    for bad in ("2026-03-01T09:00:00", "soon", "1 fortnight ago", 5):
        with pytest.raises(InvalidInputError):
            audit.beliefs(bad)
    with pytest.raises(InvalidInputError, match="before since"):
        audit.diff("now", "2020-01-01")
    with pytest.raises(InvalidInputError):
        audit.beliefs(limit=0)
    with pytest.raises(NotFoundError):
        audit.timeline("no-such-fact")
    with pytest.raises(NotFoundError, match="episode"):
        audit.explain(history.episodes["m1"])
    with pytest.raises(NotFoundError):
        audit.timeline(history.ids["emp1"], ns="another-namespace")


def test_the_async_audit_is_awaitable(
    history: History,
    graph: Graph,
    test_settings: GraphmemSettings,
    embedder: Embedder,
) -> None:
    from graphmem.client import AsyncMemory

    async def main() -> list[str]:
        async with AsyncMemory(
            test_settings, target=graph.target, embedder=embedder, ns=history.ns
        ) as memory:
            line = await memory.audit.timeline(history.ids["emp1"])
            return [e.kind for e in line.events]

    assert asyncio.run(main())[:3] == ["recorded", "recorded", "superseded"]


def test_through_erasures_resolutions_and_moot_contradictions(
    client_factory: Callable[..., Client], ns: str
) -> None:
    memory = client_factory("sync", ns=ns)
    red = memory.remember("The bike is red.", valid_from="2020-01-01T00:00:00Z")
    blue = memory.remember(
        "The bike is blue.", supersedes=[red.id], valid_from="2022-01-01T00:00:00Z", reason="paint"
    )
    green = memory.remember(
        "The bike is green.", supersedes=[blue.id], valid_from="2024-01-01T00:00:00Z"
    )
    memory.forget([blue.id], reason="asked to")
    # The line runs through the forgotten middle to what is believed now.
    line = memory.audit.timeline(red.id)
    assert line.head_id == green.id and [g.id for g in line.forgotten] == [blue.id]
    told = memory.audit.explain(red.id).text
    assert f"replaced by fact {blue.id} (since forgotten)" in told
    assert f"what is believed now is 'The bike is green.' (fact {green.id})" in told
    changes = memory.audit.diff(red.recorded_at)
    assert [(c.fact_id, c.text, c.change, c.by, c.by_text) for c in changes.retired] == [
        (red.id, "The bike is red.", "superseded", blue.id, None),
        (blue.id, None, "superseded", green.id, "The bike is green."),
    ]
    assert "blue" not in changes.model_dump_json() + line.model_dump_json()

    # A retraction keeps the valid interval it had; retracted then forgotten, it is told.
    car = memory.remember("The garage holds a car.", valid_to="2030-01-01T00:00:00Z")
    memory.retract(car.id, reason="it was a van")
    (then,) = [f for f in memory.audit.beliefs(car.recorded_at).facts if f.id == car.id]
    assert (then.status, then.valid_to) == ("active", datetime(2030, 1, 1, tzinfo=UTC))
    memory.forget([car.id], reason="asked to")
    kinds = [e.kind for e in memory.audit.timeline(car.id).events]
    assert kinds == ["recorded", "retracted", "forgotten"]

    # Resolving keeps coffee and gives it a start; before that its start was open.
    tea = memory.remember("Dan drinks tea.")
    coffee = memory.remember("Dan drinks coffee.", contradicts=[tea.id])
    memory.resolve(tea.id, coffee.id, keep=coffee.id, reason="coffee now")
    assert memory.get(coffee.id).valid_from is not None
    then_ids = {f.id for f in memory.audit.truths("2000-01-01", as_of=coffee.recorded_at).facts}
    assert {tea.id, coffee.id} <= then_ids
    now_ids = {f.id for f in memory.audit.truths("2000-01-01").facts}
    assert tea.id in now_ids and coffee.id not in now_ids
    (believed,) = [f for f in memory.audit.beliefs(coffee.recorded_at).facts if f.id == coffee.id]
    assert believed.valid_from is None
    recorded = memory.audit.timeline(coffee.id).events
    assert [e.valid_from for e in recorded if e.kind == "recorded"] == [None, None]

    # A contradiction whose side was retracted is moot, not open.
    x = memory.remember("The shop opens at nine.")
    y = memory.remember("The shop opens at ten.", contradicts=[x.id])
    memory.retract(y.id, reason="misheard")
    assert memory.audit.contradictions() == []
    every = memory.audit.contradictions(open_only=False)
    assert {(c.a, c.b) for c in every} == {(coffee.id, tea.id), (y.id, x.id)}
