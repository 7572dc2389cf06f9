"""Several bot processes on one database (a shard cluster): four real
processes open the same new SQLite file, or the same new PostgreSQL
database, at once (migrated once), race to open a table in one channel (one
wins), and record the same games at once; every game is recorded exactly
once, and every board, rank and rating is what a serial run in the same
commit order gives."""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import random
import sqlite3
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from app.store import ChannelBusy, GameRecord, PlayerResult, Store, open_store

PROCESSES = 4
GUILDS = (11 << 22, 12 << 22)
USERS = list(range(5001, 5013))
GAMES = 48
BOARDS = ("rating", "wins", "games", "win_rate")


def games() -> list[GameRecord]:
    rng = random.Random(5)
    out = []
    for table_id in range(1, GAMES + 1):
        users = rng.sample(USERS, rng.choice((2, 3, 4)))
        scores = rng.sample(range(0, 60), len(users))
        order = sorted(range(len(users)), key=lambda i: scores[i])
        places = {seat: rank + 1 for rank, seat in enumerate(order)}
        players = [PlayerResult(user_id=u, name=f"user{u}", seat=seat, score=scores[seat], place=places[seat],
                                stats={"rounds_won": int(places[seat] == 1), "bulls_earned": scores[seat],
                                       "penalty_rounds": 1}) for seat, u in enumerate(users)]
        out.append(GameRecord(table_id=table_id, guild_id=GUILDS[table_id % 2], channel_id=7, game="nimmt",
                              started_at=100.0, ended_at=200.0 + table_id, seed=table_id, rounds=1,
                              has_bots=False, rated=True, players=players))
    return out


def worker(path: str, order_seed: int, barrier, out: str) -> None:  # runs in its own process
    async def run() -> dict:
        barrier.wait(60)  # all four open the new file together
        store = await open_store(path, checkpoint_interval=None)
        try:
            barrier.wait(60)
            try:
                table = await store.create_table(GUILDS[0], 777, "nimmt", {"host_id": order_seed})
            except ChannelBusy:
                table = None
            todo = games()
            random.Random(order_seed).shuffle(todo)
            barrier.wait(60)
            recorded = []
            for start in range(0, len(todo), 8):  # bursts: group commits meet the other processes' writes
                chunk = todo[start:start + 8]
                ids = await asyncio.gather(*(store.record_game(g) for g in chunk))
                recorded += [g.table_id for g, game_id in zip(chunk, ids) if game_id is not None]
            return {"table": table, "recorded": recorded}
        finally:
            await store.close()

    Path(out).write_text(json.dumps(asyncio.run(run())))


async def everything(store: Store) -> dict:
    seen: dict[str, Any] = {}
    for guild in (None, *GUILDS):
        for by in BOARDS:
            page = await store.leaderboard("nimmt", guild, by=by, page=0, page_size=50, min_games=1)
            seen[f"{guild}:{by}"] = [(r["rank"], r["user_id"], r["value"], r["games"], r["wins"]) for r in page.rows]
            page = await store.leaderboard("nimmt", guild, by=by, page=1, page_size=3)  # the indexed board
            seen[f"{guild}:{by}:indexed"] = page
            for user in USERS:
                seen[f"{guild}:{user}:{by}:indexed"] = await store.rank(user, "nimmt", guild, by=by)
        for user in USERS:
            seen[f"{guild}:{user}:rank"] = await store.rank(user, "nimmt", guild, min_games=1)
            profile = await store.profile(user, "nimmt", guild)
            seen[f"{guild}:{user}:profile"] = None if profile is None else {
                k: v for k, v in sorted(profile.items()) if isinstance(v, (int, float, str, type(None)))}
    return seen


async def _committed(target: str) -> tuple[int, list[int]]:
    """The schema version and the table ids of the recorded games in id
    (= commit) order; the database's own consistency check passes."""
    if target.startswith("postgresql://"):
        con = await asyncpg.connect(target)
        try:
            version = await con.fetchval("SELECT version FROM schema_version")
            assert await con.fetchval("SELECT count(*) FROM schema_version") == 1  # migrated once
            order = [r[0] for r in await con.fetch("SELECT table_id FROM games ORDER BY id")]
        finally:
            await con.close()
        return version, order
    con = sqlite3.connect(target)
    try:
        version = con.execute("PRAGMA user_version").fetchone()[0]
        order = [row[0] for row in con.execute("SELECT table_id FROM games ORDER BY id")]
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()
    return version, order


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_four_processes_record_the_same_games_once(tmp_path, request, backend):
    fresh = (lambda: request.getfixturevalue("pg_server").new_database()) if backend == "postgresql" else None
    path = fresh() if fresh else str(tmp_path / "shared.db")
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    outs = [tmp_path / f"out{i}.json" for i in range(PROCESSES)]
    procs = [ctx.Process(target=worker, args=(path, i + 1, barrier, str(outs[i]))) for i in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        await asyncio.to_thread(p.join, 90)
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    results = [json.loads(o.read_text()) for o in outs]

    # one process opened the table; the unique index turned the other three away
    assert sorted(r["table"] is not None for r in results) == [False] * (PROCESSES - 1) + [True]
    # every game recorded by exactly one process
    recorded = sorted(t for r in results for t in r["recorded"])
    assert recorded == list(range(1, GAMES + 1))

    version, order = await _committed(path)
    assert sorted(order) == list(range(1, GAMES + 1))

    shared = await open_store(path, checkpoint_interval=None)
    serial = await open_store(fresh() if fresh else str(tmp_path / "serial.db"), checkpoint_interval=None)
    try:
        by_table = {g.table_id: g for g in games()}
        for table_id in order:  # the same games, one process, in the order they were committed
            assert await serial.record_game(by_table[table_id]) is not None
        mine, theirs = await everything(shared), await everything(serial)
        assert mine == theirs
        assert len(mine["None:games"]) == len(USERS)
        assert await shared.integrity_check() == ["ok"]
    finally:
        await shared.close()
        await serial.close()
    assert version > 0


def hold_write_lock(path: str, locked, seconds: float) -> None:  # another process, busy writing
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    con.execute("INSERT INTO guild_settings (guild_id, key, value) VALUES (1, 'language', '\"de\"')")
    locked.set()
    import time

    time.sleep(seconds)
    con.execute("COMMIT")
    con.close()


async def test_a_process_starting_while_another_writes_waits_for_it(tmp_path):
    """Longer than a click's 2 s busy timeout (a migration of a big file, say): the
    starting process waits for the lock instead of giving up on the database."""
    path = str(tmp_path / "shared.db")
    await (await open_store(path, checkpoint_interval=None)).close()
    ctx = multiprocessing.get_context("spawn")
    locked = ctx.Event()
    holder = ctx.Process(target=hold_write_lock, args=(path, locked, 3.0))
    holder.start()
    try:
        assert await asyncio.to_thread(locked.wait, 60)
        started = asyncio.get_running_loop().time()
        store = await open_store(path, checkpoint_interval=None)
        waited = asyncio.get_running_loop().time() - started
        try:
            assert (await store.guild_settings(1))["language"] == "de"  # it saw the other's commit
            await store.set_guild_setting(2, "language", "es")  # and writes normally afterwards
        finally:
            await store.close()
        assert waited > 1.0, "the lock was not held while the store opened"
    finally:
        await asyncio.to_thread(holder.join, 30)
    assert holder.exitcode == 0
