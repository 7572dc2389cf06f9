"""The game registry: one :class:`~core.spec.GameSpec` per game the bot hosts.

Everything above the engines that needs to know which games exist reads this
module: bot.py (engines, computer players), the table manager (seat limits,
option ranges and defaults, simultaneous turns, the event of a new deal),
command choices and custom_id patterns, the store (stable game codes, the
counters each game declares), the rules pages and the profile card.  The
games themselves are the packages of :mod:`core.games`, each declaring its
own spec; this module only collects them (see docs/adding-a-game.md).

    >>> first = GAMES[0]
    >>> spec(first.key) is first, by_code(first.code) is first
    (True, True)
    >>> all(s.min_seats <= s.default_seats <= s.max_seats for s in GAMES)
    True
"""
from __future__ import annotations

from core.games import GAMES
from core.spec import GameSpec, OptionSpec, StatSpec

__all__ = ["GAMES", "KEYS", "KEY_PATTERN", "MIN_GAMES", "GameSpec", "OptionSpec", "StatSpec", "spec", "by_code"]

#: players with fewer finished games are left off the rating and win-rate boards
MIN_GAMES = 5

_BY_KEY = {s.key: s for s in GAMES}
_BY_CODE = {s.code: s for s in GAMES}
assert len(_BY_KEY) == len(_BY_CODE) == len(GAMES), "game keys and codes must be unique"

KEYS: tuple[str, ...] = tuple(s.key for s in GAMES)
#: the custom_id fragment that matches any game key
KEY_PATTERN = "|".join(KEYS)


def spec(key: str) -> GameSpec:
    """The spec of a game key; ValueError for an unknown one.

    >>> spec("chess")
    Traceback (most recent call last):
    ...
    ValueError: unknown game 'chess'
    """
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ValueError(f"unknown game {key!r}") from None


def by_code(code: int) -> GameSpec:
    return _BY_CODE[code]
