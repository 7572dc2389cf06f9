"""A night's start time as a person types it: a Discord timestamp pasted from
a timestamp generator (``<t:1796500000:F>``), a Unix time (``1796500000``), or
a date and time with its offset from UTC (``2026-12-05 20:00+01:00``,
``2026-12-05T19:00Z``, ``2026-12-05 20:00 UTC+1``).  A date and time without
an offset is refused: the bot never guesses a time zone (the same words mean
a different moment in every zone).  Pure: the caller gives the text, gets the
moment (seconds since the epoch) or a :class:`~app.nights.night.NightError`.
"""
from __future__ import annotations

import datetime
import re

from app.nights.night import NightError

#: a Discord timestamp, ``<t:seconds>`` or ``<t:seconds:style>``, anywhere in what was pasted
_DISCORD = re.compile(r"<t:(-?\d{1,13})(?::[a-zA-Z])?>")
_UNIX = re.compile(r"\d{9,13}")
_WRITTEN = re.compile(
    r"(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})(?:T|\s+|,\s*)(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.\d+)?)?"
    r"\s*(?P<zone>Z|UTC|GMT)?\s*(?:(?P<sign>[+-−])(?P<oh>\d{1,2})(?::?(?P<om>\d{2}))?)?",
    re.IGNORECASE)
MAX_OFFSET = 14 * 3600  # the furthest any zone of the world is from UTC (Kiribati: +14:00)


def parse_start(text: str) -> float:
    """The moment ``text`` names, in seconds since the epoch.

    >>> parse_start("<t:1796500000:F>"), parse_start(" <t:1796500000> "), parse_start("1796500000")
    (1796500000.0, 1796500000.0, 1796500000.0)
    >>> parse_start("1796500000000")  # milliseconds, as JavaScript's generators give it
    1796500000.0
    >>> a = parse_start("2026-12-05 20:00+01:00")
    >>> a == parse_start("2026-12-05T19:00Z") == parse_start("2026-12-05 20:00 UTC+1") == parse_start("2026-12-5 14:00-05")
    True
    >>> datetime.datetime.fromtimestamp(a, datetime.timezone.utc).isoformat()
    '2026-12-05T19:00:00+00:00'
    >>> parse_start("2026-12-05 20:00")
    Traceback (most recent call last):
    app.nights.night.NightError: time_no_offset
    >>> parse_start("tomorrow at 8")
    Traceback (most recent call last):
    app.nights.night.NightError: time_unreadable
    """
    text = text.strip()
    stamp = _DISCORD.search(text)
    if stamp is not None:
        return float(int(stamp[1]))
    if _UNIX.fullmatch(text):
        value = int(text)
        return float(value // 1000 if len(text) == 13 else value)
    written = _WRITTEN.fullmatch(text)
    if written is None:
        raise NightError("time_unreadable")
    try:
        naive = datetime.datetime(int(written["y"]), int(written["mo"]), int(written["d"]), int(written["h"]),
                                  int(written["mi"]), int(written["s"] or 0))
    except ValueError:  # the 31st of November, 25 o'clock
        raise NightError("time_unreadable") from None
    if written["zone"] is None and written["sign"] is None:
        raise NightError("time_no_offset", written=naive.strftime("%Y-%m-%d %H:%M"),
                         example=naive.strftime("%Y-%m-%d %H:%M") + "+01:00")
    offset = 0
    if written["sign"] is not None:
        offset = int(written["oh"]) * 3600 + int(written["om"] or 0) * 60
        if written["sign"] != "+":
            offset = -offset
    if abs(offset) > MAX_OFFSET:
        raise NightError("time_unreadable")
    zone = datetime.timezone(datetime.timedelta(seconds=offset))
    return naive.replace(tzinfo=zone).timestamp()
