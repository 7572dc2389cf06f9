"""Throughput of the 11 nimmt! engine with the random player, on one core.

    python bench/engine.py                          # best of 5 runs of 0.6 s per line
    python bench/engine.py --seconds 2 --repeat 3
    python bench/engine.py --clock cpu              # CPU time: steadier on a busy machine

For 2, 4 and 7 seats, plays whole games (all rounds) with ``random_player``
for every seat and prints

* ``apply``: actions/s and full games/s through the checked path
  (``game.apply``: validation + events), what the bot uses;
* ``push``: the same through the trusted path (``game.push``: no validation,
  no events; python-chess style), what search/simulation code would use.

Actions/s counts every action of every seat, including the time the random
player takes to choose it.  Like ``timeit``, each line shows the best of
several runs: the machine is shared, and the best run is the least disturbed.
The median run ("typical") is shown beside it, and the load average in the
header, so that a disturbed measurement can be told from a slow engine.
Every run plays the same sequence of games (seeds 0, 1, ... and
``Random(seats)`` for the player), so the runs differ only by the machine.
Targets: >= 300,000 actions/s, >= 1,000 full 4-seat games/s.
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

from core.games.nimmt.engine import Nimmt, random_player  # noqa: E402


def run(seats: int, seconds: float, checked: bool, clock: Callable[[], float] = time.perf_counter,
        ) -> tuple[float, float, float]:
    """Play games until ``seconds`` have passed; returns (actions/s, games/s, actions/game)."""
    actions = games = 0
    rng = random.Random(seats)
    player = random_player
    seed = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        game = Nimmt.new(seats, seed)
        step = game.apply if checked else game.push
        while not game.over:
            seat = game.to_move
            step(seat, player(game, seat, rng))
            actions += 1
        games += 1
        seed += 1
    elapsed = clock() - start
    return actions / elapsed, games / elapsed, actions / games


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="11 nimmt! engine throughput with the random player")
    ap.add_argument("--seconds", type=float, default=0.6, help="time per run (default 0.6)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per line, the best is shown (default 5)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="wall time (default) or this process's CPU time (steadier on a busy machine)")
    args = ap.parse_args(argv)
    load = ", load average %.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else ""
    print(f"python {sys.version.split()[0]}, random_player, one core, "
          f"best (and median) of {args.repeat} x {args.seconds:g} s ({args.clock} clock) per line{load}")
    print(f"{'seats':>5} {'path':>6} {'actions/s':>12} {'games/s':>10} {'actions/game':>13} {'typical actions/s':>18}")
    for seats in (2, 4, 7):
        for checked in (True, False):
            runs = sorted(run(seats, args.seconds, checked, CLOCKS[args.clock]) for _ in range(args.repeat))
            aps, gps, apg = runs[-1]
            typical = runs[len(runs) // 2][0]
            print(f"{seats:>5} {'apply' if checked else 'push':>6} {aps:>12,.0f} {gps:>10,.1f} {apg:>13.1f}"
                  f" {typical:>18,.0f}")
    if hasattr(os, "getloadavg"):
        print("load average %.2f %.2f %.2f at the end" % os.getloadavg())


if __name__ == "__main__":
    main()
