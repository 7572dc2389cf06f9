"""Seasons: the calendar, what a season's end decides, and nothing of Discord.

A server's season mode (``/season mode``, the guild setting ``season_mode``):

* ``none`` (the default): all-time boards only;
* ``monthly`` / ``quarterly``: seasons follow the UTC calendar ("2026-12",
  "2026-Q4") and roll over by themselves;
* ``manual``: an admin starts a season with a name and ends it.

The cross-server boards have a global season on the calendar
(:data:`GLOBAL_MODE`, guild 0).  A season is a span of time
(:mod:`app.store`): a game counts in the season whose span holds its end, so
a game that spans a boundary counts in the season it ended in, once.  The
calendar keeps the next season made ahead (:func:`wanted`), so a game that
ends just after a boundary finds its season even before the bot noticed the
boundary (say it was restarting then).
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

MODES = ("none", "monthly", "quarterly", "manual")
CALENDAR = ("monthly", "quarterly")
#: the global season's calendar (cross-server boards)
GLOBAL_MODE = "quarterly"
#: seconds between two looks at the calendar and at the seasons that ended
TICK = 60.0


def _months(mode: str) -> int:
    if mode not in CALENDAR:
        raise ValueError(f"{mode!r} is not a calendar mode; expected one of {CALENDAR}")
    return 1 if mode == "monthly" else 3


def period(mode: str, when: float) -> tuple[str, float, float]:
    """The calendar season holding *when*: ``(name, starts_at, ends_at)``, UTC.

    >>> period("monthly", datetime(2026, 12, 31, 23, 59, tzinfo=timezone.utc).timestamp())[0]
    '2026-12'
    >>> name, start, end = period("quarterly", datetime(2026, 11, 5, tzinfo=timezone.utc).timestamp())
    >>> name, datetime.fromtimestamp(start, timezone.utc).month, datetime.fromtimestamp(end, timezone.utc).year
    ('2026-Q4', 10, 2027)
    """
    months = _months(mode)
    at = datetime.fromtimestamp(when, timezone.utc)
    first = (at.month - 1) // months * months + 1
    start = datetime(at.year, first, 1, tzinfo=timezone.utc)
    year, month = (at.year + 1, 1) if first + months > 12 else (at.year, first + months)
    end = datetime(year, month, 1, tzinfo=timezone.utc)
    name = f"{at.year}-{first:02d}" if months == 1 else f"{at.year}-Q{(first - 1) // 3 + 1}"
    return name, start.timestamp(), end.timestamp()


def wanted(mode: str, now: float) -> list[tuple[str, float, float]]:
    """The calendar seasons that must exist at *now*: the current one and the
    next (made ahead).

    >>> [name for name, _, _ in wanted("monthly", datetime(2026, 12, 4, tzinfo=timezone.utc).timestamp())]
    ['2026-12', '2027-01']
    """
    current = period(mode, now)
    return [current, period(mode, current[2])]


def current(seasons: Sequence[dict[str, Any]], now: float) -> dict[str, Any] | None:
    """The season running at *now* among *seasons* (``starts_at <= now <
    ends_at``, or open), if any."""
    for season in seasons:
        if season["starts_at"] <= now and (season["ends_at"] is None or now < season["ends_at"]):
            return season
    return None


def champions(rows: Sequence[dict[str, Any]]) -> list[int]:
    """Who holds a board's first place (shared first places: all of them).

    >>> champions([{"rank": 1, "user_id": 5}, {"rank": 1, "user_id": 7}, {"rank": 3, "user_id": 2}])
    [5, 7]
    """
    return [row["user_id"] for row in rows if row["rank"] == 1]
