"""``graphmem eval`` on the command line, without a database: option checks before any work,
--out handling, JSON errors, and reports with nothing to score."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner, Result
from pydantic import SecretStr

import graphmem.client as memory_module
from graphmem.cli import main
from graphmem.core.recall.ranking import RecallConfig
from graphmem.errors import BadLinesError, InvalidInputError
from graphmem.servers.connection import Neo4jTarget
from graphmem.settings import load_settings
from graphmem_bench.evaluation import metrics, runner
from graphmem_bench.evaluation.beam import BeamFormatError, chat_dirs, convert, parse_chat_selection
from graphmem_bench.evaluation.configs import Configuration, configurations
from graphmem_bench.evaluation.format import EvalQuestion, read_messages, read_questions
from graphmem_bench.evaluation.report import checks, render_markdown, render_suite, suite_checks
from graphmem_bench.evaluation.results import (
    ConfigurationResult,
    EvalReport,
    SetReport,
    SuiteReport,
)
from tests.helpers import FakeEmbedder

MESSAGE = {
    "conversation_id": "c1",
    "session_id": "s1",
    "message_id": "m1",
    "role": "user",
    "time": "2024-05-01T10:00:00+00:00",
    "text": "I adopted a parrot called Kiwi.",
}
QUESTION = {
    "conversation_id": "c1",
    "question": "What is the parrot called?",
    "question_time": "2024-05-02T10:00:00+00:00",
    "gold_message_ids": ["m1"],
    "category": "pets",
}
NO_GOLD = {**QUESTION, "question": "What is my cat called?", "gold_message_ids": []}
NO_GOLD["category"] = "abstention"


def _files(tmp_path: Path, questions: list[dict[str, Any]] | None = None) -> list[str]:
    (tmp_path / "m.jsonl").write_text(json.dumps(MESSAGE) + "\n", encoding="utf-8")
    rows = questions or [QUESTION]
    text = "".join(json.dumps(q) + "\n" for q in rows)
    (tmp_path / "q.jsonl").write_text(text, encoding="utf-8")
    return ["--conversations", str(tmp_path / "m.jsonl"), "--questions", str(tmp_path / "q.jsonl")]


def _eval(args: list[str]) -> Result:
    return CliRunner().invoke(main, ["eval", *args])


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if the run gets as far as starting or reaching a server."""

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the run reached the server")

    monkeypatch.setattr(runner, "measuring_run", refuse)


def _report(questions: list[EvalQuestion], ranked: list[list[str]]) -> EvalReport:
    answers = [metrics.Answer(r, 1.0, 0.5) for r in ranked]
    results = []
    for name in ("default", "vector-only"):
        categories = sorted({q.category or "(none)" for q in questions})
        results.append(
            ConfigurationResult(
                name=name,
                description=name,
                overall=metrics.summarize(questions, answers, True),
                by_category={
                    cat: metrics.summarize(
                        [q for q in questions if q.category == cat],
                        [a for a, q in zip(answers, questions, strict=True) if q.category == cat],
                        True,
                    )
                    for cat in categories
                },
            )
        )
    return EvalReport(
        **_stamp(),
        server="test",
        embedder="test",
        namespace_prefix="eval-test",
        k=10,
        conversations=1,
        messages=1,
        user_messages=1,
        merged_messages=0,
        questions=len(questions),
        configurations=results,
        details=[],
    )


def _stamp() -> dict[str, Any]:
    """The version and times a fake report carries."""
    now = datetime.now(UTC)
    return {"graphmem_version": "0", "started_at": now, "finished_at": now, "wall_seconds": 1.0}


def _suite(*reports: EvalReport) -> SuiteReport:
    return SuiteReport(
        **_stamp(),
        sets=[SetReport(name=f"set{n}", report=r) for n, r in enumerate(reports, start=1)],
    )


@pytest.fixture
def fake_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_sets`` answers at once with a small report per set."""

    def run(sets: Any, options: Any, **_kwargs: Any) -> SuiteReport:
        return _suite(*(_report(s.questions, [["m1"] for _ in s.questions]) for s in sets))

    monkeypatch.setattr(runner, "run_sets", run)


# --- --only and --variant are checked before any server, model or ingest ---------------------
@pytest.mark.usefixtures("no_server")
@pytest.mark.parametrize(
    ("option", "reason"),
    [
        (["--only", "vector-onyl"], "unknown configuration"),
        (["--only", "x", "--variant", "y:fusion=linear"], "unknown configuration(s) x"),
        (["--variant", "foo"], "is not NAME:key=value"),
        (["--variant", "x:min_score=abc"], "variant 'x:min_score=abc'"),
        (["--variant", "vector-only:fusion=linear"], "taken by a built-in configuration"),
        (["--variant", "a:fusion=linear", "--variant", "a:recency=false"], "another variant"),
    ],
)
@pytest.mark.parametrize("command", ["run", "beam"])
def test_bad_only_and_variant_are_refused_before_the_run(
    tmp_path: Path, option: list[str], reason: str, command: str
) -> None:
    """A bad --only or --variant is a malformed command line: exit 2, before the data is read
    (the data here is not even valid) and before any server starts."""
    (tmp_path / "m.jsonl").write_text("{bad\n", encoding="utf-8")
    (tmp_path / "q.jsonl").write_text("{bad\n", encoding="utf-8")
    data = (
        ["--conversations", str(tmp_path / "m.jsonl"), "--questions", str(tmp_path / "q.jsonl")]
        if command == "run"
        else [str(tmp_path)]  # holds no BEAM chats
    )
    result = _eval([command, *data, "--server", "configured", *option, "--json"])
    assert result.exit_code == 2, result.output
    hint = "--only" if option[0] == "--only" else "--variant"
    assert f"Invalid value for '{hint}'" in result.stderr, result.stderr
    assert reason in result.stderr and "Traceback" not in result.output
    assert result.stdout == ""


@pytest.mark.usefixtures("fake_run")
def test_good_only_and_variant_reach_the_run(tmp_path: Path) -> None:
    args = ["--variant", "y:fusion=linear", "--only", "y, vector-only"]
    result = _eval(["run", *_files(tmp_path), *args])
    assert result.exit_code == 0, result.output


def test_variant_names_must_be_new() -> None:
    default = RecallConfig()
    with pytest.raises(InvalidInputError, match="'default' is already taken by a built-in"):
        configurations(default, ["default:recency=false"])
    with pytest.raises(InvalidInputError, match="'bm25' is already taken"):
        configurations(default, ["bm25:recency=false"])
    with pytest.raises(InvalidInputError, match="'x' is already taken by another variant"):
        configurations(default, ["x:recency=false", "x:fusion=linear"])
    names = [c.name for c in configurations(default, ["x:recency=false", "y:fusion=linear"])]
    assert len(names) == len(set(names))
    assert names[-5:] == ["x", "y", "cosine-exact", "bm25", "rrf-plain"]


@pytest.mark.usefixtures("no_server")
@pytest.mark.usefixtures("no_server")
def test_extra_configuration_names_must_be_new(tmp_path: Path) -> None:
    """run_eval's ``extra`` configurations are keyed by name like the rest, so a taken name is
    refused before any server starts."""
    args = _files(tmp_path)
    messages, questions = read_messages(Path(args[1])), read_questions(Path(args[3]))
    mine = Configuration("mine", "default, hits kept")
    cases = [
        ([Configuration("default", "again")], "'default' is already taken by a built-in"),
        ([mine, mine], "'mine' is already taken by another configuration"),
    ]
    for extra, reason in cases:
        with pytest.raises(InvalidInputError, match=reason):
            runner.run_eval(messages, questions, settings=load_settings(), extra=extra)


@pytest.mark.usefixtures("no_server")
def test_a_bad_memory_size_is_refused_as_an_option(tmp_path: Path) -> None:
    for option, value in (("--heap", "2x"), ("--pagecache", "lots")):
        result = _eval(["run", *_files(tmp_path), option, value])
        assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.stderr
        assert "Traceback" not in result.output


# --- --out -------------------------------------------------------------------------------------
@pytest.mark.usefixtures("no_server")
def test_an_out_that_cannot_be_created_fails_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    out = tmp_path / "file" / "results"
    result = _eval(["run", *_files(tmp_path), "--out", str(out)])
    assert result.exit_code == 2, result.output  # a bad option, refused as click refuses one
    assert "Invalid value for '--out'" in result.stderr and "cannot write into" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("no_server")
def test_beam_out_and_export_are_checked_first(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    for option in ("--out", "--export"):
        # the BEAM path has no chats either: the directory is checked before the data
        result = _eval(["beam", str(tmp_path), option, str(tmp_path / "file" / "x")])
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '{option}'" in result.stderr, result.stderr


def test_a_failed_write_after_the_run_still_prints_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"

    def run(sets: Any, options: Any, **_kwargs: Any) -> SuiteReport:
        out.rmdir()  # checked writable before the run, gone (a plain file) after it
        out.write_text("", encoding="utf-8")
        return _suite(_report(sets[0].questions, [["m1"] for _ in sets[0].questions]))

    monkeypatch.setattr(runner, "run_sets", run)
    result = _eval(["run", *_files(tmp_path), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "# graphmem retrieval evaluation" in result.stdout
    assert "Error: the report was printed but could not be written" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("fake_run")
def test_out_writes_both_files(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    result = _eval(["run", *_files(tmp_path), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["questions"] == 1
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["questions"] == 1
    assert (out / "results.md").read_text(encoding="utf-8").startswith("# graphmem")
    assert {p.name for p in out.iterdir()} == {"results.json", "results.md"}  # no probe left


@pytest.mark.usefixtures("fake_run")
def test_out_keeps_earlier_reports(tmp_path: Path) -> None:
    """A second run into the same directory writes results-2; a name of which only one file
    is taken is skipped whole, and the half it wrote is removed."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "results-2.md").write_text("someone else's", encoding="utf-8")
    for _ in range(2):
        assert _eval(["run", *_files(tmp_path), "--out", str(out)]).exit_code == 0
    names = {p.name for p in out.iterdir()}
    assert names == {"results.json", "results.md", "results-2.md", "results-3.json", "results-3.md"}
    assert (out / "results-2.md").read_text(encoding="utf-8") == "someone else's"
    assert (out / "results-3.md").read_text() == (out / "results.md").read_text()


# --- input that is not UTF-8 -------------------------------------------------------------------
def test_jsonl_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(json.dumps(MESSAGE).encode() + b"\n" + b'{"a": "\xff"}\n')
    with pytest.raises(BadLinesError, match=r"line 2: not valid UTF-8"):
        read_messages(path)
    path.write_bytes(b"\xff\n")
    with pytest.raises(BadLinesError, match=r"line 1: not valid UTF-8"):
        read_questions(path)


@pytest.mark.usefixtures("no_server")
def test_eval_run_with_a_non_utf8_line_gives_the_usual_error(tmp_path: Path) -> None:
    args = _files(tmp_path)
    with (tmp_path / "q.jsonl").open("ab") as handle:
        handle.write(b'{"question": "\xff"}\n')
    result = _eval(["run", *args])
    assert result.exit_code == 1, result.output
    assert "line 2: not valid UTF-8" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("name", ["chat.json", "probing_questions.json"])
def test_beam_files_that_are_not_utf8_name_the_file(tmp_path: Path, name: str) -> None:
    chat = tmp_path / "1"
    chat.mkdir()
    (chat / "chat.json").write_text("[]", encoding="utf-8")
    (chat / "probing_questions.json").write_text("{}", encoding="utf-8")
    (chat / name).write_bytes(b'["\xff"]')
    with pytest.raises(BeamFormatError, match=rf"{name}: not valid UTF-8"):
        convert(tmp_path)
    result = _eval(["beam", str(tmp_path), "--export", str(tmp_path / "x")])
    assert result.exit_code == 1 and "not valid UTF-8" in result.stderr


# --- --chats -----------------------------------------------------------------------------------
def _chats(root: Path, numbers: range) -> None:
    for n in numbers:
        (root / str(n)).mkdir(parents=True)
        (root / str(n) / "chat.json").write_text("[]", encoding="utf-8")


def test_a_huge_chat_range_is_checked_without_spelling_it_out(tmp_path: Path) -> None:
    _chats(tmp_path, range(1, 11))
    ranges = parse_chat_selection("11-20000000000")
    with pytest.raises(BeamFormatError) as caught:
        chat_dirs(tmp_path, ranges)
    message = str(caught.value)
    assert message.endswith(
        "has no chat 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 (and 19999999980 more)"
    )
    with pytest.raises(BeamFormatError, match=r"no chat 11, 12, .*, 20 \(and 80 more\)$"):
        chat_dirs(tmp_path, parse_chat_selection("1-100"))
    with pytest.raises(BeamFormatError, match=r"has no chat 12$"):
        chat_dirs(tmp_path, parse_chat_selection("3,12,1-2"))
    picked = chat_dirs(tmp_path, parse_chat_selection("9-10,2,1-3"))
    assert [d.name for d in picked] == ["1", "2", "3", "9", "10"]
    assert [d.name for d in chat_dirs(tmp_path, [4, 2])] == ["2", "4"]


def test_chat_selection_ranges() -> None:
    assert parse_chat_selection("1-3,7") == [range(1, 4), range(7, 8)]
    assert parse_chat_selection("5,1-3,4") == [range(1, 6)]
    for bad in ("a", "3-1", "1,,2", "1" * 40):
        with pytest.raises(BeamFormatError):
            parse_chat_selection(bad)


# --- nothing to score --------------------------------------------------------------------------
def test_a_category_without_scored_questions_has_no_average() -> None:
    questions = [EvalQuestion.model_validate(q) for q in (QUESTION, NO_GOLD)]
    report = _report(questions, [["m1"], ["m1"]])
    default = report.configurations[0]
    abstention = default.by_category["abstention"]
    assert abstention.scored == 0 and abstention.recall_any[10] is None
    assert abstention.ndcg_at_10 is None and abstention.recall_all == {1: None, 5: None, 10: None}
    assert default.by_category["pets"].recall_any[10] == 1.0
    dumped = report.model_dump(mode="json")
    assert dumped["configurations"][0]["by_category"]["abstention"]["recall_any"]["10"] is None
    row = next(
        line for line in render_markdown(report).splitlines() if line.startswith("| abstention |")
    )
    assert "0.000" not in row and row.split("|")[4:11] == [" - "] * 7


def test_checks_skip_a_configuration_with_nothing_scored() -> None:
    questions = [EvalQuestion.model_validate(NO_GOLD)]
    report = _report(questions, [["m1"]])
    assert report.configurations[0].overall.recall_any[10] is None
    assert checks(report) == []
    text = render_markdown(report)
    assert "| default | 0 | - | - | - | - | - | - | - |" in text


# --- --json ------------------------------------------------------------------------------------
def test_eval_errors_are_json_with_json(tmp_path: Path) -> None:
    (tmp_path / "m.jsonl").write_text("{bad\n", encoding="utf-8")
    (tmp_path / "q.jsonl").write_text("", encoding="utf-8")
    args = ["--conversations", str(tmp_path / "m.jsonl"), "--questions", str(tmp_path / "q.jsonl")]
    result = _eval(["run", *args, "--json"])
    assert result.exit_code == 1, result.output
    error = json.loads(result.stderr)["error"]
    assert error["type"] == "BadLinesError" and error["bad_lines"][0]["line"] == 1


def test_a_malformed_chat_selection_is_a_usage_error(tmp_path: Path) -> None:
    for selection in ("1-3,x", "3-1", ""):
        result = _eval(["beam", str(tmp_path), "--chats", selection, "--json"])
        if not selection:  # no selection: every chat (and there are none here)
            assert result.exit_code == 1, result.output
            continue
        assert result.exit_code == 2, result.output
        assert "Invalid value for '--chats'" in result.stderr


def test_beam_export_with_json_prints_an_object(tmp_path: Path) -> None:
    chat = tmp_path / "beam" / "1"
    chat.mkdir(parents=True)
    batch = {"batch_number": 1, "turns": [[{"role": "user", "id": 0, "content": "hello"}]]}
    (chat / "chat.json").write_text(json.dumps([batch]), encoding="utf-8")
    (chat / "probing_questions.json").write_text("{}", encoding="utf-8")
    out = tmp_path / "out"
    result = _eval(["beam", str(tmp_path / "beam"), "--export", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data == {
        "conversations_file": str(out / "conversations.jsonl"),
        "messages": 1,
        "questions_file": str(out / "questions.jsonl"),
        "questions": 0,
    }


# --- latency -----------------------------------------------------------------------------------
class _CountingEmbedder:
    """Counts the texts it embeds (under a cache: each distinct text's first use)."""

    def __init__(self) -> None:
        self.inner = FakeEmbedder()
        self.model_id, self.dimension = self.inner.model_id, self.inner.dimension
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_configurations_run_interleaved_after_a_warm_up_each_on_an_embedded_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first questions go through every configuration unmeasured; then each question
    through every configuration, the order rotating, so that load and caches fall on all
    alike; the question is embedded before its configurations run, so no configuration's
    latency holds the embedding and none is measured apart."""
    counting = _CountingEmbedder()
    calls: list[tuple[str, tuple[str, ...]]] = []

    class FakeMemory:
        def __init__(self, _settings: Any, *, target: Any, embedder: Any) -> None:
            self.embedder = embedder

        def __enter__(self) -> FakeMemory:
            return self

        def __exit__(self, *_exc: object) -> None:
            pass

        def ingest(self, messages: Sequence[Any], *, ns: str) -> Any:
            self.embedder.embed([m.content for m in messages])
            return SimpleNamespace(created=len(messages), duplicates=())

        def recall(self, text: str, **options: Any) -> Any:
            calls.append((text, options["config"].retrievers))
            before = counting.texts
            self.embedder.embed([text])
            embedded = counting.texts > before  # 1 ms when the question was embedded now
            timing = SimpleNamespace(total_ms=1.0 if embedded else 0.0, db_ms=0.0)
            return SimpleNamespace(hits=[], timing=timing)

    monkeypatch.setattr(memory_module, "Memory", FakeMemory)
    _files(tmp_path)
    messages = read_messages(tmp_path / "m.jsonl")
    questions = [
        EvalQuestion.model_validate({**QUESTION, "question": f"Question {n}?"}) for n in range(12)
    ]
    options = runner.EvalOptions(server="configured", only=("vector-only",))
    target = Neo4jTarget(uri="bolt://x:1", user="neo4j", password=SecretStr("x"))
    report = runner.run_eval(
        messages, questions, options, settings=load_settings(), target=target, embedder=counting
    )
    assert [c.name for c in report.configurations] == ["default", "vector-only"]
    assert options.warmup == 10
    both, vector = ("vector", "fulltext"), ("vector",)
    warm, measured = calls[:20], calls[20:]
    assert warm == [
        (f"Question {n}?", r) for n in range(10) for r in (both, vector)[:: 1 - 2 * (n % 2)]
    ]
    assert measured == [
        (f"Question {n}?", r) for n in range(12) for r in (both, vector)[:: 1 - 2 * (n % 2)]
    ]
    for config in report.configurations:  # none measured with the embedding, none without
        assert config.overall.latency_ms_p95 == 0.0, config.name


def test_rotation_gives_each_configuration_each_place() -> None:
    specs = configurations(RecallConfig())[:3]
    orders = [[s.name for s in runner.rotated(specs, n)] for n in range(4)]
    assert orders == [
        ["default", "vector-only", "fulltext-only"],
        ["vector-only", "fulltext-only", "default"],
        ["fulltext-only", "default", "vector-only"],
        ["default", "vector-only", "fulltext-only"],
    ]
    assert runner.rotated([], 3) == []


def test_suite_checks_compare_the_default_with_every_ranking_and_the_best_baseline() -> None:
    """On each set the default must be at least every other configuration but the corpus
    variants; over the development sets its mean must beat the best baseline's by 0.05."""
    questions = [EvalQuestion.model_validate(QUESTION)]

    def report(scores: dict[str, str]) -> EvalReport:
        base = _report(questions, [["m1"]])
        results = []
        for name, first in scores.items():
            answers = [metrics.Answer([first], 1.0, 0.5)]
            overall = metrics.summarize(questions, answers, True)
            results.append(
                ConfigurationResult(name=name, description=name, overall=overall, by_category={})
            )
        return base.model_copy(update={"configurations": results})

    good = report({"default": "m1", "vector-only": "x", "user-only": "m1", "cosine-exact": "x"})
    beaten = report({"default": "x", "vector-only": "m1", "user-only": "m1", "cosine-exact": "x"})
    suite = _suite(good, beaten)
    lines = suite_checks(suite)
    assert lines[0].startswith("pass: set1") and "no configuration is above it" in lines[0]
    assert lines[1].startswith("fail: set2") and "vector-only 1.000" in lines[1]
    assert "user-only" not in lines[1]  # another corpus, not another ranking
    assert lines[2] == (
        "pass: development mean recall_any@10 0.500 against the best baseline (cosine-exact) "
        "0.000: +0.500 (target +0.050)"
    )
    text = render_suite(suite)
    assert "| configuration | set1 | set2 | mean (development) |" in text
    assert "| default | 1.000 | 0.000 | 0.500 |" in text
