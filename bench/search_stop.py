"""How long a hard search's worker thread runs on after nobody waits for its move.

The table manager cancels a hard computer's search when the table moves on
(someone moved, the table was stopped, the bot stops); the search then runs
in a worker thread that holds the GIL in turns with the event loop.  This
script starts the bot's hard search (``core.ai.decide``, 60 worlds and a
150 ms budget, as in the bot) on positions of 4-player 11 nimmt! games,
cancels the wait after ``--cancel-after`` ms, and measures when the worker
thread is free again, without the stop and with it (``stop`` set on the
cancel, as ``app.tables.computers`` does), alternating in one run.

    .venv/bin/python bench/search_stop.py                 # a few seconds
    .venv/bin/python bench/search_stop.py --positions 200 --cancel-after 5
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import ai
from core.ai import DEFAULT_BUDGET, HARD_WORLDS
from core.games.nimmt.engine import Nimmt, random_player


def position(seed: int) -> object:
    """What the seat to move knows a few moves into a 4-player game."""
    game = Nimmt.new(4, seed)
    history: list = []
    rng = random.Random(seed)
    for _ in range(seed % 8):
        history += game.apply(game.to_move, random_player(game, game.to_move, rng))
    return ai.know("nimmt", game.view(game.to_move), history)


async def held(knowledge: object, seed: int, stop: threading.Event | None, cancel_after: float) -> float:
    """Seconds from the cancel until the worker thread is free."""
    free = threading.Event()

    def search() -> object:
        try:
            return ai.decide("nimmt", knowledge, "hard", random.Random(seed), sims=HARD_WORLDS,
                             budget=DEFAULT_BUDGET, stop=stop)
        finally:
            free.set()

    waiting = asyncio.ensure_future(asyncio.to_thread(search))
    await asyncio.sleep(cancel_after)
    waiting.cancel()
    cancelled = time.perf_counter()
    if stop is not None:
        stop.set()
    await asyncio.to_thread(free.wait)
    return time.perf_counter() - cancelled


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--cancel-after", type=float, default=10.0, help="ms after the search starts")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; hard search: {HARD_WORLDS} worlds, "
          f"{1000 * DEFAULT_BUDGET:.0f} ms budget; cancelled after {args.cancel_after:g} ms")
    times: dict[str, list[float]] = {"without the stop": [], "with the stop": []}
    for seed in range(args.positions):
        knowledge = position(seed)
        times["without the stop"].append(await held(knowledge, seed, None, args.cancel_after / 1000))
        times["with the stop"].append(await held(knowledge, seed, threading.Event(), args.cancel_after / 1000))
    print("| worker thread busy after the cancel | median | p90 | max |")
    print("|---|---|---|---|")
    for name, values in times.items():
        values.sort()
        print(f"| {name} | {1000 * statistics.median(values):.1f} ms | "
              f"{1000 * values[int(0.9 * (len(values) - 1))]:.1f} ms | {1000 * values[-1]:.1f} ms |")
    ratio = statistics.median(times["without the stop"]) / max(1e-9, statistics.median(times["with the stop"]))
    print(f"ratio of the medians (without / with): {ratio:.1f}; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
