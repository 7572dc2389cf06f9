"""The path of one click, traced: which of the bot's files it runs through and
how often it crosses between ``cogs/`` and ``app/``, from the gateway to the
redrawn table message.

    python bench/click_path.py                     # this checkout
    python bench/click_path.py --root ../before     # another checkout (e.g. an older commit)
    python bench/click_path.py --calls             # also every first call into a bot file, in order

The real bot (``CardBot``, in this process) plays against the Discord stand-in
(``tests/fakediscord``): a two-player Garbage table is opened, joined and
started through slash commands and clicks; then the player to move clicks
*Draw from the stock* (``garbage.draw``) on the table message while
``sys.setprofile`` watches, until the stand-in sees the table message edited.

Counted: every function of the bot (``bot.py``, ``app/``, ``cogs/``,
``core/``; not the stand-in, not discord.py, not asyncio) entered for the
first time during the click, with the nearest bot function up its call chain
(``f_back``, skipping library frames) as its caller; a coroutine counts when
it first runs, not at each resumption.  A *crossing* is such a call whose
caller is in ``cogs/`` and callee in ``app/``, or the other way round.  Code
run by worker processes (the picture, ``app/render/pool.py``) and threads
(aiosqlite) is not seen; both versions draw in a worker.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any

LAYERS = ("app", "cogs", "core")
#: what every string goes through (translation, escaping): crossings into them are counted apart
TEXT_HELPERS = ("app/i18n/", "app/text.py")


def layer(root: Path, filename: str) -> str | None:
    """``bot.py``, ``app``, ``cogs``, ``core`` for a file of the bot under ``root``, else None."""
    try:
        relative = Path(filename).resolve().relative_to(root)
    except ValueError:
        return None
    if relative.parts == ("bot.py",):
        return "bot.py"
    return relative.parts[0] if relative.parts[0] in LAYERS else None


class Tracer:
    """Records the first call of every frame of the bot while installed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seen: set[FrameType] = set()
        self.calls: list[tuple[str, str, str | None, str | None]] = []  # (callee file, callee fn, caller file, fn)
        self.frames: list[tuple[int, int | None]] = []  # (callee frame id, caller frame id), as calls
        self._layers: dict[str, str | None] = {}

    def _layer(self, filename: str) -> str | None:
        if filename not in self._layers:
            self._layers[filename] = layer(self.root, filename)
        return self._layers[filename]

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame in self.seen:
            return
        if self._layer(frame.f_code.co_filename) is None:
            return
        self.seen.add(frame)
        caller = frame.f_back
        while caller is not None and self._layer(caller.f_code.co_filename) is None:
            caller = caller.f_back
        self.calls.append((self.rel(frame.f_code.co_filename), frame.f_code.co_qualname,
                           self.rel(caller.f_code.co_filename) if caller else None,
                           caller.f_code.co_qualname if caller else None))
        self.frames.append((id(frame), id(caller) if caller else None))

    def rel(self, filename: str) -> str:
        return str(Path(filename).resolve().relative_to(self.root))


def side(path: str | None) -> str | None:
    return path.split("/")[0] if path and path.split("/")[0] in ("app", "cogs") else None


async def trace_click(root: Path) -> Tracer:
    from tests.conftest import make_world
    from tests.e2e import open_table, running_bot, seat_players

    async with make_world() as world:
        fd = world.fd
        ana, ben = world.person("ana"), world.person("ben")
        with tempfile.TemporaryDirectory() as tmp:
            async with running_bot(fd, Path(tmp) / "bot.db", world.guild, table_seed=3) as bot:
                table = await open_table(fd, ana, world.channel, "garbage new", seats=2, turn_time=0)
                await seat_players(table, ana, [ben])
                assert (await table.click(ana, table.lobby, f"table.start:{table.table_id}")).ack_type == 7
                await table.wait_thread()
                message = await fd.wait_for(table.table_message, timeout=20)
                live = bot.tables.get(table.table_id)
                await fd.wait_for(lambda: any(re.fullmatch(rf"garbage\.draw:{live.id}:{live.version}",
                                                           b.get("custom_id") or "") for b in message.buttons()),
                                  timeout=20)
                await asyncio.sleep(1)  # the start's narration and pings are out
                mover = {ana.id: ana, ben.id: ben}[live.seats[live.engine.to_move].user_id]
                edits = message.edit_count
                tracer = Tracer(root)
                sys.setprofile(tracer)
                try:
                    result = await fd.click(mover, message, f"garbage.draw:{live.id}:{live.version}")
                    await fd.wait_for(lambda: message.edit_count > edits, timeout=20)
                finally:
                    sys.setprofile(None)
                assert result.ack_type in (6, 7), result
    return tracer


def report(tracer: Tracer, show_calls: bool) -> None:
    files = sorted({callee for callee, _, _, _ in tracer.calls})
    crossing = [side(caller_file) is not None and side(callee_file) is not None and side(caller_file) != side(
        callee_file) for callee_file, _, caller_file, _ in tracer.calls]
    crossings = [(caller_file, caller_fn, callee_file, callee_fn)
                 for (callee_file, callee_fn, caller_file, caller_fn), crosses in zip(tracer.calls, crossing)
                 if crosses]
    print(f"bot functions first entered: {len(tracer.calls)}")
    print(f"files: {len(files)}")
    for name in files:
        print(f"  {name}")
    distinct = list(dict.fromkeys(crossings))
    print(f"cogs<->app crossings: {len(crossings)} calls, {len(distinct)} distinct (caller -> callee), in order:")
    for caller_file, caller_fn, callee_file, callee_fn in distinct:
        print(f"  {caller_file}:{caller_fn} -> {callee_file}:{callee_fn}")
    modules = list(dict.fromkeys((caller_file, callee_file) for caller_file, _, callee_file, _ in crossings))
    print(f"distinct file pairs crossed: {len(modules)}")
    for caller_file, callee_file in modules:
        print(f"  {caller_file} -> {callee_file}")
    control = [c for c in distinct if not any(c[2].startswith(h) or c[0].startswith(h) for h in TEXT_HELPERS)]
    print(f"distinct crossings not counting the text helpers ({', '.join(TEXT_HELPERS)}): {len(control)}")
    if show_calls:
        print("calls (callee <- caller):")
        for callee_file, callee_fn, caller_file, caller_fn in tracer.calls:
            print(f"  {callee_file}:{callee_fn} <- {caller_file}:{caller_fn}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent),
                    help="the checkout whose bot is traced (default: this one)")
    ap.add_argument("--calls", action="store_true", help="print every first call into a bot file")
    args = ap.parse_args()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    commit = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    print(f"checkout: {commit.stdout.strip()[:72]}")
    report(asyncio.run(trace_click(root)), args.calls)


if __name__ == "__main__":
    main()
