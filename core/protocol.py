"""The small protocol every game engine in ``core/`` shares.

An engine module exposes one ``Game`` class (mutable container) plus small
immutable action values.  The table machinery and the cogs only ever talk to
an engine through this protocol, and only ever *show* what ``view()``
returns.

    game = Nimmt.new(seats=4, seed=42)          # deterministic from the seed
    seat = game.to_move                          # None once the game is over
    action = game.legal_actions(seat)[0]
    events = game.apply(seat, action)            # validates, raises IllegalAction
    game.view(seat)                              # what that seat may see
    game.view(None)                              # what the table may see
    game.result                                  # Result once over, else None
    data = game.to_dict(); Nimmt.from_dict(data) # serialise / restore
    Nimmt.replay(seats, seed, options, log)      # from seed + action log

Actions round-trip through text (``str(action)`` / ``game.parse(text)``) so
an action log is a list of ``(seat, text)`` pairs.  Events are plain
JSON-serialisable dicts with a ``"type"`` key; they never contain a card the
table may not see.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Sequence, runtime_checkable

Event = dict[str, Any]


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

    ``scores``: per seat (11 nimmt!: total penalty; Garbage: slots left).
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
    key = (lambda s: s) if lower_is_better else (lambda s: -s)
    return tuple(1 + sum(1 for o in scores if key(o) < key(s)) for s in scores)


@runtime_checkable
class Game(Protocol):
    name: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]

    seats: int
    seed: int
    log: list[tuple[int, str]]

    @classmethod
    def new(cls, seats: int, seed: int, **options: Any) -> "Game": ...

    @property
    def to_move(self) -> int | None: ...

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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Game": ...

    @classmethod
    def replay(cls, seats: int, seed: int, options: dict[str, Any], log: Sequence[tuple[int, str]]) -> "Game": ...
