"""``graphmem eval``: retrieval quality on conversations with known answers."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from graphmem import ConfigurationError, InvalidInputError
from graphmem.cli.plugins import json_option, memory_size, print_report, writable_dir

if TYPE_CHECKING:
    from graphmem_bench.evaluation.sets import DataSet

F = Callable[..., Any]


def _run_options(func: F) -> F:
    options: list[Callable[[Any], Any]] = [
        click.option(
            "--server",
            type=click.Choice(["scratch", "configured"]),
            default="scratch",
            show_default=True,
            help="scratch: a throwaway local Neo4j, deleted afterwards. configured: the Neo4j "
            "of GRAPHMEM_NEO4J_URI; the run's eval-* namespaces stay there.",
        ),
        click.option(
            "--heap",
            default="1g",
            show_default=True,
            callback=memory_size,
            help="Java heap of the scratch Neo4j.",
        ),
        click.option(
            "--pagecache",
            default="512m",
            show_default=True,
            callback=memory_size,
            help="Page cache of the scratch Neo4j.",
        ),
        click.option(
            "--no-time-shift",
            is_flag=True,
            help="Keep the dataset's times as they are (recency then measures age from now).",
        ),
        click.option(
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            callback=writable_dir,
            help="Also write results.json and results.md into this directory (checked before "
            "the run).",
        ),
        click.option(
            "--variant",
            "variants",
            multiple=True,
            metavar="NAME:KEY=VALUE,...",
            help="Also evaluate the default recall configuration with these RecallConfig "
            "fields changed, e.g. strong-recency:recency_weight=0.5; repeat for several.",
        ),
        click.option(
            "--only",
            metavar="NAMES",
            callback=_names,
            help="Run only these configurations, comma-separated (default always runs).",
        ),
        json_option("Print JSON instead of Markdown (errors too, on stderr)."),
    ]
    func = _checked_configurations(func)
    for option in reversed(options):
        func = option(func)
    return func


def _names(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    """The callback of ``--only``: comma-separated names, blanks dropped."""
    return tuple(n.strip() for n in value.split(",") if n.strip()) if value else ()


def _checked_configurations(func: F) -> F:
    """Check ``--variant`` and ``--only`` before the command reads its data: a bad one is a
    malformed command line (exit 2), refused before any server starts or model loads."""

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        variants, only = kwargs["variants"], kwargs["only"]
        if variants or only:
            from graphmem import load_settings
            from graphmem.testing import settings_recall_config
            from graphmem_bench.evaluation.configs import configurations, select

            ctx = click.get_current_context()
            params = {param.name: param for param in ctx.command.params}
            try:
                specs = configurations(settings_recall_config(load_settings()), variants)
            except InvalidInputError as exc:
                raise click.BadParameter(str(exc), ctx, params["variants"]) from None
            try:
                select(specs, only)
            except InvalidInputError as exc:
                raise click.BadParameter(str(exc), ctx, params["only"]) from None
        return func(*args, **kwargs)

    return checked


def _evaluate(
    sets: Sequence[DataSet],
    *,
    server: str,
    heap: str,
    pagecache: str,
    no_time_shift: bool,
    variants: tuple[str, ...],
    only: tuple[str, ...],
    out: Path | None,
    as_json: bool,
) -> None:
    from graphmem import load_settings
    from graphmem_bench.evaluation.report import render_markdown, render_suite
    from graphmem_bench.evaluation.runner import EvalOptions, run_sets

    options = EvalOptions(
        server="configured" if server == "configured" else "scratch",
        heap=heap,
        pagecache=pagecache,
        time_shift=not no_time_shift,
        variants=variants,
        only=only,
    )

    def say(line: str) -> None:
        click.echo(f"[eval] {line}", err=True)

    for one in sets:
        if one.skipped:
            lines = ", ".join(str(n) for n in one.skipped[:10])
            more = " ..." if len(one.skipped) > 10 else ""
            say(f"{one.name}: left out {len(one.skipped)} empty message(s), lines {lines}{more}")
    suite = run_sets(sets, options, settings=load_settings(), progress=say)
    if len(suite.sets) == 1:
        report = suite.sets[0].report
        dumped = report.model_dump(mode="json")
        text = render_markdown(report)
    else:
        dumped, text = suite.model_dump(mode="json"), render_suite(suite)
    # One line: the report keeps every hit of every recall with its score breakdown.
    print_report(dumped, text, as_json=as_json, out=out, stem="results", say=say, indent=None)


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval quality: which recall finds the messages that answer each question.

    Example:

    \b
        graphmem eval beam /data/beam/100K --chats 1-3 --out eval-results
    """


def _set_specs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[str]:
    """The callback of ``--set``: a malformed NAME=SOURCE is a malformed command line."""
    from graphmem_bench.evaluation.sets import parse_spec

    for spec in value:
        try:
            parse_spec(spec)
        except InvalidInputError as exc:
            raise click.BadParameter(str(exc)) from None
    return list(value)


@eval_group.command("run")
@click.option(
    "--conversations",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Messages, one JSON object a line (conversation_id, session_id, message_id, role, "
    "speaker, time, text).",
)
@click.option(
    "--questions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Questions, one JSON object a line (conversation_id, question, question_time, "
    "gold_message_ids, category, extra).",
)
@click.option(
    "--set",
    "set_specs",
    multiple=True,
    metavar="NAME=SOURCE",
    callback=_set_specs,
    help="A named data set, repeat for several: a directory with conversations.jsonl and "
    "questions.jsonl (DIR@ID,ID keeps those conversations, DIR@-ID,ID leaves them out), a BEAM "
    "directory (DIR@1-10 for some chats), or synthetic:SEED.",
)
@_run_options
def eval_run(
    conversations: Path | None,
    questions: Path | None,
    set_specs: list[str],
    **options: Any,
) -> None:
    """Evaluate recall on conversations and questions in the neutral JSONL format.

    Each conversation is ingested into its own new namespace; every question is recalled
    (k = 10) under the product default and its ablations (one retriever only, plain RRF,
    linear fusion, no next-message credit, no update order, no recency, the gate per hit or
    off, user messages only), and three baselines run outside Neo4j (exact cosine, BM25,
    plain RRF of the two). Recall's configurations run interleaved, each question through
    all of them in a rotating order, after an untimed warm-up. The report gives
    recall_any@k and recall_all@k (k = 1, 5, 10), NDCG@10, precision@10, the share of
    questions without gold that got nothing, and latency per configuration and per category,
    and the calibration of the default's hit scores; results.json keeps every hit's score
    breakdown. Progress goes to stderr; the report (Markdown, or JSON with --json) to stdout.

    With several sets (--set, repeated), each is ingested into a Neo4j of its own and the
    report puts them side by side; a set whose questions name the message that asks them
    (extra.own_turn_id) is recalled as of that message.

    Example:

    \b
        graphmem eval run --conversations conv.jsonl --questions questions.jsonl --out results
        graphmem eval run --set realmem=data/realmem --set beam=data/beam/100K@1-10
    """
    from graphmem_bench.evaluation.format import read_messages, read_questions
    from graphmem_bench.evaluation.sets import DataSet, check_names, load_set

    if (conversations is None) != (questions is None):
        raise click.UsageError("--conversations and --questions go together")
    sets = [load_set(spec) for spec in set_specs]
    if conversations is not None and questions is not None:
        skipped: list[int] = []
        messages = read_messages(conversations, skipped)
        sets.insert(0, DataSet("data", messages, read_questions(questions), skipped=skipped))
    if not sets:
        raise click.UsageError("give --conversations and --questions, or --set (repeatable)")
    check_names(sets)
    _evaluate(sets, **options)


@eval_group.command("suite")
@click.argument("data", type=click.Path(exists=True, file_okay=False, path_type=Path))
@_run_options
def eval_suite(data: Path, **options: Any) -> None:
    """Evaluate recall on the development suite under DATA (beam/100K, realmem, locomo-dev).

    The sets recall's defaults are chosen on, side by side: BEAM chats 1-10, seven RealMem
    personas, a synthetic set (seed 1) and five LoCoMo conversations; and, reported apart,
    the held-out sets never used to choose anything: three other RealMem personas and a
    synthetic set of seed 2. Each set runs on a scratch Neo4j of its own (with --server
    configured, all in that one).

    Example:

    \b
        graphmem eval suite ../shared/data --out eval-results/suite
    """
    from graphmem_bench.evaluation.sets import development_suite

    _evaluate(development_suite(data), **options)


@eval_group.command("fit")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--configuration",
    default="gate-off",
    show_default=True,
    help="Whose hits to fit on (gate-off: the default's hits without the gate).",
)
@click.option(
    "--write",
    "target",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the fit (default: over the one recall reads).",
)
@click.option("--dry-run", is_flag=True, help="Print the fit without writing it.")
def eval_fit(results: Path, configuration: str, target: Path | None, dry_run: bool) -> None:
    """Fit recall's score calibration to the hits of an evaluation's results.json.

    A logistic regression of "the hit is gold" on the features the score reads (the rank
    score, the cosine and the lexical share), every weight at least 0; the development sets'
    hits only (held-out sets are never fitted on).

    Example:

    \b
        graphmem eval fit eval-results/suite/results.json
    """
    import json

    from graphmem_bench.evaluation.fit import fit_results, write

    calibration = fit_results(json.loads(results.read_text(encoding="utf-8")), configuration)
    click.echo(json.dumps(calibration.to_json(), indent=2))
    if not dry_run:
        click.echo(f"written to {write(calibration, target)}", err=True)


def _chat_selection(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> list[range] | None:
    """The callback of ``--chats``: a malformed selection is a malformed command line."""
    from graphmem_bench.evaluation.beam import BeamFormatError, parse_chat_selection

    try:
        return parse_chat_selection(value) if value else None
    except BeamFormatError as exc:
        raise click.BadParameter(str(exc)) from None


@eval_group.command("beam")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--chats",
    callback=_chat_selection,
    help="Chat numbers to use, such as 1-10 or 1,3 (default: all).",
)
@click.option(
    "--export",
    type=click.Path(file_okay=False, path_type=Path),
    callback=writable_dir,
    help="Only write conversations.jsonl and questions.jsonl into this directory.",
)
@_run_options
def eval_beam(path: Path, chats: list[range] | None, export: Path | None, **options: Any) -> None:
    """Evaluate recall on BEAM chats (PATH holds chat directories 1, 2, ..., or is one).

    The chats are converted to the neutral format (see `graphmem eval run`): each batch is a
    session, message times follow the time anchors in conversation order, the gold messages
    of a question are all its source_chat_ids, and its category is the ability. Besides the
    common tables, knowledge-update questions report how often the updated message ranks
    above the original, and contradiction questions how often both statements are in the
    top 10.

    Example:

    \b
        graphmem eval beam /data/beam/100K --chats 1-10 --out eval-results/beam
    """
    from graphmem_bench.evaluation.beam import convert
    from graphmem_bench.evaluation.format import write_jsonl

    messages, questions = convert(path, chats)
    if export is not None:
        conversations, questions_path = export / "conversations.jsonl", export / "questions.jsonl"
        try:
            wrote_messages = write_jsonl(conversations, messages)
            wrote_questions = write_jsonl(questions_path, questions)
        except OSError as exc:
            raise ConfigurationError(
                f"could not write to {export} ({exc.strerror or exc})"
            ) from exc
        if options["as_json"]:
            data = {
                "conversations_file": str(conversations),
                "messages": wrote_messages,
                "questions_file": str(questions_path),
                "questions": wrote_questions,
            }
            click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            click.echo(
                f"wrote {wrote_messages} messages to {conversations} and "
                f"{wrote_questions} questions to {questions_path}"
            )
        return
    from graphmem_bench.evaluation.sets import DataSet

    _evaluate([DataSet("beam", messages, questions)], **options)


def _context_set_names(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[str, ...]:
    """The callback of ``eval context --sets``: an unknown name is a malformed command line."""
    from graphmem_bench.evaluation.context_sets import CONTEXT_SETS

    names = _names(ctx, param, value)
    unknown = [n for n in names if n not in CONTEXT_SETS]
    if unknown:
        raise click.BadParameter(
            f"no set {', '.join(unknown)}; the sets are {', '.join(CONTEXT_SETS)}"
        )
    return names


@eval_group.command("context")
@click.argument("data", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--budget",
    default=1000,
    show_default=True,
    type=click.IntRange(50, 100_000),
    help="Token budget of each context block.",
)
@click.option(
    "--sets",
    "set_names",
    metavar="NAMES",
    callback=_context_set_names,
    help="Only these sets, comma-separated: beam-1-10, realmem-dev, synthetic-dev, bench-facts.",
)
@click.option(
    "--conversations",
    type=click.IntRange(1),
    help="At most this many conversations per set (the first ones).",
)
@click.option(
    "--questions",
    type=click.IntRange(1),
    help="At most this many measured questions per set, spread evenly over it.",
)
@click.option(
    "--server",
    type=click.Choice(["scratch", "configured"]),
    default="scratch",
    show_default=True,
    help="scratch: a throwaway local Neo4j, deleted afterwards. configured: the Neo4j of "
    "GRAPHMEM_NEO4J_URI; the run's eval-context-* namespaces stay there.",
)
@click.option(
    "--heap",
    default="1g",
    show_default=True,
    callback=memory_size,
    help="Java heap of the scratch Neo4j.",
)
@click.option(
    "--pagecache",
    default="512m",
    show_default=True,
    callback=memory_size,
    help="Page cache of the scratch Neo4j.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    callback=writable_dir,
    help="Also write context.json and context.md into this directory (checked before the run).",
)
@json_option("Print JSON instead of Markdown (errors too, on stderr).")
def eval_context(
    data: Path,
    budget: int,
    set_names: tuple[str, ...],
    conversations: int | None,
    questions: int | None,
    server: str,
    heap: str,
    pagecache: str,
    out: Path | None,
    as_json: bool,
) -> None:
    """Measure whether consolidation's tiers and summaries help a small context block.

    On the development sets under DATA (BEAM chats 1-10, seven RealMem personas, the
    synthetic set of seed 1, and the bench's fact questions), each message is stored as a
    fact recorded at its message's time; half the questions are asked first, with access
    tracking, as the history; then the share of the other questions whose gold messages are
    in a context block of --budget tokens is measured without a further consolidation, after
    one with the tier pass, after one with the summary pass, and after one with both.
    Summaries are written by the LLM that GRAPHMEM_LLM configures, else extractively (the
    members' texts joined), which the report says.

    Example:

    \b
        graphmem eval context ../shared/data --questions 100 --out eval-results/context
    """
    from graphmem import load_settings
    from graphmem_bench.evaluation.context import ContextEvalOptions, run_context
    from graphmem_bench.evaluation.context_report import render_context
    from graphmem_bench.evaluation.context_sets import context_sets

    options = ContextEvalOptions(
        server="configured" if server == "configured" else "scratch",
        heap=heap,
        pagecache=pagecache,
        budget_tokens=budget,
        max_questions=questions,
        max_conversations=conversations,
    )
    sets = context_sets(data, set_names)

    def say(line: str) -> None:
        click.echo(f"[eval] {line}", err=True)

    report = run_context(sets, options, settings=load_settings(), progress=say)
    dumped, text = report.model_dump(mode="json"), render_context(report)
    print_report(dumped, text, as_json=as_json, out=out, stem="context", say=say)
