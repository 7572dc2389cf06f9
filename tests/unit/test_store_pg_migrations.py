"""PostgreSQL migrations of a database in use (app.store.pg_migrations): an
index on a big table is built with CREATE INDEX CONCURRENTLY after the
migration's transaction, so games keep being recorded meanwhile, and a
build that failed (an INVALID index) is made again by the next start; a
recording of the new code outlasts seasons changed by a process of the old
code during a rolling upgrade."""
from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

import asyncpg

from app.store import GameRecord, PlayerResult, open_store
from app.store import pg_migrations, postgres
from app.store.base import GAME_CODES
from app.store.pg_migrations import LATEST, migrate, user_version
from tests.unit import between_read_and_write

#: a bound on waits that only a broken build makes long (a hang is a failure, not a figure)
HANG = 60.0


def game(table_id: int, ended_at: float, users: tuple[int, int] = (1, 2), guild_id: int = 10) -> GameRecord:
    return GameRecord(
        table_id=table_id, guild_id=guild_id, channel_id=5, game="nimmt", started_at=ended_at - 60.0,
        ended_at=ended_at, seed=table_id, rounds=3, has_bots=False, rated=True,
        players=[PlayerResult(u, f"user{u}", seat, 3 * seat, seat + 1, {"rounds_won": int(seat == 0)})
                 for seat, u in enumerate(users)])


_GAME_ROW = ("INSERT INTO games (table_id, guild_id, channel_id, game, started_at, ended_at, seed, rounds, has_bots,"
             " rated, n_players) ")


async def _filled(dsn: str, version: int) -> asyncpg.Connection:
    """A connection to *dsn* migrated to *version*, with 20,000 games and the
    stats rows of 30 players."""
    conn = await asyncpg.connect(dsn)
    await migrate(conn, target=version)
    await conn.execute(_GAME_ROW + "SELECT g, 10 + g % 7, 5, 'nimmt', g, g + 60, g, 3, false, true, 2"
                                   " FROM generate_series(1, 20000) AS g")
    await conn.execute("INSERT INTO players (user_id, name) SELECT u, 'user' || u FROM generate_series(1, 30) AS u")
    for u in range(1, 31):  # one row a statement (the boards' trigger counts one row at a time)
        await conn.execute("INSERT INTO stats (game, scope, user_id, games, wins, rated_games, mu, sigma)"
                           " VALUES ($1, 10, $2, 5, 1, 5, $3, 3)", GAME_CODES["nimmt"], u, 20.0 + u % 7)
    return conn


async def _writing(dsn: str) -> tuple[asyncpg.Connection, asyncpg.transaction.Transaction]:
    """Another process's recording in flight: a transaction that wrote a game
    and has not committed (CREATE INDEX CONCURRENTLY waits for it)."""
    writer = await asyncpg.connect(dsn)
    tx = writer.transaction()
    await tx.start()
    await writer.execute(_GAME_ROW + "VALUES (50000, 10, 5, 'nimmt', 1.0, 2.0, 1, 3, false, true, 2)")
    return writer, tx


async def _build_waiting(watch: asyncpg.Connection, migrating: asyncio.Task, pid: int, index: str) -> None:
    """Until the migration (on the connection of *pid*) waits for a lock in
    the statement building *index*."""
    async def poll() -> None:
        while not migrating.done():
            if await watch.fetchval("SELECT true FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'"
                                    " AND query LIKE 'CREATE INDEX%' || $2 || ' ON %'", pid, index):
                return
            await asyncio.sleep(0.02)
        migrating.result()
        raise AssertionError(f"the migration finished without waiting to build {index}")
    await asyncio.wait_for(poll(), HANG)


@contextlib.asynccontextmanager
async def _migrating_behind_a_recording(dsn: str, version: int, watch: asyncpg.Connection) -> AsyncIterator[
        tuple[asyncpg.Connection, asyncpg.transaction.Transaction, asyncio.Task[int]]]:
    """A database of *version* (:func:`_filled`) being migrated to the latest while
    another process's recording is in flight (:func:`_writing`), from the moment
    the build of the games' index waits for that recording (seen from *watch*):
    the migrating connection, the recording's transaction, the migration.  On
    exit the migration is cancelled if it still runs and both connections closed."""
    conn = await _filled(dsn, version)
    writer, in_flight = await _writing(dsn)
    migrating = asyncio.create_task(migrate(conn))
    try:
        await _build_waiting(watch, migrating, conn.get_server_pid(), "games_guild_end")
        yield conn, in_flight, migrating
    finally:
        if not migrating.done():
            migrating.cancel()
        for c in (writer, conn):
            await c.close()


async def _valid(conn: asyncpg.Connection, index: str) -> bool | None:
    """Whether *index* is valid (None: there is no index of that name)."""
    return await conn.fetchval("SELECT i.indisvalid FROM pg_index AS i WHERE i.indexrelid = to_regclass($1)", index)


async def test_postgresql_the_index_migrations_build_while_games_are_recorded(pg_dsn):
    """A database of version 4 with games and stats rows, migrated while
    another process's recording is in flight: the migration's transaction
    commits at once and the indexes of ``stats`` (version 5) and ``games``
    (version 9) are built after it; while the build of the games' index
    waits for that recording, a process starting meanwhile opens the store
    without waiting for the build (nor dropping the index being built) and
    records games.  Once the recording in flight commits, the build
    finishes: both indexes valid, version 9 written once, the boards exact."""
    watch = await asyncpg.connect(pg_dsn)
    try:
        async with _migrating_behind_a_recording(pg_dsn, 4, watch) as (_, in_flight, migrating):
            assert await _valid(watch, "games_guild_end") is False  # being built
            assert await _valid(watch, "stats_awake") is True
            assert await user_version(watch) == LATEST

            async def meanwhile() -> list[int | None]:
                other = await open_store(pg_dsn)
                try:
                    return [await other.record_game(game(60000 + n, 90000.0 + n)) for n in range(3)]
                finally:
                    await other.close()

            assert None not in await asyncio.wait_for(meanwhile(), HANG)
            assert not migrating.done()  # the build was held all along
            assert await _valid(watch, "games_guild_end") is False
            await in_flight.commit()
            assert await asyncio.wait_for(migrating, HANG) == LATEST
            assert await _valid(watch, "games_guild_end") is True
            assert await watch.fetch("SELECT version FROM schema_version") == [(LATEST,)]
            assert await watch.fetchval("SELECT count(*) FROM games") == 20004
    finally:
        await watch.close()
    store = await open_store(pg_dsn)
    try:
        assert (await store.profile(1, "nimmt", 10))["games"] == 8
        assert await store.integrity_check() == ["ok"]
    finally:
        await store.close()


async def test_postgresql_an_index_build_that_failed_is_made_again_at_the_next_start(pg_dsn, caplog):
    """The build of the games' index (version 9) cancelled while it waits
    (an administrator's cancel, a ``statement_timeout``): the version is
    written, the index is left INVALID, the process starts without it (the
    failure logged).  The next start drops it and builds it again: one valid
    index of that name, which a season's boundary is looked up with.  No
    index at all (the process died before the build) is built by the next
    start too."""
    watch = await asyncpg.connect(pg_dsn)
    try:
        async with _migrating_behind_a_recording(pg_dsn, 8, watch) as (conn, in_flight, migrating):
            assert await watch.fetchval("SELECT pg_cancel_backend($1)", conn.get_server_pid())
            assert await asyncio.wait_for(migrating, HANG) == LATEST
            assert "building the index games_guild_end failed" in caplog.text
            assert await _valid(watch, "games_guild_end") is False  # left behind, INVALID
            assert await user_version(watch) == LATEST
            assert await watch.fetchval("SELECT pg_try_advisory_lock($1)", pg_migrations.INDEX_LOCK)  # let go of
            await watch.execute("SELECT pg_advisory_unlock($1)", pg_migrations.INDEX_LOCK)
            await in_flight.commit()
        store = await open_store(pg_dsn)  # the next start
        try:
            assert await _valid(watch, "games_guild_end") is True
            assert await watch.fetchval("SELECT count(*) FROM pg_indexes WHERE indexname = 'games_guild_end'") == 1
            plan = "\n".join(r[0] for r in await watch.fetch(
                "EXPLAIN SELECT max(ended_at) FROM games WHERE guild_id = 10 AND ended_at >= 500"))
            assert "games_guild_end" in plan
            assert await watch.fetch("SELECT version FROM schema_version") == [(LATEST,)]
        finally:
            await store.close()
        # a process that died between writing the version and the build left no index at all
        await watch.execute("DROP INDEX games_guild_end")
        await (await open_store(pg_dsn)).close()
        assert await _valid(watch, "games_guild_end") is True
    finally:
        await watch.close()


async def test_postgresql_a_recording_outlasts_seasons_changed_by_a_process_of_the_old_code(pg_dsn, monkeypatch):
    """During a rolling upgrade a process of the code before version 9 ends a
    season and starts the next (``/season end``) without the record lock,
    and so may change the seasons between a recording's read of them and its
    write even when the recording reads them under its locks.  Here it does
    so before every attempt, the first made under the locks included: the
    recording is not failed, it reads the seasons again under the locks and
    counts the game once, in the season holding its end when it is written."""
    store = await open_store(pg_dsn)
    first = await store.create_season(10, "s0", 100.0)
    made = [first]

    async def old_process_ends_and_starts() -> None:  # the old code's statements: no record lock
        conn = await asyncpg.connect(pg_dsn)
        try:
            at = 100.0 + len(made)
            async with conn.transaction():
                await conn.execute("UPDATE seasons SET ends_at = $2 WHERE id = $1", made[-1], at)
            made.append(await conn.fetchval("INSERT INTO seasons (guild_id, name, starts_at) VALUES (10, $1, $2)"
                                            " RETURNING id", f"s{len(made)}", at))
        finally:
            await conn.close()

    # before each read of the seasons up to that of the first attempt under the locks: one
    # read for each optimistic attempt, then the locked attempt's own
    between_read_and_write(monkeypatch, old_process_ends_and_starts, times=postgres.RECORD_ATTEMPTS + 1)
    try:
        assert await store.record_game(game(1, 500.0)) is not None
        assert len(made) == postgres.RECORD_ATTEMPTS + 2
        for season in made[:-1]:
            assert await store.profile(1, "nimmt", season=season) is None
        assert (await store.profile(1, "nimmt", season=made[-1]))["games"] == 1
        assert (await store.profile(1, "nimmt", 10))["games"] == 1
        assert await store.integrity_check() == ["ok"]
    finally:
        await store.close()
