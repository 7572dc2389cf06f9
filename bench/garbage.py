"""Throughput of the Garbage engine: full games per second, on one core.

    .venv/bin/python bench/garbage.py              # about 1 s per line
    .venv/bin/python bench/garbage.py --seconds 3

For 2, 4 and 6 seats (10 starting slots: a game lasts until somebody has won
10 hands), plays whole games with ``random_player`` or ``greedy_player`` at
every seat and prints full games/s and decisions/s through

* ``apply``: the checked path (validation + events), what the bot uses;
* ``push``: the trusted path (no validation, no events; python-chess style).

The time includes the players choosing their actions.  Decisions are the
player's choices only (stock/discard, Jack slot); the forced chain of
placements inside a turn is resolved by the engine and not counted.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.garbage import Garbage, greedy_player, random_player  # noqa: E402

PLAYERS = {"random": random_player, "greedy": greedy_player}


def run(seats: int, player_name: str, seconds: float, checked: bool) -> tuple[float, float, float, float]:
    """Play games until ``seconds`` have passed.

    Returns (games/s, decisions/s, decisions/game, hands/game).
    """
    player = PLAYERS[player_name]
    rng = random.Random(seats)
    clock = time.perf_counter
    games = decisions = hands = 0
    seed = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        game = Garbage.new(seats, seed)
        step = game.apply if checked else game.push
        while not game.over:
            seat = game.to_move
            step(seat, player(game, seat, rng))  # type: ignore[arg-type]
            decisions += 1
        hands += game.hand_no
        games += 1
        seed += 1
    elapsed = clock() - start
    return games / elapsed, decisions / elapsed, decisions / games, hands / games


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="time per line (default 1)")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, one core, {args.seconds:g} s per line, 10 starting slots")
    print(f"{'seats':>5} {'player':>7} {'path':>6} {'games/s':>9} {'decisions/s':>12} {'dec/game':>9} {'hands/game':>11}")
    for seats in (2, 4, 6):
        for name in PLAYERS:
            for checked in (True, False):
                gps, dps, dpg, hpg = run(seats, name, args.seconds, checked)
                path = "apply" if checked else "push"
                print(f"{seats:>5} {name:>7} {path:>6} {gps:>9,.1f} {dps:>12,.0f} {dpg:>9.1f} {hpg:>11.1f}")


if __name__ == "__main__":
    main()
