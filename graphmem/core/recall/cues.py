"""What a question says beyond its topic, which recall can weigh: the time it is about, and
whether it is about the user.

* **Time.** A question such as "what did I say yesterday?", "what did we decide last week?",
  "what happened on March 3?" or "what did she tell me 3 days ago?" names a period. The
  messages sent in it (``occurred_at``) and the facts true in it are raised by
  ``time_weight``: a soft boost, never a filter, since a date in a question may as well be a
  date the conversation talked about ("what do I have on March 3?" asked of a message sent in
  February). A fact is true in a period when its valid time (``valid_from`` to ``valid_to``,
  as believed at ``as_of``) overlaps it; a fact with no valid time (both ends open) counts
  by when it was recorded instead. Periods are read from English words: *today*,
  *yesterday*, *N days/weeks/months ago*, *this/last week*, *this/last month*, *this/last
  year*, weekday names (*on Monday*, *last Tuesday*: the latest such day before the
  question), month names (*in March*, the latest March up to the question) and dates (*March
  3*, *3 March*, *March 3, 2024*, *2024-03-03*). Relative periods count from the question's
  time (``as_of``, or now), in UTC.
* **What was true then.** Recall returns the believed fact for a superseded one the search
  found ("via supersession"). When the question names a period that such a superseded fact
  was true in and the fact that replaced it was not ("where did I work in March?" after a
  change of job in May), the superseded fact is a hit itself as well, raised as above: the
  period acts as a soft ``valid_at``. The fact that replaced it stays a hit too.
* **The user.** A question in the first person ("what is my sister's name?", "where did I
  say I live?") is about the user, and what the user said about themselves answers it more
  often than what an assistant said back. The user's messages (role ``user``) are raised by
  ``user_weight`` then; the assistant's still rank, so an answer only the assistant gave is
  not lost.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from graphmem.core.recall.ranking import Candidate

#: Month numbers by the first three letters of the month's English name.
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" + (
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "couple of": 2,
    "few": 3,
}

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\.?\s+{_DAY}\b(?:,?\s+{_YEAR})?", re.IGNORECASE)
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b(?:,?\s+{_YEAR})?", re.IGNORECASE)
# A month alone only after "in" or "during" ("in March"), where it cannot be a verb.
_IN_MONTH = re.compile(rf"\b(?:in|during)\s+{_MONTH}\b(?:\s+{_YEAR})?", re.IGNORECASE)
_AGO = re.compile(
    r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)\s+"
    r"(day|week|month|year)s?\s+ago\b",
    re.IGNORECASE,
)
_RELATIVE = re.compile(
    r"\b(today|tonight|this morning|this afternoon|this evening|yesterday|last night|"
    r"(?:this|last|past|previous)\s+(?:week|month|year)|(?:last|on|this)\s+"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(i|me|my|mine|myself|i'm|i've|i'd|i'll)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Period:
    """A stretch of time a question names: from ``start`` (inclusive) to ``end`` (exclusive)."""

    start: datetime
    end: datetime

    def holds(self, when: datetime) -> bool:
        return self.start <= when < self.end

    def overlaps(self, start: datetime | None, end: datetime | None) -> bool:
        """Whether the interval [``start``, ``end``) (None: open) shares a moment with it."""
        return (start is None or start < self.end) and (end is None or end > self.start)


def _moment(epoch_ms: int | None) -> datetime | None:
    return None if epoch_ms is None else datetime.fromtimestamp(epoch_ms / 1000, UTC)


def valid_time(
    valid: Mapping[str, int | None] | None,
) -> tuple[datetime | None, datetime | None] | None:
    """A fact's valid time from a recall brief's ``valid`` (``fact_valid_time``: ``from`` and
    ``to`` in epoch ms, None for an open end); None when it has none (both ends open)."""
    if not valid or (valid.get("from") is None and valid.get("to") is None):
        return None
    return _moment(valid.get("from")), _moment(valid.get("to"))


def _day(d: date) -> Period:
    start = datetime(d.year, d.month, d.day, tzinfo=UTC)
    return Period(start, start + timedelta(days=1))


def _month(year: int, month: int) -> Period:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Period(start, end)


def _latest_month(month: int, now: datetime) -> Period:
    """The latest ``month`` that began at or before ``now``."""
    return _month(now.year if month <= now.month else now.year - 1, month)


def _dated(year: str | None, month: int, day: int, now: datetime) -> Period | None:
    """The day ``month``/``day`` of ``year``, or without a year the latest one up to ``now``."""
    try:
        if year is not None:
            return _day(date(int(year), month, day))
        found = date(now.year, month, day)
        if found > now.date():
            found = date(now.year - 1, month, day)
        return _day(found)
    except ValueError:  # "February 30"
        return None


def _relative(phrase: str, now: datetime) -> Period:
    words = phrase.lower().split()
    today = now.date()
    if words[-1] in _WEEKDAYS:
        back = (today.weekday() - _WEEKDAYS[words[-1]]) % 7 or 7
        return _day(today - timedelta(days=back))
    if words[0] == "yesterday" or words == ["last", "night"]:
        return _day(today - timedelta(days=1))
    if words[0] == "past":  # the past week, month or year: the days up to now
        return Period(now - timedelta(days=_UNITS[words[-1]]), now + timedelta(seconds=1))
    if words[-1] == "week":
        monday = datetime.combine(today - timedelta(days=today.weekday()), datetime.min.time(), UTC)
        if words[0] == "this":
            return Period(monday, monday + timedelta(days=7))
        return Period(monday - timedelta(days=7), monday)
    if words[-1] == "month":
        if words[0] == "this":
            return _month(today.year, today.month)
        first = date(today.year, today.month, 1) - timedelta(days=1)
        return _month(first.year, first.month)
    if words[-1] == "year":
        year = today.year if words[0] == "this" else today.year - 1
        return Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
    return _day(today)  # today, tonight, this morning, ...


def _ago(amount: str, unit: str, now: datetime) -> Period:
    count = int(amount) if amount.isdigit() else _NUMBERS[amount.lower()]
    days = min(count * _UNITS[unit.lower()], 36_500)
    centre = now - timedelta(days=days)
    # "3 days ago" is about that day; "2 weeks ago" about a week or so around then.
    spread = timedelta(days=max(1, days // 7))
    return Period(centre - spread, centre + spread)


def periods(question: str, now: datetime) -> tuple[Period, ...]:
    """The periods ``question`` names, counted back from ``now``."""
    now = now.astimezone(UTC)
    found: list[Period | None] = []
    for m in _ISO.finditer(question):
        month = int(m.group(2))
        found.append(_dated(m.group(1), month, int(m.group(3)), now) if 1 <= month <= 12 else None)
    for m in _MONTH_DAY.finditer(question):
        found.append(_dated(m.group(3), _MONTHS[m.group(1).lower()[:3]], int(m.group(2)), now))
    for m in _DAY_MONTH.finditer(question):
        found.append(_dated(m.group(3), _MONTHS[m.group(2).lower()[:3]], int(m.group(1)), now))
    for m in _IN_MONTH.finditer(question):
        month = _MONTHS[m.group(1).lower()[:3]]
        found.append(_month(int(m.group(2)), month) if m.group(2) else _latest_month(month, now))
    found.extend(_ago(m.group(1), m.group(2), now) for m in _AGO.finditer(question))
    found.extend(_relative(m.group(1), now) for m in _RELATIVE.finditer(question))
    return tuple(dict.fromkeys(p for p in found if p is not None))


def names_period(question: str, now: datetime, time_weight: float) -> bool:
    """Whether ``question`` names a period that recall weighs (``time_weight`` above 0): then
    the search keeps the superseded facts it finds beside the facts that replaced them, for
    :meth:`Cues.with_past_facts`."""
    return time_weight > 0 and bool(periods(question, now))


def about_the_user(question: str) -> bool:
    """Whether ``question`` is in the first person: about the user who asks it."""
    return _FIRST_PERSON.search(question) is not None


@dataclass(frozen=True)
class Cues:
    """What one question says about the hits it wants, read once per recall."""

    periods: tuple[Period, ...] = ()
    about_user: bool = False

    @classmethod
    def read(cls, question: str, now: datetime) -> Cues:
        return cls(periods(question, now), about_the_user(question))

    def in_period(
        self, when: datetime | None, valid: Mapping[str, int | None] | None = None
    ) -> bool:
        """Whether a hit falls in a period the question names: a fact with a valid time
        (``valid``, as :func:`valid_time` reads it) when that overlaps the period, anything
        else when it was sent or recorded (``when``) in it."""
        span = valid_time(valid)
        if span is not None:
            return any(p.overlaps(*span) for p in self.periods)
        return when is not None and any(p.holds(when) for p in self.periods)

    def factor(
        self,
        when: datetime | None,
        role: str | None,
        valid: Mapping[str, int | None] | None = None,
        /,
        *,
        time_weight: float,
        user_weight: float,
    ) -> float:
        """What a hit's score is multiplied by: ``1 + time_weight`` when it falls in a period
        the question names (:meth:`in_period`: by its valid time ``valid`` when it is a fact
        that has one, else by ``when``), times ``1 + user_weight`` for a user's message when
        the question is about the user."""
        factor = 1.0
        if time_weight and self.in_period(when, valid):
            factor *= 1.0 + time_weight
        if user_weight and self.about_user and role == "user":
            factor *= 1.0 + user_weight
        return factor

    def with_past_facts(
        self,
        fused: Sequence[Candidate],
        through: Mapping[str, Sequence[str]],
        briefs: Mapping[str, Mapping[str, Any]],
        head_valid: Mapping[str, Mapping[str, int | None] | None],
        *,
        time_weight: float,
    ) -> list[Candidate]:
        """``fused`` with, before each fact that replaced superseded facts the search found
        (``through``: the fact's id -> theirs), a candidate of its own for each of those that
        was true in a period the question names while the fact that replaced it was not (its
        valid time read from its brief in ``briefs``, else from ``head_valid``). Recall reads
        such a fact itself (see :func:`past_facts`); it shares the fused score of the fact
        that stood for it. Nothing changes without a period or a ``time_weight``."""
        if not self.periods or not time_weight or not through:
            return list(fused)
        out: list[Candidate] = []
        for cand in fused:
            olds = through.get(cand.id, ()) if cand.kind == "fact" else ()
            head = briefs.get(cand.id)
            own = head["valid"] if head is not None else head_valid.get(cand.id)
            if olds and not self.in_period(_moment(head["at"]) if head else None, own):
                out.extend(
                    replace(cand, id=old, matched=None)
                    for old in olds
                    if (brief := briefs.get(old)) is not None
                    and brief.get("status") == "superseded"
                    and valid_time(brief.get("valid")) is not None
                    and self.in_period(None, brief.get("valid"))
                )
            out.append(cand)
        return out


def past_facts(facts: Sequence[str], through: Mapping[str, Sequence[str]]) -> list[str]:
    """Which of ``facts`` (the ids of the candidates kept) are superseded facts a candidate
    of their own stands for (:meth:`Cues.with_past_facts`): recall reads those themselves."""
    replaced = {old for olds in through.values() for old in olds}
    return [i for i in facts if i in replaced]
