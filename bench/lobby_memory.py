"""Memory kept per closed table: lobbies opened and cancelled, over and over.

    python bench/lobby_memory.py                        # 10,000 cycles, figures every 1,000
    python bench/lobby_memory.py --cycles 2000 --every 250
    python bench/lobby_memory.py --cycles 600 --trace   # also: what grew, by allocating line

Runs the real bot in this process against the Discord stand-in (the tests/e2e
harness).  One cycle is what a player does: ``/nimmt new`` in a channel, then
*Cancel* on the lobby.  After a warm-up (first-time caches are no table's) it
prints, every ``--every`` cycles: the process's RSS, the memory SQLite's own
allocator holds (``sqlite3_memory_used``) and how much of it is page cache,
the database's
size on disk (file and WAL), the entries of the bot's containers that grew
since the warm-up (every dict, list, set and deque the collector tracks,
the stand-in's left out), and the bot's per-table structures
(tests/e2e/table_state.py).  The RSS includes the stand-in, which keeps every
message and request it saw: the other figures are the bot's alone.

``--cache-mib 1`` runs the store with a smaller page cache per connection:
SQLite's heap then stops growing once the caches are full.

``--trace`` compares two tracemalloc snapshots (slow): Python allocations that
grew, by the newest line in the bot's code.
"""
from __future__ import annotations

import argparse
import asyncio
import ctypes
import ctypes.util
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from typing import Any
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.table_memory import where  # noqa: E402

KEEP = [tracemalloc.Filter(False, "*/tests/*", all_frames=True), tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "*/aiohttp/web_*", all_frames=True)]  # the stand-in and its web server


def sqlite_memory() -> int | None:
    """Bytes SQLite's allocator holds in this process (all connections), if the library says."""
    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return None
    library = ctypes.CDLL(name)
    library.sqlite3_memory_used.restype = ctypes.c_int64
    return int(library.sqlite3_memory_used())


def sqlite_page_cache() -> int | None:
    """Bytes of SQLite's page caches taken from the heap (``SQLITE_STATUS_PAGECACHE_OVERFLOW``)."""
    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return None
    current, highest = ctypes.c_int64(), ctypes.c_int64()
    if ctypes.CDLL(name).sqlite3_status64(2, ctypes.byref(current), ctypes.byref(highest), 0) != 0:
        return None
    return int(current.value)


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def containers(skip: set[int]) -> dict[int, tuple[int, object]]:
    """Every container the collector tracks, by id: (its length, itself)."""
    out: dict[int, tuple[int, object]] = {}
    for obj in gc.get_objects():
        if id(obj) in skip:
            continue
        try:
            if isinstance(obj, (dict, list, set)) or type(obj).__name__ in ("deque", "OrderedDict", "defaultdict"):
                out[id(obj)] = (len(obj), obj)  # type: ignore[arg-type]  # a container (checked above)
        except TypeError:
            pass
    return out


def stand_in_parts(fd: object) -> set[int]:
    """The stand-in's own containers (its messages, requests, gateway sessions' replay buffers)."""
    ids = {id(value) for value in vars(fd).values()}
    for session in getattr(fd, "_sessions", {}).values():
        ids.update(id(value) for value in vars(session).values())
    ids.update(id(messages) for messages in getattr(fd, "_channel_messages", {}).values())
    return ids


async def run(args: argparse.Namespace) -> None:
    from tests.e2e import open_table, running_bot
    from tests.e2e.table_state import per_table_state
    from tests.fakediscord import FakeDiscord

    if args.cache_mib is not None:  # SQLite's page cache per connection, instead of the store's default
        import app.store

        opened = app.store.open_store  # (the bot's open_database looks it up when it runs)

        async def open_with_cache(target: str, **options: Any) -> app.store.Store:
            return await opened(target, **{"cache_mib": args.cache_mib, **options})

        app.store.open_store = open_with_cache
    fd = FakeDiscord(edit_rate=(10_000, 1.0), keep_history=False)
    await fd.start()
    try:
        guild = fd.add_guild("Game Night", locale="en-US")
        channel = fd.add_channel(guild, "games")
        host = fd.add_user("host")
        fd.add_member(guild, host)
        tmp = Path(tempfile.mkdtemp(prefix="lobby-memory-"))
        database = tmp / "bot.db"
        async with running_bot(fd, database, guild) as bot:

            async def cycle() -> None:
                t = await open_table(fd, host, channel, "nimmt new", seats=4)
                r = await t.click(host, t.lobby, f"table.cancel:{t.table_id}")
                assert r.ack_type == 7, r

            def on_disk() -> int:
                return sum(p.stat().st_size for p in tmp.iterdir() if p.name.startswith(database.name))

            for _ in range(args.warmup):
                await cycle()
            await asyncio.sleep(0.5)
            gc.collect()
            base = (rss(), sqlite_memory(), on_disk())
            before = containers(stand_in_parts(fd))
            if args.trace:
                tracemalloc.start(args.frames)
                first = tracemalloc.take_snapshot()
            print(f"after {args.warmup} cycles of warm-up: RSS {base[0] / 2**20:.1f} MiB, SQLite "
                  f"{(base[1] or 0) / 2**20:.2f} MiB, database {base[2] / 2**20:.2f} MiB")
            print(f"{'cycles':>7} {'RSS MiB':>8} {'SQLite MiB':>10} {'cache MiB':>9} {'db MiB':>7} {'s':>6}  "
                  "bot containers that grew (entries)  /  per-table structures (non-empty)")
            started = time.perf_counter()
            done = 0
            while done < args.cycles:
                for _ in range(min(args.every, args.cycles - done)):
                    await cycle()
                    done += 1
                await asyncio.sleep(0.2)
                gc.collect()
                now = containers(stand_in_parts(fd))
                grew = sum(n - before[k][0] for k, (n, obj) in now.items()
                           if k in before and before[k][1] is obj and n > before[k][0])
                state = {k: v for k, v in per_table_state(bot).items() if v}
                memory = sqlite_memory()
                cache = sqlite_page_cache()
                print(f"{done:7d} {rss() / 2**20:8.1f} {(memory or 0) / 2**20:10.2f} {(cache or 0) / 2**20:9.2f} "
                      f"{on_disk() / 2**20:7.2f} "
                      f"{time.perf_counter() - started:6.0f}  {grew}  /  {state or '-'}", flush=True)
                if args.verbose:
                    growers = sorted(((n - before[k][0], obj) for k, (n, obj) in now.items()
                                      if k in before and before[k][1] is obj and n > before[k][0]),
                                     key=lambda g: -g[0])[:3]
                    for count, obj in growers:
                        sample = list(obj.items())[-1:] if isinstance(obj, dict) else list(obj)[-1:]  # type: ignore[attr-defined]  # a container
                        print(f"        +{count} {type(obj).__name__}: {repr(sample)[:160]}")
                del now
            if args.trace:
                gc.collect()
                last = tracemalloc.take_snapshot()
                tracemalloc.stop()
    finally:
        await fd.stop()
    if args.trace:
        stats = last.filter_traces(KEEP).compare_to(first.filter_traces(KEEP), "traceback")
        by: Counter[str] = Counter()
        for stat in stats:
            by[where(stat.traceback, True)] += stat.size_diff
        print(f"Python allocations grown since the warm-up (B per cycle, {args.cycles} cycles; deep stacks of "
              "the stand-in may show here):")
        for key, size in by.most_common(args.top):
            if size > 0:
                print(f"  {size / args.cycles:8.2f}  {key}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=1_000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--trace", action="store_true", help="tracemalloc: what grew, by allocating line (slow)")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--cache-mib", type=int, help="SQLite's page cache per connection (the store's default: 64)")
    parser.add_argument("-v", "--verbose", action="store_true", help="name the containers that grew most")
    parser.add_argument("--frames", type=int, default=25)
    args = parser.parse_args(argv)
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
