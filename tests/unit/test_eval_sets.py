"""Named data sets, the development suite and the synthetic sets, without a database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.errors import InvalidInputError
from graphmem_bench.evaluation.format import check_dataset
from graphmem_bench.evaluation.sets import (
    LOCOMO_CATEGORIES,
    REALMEM_HELD_OUT,
    development_suite,
    load_set,
    parse_spec,
)
from graphmem_bench.evaluation.synthetic import generate


def _neutral(
    directory: Path, conversations: list[str], empty: bool = False, category: str | None = None
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    messages, questions = [], []
    for conv in conversations:
        messages.append(
            {
                "conversation_id": conv,
                "session_id": "s1",
                "message_id": "m1",
                "role": "user",
                "time": "2024-05-01T10:00:00+00:00",
                "text": f"I adopted a parrot in {conv}.",
            }
        )
        if empty:
            messages.append({**messages[-1], "message_id": "m2", "text": "  "})
        questions.append(
            {
                "conversation_id": conv,
                "question": "Where did I adopt a parrot?",
                "question_time": "2024-05-02T10:00:00+00:00",
                "gold_message_ids": ["m1"],
                **({"category": category} if category else {}),
            }
        )
    (directory / "conversations.jsonl").write_text(
        "".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8"
    )
    (directory / "questions.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8"
    )
    return directory


def _beam_chat(directory: Path) -> None:
    directory.mkdir(parents=True)
    (directory / "chat.json").write_text(
        json.dumps(
            [
                {
                    "batch_number": 1,
                    "time_anchor": "March-15-2024",
                    "turns": [[{"role": "user", "id": 0, "content": "I like tea."}]],
                }
            ]
        ),
        encoding="utf-8",
    )
    (directory / "probing_questions.json").write_text(
        json.dumps(
            {"information_extraction": [{"question": "What do I like?", "source_chat_ids": [0]}]}
        ),
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("noequals", "is not NAME=SOURCE"),
        ("=dir", "is not NAME=SOURCE"),
        ("bad name=dir", "is not NAME=SOURCE"),
        ("x=", "is not NAME=SOURCE"),
    ],
)
def test_a_malformed_spec_is_refused(spec: str, reason: str) -> None:
    with pytest.raises(InvalidInputError, match=reason):
        parse_spec(spec)


def test_sources_and_selections(tmp_path: Path) -> None:
    data = _neutral(tmp_path / "data", ["a", "b", "c"], empty=True)
    whole = load_set(f"all={data}")
    assert {m.conversation_id for m in whole.messages} == {"a", "b", "c"}
    assert whole.skipped == [2, 4, 6]  # the empty messages, by line
    kept = load_set(f"some={data}@a,c")
    assert {q.conversation_id for q in kept.questions} == {"a", "c"}
    rest = load_set(f"rest={data}@-a", held_out=True)
    assert {m.conversation_id for m in rest.messages} == {"b", "c"} and rest.held_out
    with pytest.raises(InvalidInputError, match="no conversation zz"):
        load_set(f"x={data}@a,zz")
    with pytest.raises(InvalidInputError, match="is not a directory"):
        load_set(f"x={tmp_path / 'missing'}")
    with pytest.raises(InvalidInputError, match="synthetic takes a seed"):
        load_set("x=synthetic:abc")
    assert load_set("s=synthetic:3").name == "s"


def test_the_development_suite_holds_out_three_personas(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="needs"):
        development_suite(tmp_path)
    _neutral(tmp_path / "realmem", ["Anna", *REALMEM_HELD_OUT])
    for chat in range(1, 11):
        _beam_chat(tmp_path / "beam" / "100K" / str(chat))
    with pytest.raises(InvalidInputError, match="locomo-dev"):
        development_suite(tmp_path)
    _neutral(tmp_path / "locomo-dev", ["conv-26"], category="5")
    sets = development_suite(tmp_path)
    assert [(s.name, s.held_out) for s in sets] == [
        ("beam-1-10", False),
        ("realmem-dev", False),
        ("synthetic-dev", False),
        ("locomo-dev", False),
        ("realmem-held-out", True),
        ("synthetic-held-out", True),
    ]
    assert {m.conversation_id for m in sets[1].messages} == {"Anna"}
    assert {m.conversation_id for m in sets[4].messages} == set(REALMEM_HELD_OUT)
    # LoCoMo's numbered categories are read under their names; gold ids stay as given
    (question,) = sets[3].questions
    assert question.category == "adversarial" and question.gold_message_ids == ("m1",)


def test_only_a_locomo_directory_has_its_categories_named(tmp_path: Path) -> None:
    other = load_set(f"x={_neutral(tmp_path / 'other', ['a'], category='5')}")
    assert other.questions[0].category == "5"
    locomo = load_set(f"x={_neutral(tmp_path / 'LoCoMo', ['a'], category='2')}@a")
    assert locomo.questions[0].category == "temporal"
    assert LOCOMO_CATEGORIES == {
        "1": "multi-hop",
        "2": "temporal",
        "3": "open-domain",
        "4": "single-hop",
        "5": "adversarial",
    }


def test_synthetic_sets_are_fixed_by_their_seed() -> None:
    messages, questions = generate(1)
    check_dataset(messages, questions)
    again, _ = generate(1)
    other, _ = generate(2)
    assert [m.text for m in again] == [m.text for m in messages]
    assert [m.text for m in other] != [m.text for m in messages]
    by_id = {(m.conversation_id, m.message_id): m for m in messages}
    updates = [q for q in questions if q.category == "update"]
    assert len(updates) >= 200
    for q in updates:
        (old,), (new,) = q.extra["original_ids"], q.extra["updated_ids"]  # type: ignore[index]
        assert old != new
        assert by_id[(q.conversation_id, old)].time < by_id[(q.conversation_id, new)].time
        assert by_id[(q.conversation_id, new)].time < q.question_time
    categories = {q.category for q in questions}
    assert categories == {"update", "update-past", "paraphrase", "name", "date"}


def test_eval_run_needs_a_whole_data_set(tmp_path: Path) -> None:
    data = _neutral(tmp_path / "d", ["a"])
    runner = CliRunner()
    alone = runner.invoke(
        main, ["eval", "run", "--conversations", str(data / "conversations.jsonl")]
    )
    assert alone.exit_code == 2 and "go together" in alone.stderr
    nothing = runner.invoke(main, ["eval", "run"])
    assert nothing.exit_code == 2 and "--set" in nothing.stderr
    bad = runner.invoke(main, ["eval", "run", "--set", "oops"])
    assert bad.exit_code == 2 and "is not NAME=SOURCE" in bad.stderr
    twice = runner.invoke(main, ["eval", "run", "--set", f"a={data}", "--set", f"a={data}"])
    assert twice.exit_code != 0 and "two data sets are named 'a'" in twice.output
