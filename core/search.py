"""What the hard computer players of the games with scored worlds share: the
level's figures, its decision, and the search over sampled worlds.

A game's players sample one world consistent with a seat's knowledge at a
time and score a candidate move in it (see ``core/games/<key>/players.py``);
:func:`halving` runs the search: every candidate still in the running meets
the same worlds (common random numbers), and at 1/8, 1/4 and 1/2 of the
worlds the worse half drops out, so the finalists get every world.

>>> rng = random.Random(1)
>>> d = halving(["low", "high"], lambda r: r.random(), lambda w, a: (w if a == "high" else -w, 0.0, 0.0),
...             rng, sims=8, budget=None)
>>> d.action, d.worlds, [f.action for f in d.figures]
('high', 8, ['high', 'low'])
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from math import floor
from typing import Any, Callable, Generic, Sequence, TypeVar

__all__ = ["LEVELS", "DEFAULT_BUDGET", "MAX_WORLDS", "Figure", "Decision", "levelled", "halving"]

LEVELS = ("easy", "normal", "hard")
DEFAULT_BUDGET = 0.15  # seconds of search per hard decision in the bot
MAX_WORLDS = 400  # the budgeted search stops here even with time left

A = TypeVar("A")
W = TypeVar("W")


@dataclass(frozen=True)
class Figure(Generic[A]):
    """The search's figures for one candidate move (the coach quotes them)."""

    action: A
    worlds: int
    first: float  # share of worlds in which the seat finishes first (the game says first of what; ties split)
    penalty: float  # mean penalty the seat takes in a world
    value: float  # what the search maximised


@dataclass(frozen=True)
class Decision(Generic[A]):
    action: A
    worlds: int = 0  # simulated worlds (hard only)
    figures: tuple[Figure[A], ...] = ()  # best first (hard only)


def levelled(level: str, rng: random.Random, options: Callable[[], Sequence[A]], easy: Callable[[], A],
             normal: Callable[[], A], search: Callable[[Sequence[A], float | None], Decision[A]], *,
             mistakes: float, sims: int | None, budget: float | None) -> Decision[A]:
    """The move at ``level`` from a game's rules for it: easy plays one of ``options()`` at
    random ``mistakes`` of the time, else ``easy()``; normal plays ``normal()``; hard
    searches (``search(options, budget)``) unless there is one option, for
    :data:`DEFAULT_BUDGET` seconds when neither ``sims`` nor ``budget`` bounds it."""
    if level == "easy":
        if rng.random() < mistakes:
            choices = options()
            return Decision(choices[floor(rng.random() * len(choices))])
        return Decision(easy())
    if level == "normal":
        return Decision(normal())
    if level != "hard":
        raise ValueError(f"unknown level {level!r}")
    choices = options()
    if len(choices) == 1:
        return Decision(choices[0])
    if sims is None and budget is None:
        budget = DEFAULT_BUDGET
    return search(choices, budget)


def halving(options: Sequence[A], sample: Callable[[random.Random], W],
            score: Callable[[W, A], tuple[float, float, float]], rng: random.Random,
            sims: int | None, budget: float | None, stop: Any = None) -> Decision[A]:
    """The best of ``options`` by sequential halving over common worlds.

    ``sample(world_rng)`` draws one world (its own generator, seeded from
    ``rng``: one draw of ``rng`` per world); ``score(world, option)`` plays
    ``option`` in it and says (value, first, penalty) of that world, value
    being what is maximised; it must not change the world, which every
    candidate meets in turn.  At most ``sims`` worlds (:data:`MAX_WORLDS` if
    None) and at most ``budget`` seconds (at least a few worlds); ``stop`` (a
    ``threading.Event``, optional): once set, the search ends after the world
    it is in."""
    n = len(options)
    value = [0.0] * n
    first = [0.0] * n
    penalty = [0.0] * n
    count = [0] * n
    deadline = time.perf_counter() + (budget or 0.0)
    worlds = 0
    limit = sims if sims is not None else MAX_WORLDS
    checkpoints = {max(2, limit // 8), max(3, limit // 4), max(4, limit // 2)}
    alive = list(range(n))
    while worlds < limit:
        if budget is not None and worlds >= 4 and time.perf_counter() > deadline:
            break
        if stop is not None and worlds >= 1 and stop.is_set():
            break  # nobody waits for this move any more
        world = sample(random.Random(rng.getrandbits(64)))
        for i in alive:
            v, share, pen = score(world, options[i])
            value[i] += v
            first[i] += share
            penalty[i] += pen
            count[i] += 1
        worlds += 1
        if worlds in checkpoints and len(alive) > 2:
            alive.sort(key=lambda i: (-value[i], i))
            alive = sorted(alive[:max(2, (len(alive) + 1) // 2)])
    finalists = sorted(alive, key=lambda i: (-value[i] / count[i], i))
    rest = sorted((i for i in range(n) if i not in alive), key=lambda i: (-value[i] / max(1, count[i]), i))
    figures = tuple(Figure(options[i], count[i], first[i] / max(1, count[i]), penalty[i] / max(1, count[i]),
                           value[i] / max(1, count[i])) for i in finalists + rest)
    return Decision(options[finalists[0]], worlds, figures)
