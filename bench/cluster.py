"""Several bot processes on one SQLite file (a shard cluster on one machine).

    .venv/bin/python -m bench.cluster                 # 1, 2 and 4 processes, 10 s each
    .venv/bin/python -m bench.cluster --processes 4 --seconds 20

Each process opens the bot's own ``Store`` on one shared file in WAL mode
(fresh, in ``bench/out/``) and, for ``--seconds``, records finished 4-player
games (random players from a pool of 20,000, ``--inflight`` recordings at once,
so the store's group commit works as in a busy process) while saving one
table every 20 ms, as a click does (``save_table`` of one action).
Printed: games/s across all processes, a click's save (median, p99, max, in
ms) while the others record, and the recording latency, with the machine's
load (``os.getloadavg``) before and after each run.  The shard-0 process
checkpoints the WAL every 30 s as the bot does; the others do not.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.store import GameRecord, PlayerResult, open_store  # noqa: E402

OUT = ROOT / "bench" / "out"
POOL = 20_000


def game(rng: random.Random, table_id: int, guild: int) -> GameRecord:
    users = rng.sample(range(1, POOL + 1), 4)
    scores = rng.sample(range(0, 80), 4)
    order = sorted(range(4), key=lambda i: scores[i])
    places = {seat: rank + 1 for rank, seat in enumerate(order)}
    players = [PlayerResult(user_id=u, name=f"p{u}", seat=s, score=scores[s], place=places[s],
                            stats={"rounds_won": int(places[s] == 1), "bulls_earned": scores[s], "penalty_rounds": 1})
               for s, u in enumerate(users)]
    return GameRecord(table_id=table_id, guild_id=guild, channel_id=1, game="nimmt", started_at=0.0,
                      ended_at=1.0, seed=table_id, rounds=1, has_bots=False, rated=True, players=players)


def worker(index: int, path: str, seconds: float, inflight: int, rate: float, barrier, out: str) -> None:
    async def run() -> dict:
        store = await open_store(path, checkpoint_interval=30.0 if index == 0 else None)
        rng = random.Random(index)
        table = await store.create_table(index + 1, 10_000 + index, "nimmt", {"v": 0})
        barrier.wait(60)
        stop = time.perf_counter() + seconds
        record_ms: list[float] = []
        save_ms: list[float] = []
        failed = {"record": 0, "save": 0}  # "database is locked": waited longer than busy_timeout
        next_id = (index + 1) * 10_000_000
        gap = inflight / rate if rate else 0.0

        async def recorder() -> None:
            nonlocal next_id
            while time.perf_counter() < stop:
                next_id += 1
                started = time.perf_counter()
                try:
                    await store.record_game(game(rng, next_id, 1000 + index))
                except sqlite3.OperationalError:
                    failed["record"] += 1
                    continue
                record_ms.append((time.perf_counter() - started) * 1000)
                if gap:
                    await asyncio.sleep(max(0.0, gap - (time.perf_counter() - started)))

        async def clicker() -> None:
            step = 0
            while time.perf_counter() < stop:
                started = time.perf_counter()
                try:
                    await store.save_table(table, status="playing", meta={"v": step},
                                           actions=[(0, f"play {step}")], first_index=step)
                except sqlite3.OperationalError:
                    failed["save"] += 1
                else:
                    save_ms.append((time.perf_counter() - started) * 1000)
                    step += 1
                await asyncio.sleep(0.02)

        began = time.perf_counter()
        await asyncio.gather(clicker(), *(recorder() for _ in range(inflight)))
        elapsed = time.perf_counter() - began
        await store.close()
        return {"games": len(record_ms), "elapsed": elapsed, "record_ms": record_ms, "save_ms": save_ms,
                "failed": failed}

    Path(out).write_text(json.dumps(asyncio.run(run())))


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def measure(processes: int, seconds: float, inflight: int, rate: float) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"cluster-{processes}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    asyncio.run(_create(str(path)))
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    outs = [OUT / f"cluster-{processes}-{i}.json" for i in range(processes)]
    procs = [ctx.Process(target=worker, args=(i, str(path), seconds, inflight, rate, barrier, str(outs[i])))
             for i in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode for p in procs):
        raise SystemExit(f"a worker failed: {[p.exitcode for p in procs]}")
    results = [json.loads(o.read_text()) for o in outs]
    games = sum(r["games"] for r in results)
    elapsed = max(r["elapsed"] for r in results)
    saves = [v for r in results for v in r["save_ms"]]
    records = [v for r in results for v in r["record_ms"]]
    return {"processes": processes, "games_per_s": games / elapsed, "games": games,
            "save_median": statistics.median(saves), "save_p99": pct(saves, 0.99), "save_max": max(saves),
            "record_median": statistics.median(records), "record_p99": pct(records, 0.99),
            "locked": sum(r["failed"]["record"] + r["failed"]["save"] for r in results)}


async def _create(path: str) -> None:
    await (await open_store(path, checkpoint_interval=None)).close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--inflight", type=int, default=4, help="recordings in flight per process")
    parser.add_argument("--rate", type=float, nargs="*", default=[50.0, 0.0],
                        help="games/s each process records (0: as fast as it can)")
    args = parser.parse_args()
    print(f"cpus {os.cpu_count()}, {args.seconds:g} s per run, {args.inflight} recordings in flight per process")
    print("processes | rate each | games/s (all) | click save ms median / p99 / max | record ms median / p99 "
          "| locked | load before -> after")
    for rate in args.rate:
        for n in args.processes:
            before = os.getloadavg()[0]
            r = measure(n, args.seconds, args.inflight, rate)
            after = os.getloadavg()[0]
            print(f"{n:9d} | {rate or 'max':>9} | {r['games_per_s']:13.0f} | {r['save_median']:6.2f} / "
                  f"{r['save_p99']:6.2f} / {r['save_max']:7.1f} | {r['record_median']:6.2f} / {r['record_p99']:6.2f}"
                  f" | {r['locked']:6d} | {before:.2f} -> {after:.2f}", flush=True)


if __name__ == "__main__":
    main()
