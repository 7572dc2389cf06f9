"""Several hard computers at one 6 nimmt! table: one search after another, or all at once?

At a table where everyone chooses at once, every hard computer searches its
own card before the table moves on.  The table manager runs those searches
one after another in a worker thread (``app/tables/manager.py: _think``).
This script compares that with all of them in worker threads at once, on the
same positions in one run: the wall time until every hard seat has chosen,
and the worlds each search got through (60 at most, fewer when its 150 ms
budget ran out first: a weaker choice).

    .venv/bin/python bench/hard_seats.py                 # a few seconds
    .venv/bin/python bench/hard_seats.py --positions 100 --seats 6
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import ai
from core.ai import DEFAULT_BUDGET, HARD_WORLDS
from core.games.take6.engine import Take6, random_player


def positions(seed: int, seats: int) -> list[object]:
    """What each seat knows at the start of a turn a few turns into a deal."""
    game = Take6.new(seats, seed)
    history: list = []
    rng = random.Random(seed)
    for _ in range(seed % 5):  # whole turns: everyone chooses, the cards are placed
        for seat in sorted(game.to_act):
            history += game.apply(seat, random_player(game, seat, rng))
        while game.to_act and len(game.to_act) < seats:  # a card lower than every row: its row is taken
            seat = min(game.to_act)
            history += game.apply(seat, random_player(game, seat, rng))
    return [ai.know("take6", game.view(seat), history) for seat in sorted(game.to_act)]


def search(knowledge: object, seat: int) -> object:
    return ai.decide("take6", knowledge, "hard", random.Random(seat), sims=HARD_WORLDS, budget=DEFAULT_BUDGET)


async def serial(known: list[object]) -> list[object]:
    return [await asyncio.to_thread(search, k, seat) for seat, k in enumerate(known)]


async def together(known: list[object]) -> list[object]:
    return list(await asyncio.gather(*(asyncio.to_thread(search, k, seat) for seat, k in enumerate(known))))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=30)
    parser.add_argument("--seats", type=int, default=4, help="hard computers at the table (all of its seats)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.seats} hard seats, {HARD_WORLDS} worlds "
          f"or {1000 * DEFAULT_BUDGET:.0f} ms each")
    walls: dict[str, list[float]] = {"one after another (the bot)": [], "all at once": []}
    worlds: dict[str, list[int]] = {name: [] for name in walls}
    for seed in range(args.positions):
        known = positions(seed, args.seats)
        for name, run in zip(walls, (serial, together)):  # alternating, on the same positions
            started = time.perf_counter()
            decisions = await run(known)
            walls[name].append(time.perf_counter() - started)
            worlds[name] += [d.worlds for d in decisions]  # type: ignore[attr-defined]  # each game's own Decision
    print("| hard seats' searches | until all chose: median | p90 | max | worlds per search: median | min |")
    print("|---|---|---|---|---|---|")
    for name, values in walls.items():
        values.sort()
        print(f"| {name} | {1000 * statistics.median(values):.0f} ms | {1000 * values[int(0.9 * (len(values) - 1))]:.0f} ms"
              f" | {1000 * values[-1]:.0f} ms | {statistics.median(worlds[name]):.0f} | {min(worlds[name])} |")
    one, both = (statistics.median(v) for v in walls.values())
    print(f"ratio of the medians (one after another / all at once): {one / max(1e-9, both):.2f}; load average at "
          f"the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
