"""IANA time zones by name, for context blocks and for times written with a zone id."""

from __future__ import annotations

from datetime import UTC, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from graphmem._text import brief

#: Files of the zone database that name no zone a reader would know (a copy of the machine's
#: zone, a placeholder, a copy of America/New_York); posix/ and right/ hold copies.
_NO_ZONE = frozenset({"localtime", "Factory", "posixrules"})


@cache
def zone_names() -> frozenset[str]:
    """The IANA zone names this machine knows (its zone database and the tzdata package)."""
    return frozenset(available_timezones()) - _NO_ZONE


def named_zone(name: str) -> tzinfo:
    """The zone an IANA name such as ``Europe/Lisbon`` names (``UTC`` in any case is
    :data:`datetime.UTC`); :class:`ValueError`, with the reason, for any other string."""
    if name.upper() == "UTC":
        return UTC
    if name in _NO_ZONE or name.startswith(("posix/", "right/")):
        raise ValueError(
            f"timezone {brief(name)} names no zone: give an IANA zone name such as 'Europe/Lisbon'"
        )
    unknown = f"unknown timezone {brief(name)}: give an IANA zone name such as 'Europe/Lisbon'"
    if name not in zone_names():
        raise ValueError(unknown)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(unknown) from exc
