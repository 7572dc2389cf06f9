"""Throughput of the Garbage engine: full games per second, on one core.

    .venv/bin/python bench/garbage.py                        # best of 3 runs of 0.6 s per line
    .venv/bin/python bench/garbage.py --seconds 2 --repeat 5
    .venv/bin/python bench/garbage.py --clock cpu            # CPU time: steadier on a busy machine

For 2, 4 and 6 seats (10 starting slots: a game lasts until somebody has won
10 hands), plays whole games with ``random_player`` or ``greedy_player`` at
every seat and prints full games/s and decisions/s through

* ``apply``: the checked path (validation + events), what the bot uses --
  quote these;
* ``push``: the trusted path (no validation, no events; python-chess style),
  what search or simulation code would use;

and how fast ``apply`` runs against ``push`` for the same games.

The time includes the players choosing their actions.  Decisions are the
player's choices only (stock/discard, Jack slot); the forced chain of
placements inside a turn is resolved by the engine and not counted.  Like
``bench/engine.py``, each line shows the best of several runs (the least
disturbed one on a shared machine) with the median run beside it, and the
header and footer print the load average.  Every run plays the same games
(seeds 0, 1, ... and ``Random(seats)`` for the player).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: ``wall``: elapsed time (what a player waits for); ``cpu``: this process's
#: CPU time, which other jobs on a busy machine disturb much less.
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}

from core.games.garbage.engine import Garbage, greedy_player, random_player  # noqa: E402

PLAYERS = {"random": random_player, "greedy": greedy_player}


def run(seats: int, player_name: str, seconds: float, checked: bool,
        clock: Callable[[], float] = time.perf_counter) -> tuple[float, float, float, float]:
    """Play games until ``seconds`` have passed.

    Returns (games/s, decisions/s, decisions/game, hands/game).
    """
    player = PLAYERS[player_name]
    rng = random.Random(seats)
    games = decisions = hands = 0
    seed = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        game = Garbage.new(seats, seed)
        step = game.apply if checked else game.push
        while not game.over:
            seat = game.to_move
            assert seat is not None  # (not over)
            step(seat, player(game, seat, rng))
            decisions += 1
        hands += game.hand_no
        games += 1
        seed += 1
    elapsed = clock() - start
    return games / elapsed, decisions / elapsed, decisions / games, hands / games


def _load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else "load unknown"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.6, help="time per run (default 0.6)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per line, the best is shown (default 3)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time (default) or this process's CPU time (steadier on a busy machine)")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, one core, best (and median) of {args.repeat} x {args.seconds:g} s ({args.clock} clock) "
          f"per line, 10 starting slots, {_load()}")
    print(f"{'seats':>5} {'player':>7} {'path':>6} {'games/s':>9} {'decisions/s':>12} {'dec/game':>9} "
          f"{'hands/game':>11} {'typical games/s':>16} {'apply/push':>11}")
    for seats in (2, 4, 6):
        for name in PLAYERS:
            best: dict[bool, float] = {}
            for checked in (True, False):
                runs = sorted(run(seats, name, args.seconds, checked, CLOCKS[args.clock]) for _ in range(args.repeat))
                gps, dps, dpg, hpg = runs[-1]
                best[checked] = gps
                typical = runs[len(runs) // 2][0]
                path = "apply" if checked else "push"
                ratio = f"{best[True] / best[False]:.2f}" if not checked else ""
                print(f"{seats:>5} {name:>7} {path:>6} {gps:>9,.1f} {dps:>12,.0f} {dpg:>9.1f} {hpg:>11.1f}"
                      f" {typical:>16,.1f} {ratio:>11}")
    print(_load())


if __name__ == "__main__":
    main()
