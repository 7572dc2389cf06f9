"""Throughput of the 6 nimmt! engine: full games per second, on one core.

    .venv/bin/python bench/take6.py              # about 1 s per line
    .venv/bin/python bench/take6.py --seconds 3

For 2, 4, 7 and 10 seats, plays whole games (to the 66-point limit, S4) with
``random_player`` or ``normal_player`` at every seat through the checked
``apply`` (what the bot uses) and prints games/s and actions/s (card choices
and row choices).  The time includes the players choosing (the normal player
reads ``view(seat)`` for every decision, as the bot's computer does).  The
machine's load (``os.getloadavg``) is printed before and after.  Then the
table image (``cogs.games.take6.render``) for 4 and 10 players, warm median of 50.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.games.take6.engine import Take6, normal_player, random_player

PLAYERS = {"random": random_player, "normal": normal_player}


def run(seats: int, player_name: str, seconds: float) -> tuple[float, float, float, float]:
    """Play games until ``seconds`` have passed: (games/s, actions/s, actions/game, deals/game)."""
    player = PLAYERS[player_name]
    rng = random.Random(seats)
    clock = time.perf_counter
    games = actions = deals = 0
    seed = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        game = Take6.new(seats, seed)
        while not game.over:
            for seat in sorted(game.to_act):
                if seat in game.to_act:
                    game.apply(seat, player(game, seat, rng))
                    actions += 1
        deals += game.deal
        games += 1
        seed += 1
    elapsed = clock() - start
    return games / elapsed, actions / elapsed, actions / games, deals / games


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="time per line (default 1)")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, one core, {args.seconds:g} s per line, load {load()}")
    print(f"{'seats':>5} {'player':>7} {'games/s':>9} {'actions/s':>10} {'act/game':>9} {'deals/game':>11}")
    for seats in (2, 4, 7, 10):
        for name in PLAYERS:
            gps, aps, apg, dpg = run(seats, name, args.seconds)
            print(f"{seats:>5} {name:>7} {gps:>9,.1f} {aps:>10,.0f} {apg:>9.1f} {dpg:>11.1f}")
    from app.i18n.catalogue import t
    from cogs.games.take6.render import TAKE6_TABLE_LABELS, render_take6_table

    labels = {k: t("en", f"take6.r_{k}") for k in TAKE6_TABLE_LABELS}
    for seats in (4, 10):
        game = Take6.new(seats, 1)
        rng = random.Random(1)
        for _ in range(seats * 5):  # some turns in: fuller rows
            seat = min(game.to_act)
            game.apply(seat, normal_player(game, seat, rng))
        view, names = game.view(None), [f"Player {s + 1}" for s in range(seats)]
        times = []
        for _ in range(51):
            start = time.perf_counter()
            render_take6_table(view, names, labels)
            times.append((time.perf_counter() - start) * 1000)
        print(f"table image, {seats:>2} players: warm median {sorted(times[1:])[25]:.1f} ms (first {times[0]:.1f} ms)")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
