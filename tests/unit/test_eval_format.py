"""The neutral evaluation format and the BEAM converter on hand-written data."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.core.recall.ranking import RecallConfig
from graphmem.errors import BadLinesError, InvalidInputError
from graphmem_bench.evaluation.beam import (
    BeamFormatError,
    chat_dirs,
    convert,
    convert_chat,
    parse_anchor,
    parse_chat_selection,
)
from graphmem_bench.evaluation.configs import configurations, select, variant
from graphmem_bench.evaluation.format import (
    EvalMessage,
    EvalQuestion,
    check_dataset,
    parse_lines,
    read_messages,
    read_questions,
)

GOOD_MESSAGE = {
    "conversation_id": "c1",
    "session_id": "s1",
    "message_id": "m1",
    "role": "user",
    "time": "2024-05-01T10:00:00+02:00",
    "text": "I adopted a parrot called Kiwi.",
}
GOOD_QUESTION = {
    "conversation_id": "c1",
    "question": "What is my parrot called?",
    "question_time": "2024-05-02T10:00:00+00:00",
    "gold_message_ids": ["m1", "m1"],
    "category": "recall",
}


def _lines(*rows: Any) -> list[str]:
    return [row if isinstance(row, str) else json.dumps(row) for row in rows]


def test_good_lines_parse_and_times_become_utc() -> None:
    (message,) = parse_lines(_lines(GOOD_MESSAGE, ""), EvalMessage)
    assert message.time == datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
    (question,) = parse_lines(_lines(GOOD_QUESTION), EvalQuestion)
    assert question.gold_message_ids == ("m1",)  # listed twice, counted once
    check_dataset([message], [question])


def test_malformed_lines_are_reported_with_their_numbers() -> None:
    naive = {**GOOD_MESSAGE, "time": "2024-05-01T10:00:00"}
    missing = {k: v for k, v in GOOD_MESSAGE.items() if k != "text"}
    unknown = {**GOOD_MESSAGE, "colour": "red"}
    with pytest.raises(BadLinesError) as caught:
        parse_lines(_lines(GOOD_MESSAGE, "{oops", "[1]", naive, missing, unknown), EvalMessage)
    numbers = [n for n, _ in caught.value.problems]
    assert numbers == [2, 3, 4, 5, 6]
    reasons = dict(caught.value.problems)
    assert "invalid JSON" in reasons[2]
    assert "JSON object" in reasons[3]
    assert "naive datetime" in reasons[4]
    assert "text" in reasons[5]
    assert "colour" in reasons[6]
    assert isinstance(caught.value, InvalidInputError)


def test_question_lines_are_checked() -> None:
    blank = {**GOOD_QUESTION, "question": "   "}
    no_gold = {k: v for k, v in GOOD_QUESTION.items() if k != "gold_message_ids"}
    bad_extra = {**GOOD_QUESTION, "extra": {"updated_ids": [1]}}
    with pytest.raises(BadLinesError) as caught:
        parse_lines(_lines(blank, no_gold, bad_extra), EvalQuestion)
    assert [n for n, _ in caught.value.problems] == [1, 2, 3]
    assert "updated_ids" in caught.value.problems[2][1]


def test_dataset_consistency() -> None:
    message = EvalMessage.model_validate(GOOD_MESSAGE)
    with pytest.raises(InvalidInputError, match="appears twice"):
        check_dataset([message, message], [])
    unknown_gold = EvalQuestion.model_validate({**GOOD_QUESTION, "gold_message_ids": ["m9"]})
    with pytest.raises(InvalidInputError, match="m9"):
        check_dataset([message], [unknown_gold])
    elsewhere = EvalQuestion.model_validate({**GOOD_QUESTION, "conversation_id": "c2"})
    with pytest.raises(InvalidInputError, match="no conversation 'c2'"):
        check_dataset([message], [elsewhere])
    with pytest.raises(InvalidInputError, match="no questions"):
        check_dataset([message], [])


def test_files_round_trip(tmp_path: Path) -> None:
    (tmp_path / "m.jsonl").write_text(json.dumps(GOOD_MESSAGE) + "\n", encoding="utf-8")
    (tmp_path / "q.jsonl").write_text(json.dumps(GOOD_QUESTION) + "\n", encoding="utf-8")
    assert read_messages(tmp_path / "m.jsonl")[0].message_id == "m1"
    assert read_questions(tmp_path / "q.jsonl")[0].category == "recall"


# --- BEAM -----------------------------------------------------------------------------------
def _msg(i: int, role: str, content: str, **more: Any) -> dict[str, Any]:
    return {"role": role, "id": i, "content": content, **more}


def _write_chat(directory: Path) -> None:
    directory.mkdir(parents=True)
    batches = [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    _msg(0, "user", "My bike is green.", time_anchor="June-01-2023"),
                    _msg(1, "assistant", "Noted, a green bike."),
                ],
                [_msg(2, "user", "I ride it to work."), _msg(3, "assistant", "Nice commute.")],
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": None,
            "turns": [
                [
                    _msg(4, "user", "I painted my bike blue.", time_anchor="July-10-2023"),
                    _msg(5, "assistant", "Blue it is."),
                ]
            ],
        },
    ]
    questions = {
        "knowledge_update": [
            {
                "question": "What colour is my bike?",
                "source_chat_ids": {"original_info": [0], "updated_info": [4]},
            }
        ],
        "contradiction_resolution": [
            {
                "question": "Do I ride my bike?",
                "source_chat_ids": {"first_statement": [2], "second_statement": [4]},
            }
        ],
        "information_extraction": [
            {"question": "How do I get to work?", "source_chat_ids": [2, 3, 2]}
        ],
        "abstention": [{"question": "What is my bike's brand?"}],
    }
    (directory / "chat.json").write_text(json.dumps(batches), encoding="utf-8")
    (directory / "probing_questions.json").write_text(json.dumps(questions), encoding="utf-8")


def test_beam_chat_converts_to_the_neutral_format(tmp_path: Path) -> None:
    _write_chat(tmp_path / "beam" / "1")
    messages, questions = convert(tmp_path / "beam")
    assert [m.message_id for m in messages] == ["0", "1", "2", "3", "4", "5"]
    assert {m.conversation_id for m in messages} == {"beam-1"}
    assert [m.session_id for m in messages] == ["batch-1"] * 4 + ["batch-2"] * 2
    assert [m.role for m in messages] == ["user", "assistant"] * 3
    start = datetime(2023, 6, 1, tzinfo=UTC)
    assert [m.time for m in messages[:4]] == [start + timedelta(minutes=i) for i in range(4)]
    assert messages[4].time == datetime(2023, 7, 10, tzinfo=UTC)
    assert messages[5].time == datetime(2023, 7, 10, 0, 1, tzinfo=UTC)
    by_category = {q.category: q for q in questions}
    update = by_category["knowledge_update"]
    assert update.gold_message_ids == ("0", "4")
    assert update.extra is not None
    assert update.extra["original_ids"] == ["0"] and update.extra["updated_ids"] == ["4"]
    contradiction = by_category["contradiction_resolution"]
    assert contradiction.id_pair(("first_statement_ids", "second_statement_ids")) == (
        ("2",),
        ("4",),
    )
    assert by_category["information_extraction"].gold_message_ids == ("2", "3")
    assert by_category["abstention"].gold_message_ids == ()
    assert all(q.question_time == messages[-1].time + timedelta(hours=1) for q in questions)
    check_dataset(messages, questions)


def test_times_stay_in_conversation_order_when_an_anchor_goes_back(tmp_path: Path) -> None:
    directory = tmp_path / "7"
    directory.mkdir()
    batches = [
        {
            "batch_number": 1,
            "time_anchor": "March-02-2024",
            "turns": [[_msg(0, "user", "first"), _msg(1, "assistant", "second")]],
        },
        {
            "batch_number": 2,
            "time_anchor": "March-01-2024",
            "turns": [[_msg(2, "user", "third")]],
        },
    ]
    (directory / "chat.json").write_text(json.dumps(batches), encoding="utf-8")
    (directory / "probing_questions.json").write_text("{}", encoding="utf-8")
    messages, questions = convert(directory)
    times = [m.time for m in messages]
    assert times == sorted(times) and len(set(times)) == 3
    assert messages[0].conversation_id == "beam-7" and questions == []


def test_beam_selection_and_errors(tmp_path: Path) -> None:
    assert parse_chat_selection("1-3,7") == [range(1, 4), range(7, 8)]
    assert parse_chat_selection("2") == [range(2, 3)]
    for bad in ("a", "3-1", "1,,2"):
        with pytest.raises(BeamFormatError):
            parse_chat_selection(bad)
    _write_chat(tmp_path / "1")
    _write_chat(tmp_path / "2")
    assert [d.name for d in chat_dirs(tmp_path, [2])] == ["2"]
    with pytest.raises(BeamFormatError, match="no chat 5"):
        chat_dirs(tmp_path, [5])
    with pytest.raises(BeamFormatError, match="not a date"):
        parse_anchor("someday", "here")
    (tmp_path / "1" / "chat.json").write_text('{"turns": []}', encoding="utf-8")
    with pytest.raises(BeamFormatError, match="list of batches"):
        convert(tmp_path, [1])


def test_beam_export_writes_the_two_files(tmp_path: Path) -> None:
    _write_chat(tmp_path / "beam" / "1")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["eval", "beam", str(tmp_path / "beam"), "--export", str(out)]
    )
    assert result.exit_code == 0, result.output
    messages = read_messages(out / "conversations.jsonl")
    questions = read_questions(out / "questions.jsonl")
    assert len(messages) == 6 and len(questions) == 4
    check_dataset(messages, questions)


def test_eval_run_reports_a_bad_line_without_a_database(tmp_path: Path) -> None:
    (tmp_path / "m.jsonl").write_text(json.dumps(GOOD_MESSAGE) + "\n{bad\n", encoding="utf-8")
    (tmp_path / "q.jsonl").write_text(json.dumps(GOOD_QUESTION) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "run",
            "--conversations",
            str(tmp_path / "m.jsonl"),
            "--questions",
            str(tmp_path / "q.jsonl"),
        ],
    )
    assert result.exit_code == 1
    assert "line 2" in result.output and "invalid JSON" in result.output


def test_long_messages_are_cut_and_nested_id_lists_flattened(tmp_path: Path) -> None:
    directory = tmp_path / "3"
    directory.mkdir()
    batches = [
        {
            "batch_number": 1,
            "time_anchor": "2024-02-01",
            "turns": [[_msg(0, "user", "abcdefghij"), _msg(1, "assistant", "ok")]],
        }
    ]
    questions = {"event_ordering": [{"question": "Order?", "source_chat_ids": [1, [0, 1]]}]}
    (directory / "chat.json").write_text(json.dumps(batches), encoding="utf-8")
    (directory / "probing_questions.json").write_text(json.dumps(questions), encoding="utf-8")
    messages, (question,) = convert_chat(directory, "c", max_chars=4)
    assert [m.text for m in messages] == ["abcd", "ok"]
    assert question.gold_message_ids == ("1", "0")


def test_variants_change_recall_config_fields() -> None:
    default = RecallConfig()
    spec = variant(default, "strong:recency_weight=0.5,retrievers=vector")
    assert spec.name == "strong" and spec.config is not None
    assert spec.config.recency_weight == 0.5 and spec.config.retrievers == ("vector",)
    assert spec.config.fusion == default.fusion
    names = [c.name for c in configurations(default, ["strong:recency=false"])]
    assert names[0] == "default" and names[-4:] == ["strong", "cosine-exact", "bm25", "rrf-plain"]
    chosen = select(configurations(default), ["bm25"])
    assert [c.name for c in chosen] == ["default", "bm25"]
    with pytest.raises(InvalidInputError, match="unknown configuration"):
        select(configurations(default), ["nope"])
    for bad in ("nocolon", "x:colour=red", "x:recency_weight=2"):
        with pytest.raises(InvalidInputError):
            variant(default, bad)
