"""What reference cycles a move leaves behind, and who made them.

    python bench/cycles.py                # 40 moves of each game, lobbies, /leaderboard
    python bench/cycles.py --moves 10 --chains 3

Runs the real bot in this process against the Discord stand-in (the
tests/e2e/__init__.py harness), plays some moves of 11 nimmt!, Garbage and 6 nimmt!,
opens and cancels lobbies and looks up /leaderboard and /stats.  Each step
runs with the automatic collector off, then ``gc.collect()`` with
``gc.DEBUG_SAVEALL`` keeps what it found in ``gc.garbage``: counted per step
by type and by the code that allocated each object (tracemalloc; the newest
frame in the bot's own code ``core/ app/ cogs/ bot.py``, else the first frame
outside the standard library, else the allocating file), per move.  The
stand-in lives in the same process: its garbage is counted and named too
(``tests/``), and is not the bot's.  For the bot's own garbage it prints the
cycles: from an object back to itself through ``gc.get_referents``, with the
allocation line of each object.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OURS = ("core/", "app/", "cogs/", "bot.py")
STDLIB = str(Path(os.__file__).parent)


def origin(obj: Any) -> str:
    """Who allocated ``obj``: 'file:line' of the newest frame in our code, else the first outside the stdlib."""
    tb = tracemalloc.get_object_traceback(obj)
    if tb is None:
        return "?"
    frames = list(tb)  # oldest first (most_recent_first=False is the default order)
    for frame in reversed(frames):
        rel = _rel(frame.filename)
        if rel.startswith(OURS):
            return f"{rel}:{frame.lineno}"
    newest = f"{_rel(frames[-1].filename)}:{frames[-1].lineno}"
    for frame in reversed(frames):
        if not frame.filename.startswith(STDLIB) or "site-packages" in frame.filename:
            here = f"{_rel(frame.filename)}:{frame.lineno}"
            return here if frame is frames[-1] else f"{here} ({newest})"
    return f"{_rel(frames[-1].filename)}:{frames[-1].lineno}"


def _rel(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1]
    try:
        return str(Path(filename).resolve().relative_to(ROOT))
    except ValueError:
        return filename.replace(STDLIB + "/", "stdlib:")


def ours(where: str) -> bool:
    return where.startswith(OURS)


def describe(obj: Any) -> str:
    kind = type(obj).__qualname__
    if isinstance(obj, type(describe)):
        return f"function {obj.__qualname__}"
    if type(obj).__name__ == "frame":
        return f"frame {obj.f_code.co_qualname} ({_rel(obj.f_code.co_filename)}:{obj.f_lineno})"
    if type(obj).__name__ == "cell":
        try:
            return f"cell -> {type(obj.cell_contents).__qualname__}"
        except ValueError:
            return "cell (empty)"
    if isinstance(obj, BaseException):
        return f"{kind}({str(obj)[:40]!r})"
    return kind


def cycle_through(start: Any, members: dict[int, Any], limit: int = 12) -> list[Any] | None:
    """A shortest path start -> ... -> start through referents that are garbage too (BFS)."""
    parent: dict[int, int | None] = {id(start): None}
    frontier = [start]
    for _ in range(limit):
        nxt = []
        for obj in frontier:
            for ref in gc.get_referents(obj):
                if ref is start:
                    path = [obj]
                    key = parent[id(obj)]
                    while key is not None:
                        path.append(members[key])
                        key = parent[key]
                    return [start, *reversed(path[:-1])] if len(path) > 1 else [start]
                if id(ref) in members and id(ref) not in parent:
                    parent[id(ref)] = id(obj)
                    nxt.append(ref)
        frontier = nxt
        if not frontier:
            return None
    return None


class Step:
    """One step's collected garbage."""

    def __init__(self, name: str, moves: int, garbage: list[Any]) -> None:
        self.name, self.moves = name, max(1, moves)
        self.by_type: Counter = Counter()
        self.by_origin: Counter = Counter()
        self.ours: list[tuple[Any, str]] = []
        for obj in garbage:
            where = origin(obj)
            self.by_type[type(obj).__qualname__] += 1
            self.by_origin[where] += 1
            if ours(where):
                self.ours.append((obj, where))
        self.total = len(garbage)


async def collect_step(name: str, moves: int, action: Any) -> Step:
    gc.collect()
    gc.garbage.clear()
    gc.disable()
    try:
        await action()
        await asyncio.sleep(0.3)  # let the answers, redraws and computer moves settle
    finally:
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        gc.set_debug(0)
        found = list(gc.garbage)
        gc.garbage.clear()
        gc.enable()
    return Step(name, moves, found)


def report(step: Step, top: int, chains: int) -> None:
    own = len(step.ours)
    print(f"\n== {step.name}: {step.moves} moves/actions; garbage {step.total} objects "
          f"({step.total / step.moves:.1f} per move), made by our code {own} ({own / step.moves:.1f} per move)")
    print("   by type:  " + ", ".join(f"{k} {v}" for k, v in step.by_type.most_common(top)))
    print("   by where it was allocated:")
    for where, count in step.by_origin.most_common(top):
        print(f"     {count:6d}  {where}{'   <- ours' if ours(where) else ''}")
    if not chains:
        return
    unnamed = next((o for o in step._garbage if "(stdlib:" in origin(o)), None)
    if unnamed is not None:  # allocated deep in the standard library: the whole stack once
        tb = tracemalloc.get_object_traceback(unnamed)
        print(f"   a {type(unnamed).__qualname__} allocated in the standard library, its callers outside it (newest last):")
        for frame in [f for f in tb if not f.filename.startswith(STDLIB)][-12:]:
            print(f"       {_rel(frame.filename)}:{frame.lineno}")
    members = {id(obj): obj for obj, _ in step.ours}
    members_all: dict[int, Any] = {}
    for obj, _ in step.ours:
        members_all[id(obj)] = obj
    seen_shapes: Counter = Counter()
    shown = 0
    sampled: Counter = Counter()
    for obj, where in step.ours:
        sampled[where] += 1
        if sampled[where] > 3:  # a few objects of each allocation site are enough
            continue
        cycle = cycle_through(obj, _all_garbage_ids(step, obj))
        if not cycle:
            continue
        shape = " -> ".join(type(o).__qualname__ for o in cycle)
        seen_shapes[shape] += 1
        if seen_shapes[shape] > 1 or shown >= chains:
            continue
        shown += 1
        print(f"   cycle {shown} (from {where}):")
        for o in cycle:
            print(f"       {describe(o):60s} {origin(o)}")
        print("       -> back to the first")
    if seen_shapes:
        print("   cycle shapes (count):")
        for shape, count in seen_shapes.most_common(top):
            print(f"     {count:5d}  {shape[:200]}")
    del members


_GARBAGE_INDEX: dict[str, dict[int, Any]] = {}


def _all_garbage_ids(step: Step, _obj: Any) -> dict[int, Any]:
    return _GARBAGE_INDEX[step.name]


async def run(args: argparse.Namespace) -> list[Step]:
    from tests.conftest import World
    from tests.fakediscord import FakeDiscord
    from tests.e2e import nimmt_turn, open_table, running_bot, seat_players

    steps: list[Step] = []
    tmp = Path(tempfile.mkdtemp(prefix="cycles-"))
    fd = FakeDiscord(edit_rate=(10_000, 1.0))
    await fd.start()
    try:
        guild = fd.add_guild("Game Night", locale="en-US")
        world = World(fd, guild, fd.add_channel(guild, "games"))
        people = [world.person(name) for name in ("ana", "ben", "cleo", "dan")]
        async with running_bot(fd, tmp / "bot.db", world.guild, table_seed=7) as bot:

            async def start(command: str, computers: int, **options: Any) -> Any:
                channel = fd.add_channel(world.guild, command.split()[0])
                t = await open_table(fd, people[0], channel, command, seats=2 + computers, turn_time=0,
                                     **options)
                await seat_players(t, people[0], people[1:2], computers)
                r = await t.click(people[0], t.lobby, f"table.start:{t.table_id}")
                assert r.ack_type == 7, r
                await t.wait_thread()
                await fd.wait_for(t.table_message, timeout=10)
                return t

            def mover(t: Any) -> Any:
                table = bot.tables.get(t.table_id)
                if table.status != "playing":
                    return None
                seat = table.seats[table.engine.to_move]
                return next((u for u in people if u.id == seat.user_id), None)

            async def wait_mover(t: Any) -> Any:
                return await fd.wait_for(lambda: mover(t) or (bot.tables.get(t.table_id).status != "playing"
                                                              and "over"), timeout=10)

            nimmt = await start("nimmt new", 1)
            garbage = await start("garbage new", 1)
            take6 = await start("take6 new", 1)

            async def nimmt_moves(n: int) -> int:
                done = 0
                for _ in range(n):
                    user = await wait_mover(nimmt)
                    if user == "over":
                        break
                    await nimmt_turn(nimmt, user)
                    done += 1
                return done

            async def garbage_moves(n: int) -> int:
                done = 0
                for _ in range(n):
                    user = await wait_mover(garbage)
                    if user == "over":
                        break
                    table = bot.tables.get(garbage.table_id)
                    version = table.version

                    def buttons() -> Any:
                        m = garbage.table_message()
                        ids = [b["custom_id"] for b in m.buttons() if re.fullmatch(
                            rf"garbage\.(draw|discard|jack):{garbage.table_id}:{version}(:\d+)?", b["custom_id"])]
                        return ids and (m, ids)

                    message, ids = await fd.wait_for(buttons, timeout=10)
                    await garbage.click(user, message, ids[-1])
                    done += 1
                return done

            async def take6_moves(n: int) -> int:
                done = 0
                for _ in range(n):
                    table = bot.tables.get(take6.table_id)
                    if table.status != "playing":
                        break
                    acting = [u for u in people[:2] if table.seat_of(u.id) in table.engine.to_act]
                    if not acting:
                        await fd.wait_for(lambda: table.status != "playing" or any(
                            table.seat_of(u.id) in table.engine.to_act for u in people[:2]), timeout=10)
                        continue
                    user = acting[0]
                    r = await take6.click(user, take6.table_message(), f"take6.hand:{take6.table_id}")
                    ids = [b["custom_id"] for b in r.message.buttons()
                           if re.fullmatch(r"take6\.(row|card):.*", b.get("custom_id") or "")]
                    rows = [i for i in ids if i.startswith("take6.row")]
                    await take6.click(user, r.message, (rows or ids)[0])
                    done += 1
                return done

            lobby_channel = fd.add_channel(world.guild, "lobbies")

            async def lobbies(n: int) -> int:
                for _ in range(n):
                    t = await open_table(fd, people[2], lobby_channel, "garbage new", seats=3)
                    r = await t.click(people[2], t.lobby, f"table.cancel:{t.table_id}")
                    assert r.ack_type == 7, r
                return n

            async def lookups(n: int) -> int:
                for i in range(n):
                    r = await fd.slash(people[3], world.channel, "leaderboard", by="games")
                    await r.settled(timeout=10)
                    r = await fd.slash(people[3], world.channel, "stats", user=people[i % 2])
                    await r.settled(timeout=10)
                return 2 * n

            # warm up: first-time caches (imports, fonts, compiled patterns) are not a move's garbage
            await nimmt_moves(2)
            await garbage_moves(2)
            await take6_moves(2)
            await lobbies(1)
            await lookups(1)
            tracemalloc.start(args.frames)  # from here on: what a step allocates is named

            plan = [("11 nimmt! turns", nimmt_moves, args.moves), ("Garbage moves", garbage_moves, args.moves),
                    ("6 nimmt! choices", take6_moves, args.moves), ("lobby open + cancel", lobbies, args.lobbies),
                    ("/leaderboard + /stats", lookups, args.lobbies)]
            for name, fn, n in plan:
                result: dict[str, int] = {}

                async def action(fn: Any = fn, n: int = n) -> None:
                    result["moves"] = await fn(n)

                began = time.perf_counter()
                step = await collect_step(name, 0, action)
                step.moves = max(1, result.get("moves", 0))
                steps.append(step)
                print(f"{name}: {step.moves} in {time.perf_counter() - began:.1f} s, {step.total} garbage objects",
                      file=sys.stderr)
    finally:
        await fd.stop()  # the stand-in's heartbeat checks are not this script's business (tracemalloc is slow)
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=40, help="moves per game")
    parser.add_argument("--lobbies", type=int, default=10, help="lobbies opened and cancelled, lookups")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--frames", type=int, default=12, help="frames tracemalloc keeps per allocation")
    parser.add_argument("--chains", type=int, default=4, help="cycles of our code printed per step")
    args = parser.parse_args(argv)
    steps = asyncio.run(_main(args))
    total = sum(len(s.ours) for s in steps)
    print(f"\ngarbage made by our code in all steps: {total} objects")
    return 0


async def _main(args: argparse.Namespace) -> list[Step]:
    # report inside the run, while the garbage objects are still alive
    original = Step.__init__

    def init(self: Step, name: str, moves: int, garbage: list[Any]) -> None:
        original(self, name, moves, garbage)
        _GARBAGE_INDEX[name] = {id(o): o for o in garbage}
        self._garbage = garbage

    setattr(Step, "__init__", init)  # patched in for the measurement
    steps = await run(args)
    for step in steps:
        report(step, args.top, args.chains)
        step._garbage = []
        _GARBAGE_INDEX.pop(step.name, None)
    return steps


if __name__ == "__main__":
    raise SystemExit(main())
