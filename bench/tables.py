"""What saving before applying costs, and how long a refused save takes.

    .venv/bin/python -m bench.tables            # 2,000 moves
    .venv/bin/python -m bench.tables --moves 500

Through the bot's own TableManager and Store (a temporary database file):

* ``act``: one person's move in a 4-seat 11 nimmt! game (draft with a copy
  of the engine, the engine's checked ``apply``, one write transaction,
  adopt), median and p99 in ms, and moves/s;
* ``draft``: the copy alone (table plus engine), in microseconds;
* a move while another connection holds the write lock: when the slow-save
  hook (the click's deferral) fires and when the refusal comes back, in s.

Figures are printed with the machine's load average (os.getloadavg).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from app.store import open_store
from app.tables.manager import TableError, TableManager, when_slow
from core.games.garbage import engine as garbage
from core.games.nimmt import engine as nimmt

GAMES = {"nimmt": nimmt.Nimmt, "garbage": garbage.Garbage}
COMPUTERS = {"nimmt": nimmt.greedy_player, "garbage": garbage.greedy_player}
PEOPLE = [1001, 1002, 1003, 1004]


async def new_game(m: TableManager, channel: int):
    table = await m.create(guild_id=1, channel_id=channel, game="nimmt", host_id=PEOPLE[0], host_name="p0",
                           seats=4, turn_time=0)
    for user in PEOPLE[1:]:
        await m.join(table, user, f"p{user}")
    await m.start(table, PEOPLE[0])
    return table


async def main(moves: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        store = await open_store(str(path), checkpoint_interval=30.0)
        m = TableManager(store, GAMES, COMPUTERS, computer_delay=0.0)
        channel = 1
        table = await new_game(m, channel)
        rng = random.Random(1)
        times: list[float] = []
        drafts: list[float] = []
        while len(times) < moves:
            if table.status != "playing":
                await m.ended(table)
                channel += 1
                table = await new_game(m, channel)
            seat = table.engine.to_move
            action = nimmt.greedy_player(table.engine, seat, rng)
            t0 = time.perf_counter()
            table.draft(engine=True)
            drafts.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await m.act(table, table.seats[seat].user_id, action)
            times.append(time.perf_counter() - t0)
        times.sort()
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {moves} moves, {channel} games")
        print(f"act (draft + apply + save + adopt): median {statistics.median(times) * 1e3:.3f} ms, "
              f"p99 {times[int(len(times) * 0.99)] * 1e3:.3f} ms, {len(times) / sum(times):,.0f} moves/s")
        print(f"draft (table + engine copy): median {statistics.median(drafts) * 1e6:.1f} us")

        # A move while another connection holds the write lock.
        seen: dict[str, float] = {}
        if table.status != "playing":
            await m.ended(table)
            table = await new_game(m, channel + 1)
        seat = table.engine.to_move
        action = nimmt.greedy_player(table.engine, seat, rng)
        other = sqlite3.connect(str(path), isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        start = time.perf_counter()

        async def hook() -> None:
            seen["deferred"] = time.perf_counter() - start

        when_slow(hook)
        try:
            await m.act(table, table.seats[seat].user_id, action)
        except TableError as error:
            seen[error.code] = time.perf_counter() - start
        other.execute("ROLLBACK")
        other.close()
        print(f"locked elsewhere: deferred after {seen.get('deferred', float('nan')):.2f} s, "
              f"refused (not_saved) after {seen.get('not_saved', float('nan')):.2f} s")
        await m.shutdown()
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=2000)
    logging.basicConfig(level=logging.ERROR)  # the refused save's warning is the expected outcome here
    asyncio.run(main(parser.parse_args().moves))
