"""What a game declares about itself: :class:`GameSpec`, with its
:class:`OptionSpec` (table options) and :class:`StatSpec` (profile figures).

Each game's package (``core/games/<key>/__init__.py``) builds its one
``SPEC`` from typed objects (its engine class, its computer players'
functions and module); :mod:`core.registry` collects them.  Seat limits come
from the engine class, options and computer levels from the spec: the
lobby, the slash command and the table manager all read them here.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from core.protocol import Event, Game


class Players(Protocol):
    """A game's levelled computer players (easy / normal / hard): what a seat
    may know from its view and the public events, and the move it chooses."""

    def know(self, view: dict[str, Any], history: Sequence[Event]) -> Any: ...

    def decide(self, knowledge: Any, level: str, rng: random.Random, *, sims: int | None = None,
               budget: float | None = None, stop: Any = None) -> Any: ...


#: where the games' texts live: ``data/games/<key>/`` (see :attr:`GameSpec.folder`)
GAMES_DATA = Path(__file__).resolve().parents[1] / "data" / "games"

@dataclass(frozen=True)
class Moment:
    """A candidate highlight of a game night, found in one game's events:
    ``kind`` (its line is the catalogue's ``nights.hl_<kind>``), the seat and
    its value; ``lower``: the smallest value holds the record."""

    kind: str
    seat: int
    value: int
    lower: bool = False


#: a game's night highlights: (its events in order, its number of seats) -> candidates
Moments = Callable[[Sequence[Event], int], Iterable[Moment]]

#: a quick computer player: (engine, seat, rng) -> an action (the fallback of levelled players)
Computer = Callable[[Any, int, random.Random], Any]


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
        number = int(value)
        if not self.minimum <= number <= self.maximum:
            raise ValueError(f"option {self.name} must be {self.minimum}..{self.maximum}")
        return number


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
class VariantSpec:
    """A table variant a game declares: ``name`` (chosen with ``variant:``,
    saved with the table, part of the shuffle commitment), the catalogue keys
    of its label and of the line that says what it changes, and the engine
    options it sets.

    >>> VariantSpec("short", "cards.variant_short", "cards.variant_short_info", {"slots": 5}).options
    {'slots': 5}
    """

    name: str
    label_key: str
    info_key: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GameSpec:
    """What the code above the engine knows about one game.

    >>> class Dice:
    ...     min_seats, max_seats = 2, 5
    >>> spec = GameSpec(key="dice", code=99, game=Dice, default_seats=3, options=(OptionSpec("rolls", 1, 9, 3),))
    >>> spec.min_seats, spec.max_seats, spec.option("rolls").check(None), spec.folder.name
    (2, 5, 3, 'dice')
    """

    key: str  # short id: custom_ids, catalogue prefix (``<key>.title``), table rows, data/games/<key>/
    code: int  # stable number in the stats tables (never reuse one)
    game: type[Game]  # the engine class (core.protocol.Game); its seat limits are the game's
    default_seats: int
    options: tuple[OptionSpec, ...] = ()
    computers: Mapping[str, Computer] = field(default_factory=dict)  # quick players, by name
    players: Players | None = None  # levelled computer players (easy/normal/hard), if any
    default_level: str = "normal"
    stats: tuple[StatSpec, ...] = ()
    simultaneous: bool = False  # everyone acts at once (``to_act`` holds several seats)
    deal_event: str = "deal_start"  # the engine event that starts a new deal
    stats_line: str = ""  # catalogue key of the /stats line; placeholders: the stats' ``param``
    colour: tuple[int, int, int] = (88, 101, 242)
    highlights: tuple[str, ...] = ()  # the kinds of its night highlights, in the recap's order
    moments: Moments | None = None  # finds them in a finished game's events
    #: the table variants it offers besides the standard game
    variants: tuple[VariantSpec, ...] = ()
    #: the folder of its texts (None: ``data/games/<key>/``): its catalogues
    #: ``locales/<lang>/<file>.json`` (keys prefixed by the file's name, as in
    #: ``data/locales``) and its rules ``rules/<lang>.md``
    data: Path | None = None

    def __post_init__(self) -> None:
        if not self.min_seats <= self.default_seats <= self.max_seats:
            raise ValueError(f"{self.key}: default_seats outside {self.min_seats}..{self.max_seats}")

    @property
    def min_seats(self) -> int:
        return int(self.game.min_seats)

    @property
    def max_seats(self) -> int:
        return int(self.game.max_seats)

    @property
    def folder(self) -> Path:
        return self.data if self.data is not None else GAMES_DATA / self.key

    @property
    def title_key(self) -> str:
        return f"{self.key}.title"

    def engine(self) -> type[Game]:
        return self.game

    def computer(self, level: str | None = None) -> Computer:
        return self.computers[level or self.default_level]

    def option(self, name: str) -> OptionSpec | None:
        return next((o for o in self.options if o.name == name), None)

    def variant(self, name: str | None) -> VariantSpec | None:
        """The declared variant of that name (None: the standard game, or one it does not declare)."""
        return next((v for v in self.variants if v.name == name), None)
