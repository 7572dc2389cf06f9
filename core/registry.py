"""The game registry: one :class:`GameSpec` per game the bot hosts.

Everything above the engines that needs to know which games exist reads this
module: bot.py (engines, computer players, cogs), the table manager (seat
limits, option ranges and defaults, simultaneous turns, the event of a new
deal), command choices and custom_id patterns, the store (stable game codes,
the counters each game declares), the rules pages and the profile card.
Adding a game is one engine, one cog and one line in :data:`GAMES`.

    >>> [s.key for s in GAMES]
    ['nimmt', 'garbage', 'take6']
    >>> spec("take6").max_seats, spec("take6").simultaneous
    (10, True)
    >>> by_code(1).key
    'garbage'
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

#: players with fewer finished games are left off the rating and win-rate boards
MIN_GAMES = 5


@dataclass(frozen=True)
class OptionSpec:
    """A table option chosen when a table is created (``/<game> new``).

    ``default`` None means "the engine decides" (e.g. one round per player);
    ``at_most_seats`` caps the chosen value by the players who sat down.
    """

    name: str
    minimum: int
    maximum: int
    default: int | None = None
    at_most_seats: bool = False
    label_key: str = ""  # lobby line, placeholders {value}; "" = not shown
    default_key: str = ""  # lobby line when the value is the default (None)

    def check(self, value: Any) -> int | None:
        """The option's value, validated (None stays None).

        >>> OptionSpec("rounds", 1, 7).check(3)
        3
        >>> OptionSpec("rounds", 1, 7).check(9)
        Traceback (most recent call last):
        ...
        ValueError: option rounds must be 1..7
        """
        if value is None:
            return self.default
        value = int(value)
        if not self.minimum <= value <= self.maximum:
            raise ValueError(f"option {self.name} must be {self.minimum}..{self.maximum}")
        return value


@dataclass(frozen=True)
class StatSpec:
    """A figure the profile card and /stats show for a game.

    ``kind`` "count": the counter ``key`` summed over games; "average":
    the summed game scores divided by the counter ``per`` (e.g. penalty
    points per round).  ``label_key``: the profile card's label, a key of
    ``render.*`` when it has no dot, else a full catalogue key.
    """

    key: str
    label_key: str
    kind: str = "count"
    per: str = ""
    param: str = ""  # its placeholder in the game's ``stats_line``

    @property
    def label(self) -> str:
        return self.label_key if "." in self.label_key else f"render.{self.label_key}"

    def value(self, score_sum: int, counters: Mapping[str, int]) -> float | int | None:
        """The figure from the summed scores and counters.

        >>> StatSpec("avg", "x", "average", per="deals").value(30, {"deals": 4})
        7.5
        >>> StatSpec("won", "x").value(0, {})
        0
        """
        if self.kind == "average":
            den = counters.get(self.per, 0)
            return score_sum / den if den else None
        return int(counters.get(self.key, 0))


@dataclass(frozen=True)
class GameSpec:
    """What the code above the engine knows about one game."""

    key: str  # short id: custom_ids, catalogue prefix (``<key>.title``), table rows
    code: int  # stable number in the stats tables (never reuse one)
    engine_path: str  # "module:Class"
    cog: str  # the Discord extension of the game
    min_seats: int
    max_seats: int
    default_seats: int
    options: tuple[OptionSpec, ...] = ()
    renderer: str = ""  # module of its pictures (warmed up by the drawing worker)
    computers: Mapping[str, str] = field(default_factory=dict)  # level -> "module:function"
    players: str = ""  # module of levelled computer players (easy/normal/hard, ``know``/``decide``), if any
    default_level: str = "normal"
    stats: tuple[StatSpec, ...] = ()
    simultaneous: bool = False  # everyone acts at once (``to_act`` holds several seats)
    deal_event: str = "deal_start"  # the engine event that starts a new deal
    stats_line: str = ""  # catalogue key of the /stats line; placeholders: the stats' ``param``
    rules_section: str = ""  # RULES.md section, e.g. "3"
    colour: tuple[int, int, int] = (88, 101, 242)

    @property
    def title_key(self) -> str:
        return f"{self.key}.title"

    def engine(self) -> type:
        return _load(self.engine_path)

    def computer(self, level: str | None = None) -> Callable[..., Any]:
        return _load(self.computers[level or self.default_level])

    def option(self, name: str) -> OptionSpec | None:
        return next((o for o in self.options if o.name == name), None)


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


GAMES: tuple[GameSpec, ...] = (
    GameSpec(
        key="nimmt", code=0, engine_path="core.games.nimmt.engine:Nimmt", cog="cogs.games.nimmt.cog", renderer="cogs.games.nimmt.render",
        min_seats=2, max_seats=7, default_seats=4,
        options=(OptionSpec("rounds", 1, 7, None, at_most_seats=True,
                            label_key="table.lobby_rounds", default_key="table.lobby_rounds_auto"),),
        computers={"random": "core.games.nimmt.engine:random_player", "normal": "core.games.nimmt.engine:greedy_player"},
        players="core.games.nimmt.players",
        stats=(StatSpec("avg_penalty_per_round", "avg_penalty", "average", per="penalty_rounds", param="avg"),
               StatSpec("rounds_won", "rounds_won", param="rounds"),
               StatSpec("bulls_earned", "bulls_earned", param="bulls")),
        stats_line="stats.nimmt_line", deal_event="round_start", rules_section="1", colour=(196, 38, 46),
    ),
    GameSpec(
        key="garbage", code=1, engine_path="core.games.garbage.engine:Garbage", cog="cogs.games.garbage.cog", renderer="cogs.games.garbage.render",
        min_seats=2, max_seats=6, default_seats=4,
        computers={"random": "core.games.garbage.engine:random_player", "normal": "core.games.garbage.engine:greedy_player"},
        players="core.games.garbage.players",
        stats=(StatSpec("hands_won", "hands_won", param="hands"),),
        stats_line="stats.garbage_line", deal_event="hand_start", rules_section="2", colour=(46, 125, 50),
    ),
    GameSpec(
        key="take6", code=2, engine_path="core.games.take6.engine:Take6", cog="cogs.games.take6.cog", renderer="cogs.games.take6.render",
        min_seats=2, max_seats=10, default_seats=4,
        options=(OptionSpec("limit", 10, 200, 66, label_key="take6.lobby_limit"),
                 OptionSpec("deals", 1, 20, None, label_key="take6.lobby_deals")),
        computers={"random": "core.games.take6.engine:random_player", "normal": "core.games.take6.engine:normal_player"},
        players="core.games.take6.players",
        stats=(StatSpec("avg_penalty_per_deal", "take6.avg_penalty", "average", per="deals", param="avg"),
               StatSpec("deals_won", "take6.deals_won", param="deals"),
               StatSpec("rows_taken", "take6.rows_taken", param="rows")),
        stats_line="take6.stats_line", simultaneous=True, deal_event="deal_start", rules_section="3", colour=(230, 140, 30),
    ),
)

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
