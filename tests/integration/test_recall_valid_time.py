"""Time in questions and in recall's options, against the real Neo4j: a period the question
names ranks the fact true in it first (its valid time, not when it was recorded), ``as_of``
that finds nothing says what else the caller may have meant, and a ``context`` budget too
small for one line says so."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner, Result

from graphmem.cli import main
from graphmem.client.graph import Graph
from graphmem.embed.embedder import Embedder
from graphmem.models import Fact, Hit
from tests.helpers import cli_env
from tests.integration.conftest import Client

#: Runs on Neo4j 5.26 too (its search: without in-index filtering).
pytestmark = pytest.mark.both_versions

Invoke = Callable[..., Result]

#: The questions name the year, so that they read the same whenever the test runs.
YEAR = 2025


def _day(month: int, day: int = 1) -> datetime:
    return datetime(YEAR, month, day, tzinfo=UTC)


def _jobs(memory: Client) -> tuple[Fact, Fact, datetime]:
    """Acme from January, then Globex from May superseding it (both recorded now, with other
    facts about work around them); and a moment between the two writes."""
    memory.remember_many(
        [
            "The user's commute takes forty minutes by train.",
            "The user prefers standing desks at the office.",
            "The user's manager is called Priya.",
        ]
    )
    acme = memory.remember("I work at Acme as an engineer.", valid_from=_day(1, 5))
    between = datetime.now(UTC)
    globex = memory.remember(
        "I work at Globex as an engineer.", valid_from=_day(5), supersedes=[acme.id]
    )
    return acme, globex, between


def _ids(hits: tuple[Hit, ...]) -> list[str]:
    return [h.id for h in hits]


@pytest.mark.parametrize("filtered", [True, False], ids=["filtered", "unfiltered"])
def test_a_period_in_the_question_ranks_the_fact_true_then_first(
    memory: Client, filtered: bool
) -> None:
    if not filtered:  # the search Neo4j 5.26 runs, here too
        memory.raw._core.filtered_search = False
    acme, globex, between = _jobs(memory)

    past = memory.recall("Where did I work in March 2025?", kinds=["fact"]).hits
    assert past[0].id == acme.id and past[0].via == "search"
    assert past[0].fact is not None and past[0].fact.status == "superseded"
    assert past[0].scores.cue > 1.0  # true in March: raised
    # The fact believed now is still a hit, below and not raised (true from May only).
    current = [h for h in past if h.id == globex.id]
    assert current and current[0].scores.cue == 1.0 and _ids(past).index(globex.id) > 0

    # Without a period, only the belief of now, standing for the one it replaced.
    now = memory.recall("Where do I work?", kinds=["fact"]).hits
    assert now[0].id == globex.id
    assert acme.id not in _ids(now)
    # A period the current fact is true in ranks it, not the one it replaced.
    june = memory.recall("Where did I work in June 2025?", kinds=["fact"]).hits
    assert june[0].id == globex.id and acme.id not in _ids(june)
    # No time weight, no period: the superseded fact is not a hit of its own.
    off = memory.recall(
        "Where did I work in March 2025?", kinds=["fact"], config={"time_weight": 0}
    )
    assert off.hits[0].id == globex.id and acme.id not in _ids(off.hits)

    # At a valid time the superseded fact is visible itself; the period agrees with it.
    valid = memory.recall("Where did I work in March 2025?", valid_at=_day(3, 15)).hits
    assert valid[0].id == acme.id and globex.id not in _ids(valid)
    # Believed then (before Globex was recorded): Acme, as it was believed, raised.
    then = memory.recall("Where did I work in March 2025?", as_of=between, kinds=["fact"]).hits
    assert then[0].id == acme.id and globex.id not in _ids(then)
    assert then[0].fact is not None and then[0].fact.status == "active"
    assert then[0].scores.cue > 1.0
    # With retired facts asked for, the superseded fact is its own hit anyway, ranked first.
    retired = memory.recall("Where did I work in March 2025?", include_retired=True).hits
    assert retired[0].id == acme.id and globex.id in _ids(retired)
    # Through context, the line of March's employer comes first.
    block = memory.context("Where did I work in March 2025?", budget_tokens=400, short_ids=False)
    assert block.fact_ids.index(acme.id) < block.fact_ids.index(globex.id)


def test_as_of_that_finds_nothing_says_valid_at_was_maybe_meant(memory: Client) -> None:
    acme, globex, _ = _jobs(memory)
    march = _day(3, 31)
    empty = memory.recall("Where do I work?", as_of=march)
    assert not empty.hits
    assert empty.hint is not None and "valid_at=" in empty.hint
    assert march.isoformat() in empty.hint
    # What the hint points at finds it.
    assert memory.recall("Where do I work?", valid_at=march).hits[0].id == acme.id
    # With valid_at given too, it suggests leaving as_of out.
    both = memory.recall("Where do I work?", as_of=march, valid_at=_day(6))
    assert not both.hits and both.hint is not None and "as_of" in both.hint
    # No hint when something was found, or when nothing is there at any time.
    assert memory.recall("Where do I work?").hint is None
    assert memory.recall("Where do I work?", as_of=datetime.now(UTC)).hint is None
    stranger = memory.recall("Where do I work?", ns=f"{acme.ns}-empty", as_of=march)
    assert not stranger.hits and stranger.hint is None
    # context passes it on, as its warning, when its block is empty.
    block = memory.context("Where do I work?", budget_tokens=400, as_of=march)
    assert not block.text and block.warning == empty.hint
    assert globex.id not in block.fact_ids


def test_a_context_budget_too_small_for_one_line_warns(memory: Client, ns: str) -> None:
    memory.remember_many(["Dana plays tennis on Sundays.", "Dana's racket is a Wilson."])
    tight = memory.context("What sport does Dana play?", budget_tokens=40)
    assert tight.text == "" and tight.omitted > 0
    assert tight.warning is not None and "too small for one line" in tight.warning
    need = int(tight.warning.rsplit(" ", 1)[1])
    assert need > 40
    enough = memory.context("What sport does Dana play?", budget_tokens=need)
    assert enough.text and enough.warning is None
    assert memory.context("What sport does Dana play?", budget_tokens=500).warning is None
    # Nothing found is no warning: the block is empty because memory holds nothing on it.
    other = memory.context("Anything?", budget_tokens=500, ns=f"{ns}-empty")
    assert other.text == "" and other.warning is None


@pytest.fixture
def cli(graph: Graph, ns: str, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    monkeypatch.setattr("graphmem.cli.root.embedder_for", lambda settings, **_: embedder)
    env = cli_env(graph, ns)
    return lambda *args: CliRunner().invoke(main, list(args), env=env)


def test_the_cli_says_what_as_of_and_a_tight_budget_missed(memory: Client, cli: Invoke) -> None:
    _jobs(memory)
    march = _day(3, 31).date().isoformat()
    empty = cli("recall", "Where do I work?", "--as-of", march)
    assert empty.exit_code == 0, empty.output
    assert "Hint: nothing was believed at --as-of" in empty.stderr
    assert "did you mean --valid-at" in empty.stderr
    found = cli("recall", "Where do I work?", "--valid-at", march)
    assert found.exit_code == 0 and "Acme" in found.stdout and "Hint" not in found.stderr
    tight = cli("context", "Where do I work?", "--budget", "40")
    assert tight.exit_code == 0 and tight.stdout == ""
    assert "too small for one line" in tight.stderr and "raise --budget to at least" in tight.stderr
    roomy = cli("context", "Where do I work?", "--budget", "400")
    assert roomy.exit_code == 0 and "Globex" in roomy.stdout and "Warning" not in roomy.stderr
