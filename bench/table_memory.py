"""What one live table holds in the bot's memory, by the line that allocated it.

    python bench/table_memory.py               # 40 tables (half 11 nimmt!, half Garbage), 4 seats, 1 computer
    python bench/table_memory.py --tables 100 --top 40

Runs the real bot in this process against the Discord stand-in (the
tests/e2e/__init__.py harness), opens tables the way players do (``/... new``, Join,
Add computer player, Start), waits for their table messages, and compares two
tracemalloc snapshots (before and after, both after ``gc.collect()``).  The
stand-in's own allocations (any stack through ``tests/``) are left out; the
rest is grouped by the newest frame in the bot's code (``core/ app/ cogs/``),
else the newest frame, per table.  Python objects only: tracemalloc sees what
goes through Python's allocators, not the C libraries' (SQLite's page cache).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OURS = ("core/", "app/", "cogs/", "bot.py")


def _rel(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1]
    try:
        return str(Path(filename).resolve().relative_to(ROOT))
    except ValueError:
        return filename.replace(str(Path(os.__file__).parent) + "/", "stdlib:")


def where(traceback: Any, deep: bool) -> str:
    frames = [(_rel(f.filename), f.lineno) for f in traceback]  # oldest first
    newest = f"{frames[-1][0]}:{frames[-1][1]}"
    ours = [f"{name}:{line}" for name, line in reversed(frames) if name.startswith(OURS)]
    if not ours:
        return newest
    if not deep:
        return ours[0]
    return " <- ".join(ours[:3]) + (f" ({newest})" if ours[0] != newest else "")


async def run(args: argparse.Namespace) -> None:
    from tests.conftest import World
    from tests.e2e import open_table, running_bot, seat_players
    from tests.fakediscord import FakeDiscord

    fd = FakeDiscord(edit_rate=(10_000, 1.0))
    await fd.start()
    try:
        guild = fd.add_guild("Game Night", locale="en-US")
        world = World(fd, guild, fd.add_channel(guild, "games"))
        tmp = Path(tempfile.mkdtemp(prefix="table-memory-"))
        async with running_bot(fd, tmp / "bot.db", guild) as bot:
            count = [0]

            async def table(game: str) -> None:
                count[0] += 1
                channel = fd.add_channel(guild, f"t{count[0]}")
                people = [world.person(f"p{count[0]}-{i}") for i in range(3)]
                options = {"rounds": 1} if game == "nimmt" else {}
                t = await open_table(fd, people[0], channel, f"{game} new", seats=4, **options)
                await seat_players(t, people[0], people[1:], computers=1)
                await t.click(people[0], t.lobby, f"table.start:{t.table_id}")
                await t.wait_thread()
                await fd.wait_for(t.table_message, timeout=30)

            for game in ("nimmt", "garbage"):  # warm up: first-time caches are no table's
                await table(game)
            await asyncio.sleep(1)
            gc.collect()
            tracemalloc.start(args.frames)
            before = tracemalloc.take_snapshot()
            for i in range(args.tables):
                await table("nimmt" if i % 2 == 0 else "garbage")
            await asyncio.sleep(args.settle)  # computers' first moves, redraws waiting for the request budget
            gc.collect()
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
            live = sum(1 for t in bot.tables.tables.values() if t.status == "playing")
    finally:
        await fd.stop()
    keep = [tracemalloc.Filter(False, "*/tests/*", all_frames=True), tracemalloc.Filter(False, tracemalloc.__file__),
            tracemalloc.Filter(False, "*/aiohttp/web_*", all_frames=True)]  # the stand-in's web server
    stats = after.filter_traces(keep).compare_to(before.filter_traces(keep), "traceback")
    by: Counter = Counter()
    counts: Counter = Counter()
    for stat in stats:
        key = where(stat.traceback, args.deep)
        by[key] += stat.size_diff
        counts[key] += stat.count_diff
    total = sum(by.values())
    n = args.tables
    print(f"{n} tables opened ({live} playing at the end); Python memory held: {total / n / 1024:.1f} KiB per table")
    for key, size in by.most_common(args.top):
        print(f"  {size / n:8.0f} B  {counts[key] / n:6.1f} blocks  {key}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--settle", type=float, default=8.0, help="seconds to wait after the last table opened")
    parser.add_argument("--frames", type=int, default=25)
    parser.add_argument("--deep", action="store_true", help="name the two callers in our code and the allocating line outside it")
    args = parser.parse_args(argv)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
