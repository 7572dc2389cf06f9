"""Benchmark of the persistence layer at scale (app/store/), SQLite and PostgreSQL.

    .venv/bin/python -m bench.store            # 1,000,000 players, 10,000 servers, 10,000,000 results
    .venv/bin/python -m bench.store --small    # 20,000 / 200 / 200,000: a quick run
    .venv/bin/python -m bench.store --scale 0.1                     # 100,000 / 1,000 / 1,000,000
    .venv/bin/python -m bench.store --pg-temp                       # and PostgreSQL beside it (throwaway server)
    .venv/bin/python -m bench.store --database-url postgresql://... # and PostgreSQL on that (empty) database

Fill.  A synthetic league is written once into ``bench/out/`` (gitignored)
and reused while present (``--refill`` rebuilds it); the SQLite figures are
measured on a copy of it, so what they record does not stay in the league.  The schema comes from
``open_store`` (the real migrations); the fill then drops the indexes and
triggers, bulk-inserts players, games and results with ``executemany`` in
one transaction (journal off), aggregates ``stats`` per server and globally
with ``GROUP BY``, recreates the indexes and triggers and rebuilds the
leaderboard buckets with the store's own SQL.  Servers follow a Zipf law
(a few big, many small); 90% of a server's seats come from its own pool of
players, 10% from anywhere.  Ratings are synthetic (a function of win rate
and games, with jitter): replaying openskill over ten million results would
take far longer than the fill and does not change what is measured.

PostgreSQL.  ``--database-url`` (an empty database, or one this benchmark
filled at the same scale: a ``guild_settings`` row of guild 0 marks it;
``--refill`` empties it) or ``--pg-temp`` (a throwaway server from
tests/pg.py's binaries, run with :data:`PG_SETTINGS`: durable, fsync and
synchronous_commit on) gets the SAME league: the SQLite file as it is is
copied with COPY (asyncpg ``copy_records_to_table``) into the schema of the
real migrations, with keys, indexes, foreign keys and the boards' trigger
dropped or disabled during the load and built after it, the buckets rebuilt
with the store's own SQL, then VACUUM ANALYZE.  The server's settings are
printed; the tables and indexes are read into shared buffers (pg_prewarm)
before measuring.

Measure.  Everything below goes through the bot's own ``Store`` (aiosqlite,
or asyncpg over loopback), warm cache, ``--runs`` timed calls each (after
warm-up), reporting median and p99 in milliseconds: recording a finished
4-player game with its rating update, leaderboard pages (first / next /
previous / far, by page number and by keyset cursor; global, the biggest
server and a mid-size server; by rating and by wins), an exact rank, a
profile, a head-to-head (``versus``) of two rivals with thousands of games
(recorded once into the database); then sustained recording in games/s from
1 and from 4 processes at once (each one game at a time, or 32 in flight:
group commit), with failed calls counted (and, on PostgreSQL, the WAL
written per game); their games are drawn as the fill drew the league's,
and one more row draws them all from 1,200 players (a hot set: the games
in flight wait for each other's player locks).

Seasons on.  The fill gives every server an open season and the global
calendar one, from the last quarter of the league's timeline on (their
boards filled as the all-time ones), so every game recorded counts in four
scopes (global, server, the server's season, the global season).  Measured:
the season boards (pages and exact ranks) of the biggest server and of the
global season, and a rollover of every server's season at a calendar
boundary (as the bot's keeper does it, app.seasons: a batch of servers per
transaction, the season after the next made ahead, each ended season's final
standings read and the batch saved closed) with a player clicking through a
board meanwhile.  SQLite first, then PostgreSQL;
the machine's load is printed throughout, and one table of both at the end.
"""
from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import gc
import itertools
import json
import math
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.store.sqlite_migrations import BOARDS, GAME_CODES, REBUILD_BUCKETS, sort_key  # noqa: E402
from app.store import GameRecord, PlayerResult, is_database_url, open_store  # noqa: E402
from app.seasons import ROLL_BATCH, champions, close_ended, current, make_all  # noqa: E402
from app.store.base import SeasonPlan  # noqa: E402

OUT = ROOT / "bench" / "out"
USER_BASE = 100_000_000_000_000_000   # snowflake-sized ids
GUILD_BASE = 900_000_000_000_000_000
# /versus: games of the two rivals added by ``measure`` (each, and together)
RIVALS_A, RIVALS_B, RIVALS_SHARED = 5_000, 4_000, 2_500


def user_id(index: int) -> int:
    return USER_BASE + index * 7919


def guild_id(index: int) -> int:
    return GUILD_BASE + index * 104729


# -- fill -------------------------------------------------------------------------

_AGG_GUILD = """
CREATE TEMP TABLE agg AS
SELECT g.game AS game, g.guild_id AS scope, r.user_id AS user_id,
       COUNT(*) AS games, SUM(r.place = 1) AS wins, SUM(r.score) AS score_sum,
       SUM(coalesce(r.stats ->> '$.penalty_rounds', 0)) AS rounds,
       SUM(coalesce(r.stats ->> '$.rounds_won', 0)) AS rounds_won,
       SUM(coalesce(r.stats ->> '$.bulls_earned', 0)) AS bulls_earned,
       SUM(coalesce(r.stats ->> '$.hands_won', 0)) AS hands_won
FROM game_players AS r JOIN games AS g ON g.id = r.game_id
WHERE r.user_id IS NOT NULL
GROUP BY g.game, g.guild_id, r.user_id
"""
# synthetic rating: better win rate and more games -> higher mu, lower sigma
_INSERT_STATS = """
INSERT INTO stats (game, scope, user_id, games, wins, score_sum, rounds, rounds_won, bulls_earned,
                   hands_won, rated_games, mu, sigma, k_rating, k_wins, k_rate, k_games)
SELECT *, {keys}
FROM (
    SELECT CASE game WHEN 'nimmt' THEN {nimmt} ELSE {garbage} END AS game, scope, user_id, games, wins,
           score_sum, rounds, rounds_won, bulls_earned, hands_won, games AS rated_games,
           25.0 + 12.0 * (CAST(wins AS REAL) / games - 0.3) * (1.0 - exp(-games / 8.0))
                + ((user_id / 7919) * 2654435761 % 1000) / 2000.0 AS mu,
           max(0.9, 8.333 * pow(0.93, games)) AS sigma
    FROM ({source})
    ORDER BY 1, 2, 3
)
"""
_GLOBAL = """
SELECT game, 0 AS scope, user_id, SUM(games) AS games, SUM(wins) AS wins, SUM(score_sum) AS score_sum,
       SUM(rounds) AS rounds, SUM(rounds_won) AS rounds_won, SUM(bulls_earned) AS bulls_earned,
       SUM(hands_won) AS hands_won
FROM agg GROUP BY game, user_id
"""


#: the share of the league's timeline before the seasons start (the last quarter is in them)
SEASON_FROM = 0.75
# a server's season (id = server index + 2) counts its games from the season's start
_AGG_SEASON = (_AGG_GUILD.replace("agg AS", "agg_s AS")
               .replace("g.guild_id AS scope", f"-((g.guild_id - {GUILD_BASE}) / 104729 + 2) AS scope")
               .replace("WHERE r.user_id IS NOT NULL", "WHERE r.user_id IS NOT NULL AND g.ended_at >= {since}"))
_GLOBAL_SEASON = _GLOBAL.replace("0 AS scope", "-1 AS scope").replace("FROM agg ", "FROM agg_s ")


def _places(scores: list[int]) -> list[int]:
    return [1 + sum(o < s for o in scores) for s in scores]


def league_layout(players: int, servers: int) -> tuple[list[float], list[int], list[int]]:
    """The league's servers: cumulative Zipf weights (a game's server is drawn
    by them: a few big, many small), and each server's pool of players (first
    index, size: sized by weight ** 0.7, at least 8)."""
    weights = [1.0 / (g + 1) for g in range(servers)]
    cum = list(itertools.accumulate(weights))
    pool_w = [w ** 0.7 for w in weights]
    scale = players / sum(pool_w)
    sizes = [max(8, int(w * scale)) for w in pool_w]
    over = sum(sizes) - players
    sizes[0] -= over  # the biggest server absorbs rounding
    starts = list(itertools.accumulate([0] + sizes[:-1]))
    return cum, starts, sizes


def league_seats(rnd: random.Random, g: int, starts: list[int], sizes: list[int], players: int) -> set[int]:
    """The 4 players (indexes) of a game in server *g*: 90% of the seats from
    the server's own pool, 10% from anywhere."""
    seats: set[int] = set()
    while len(seats) < 4:
        if rnd.random() < 0.9:
            seats.add(starts[g] + int(rnd.random() * sizes[g]))
        else:
            seats.add(int(rnd.random() * players))
    return seats


def fill(path: Path, players: int, servers: int, results: int, seed: int = 1, page_size: int = 4096) -> None:
    """Write the synthetic league into *path* (sync sqlite3: a setup step, no event loop)."""
    t0 = time.perf_counter()
    for suffix in ("", "-wal", "-shm", ".done"):
        Path(str(path) + suffix).unlink(missing_ok=True)

    async def create() -> None:
        s = await open_store(str(path), checkpoint_interval=None, page_size=page_size)
        await s.close()

    asyncio.run(create())
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -4000000")
    db.execute("PRAGMA temp_store = MEMORY")
    db.execute("PRAGMA foreign_keys = OFF")
    saved = db.execute(
        "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND sql IS NOT NULL"
    ).fetchall()
    db.execute("BEGIN")
    for kind, name, _ in saved:
        db.execute(f"DROP {kind.upper()} {name}")

    rnd = random.Random(seed)
    cum, starts, sizes = league_layout(players, servers)
    print(f"fill: {players:,} players, {servers:,} servers (biggest pool {sizes[0]:,}), "
          f"{results:,} results -> {path}", flush=True)

    db.executemany("INSERT INTO players (user_id, name) VALUES (?, ?)",
                   ((user_id(i), f"player{i}") for i in range(players)))
    n_games = results // 4
    chunk = 50_000
    end_time = 1_700_000_000.0
    game_id = 0
    for base in range(0, n_games, chunk):
        count = min(chunk, n_games - base)
        guilds = [bisect.bisect_left(cum, rnd.random() * cum[-1]) for _ in range(count)]
        game_rows, result_rows = [], []
        for g in guilds:
            game_id += 1
            nimmt = rnd.random() < 0.5
            seats = league_seats(rnd, g, starts, sizes, players)
            rounds = rnd.randint(2, 6) if nimmt else rnd.randint(3, 9)
            scores = [rnd.randint(0, 30) for _ in range(4)] if nimmt else [rnd.randint(0, 6) for _ in range(4)]
            if not nimmt:
                scores[rnd.randrange(4)] = 0
            places = _places(scores)
            ended = end_time + game_id * 10.0
            game_rows.append((game_id, game_id, guild_id(g), 1, "nimmt" if nimmt else "garbage", ended - 900,
                              ended, game_id, rounds, 0, 1, 4))
            for seat, (p, score, place) in enumerate(zip(seats, scores, places)):
                if nimmt:
                    stats = (f'{{"rounds_won":{int(place == 1) + rnd.randint(0, 1)},'
                             f'"bulls_earned":{rnd.randint(0, 2)},"penalty_rounds":{rounds}}}')
                else:
                    stats = f'{{"hands_won":{rnd.randint(0, rounds // 2)}}}'
                result_rows.append((game_id, seat, user_id(p), f"player{p}", score, place, stats))
        db.executemany("INSERT INTO games (id, table_id, guild_id, channel_id, game, started_at, ended_at, seed,"
                       " rounds, has_bots, rated, n_players) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       game_rows)
        db.executemany("INSERT INTO game_players (game_id, seat, user_id, name, score, place, stats)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?)", result_rows)
        done = base + count
        if done % 500_000 < chunk or done == n_games:
            print(f"  {done * 4:,} results  {time.perf_counter() - t0:.0f} s", flush=True)

    db.execute(_AGG_GUILD)
    codes = {"nimmt": GAME_CODES["nimmt"], "garbage": GAME_CODES["garbage"],
             "keys": ", ".join(sort_key(board) for board in BOARDS)}
    db.execute(_INSERT_STATS.format(source="SELECT * FROM agg", **codes))
    db.execute(_INSERT_STATS.format(source=_GLOBAL, **codes))
    db.execute("DROP TABLE agg")
    # seasons on: one open season per server (id g + 2) and the global one (id 1), from
    # SEASON_FROM of the league's timeline on; their boards are the stats rows of scope -id
    since = end_time + n_games * 10.0 * SEASON_FROM
    db.execute("INSERT INTO seasons (id, guild_id, name, starts_at) VALUES (1, 0, 'bench', ?)", (since,))
    db.executemany("INSERT INTO seasons (id, guild_id, name, starts_at) VALUES (?, ?, 'bench', ?)",
                   ((g + 2, guild_id(g), since) for g in range(servers)))
    db.execute(_AGG_SEASON.format(since=repr(since)))
    db.execute(_INSERT_STATS.format(source="SELECT * FROM agg_s", **codes))
    db.execute(_INSERT_STATS.format(source=_GLOBAL_SEASON, **codes))
    db.execute("DROP TABLE agg_s")
    print(f"  stats: {db.execute('SELECT COUNT(*) FROM stats').fetchone()[0]:,} rows  "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    for kind, _, sql in saved:
        if kind == "index":
            db.execute(sql)
    print(f"  indexes  {time.perf_counter() - t0:.0f} s", flush=True)
    for statement in REBUILD_BUCKETS:  # the store's own rebuild, triggers still dropped
        db.execute(statement)
    for kind, _, sql in saved:
        if kind == "trigger":
            db.execute(sql)
    db.execute("COMMIT")
    print(f"  buckets: {db.execute('SELECT COUNT(*) FROM buckets').fetchone()[0]:,} rows, groups: "
          f"{db.execute('SELECT COUNT(*) FROM bucket_groups').fetchone()[0]:,} rows  "
          f"{time.perf_counter() - t0:.0f} s", flush=True)
    db.execute("PRAGMA journal_mode = WAL")
    db.close()
    Path(str(path) + ".done").write_text(json.dumps({"players": players, "servers": servers, "results": results}))
    print(f"fill done in {time.perf_counter() - t0:.0f} s, {path.stat().st_size / 2**20:,.0f} MiB", flush=True)


# -- PostgreSQL: a throwaway server and the fill -------------------------------------

#: the server settings of ``--pg-temp``: durable as in production (fsync,
#: synchronous_commit and full_page_writes on, the defaults), memory for a
#: database of a few GB on a machine that has it, no JIT (it compiles
#: OLTP-sized queries for tens of ms)
PG_SETTINGS = {
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "shared_buffers": "2GB",
    "effective_cache_size": "6GB",
    "maintenance_work_mem": "1GB",
    "work_mem": "16MB",
    "max_wal_size": "8GB",
    "checkpoint_timeout": "15min",
    "jit": "off",
    "max_connections": "100",
    "shared_preload_libraries": "pg_stat_statements",
}
#: the settings the benchmark prints, whichever server it runs on
SHOWN_SETTINGS = ("server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_level",
                  "shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem", "max_wal_size",
                  "checkpoint_timeout", "jit", "random_page_cost")
#: what the fill loads from the SQLite file, parents first
LOADED = ("players", "games", "game_players", "stats", "seasons")
#: the row of ``guild_settings`` that marks a database this benchmark filled
FILL_MARK = (0, "bench.store fill")


def start_pg_temp():
    """A throwaway server (tests/pg.py's binaries and start, these settings)."""
    import atexit

    from tests.pg import PgServer, _free_port

    class BenchServer(PgServer):
        def start(self) -> None:
            out = self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                            "-E", "UTF8", "--locale=C", "--no-sync")
            if out.returncode:
                raise RuntimeError(f"initdb failed: {out.stderr}")
            settings = dict(PG_SETTINGS)
            if not any((self.bin.parent.parent.parent.parent / "share" / "postgresql").glob(
                    "*/extension/pg_stat_statements.control")):
                settings.pop("shared_preload_libraries")
            for _ in range(5):
                self.port = _free_port()
                options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} " + " ".join(
                    f"-c {k}={v}" for k, v in settings.items())
                out = self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log"),
                                "-o", options, "-w", "-t", "60", "start")
                if out.returncode == 0:
                    return
            raise RuntimeError(f"the PostgreSQL server did not start: {out.stderr}\n{self.log()}")

    server = BenchServer()
    server.start()
    atexit.register(server.stop)
    server.psql("CREATE DATABASE bench TEMPLATE template0")
    print(f"--pg-temp: PostgreSQL in {server.folder} on 127.0.0.1:{server.port}", flush=True)
    return server.dsn("bench")


async def pg_settings(dsn: str) -> dict[str, str]:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1)",
                                list(SHOWN_SETTINGS))
    finally:
        await conn.close()
    return dict(rows)


async def pg_filled(dsn: str, scale: dict[str, int]) -> str:
    """'same' if *dsn* holds this benchmark's fill of *scale*, 'empty' if it
    holds no bot rows, else 'other'."""
    import asyncpg

    store = await open_store(dsn)  # migrates an empty database
    await store.close()
    conn = await asyncpg.connect(dsn)
    try:
        mark = await conn.fetchval("SELECT value FROM guild_settings WHERE guild_id = $1 AND key = $2", *FILL_MARK)
        if mark is not None and json.loads(mark) == scale:
            return "same"
        from app.store.pg_migrations import TABLES

        for name in TABLES:
            if await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {name})"):
                return "other"
        return "empty"
    finally:
        await conn.close()


async def pg_fill(path: Path, dsn: str, scale: dict[str, int]) -> None:
    """Copy the filled SQLite league at *path* into *dsn*: the schema from
    ``open_store`` (the real migrations), every table emptied, constraints and
    indexes dropped, COPY (asyncpg ``copy_records_to_table``), then the keys,
    indexes and foreign keys built again, VACUUM ANALYZE."""
    import asyncpg

    from app.store.pg_migrations import TABLES

    t0 = time.perf_counter()
    store = await open_store(dsn)
    await store.close()
    conn = await asyncpg.connect(dsn, command_timeout=None)
    try:
        await conn.execute("SET maintenance_work_mem = '1GB'")
        buckets = await conn.fetchval("SELECT to_regclass('buckets') IS NOT NULL")
        await conn.execute(f"TRUNCATE {', '.join(TABLES + (('buckets',) if buckets else ()))}"
                           " RESTART IDENTITY CASCADE")
        # the boards' counting trigger (if any) waits; the buckets are rebuilt once after the load
        await conn.execute("ALTER TABLE stats DISABLE TRIGGER USER")
        constraints = await conn.fetch("""
            SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid), c.contype::text
            FROM pg_constraint AS c
            WHERE c.connamespace = current_schema()::regnamespace AND c.contype IN ('p', 'u', 'f')
              AND c.conrelid::regclass::text = ANY($1)
            ORDER BY c.contype = 'f' DESC""", list(LOADED))
        indexes = await conn.fetch("""
            SELECT indexname, indexdef FROM pg_indexes
            WHERE schemaname = current_schema() AND tablename = ANY($1)
              AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE contype IN ('p', 'u'))""",
                                   list(LOADED))
        for table, name, _, _ in constraints:   # foreign keys first
            await conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
        for name, _ in indexes:
            await conn.execute(f"DROP INDEX {name}")
        print(f"pg fill: {len(constraints)} constraints and {len(indexes)} indexes dropped -> {dsn}", flush=True)

        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        columns = {
            "players": ("user_id", "name"),
            "games": ("id", "table_id", "guild_id", "channel_id", "game", "started_at", "ended_at", "seed",
                      "rounds", "has_bots != 0", "rated != 0", "n_players"),
            "game_players": ("game_id", "seat", "user_id", "name", "score", "place", "stats"),
            "stats": ("game", "scope", "user_id", "games", "wins", "score_sum", "counters", "rated_games",
                      "mu", "sigma"),
            "seasons": ("id", "guild_id", "name", "starts_at", "ends_at", "meta"),
        }
        bools = {"has_bots != 0", "rated != 0"}
        for name in LOADED:
            cols = columns[name]
            cursor = db.execute(f"SELECT {', '.join(cols)} FROM {name}")
            targets = [c.split(" ")[0] for c in cols]
            flags = [i for i, c in enumerate(cols) if c in bools]
            count = 0
            while True:
                chunk = cursor.fetchmany(100_000)
                if not chunk:
                    break
                if flags:
                    chunk = [tuple(bool(v) if i in flags else v for i, v in enumerate(row)) for row in chunk]
                await conn.copy_records_to_table(name, records=chunk, columns=targets)
                count += len(chunk)
            print(f"  {name}: {count:,} rows  {time.perf_counter() - t0:.0f} s", flush=True)
        db.close()
        for table, name, definition, kind in reversed(constraints):   # keys, then foreign keys
            if kind != "f":
                await conn.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
        for _, definition in indexes:
            await conn.execute(definition)
        print(f"  keys and indexes  {time.perf_counter() - t0:.0f} s", flush=True)
        for table, name, definition, kind in constraints:
            if kind == "f":
                await conn.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
        print(f"  foreign keys checked  {time.perf_counter() - t0:.0f} s", flush=True)
        for name in ("games", "seasons"):
            await conn.execute(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), coalesce(max(id), 0) + 1,"
                               f" false) FROM {name}")
        await conn.execute("ALTER TABLE stats ENABLE TRIGGER USER")
        if buckets:
            from app.store.pg_migrations import REBUILD_BUCKETS

            for statement in REBUILD_BUCKETS:
                await conn.execute(statement)
            print(f"  buckets: {await conn.fetchval('SELECT count(*) FROM buckets'):,} rows  "
                  f"{time.perf_counter() - t0:.0f} s", flush=True)
        groups = await conn.fetchval("SELECT to_regclass('bucket_groups') IS NOT NULL")
        for name in LOADED + (("buckets",) if buckets else ()) + (("bucket_groups",) if groups else ()):
            await conn.execute(f"VACUUM (ANALYZE) {name}")
        await conn.execute("INSERT INTO guild_settings (guild_id, key, value) VALUES ($1, $2, $3)",
                           *FILL_MARK, json.dumps(scale))
        size = await conn.fetchval("SELECT pg_database_size(current_database())")
    finally:
        await conn.close()
    print(f"pg fill done in {time.perf_counter() - t0:.0f} s, {size / 2**20:,.0f} MiB", flush=True)


async def pg_warm(dsn: str) -> str:
    """Read the loaded tables and their indexes into shared buffers."""
    import asyncpg

    conn = await asyncpg.connect(dsn, command_timeout=None)
    t = time.perf_counter()
    try:
        try:
            await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        except asyncpg.PostgresError as error:
            return f"no pg_prewarm ({error})"
        blocks = await conn.fetchval("""
            SELECT sum(pg_prewarm(c.oid)) FROM pg_class AS c
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'i')
              AND (c.relname = ANY($1) OR c.oid IN (SELECT indexrelid FROM pg_index
                                                    WHERE indrelid::regclass::text = ANY($1)))""", list(LOADED))
        return f"pg_prewarm read {blocks * 8 / 1024:,.0f} MiB in {time.perf_counter() - t:.1f} s"
    finally:
        await conn.close()


# -- measure -------------------------------------------------------------------------


class Probe:
    """Plain SQL for the benchmark's own setup and checks (never timed):
    ``$1``-style parameters on both backends (SQLite's ``?1``)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._pg = None
        self._db: sqlite3.Connection | None = None

    async def __aenter__(self) -> "Probe":
        if is_database_url(self.target):
            import asyncpg

            self._pg = await asyncpg.connect(self.target, command_timeout=None)
        else:
            self._db = sqlite3.connect(f"file:{self.target}?mode=ro", uri=True)
        return self

    async def __aexit__(self, *exc) -> None:
        if self._pg is not None:
            await self._pg.close()
        if self._db is not None:
            self._db.close()

    async def execute(self, sql: str, *args) -> None:
        """A write of the setup (SQLite: on a connection of its own)."""
        if self._pg is not None:
            await self._pg.execute(sql, *args)
            return
        with contextlib.closing(sqlite3.connect(self.target, timeout=30)) as db, db:
            db.execute(re.sub(r"\$(\d+)", r"?\1", sql), args)

    async def rows(self, sql: str, *args) -> list[tuple]:
        if self._pg is not None:
            return [tuple(r) for r in await self._pg.fetch(sql, *args)]
        assert self._db is not None
        return self._db.execute(re.sub(r"\$(\d+)", r"?\1", sql), args).fetchall()


async def pg_wal(dsn: str) -> tuple[int, int, int, int, int]:
    """The server's WAL records, full-page images and bytes written so far,
    the database's blocks read from outside shared buffers, and the
    autovacuum workers running now."""
    async with Probe(dsn) as probe:
        ((records, fpi, size),) = await probe.rows("SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal")
        ((read,),) = await probe.rows(
            "SELECT blks_read FROM pg_stat_database WHERE datname = current_database()")
        ((vacuums,),) = await probe.rows(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")
    return int(records), int(fpi), int(size), int(read), int(vacuums)


class TimedWrites:
    """A store whose season writes (``make_seasons``, ``set_seasons_meta``:
    one transaction each) are timed into ``writes``; the rest as it is."""

    def __init__(self, store) -> None:
        self.store = store
        self.writes: list[float] = []

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    async def make_seasons(self, plans):
        t = time.perf_counter()
        try:
            return await self.store.make_seasons(plans)
        finally:
            self.writes.append(time.perf_counter() - t)

    async def set_seasons_meta(self, metas) -> None:
        t = time.perf_counter()
        try:
            await self.store.set_seasons_meta(metas)
        finally:
            self.writes.append(time.perf_counter() - t)


def _report(name: str, samples: list[float]) -> dict[str, float]:
    samples = sorted(samples) or [math.nan]
    med = statistics.median(samples)
    p99 = samples[min(len(samples) - 1, math.ceil(0.99 * len(samples)) - 1)]
    print(f"  {name:<52} median {med * 1e3:7.3f} ms   p99 {p99 * 1e3:7.3f} ms", flush=True)
    return {"median_ms": med * 1e3, "p99_ms": p99 * 1e3}


async def _timed(runs: int, make, warmup: int = 20) -> list[float]:
    """Time ``await make(i)()`` for i in range(runs) after *warmup* untimed calls."""
    for i in range(warmup):
        await make(-1 - i)()
    out = []
    for i in range(runs):
        call = make(i)
        t = time.perf_counter()
        await call()
        out.append(time.perf_counter() - t)
    return out


def warm_os_cache(path: Path) -> float:
    """Read the database file once so that it sits in the OS page cache
    ("warm cache"; this VM drops cached file pages eagerly)."""
    t = time.perf_counter()
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass
    return time.perf_counter() - t


def _load() -> str:
    return f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"


def _record_process(target: str, games: list[GameRecord], in_flight: int, checkpoint: bool, ready, start, out
                    ) -> None:
    """One recording process of the sustained run (multiprocessing target)."""

    async def run() -> None:
        options = {"checkpoint_interval": 1.0 if checkpoint else None, "cache_mib": 256}
        store = await open_store(target, **options)
        gc.collect()
        gc.freeze()
        queue = iter(games)
        lat: list[float] = []
        failed: dict[str, int] = {}

        async def worker() -> None:
            for g in queue:
                t1 = time.perf_counter()
                try:
                    await store.record_game(g)
                except Exception as error:  # counted: what a busy store turns away
                    name = f"{type(error).__name__}: {error}"
                    failed[name] = failed.get(name, 0) + 1
                    continue
                lat.append(time.perf_counter() - t1)

        ready.put(os.getpid())
        await asyncio.to_thread(start.wait)
        t0 = time.time()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        t1 = time.time()
        await store.close()
        out.put((t0, t1, len(lat), lat, failed))

    asyncio.run(run())


def sustained_processes(target: str, games: list[GameRecord], processes: int, in_flight: int
                        ) -> tuple[float, list[float], dict[str, int]]:
    """Record *games* from *processes* processes at once (each *in_flight*
    recordings at a time): games recorded per second from the first start to
    the last end, every recorded call's latency, and the failed calls by
    error (SQLite's busy timeout, a lock timeout)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    ready, out, start = ctx.Queue(), ctx.Queue(), ctx.Event()
    share = [games[i::processes] for i in range(processes)]
    procs = [ctx.Process(target=_record_process, args=(target, share[i], in_flight, i == 0, ready, start, out),
                         daemon=True)
             for i in range(processes)]
    for p in procs:
        p.start()
    import queue

    def collect(q, what: str) -> list:
        got: list = []
        while len(got) < len(procs):
            try:
                got.append(q.get(timeout=1.0))
            except queue.Empty:
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    for p in procs:
                        p.kill()
                    raise RuntimeError(f"a recording process failed {what} (exit {dead[0]}; its error is above)")
        return got

    collect(ready, "to start")
    start.set()
    parts = collect(out, "while recording")
    for p in procs:
        p.join(60)
        if p.exitcode != 0:
            raise RuntimeError(f"a recording process failed (exit {p.exitcode})")
    begin, end = min(p[0] for p in parts), max(p[1] for p in parts)
    failed: dict[str, int] = {}
    for part in parts:
        for name, n in part[4].items():
            failed[name] = failed.get(name, 0) + n
    return sum(p[2] for p in parts) / (end - begin), [x for p in parts for x in p[3]], failed


async def measure(target: str, runs: int, sustained: int, scale: dict[str, int], seed: int = 2
                  ) -> dict[str, dict[str, float]]:
    """Every figure on one backend: *target* is the SQLite file's path or a
    ``postgresql://`` URL (the same league, filled from that file)."""
    rnd = random.Random(seed)
    pg = is_database_url(target)
    if pg:
        print(f"\n== PostgreSQL {target}", flush=True)
        print(f"warm cache: {await pg_warm(target)}; {_load()}", flush=True)
    else:
        print(f"\n== SQLite {target}", flush=True)
        print(f"warm OS cache: read the file in {warm_os_cache(Path(target)):.1f} s; {_load()}", flush=True)
    async with Probe(target) as probe:
        ((next_table,),) = await probe.rows("SELECT coalesce(MAX(table_id), 0) + 1 FROM games")
        guilds = await probe.rows(
            "SELECT scope, COUNT(*) FROM stats WHERE game = 0 AND scope > 0 GROUP BY scope ORDER BY 2 DESC, 1")
        big, mid = guilds[0], guilds[len(guilds) // 20]
        # the same sample on both backends (a seeded pick from the sorted ids)
        samples = {}
        for scope in (0, big[0], mid[0]):
            users = [u for (u,) in await probe.rows(
                "SELECT user_id FROM stats WHERE game = 0 AND scope = $1 AND k_rating IS NOT NULL ORDER BY 1",
                scope)]
            samples[scope] = random.Random(scope).sample(users, min(400, len(users)))
    print(f"measure: biggest server {big[1]:,} nimmt players, mid server {mid[1]:,}; {runs} runs each", flush=True)
    results: dict[str, dict[str, float]] = {}
    store = await open_store(target, checkpoint_interval=None, cache_mib=256)
    # As the bot does once it has started (bot.py): what lives for good is moved
    # out of the garbage collector's way, so full collections stay short.
    gc.collect()
    gc.freeze()
    try:
        counter = itertools.count(next_table)

        def game_for(scope: int, guild: int | None = None, users: list[int] | None = None):
            users = users or rnd.sample(samples[scope], 4)
            places = rnd.choice([[1, 2, 3, 4], [1, 2, 2, 4], [2, 1, 4, 3]])
            return GameRecord(
                table_id=next(counter), guild_id=guild or scope or mid[0], channel_id=1, game="nimmt",
                started_at=time.time() - 600, ended_at=time.time(), seed=rnd.randrange(2**31), rounds=4,
                has_bots=False, rated=True,
                players=[PlayerResult(u, f"player{(u - USER_BASE) // 7919}", s, rnd.randint(0, 30), p,
                                      {"rounds_won": 1, "bulls_earned": 0, "penalty_rounds": 4})
                         for s, (u, p) in enumerate(zip(users, places))],
            )

        # 1. recording (checkpoint between batches, as the background task would)
        await store.checkpoint()
        results["record 4-player game + ratings (big server)"] = _report(
            "record 4-player game + ratings (big server)",
            await _timed(runs, lambda i: (lambda g=game_for(big[0]): store.record_game(g))))
        await store.checkpoint()

        # 2. leaderboards
        boards = [("global", None, 0), ("biggest server", big[0], big[0]), ("mid server", mid[0], mid[0])]
        for label, guild, scope in boards:
            for by in ("rating", "wins"):
                first = await store.leaderboard("nimmt", guild, by=by)
                far_page = first.pages // 2
                tag = f"{label}, {by}"
                print(f"  board {tag}: {first.total:,} entries", flush=True)
                results[f"page first: {tag}"] = _report(
                    f"page 0: {tag}",
                    await _timed(runs, lambda i: (lambda: store.leaderboard("nimmt", guild, by=by, page=0))))
                pages = [rnd.randrange(first.pages) for _ in range(runs + 50)]
                results[f"page far: {tag}"] = _report(
                    f"page random (far, ~{far_page:,}): {tag}",
                    await _timed(runs, lambda i: (lambda p=pages[i]: store.leaderboard(
                        "nimmt", guild, by=by, page=p))))
                mids = [await store.leaderboard("nimmt", guild, by=by, page=p) for p in pages[:40]]
                results[f"page next (keyset): {tag}"] = _report(
                    f"page next (after= cursor): {tag}",
                    await _timed(runs, lambda i: (lambda m=mids[i % 40]: store.leaderboard(
                        "nimmt", guild, by=by, after=m.last))))
                results[f"page previous (keyset): {tag}"] = _report(
                    f"page previous (before= cursor): {tag}",
                    await _timed(runs, lambda i: (lambda m=mids[i % 40]: store.leaderboard(
                        "nimmt", guild, by=by, before=m.first))))
                results[f"page next (number): {tag}"] = _report(
                    f"page next (page=n+1): {tag}",
                    await _timed(runs, lambda i: (lambda m=mids[i % 40]: store.leaderboard(
                        "nimmt", guild, by=by, page=m.page + 1))))
        # 3. exact rank and profile
        for label, guild, scope in boards:
            users = samples[scope]
            for by in ("rating", "wins"):
                results[f"rank: {label}, {by}"] = _report(
                    f"exact rank: {label}, {by}",
                    await _timed(runs, lambda i: (lambda u=rnd.choice(users): store.rank(u, "nimmt", guild, by=by))))
            results[f"profile: {label}"] = _report(
                f"profile (with rating rank): {label}",
                await _timed(runs, lambda i: (lambda u=rnd.choice(users): store.profile(u, "nimmt", guild))))

        # 3b. seasons on: the boards of the biggest server's season and of the global one
        # (the same indexes and bucket counters, scope -id), pages and exact ranks
        now = time.time()
        season_boards = []
        for label, guild in (("global season", 0), ("biggest server's season", big[0])):
            running = current(await store.seasons(guild), now)
            assert running is not None, f"no season running in {guild}"
            async with Probe(target) as probe:
                users = [u for (u,) in await probe.rows(
                    "SELECT user_id FROM stats WHERE game = 0 AND scope = $1 AND k_rating IS NOT NULL ORDER BY 1",
                    -running["id"])]
            season_boards.append((label, running["id"], random.Random(running["id"]).sample(users, min(400, len(users)))))
        for label, sid, users in season_boards:
            for by in ("rating", "wins"):
                first = await store.leaderboard("nimmt", by=by, season=sid)
                tag = f"{label}, {by}"
                print(f"  board {tag}: {first.total:,} entries", flush=True)
                results[f"season page first: {tag}"] = _report(
                    f"season page 0: {tag}",
                    await _timed(runs, lambda i: (lambda: store.leaderboard("nimmt", by=by, season=sid))))
                pages = [rnd.randrange(max(1, first.pages)) for _ in range(runs + 50)]
                results[f"season page far: {tag}"] = _report(
                    f"season page random: {tag}",
                    await _timed(runs, lambda i: (lambda p=pages[i]: store.leaderboard(
                        "nimmt", by=by, page=p, season=sid))))
                mids = [await store.leaderboard("nimmt", by=by, page=p, season=sid) for p in pages[:40]]
                results[f"season page next (keyset): {tag}"] = _report(
                    f"season page next (after= cursor): {tag}",
                    await _timed(runs, lambda i: (lambda m=mids[i % 40]: store.leaderboard(
                        "nimmt", by=by, after=m.last, season=sid))))
                results[f"season rank: {tag}"] = _report(
                    f"season exact rank: {tag}",
                    await _timed(runs, lambda i: (lambda u=rnd.choice(users): store.rank(
                        u, "nimmt", by=by, season=sid))))

        # 4. brute-force check of a few exact ranks (COUNT over the index: slow, exact): the
        # shared place (entries of a better value) and the position (entries ahead)
        async with Probe(target) as probe:
            for scope, season in ((0, None), (big[0], None), (-season_boards[1][1], season_boards[1][1])):
                users = samples[scope][:3] if season is None else season_boards[1][2][:3]
                for u in users:
                    ((rank, position),) = await probe.rows(
                        "SELECT 1 + (SELECT COUNT(*) FROM stats WHERE game = 0 AND scope = $1"
                        "            AND k_rating < substr(me.k, 1, 16) || '0000000000000000'),"
                        "       1 + (SELECT COUNT(*) FROM stats WHERE game = 0 AND scope = $1 AND k_rating < me.k)"
                        " FROM (SELECT k_rating AS k FROM stats WHERE game = 0 AND scope = $1 AND user_id = $2) AS me",
                        scope, u)
                    got = await store.board_place(u, "nimmt", None if season else scope or None, season=season)
                    assert got == (rank, position), (scope, u, got, rank, position)
            print("  exact ranks agree with a brute-force COUNT (9 players, a season's among them)", flush=True)

            # 5. head-to-head (/versus): two rivals with thousands of games each,
            # recorded through the store once per database (group commit)
            rival_a, rival_b = USER_BASE - 7919, USER_BASE - 2 * 7919
            ((have,),) = await probe.rows("SELECT COUNT(*) FROM game_players WHERE user_id = $1", rival_a)
        if have == 0:
            t = time.perf_counter()
            plan = ["ab"] * RIVALS_SHARED + ["a"] * (RIVALS_A - RIVALS_SHARED) + ["b"] * (RIVALS_B - RIVALS_SHARED)
            rnd.shuffle(plan)

            def rival_game(who: str) -> GameRecord:
                base = game_for(rnd.choice([0, big[0], mid[0]]))
                users = [u for u in (rival_a if "a" in who else None, rival_b if "b" in who else None) if u]
                players = [PlayerResult(u, f"rival{i}", i, 0, 1) for i, u in enumerate(users)]
                players += [PlayerResult(p.user_id, p.name, len(players) + j, 0, 1)
                            for j, p in enumerate(base.players[len(users):])]
                scores = [rnd.randint(0, 30) for _ in players]
                places = [1 + sum(o < x for o in scores) for x in scores]
                players = [PlayerResult(p.user_id, p.name, p.seat, sc, pl, p.stats)
                           for p, sc, pl in zip(players, scores, places)]
                return GameRecord(**{**base.__dict__, "game": rnd.choice(["nimmt", "garbage"]), "players": players})

            queue = iter([rival_game(w) for w in plan])

            async def rival_worker() -> None:
                for g in queue:
                    await store.record_game(g)

            await asyncio.gather(*(rival_worker() for _ in range(32)))
            await store.checkpoint()
            print(f"  recorded {len(plan):,} games of two rivals ({RIVALS_A:,} and {RIVALS_B:,} games, "
                  f"{RIVALS_SHARED:,} together) in {time.perf_counter() - t:.1f} s", flush=True)
        plain = samples[0]
        for label, pair, game in (
            (f"rivals, {RIVALS_A:,} and {RIVALS_B:,} games, {RIVALS_SHARED:,} shared", (rival_a, rival_b), None),
            ("rivals, 11 nimmt! only", (rival_a, rival_b), "nimmt"),
            ("rival against a player with few games", (rival_a, None), None),
            ("two random players", (None, None), None),
        ):
            def call(i: int, pair=pair, game=game):
                a = pair[0] or rnd.choice(plain)
                b = pair[1] or rnd.choice(plain)
                return lambda: store.versus(a, b, game)
            results[f"versus: {label}"] = _report(f"versus: {label}", await _timed(runs, call))
        figures = await store.versus(rival_a, rival_b)
        assert sum(f["games"] for f in figures.values()) == RIVALS_SHARED, figures

        # 7. a season rollover of every server at a calendar boundary, as the bot's keeper
        # does it (app.seasons.make_all / close_ended, cogs/seasons.py).  Before it (not
        # timed) every server's season gets its end at the boundary, a second ahead, and
        # the next season is made ahead, as the calendar keeps them.  At the boundary,
        # ROLL_BATCH servers per transaction: the season after the next is made ahead,
        # each ended season's final standings are read (the top 10 of each game) and the
        # batch is saved closed.  Meanwhile a player clicks through the biggest server's
        # board (a page and a rank, every 10 ms): their latency is what a click waits.
        boundary = time.time() + 1.0
        async with Probe(target) as probe:
            servers = [g for (g,) in await probe.rows(
                "SELECT DISTINCT guild_id FROM seasons WHERE guild_id != 0 ORDER BY 1")]
            # (a database measured before holds the seasons it made: they end, or go, too)
            await probe.execute("UPDATE seasons SET ends_at = $1 WHERE guild_id != 0 AND starts_at < $1"
                                " AND (ends_at IS NULL OR ends_at > $1)", boundary)
            await probe.execute("DELETE FROM seasons WHERE guild_id != 0 AND starts_at >= $1", boundary)
        month = 30 * 86400.0
        await make_all(store, [SeasonPlan(g, f"next {boundary:.0f}", boundary, boundary + month) for g in servers])
        await asyncio.sleep(max(0.0, boundary - time.time()))
        clicks: list[float] = []
        rolling = True
        big_pages = (await store.leaderboard("nimmt", big[0], by="wins")).pages

        async def clicking() -> None:
            while rolling:
                t = time.perf_counter()
                await store.leaderboard("nimmt", big[0], by="wins", page=rnd.randrange(big_pages))
                await store.rank(rnd.choice(samples[big[0]]), "nimmt", big[0], by="wins")
                clicks.append(time.perf_counter() - t)
                await asyncio.sleep(0.01)

        standings: list[float] = []

        async def close(season: dict) -> dict:  # the final standings the bot posts (cogs/seasons.py)
            t = time.perf_counter()
            won = {}
            for game in ("nimmt", "garbage"):
                board = await store.leaderboard(game, by="rating", page_size=10, season=season["id"])
                if not board.rows:
                    board = await store.leaderboard(game, by="wins", page_size=10, season=season["id"])
                won[game] = champions(board.rows)
            standings.append(time.perf_counter() - t)
            return {"champions": won}

        timed = TimedWrites(store)
        clicker = asyncio.get_running_loop().create_task(clicking())
        t0 = time.perf_counter()
        await make_all(timed, [SeasonPlan(g, f"after {boundary:.0f}", boundary + month, boundary + 2 * month)
                               for g in servers])
        closed = await close_ended(timed, time.time(), close)
        took = time.perf_counter() - t0
        rolling = False
        await clicker
        assert closed == len(servers), (closed, len(servers))
        print(f"  season rollover of {len(servers):,} servers: {took:.2f} s, {took / len(servers) * 1e3:.2f} ms a "
              f"server, {len(timed.writes)} write transactions of up to {ROLL_BATCH} servers; {_load()}", flush=True)
        results[f"season rollover of {len(servers):,} servers"] = {
            "seconds": took, "ms_per_server": took / len(servers) * 1e3,
            **_report(f"    rollover, a write transaction ({ROLL_BATCH} servers)", timed.writes)}
        results["rollover: a server's final standings read"] = _report(
            "    rollover: a server's final standings read", standings)
        results["click (page + rank) during the rollover"] = _report(
            f"click (page + rank) during the rollover ({len(clicks)} clicks)", clicks)
    finally:
        await store.close()

    # 6. sustained recording from 1 and from 4 processes at once, each one
    # game at a time or 32 in flight (group commit); the first process runs
    # the checkpointer every 1 s (SQLite), as shard 0 does in the bot.  The
    # games are drawn as the fill drew the league's: a server by its Zipf
    # weight, 4 players mostly from its pool (128 games in flight then share
    # a player now and then, as a busy night would).  The last row draws
    # every game from the 1,200 sampled players of three servers instead
    # (the draw of the rows before): a hot set where any two groups in
    # flight share players, so they wait for each other's locks.
    cum, starts, sizes = league_layout(scale["players"], scale["servers"])

    def league_game() -> GameRecord:
        g = bisect.bisect_left(cum, rnd.random() * cum[-1])
        seats = league_seats(rnd, g, starts, sizes, scale["players"])
        return game_for(0, guild_id(g), [user_id(p) for p in seats])

    for processes, in_flight, hot in ((1, 1, False), (1, 32, False), (4, 1, False), (4, 32, False),
                                      (4, 32, True)):
        games = [game_for(rnd.choice([0, big[0], mid[0]])) if hot else league_game() for _ in range(sustained)]
        wal0 = await pg_wal(target) if pg else None
        rate, lat, failed = sustained_processes(target, games, processes, in_flight)
        if wal0 is not None:
            wal1 = await pg_wal(target)
            n = max(1, len(lat))
            print(f"    WAL per game: {(wal1[2] - wal0[2]) / n / 1024:,.1f} KiB, "
                  f"{(wal1[1] - wal0[1]) / n:.1f} full-page images, {(wal1[0] - wal0[0]) / n:.0f} records; "
                  f"buffers read from outside shared_buffers per game: {(wal1[3] - wal0[3]) / n:.1f}; "
                  f"autovacuum workers before / after: {wal0[4]} / {wal1[4]}",
                  flush=True)
        label = (f"{'(hot 1,200 players) ' if hot else ''}{processes} process{'es' if processes > 1 else ''}, "
                 f"{in_flight} in flight each")
        lost = sum(failed.values())
        print(f"  sustained recording, {label}: {sustained} games, {rate:,.0f} games/s recorded, {lost} failed"
              f"{' (' + '; '.join(f'{n} x {e}' for e, n in failed.items()) + ')' if failed else ''}; {_load()}",
              flush=True)
        results[f"sustained, {label}"] = {"games_per_s": rate, "failed": lost, **_report("    latency per call", lat)}
    print(f"{_load()} at the end", flush=True)
    return results


# -- the table -----------------------------------------------------------------------

#: summary rows: label, which result keys, the figure, the PostgreSQL target
SUMMARY = (
    ("record one 4-player game with its rating update: median", ("record ",), "median_ms", ""),
    ("record one 4-player game with its rating update: p99", ("record ",), "p99_ms", "≤ 5"),
    ("sustained, 1 process, one game at a time (games/s)", ("sustained, 1 process, 1 ",), "games_per_s", ""),
    ("sustained, 1 process, 32 in flight (games/s)", ("sustained, 1 process, 32 ",), "games_per_s", ""),
    # (one commit per game in each process: a latency figure, 4 / the recording time at best;
    # the bot's recorder groups the games that finish while a commit is in flight, the row below)
    ("sustained, 4 processes, one at a time each (games/s)", ("sustained, 4 processes, 1 ",), "games_per_s", ""),
    ("sustained, 4 processes, 32 in flight each (games/s)", ("sustained, 4 processes, 32 ",), "games_per_s",
     "≥ 1,000"),
    ("sustained, 4 processes, 32 in flight each, all games among 1,200 players (games/s)",
     ("sustained, (hot 1,200 players) 4 processes, 32 ",), "games_per_s", ""),
    ("leaderboard pages near: first, next/previous by cursor and by number (p99)",
     ("page first", "page next", "page previous"), "p99_ms", "≤ 1"),
    ("leaderboard pages far: a random page number (p99)", ("page far",), "p99_ms", "≤ 1"),
    ("exact rank (p99)", ("rank: ",), "p99_ms", "≤ 1"),
    ("season board pages: first, random, next by cursor (p99)", ("season page",), "p99_ms", "≤ 1"),
    ("season exact rank (p99)", ("season rank: ",), "p99_ms", "≤ 1"),
    ("season rollover of every server (s)", ("season rollover",), "seconds", ""),
    ("season rollover, a server (total / servers)", ("season rollover",), "ms_per_server", ""),
    ("a click (page + rank) while the rollover runs (p99)", ("click (page + rank) during",), "p99_ms", ""),
    ("profile with its rating rank (p99)", ("profile: ",), "p99_ms", ""),
    ("head-to-head (/versus), all four cases (p99)", ("versus: ",), "p99_ms", ""),
)


def _span(values: list[float], unit: str) -> str:
    if not values:
        return "–"
    fmt = (lambda v: f"{v:,.0f}") if unit == "games_per_s" else (lambda v: f"{v:.2f}")
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


def print_table(columns: dict[str, dict[str, dict[str, float]]]) -> None:
    """The figures of each backend side by side: the summary (ranges over the
    boards), then every row."""
    names = list(columns)
    print("\n| figure (ms unless stated) | " + " | ".join(names) + " | target (PostgreSQL) |")
    print("|---|" + "---|" * len(names) + "---|")
    for label, prefixes, figure, target in SUMMARY:
        cells = []
        for res in columns.values():
            rows = [r for k, r in res.items() if k.startswith(prefixes) and figure in r]
            lost = sum(r.get("failed", 0) for r in rows)
            cells.append(_span([r[figure] for r in rows], figure) + (f" ({lost} failed)" if lost else ""))
        print(f"| {label} | " + " | ".join(cells) + f" | {target} |")
    keys = list(dict.fromkeys(k for res in columns.values() for k in res))
    print("\n| every row: median / p99 ms (games/s) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for key in keys:
        cells = []
        for res in columns.values():
            r = res.get(key)
            if r is None:
                cells.append("–")
            else:
                rate = f"{r['games_per_s']:,.0f} games/s; " if "games_per_s" in r else ""
                if r.get("failed"):
                    rate += f"{r['failed']} failed; "
                cells.append(f"{rate}{r['median_ms']:.3f} / {r['p99_ms']:.3f}")
        print(f"| {key} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1_000_000)
    ap.add_argument("--servers", type=int, default=10_000)
    ap.add_argument("--results", type=int, default=10_000_000)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply players, servers and results (0.1: 100,000 / 1,000 / 1,000,000)")
    ap.add_argument("--small", action="store_true", help="20,000 players, 200 servers, 200,000 results")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--sustained", type=int, default=5000, help="games for each throughput run")
    ap.add_argument("--refill", action="store_true", help="rebuild the cached database (and the PostgreSQL fill)")
    ap.add_argument("--database-url", help="also measure PostgreSQL: an empty database, or one this benchmark "
                                           "filled at the same scale (--refill empties it first)")
    ap.add_argument("--pg-temp", action="store_true",
                    help="also measure PostgreSQL on a throwaway local server (tests/pg.py's binaries)")
    ap.add_argument("--pg-only", action="store_true", help="measure PostgreSQL only (the SQLite file still "
                                                           "holds the league it is filled from)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    if args.small:
        args.players, args.servers, args.results = 20_000, 200, 200_000
    elif args.scale != 1.0:
        args.players, args.servers, args.results = (max(1, round(x * args.scale))
                                                     for x in (args.players, args.servers, args.results))
    if args.database_url and args.pg_temp:
        ap.error("--database-url or --pg-temp, not both")
    if args.pg_only and not (args.database_url or args.pg_temp):
        ap.error("--pg-only needs --database-url or --pg-temp")
    # a stopped run still stops its --pg-temp server (atexit)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"bench.store: {_load()}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"store-{args.players}-{args.servers}-{args.results}-seasons.db"
    scale = {"players": args.players, "servers": args.servers, "results": args.results}
    fresh = args.refill or not Path(str(path) + ".done").exists()
    dsn = args.database_url or (start_pg_temp() if args.pg_temp else None)
    if dsn is not None:  # before the SQLite file is filled or measured: the copy must be of the fill alone
        state = asyncio.run(pg_filled(dsn, scale))
        if state == "other" and not args.refill:
            sys.exit(f"{dsn} holds other data: give an empty database, or --refill to empty it")
    if fresh:
        fill(path, args.players, args.servers, args.results)
    else:
        print(f"reusing {path.relative_to(ROOT)} ({path.stat().st_size / 2**20:,.0f} MiB)")
    columns: dict[str, dict[str, dict[str, float]]] = {}
    if dsn is not None:
        if fresh and state == "same":
            state = "other"  # the file was rebuilt: copy it again
        if state != "same" or args.refill:
            asyncio.run(pg_fill(path, dsn, scale))  # the file as it is now: both start equal
        else:
            print(f"reusing the PostgreSQL fill in {dsn}", flush=True)
        settings = asyncio.run(pg_settings(dsn))
        print("PostgreSQL settings: " + ", ".join(f"{k}={settings.get(k, '?')}" for k in SHOWN_SETTINGS),
              flush=True)
    if not args.pg_only:
        # measured on a copy: what the measurements record (about 25,000 games) stays out of the
        # league the next run copies into PostgreSQL or measures again
        work = path.with_name(path.stem + "-run.db")
        t = time.perf_counter()
        for suffix in ("", "-wal", "-shm"):
            Path(str(work) + suffix).unlink(missing_ok=True)
            if Path(str(path) + suffix).exists():
                shutil.copyfile(str(path) + suffix, str(work) + suffix)
        print(f"measuring a copy of the league: {work.relative_to(ROOT)} ({time.perf_counter() - t:.1f} s)",
              flush=True)
        try:
            columns["SQLite"] = asyncio.run(measure(str(work), args.runs, args.sustained, scale))
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(str(work) + suffix).unlink(missing_ok=True)
    if dsn is not None:
        columns["PostgreSQL"] = asyncio.run(measure(dsn, args.runs, args.sustained, scale))
    print(f"\nscale: {args.players:,} players, {args.servers:,} servers, {args.results:,} results; {_load()}")
    print_table(columns)
    if args.json:
        args.json.write_text(json.dumps(columns, indent=2))


if __name__ == "__main__":
    main()
