"""The computer players of every game, by level (easy / normal / hard).

One entry point for the table machinery and the benchmark::

    k = know(key, game.view(seat), public_events)   # what the seat may know
    decision = decide(key, k, "hard", rng, sims=50)  # .action, .figures

A player sees only ``view(seat)`` and the public events; each game's
players live in its package (``core/games/<key>/players.py``), named by its
spec (:class:`core.spec.Players`).

>>> from core.protocol import to_act
>>> key = next(s.key for s in registry.GAMES if supports(s.key))
>>> g = registry.spec(key).game.new(3, 5)
>>> seat = min(to_act(g))
>>> g.is_legal(seat, decide(key, know(key, g.view(seat), []), "normal", random.Random(0)).action)
True
"""
from __future__ import annotations

import random
from typing import Any, Sequence

from core import registry
from core.spec import Players
from core.protocol import Event
from core.search import DEFAULT_BUDGET, LEVELS

__all__ = ["LEVELS", "DEFAULT_BUDGET", "HARD_WORLDS", "supports", "know", "decide"]

HARD_WORLDS = 60  # simulated worlds per hard decision in the bot (fewer if the budget runs out first)


def _players(game: str) -> Players:
    """``game``'s levelled players (its spec holds them)."""
    players = registry.spec(game).players
    if players is None:
        raise ValueError(f"{game} has no levelled computer players")
    return players


def supports(game: str) -> bool:
    """True when ``game`` has levelled computer players."""
    try:
        return bool(registry.spec(game).players)
    except (KeyError, ValueError):
        return False


def know(game: str, view: dict[str, Any], history: Sequence[Event]) -> Any:
    return _players(game).know(view, history)


def decide(game: str, knowledge: Any, level: str, rng: random.Random, *, sims: int | None = None,
           budget: float | None = None, stop: Any = None) -> Any:
    """``level``'s move.  Hard searches ``sims`` worlds and/or ``budget`` seconds,
    whichever ends first; with ``sims`` alone the result depends only on
    ``rng`` (tests); with neither, :data:`DEFAULT_BUDGET`.  ``stop`` (a
    ``threading.Event``): once set, the search ends after the world it is in
    (its move is then nobody's: the caller gave up waiting)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    return _players(game).decide(knowledge, level, rng, sims=sims, budget=budget, stop=stop)
