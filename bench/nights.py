"""Game-night seating: how even the round-1 tables are, and how long seating takes.

    .venv/bin/python bench/nights.py               # 1,000 random nights per line
    .venv/bin/python bench/nights.py --trials 200

For each night size, draws ratings from a normal distribution (mean 10,
standard deviation 5: about the spread of conservative openskill ratings
after a few games), seats round 1 with :func:`app.nights.seat_round`
(snake order by rating, then balancing swaps) and reports the spread of the
tables' average ratings (highest minus lowest average), next to plain snake
order and a random seating of the same table sizes, plus the time per
seating.  Prints the machine load (os.getloadavg) first.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.nights.night import Night, Player, seat_round, snake, spread, table_sizes

CASES = ((11, 4), (12, 4), (16, 4), (20, 5), (30, 6), (60, 4), (200, 4))


def run(n: int, size: int, trials: int) -> dict[str, float]:
    balanced, snaked, naive, times = [], [], [], []
    for trial in range(trials):
        rng = random.Random(trial)
        ratings = {u: rng.gauss(10, 5) for u in range(1, n + 1)}
        night = Night(1, 1, 1, "nimmt", 1, size, players=[Player(u, str(u)) for u in ratings])
        start = time.perf_counter()
        tables = seat_round(night, ratings, 2, 7)
        times.append(time.perf_counter() - start)
        balanced.append(spread(tables, ratings))
        sizes = table_sizes(n, size, 2, 7)
        snaked.append(spread(snake(sorted(ratings, key=lambda u: -ratings[u]), sizes), ratings))
        order = list(ratings)
        rng.shuffle(order)
        at, shuffled = 0, []
        for k in sizes:
            shuffled.append(order[at:at + k])
            at += k
        naive.append(spread(shuffled, ratings))
    return {"median": statistics.median(balanced), "p99": sorted(balanced)[int(0.99 * (trials - 1))],
            "max": max(balanced), "snake": statistics.median(snaked), "random": statistics.median(naive),
            "ms": 1000 * statistics.median(times), "ms_max": 1000 * max(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {args.trials} nights per line; "
          "rating spread between table averages (ratings: mean 10, sd 5)")
    print(f"{'players':>7} {'size':>4} {'tables':>10} | {'median':>6} {'p99':>5} {'max':>5} | "
          f"{'snake only':>10} {'random':>6} | {'ms/seating':>10} {'max ms':>6}")
    for n, size in CASES:
        trials = args.trials if n <= 60 else max(10, args.trials // 20)
        r = run(n, size, trials)
        sizes = table_sizes(n, size, 2, 7)
        shape = f"{len(sizes)}x{min(sizes)}-{max(sizes)}"
        print(f"{n:>7} {size:>4} {shape:>10} | {r['median']:>6.2f} {r['p99']:>5.2f} {r['max']:>5.2f} | "
              f"{r['snake']:>10.2f} {r['random']:>6.2f} | {r['ms']:>10.2f} {r['ms_max']:>6.1f}")
    recap_ms()


def recap_ms(runs: int = 20) -> None:
    """Drawing the recap picture (a worker thread does it in the bot)."""
    from app.render.night import render_recap

    rows = [(i + 1, f"player {i}", f"{20 - i}.5", i % 3, 3) for i in range(12)]
    data = {"title": "Game night recap: 11 nimmt!", "subtitle": "Rounds played: 3 · players: 12",
            "podium": [r[:3] for r in rows[:3]], "header": ("#", "Player", "Points", "Wins", "Games"),
            "rows": rows, "highlights_title": "Highlights", "highlights": ["Biggest stack taken: x, 9 cards"] * 4}
    render_recap(data)  # warm the font cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        render_recap(data)
        times.append(1000 * (time.perf_counter() - start))
    print(f"recap image (12 rows, 4 highlights): median {statistics.median(times):.1f} ms over {runs} runs")


if __name__ == "__main__":
    main()
