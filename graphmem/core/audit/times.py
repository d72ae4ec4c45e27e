"""Times an audit accepts: ISO 8601 with a zone, a date alone, and a few friendly forms.

- a ``datetime`` with a zone, or ISO-8601 text with an offset or a zone id
  (``2026-03-01T09:00:00+01:00``, ``2026-03-01T09:00:00[Europe/Lisbon]``);
- a date alone (``2026-03-01``): the start of that day in UTC;
- ``now``, ``today`` and ``yesterday`` (the start of the day, UTC);
- ``N seconds|minutes|hours|days|weeks ago`` (``3 days ago``, ``1 hour ago``).

A time of day without a zone (``2026-03-01T09:00:00``) is refused: read in the machine's
local zone it would answer for the wrong hours.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from graphmem._text import brief
from graphmem.core.checks import aware
from graphmem.errors import InvalidInputError

_AGO = re.compile(r"(\d{1,6})\s*(second|minute|hour|day|week)s?\s+ago")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}

#: How the accepted forms are described in errors and help texts.
TIME_FORMS = (
    "an ISO-8601 time with a zone ('2026-03-01T09:00:00Z'), a date ('2026-03-01', midnight "
    "UTC), 'now', 'today', 'yesterday' or 'N minutes|hours|days|weeks ago'"
)


def moment(name: str, value: Any, *, now: datetime | None = None) -> datetime:
    """``value`` as a time in UTC (see the module's forms); :class:`InvalidInputError` naming
    ``name`` otherwise. ``now`` is the clock the relative forms count from."""
    if isinstance(value, datetime):
        checked = aware(name, value)
        assert checked is not None
        return checked
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a time: {TIME_FORMS}; got {brief(value)}")
    text = value.strip().lower()
    clock = now or datetime.now(UTC)
    today = clock.replace(hour=0, minute=0, second=0, microsecond=0)
    if text == "now":
        return clock
    if text == "today":
        return today
    if text == "yesterday":
        return today - timedelta(days=1)
    ago = _AGO.fullmatch(text)
    if ago is not None:
        try:
            return clock - timedelta(seconds=int(ago.group(1)) * _UNITS[ago.group(2)])
        except OverflowError:
            raise InvalidInputError(f"{name}: {brief(value)} lies before the year 1") from None
    if _DATE.fullmatch(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise InvalidInputError(f"{name}: {brief(value)} is not a date") from None
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    try:
        checked = aware(name, value.strip())
    except InvalidInputError as exc:
        raise InvalidInputError(f"{exc} (a time is {TIME_FORMS})") from None
    assert checked is not None
    return checked
