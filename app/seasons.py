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

At a boundary every server on a calendar rolls at once: the seasons are
made (:func:`make_all`) and the ended ones closed (:func:`close_ended`)
:data:`ROLL_BATCH` at a time, one transaction each, the event loop free
between batches.  A stop between batches (a restart) leaves the rest to the
next look, which finds what is made by name and what is closed by its meta.
"""
from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, Sequence

from app.store.base import SeasonPlan

if TYPE_CHECKING:
    from app.store.api import Store

MODES = ("none", "monthly", "quarterly", "manual")
CALENDAR = ("monthly", "quarterly")
#: the global season's calendar (cross-server boards)
GLOBAL_MODE = "quarterly"
#: seconds between two looks at the calendar and at the seasons that ended
TICK = 60.0
#: seasons made, or closed, per transaction at a boundary: a click waits for
#: one batch at most, never for the whole rollover of every server
ROLL_BATCH = 250


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


def calendar_plans(modes: Mapping[int, str], now: float) -> list[SeasonPlan]:
    """The seasons the calendar wants at *now* for each guild of *modes*
    (guild id -> calendar mode; 0: the global season): the current one,
    counted from *now* on when it is made late (the mode was just chosen),
    and the next, made ahead.

    >>> [(p.name, p.starts_at) for p in calendar_plans({5: "monthly"}, datetime(2026, 12, 4, tzinfo=timezone.utc).timestamp())]
    [('2026-12', 1796342400.0), ('2027-01', 1798761600.0)]
    """
    return [SeasonPlan(guild_id, name, max(start, now) if i == 0 else start, end)
            for guild_id, mode in modes.items() for i, (name, start, end) in enumerate(wanted(mode, now))]


def started_by_change(plans: Sequence[SeasonPlan], seasons: Sequence[dict[str, Any]]) -> list[SeasonPlan]:
    """*plans* (:func:`calendar_plans` of one guild at a change of its mode)
    with the current season under a name the guild has not used: a season
    of that name was there already (the mode went away and came back within
    the period, and its season ended with the first change), so the plan
    would find it by name, ended, and no season would run until the next
    period.  The name takes the first free number instead (*seasons*: the
    guild's, as :meth:`app.store.api.Store.seasons` lists them).

    >>> plans = [SeasonPlan(5, "2026-12", 10.0, 20.0), SeasonPlan(5, "2027-01", 20.0, 30.0)]
    >>> [p.name for p in started_by_change(plans, [{"name": "2026-12"}, {"name": "2026-12 (2)"}])]
    ['2026-12 (3)', '2027-01']
    >>> started_by_change(plans, []) == plans
    True
    """
    if not plans:
        return []
    taken = {season["name"].casefold() for season in seasons}
    first, name, number = plans[0], plans[0].name, 1
    while name.casefold() in taken:
        number += 1
        name = f"{first.name} ({number})"
    return [first._replace(name=name), *plans[1:]]


async def make_all(store: Store, plans: Sequence[SeasonPlan], batch: int = ROLL_BATCH) -> list[int | None]:
    """Make the seasons of *plans* not made yet, *batch* plans per
    transaction; each plan's season id (None: it overlaps another season of
    its guild, see :meth:`app.store.api.Store.make_seasons`)."""
    made: list[int | None] = []
    for i in range(0, len(plans), batch):
        made += await store.make_seasons(plans[i:i + batch])
        await asyncio.sleep(0)  # what waits (a click) runs between two batches
    return made


async def close_ended(store: Store, now: float,
                      close: Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]],
                      batch: int = ROLL_BATCH) -> int:
    """Close every season ended by *now* and not closed yet, oldest first.

    ``close(season)`` tells a season's end (its final standings, its
    champions) and returns what to keep in its meta (None: not this
    process's to close: left alone); up to *batch* seasons are saved closed
    per transaction, a guild's seasons in different ones (a guild's next
    season is told with the one before it closed: its champions lose the
    role).  A stop in the middle loses nothing: the seasons of the batch
    that was being told are told again at the next look (a post carries
    the season's nonce: Discord shows it once).  Returns how many were
    closed."""
    closed = 0
    metas: dict[int, dict[str, Any]] = {}
    told: set[int] = set()  # the guilds of the batch being told

    async def save() -> None:
        nonlocal closed
        await store.set_seasons_meta(metas)
        closed += len(metas)
        metas.clear()
        told.clear()
        await asyncio.sleep(0)  # what waits (a click) runs between two batches

    for season in await store.seasons_ended(now):
        if len(told) >= batch or season["guild_id"] in told:
            await save()
        told.add(season["guild_id"])
        meta = await close(season)
        if meta is not None:
            metas[season["id"]] = {**season["meta"], **meta, "closed": True}
    if told:
        await save()
    return closed


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
