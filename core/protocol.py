"""The small protocol every game engine in ``core/`` shares.

An engine module exposes one ``Game`` class (mutable container) plus small
immutable action values.  The table machinery and the cogs only ever talk to
an engine through this protocol, and only ever *show* what ``view()``
returns.

    game = Game.new(seats=4, seed=42)           # deterministic from the seed
    seat = game.to_move                          # None once the game is over
    action = game.legal_actions(seat)[0]
    events = game.apply(seat, action)            # validates, raises IllegalAction
    game.view(seat)                              # what that seat may see
    game.view(None)                              # what the table may see
    game.result                                  # Result once over, else None
    data = game.to_dict(); Game.from_dict(data)  # serialise / restore
    draft = game.copy()                          # independent copy (changed, saved, then kept)
    Game.replay(seats, seed, options, log)       # from seed + action log

Actions round-trip through text (``str(action)`` / ``game.parse(text)``) so
an action log is a list of ``(seat, text)`` pairs.  Events are plain
JSON-serialisable dicts with a ``"type"`` key; they never contain a card the
table may not see.

What an engine must provide (the whole contract):

* the methods of :class:`Game` below, and a :class:`core.spec.GameSpec` in
  its package (docs/adding-a-game.md);
* **who may act now**: ``to_act`` (a frozenset of seats).  A sequential game
  returns ``{to_move}`` (or nothing once over); a simultaneous one (everyone
  chooses at once) returns every seat that has not chosen yet.
  ``to_move`` stays for sequential games; a simultaneous game's ``to_move`` is
  the single seat that must act alone (e.g. a row choice), else None.  Use
  :func:`to_act` to read it from any engine;
* **secrecy of simultaneous choices**: a seat's pending choice is in its own
  view only; every other view (and the table's, ``view(None)``) shows just
  *whether* it has chosen, until the reveal;
* **shared events** (:class:`EventType`): ``TURN`` when a turn passes to a
  seat (``{"type": "turn", "seat": s}``) or, simultaneous, to several
  (``{"type": "turn", "seats": [...]}``); ``GAME_OVER`` with ``scores``,
  ``places``, ``winners``; and the event that starts a new deal, which the
  game's spec names (``GameSpec.deal_event``; new engines use ``DEAL_START``:
  ``{"type": "deal_start", "deal": n}``).  :class:`TurnEvent`,
  :class:`DealStartEvent` and :class:`GameOverEvent` type them;
* **phases** as an :class:`enum.Enum` whose values are strings (the value is
  what ``view()["phase"]`` carries, so views stay JSON).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Protocol, Sequence, TypedDict, runtime_checkable

Event = dict[str, Any]


class EventType(str, Enum):
    """The event types every layer above the engines may rely on."""

    TURN = "turn"
    DEAL_START = "deal_start"
    GAME_OVER = "game_over"


class TurnEvent(TypedDict, total=False):
    type: str  # "turn"
    seat: int  # sequential: the seat to move
    seats: list[int]  # simultaneous: every seat that now chooses


class DealStartEvent(TypedDict):
    type: str  # "deal_start" (or the game's own ``GameSpec.deal_event``)
    deal: int


class GameOverEvent(TypedDict):
    type: str  # "game_over"
    scores: list[int]
    places: list[int]
    winners: list[int]


def turn_event(seats: Sequence[int]) -> Event:
    """The shared "turn passed to" event.

    >>> turn_event([2]), turn_event([0, 1])
    ({'type': 'turn', 'seat': 2}, {'type': 'turn', 'seats': [0, 1]})
    """
    if len(seats) == 1:
        return {"type": EventType.TURN.value, "seat": int(seats[0])}
    return {"type": EventType.TURN.value, "seats": [int(s) for s in seats]}


def to_act(game: Any) -> frozenset[int]:
    """Who may act now, from any engine (sequential ones have only ``to_move``).

    >>> class Seq:
    ...     to_move = 3
    >>> sorted(to_act(Seq()))
    [3]
    """
    seats = getattr(game, "to_act", None)
    if seats is not None:
        return frozenset(seats)
    seat = game.to_move
    return frozenset() if seat is None else frozenset((seat,))


class GameError(ValueError):
    """Base of every error an engine raises on bad input.

    ``code`` is a stable machine-readable reason (used for translated
    messages), ``detail`` carries the offending input.
    """

    code: str = "invalid"

    def __init__(self, code: str | None = None, message: str = "", **detail: Any) -> None:
        if code is not None:
            self.code = code
        self.detail = detail
        super().__init__(message or self.code)


class InvalidAction(GameError):
    """The action text could not be parsed."""

    code = "invalid_syntax"


class IllegalAction(GameError):
    """The action is well formed but not allowed now (wrong seat, does not fit...)."""

    code = "illegal"


@dataclass(frozen=True)
class Result:
    """Final outcome of a game, as data.

    ``scores``: per seat (e.g. total penalty, or slots left).
    ``places``: per seat, 1-based, tied seats share a place.
    ``winners``: seats with place 1.
    ``stats``: per seat, game-specific counters for the stats store
    (e.g. ``rounds_won``, ``bulls_earned``, ``hands_won``).
    """

    scores: tuple[int, ...]
    places: tuple[int, ...]
    winners: tuple[int, ...]
    rounds: int
    stats: tuple[dict[str, int], ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scores": list(self.scores),
            "places": list(self.places),
            "winners": list(self.winners),
            "rounds": self.rounds,
            "stats": [dict(s) for s in self.stats],
        }


def places_from_scores(scores: Sequence[int], lower_is_better: bool = True) -> tuple[int, ...]:
    """Competition ranking ("1224"): tied scores share a place.

    >>> places_from_scores([10, 3, 10, 7])
    (3, 1, 3, 2)
    """
    sign = 1 if lower_is_better else -1
    return tuple(1 + sum(1 for o in scores if sign * o < sign * s) for s in scores)


@runtime_checkable
class Game(Protocol):
    name: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]

    seats: int
    seed: int

    @property
    def log(self) -> list[tuple[int, str]]: ...  # (seat, action text) pairs, oldest first

    @classmethod
    def new(cls, seats: int, seed: int, **options: Any) -> "Game": ...

    @property
    def to_move(self) -> int | None: ...

    # Optional (simultaneous games): ``to_act: frozenset[int]``; see to_act().

    @property
    def over(self) -> bool: ...

    def legal_actions(self, seat: int) -> list[Any]: ...

    def is_legal(self, seat: int, action: Any) -> bool: ...

    def parse(self, text: str) -> Any: ...

    def apply(self, seat: int, action: Any) -> list[Event]: ...

    def view(self, seat: int | None) -> dict[str, Any]: ...

    @property
    def result(self) -> Result | None: ...

    def to_dict(self) -> dict[str, Any]: ...

    def copy(self) -> "Game": ...

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Game": ...

    @classmethod
    def replay(cls, seats: int, seed: int, options: dict[str, Any], log: Sequence[tuple[int, str]]) -> "Game": ...
