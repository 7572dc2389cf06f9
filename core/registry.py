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

_BY_KEY: dict[str, GameSpec] = {}
_BY_CODE: dict[int, GameSpec] = {}
KEYS: tuple[str, ...] = ()
#: the custom_id fragment that matches any game key
KEY_PATTERN = ""


def use(games: tuple[GameSpec, ...]) -> None:
    """Host exactly ``games``: :data:`core.games.GAMES` at import, or a test
    registry (a game that lives only in the tests: docs/adding-a-game.md).  Modules read the registry when
    they are imported (the store's game codes, custom_id patterns, command
    choices), so a test registry is set up before anything else imports them."""
    global GAMES, KEYS, KEY_PATTERN, _BY_KEY, _BY_CODE
    by_key = {s.key: s for s in games}
    by_code = {s.code: s for s in games}
    if not len(by_key) == len(by_code) == len(games):
        raise ValueError("game keys and codes must be unique")
    GAMES, _BY_KEY, _BY_CODE = tuple(games), by_key, by_code
    KEYS = tuple(s.key for s in games)
    KEY_PATTERN = "|".join(KEYS)


use(GAMES)


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
