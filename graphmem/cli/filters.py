"""The options ``recall`` and ``context`` share on the command line: one
:class:`FilterOption` for each filter of :class:`~graphmem.core.recall.scope.RecallOptions`
the CLI offers, and :func:`filter_options`, which adds them all to a command."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import click

from graphmem.cli.output import FiniteFloat


@dataclass(frozen=True)
class FilterOption:
    """How the CLI offers one of :class:`RecallOptions`: its flag, and the value it passes."""

    flag: str
    option: str
    help: str
    kind: Literal["text", "flag", "many", "choice", "number", "negated"] = "text"
    choices: tuple[str, ...] = ()


#: The recall options the CLI's ``recall`` and ``context`` offer, in the order of their help.
FILTER_OPTIONS: tuple[FilterOption, ...] = (
    FilterOption(
        "--kind",
        "kinds",
        "Only this kind of hit; repeat for both (default: both).",
        "choice",
        ("fact", "episode"),
    ),
    FilterOption("--as-of", "as_of", "Answer from what was believed at that time."),
    FilterOption("--valid-at", "valid_at", "Answer from what was true at that time."),
    FilterOption("--tag", "tags", "Only facts with this tag; repeat for several.", "many"),
    FilterOption(
        "--speaker",
        "speakers",
        "Only messages said by this speaker (case aside; a message stored without one: by its "
        "role); repeat for several.",
        "many",
    ),
    FilterOption("--include-retired", "include_retired", "Also return superseded facts.", "flag"),
    FilterOption("--since", "since", "Only what was recorded or said from then on."),
    FilterOption("--until", "until", "Only what was recorded or said before then."),
    FilterOption(
        "--no-references",
        "expand_references",
        "Do not add facts reached over REFERENCES.",
        "negated",
    ),
    FilterOption(
        "--min-score",
        "min_score",
        "Score (0-1, the probability that it answers) every hit needs.",
        "number",
    ),
)


F = TypeVar("F", bound=Callable[..., Any])


def _click_option(spec: FilterOption) -> Callable[[F], F]:
    """The click option of one of recall's options; it passes ``spec.option`` (None when not
    given)."""
    if spec.kind == "choice":
        return click.option(
            spec.flag, spec.option, type=click.Choice(spec.choices), multiple=True, help=spec.help
        )
    if spec.kind == "many":
        return click.option(spec.flag, spec.option, multiple=True, help=spec.help)
    if spec.kind in ("flag", "negated"):
        return click.option(spec.flag, spec.option, is_flag=True, default=None, help=spec.help)
    if spec.kind == "number":
        return click.option(spec.flag, spec.option, type=FiniteFloat(-1.0, 1.0), help=spec.help)
    return click.option(spec.flag, spec.option, metavar="TIME", help=spec.help)


def filter_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options recall and context share (:data:`FILTER_OPTIONS`: --kind, --as-of,
    --valid-at, --tag, --speaker, --include-retired, --since, --until, --no-references,
    --min-score); the command receives them as ``filters``, keyword arguments of recall and
    context. An option not given is left out, so recall's own default applies (both kinds, no
    tag filter, ...)."""
    negated = {spec.option for spec in FILTER_OPTIONS if spec.kind == "negated"}

    @functools.wraps(func)
    def with_filters(*args: Any, **kwargs: Any) -> Any:
        given = {spec.option: kwargs.pop(spec.option) for spec in FILTER_OPTIONS}
        filters = {
            name: (not value if name in negated else value)
            for name, value in given.items()
            if value not in (None, ())
        }
        return func(*args, filters=filters, **kwargs)

    command: Callable[..., Any] = with_filters
    for spec in reversed(FILTER_OPTIONS):
        command = _click_option(spec)(command)
    return command
