"""The default token counter and the context block it budgets (no database)."""

from __future__ import annotations

import importlib.resources
import random
import re
import string
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import TZPATH, ZoneInfo

import pytest

from graphmem.core.context.block import CONTEXT_HEADER, build_context, context_header, time_zone
from graphmem.embed.identity import DEFAULT_MODEL_ID, packaged_model_path
from graphmem.embed.tokens import (
    HFTokenizerCounter,
    TokenCounter,
    WordPieceBudgetCounter,
    counter_from_setting,
    default_counter,
)
from graphmem.errors import ClientUsageError, InvalidInputError
from graphmem.models import Episode, Fact, Hit, Provenance, Scores, SourceMessage
from graphmem_bench.bench.synthetic import generate_facts, generate_messages

KEY = "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=150))
THAI = "ผมชื่อสมชายและผมทำงานที่กรุงเทพมหานครตั้งแต่ปีที่แล้ว"
ROCKETS = "🚀" * 300
THAI_WORDS = "สวัสดีครับ ผมชื่อสมชาย"
ZERO_WIDTH = "zero\u200bwidth\u200c\u200djoiner\ufeff"
NOW = datetime(2024, 5, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def counter() -> WordPieceBudgetCounter:
    return default_counter()


@pytest.fixture(scope="module")
def plain() -> HFTokenizerCounter:
    """Plain WordPiece, as the default counted before."""
    return HFTokenizerCounter(packaged_model_path())


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def test_the_default_is_the_budget_counter_and_says_so(counter: WordPieceBudgetCounter) -> None:
    assert isinstance(counter, TokenCounter)
    assert isinstance(counter_from_setting(None), WordPieceBudgetCounter)
    assert counter.name.startswith(f"{DEFAULT_MODEL_ID} (WordPiece;")
    assert "[UNK]" in counter.name and "UTF-8 bytes" in counter.name
    # A configured tokenizer.json is counted exactly as it is.
    configured = counter_from_setting(str(packaged_model_path()))
    assert type(configured) is HFTokenizerCounter


@pytest.mark.parametrize(
    "word",
    [KEY, THAI, ROCKETS, "Ǆemal", "Ǉubljana"],
    ids=["150-char key", "Thai sentence", "300 rockets", "accented [UNK]", "digraph [UNK]"],
)
def test_a_word_that_becomes_unk_counts_its_utf8_bytes(
    counter: WordPieceBudgetCounter, plain: HFTokenizerCounter, word: str
) -> None:
    assert plain.count(word) == 1  # the undercount: one [UNK] for the whole word
    assert counter.count(word) == _utf8(word)


def test_unk_spans_count_by_bytes_and_the_rest_as_before(
    counter: WordPieceBudgetCounter, plain: HFTokenizerCounter
) -> None:
    text = f"The deploy key is {KEY} and the greeting {THAI} ends with {ROCKETS}."
    unknown = 3
    assert plain.count(text) - unknown == plain.count(
        "The deploy key is and the greeting ends with."
    )
    assert counter.count(text) == plain.count(text) - unknown + _utf8(KEY + THAI + ROCKETS)
    # A Thai sentence with spaces is one [UNK] per word; the spaces cost nothing, as before.
    assert counter.count(THAI_WORDS) == _utf8(THAI_WORDS) - 1


def test_deleted_characters_count_their_bytes_plus_one_a_run(
    counter: WordPieceBudgetCounter, plain: HFTokenizerCounter
) -> None:
    # WordPiece deletes them and joins the neighbours: "zerowidthjoiner" is a few tokens.
    runs = _utf8("\u200b") + 1 + _utf8("\u200c\u200d") + 1 + _utf8("\ufeff") + 1
    assert counter.count(ZERO_WIDTH) == plain.count(ZERO_WIDTH) + runs
    assert counter.count("\u200b" * 10) == 31  # no token at all before
    assert plain.count("\u200b" * 10) == 0
    assert counter.count("a\x07b\x00c") == plain.count("a\x07b\x00c") + 2 + 2
    assert counter.count("soft\u00adhyphen") == plain.count("softhyphen") + 2 + 1
    assert counter.count("private \ue000 use") == plain.count("private use") + 3 + 1
    # A decomposed accent: the combining mark is deleted, precomposed it is not.
    assert counter.count("cafe\u0301") == plain.count("cafe") + 2 + 1
    # A deleted character inside an [UNK] span is in the span's bytes, not counted twice.
    assert counter.count("a\u200b🚀") == _utf8("a\u200b🚀")
    assert counter.count("\u200b🚀") == _utf8("\u200b🚀") + 1


@pytest.mark.parametrize(
    "text",
    [
        "Café naïve résumé Zürich São Paulo Łódź Nguyễn crème brûlée",
        "Alice moved to Berlin on 2023-05-01.\n\tShe works at Acme (since May).",
        "我的一家公司",
    ],
)
def test_text_wordpiece_tokenizes_counts_as_before(
    counter: WordPieceBudgetCounter, plain: HFTokenizerCounter, text: str
) -> None:
    assert counter.count(text) == plain.count(text)


def test_ordinary_english_counts_exactly_as_before(
    counter: WordPieceBudgetCounter, plain: HFTokenizerCounter
) -> None:
    texts = [f.text for f in generate_facts(300, seed=3)]
    texts += [m.content for m in generate_messages(100, seed=3)]
    for text in texts:
        assert counter.count(text) == plain.count(text), text
    block = "\n".join([CONTEXT_HEADER, *texts])
    assert counter.count(block) == plain.count(block)
    assert counter.count("") == 0


def _fact(number: int, text: str) -> Fact:
    return Fact(
        id=f"fact-{number}",
        ns="default",
        text=text,
        status="active",
        recorded_at=NOW,
        text_hash=f"hash-{number}",
    )


def _hit(item: Fact | Episode) -> Hit:
    scores = Scores(fused=1.0, recency=1.0, lexical=1.0, final=1.0)
    if isinstance(item, Fact):
        return Hit(
            kind="fact", id=item.id, text=item.text, score=1.0, scores=scores,
            provenance=Provenance(), fact=item,
        )  # fmt: skip
    return Hit(
        kind="episode", id=item.id, text=item.content, score=1.0, scores=scores,
        provenance=Provenance(), episode=item,
    )  # fmt: skip


def test_build_context_never_exceeds_the_budget(counter: WordPieceBudgetCounter) -> None:
    texts = [
        f"The staging deploy key is {KEY}.",
        f"Somchai wrote: {THAI_WORDS}",
        f"Launch day reaction: {ROCKETS[:20]}",
        f"Marker text {ZERO_WIDTH} with zero-width characters.",
        "Bob's favourite dish is crème brûlée from Łódź.",
        "Alice works at Acme Corp in Berlin.",
    ]
    pinned = [_fact(0, "The user prefers short answers.")]
    episode = Episode(
        id="episode-1",
        ns="default",
        content=f"{THAI} {ROCKETS[:10]}",
        role="user",
        speaker="Somchai",
        recorded_at=NOW,
        content_hash="hash-e",
    )
    hits = [_hit(_fact(i, text)) for i, text in enumerate(texts, 1)] + [_hit(episode)]
    everything = build_context(pinned, hits, 100_000, counter)
    assert everything.omitted == 0
    assert everything.tokens == counter.count(everything.text)
    # What WordPiece cannot see is paid for: the Thai, the emoji, the key.
    assert everything.tokens >= _utf8(THAI + THAI_WORDS + ROCKETS[:30]) - 1 + len(KEY)
    stripped_accents = set("crème brûlée from Łódź")
    for budget in range(1, everything.tokens + 1):
        block = build_context(pinned, hits, budget, counter)
        assert block.tokens == counter.count(block.text) <= budget, budget
        assert block.tokenizer == counter.name
        # Every other non-ASCII character here is [UNK] or deleted, so its bytes are in the
        # count: none comes in for free.
        unseen = sum(_utf8(c) for c in block.text if not c.isascii() and c not in stripped_accents)
        assert unseen <= block.tokens, budget
    assert build_context(pinned, hits, 1, counter).text == ""
    assert build_context(pinned, hits, everything.tokens, counter).omitted == 0


def test_a_budget_too_small_for_one_line_warns_with_what_it_needs(
    counter: WordPieceBudgetCounter,
) -> None:
    hits = [_hit(_fact(1, "Alice works at Acme Corp in Berlin.")), _hit(_fact(2, "Bob skis."))]
    header = counter.count(CONTEXT_HEADER)
    tight = build_context([], hits, header, counter)
    assert tight.text == "" and tight.omitted == 2 and tight.warning is not None
    assert f"budget_tokens={header} is too small for one line" in tight.warning
    assert f"the header takes {header} tokens" in tight.warning
    need = int(tight.warning.rsplit(" ", 1)[1])
    assert need > header
    # What it names is enough for the shortest line, and one token less is not.
    enough = build_context([], hits, need, counter)
    assert enough.fact_ids == ("fact-2",) and enough.warning is None
    assert build_context([], hits, need - 1, counter).warning is not None
    # An empty block of nothing found says nothing.
    assert build_context([], [], 5, counter).warning is None
    assert build_context([], hits, 10_000, counter).warning is None


class _OddCounter:
    """A token counter with no name whose count is whatever it was given."""

    def __init__(self, answer: object) -> None:
        self.answer = answer

    def count(self, text: str) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (2.5, "counted 2.5 tokens"),
        (-1, "counted -1 tokens"),
        (True, "counted True tokens"),
        ("3", "counted '3' tokens"),
        (None, "counted None tokens"),
        (RuntimeError("model gone"), "failed: RuntimeError: model gone"),
    ],
)
def test_a_token_counter_that_breaks_its_contract_is_a_typed_error(
    answer: object, reason: str
) -> None:
    with pytest.raises(ClientUsageError, match=f"token counter '_OddCounter' {re.escape(reason)}"):
        build_context([], [_hit(_fact(1, "a fact"))], 100, _OddCounter(answer))  # type: ignore[arg-type]
    block = build_context([], [_hit(_fact(1, "a fact"))], 100, _OddCounter(3))  # type: ignore[arg-type]
    assert block.tokens == 3 and block.tokenizer == "_OddCounter"


def test_context_lines_clip_each_text_to_600_characters(counter: WordPieceBudgetCounter) -> None:
    long = "word " * 300  # 1,500 characters
    block = build_context([], [_hit(_fact(1, long))], 100_000, counter)
    (line,) = block.text.splitlines()[1:]
    clipped = " ".join(long.split())[:599] + "…"
    assert line == f"- [2024-05-01] {clipped} (fact fact-1)"
    assert len(clipped) == 600
    short = build_context([], [_hit(_fact(1, "a  short\nfact"))], 100_000, counter)
    assert short.text.splitlines()[1] == "- [2024-05-01] a short fact (fact fact-1)"


def test_context_lines_write_control_characters_as_escapes(
    counter: WordPieceBudgetCounter,
) -> None:
    text = "Google.\x1b]0;title\x07 \x1b[2J\x1b[31mred\x08XYZ \u202eesrever\u202c\x1c end"
    block = build_context([], [_hit(_fact(1, text))], 100_000, counter)
    (line,) = block.text.splitlines()[1:]
    assert line == (
        r"- [2024-05-01] Google.\x1b]0;title\x07 \x1b[2J\x1b[31mred\x08XYZ "
        r"\u202eesrever\u202c end (fact fact-1)"
    )
    assert all(line.isprintable() for line in block.text.split("\n"))
    # Clipping counts the escapes, so a text never takes more than 600 characters of a line.
    long = build_context([], [_hit(_fact(1, "\x07" * 700))], 100_000, counter)
    assert long.text.splitlines()[1] == "- [2024-05-01] " + r"\x07" * 149 + r"\x0… (fact fact-1)"


def test_context_lines_say_when_a_fact_holds(counter: WordPieceBudgetCounter) -> None:
    def line(at: datetime, **valid: datetime) -> str:
        fact = _fact(1, "The user stays at the Hotel Adlon.").model_copy(update=valid)
        return build_context([], [_hit(fact)], 100_000, counter, at).text.splitlines()[1]

    march, april, may = (datetime(2024, m, 1, tzinfo=UTC) for m in (3, 4, 5))
    text = "The user stays at the Hotel Adlon. (fact fact-1)"
    assert line(april) == f"- [2024-05-01] {text}"  # recorded, no valid time
    assert line(april, valid_from=march) == f"- [2024-03-01] {text}"
    assert line(april, valid_from=may) == f"- [from 2024-05-01, not yet true] {text}"
    span = {"valid_from": march, "valid_to": may}
    assert line(april, **span) == f"- [2024-03-01 to 2024-05-01] {text}"
    assert line(may, **span) == f"- [2024-03-01 to 2024-05-01, no longer true] {text}"
    assert line(datetime(2024, 2, 1, tzinfo=UTC), **span) == (
        f"- [2024-03-01 to 2024-05-01, not yet true] {text}"
    )
    assert line(may, valid_to=april) == f"- [until 2024-04-01, no longer true] {text}"
    assert line(march, valid_to=april) == f"- [until 2024-04-01] {text}"
    # Replaced in full (an update that began before it): an empty interval, true at no time.
    empty = {"valid_from": may, "valid_to": may}
    for at in (april, may, datetime(2024, 6, 1, tzinfo=UTC)):
        assert line(at, **empty) == f"- [2024-05-01, replaced before it began] {text}"


def test_context_dates_are_days_in_the_zone_asked_for(counter: WordPieceBudgetCounter) -> None:
    late = datetime(2024, 7, 31, 23, 30, tzinfo=UTC)  # 00:30 on 1 August in Lisbon
    fact = _fact(1, "The user landed in Lisbon.").model_copy(
        update={"valid_from": late, "valid_to": datetime(2024, 8, 9, 23, 0, tzinfo=UTC)}
    )
    message = Episode(
        id="ep-1", ns="default", content="Just landed!", content_hash="h", role="user",
        occurred_at=late, recorded_at=late,
    )  # fmt: skip
    sent = message.model_copy(
        update={"id": "ep-2", "external_id": "m-7", "session_id": "trip", "speaker": "Ana"}
    )
    hits = [_hit(fact), _hit(message), _hit(sent)]
    at = datetime(2024, 8, 2, tzinfo=UTC)

    def lines(zone: str | None) -> list[str]:
        return build_context([], hits, 10_000, counter, at, time_zone(zone)).text.splitlines()

    assert lines(None) == [
        CONTEXT_HEADER,
        "- [2024-07-31 to 2024-08-09] The user landed in Lisbon. (fact fact-1)",
        "- [2024-07-31] user: Just landed! (episode ep-1)",
        "- [2024-07-31] Ana: Just landed! (episode ep-2, message m-7, session trip)",
    ]
    assert "in UTC," in CONTEXT_HEADER
    assert lines("Europe/Lisbon") == [
        context_header(ZoneInfo("Europe/Lisbon")),
        "- [2024-08-01 to 2024-08-10] The user landed in Lisbon. (fact fact-1)",
        "- [2024-08-01] user: Just landed! (episode ep-1)",
        "- [2024-08-01] Ana: Just landed! (episode ep-2, message m-7, session trip)",
    ]
    assert "in Europe/Lisbon," in lines("Europe/Lisbon")[0]
    assert lines("America/New_York")[1].startswith("- [2024-07-31 to 2024-08-09]")
    assert (
        "in UTC+05:30,"
        in build_context(
            [], hits, 10_000, counter, at, timezone(timedelta(hours=5, minutes=30))
        ).text
    )
    for bad in ("Europe", "Mars/Olympus", "", "x" * 5000, "../../etc/passwd", "localtime"):
        with pytest.raises(InvalidInputError, match="timezone"):
            time_zone(bad)
    for copy in ("Factory", "posix/Europe/Lisbon", "right/UTC", "posixrules", "localtime"):
        with pytest.raises(InvalidInputError, match="names no zone"):
            time_zone(copy)
        try:  # the same file given as a tzinfo, where this machine has it
            zone = ZoneInfo(copy)
        except (KeyError, OSError, ValueError):  # ZoneInfoNotFoundError is a KeyError
            continue
        with pytest.raises(InvalidInputError, match="names no zone"):
            time_zone(zone)
        with zone_file(copy) as handle, pytest.raises(InvalidInputError, match="names no zone"):
            time_zone(ZoneInfo.from_file(handle))
    assert time_zone(ZoneInfo("Asia/Kolkata")) is ZoneInfo("Asia/Kolkata")  # cached per key
    assert time_zone("Etc/GMT-3").utcoffset(None) == timedelta(hours=3)


class _NewlineHeavy:
    """A counter whose newlines cost tokens, so a block counts more than its lines' sum."""

    name = "newline-heavy"

    def __init__(self, inner: WordPieceBudgetCounter) -> None:
        self.inner = inner
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return self.inner.count(text) + 3 * text.count("\n")


def test_the_block_is_counted_whole_and_each_line_once(counter: WordPieceBudgetCounter) -> None:
    hits = [_hit(_fact(i, f"Fact number {i} about the user's garden.")) for i in range(200)]
    heavy = _NewlineHeavy(counter)
    everything = build_context([], hits, 10**9, heavy)
    assert everything.omitted == 0 and len(everything.fact_ids) == 200
    assert heavy.calls <= 200 + 3  # linear: the header, a newline, each line, the block
    for budget in (40, 100, 250, 1000):
        heavy.calls = 0
        block = build_context([], hits, budget, heavy)
        assert heavy.calls <= 200 + 3
        assert block.tokens == heavy.count(block.text) <= budget, budget
        assert block.omitted + len(block.fact_ids) == 200


def test_a_retired_fact_is_labelled_and_never_pinned(counter: WordPieceBudgetCounter) -> None:
    old = _fact(1, "The user works at Google.").model_copy(
        update={"status": "superseded", "superseded_by": "fact-2", "pinned": True}
    )
    block = build_context([], [_hit(old)], 100_000, counter)
    assert block.text.splitlines()[1] == (
        "- [2024-05-01] The user works at Google. (superseded fact fact-1, replaced by fact-2)"
    )


class _Superlinear(_NewlineHeavy):
    """A counter whose whole block costs more than its lines and newlines one by one."""

    def count(self, text: str) -> int:
        self.calls += 1
        return self.inner.count(text) + text.count("\n") ** 2


def test_lines_come_off_the_end_until_the_block_fits(counter: WordPieceBudgetCounter) -> None:
    hits = [_hit(_fact(i, f"Fact number {i} about the user's garden.")) for i in range(30)]
    superlinear = _Superlinear(counter)
    for budget in (60, 200, 600, 2000):
        block = build_context([], hits, budget, superlinear)
        assert block.tokens == superlinear.count(block.text) <= budget, budget
        assert block.omitted + len(block.fact_ids) == 30
        lines = len(block.text.splitlines()) - 1 if block.text else 0
        assert lines == len(block.fact_ids)
    # The estimate admits more than fits, so trimming did the rest.
    everything = build_context([], hits, 10**6, counter)
    trimmed = build_context([], hits, everything.tokens, superlinear)
    assert 0 < len(trimmed.fact_ids) < len(everything.fact_ids) == 30
    assert trimmed.tokens == superlinear.count(trimmed.text) <= everything.tokens
    # A counter that charges even the empty block gets an empty block, not an error.
    assert build_context([], hits, 1, superlinear).text == ""


def zone_file(name: str) -> Any:
    """The zone database file ``name``, open for reading (the system's, else tzdata's)."""
    for root in TZPATH:
        if (path := Path(root) / name).is_file():
            return path.open("rb")
    return importlib.resources.files("tzdata.zoneinfo").joinpath(name).open("rb")


def test_a_fact_line_names_at_most_three_source_messages(
    counter: WordPieceBudgetCounter,
) -> None:
    def source(*external: str | None) -> Provenance:
        messages = tuple(
            SourceMessage(episode_id=f"ep-{n}", external_id=ext) for n, ext in enumerate(external)
        )
        return Provenance(
            episode_ids=tuple(m.episode_id for m in messages),
            external_ids=tuple(ext for ext in external if ext),
            messages=messages,
        )

    many = _hit(_fact(1, "derived from five messages")).model_copy(
        update={"provenance": source("m1", "m2", "m3", "m4", "m5")}
    )
    some_unnamed = _hit(_fact(2, "derived from two messages, one without an id")).model_copy(
        update={"provenance": source("m1", None)}
    )
    own = _hit(_fact(3, "told directly"))
    lines = build_context([], [many, some_unnamed, own], 100_000, counter).text.splitlines()
    assert lines[1].endswith("(fact fact-1, from messages m1, m2, m3 and 2 more)")
    assert lines[2].endswith("(fact fact-2, from episodes ep-0, ep-1)")
    assert lines[3].endswith("(fact fact-3)")


def test_a_derived_fact_is_dated_by_its_first_message(counter: WordPieceBudgetCounter) -> None:
    def sent(*days: int) -> Provenance:
        return Provenance(
            episode_ids=tuple(f"ep-{d}" for d in days),
            messages=tuple(
                SourceMessage(episode_id=f"ep-{d}", occurred_at=datetime(2024, 3, d, tzinfo=UTC))
                for d in days
            ),
        )

    derived = _hit(_fact(1, "derived")).model_copy(update={"provenance": sent(9, 2)})
    since = _fact(2, "true since a day of its own").model_copy(
        update={"valid_from": datetime(2023, 1, 5, tzinfo=UTC)}
    )
    stated = _hit(since).model_copy(update={"provenance": sent(4)})
    later = _hit(_fact(3, "a message dated after the fact was recorded")).model_copy(
        update={"provenance": Provenance(
            episode_ids=("ep-x",),
            messages=(SourceMessage(episode_id="ep-x", occurred_at=NOW + timedelta(days=3)),),
        )}
    )  # fmt: skip
    lines = build_context([], [derived, stated, later], 100_000, counter).text.splitlines()
    assert lines[1].startswith("- [2024-03-02] derived")
    assert lines[2].startswith("- [2023-01-05] true since")
    assert lines[3].startswith(f"- [{NOW:%Y-%m-%d}] a message dated after")
