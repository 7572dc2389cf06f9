"""Benchmark of the persistence layer at scale (app/store/).

    .venv/bin/python -m bench.store            # 1,000,000 players, 10,000 servers, 10,000,000 results
    .venv/bin/python -m bench.store --small    # 20,000 / 200 / 200,000: a quick run
    .venv/bin/python -m bench.store --players 100000 --servers 1000 --results 1000000
    .venv/bin/python -m bench.store --small --database-url postgresql://.../empty_db   # PostgreSQL

Fill.  A synthetic league is written once into ``bench/out/`` (gitignored)
and reused while present (``--refill`` rebuilds it).  The schema comes from
``Store.open`` (the real migrations); the fill then drops the indexes and
triggers, bulk-inserts players, games and results with ``executemany`` in
one transaction (journal off), aggregates ``stats`` per server and globally
with ``GROUP BY``, recreates the indexes and triggers and rebuilds the
leaderboard buckets with the store's own SQL.  Servers follow a Zipf law
(a few big, many small); 90% of a server's seats come from its own pool of
players, 10% from anywhere.  Ratings are synthetic (a function of win rate
and games, with jitter): replaying openskill over ten million results would
take far longer than the fill and does not change what is measured.

Measure.  Everything below goes through the bot's own ``Store`` on aiosqlite,
warm cache, ``--runs`` timed calls each (after warm-up), reporting median and
p99 in milliseconds: recording a finished 4-player game with its rating
update, leaderboard pages (first / next / previous / far, by page number and
by keyset cursor; global, the biggest server and a mid-size server; by
rating and by wins), an exact rank, a profile, a head-to-head (``versus``)
of two rivals with thousands of games (recorded once into the database);
then sustained recording throughput in games/s with the background WAL
checkpointer running.

PostgreSQL.  With ``--database-url`` (an EMPTY database) the filled SQLite
file is copied there with ``bot.py --copy-db``'s own code, and the same
calls are measured on the PostgreSQL store.
"""
from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import itertools
import json
import math
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

from app.store.sqlite_migrations import BOARDS, GAME_CODES, REBUILD_BUCKETS, sort_key  # noqa: E402
from app.store import GameRecord, PlayerResult, Store  # noqa: E402

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


def _places(scores: list[int]) -> list[int]:
    return [1 + sum(o < s for o in scores) for s in scores]


def fill(path: Path, players: int, servers: int, results: int, seed: int = 1, page_size: int = 4096) -> None:
    """Write the synthetic league into *path* (sync sqlite3: a setup step, no event loop)."""
    t0 = time.perf_counter()
    for suffix in ("", "-wal", "-shm", ".done"):
        Path(str(path) + suffix).unlink(missing_ok=True)

    async def create() -> None:
        s = await Store.open(str(path), checkpoint_interval=None, page_size=page_size)
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
    # servers: Zipf weights; player pools sized by weight ** 0.7, at least 8
    weights = [1.0 / (g + 1) for g in range(servers)]
    cum = list(itertools.accumulate(weights))
    pool_w = [w ** 0.7 for w in weights]
    scale = players / sum(pool_w)
    sizes = [max(8, int(w * scale)) for w in pool_w]
    over = sum(sizes) - players
    sizes[0] -= over  # the biggest server absorbs rounding
    starts = list(itertools.accumulate([0] + sizes[:-1]))
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
            seats: set[int] = set()
            while len(seats) < 4:
                if rnd.random() < 0.9:
                    seats.add(starts[g] + int(rnd.random() * sizes[g]))
                else:
                    seats.add(int(rnd.random() * players))
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


# -- measure -------------------------------------------------------------------------


def _report(name: str, samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
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


async def measure(path: Path, runs: int, sustained: int, seed: int = 2, url: str | None = None
                  ) -> dict[str, dict[str, float]]:
    rnd = random.Random(seed)
    target = url or str(path)

    async def scalar(store, sql: str, *args):
        """One value, read from the store's own database (``?`` parameters)."""
        if url is None:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                return db.execute(sql, args).fetchone()[0]
            finally:
                db.close()
        parts = sql.split("?")
        return await store._pool.fetchval("".join(p + (f"${i + 1}" if i < len(parts) - 1 else "")
                                                  for i, p in enumerate(parts)), *args)

    print(f"warm OS cache: read the file in {warm_os_cache(path):.1f} s; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs", flush=True)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (next_table,) = db.execute("SELECT coalesce(MAX(table_id), 0) + 1 FROM games").fetchone()
    guilds = db.execute(
        "SELECT scope, COUNT(*) FROM stats WHERE game = 0 AND scope != 0 GROUP BY scope ORDER BY 2 DESC"
    ).fetchall()
    big, mid = guilds[0], guilds[len(guilds) // 20]
    samples = {
        scope: [u for (u,) in db.execute(
            "SELECT user_id FROM stats WHERE game = 0 AND scope = ? AND k_rating IS NOT NULL"
            " ORDER BY random() LIMIT 400", (scope,))]
        for scope in (0, big[0], mid[0])
    }
    db.close()
    print(f"measure: biggest server {big[1]:,} nimmt players, mid server {mid[1]:,}; {runs} runs each", flush=True)
    results: dict[str, dict[str, float]] = {}
    store = await Store.open(target, checkpoint_interval=None, cache_mib=256)
    # As the bot does once it has started (bot.py): what lives for good is moved
    # out of the garbage collector's way, so full collections stay short.
    gc.collect()
    gc.freeze()
    try:
        counter = itertools.count(next_table)

        def game_for(scope: int):
            users = rnd.sample(samples[scope], 4)
            places = rnd.choice([[1, 2, 3, 4], [1, 2, 2, 4], [2, 1, 4, 3]])
            return GameRecord(
                table_id=next(counter), guild_id=scope or mid[0], channel_id=1, game="nimmt",
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
                tag = f"{label}, {by} ({first.total:,})"
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

        # 4. brute-force check of a few exact ranks (COUNT over the index: slow, exact)
        for scope in (0, big[0]):
            for u in samples[scope][:3]:
                want = await scalar(
                    store,
                    "SELECT 1 + COUNT(*) FROM stats WHERE game = 0 AND scope = ? AND k_rating IS NOT NULL"
                    " AND k_rating < (SELECT k_rating FROM stats WHERE game = 0 AND scope = ? AND user_id = ?)",
                    scope, scope, u)
                got = await store.rank(u, "nimmt", scope or None)
                assert got == want, (scope, u, got, want)
        print("  exact ranks agree with a brute-force COUNT (6 players)", flush=True)

        # 5. head-to-head (/versus): two rivals with thousands of games each,
        # recorded through the store once per database (group commit)
        rival_a, rival_b = USER_BASE - 7919, USER_BASE - 2 * 7919
        have = await scalar(store, "SELECT COUNT(*) FROM game_players WHERE user_id = ?", rival_a)
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

        # 6. sustained recording, background checkpointer on: one game at a
        # time, then 32 in flight (group commit); each phase on a freshly
        # opened store (closing checkpoints and resets the WAL)
        for label, in_flight in (("one at a time", 1), ("32 in flight", 32)):
            await store.close()
            store = await Store.open(target, checkpoint_interval=1.0, cache_mib=256)
            games = [game_for(rnd.choice([0, big[0], mid[0]])) for _ in range(sustained)]
            queue = iter(games)
            lat: list[float] = []

            async def worker() -> None:
                for g in queue:
                    t1 = time.perf_counter()
                    await store.record_game(g)
                    lat.append(time.perf_counter() - t1)

            t = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(in_flight)))
            elapsed = time.perf_counter() - t
            rate = sustained / elapsed
            wal = Path(str(path) + "-wal")
            wal_mib = wal.stat().st_size / 2**20 if url is None and wal.exists() else 0.0
            print(f"  sustained recording, {label}: {sustained} games in {elapsed:.2f} s = {rate:,.0f} games/s "
                  f"(checkpointer every 1 s; WAL at the end {wal_mib:,.0f} MiB)", flush=True)
            results[f"sustained, {label}"] = {"games_per_s": rate, **_report("    latency per call", lat)}
    finally:
        await store.close()
    print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return results


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1_000_000)
    ap.add_argument("--servers", type=int, default=10_000)
    ap.add_argument("--results", type=int, default=10_000_000)
    ap.add_argument("--small", action="store_true", help="20,000 players, 200 servers, 200,000 results")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--sustained", type=int, default=5000, help="games for the throughput run")
    ap.add_argument("--refill", action="store_true", help="rebuild the cached database")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    ap.add_argument("--database-url", help="measure PostgreSQL: copy the filled file into this EMPTY database")
    args = ap.parse_args(argv)
    if args.small:
        args.players, args.servers, args.results = 20_000, 200, 200_000
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"store-{args.players}-{args.servers}-{args.results}.db"
    if args.refill or not Path(str(path) + ".done").exists():
        fill(path, args.players, args.servers, args.results)
    else:
        print(f"reusing {path.relative_to(ROOT)} ({path.stat().st_size / 2**20:,.0f} MiB)")
    if args.database_url:
        from app.store.postgres import copy_sqlite

        t = time.perf_counter()
        counts = asyncio.run(copy_sqlite(str(path), args.database_url))
        print(f"copied into PostgreSQL in {time.perf_counter() - t:.1f} s: {counts}", flush=True)
    figures = asyncio.run(measure(path, args.runs, args.sustained, url=args.database_url))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
