"""How fast a click is acknowledged at one table while hard computers think at another.

Runs the real bot against the project's Discord stand-in (``tests/fakediscord``):
table A in one channel seats one person and three *hard* computers (no pause
between computer moves, so they think back to back); table B in another
channel seats two people.  While A plays, a person at B clicks *My hand*
again and again; every acknowledgement latency is kept and split by whether
a hard search was running in its worker thread at that moment.

    .venv/bin/python bench/ai_latency.py            # about a minute
    .venv/bin/python bench/ai_latency.py --clicks 400 --budget 0.15
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from typing import Any
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import make_world
from tests.e2e import nimmt_turn, open_table, running_bot, seat_players


def summary(name: str, values: list[float]) -> str:
    if not values:
        return f"| {name} | 0 | - | - | - |"
    values = sorted(values)
    p99 = values[min(len(values) - 1, int(0.99 * len(values)))]
    return (f"| {name} | {len(values)} | {1000 * statistics.median(values):.1f} ms | {1000 * p99:.1f} ms "
            f"| {1000 * values[-1]:.1f} ms |")


async def run(clicks: int, budget: float) -> None:
    searching = 0
    searches: list[float] = []
    during: list[float] = []
    idle: list[float] = []
    async with make_world(edit_rate=(10_000, 1.0)) as world:
        fd = world.fd
        ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo")
        with tempfile.TemporaryDirectory() as tmp:
            async with running_bot(fd, Path(tmp) / "bot.db", world.guild, computer_delay=0.0,
                                   ai_budget=budget) as bot:
                players = bot.tables.players
                think = players.think

                async def timed_think(table: Any, seat: int, level: str) -> Any:
                    nonlocal searching
                    searching += 1
                    started = time.perf_counter()
                    try:
                        return await think(table, seat, level)
                    finally:
                        searching -= 1
                        searches.append(time.perf_counter() - started)

                players.think = timed_think
                a = await open_table(fd, ana, world.channel, "nimmt new", seats=4, turn_time=0)
                await seat_players(a, ana, [], computers=3, level="hard")
                await a.click(ana, a.lobby, f"table:{a.table_id}:start")
                await a.wait_thread()
                other = fd.add_channel(world.guild, "games-b")
                b = await open_table(fd, ben, other, "nimmt new", seats=2, turn_time=0)
                await seat_players(b, ben, [cleo])
                await b.click(ben, b.lobby, f"table:{b.table_id}:start")
                await b.wait_thread()
                await fd.wait_for(b.table_message, timeout=10)
                table_a = bot.tables.get(a.table_id)

                async def ana_plays() -> None:
                    while table_a.status == "playing":
                        if table_a.engine.to_move == 0:
                            await fd.wait_for(a.table_message, timeout=10)
                            await nimmt_turn(a, ana)
                        await asyncio.sleep(0.01)

                player = asyncio.create_task(ana_plays())
                try:
                    for _ in range(clicks):
                        busy = searching > 0
                        r = await b.click(ben, b.table_message(), f"table:{b.table_id}:hand")
                        (during if busy and searching > 0 else idle).append(r.latency)
                        await asyncio.sleep(0.02)
                        if table_a.status != "playing":
                            break
                finally:
                    player.cancel()
                    await asyncio.gather(player, return_exceptions=True)
    print(f"# bench/ai_latency.py  hard budget {budget} s  load {os.getloadavg()}")
    print("| clicks on table B (My hand) | count | median | p99 | max |")
    print("|---|---|---|---|---|")
    print(summary("while a hard computer at table A searches", during))
    print(summary("while no search runs", idle))
    print(summary("hard searches at table A (thread time)", searches))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=300)
    parser.add_argument("--budget", type=float, default=0.15)
    args = parser.parse_args()
    asyncio.run(run(args.clicks, args.budget))


if __name__ == "__main__":
    main()
