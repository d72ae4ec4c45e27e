"""The JSON Lines parsing behind `graphmem ingest`: every line checked, numbered from 1."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.cli.jsonl import parse_message_lines


def test_good_lines_become_messages_in_order() -> None:
    lines = [
        '{"content": "hello", "role": "user", "external_id": "m1"}\n',
        '{"content": "hi there", "role": "assistant", "speaker": "bot",'
        ' "occurred_at": "2026-03-01T09:00:00+01:00", "session_id": "s1",'
        ' "metadata": {"channel": "web"}}\n',
    ]
    parsed = parse_message_lines(lines)
    assert parsed.problems == []
    assert [m.content for m in parsed.messages] == ["hello", "hi there"]
    assert parsed.line_numbers == [1, 2]
    first, second = parsed.messages
    assert first.role == "user" and first.external_id == "m1"
    assert second.speaker == "bot" and second.session_id == "s1"
    assert second.occurred_at == datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
    assert second.metadata == {"channel": "web"}


def test_blank_lines_are_ignored_but_still_counted() -> None:
    parsed = parse_message_lines(
        ["\n", '{"content": "a"}\n', "   \n", "\t\r\n", '{"content": "b"}']
    )
    assert parsed.problems == []
    assert [m.content for m in parsed.messages] == ["a", "b"]
    assert parsed.line_numbers == [2, 5]


def test_empty_input_has_nothing() -> None:
    parsed = parse_message_lines([])
    assert parsed.messages == [] and parsed.problems == []


def test_bad_json_is_reported_with_its_line_number() -> None:
    parsed = parse_message_lines(['{"content": "ok"}\n', '{"content": \n', '{"content": "ok 2"}'])
    assert [m.content for m in parsed.messages] == ["ok", "ok 2"]
    assert len(parsed.problems) == 1
    number, reason = parsed.problems[0]
    assert number == 2
    assert reason.startswith("invalid JSON")


def test_json_that_is_not_an_object_is_refused() -> None:
    parsed = parse_message_lines(['"just text"', "[1, 2]", "42", "null", "true"])
    assert parsed.messages == []
    assert [n for n, _ in parsed.problems] == [1, 2, 3, 4, 5]
    reasons = [why for _, why in parsed.problems]
    assert all("expected a JSON object" in why for why in reasons)
    assert "a string" in reasons[0] and "an array" in reasons[1] and "null" in reasons[3]


def test_missing_content_is_refused() -> None:
    parsed = parse_message_lines(['{"role": "user"}'])
    assert parsed.messages == []
    assert parsed.problems == [(1, "content: Field required")]


def test_a_null_role_is_the_default_role_and_other_roles_are_still_checked() -> None:
    parsed = parse_message_lines(
        ['{"content": "a", "role": null, "speaker": null}', '{"content": "b", "role": " "}']
    )
    assert [(m.content, m.role, m.speaker) for m in parsed.messages] == [("a", "user", None)]
    assert [n for n, _ in parsed.problems] == [2] and "role" in parsed.problems[0][1]


def test_empty_content_and_unknown_fields_are_refused() -> None:
    parsed = parse_message_lines(['{"content": "   "}', '{"content": "x", "colour": "red"}'])
    assert [n for n, _ in parsed.problems] == [1, 2]
    assert "empty" in parsed.problems[0][1]
    assert "colour" in parsed.problems[1][1]


def test_a_naive_datetime_is_refused() -> None:
    lines = [
        '{"content": "fine", "occurred_at": "2026-03-01T09:00:00Z"}',
        '{"content": "naive", "occurred_at": "2026-03-01T09:00:00"}',
    ]
    parsed = parse_message_lines(lines)
    assert [m.content for m in parsed.messages] == ["fine"]
    assert len(parsed.problems) == 1
    number, reason = parsed.problems[0]
    assert number == 2
    assert "occurred_at" in reason and "naive datetime" in reason


def test_line_numbers_count_every_line_including_blank_and_bad_ones() -> None:
    text = (
        '{"content": "one"}\n'
        "\n"
        "not json\n"
        '{"content": "four"}\n'
        "\n"
        '{"role": "user"}\n'
        '{"content": "seven", "occurred_at": "2026-01-01T00:00:00"}\n'
        '{"content": "eight"}\n'
    )
    parsed = parse_message_lines(text.splitlines(keepends=True))
    assert [m.content for m in parsed.messages] == ["one", "four", "eight"]
    assert parsed.line_numbers == [1, 4, 8]
    assert [n for n, _ in parsed.problems] == [3, 6, 7]


def test_a_byte_order_mark_on_the_first_line_is_ignored() -> None:
    parsed = parse_message_lines(['\ufeff{"content": "with bom"}\n'])
    assert parsed.problems == []
    assert parsed.messages[0].content == "with bom"


def test_lines_as_bytes_are_decoded_as_utf8() -> None:
    parsed = parse_message_lines(
        ['\ufeff{"content": "naïve"}\n'.encode(), b'{"content": "\xfe"}\n', b'{"content": "ok"}']
    )
    assert [m.content for m in parsed.messages] == ["naïve", "ok"]
    assert parsed.problems == [(2, "not valid UTF-8 (byte 14 of the line)")]


def test_an_error_at_the_end_of_a_line_names_its_column() -> None:
    parsed = parse_message_lines([b'{"content": "oops",\r\n'])
    assert parsed.problems == [
        (1, "invalid JSON: Expecting property name enclosed in double quotes (column 20)")
    ]


def test_numbers_are_not_read_as_unix_time_and_text_must_be_unicode() -> None:
    parsed = parse_message_lines(
        [
            '{"content": "a", "occurred_at": 20250101}',
            '{"content": "b", "occurred_at": "1700000000"}',
            '{"content": "lone \\udc80 surrogate"}',
            '{"content": "c", "session_id": "  "}',
        ]
    )
    assert parsed.messages == []
    reasons = dict(parsed.problems)
    assert "ISO-8601" in reasons[1] and "ISO-8601" in reasons[2]
    assert "lone surrogate" in reasons[3] and "no visible character" in reasons[4]


def test_json_the_parser_cannot_read_is_a_bad_line() -> None:
    lines = [
        '{"content": "deep", "metadata": ' + '{"a": ' * 5000 + "1" + "}" * 5001,
        '{"content": "long number", "metadata": {"n": ' + "7" * 5000 + "}}",
        '{"content": "fine"}',
    ]
    parsed = parse_message_lines(lines)
    assert [m.content for m in parsed.messages] == ["fine"]
    assert [n for n, _ in parsed.problems] == [1, 2]
    assert "nested too deeply" in parsed.problems[0][1]
    assert parsed.problems[1][1].startswith("invalid JSON:")


def test_a_field_name_is_shown_on_one_safe_line() -> None:
    key = "evil\nkey\x1b[31m" + "k" * 500
    parsed = parse_message_lines(
        ['{"content": "x", "' + key.replace("\x1b", "\\u001b").replace("\n", "\\n") + '": 1}']
    )
    ((number, reason),) = parsed.problems
    assert number == 1 and "\n" not in reason and "\x1b" not in reason
    assert len(reason) < 300 and "extra" in reason.lower()


def test_a_number_is_not_a_time() -> None:
    for value in (".5", "-.5", "+.5", "1e9", "20250101", " 7 "):
        parsed = parse_message_lines(['{"content": "x", "occurred_at": "' + value + '"}'])
        assert parsed.messages == [], value
        assert "ISO-8601" in parsed.problems[0][1], value


def test_a_time_may_end_in_a_zone_id_as_neo4j_writes_it() -> None:
    cases = {
        "2026-07-15T10:00:00[Europe/Lisbon]": datetime(2026, 7, 15, 9, tzinfo=UTC),
        "2026-07-15T10:00:00+01:00[Europe/Lisbon]": datetime(2026, 7, 15, 9, tzinfo=UTC),
        "2026-01-15T10:00:00Z[Europe/Lisbon]": datetime(2026, 1, 15, 10, tzinfo=UTC),
        "2026-07-15T10:00:00[utc]": datetime(2026, 7, 15, 10, tzinfo=UTC),
        # In the spring gap, moved on by the gap; in the autumn overlap, the earlier instant.
        "2026-03-29T01:30:00[Europe/Lisbon]": datetime(2026, 3, 29, 1, 30, tzinfo=UTC),
        "2026-10-25T01:30:00[Europe/Lisbon]": datetime(2026, 10, 25, 0, 30, tzinfo=UTC),
    }
    for text, instant in cases.items():
        parsed = parse_message_lines(['{"content": "x", "occurred_at": "' + text + '"}'])
        assert parsed.problems == [], text
        assert parsed.messages[0].occurred_at == instant, text
    refused = {
        "2026-07-15T10:00:00Z[Europe/Lisbon]": "Europe/Lisbon was +01:00 at that time",
        "2026-07-15T10:00:00+05:30[Europe/Lisbon]": "is not the zone's",
        "2026-07-15T10:00:00[Nowhere/Land]": "unknown timezone 'Nowhere/Land'",
        "2026-07-15T10:00:00[localtime]": "names no zone",
        "20260715[UTC]": "ISO-8601 time before its zone id",
        "2026-07-15T10:00:00[UTC][UTC]": "occurred_at",
    }
    for text, reason in refused.items():
        parsed = parse_message_lines(['{"content": "x", "occurred_at": "' + text + '"}'])
        assert parsed.messages == [], text
        assert reason in parsed.problems[0][1], (text, parsed.problems)


def test_a_key_named_twice_is_a_bad_line_at_any_depth() -> None:
    parsed = parse_message_lines(
        [
            '{"content": "first", "content": "second"}',
            '{"content": "ok", "metadata": {"a": {"b": 1, "b": 2}}}',
            '{"content": "fine", "metadata": {"a": {"b": 1}, "b": 2}}',
        ]
    )
    assert [m.content for m in parsed.messages] == ["fine"]
    assert [n for n, _ in parsed.problems] == [1, 2]
    for _, reason in parsed.problems:
        assert reason.startswith("invalid JSON: the key ") and "appears twice" in reason
    assert "'content'" in parsed.problems[0][1] and "'b'" in parsed.problems[1][1]
