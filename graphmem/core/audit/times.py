"""Times graphmem accepts, in audits as in every other time argument (the forms are parsed
once, in :mod:`graphmem.models.fields`): ISO 8601 with a zone, a date alone, and a few
friendly forms.

- a ``datetime`` with a zone, or ISO-8601 text with an offset or a zone id
  (``2026-03-01T09:00:00+01:00``, ``2026-03-01T09:00:00[Europe/Lisbon]``);
- a date alone (``2026-03-01``): the start of that day in UTC;
- ``now``, ``today`` and ``yesterday`` (the start of the day, UTC);
- ``N seconds|minutes|hours|days|weeks ago`` (``3 days ago``, ``1 hour ago``).

A time of day without a zone (``2026-03-01T09:00:00``) is refused: read in the machine's
local zone it would answer for the wrong hours.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from graphmem._text import brief
from graphmem.core.checks import aware
from graphmem.errors import InvalidInputError
from graphmem.models.fields import TIME_FORMS, friendly_time


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
    try:
        friendly = friendly_time(value, now)
    except ValueError as exc:
        raise InvalidInputError(f"{name}: {exc}") from None
    if friendly is not None:
        return friendly
    try:
        checked = aware(name, value.strip())
    except InvalidInputError as exc:
        raise InvalidInputError(f"{exc} (a time is {TIME_FORMS})") from None
    assert checked is not None
    return checked
