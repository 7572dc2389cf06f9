"""Strength and speed of the computer players (issue 11).

Plays full games (every round / hand) in one process, so on one core, and
prints for each match the tested player's win share (ties split; the fair
share is 1/seats) with a 95% interval, for 11 nimmt! the mean penalty per
round, and the time per decision of every level (median and p99), with the
machine load before and after.

    .venv/bin/python bench/ai.py                    # the full table (about an hour on a quiet core)
    .venv/bin/python bench/ai.py --games 20 --garbage-games 200 --garbage-hard-games 40   # a few minutes
    .venv/bin/python bench/ai.py --only nimmt --match hard:normal --games 400

The tested player sits in every seat in turn (game i: seat i mod seats); all
matches use the same table seeds.  "greedy" and "random" are the engines' own
``greedy_player`` / ``random_player`` (today's computers); easy / normal /
hard are ``core.ai``, deciding from the seat's view and the public events
only.  Hard runs as in the bot: at most ``--worlds`` simulated worlds and at
most ``--budget`` seconds per decision (``--budget 0`` for no time limit:
then every run gives the same games).
"""
from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import ai
from core.games.garbage import engine as garbage
from core.games.nimmt import engine as nimmt
from core.games.take6 import engine as take6
from core.protocol import to_act

NIMMT_MATCHES = [("hard", "normal"), ("hard", "greedy"), ("normal", "random"), ("normal", "greedy"),
                 ("easy", "random")]
GARBAGE_MATCHES = [("easy", "random"), ("normal", "random"), ("hard", "random"), ("hard", "normal")]
TAKE6_MATCHES = [("hard", "normal"), ("normal", "random"), ("easy", "random")]
MODULES = {"nimmt": nimmt, "garbage": garbage, "take6": take6}
ENGINES = {"nimmt": nimmt.Nimmt, "garbage": garbage.Garbage, "take6": take6.Take6}


class Players:
    """Chooses moves by level and keeps the time of every decision."""

    def __init__(self, game: str, worlds: int, budget: float | None) -> None:
        self.game = game
        self.module = MODULES[game]
        self.worlds = worlds
        self.budget = budget
        self.times: dict[str, list[float]] = {}

    def move(self, level: str, g: Any, seat: int, history: list[dict[str, Any]], rng: random.Random) -> Any:
        started = time.perf_counter()
        if level == "random":
            action = self.module.random_player(g, seat, rng)
        elif level == "greedy":
            action = self.module.greedy_player(g, seat, rng)
        elif level == "rule":  # the engine's own normal player (6 nimmt!'s computer before the levels)
            action = self.module.normal_player(g, seat, rng)
        else:
            k = ai.know(self.game, g.view(seat), history)
            action = ai.decide(self.game, k, level, rng, sims=self.worlds if level == "hard" else None,
                               budget=self.budget).action
        self.times.setdefault(level, []).append(time.perf_counter() - started)
        return action


def play(cls: type, players: Players, levels: list[str], seed: int) -> tuple[Any, int]:
    g = cls.new(len(levels), seed)
    history: list[dict[str, Any]] = []
    rng = random.Random(seed)
    while not g.over:
        for seat in sorted(to_act(g)):  # (6 nimmt!: everyone chooses; a later seat sees only *that* one chose)
            history += g.apply(seat, players.move(levels[seat], g, seat, history, rng))
    return g.result, g.result.rounds


def interval(values: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% interval (normal approximation)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, float("nan")
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def match(game: str, seats: int, me: str, opponent: str, games: int, seed: int, players: Players) -> dict[str, Any]:
    cls = ENGINES[game]
    shares, mine, theirs = [], [], []
    started = time.perf_counter()
    for i in range(games):
        pos = i % seats
        levels = [opponent] * seats
        levels[pos] = me
        result, rounds = play(cls, players, levels, seed + i)
        shares.append(1.0 / len(result.winners) if pos in result.winners else 0.0)
        if game != "garbage":
            mine.append(result.scores[pos] / rounds)
            theirs.append(statistics.fmean(s for p, s in enumerate(result.scores) if p != pos) / rounds)
    out = {"game": game, "seats": seats, "me": me, "opponent": opponent, "games": games,
           "share": interval(shares), "seconds": time.perf_counter() - started}
    if mine:
        out["penalty"] = interval(mine)
        out["their_penalty"] = statistics.fmean(theirs)
    return out


def report(row: dict[str, Any]) -> str:
    share, half = row["share"]
    text = (f"| {row['game']} | {row['seats']} | {row['me']} vs {row['seats'] - 1} {row['opponent']} | {row['games']} "
            f"| {100 * share:.1f}% ± {100 * half:.1f} (fair {100 / row['seats']:.0f}%) |")
    if "penalty" in row:
        pen, pen_half = row["penalty"]
        text += f" {pen:.2f} ± {pen_half:.2f} (others {row['their_penalty']:.2f}) |"
    else:
        text += " - |"
    return text + f" {row['seconds']:.0f} s |"


def timing(players: Players) -> list[str]:
    lines = []
    for level, times in sorted(players.times.items()):
        times = sorted(times)
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        lines.append(f"| {players.game} | {level} | {len(times)} | {1000 * statistics.median(times):.3f} ms "
                     f"| {1000 * p99:.3f} ms | {1000 * times[-1]:.1f} ms |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="11 nimmt! games per match")
    parser.add_argument("--garbage-games", type=int, default=1000, help="Garbage games per match without hard")
    parser.add_argument("--garbage-hard-games", type=int, default=300, help="Garbage games per match with hard")
    parser.add_argument("--take6-games", type=int, default=200, help="6 nimmt! games per match (to 66 points)")
    parser.add_argument("--take6-seats", type=int, action="append", default=[])
    parser.add_argument("--worlds", type=int, default=ai.HARD_WORLDS, help="hard: simulated worlds per decision")
    parser.add_argument("--budget", type=float, default=ai.DEFAULT_BUDGET,
                        help="hard: seconds per decision at most (0: no limit)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=["nimmt", "garbage", "take6"])
    parser.add_argument("--match", action="append", default=[],
                        help="only these matches, e.g. hard:normal (repeatable)")
    parser.add_argument("--garbage-seats", type=int, action="append", default=[])
    args = parser.parse_args(argv)
    budget = args.budget if args.budget > 0 else None
    chosen = {tuple(m.split(":")) for m in args.match}

    def wanted(m: tuple[str, str]) -> bool:
        return not chosen or m in chosen

    print(f"# bench/ai.py  python {sys.version.split()[0]}  one process (one core)  "
          f"hard: {args.worlds} worlds, budget {args.budget} s  load {os.getloadavg()}")
    print("| game | seats | match | games | win share, 95% interval | penalty per round or deal (tested seat) | time |")
    print("|---|---|---|---|---|---|---|")
    timings: list[str] = []
    if args.only in (None, "nimmt"):
        players = Players("nimmt", args.worlds, budget)
        for me, opponent in NIMMT_MATCHES:
            if wanted((me, opponent)):
                print(report(match("nimmt", 4, me, opponent, args.games, args.seed, players)), flush=True)
        timings += timing(players)
    if args.only in (None, "garbage"):
        for seats in args.garbage_seats or [2, 4]:
            players = Players("garbage", args.worlds, budget)
            for me, opponent in GARBAGE_MATCHES:
                if wanted((me, opponent)):
                    games = args.garbage_hard_games if "hard" in (me, opponent) else args.garbage_games
                    print(report(match("garbage", seats, me, opponent, games, args.seed, players)), flush=True)
            timings += [line.replace("| garbage |", f"| garbage {seats} seats |") for line in timing(players)]
    if args.only in (None, "take6"):
        for seats in args.take6_seats or [4, 6]:
            players = Players("take6", args.worlds, budget)
            for me, opponent in TAKE6_MATCHES:
                if wanted((me, opponent)):
                    print(report(match("take6", seats, me, opponent, args.take6_games, args.seed, players)), flush=True)
            timings += [line.replace("| take6 |", f"| take6 {seats} seats |") for line in timing(players)]
    print()
    print("| game | level | decisions | median | p99 | max |")
    print("|---|---|---|---|---|---|")
    for line in timings:
        print(line)
    print(f"# load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
