"""Replay of a finished game, one move at a time, from seed + action log.

Built through the engine protocol only (``new``, ``parse``, ``apply``,
``view``), never from stored screenshots, so it works for every game: step
*k* is the game after the first *k* actions of the log (step 0: the deal),
with the events the *k*-th action caused, the table's view and, since the
game is over, every seat's own view (its hand) and, for an engine that has
``revealed()``, the cards no view shows (e.g. what lies face down).

    frame = build(spec.game, seats=4, seed=s, options={}, log=log, step=10)
    frame.table, [v.get("hand") for v in frame.hands]

CPU-bound: the cog calls :func:`build` in a worker thread.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from core.protocol import Event


@dataclass
class Frame:
    step: int  # 0 = the deal; k = after the k-th action
    moves: int  # actions in the whole log
    seat: int | None  # who made the k-th action (None at step 0)
    action: str | None  # its text as logged
    events: list[Event]  # what that action caused (narrated like the live game)
    table: dict[str, Any]  # view(None)
    hands: list[dict[str, Any]]  # view(seat) for every seat
    engine: Any  # the engine at this step (for drawing the table)
    revealed: dict[str, Any] | None = None  # what no view shows, if the engine tells (``revealed()``)


def build(engine: Any, *, seats: int, seed: int, options: dict[str, Any],
          log: Sequence[tuple[int, str]], step: int) -> Frame:
    """The game at *step* (clamped to 0..len(log)); the log is checked move by move."""
    step = max(0, min(int(step), len(log)))
    game = engine.new(seats, seed, **options)
    events: list[Event] = []
    for mover, text in log[:step]:
        events = game.apply(int(mover), game.parse(str(text)))
    seat, action = (int(log[step - 1][0]), str(log[step - 1][1])) if step else (None, None)
    reveal = getattr(game, "revealed", None)  # optional (core.protocol): the cards no view shows
    return Frame(step=step, moves=len(log), seat=seat, action=action, events=list(events),
                 table=game.view(None), hands=[game.view(s) for s in range(seats)], engine=game,
                 revealed=reveal() if callable(reveal) else None)


def round_starts(engine: Any, *, seats: int, seed: int, options: dict[str, Any],
                 log: Sequence[tuple[int, str]], deal_event: str = "round_start") -> list[int]:
    """Steps at which a new deal begins (the engine's *deal_event*, see
    ``GameSpec.deal_event``), for jumping through a long game; starts with 0.

    >>> from core.protocol import to_act
    >>> from core.registry import GAMES
    >>> import random
    >>> spec = GAMES[0]
    >>> g = spec.game.new(2, 3)
    >>> while not g.over:
    ...     seat = min(to_act(g))
    ...     _ = g.apply(seat, spec.computer()(g, seat, random.Random(0)))
    >>> starts = round_starts(spec.game, seats=2, seed=3, options={}, log=g.log, deal_event=spec.deal_event)
    >>> len(starts) >= 1, starts[0]
    (True, 0)
    """
    game = engine.new(seats, seed, **options)
    out = [0]
    for index, (seat, text) in enumerate(log, start=1):
        events = game.apply(int(seat), game.parse(str(text)))
        if any(e.get("type") == deal_event for e in events) and index < len(log):
            out.append(index)
    return out
