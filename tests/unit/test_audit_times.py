"""The times an audit accepts (graphmem.core.audit.times.moment)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest

from graphmem.core.audit.times import moment
from graphmem.errors import InvalidInputError

NOW = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2026-03-01", datetime(2026, 3, 1, tzinfo=UTC)),
        (" 2026-03-01 ", datetime(2026, 3, 1, tzinfo=UTC)),
        (date(2026, 3, 1), datetime(2026, 3, 1, tzinfo=UTC)),
        ("2026-03-01T09:00:00Z", datetime(2026, 3, 1, 9, tzinfo=UTC)),
        ("2026-03-01T10:00:00+01:00", datetime(2026, 3, 1, 9, tzinfo=UTC)),
        ("2026-03-01 10:00:00+01:00", datetime(2026, 3, 1, 9, tzinfo=UTC)),
        ("2026-07-01T10:00:00[Europe/Lisbon]", datetime(2026, 7, 1, 9, tzinfo=UTC)),
        (
            datetime(2026, 3, 1, 10, tzinfo=timezone(timedelta(hours=1))),
            datetime(2026, 3, 1, 9, tzinfo=UTC),
        ),
        ("now", NOW),
        ("NOW", NOW),
        ("today", datetime(2026, 3, 10, tzinfo=UTC)),
        ("yesterday", datetime(2026, 3, 9, tzinfo=UTC)),
        ("3 days ago", NOW - timedelta(days=3)),
        ("1 day ago", NOW - timedelta(days=1)),
        ("90 minutes ago", NOW - timedelta(minutes=90)),
        ("2 weeks ago", NOW - timedelta(weeks=2)),
        ("45 seconds ago", NOW - timedelta(seconds=45)),
        ("1 hour ago", NOW - timedelta(hours=1)),
    ],
)
def test_accepted_forms(given: Any, expected: datetime) -> None:
    got = moment("as_of", given, now=NOW)
    assert got == expected and got.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("2026-03-01T09:00:00", "naive"),  # a time of day without a zone
        (datetime(2026, 3, 1, 9), "naive"),
        ("2026-02-30", "not a date"),
        ("soon", "as_of"),
        ("3 months ago", "as_of"),  # months and years vary in length: refused, not guessed
        ("ago", "as_of"),
        ("", "as_of"),
        (5, "must be a time"),
        (None, "must be a time"),
        (True, "must be a time"),
        ("20260301", "as_of"),
    ],
)
def test_refused_forms(given: Any, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says):
        moment("as_of", given, now=NOW)
