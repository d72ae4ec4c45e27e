"""Named data sets for one evaluation run, and the development suite.

A set is given as ``NAME=SOURCE``:

* a directory holding ``conversations.jsonl`` and ``questions.jsonl`` (the neutral format);
  ``NAME=DIR@ID,ID`` keeps only those conversations and ``NAME=DIR@-ID,ID`` leaves them out;
* a BEAM directory (chat directories ``1``, ``2``, ..., or one chat), ``NAME=DIR@1-10`` for
  some chats;
* ``synthetic:SEED``: the synthetic conversations of :mod:`graphmem_bench.evaluation.synthetic`.

:func:`development_suite` is the fixed set of sets that recall's defaults are chosen on: BEAM
chats 1-10, seven RealMem personas, the synthetic set of seed 1 and five LoCoMo conversations,
beside two sets never used to choose anything (three other RealMem personas, synthetic seed 2),
reported apart.

A neutral directory whose name starts with ``locomo`` holds LoCoMo, whose categories are
numbers: they are read under their names (:data:`LOCOMO_CATEGORIES`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graphmem import InvalidInputError
from graphmem_bench.evaluation.format import (
    EvalMessage,
    EvalQuestion,
    read_messages,
    read_questions,
)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

#: RealMem personas held out of every choice of default.
REALMEM_HELD_OUT = ("Ethan_Hunt", "Lin_Wanyu", "Pak_Budi")

#: LoCoMo's question categories as it numbers them. Category 5 (adversarial) asks about
#: something never said of that person; its gold messages say it of the other speaker.
LOCOMO_CATEGORIES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}


@dataclass(frozen=True)
class DataSet:
    """The messages and questions of one named set."""

    name: str
    messages: list[EvalMessage]
    questions: list[EvalQuestion]
    #: Never used to choose a default: reported apart from the development sets.
    held_out: bool = False
    #: Line numbers of messages left out because their text was empty.
    skipped: list[int] = field(default_factory=list)


def parse_spec(spec: str) -> tuple[str, str, str | None]:
    """``NAME=SOURCE[@SELECTION]`` to its three parts; raises InvalidInputError."""
    name, eq, rest = spec.partition("=")
    if not eq or not _NAME.fullmatch(name.strip()) or not rest.strip():
        raise InvalidInputError(
            f"data set {spec!r} is not NAME=SOURCE (NAME: letters, digits, '_', '.', '-')"
        )
    source, at, selection = rest.strip().partition("@")
    return name.strip(), source, (selection.strip() if at else None)


def load_set(spec: str, *, held_out: bool = False) -> DataSet:
    """The data set ``spec`` names (see the module docstring)."""
    name, source, selection = parse_spec(spec)
    if source.startswith("synthetic:"):
        from graphmem_bench.evaluation.synthetic import generate

        seed = source.removeprefix("synthetic:")
        if not seed.isdigit() or len(seed) > 9 or selection is not None:
            raise InvalidInputError(f"data set {spec!r}: synthetic takes a seed, synthetic:1")
        messages, questions = generate(int(seed))
        return DataSet(name, messages, questions, held_out)
    path = Path(source)
    if not path.is_dir():
        raise InvalidInputError(f"data set {spec!r}: {source} is not a directory")
    if (path / "conversations.jsonl").is_file():
        skipped: list[int] = []
        messages = read_messages(path / "conversations.jsonl", skipped)
        questions = read_questions(path / "questions.jsonl")
        if path.resolve().name.lower().startswith("locomo"):
            questions = named_categories(questions, LOCOMO_CATEGORIES)
        if selection is not None:
            messages, questions = _select(spec, messages, questions, selection)
        return DataSet(name, messages, questions, held_out, skipped)
    from graphmem_bench.evaluation.beam import convert, parse_chat_selection

    chats = parse_chat_selection(selection) if selection is not None else None
    messages, questions = convert(path, chats)
    return DataSet(name, messages, questions, held_out)


def named_categories(
    questions: Sequence[EvalQuestion], names: dict[str, str]
) -> list[EvalQuestion]:
    """The questions with each category ``names`` knows replaced by its name."""
    return [
        q.model_copy(update={"category": names[q.category]}) if q.category in names else q
        for q in questions
    ]


def _select(
    spec: str, messages: list[EvalMessage], questions: list[EvalQuestion], selection: str
) -> tuple[list[EvalMessage], list[EvalQuestion]]:
    """The conversations ``ID,ID`` (or all but those, ``-ID,ID``) of a neutral set."""
    leave_out = selection.startswith("-")
    named = {part.strip() for part in selection.removeprefix("-").split(",") if part.strip()}
    known = {m.conversation_id for m in messages}
    unknown = sorted(named - known)
    if not named or unknown:
        raise InvalidInputError(
            f"data set {spec!r}: no conversation {', '.join(unknown) or '(none named)'}"
        )

    def kept(conversation: str) -> bool:
        return (conversation in named) != leave_out

    return (
        [m for m in messages if kept(m.conversation_id)],
        [q for q in questions if kept(q.conversation_id)],
    )


def development_suite(data: Path) -> list[DataSet]:
    """The development sets under ``data`` (``beam/100K``, ``realmem`` and ``locomo-dev``)
    and the synthetic ones, then the held-out sets."""
    beam, realmem, locomo = data / "beam" / "100K", data / "realmem", data / "locomo-dev"
    missing = [str(p) for p in (beam, realmem, locomo) if not p.is_dir()]
    if missing:
        raise InvalidInputError(f"the development suite needs {' and '.join(missing)}")
    held = ",".join(REALMEM_HELD_OUT)
    return [
        load_set(f"beam-1-10={beam}@1-10"),
        load_set(f"realmem-dev={realmem}@-{held}"),
        load_set("synthetic-dev=synthetic:1"),
        load_set(f"locomo-dev={locomo}"),
        load_set(f"realmem-held-out={realmem}@{held}", held_out=True),
        load_set("synthetic-held-out=synthetic:2", held_out=True),
    ]


def check_names(sets: Sequence[DataSet]) -> None:
    """Each set's name is its own: the report is keyed by it."""
    seen: set[str] = set()
    for data in sets:
        if data.name in seen:
            raise InvalidInputError(f"two data sets are named {data.name!r}")
        seen.add(data.name)
