"""Moving to PostgreSQL: ``python bot.py --copy-db postgresql://...`` copies
the SQLite file (finished games, live tables, nights, settings) into an
empty PostgreSQL database; the bot then shows the same boards, ranks and
history, and its live tables carry on.  Also: the same behaviour of both
backends where the database itself enforces it (one active table per
channel, one migration for processes starting together, a server that
cannot be used)."""
from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from app.store import ChannelBusy, GameRecord, PlayerResult, open_store, StoreUnavailable
from app.store import pg_migrations

from tests import ROOT
GUILDS = (10, 11)


def league(n_games: int = 40, seed: int = 3) -> list[GameRecord]:
    rnd = random.Random(seed)
    out = []
    for t in range(1, n_games + 1):
        users = rnd.sample(range(1, 13), rnd.choice((2, 3, 4)))
        places = sorted(rnd.choice([[1, 2, 3, 4], [1, 1, 3, 4], [1, 2, 2, 4]])[:len(users)])
        players = [PlayerResult(u, f"user{u}", seat, rnd.randint(0, 20), p,
                                {"rounds_won": int(p == 1), "bulls_earned": 1, "penalty_rounds": 3})
                   for seat, (u, p) in enumerate(zip(users, places))]
        if t % 7 == 0:
            players.append(PlayerResult(None, "CPU 1", len(players), 30, len(players) + 1, {}))
        out.append(GameRecord(t, GUILDS[t % 2], 5, "nimmt", 100.0, 200.0 + t, t, 3,
                              any(p.user_id is None for p in players), t % 5 != 0, players))
    return out


async def everything(store) -> dict:
    seen: dict = {}
    for guild in (None, *GUILDS):
        for by in ("rating", "wins", "win_rate", "games"):
            full = await store.leaderboard("nimmt", guild, by=by, page_size=1000)
            seen[f"{guild}:{by}"] = full
            seen[f"{guild}:{by}:p1"] = await store.leaderboard("nimmt", guild, by=by, page=1, page_size=3)
            if full.rows:
                seen[f"{guild}:{by}:after"] = await store.leaderboard("nimmt", guild, by=by, page_size=3,
                                                                      after=full.first)
        for user in range(1, 13):
            for by in ("rating", "wins"):
                seen[f"{guild}:{user}:{by}"] = await store.rank(user, "nimmt", guild, by=by)
            seen[f"{guild}:{user}:profile"] = await store.profile(user, "nimmt", guild)
    for user in range(1, 13):
        seen[f"history:{user}"] = await store.history(user, limit=50)
        seen[f"versus:{user}"] = await store.versus(user, 1 + user % 12)
    seen["night_record"] = await store.night_record(3, "nimmt")
    for game_id in (1, 7, 20):
        seen[f"detail:{game_id}"] = await store.game_detail(game_id)
    seen["settings"] = [await store.guild_settings(g) for g in GUILDS]
    seen["nights"] = await store.open_nights()
    seen["night_channel"] = await store.night_in_channel(40)
    seen["tables"] = await store.active_tables()
    seen["closed"] = await store.table(2)
    seen["result"] = await store.table_result(5)
    return seen


def copy_db(database: Path, url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_PATH": str(database), "DISCORD_TOKEN": ""}
    env.pop("DATABASE_URL", None)
    return subprocess.run([sys.executable, str(ROOT / "bot.py"), "--copy-db", url], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


async def test_copy_db_moves_everything_and_the_tables_carry_on(tmp_path, pg_dsn):
    database = tmp_path / "bot.db"
    sqlite = await open_store(str(database), checkpoint_interval=None)
    try:
        for game in league():
            assert await sqlite.record_game(game) is not None
        for t in range(1, 30):  # the tables the games were played at, closed
            await sqlite.create_table(GUILDS[t % 2], 1000 + t, "nimmt", {"n": t})
            await sqlite.close_table(t, "finished")
        live = await sqlite.create_table(10, 30, "nimmt", {"seed": 7, "thread": 9})
        await sqlite.save_table(live, status="playing", meta={"seed": 7, "thread": 9},
                                actions=[(0, "play 5"), (1, "take 2")])
        lobby = await sqlite.create_table(11, 31, "garbage", {"host": 1})
        night = await sqlite.create_night(10, 40, "nimmt", {"round": 1})
        at_night = await sqlite.create_table(10, 40, "nimmt", {"night_id": night})
        await sqlite.create_table(10, 40, "nimmt", {"night_id": night})  # night tables share a channel
        ended = await sqlite.create_night(10, 41, "nimmt", {"round": 3})
        await sqlite.end_night(ended, {"round": 3}, [
            {"user_id": 3, "place": 1, "points": 9.5, "wins": 2, "games": 3},
            {"user_id": 4, "place": 2, "points": 4.0, "wins": 1, "games": 3}])
        await sqlite.set_guild_setting(10, "language", "de")
        await sqlite.set_guild_setting(11, "rate_bot_games", True)
        want = await everything(sqlite)
    finally:
        await sqlite.close()

    done = copy_db(database, pg_dsn)
    assert done.returncode == 0, done.stderr
    assert "Copied" in done.stdout and "40 games" in done.stdout

    pg = await open_store(pg_dsn)
    try:
        assert pg.backend == "postgresql"
        got = await everything(pg)
        assert got.keys() == want.keys()
        for key in want:
            assert got[key] == want[key], key
        assert [t.id for t in got["tables"]] == [live, lobby, at_night, at_night + 1]
        # the live table goes on where it was, under its own id
        table = await pg.table(live)
        assert table.actions == [(0, "play 5"), (1, "take 2")]
        await pg.save_table(live, status="playing", meta=table.meta, actions=[(2, "play 9")], first_index=2)
        assert (await pg.table(live)).actions == [(0, "play 5"), (1, "take 2"), (2, "play 9")]
        with pytest.raises(ChannelBusy):
            await pg.create_table(10, 30, "nimmt", {})
        # new rows continue after the copied ids (a refused insert spends an id: gaps are fine)
        assert await pg.create_table(10, 99, "nimmt", {}) > at_night + 1
        nxt = GameRecord(500, 10, 5, "nimmt", 1.0, 2.0, 1, 1, False, True,
                         [PlayerResult(1, "user1", 0, 0, 1), PlayerResult(2, "user2", 1, 5, 2)])
        assert await pg.record_game(nxt) == 41
        assert await pg.record_game(league()[0]) is None  # recorded before the move: still once
        assert await pg.create_night(10, 42, "nimmt", {}) == ended + 1
        assert await pg.integrity_check() == ["ok"]
    finally:
        await pg.close()

    again = copy_db(database, pg_dsn)  # the target holds data now
    assert again.returncode == 3
    assert "not empty" in again.stderr


async def test_copy_db_refuses_what_it_cannot_use(tmp_path, pg_dsn):
    assert copy_db(tmp_path / "missing.db", pg_dsn).returncode == 1
    await (await open_store(str(tmp_path / "bot.db"), checkpoint_interval=None)).close()
    assert copy_db(tmp_path / "bot.db", "sqlite:///x.db").returncode == 2
    bad = pg_dsn.rsplit("/", 1)[0] + "/no_such_database"
    refused = copy_db(tmp_path / "bot.db", bad)
    assert refused.returncode == 1 and "no_such_database" in refused.stderr


async def test_an_unusable_server_is_store_unavailable(pg_server):
    with pytest.raises(StoreUnavailable) as error:
        await open_store(pg_server.dsn("no_such_database"))
    assert "no_such_database" in error.value.reason
    with pytest.raises(StoreUnavailable):
        await open_store("postgresql://postgres:secret@127.0.0.1:1/x")  # nobody listens on port 1
    with pytest.raises(StoreUnavailable) as error:
        await open_store("postgresql://postgres:secret@127.0.0.1:1/x")
    assert "secret" not in error.value.path


async def test_one_active_table_per_channel_on_postgresql(pg_dsn):
    a, b = await open_store(pg_dsn), await open_store(pg_dsn)  # two processes' pools
    try:
        results = await asyncio.gather(*(s.create_table(1, 77, "nimmt", {}) for s in (a, b) * 4),
                                       return_exceptions=True)
        assert sum(isinstance(r, int) for r in results) == 1
        assert all(isinstance(r, ChannelBusy) for r in results if not isinstance(r, int))
        night = await a.create_night(1, 78, "nimmt", {})
        with pytest.raises(LookupError):
            await b.create_night(1, 78, "nimmt", {})
        first = await a.create_table(1, 78, "nimmt", {"night_id": night})
        second = await b.create_table(1, 78, "nimmt", {"night_id": night})  # night tables are exempt
        assert second == first + 1
        with pytest.raises(LookupError):
            await a.save_table(9999, status="playing", meta={})
        await a.close_table(next(r for r in results if isinstance(r, int)), "finished")
        assert await b.create_table(1, 77, "nimmt", {}) > second  # the channel is free again
    finally:
        await a.close()
        await b.close()


async def test_processes_starting_together_migrate_once(pg_dsn):
    stores = await asyncio.gather(*(open_store(pg_dsn) for _ in range(4)))
    try:
        conn = await asyncpg.connect(pg_dsn)
        try:
            assert await conn.fetchval("SELECT count(*) FROM schema_version") == 1
            assert await pg_migrations.user_version(conn) == pg_migrations.LATEST
        finally:
            await conn.close()
    finally:
        for s in stores:
            await s.close()


async def test_a_write_waits_for_a_lock_at_most_its_timeout(pg_dsn):
    """Like SQLite's busy timeout: a save that meets a row locked elsewhere
    fails after LOCK_TIMEOUT_MS (the click is told "not saved"), and works
    once the lock is gone."""
    store = await open_store(pg_dsn)
    other = await asyncpg.connect(pg_dsn)
    try:
        table = await store.create_table(1, 2, "nimmt", {})
        tx = other.transaction()
        await tx.start()
        await other.execute("UPDATE tables SET updated_at = 0 WHERE id = $1", table)
        with pytest.raises(asyncpg.LockNotAvailableError):
            await store.save_table(table, status="playing", meta={"x": 1})
        await tx.rollback()
        await store.save_table(table, status="playing", meta={"x": 1})
        assert (await store.table(table)).meta == {"x": 1}
    finally:
        await other.close()
        await store.close()


def test_a_database_url_that_cannot_be_used_stops_the_bot_with_one_clear_line(pg_server):
    url = pg_server.dsn("no_such_database").replace("postgres@", "postgres:hunter2@")
    env = {**os.environ, "DISCORD_TOKEN": "not-used", "DATABASE_URL": url}
    run = subprocess.run([sys.executable, str(ROOT / "bot.py")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 1
    own = [line for line in run.stderr.splitlines() if "discord.client" not in line]
    assert len(own) == 1 and own[0].startswith("Cannot use the PostgreSQL database"), run.stderr
    assert "no_such_database" in own[0] and "hunter2" not in run.stderr
    bad = subprocess.run([sys.executable, str(ROOT / "bot.py")], cwd=ROOT, capture_output=True, text=True,
                         env={**env, "DATABASE_URL": "mysql://x/y"}, timeout=60)
    assert bad.returncode == 2 and "DATABASE_URL" in bad.stderr
