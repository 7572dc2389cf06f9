"""Fuzzed interactions against the real bot: every one answered, no traceback in its log.

    python bench/fuzz.py                      # 10,000 interactions, seed 1, 4 senders at a time
    python bench/fuzz.py -n 2000 --seed 7 --concurrency 8

Runs the real bot in this process against the Discord stand-in (the
tests/e2e harness), sets up an evening of games (tests/e2e/fuzz.py: 11 nimmt!,
6 nimmt! and Garbage tables with open hand panels, a lobby, private rules and
leaderboard answers) and sends fuzzed interactions: forged custom_ids in
today's and the old shapes, stale ids, real clicks, slash commands with options
outside what they declare, the same click by several people at once.  Prints
the interactions sent, how many were not answered within 3 s, the tracebacks in
the bot's log (ERROR records carrying an exception or a quoted traceback), the
ERROR and WARNING records by logger, the stand-in's complaints, and the
machine's load.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def run(args: argparse.Namespace) -> int:
    from tests.e2e import LogWatch, running_bot
    from tests.e2e.fuzz import Fuzzer
    from tests.fakediscord import FakeDiscord

    fd = FakeDiscord(keep_history=False)
    await fd.start()
    load_before = os.getloadavg()
    try:
        guild = fd.add_guild("Game Night", locale="en-US")
        tmp = Path(tempfile.mkdtemp(prefix="fuzz-"))
        with LogWatch(logging.WARNING) as logs:
            async with running_bot(fd, tmp / "bot.db", guild, log_level="INFO") as bot:
                fuzzer = Fuzzer(fd, bot, guild, args.seed)
                await fuzzer.setup()
                cpu0, began = time.process_time(), time.perf_counter()
                figures = await fuzzer.run(args.n, args.concurrency)
                wall, cpu = time.perf_counter() - began, time.process_time() - cpu0
                await asyncio.sleep(1.0)  # answers and redraws still under way
        violations = fd.take_violations()
    finally:
        await fd.stop()
    load_after = os.getloadavg()
    logs.records = [r for r in logs.records if not r.name.startswith("fakediscord")]  # the stand-in's own
    tracebacks = logs.tracebacks()
    print(f"interactions sent:           {figures.sent} (seed {args.seed}, {args.concurrency} senders)")
    print("  by kind:                   " + ", ".join(f"{k} {v}" for k, v in sorted(figures.by_kind.items())))
    print(f"unanswered within 3 s:       {figures.unanswered}")
    for line in figures.slow[:5]:
        print(f"    {line}")
    print(f"tracebacks in the bot's log: {len(tracebacks)}")
    for record in tracebacks[:args.show]:
        print(f"    {record.levelname} {record.name}: {record.getMessage()[:160]}")
        if args.verbose:
            print(logging.Formatter().format(record))
    levels = Counter(f"{r.levelname} {r.name}" for r in logs.records)
    if args.verbose:
        for record in logs.records:
            if record not in tracebacks:
                print(f"    {record.levelname} {record.name}: {record.getMessage()[:300]}")
    print("ERROR/WARNING records:       " + (", ".join(f"{k} x{v}" for k, v in levels.most_common()) or "none"))
    kinds = Counter(v.split(":")[0][:70] for v in violations)
    print("stand-in complaints:         " + (", ".join(f"{k} x{v}" for k, v in kinds.most_common(6)) or "none"))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"time:                        {wall:.1f} s, {figures.sent / wall:.0f} interactions/s; "
          f"this process's CPU {cpu:.1f} s (bot and stand-in share it), peak RSS {usage.ru_maxrss / 1024:.0f} MiB")
    print(f"machine load (1/5/15 min):   before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
          f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}, {os.cpu_count()} cores")
    return 1 if tracebacks or figures.unanswered else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=10_000, help="interactions to send")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=4, help="senders at a time")
    parser.add_argument("--show", type=int, default=5, help="tracebacks to name")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each named traceback whole")
    args = parser.parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
