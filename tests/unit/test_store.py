"""Tests of the persistence layer (app/store/)."""
from __future__ import annotations

import asyncio
import random
import sqlite3
import time

import aiosqlite
import asyncpg
import pytest

from app.store import sqlite_migrations as migrations
from app.store.sqlite_migrations import (
    BOARDS, GAME_CODES, KEY_EXPR, LATEST, MIN_GAMES, ON_BOARD, VALUE_EXPR, migrate, user_version,
)
from app.store import GameRecord, PlayerResult, open_store
from tests import ROOT
from tests.unit import between_read_and_write

NIMMT = GAME_CODES["nimmt"]


async def scalar(store, sql):
    """One value of a read-only query, on either backend."""
    if store.backend == "sqlite":
        return list(await store._r.execute_fetchall(sql))[0][0]
    return await store._pool.fetchval(sql)


def nimmt_game(table_id, results, *, guild_id=10, rated=True, rounds=3):
    """results: [(user_id | None, place, score), ...] in seat order."""
    players = [
        PlayerResult(
            user_id=u, name=f"user{u}" if u is not None else "Bot", seat=seat, score=score, place=place,
            stats={"rounds_won": int(place == 1), "bulls_earned": 1, "penalty_rounds": rounds},
        )
        for seat, (u, place, score) in enumerate(results)
    ]
    return GameRecord(
        table_id=table_id, guild_id=guild_id, channel_id=5, game="nimmt", started_at=100.0,
        ended_at=200.0 + table_id, seed=table_id, rounds=rounds,
        has_bots=any(u is None for u, _, _ in results), rated=rated, players=players,
    )


# -- migrations ----------------------------------------------------------------


async def _objects(path):
    async with aiosqlite.connect(path) as db:
        rows = await db.execute_fetchall(
            "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
        )
    return sorted(rows)


@pytest.mark.parametrize("start", range(LATEST + 1))
async def test_migrate_from_every_version(tmp_path, start):
    fresh = str(tmp_path / "fresh.db")
    s = await open_store(fresh, checkpoint_interval=None)
    await s.close()

    old = str(tmp_path / "old.db")
    async with aiosqlite.connect(old, isolation_level=None) as db:
        assert await migrate(db, start) == start
        assert await user_version(db) == start
        if start >= 1:
            await db.execute(
                "INSERT INTO tables (guild_id, channel_id, game, status, meta, created_at, updated_at)"
                " VALUES (1, 2, 'nimmt', 'playing', '{\"x\": 1}', 0, 0)"
            )
    s = await open_store(old, checkpoint_interval=None)
    try:
        async with aiosqlite.connect(old) as db:
            assert await user_version(db) == LATEST
        assert await _objects(old) == await _objects(fresh)
        if start >= 1:
            (table,) = await s.active_tables()
            assert table.meta == {"x": 1}
        assert await s.integrity_check() == ["ok"]
    finally:
        await s.close()


async def test_migrations_are_one_transaction(tmp_path, monkeypatch):
    path = str(tmp_path / "bad.db")
    broken = migrations.MIGRATIONS + (("CREATE TABLE t_ok (x)", "CREATE TABLE oops ("),)
    monkeypatch.setattr(migrations, "MIGRATIONS", broken)
    monkeypatch.setattr(migrations, "LATEST", len(broken))
    async with aiosqlite.connect(path, isolation_level=None) as db:
        with pytest.raises(sqlite3.OperationalError):
            await migrate(db, len(broken))
        assert await user_version(db) == 0
        assert not list(await db.execute_fetchall("SELECT name FROM sqlite_schema"))


async def test_pragmas(sqlite_store, tmp_path):
    store = sqlite_store
    assert list(await store._w.execute_fetchall("PRAGMA journal_mode")) == [("wal",)]
    assert list(await store._w.execute_fetchall("PRAGMA foreign_keys")) == [(1,)]
    assert list(await store._w.execute_fetchall("PRAGMA wal_autocheckpoint")) == [(0,)]
    await store.create_table(1, 2, "nimmt", {})
    busy, frames, done = await store.checkpoint()
    assert busy == 0 and frames == done and frames > 0


async def test_a_start_finds_untold_closes_without_reading_every_table(sqlite_store):
    """A start looks for tables closed but not yet told among the recent closed
    ones through their index, not by reading the whole history of tables."""
    from app.store.sqlite import _UNTOLD_CLOSED

    plan = " ".join(str(row[-1]) for row in await sqlite_store._r.execute_fetchall(
        "EXPLAIN QUERY PLAN " + _UNTOLD_CLOSED, (0.0,)))
    assert "tables_closed" in plan and "SCAN t " not in plan + " ", plan


async def test_memory_path_refused():
    with pytest.raises(ValueError):
        await open_store(":memory:")


# -- tables ----------------------------------------------------------------------


async def test_table_round_trip(store_target):
    path = store_target
    s = await open_store(path, checkpoint_interval=None)
    t1 = await s.create_table(1, 100, "nimmt", {"lobby_message": 55})
    t2 = await s.create_table(1, 200, "garbage", {})
    await s.save_table(t1, status="playing", meta={"seed": 7, "thread": 9}, actions=[(0, "play 5"), (1, "play 9")])
    # re-saving overlapping actions is idempotent; new ones append
    await s.save_table(t1, status="playing", meta={"seed": 7, "thread": 9},
                       actions=[(1, "play 9"), (2, "take 1")], first_index=1)
    with pytest.raises(LookupError):
        await s.save_table(999, status="playing", meta={})
    await s.close()

    s = await open_store(path, checkpoint_interval=None)  # survives a restart
    try:
        tables = await s.active_tables()
        assert [t.id for t in tables] == [t1, t2]
        t = tables[0]
        assert (t.guild_id, t.channel_id, t.game, t.status) == (1, 100, "nimmt", "playing")
        assert t.meta == {"seed": 7, "thread": 9}
        assert t.actions == [(0, "play 5"), (1, "play 9"), (2, "take 1")]
        assert t.updated_at >= t.created_at
        assert tables[1].status == "lobby" and tables[1].actions == []
        assert (await s.table_in_channel(100)).id == t1
        assert await s.table_in_channel(300) is None

        await s.close_table(t1, "finished")
        with pytest.raises(ValueError):
            await s.close_table(t2, "playing")
        assert [t.id for t in await s.active_tables()] == [t2]
        assert await s.table_in_channel(100) is None
        assert (await s.table(t1)).status == "finished"
        assert await s.integrity_check() == ["ok"]
    finally:
        await s.close()


async def test_guild_settings(store):
    assert await store.guild_settings(5) == {"language": None, "rate_bot_games": False, "rate_variants": False}
    await store.set_guild_setting(5, "language", "de")
    await store.set_guild_setting(5, "rate_bot_games", True)
    await store.set_guild_setting(5, "language", "es")
    assert await store.guild_settings(5) == {"language": "es", "rate_bot_games": True, "rate_variants": False}
    assert await store.guild_settings(6) == {"language": None, "rate_bot_games": False, "rate_variants": False}


# -- recording and profiles --------------------------------------------------------


async def test_recorded_exactly_once(store):
    game = nimmt_game(1, [(1, 1, 3), (2, 2, 9)])
    first = await store.record_game(game)
    assert isinstance(first, int)
    assert await store.record_game(game) is None
    results = await asyncio.gather(*(store.record_game(nimmt_game(2, [(1, 2, 5), (2, 1, 2)])) for _ in range(5)))
    assert sum(r is not None for r in results) == 1
    assert (await store.profile(1, "nimmt"))["games"] == 2
    assert (await store.profile(1, "nimmt", 10))["games"] == 2


async def test_profile_figures_and_ratings(store):
    # user 1 wins all three games, user 3 is always last
    for t in range(3):
        await store.record_game(nimmt_game(t, [(1, 1, 2), (2, 2, 8), (3, 3, 14)], rounds=4))
    p1, p2, p3 = [await store.profile(u, "nimmt") for u in (1, 2, 3)]
    assert p1["games"] == 3 and p1["wins"] == 3 and p1["win_rate"] == 1.0
    assert p3["wins"] == 0 and p3["win_rate"] == 0.0
    assert p1["avg_penalty_per_round"] == pytest.approx(2 / 4)
    assert p3["avg_penalty_per_round"] == pytest.approx(14 / 4)
    assert p1["rounds_won"] == 3 and p1["bulls_earned"] == 3 and "hands_won" not in p1  # its game's figures only
    assert p1["ordinal"] > p2["ordinal"] > p3["ordinal"]
    assert p1["mu"] > 25 > p3["mu"]
    assert p1["ordinal"] == pytest.approx(p1["mu"] - 3 * p1["sigma"])
    assert p1["rank"] is None  # fewer than MIN_GAMES games
    for t in range(3, MIN_GAMES):
        await store.record_game(nimmt_game(t, [(1, 1, 2), (2, 2, 8), (3, 3, 14)]))
    assert [(await store.profile(u, "nimmt"))["rank"] for u in (1, 2, 3)] == [1, 2, 3]
    assert await store.profile(1, "garbage") is None
    assert await store.profile(99, "nimmt") is None
    assert await store.profile(1, "nimmt", guild_id=11) is None


async def test_ties_share_a_place(store):
    await store.record_game(nimmt_game(1, [(1, 1, 2), (2, 1, 2), (3, 3, 9)]))
    p1, p2 = await store.profile(1, "nimmt"), await store.profile(2, "nimmt")
    assert p1["wins"] == p2["wins"] == 1
    assert p1["mu"] == pytest.approx(p2["mu"])


async def test_latest_name_kept(store):
    await store.record_game(nimmt_game(1, [(1, 1, 2), (2, 2, 8)]))
    g = nimmt_game(2, [(1, 1, 2), (2, 2, 8)])
    renamed = GameRecord(**{**g.__dict__, "players": [
        PlayerResult(**{**g.players[0].__dict__, "name": "New Name"}), g.players[1]]})
    await store.record_game(renamed)
    assert (await store.profile(1, "nimmt"))["name"] == "New Name"
    detail = await store.game_detail(1)
    assert detail["standings"][0]["name"] == "New Name"  # standings show the latest name


async def test_computer_players_never_ranked(store):
    for t in range(6):
        await store.record_game(nimmt_game(t, [(None, 1, 0), (1, 2, 5), (None, 3, 9)]))
    assert (await store.profile(1, "nimmt"))["games"] == 6
    for by in ("rating", "wins", "win_rate", "games"):
        page = await store.leaderboard("nimmt", by=by)
        assert [r["user_id"] for r in page.rows] == [1]
    detail = await store.game_detail(1)
    assert [p["computer"] for p in detail["standings"]] == [True, False, True]
    assert [p["place"] for p in detail["standings"]] == [1, 2, 3]
    assert detail["has_bots"] is True and detail["players"] == 3
    assert await scalar(store, "SELECT COUNT(*) FROM players") == 1


async def test_unrated_games_update_counters_not_ratings(store):
    await store.record_game(nimmt_game(1, [(1, 1, 2), (2, 2, 8)]))
    before = await store.profile(1, "nimmt")
    await store.record_game(nimmt_game(2, [(1, 1, 2), (2, 2, 8)], rated=False))
    after = await store.profile(1, "nimmt")
    assert after["games"] == 2 and after["wins"] == 2 and after["rated_games"] == 1
    assert (after["mu"], after["sigma"]) == (before["mu"], before["sigma"])
    await store.record_game(nimmt_game(3, [(5, 1, 2), (6, 2, 8)], rated=False))
    assert (await store.profile(5, "nimmt"))["mu"] is None
    assert (await store.profile(5, "nimmt"))["ordinal"] is None


async def test_garbage_hands_won(store):
    g = GameRecord(1, 10, 5, "garbage", 0.0, 1.0, 3, 2, False, True, [
        PlayerResult(1, "a", 0, 0, 1, {"hands_won": 2}), PlayerResult(2, "b", 1, 3, 2, {"hands_won": 1})])
    await store.record_game(g)
    p = await store.profile(1, "garbage")
    assert p["hands_won"] == 2 and "avg_penalty_per_round" not in p
    with pytest.raises(ValueError):
        await store.record_game(GameRecord(2, 10, 5, "chess", 0.0, 1.0, 3, 2, False, True, []))


async def test_history_and_detail(store):
    await store.record_game(nimmt_game(1, [(1, 1, 2), (2, 2, 8)], guild_id=10))
    await store.record_game(nimmt_game(2, [(1, 2, 9), (3, 1, 1), (None, 3, 20)], guild_id=11))
    h = await store.history(1)
    assert [(x["game_id"], x["place"], x["players"], x["guild_id"]) for x in h] == [(2, 2, 3, 11), (1, 1, 2, 10)]
    assert [x["game_id"] for x in await store.history(1, guild_id=10)] == [1]
    assert await store.history(1, game="garbage") == []
    assert len(await store.history(1, limit=1)) == 1
    d = await store.game_detail(2)
    assert [(p["user_id"], p["place"], p["score"]) for p in d["standings"]] == [(3, 1, 1), (1, 2, 9), (None, 3, 20)]
    assert await store.game_detail(99) is None


# -- leaderboards ------------------------------------------------------------------


async def _league(store, n_games=60, n_users=12, seed=3):
    rnd = random.Random(seed)
    for t in range(n_games):
        users = rnd.sample(range(1, n_users + 1), 4)
        places = sorted(rnd.choice([[1, 2, 3, 4], [1, 1, 3, 4], [1, 2, 2, 4]]))
        await store.record_game(nimmt_game(t, [(u, p, rnd.randint(0, 20)) for u, p in zip(users, places)],
                                           guild_id=10 if t % 3 else 11))


async def test_leaderboard_paging(store):
    await _league(store)
    for guild in (None, 10, 11):
        for by in ("rating", "wins", "win_rate", "games"):
            full = await store.leaderboard("nimmt", guild, by=by, page_size=1000)
            rows = full.rows
            assert [r["position"] for r in rows] == list(range(1, len(rows) + 1))
            # equal values share a place: one plus the entries with a better value
            assert [r["rank"] for r in rows] == [1 + sum(o["value"] > r["value"] for o in rows) for r in rows]
            assert full.total == len(rows)
            keys = [(-r["value"], r["user_id"]) for r in rows]
            assert keys == sorted(keys)
            paged, page, cursor = [], None, None
            for n in range(full.total // 5 + 1):
                p = await store.leaderboard("nimmt", guild, by=by, page=n, page_size=5)
                assert p.page == n or not p.rows and p.total == 0
                assert p.pages == -(-full.total // 5)
                paged += p.rows
                k = await store.leaderboard("nimmt", guild, by=by, page_size=5, after=cursor) if n else p
                assert k.rows == p.rows
                cursor = p.last
                if n:
                    back = await store.leaderboard("nimmt", guild, by=by, page_size=5, before=p.first)
                    assert back.rows == page.rows
                page = p
            assert [r["user_id"] for r in paged] == [r["user_id"] for r in rows]
            for r in rows:
                assert await store.rank(r["user_id"], "nimmt", guild, by=by) == r["rank"]
                assert await store.board_place(r["user_id"], "nimmt", guild, by=by) == (r["rank"], r["position"])
            if rows:  # past the end: the last page
                last = await store.leaderboard("nimmt", guild, by=by, page=999, page_size=5)
                assert last.rows == paged[(-(-full.total // 5) - 1) * 5:]


async def test_min_games_and_rank_off_page(store):
    await _league(store)
    everyone = {r["user_id"]: r for r in (await store.leaderboard("nimmt", by="games", page_size=100)).rows}
    for by in ("rating", "win_rate"):
        board = await store.leaderboard("nimmt", by=by, page_size=100)
        assert {r["user_id"] for r in board.rows} == {u for u, r in everyone.items() if r["games"] >= MIN_GAMES}
        for min_games in (1, 16, 25):
            plain = await store.leaderboard("nimmt", by=by, page_size=100, min_games=min_games)
            assert {r["user_id"] for r in plain.rows} == {
                u for u, r in everyone.items() if r["games"] >= min_games}
            for r in plain.rows:
                assert await store.board_place(r["user_id"], "nimmt", by=by, min_games=min_games) == (
                    r["rank"], r["position"])
                assert r["rank"] == 1 + sum(o["value"] > r["value"] for o in plain.rows)
            p1 = await store.leaderboard("nimmt", by=by, page=1, page_size=3, min_games=min_games)
            assert p1.rows == plain.rows[3:6] or (not plain.rows[3:6] and p1.rows == plain.rows[-3:])
    first = await store.leaderboard("nimmt", by="rating", page_size=3)
    low = (await store.leaderboard("nimmt", by="rating", page_size=100)).rows[-1]
    assert low["user_id"] not in {r["user_id"] for r in first.rows}
    assert await store.board_place(low["user_id"], "nimmt", by="rating") == (low["rank"], first.total)
    assert low["position"] == first.total
    assert await store.rank(12345, "nimmt") is None
    assert (await store.leaderboard("garbage")).rows == []


async def test_scopes(store):
    # user 1 wins everything in guild 10, loses everything in guild 11
    for t in range(6):
        await store.record_game(nimmt_game(t, [(1, 1, 0), (2, 2, 5)], guild_id=10))
    for t in range(6, 18):
        await store.record_game(nimmt_game(t, [(1, 2, 5), (3, 1, 0)], guild_id=11))
    g10, g11, glob = [await store.profile(1, "nimmt", g) for g in (10, 11, None)]
    assert (g10["games"], g11["games"], glob["games"]) == (6, 12, 18)
    assert g10["rank"] == 1 and g11["rank"] == 2
    assert g10["ordinal"] > g11["ordinal"]
    assert [r["user_id"] for r in (await store.leaderboard("nimmt", 10, by="wins")).rows] == [1, 2]
    assert [r["user_id"] for r in (await store.leaderboard("nimmt", 11, by="wins")).rows] == [3, 1]
    assert [r["user_id"] for r in (await store.leaderboard("nimmt", by="games")).rows] == [1, 3, 2]
    assert await store.rank(2, "nimmt", 11, by="games") is None


# -- the order-statistic index against brute force --------------------------------------


def _ranges(bounds, keys):
    """Count the sorted *keys* in each range [bounds[i], bounds[i + 1])."""
    edges = list(bounds) + ["~"]  # '~' sorts after every hex key
    counts, i = [], 0
    for lo, hi in zip(edges, edges[1:]):
        n = 0
        while i < len(keys) and keys[i] < hi:
            assert keys[i] >= lo
            n, i = n + 1, i + 1
        counts.append(n)
    return counts


def _check_buckets(path):
    """Every bucket and group count equals the entries in its key range,
    every group bound is a bucket bound and n counts its buckets; returns
    the number of buckets."""
    db = sqlite3.connect(path)
    try:
        scopes = db.execute("SELECT DISTINCT game, scope FROM stats").fetchall()
        for board, (_, col) in BOARDS.items():
            for game, scope in scopes:
                keys = [k for (k,) in db.execute(
                    f"SELECT {col} FROM stats WHERE game = ? AND scope = ? AND {col} IS NOT NULL ORDER BY {col}",
                    (game, scope))]
                buckets = db.execute(
                    "SELECT lo, cnt FROM buckets WHERE game = ? AND scope = ? AND board = ? ORDER BY lo",
                    (game, scope, board)).fetchall()
                groups = db.execute(
                    "SELECT lo, cnt, n FROM bucket_groups WHERE game = ? AND scope = ? AND board = ? ORDER BY lo",
                    (game, scope, board)).fetchall()
                assert buckets[0][0] == "" and groups[0][0] == ""
                assert _ranges([lo for lo, _ in buckets], keys) == [cnt for _, cnt in buckets]
                assert _ranges([g[0] for g in groups], keys) == [g[1] for g in groups]
                bucket_bounds = [lo for lo, _ in buckets]
                assert _ranges([g[0] for g in groups], bucket_bounds) == [g[2] for g in groups]
                assert {g[0] for g in groups} <= set(bucket_bounds)
                assert max(cnt for _, cnt in buckets) <= migrations.BUCKET_MAX
                assert max(g[2] for g in groups) <= migrations.GROUP_MAX
        return db.execute("SELECT COUNT(*) FROM buckets").fetchone()[0]
    finally:
        db.close()


@pytest.mark.parametrize("seed, limits", [(1, None), (2, None), (3, (8, 4)), (4, (16, 3))])
async def test_order_statistic_index_matches_brute_force(tmp_path, monkeypatch, seed, limits):
    """Random stats rows and random updates (many bucket and group splits),
    then ranks, pages and cursors against a brute-force ORDER BY.

    ``limits`` = (BUCKET_MAX, GROUP_MAX) swaps in triggers with tiny limits
    so that a few thousand rows split buckets and groups many times."""
    rnd = random.Random(seed)
    path = str(tmp_path / "os.db")
    s = await open_store(path, checkpoint_interval=None)
    try:
        if limits:
            monkeypatch.setattr(migrations, "BUCKET_MAX", limits[0])
            monkeypatch.setattr(migrations, "GROUP_MAX", limits[1])
            small = migrations._board_triggers()  # with the limits patched in

            def swap(conn):
                for name in migrations.BOARD_TRIGGER_NAMES:
                    conn.execute(f"DROP TRIGGER {name}")
                for sql in small:
                    conn.execute(sql)

            await s._write(swap)
        n = 3300 + rnd.randrange(400)
        users = rnd.sample(range(1, 10**6), n)
        # writes straight to stats exercise the same triggers as record_game
        players = [(u, f"p{u}") for u in users]
        stats = [
            (NIMMT, rnd.choice([0, 0, 7]), u, g, rnd.randint(0, g), *(
                (rnd.choice([20.0, 25.0, rnd.uniform(10, 40)]), rnd.choice([2.0, rnd.uniform(1, 8)]))
                if rnd.random() < 0.8 else (None, None)))
            for u in users for g in [rnd.choice([1, 2, 4, 5, 6, rnd.randint(1, 60)])]
        ]
        await s._write(lambda conn: (
            conn.executemany("INSERT INTO players (user_id, name) VALUES (?, ?)", players),
            conn.executemany(
                "INSERT INTO stats (game, scope, user_id, games, wins, mu, sigma) VALUES (?, ?, ?, ?, ?, ?, ?)",
                stats)))
        for _ in range(3):
            updates = [(d, rnd.randint(0, d), rnd.uniform(10, 40), rnd.uniform(1, 8), u)
                       for u in rnd.sample(users, n // 3) for d in [rnd.randint(1, 4)]]
            await s._write(lambda conn: conn.executemany(
                "UPDATE stats SET games = games + ?, wins = wins + ?, mu = ?, sigma = ? WHERE user_id = ?", updates))
        assert _check_buckets(path) >= 4 * 2 + 6  # 8 sentinels + splits
        if limits:
            async with aiosqlite.connect(path) as db:
                (groups,), = await db.execute_fetchall("SELECT COUNT(*) FROM bucket_groups")
            assert groups > 4 * 2 * 10  # groups split too

        async def check():
            db = sqlite3.connect(path)
            for board, (name, col) in BOARDS.items():
                for scope in (0, 7):
                    truth = db.execute(
                        f"SELECT user_id, {VALUE_EXPR[board]}, {KEY_EXPR[board]} FROM stats"
                        f" WHERE game = ? AND scope = ? AND {ON_BOARD[board]}"
                        f" ORDER BY {KEY_EXPR[board]}, user_id", (NIMMT, scope)).fetchall()
                    # the shared place: one plus the entries with a smaller key value
                    shared = {}
                    for i, (user, _, key) in enumerate(truth):
                        shared[user] = shared[truth[i - 1][0]] if i and truth[i - 1][2] == key else i + 1
                    truth = [(user, value) for user, value, _ in truth]
                    guild = scope or None
                    for i in rnd.sample(range(len(truth)), 100):
                        assert await s.board_place(truth[i][0], "nimmt", guild, by=name) == (
                            shared[truth[i][0]], i + 1)
                    for page in [0, 1, 2, *rnd.sample(range(len(truth) // 7 + 1), 10)]:
                        p = await s.leaderboard("nimmt", guild, by=name, page=page, page_size=7)
                        want = truth[page * 7:page * 7 + 7] or truth[(len(truth) - 1) // 7 * 7:]
                        assert [(r["user_id"], r["value"]) for r in p.rows] == want
                        assert [(r["position"], r["rank"]) for r in p.rows] == [
                            (truth.index(w) + 1, shared[w[0]]) for w in want]
                        assert p.total == len(truth)
                        nxt = await s.leaderboard("nimmt", guild, by=name, page_size=7, after=p.last)
                        start = p.rows[-1]["position"]
                        assert [(r["position"], r["rank"], r["user_id"]) for r in nxt.rows] == [
                            (start + 1 + i, shared[w[0]], w[0]) for i, w in enumerate(truth[start:start + 7])
                        ] or (start == len(truth) and nxt.rows == p.rows)
            db.close()

        await check()
        await s.rebuild_boards()
        monkeypatch.undo()  # rebuilt with the real triggers and limits
        _check_buckets(path)
        await check()
        # record_game keeps working on a rebuilt index
        await s.record_game(nimmt_game(1, [(users[0], 1, 0), (users[1], 2, 4)], guild_id=7))
        _check_buckets(path)
        assert await s.integrity_check() == ["ok"]
    finally:
        await s.close()


async def test_integrity_after_league(store, tmp_path):
    await _league(store, n_games=30)
    assert await store.integrity_check() == ["ok"]
    if store.backend == "sqlite":
        _check_buckets(str(tmp_path / "bot.db"))


async def test_upsert_writes_the_sort_keys_itself(sqlite_store, tmp_path):
    store = sqlite_store
    """record_game's upsert keeps the keys right without the repair triggers
    (which only exist for other writers)."""
    await store._write(lambda conn: [conn.execute(f"DROP TRIGGER {t}") for t in ("stats_keys_ins", "stats_keys_upd")])
    await _league(store, n_games=40)
    await store.record_game(nimmt_game(99, [(1, 1, 0), (2, 2, 5)], rated=False))
    stale = " OR ".join(f"{col} IS NOT {migrations.sort_key(board)}" for board, (_, col) in BOARDS.items())
    async with aiosqlite.connect(str(tmp_path / "bot.db")) as db:
        assert list(await db.execute_fetchall(f"SELECT COUNT(*) FROM stats WHERE {stale}")) == [(0,)]
        assert list(await db.execute_fetchall("SELECT COUNT(*) FROM stats WHERE k_games IS NULL")) == [(0,)]
    _check_buckets(str(tmp_path / "bot.db"))


def test_rate_matches_openskill():
    """app.ratings.rate is openskill's PlackettLuce, written out flat."""
    from openskill.models import PlackettLuce

    from app import ratings

    model = PlackettLuce()
    assert (ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA) == (model.mu, model.sigma)
    rnd = random.Random(7)
    for _ in range(500):
        n = rnd.randint(2, 6)
        before = [(rnd.uniform(0, 50), rnd.uniform(0.3, 9)) for _ in range(n)]
        places = [rnd.randint(1, n) for _ in range(n)]
        want = model.rate([[model.rating(mu=m, sigma=s)] for m, s in before], ranks=list(places))
        got = ratings.rate(before, places)
        for (mu, sigma), (team,) in zip(got, want):
            assert mu == pytest.approx(team.mu, abs=1e-9) and sigma == pytest.approx(team.sigma, abs=1e-9)


async def test_group_commit_isolates_a_bad_record(store):
    """Concurrent record_game calls share a transaction; one failing record
    (NOT NULL name) is rolled back alone."""
    bad = nimmt_game(2, [(3, 1, 0), (4, 2, 5)])
    bad = GameRecord(**{**bad.__dict__, "players": [
        PlayerResult(**{**bad.players[0].__dict__, "name": None}), bad.players[1]]})
    results = await asyncio.gather(
        store.record_game(nimmt_game(1, [(1, 1, 0), (2, 2, 5)])),
        store.record_game(bad),
        store.record_game(nimmt_game(3, [(1, 2, 4), (2, 1, 1)])),
        return_exceptions=True,
    )
    assert isinstance(results[0], int) and isinstance(results[2], int)
    assert isinstance(results[1], (sqlite3.IntegrityError, asyncpg.NotNullViolationError))
    assert await store.profile(3, "nimmt") is None and await store.profile(4, "nimmt") is None
    assert (await store.profile(1, "nimmt"))["games"] == 2
    assert await store.record_game(nimmt_game(2, [(3, 1, 0), (4, 2, 5)])) is not None  # table 2 was not recorded


async def test_checkpoint_modes(sqlite_store, tmp_path):
    store = sqlite_store
    await store.create_table(1, 2, "nimmt", {})
    assert (await store.checkpoint("TRUNCATE"))[0] == 0
    assert (tmp_path / "bot.db-wal").stat().st_size == 0
    with pytest.raises(ValueError):
        await store.checkpoint("NOW")


async def test_keys_left_alone_stay_right(sqlite_store, tmp_path):
    store = sqlite_store
    """record_game rewrites only the sort keys that move (an existing row
    gets an UPDATE naming just those columns); the edge cases stay exact
    without the repair triggers: a player joining the rating and win-rate
    boards in an unrated game, rates that cannot move (never or always
    winning), a first rating after unrated games, computer opponents."""
    await store._write(lambda conn: [conn.execute(f"DROP TRIGGER {t}") for t in ("stats_keys_ins", "stats_keys_upd")])
    stale = " OR ".join(f"{col} IS NOT {migrations.sort_key(board)}" for board, (_, col) in BOARDS.items())

    async def check():
        async with aiosqlite.connect(str(tmp_path / "bot.db")) as db:
            assert list(await db.execute_fetchall(f"SELECT COUNT(*) FROM stats WHERE {stale}")) == [(0,)]
        _check_buckets(str(tmp_path / "bot.db"))

    for t in range(MIN_GAMES + 2):
        rated = t not in (MIN_GAMES - 2, MIN_GAMES - 1)  # the 5th game is unrated
        await store.record_game(nimmt_game(t, [(1, 1, 0), (2, 2, 5), (None, 3, 9)], rated=rated))
        await store.record_game(nimmt_game(100 + t, [(3, 1, 0), (4, 2, 5)], rated=False, guild_id=11))
        await check()
    await store.record_game(nimmt_game(200, [(4, 1, 0), (3, 2, 5)], guild_id=11))  # 4's first rating
    await check()
    assert [r["user_id"] for r in (await store.leaderboard("nimmt", by="win_rate")).rows] == [1, 3, 4, 2]  # 4 won once
    assert (await store.profile(2, "nimmt"))["rank"] == 2
    assert (await store.profile(4, "nimmt", 11))["mu"] is not None


async def test_record_game_splits_buckets_and_groups(tmp_path, monkeypatch):
    """A league recorded through record_game with tiny bucket and group
    limits: every count stays exact through many splits, and ranks and
    pages agree with a brute-force ORDER BY."""
    monkeypatch.setattr(migrations, "BUCKET_MAX", 6)
    monkeypatch.setattr(migrations, "GROUP_MAX", 3)
    path = str(tmp_path / "split.db")
    s = await open_store(path, checkpoint_interval=None)
    try:
        small = migrations._board_triggers()

        def swap(conn):
            for name in migrations.BOARD_TRIGGER_NAMES:
                conn.execute(f"DROP TRIGGER {name}")
            for sql in small:
                conn.execute(sql)

        await s._write(swap)
        rnd = random.Random(11)
        games = [
            nimmt_game(t, [(u, p, rnd.randint(0, 20)) for u, p in zip(
                rnd.sample(range(1, 90), 4), sorted(rnd.choice([[1, 2, 3, 4], [1, 1, 3, 4], [1, 2, 2, 4]])))],
                guild_id=rnd.choice([10, 11]), rated=rnd.random() < 0.8)
            for t in range(400)
        ]
        for i in range(0, len(games), 50):  # one at a time and concurrently (group commit)
            if i % 100:
                await asyncio.gather(*(s.record_game(g) for g in games[i:i + 50]))
            else:
                for g in games[i:i + 50]:
                    await s.record_game(g)
        async with aiosqlite.connect(path) as db:
            (groups,), = await db.execute_fetchall("SELECT COUNT(*) FROM bucket_groups")
        assert groups > 4 * 3 * 5
        _check_buckets(path)
        db = sqlite3.connect(path)
        for board, (name, col) in BOARDS.items():
            for scope in (0, 10, 11):
                truth = [u for (u,) in db.execute(
                    f"SELECT user_id FROM stats WHERE game = ? AND scope = ? AND {ON_BOARD[board]}"
                    f" ORDER BY {KEY_EXPR[board]}, user_id", (NIMMT, scope))]
                page = await s.leaderboard("nimmt", scope or None, by=name, page=1, page_size=7)
                assert [r["user_id"] for r in page.rows] == truth[7:14]
                for i in rnd.sample(range(len(truth)), 10):
                    assert (await s.board_place(truth[i], "nimmt", scope or None, by=name))[1] == i + 1
        db.close()
        assert await s.integrity_check() == ["ok"]
    finally:
        await s.close()


async def test_counts_stay_exact_across_migration_3(tmp_path):
    """A database filled at version 2 (the old triggers) and migrated keeps
    exact counts while recording goes on with the new triggers."""
    path = str(tmp_path / "v2.db")
    async with aiosqlite.connect(path, isolation_level=None) as db:
        assert await migrate(db, 2) == 2
        await db.execute("PRAGMA foreign_keys = ON")
        await db.executemany("INSERT INTO players (user_id, name) VALUES (?, ?)",
                             [(u, f"p{u}") for u in range(1, 40)])
        await db.executemany(
            "INSERT INTO stats (game, scope, user_id, games, wins, mu, sigma) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(NIMMT, scope, u, 3 + u % 7, u % 4, 20.0 + u / 3, 3.0) for u in range(1, 40) for scope in (0, 10)])
    s = await open_store(path, checkpoint_interval=None)
    try:
        async with aiosqlite.connect(path) as db:
            assert await user_version(db) == LATEST
        _check_buckets(path)
        rnd = random.Random(5)
        for t in range(40):
            await s.record_game(nimmt_game(t, [(u, p, 0) for u, p in zip(rnd.sample(range(1, 45), 4), [1, 2, 3, 4])]))
        _check_buckets(path)
        assert await s.integrity_check() == ["ok"]
    finally:
        await s.close()


async def _same_boards(a, b, users, scopes=(None, 10, 11)):
    """Every board, page, cursor page and rank of store *a* equals *b*'s."""
    for guild in scopes:
        for by in ("rating", "wins", "win_rate", "games"):
            full = await a.leaderboard("nimmt", guild, by=by, page_size=1000)
            assert full == await b.leaderboard("nimmt", guild, by=by, page_size=1000), (guild, by)
            for page in range(0, full.pages * 100 // 7 + 2, 3):  # pages of 7, one past the end too
                p = await a.leaderboard("nimmt", guild, by=by, page=page, page_size=7)
                assert p == await b.leaderboard("nimmt", guild, by=by, page=page, page_size=7), (guild, by, page)
                if p.rows:
                    for cursor in ("after", "before"):
                        key = p.last if cursor == "after" else p.first
                        assert (await a.leaderboard("nimmt", guild, by=by, page_size=7, **{cursor: key})
                                == await b.leaderboard("nimmt", guild, by=by, page_size=7, **{cursor: key}))
            for user in users:
                assert await a.rank(user, "nimmt", guild, by=by) == await b.rank(user, "nimmt", guild, by=by)
        for user in users:
            assert await a.profile(user, "nimmt", guild) == await b.profile(user, "nimmt", guild)


async def test_postgresql_buckets_split_and_agree_with_sqlite(pg_dsn, tmp_path, monkeypatch):
    """PostgreSQL's order-statistic buckets and their groups
    (app.store.pg_migrations) with tiny split limits: a league recorded
    through record_game, one at a time and concurrently, splits them many
    times; the counts stay exact and
    every board, page, cursor, rank and profile equals the SQLite store's
    after the same games in the same order; again after a rebuild."""
    from app.store import pg_migrations, postgres

    monkeypatch.setattr(postgres, "SPLIT_EVERY", 0.0)  # each overfull bucket split after the recording
    pg = await open_store(pg_dsn)
    lite = await open_store(str(tmp_path / "same.db"), checkpoint_interval=None)
    try:
        await pg._pool.execute(pg_migrations.bucket_max_function(4))  # the split limit of record_games and the trigger
        await pg._pool.execute(pg_migrations.group_max_function(3))  # and of a group of buckets
        rnd = random.Random(11)
        games = [
            nimmt_game(t, [(u, p, rnd.randint(0, 20)) for u, p in zip(
                rnd.sample(range(1, 90), 4), sorted(rnd.choice([[1, 2, 3, 4], [1, 1, 3, 4], [1, 2, 2, 4]])))],
                guild_id=rnd.choice([10, 11]), rated=rnd.random() < 0.8)
            for t in range(300)
        ]
        for i in range(0, len(games), 50):
            if i % 100:
                await asyncio.gather(*(pg.record_game(g) for g in games[i:i + 50]))
            else:
                for g in games[i:i + 50]:
                    await pg.record_game(g)
        by_table = {g.table_id: g for g in games}
        for (table_id,) in await pg._pool.fetch("SELECT table_id FROM games ORDER BY id"):
            await lite.record_game(by_table[table_id])  # the order PostgreSQL committed them in
        assert await pg._pool.fetchval("SELECT count(*) FROM buckets") > 4 * 3 * 20  # many splits
        assert await pg._pool.fetchval("SELECT count(*) FROM bucket_groups") > 4 * 3 * 4  # of groups too
        assert await pg.integrity_check() == ["ok"]
        await _same_boards(pg, lite, range(1, 92))
        await pg.rebuild_boards()  # one bucket per board again; splits start over
        assert await pg.integrity_check() == ["ok"]
        more = [nimmt_game(1000 + t, [(u, p, 3) for u, p in zip(rnd.sample(range(1, 90), 4), [1, 2, 3, 4])])
                for t in range(30)]
        for g in more:
            await pg.record_game(g)
            await lite.record_game(g)
        assert await pg.integrity_check() == ["ok"]
        await _same_boards(pg, lite, range(1, 92))
        # a count that went wrong is found
        await pg._pool.execute("UPDATE buckets SET cnt = cnt + 1 WHERE lo = '' AND board = 1 AND scope = 0")
        assert await pg.integrity_check() != ["ok"]
    finally:
        await pg.close()
        await lite.close()


async def test_postgresql_overfull_buckets_wait_for_their_split_and_stay_exact(pg_dsn, tmp_path, monkeypatch):
    """The buckets PostgreSQL recordings overfill are split together once
    ``SPLIT_EVERY`` has passed since the first (a split stops every
    recording): until then the boards read exactly as SQLite's; the next
    recording after it splits every one of them."""
    from app.store import pg_migrations, postgres

    monkeypatch.setattr(postgres, "SPLIT_EVERY", 3600.0)
    pg = await open_store(pg_dsn)
    lite = await open_store(str(tmp_path / "same.db"), checkpoint_interval=None)
    try:
        await pg._pool.execute(pg_migrations.bucket_max_function(4))
        await pg._pool.execute(pg_migrations.group_max_function(3))
        rnd = random.Random(12)
        games = [nimmt_game(t, [(u, p, rnd.randint(0, 20)) for u, p in zip(rnd.sample(range(1, 60), 4), [1, 2, 3, 4])],
                            guild_id=rnd.choice([10, 11])) for t in range(120)]
        for g in games:
            await pg.record_game(g)
            await lite.record_game(g)
        overfull = "SELECT count(*) FROM buckets WHERE cnt > 4"
        assert await pg._pool.fetchval(overfull) > 0  # not split yet
        assert await pg.integrity_check() == ["ok"]
        await _same_boards(pg, lite, range(1, 61))
        monkeypatch.setattr(postgres, "SPLIT_EVERY", 0.0)  # due now: the next recording splits them all
        last = nimmt_game(500, [(60, 1, 0), (61, 2, 5)], guild_id=10)
        await pg.record_game(last)
        await lite.record_game(last)
        assert await pg._pool.fetchval(overfull) == 0
        assert await pg._pool.fetchval("SELECT count(*) FROM bucket_groups WHERE nb > 3") == 0
        assert await pg.integrity_check() == ["ok"]
        await _same_boards(pg, lite, range(1, 62))
    finally:
        await pg.close()
        await lite.close()


async def test_postgresql_split_migration_keeps_the_old_functions_and_the_counts(pg_dsn, monkeypatch):
    """PostgreSQL's version 7 (record_games_v4 and split_buckets_at): boards
    recorded at version 6, their buckets overfull once the limit is lowered,
    keep exact counts; a recording of the new code splits the buckets it
    overfills; version 3's split_buckets, as a process of the old code still
    calls it, splits the rest."""
    from app.store import pg_migrations, postgres

    monkeypatch.setattr(postgres, "SPLIT_EVERY", 0.0)
    conn = await asyncpg.connect(pg_dsn)
    try:
        await pg_migrations.migrate(conn, target=6)
        await conn.execute("INSERT INTO players (user_id, name) SELECT u, 'user' || u FROM generate_series(1, 30) AS u")
        for scope in (10, 11):
            for u in range(1, 31):  # one row a statement, one bucket a board (the limit is 1,024 yet)
                await conn.execute("INSERT INTO stats (game, scope, user_id, games, wins, rated_games, mu, sigma)"
                                   " VALUES ($1, $2, $3, $4, $5, $4, $6, 3)", NIMMT, scope, u, 5 + u % 3, u % 4,
                                   20.0 + u % 7)
        await conn.execute(pg_migrations.bucket_max_function(4))  # now every board's bucket is overfull
        await conn.execute(pg_migrations.group_max_function(3))
        assert await conn.fetchval("SELECT min(cnt) FROM buckets") == 30
    finally:
        await conn.close()
    store = await open_store(pg_dsn)  # migrates to the latest version
    try:
        assert await store.integrity_check() == ["ok"]
        # a newcomer (one game: on the wins and games boards only) grows those boards' bucket
        await store.record_game(nimmt_game(1, [(31, 1, 0), (2, 2, 5), (3, 3, 9)], guild_id=10))
        async with store._pool.acquire() as conn:
            await _pg_buckets_exact(conn, 10)
            overfull = "SELECT count(*) FROM buckets WHERE scope = $1 AND board = ANY($2::smallint[]) AND cnt > 4"
            assert await conn.fetchval(overfull, 10, [1, 3]) == 0  # split (in pieces)
            assert await conn.fetchval("SELECT count(*) FROM buckets WHERE scope = 10 AND board = 1") > 2
            assert await conn.fetchval(overfull, 10, [0, 2]) == 2  # not grown: not split
            assert await conn.fetchval(overfull, 11, [0, 1, 2, 3]) == 4
            assert await conn.fetchval("SELECT split_buckets($1, '2000')", pg_migrations.RECORD_LOCK) > 0
            assert await conn.fetchval("SELECT max(cnt) FROM buckets") <= 4
            await _pg_buckets_exact(conn, 11)
        assert await store.integrity_check() == ["ok"]
    finally:
        await store.close()


async def test_versus_from_either_side(store):
    """Head-to-head counts games together, who finished ahead and the score
    sums, the same whichever of the two asks (the one with fewer games
    drives the lookup)."""
    await store.record_game(nimmt_game(1, [(1, 1, 2), (2, 2, 8)]))
    await store.record_game(nimmt_game(2, [(1, 2, 9), (2, 1, 1), (3, 3, 12)]))
    await store.record_game(nimmt_game(3, [(1, 1, 4), (2, 1, 4)]))
    for t in range(4, 9):  # player 1 plays more without player 2
        await store.record_game(nimmt_game(t, [(1, 1, 0), (3, 2, 5)]))
    want = {"nimmt": {"games": 3, "ahead": 1, "behind": 1, "level": 1, "score": 15, "other_score": 13}}
    assert await store.versus(1, 2) == want
    assert await store.versus(2, 1) == {"nimmt": {"games": 3, "ahead": 1, "behind": 1, "level": 1,
                                                  "score": 13, "other_score": 15}}
    assert await store.versus(1, 2, "garbage") == {}
    assert (await store.versus(3, 1))["nimmt"]["games"] == 6
    assert await store.versus(2, 99) == {}
    with pytest.raises(ValueError):
        await store.versus(1, 2, "chess")


async def test_what_is_still_to_be_told_comes_back_after_a_restart(store):
    """A table closed with notes not yet told, and a night ended with its recap
    due, are handed back at the next start (both backends); once told, not."""
    told = await store.create_table(1, 100, "nimmt", {})
    untold = await store.create_table(1, 200, "nimmt", {})
    lobby = await store.create_table(1, 300, "nimmt", {})
    note = {"n": 1, "at": 0, "event": {"type": "abandoned", "by": "mod"}}
    await store.save_table(told, status="abandoned", meta={"notes": [], "noted": 1, "notes_told": 1})
    await store.save_table(untold, status="abandoned", meta={"notes": [note], "noted": 1, "notes_told": 0})
    await store.save_table(lobby, status="cancelled", meta={})  # (closed before notes existed)
    assert [t.id for t in await store.untold_closed_tables()] == [untold]
    assert [t.id for t in await store.active_tables()] == []
    ended, due = await store.create_night(1, 10, "nimmt", {}), await store.create_night(1, 11, "nimmt", {})
    await store.end_night(ended, {"messages": {"recap": 5}}, [])
    await store.end_night(due, {"recap_due": True}, [])
    assert [n["id"] for n in await store.open_nights()] == [due]
    await store.save_night(due, "ended", {"messages": {"recap": 6}})
    assert await store.open_nights() == []


def test_a_process_that_dies_with_its_store_open_still_exits_and_keeps_what_it_committed(tmp_path):
    """A crash before ``close`` (or a failed test holding its store) must end the
    process, not hang it on aiosqlite's worker threads: a supervisor restarts a
    bot that exits, not one that hangs.  What was committed is there after."""
    import subprocess
    import sys

    path = tmp_path / "bot.db"
    code = (
        "import asyncio\n"
        "from app.store import open_store\n"
        "kept = []\n"
        "async def main():\n"
        f"    kept.append(await open_store({str(path)!r}, checkpoint_interval=None))\n"
        "    await kept[0].set_guild_setting(7, 'language', 'de')\n"
        "    raise RuntimeError('crash before close')\n"
        "asyncio.run(main())\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "crash before close" in run.stderr

    async def read() -> dict:
        store = await open_store(str(path), checkpoint_interval=None)
        try:
            return await store.guild_settings(7)
        finally:
            await store.close()

    assert asyncio.run(read())["language"] == "de"


# -- seasons -----------------------------------------------------------------------


def _at(table_id, ended_at, results, guild_id=10):
    game = nimmt_game(table_id, results, guild_id=guild_id)
    return GameRecord(**{**game.__dict__, "ended_at": ended_at})


async def test_a_season_counts_the_games_that_end_in_it_once(store_target):
    """Games ending just before, at and after a boundary count in exactly one
    season each (the one whose span holds their end), next to the unchanged
    all-time boards; a restart in the middle changes nothing; a season's
    boards have shared places and exact ranks like the all-time ones."""
    s = await open_store(store_target, checkpoint_interval=None)
    try:
        autumn = await s.create_season(10, "autumn", 1000.0, 2000.0)
        winter = await s.create_season(10, "winter", 2000.0, 3000.0)
        world = await s.create_season(0, "2026-Q4", 1500.0, None)  # the global calendar's
        other = await s.create_season(11, "autumn", 1000.0, 2000.0)  # another guild's: not ours
        with pytest.raises(LookupError):
            await s.create_season(10, "autumn", 5000.0, 6000.0)
        with pytest.raises(ValueError):  # overlapping spans would count a game twice
            await s.create_season(10, "clash", 2500.0, 3500.0)
        assert await s.create_season(10, "winter", 2000.0, 3000.0, exist_ok=True) == winter
        results = [(1, 1, 0), (2, 2, 5)]
        for table_id, ended in ((1, 999.0), (2, 1999.999), (3, 2000.0), (4, 2000.001), (5, 2999.0), (6, 3000.0)):
            await s.record_game(_at(table_id, ended, results))
        await s.record_game(_at(7, 1999.0, [(3, 1, 0), (1, 2, 4)]))
    finally:
        await s.close()
    s = await open_store(store_target, checkpoint_interval=None)  # a restart
    try:
        await s.record_game(_at(3, 2000.0, results))  # recorded again after the restart: still once
        await s.record_game(_at(8, 2000.5, [(2, 1, 0), (3, 2, 4)]))

        async def games(user, **where):
            p = await s.profile(user, "nimmt", **where)
            return p and p["games"]

        assert await games(1, guild_id=10) == 7 and await games(1) == 7  # all-time: everything
        assert await games(1, season=autumn) == 2  # ended 1999.999 and 1999.0 (999.0 is before it)
        assert await games(1, season=winter) == 3  # 2000.0 (its first instant), 2000.001, 2999.0
        assert await games(1, season=world) == 6  # from 1500 on, open: 1999.999 .. 3000.0 and 1999.0
        assert await games(1, season=other) is None
        assert await games(2, season=winter) == 4 and await games(3, season=winter) == 1
        board = await s.leaderboard("nimmt", 10, by="wins", season=winter)
        assert [(r["rank"], r["user_id"], r["value"]) for r in board.rows] == [(1, 1, 3), (2, 2, 1), (3, 3, 0)]
        assert await s.board_place(3, "nimmt", by="games", season=winter) == (3, 3)
        games_board = await s.leaderboard("nimmt", by="games", season=autumn)
        assert [(r["rank"], r["user_id"]) for r in games_board.rows] == [(1, 1), (2, 2), (2, 3)]  # 2 and 3 share
        assert (await s.profile(1, "nimmt", season=autumn))["mu"] is not None  # its own rating, from scratch
        assert [x["name"] for x in await s.seasons(10)] == ["winter", "autumn"]
    finally:
        await s.close()


async def test_ending_a_season_by_hand_and_the_calendars_next_one(store):
    """Ending at a moment closes the span there: a game after it is in no
    season of the guild until the next starts; a planned season that holds
    no game is dropped with the end; ended seasons are listed until closed."""
    open_ = await store.create_season(10, "cup", 100.0, 1000.0)
    planned = await store.create_season(10, "next", 1000.0, 2000.0)  # a calendar's next, made ahead
    await store.record_game(_at(1, 150.0, [(1, 1, 0), (2, 2, 3)]))
    ended = await store.end_season(open_, 200.0)
    assert ended["ends_at"] == 200.0 and ended["name"] == "cup"
    assert await store.season(planned) is None  # (nothing counted in it yet)
    await store.record_game(_at(2, 200.0, [(1, 1, 0), (2, 2, 3)]))
    assert (await store.profile(1, "nimmt", season=open_))["games"] == 1
    assert [x["id"] for x in await store.seasons_ended(199.0)] == []
    due = await store.seasons_ended(300.0)
    assert [x["id"] for x in due] == [open_]
    await store.set_seasons_meta({open_: {"closed": True, "champions": {"nimmt": [1]}}})
    assert await store.seasons_ended(300.0) == []
    assert (await store.season(open_))["meta"]["champions"] == {"nimmt": [1]}
    assert (await store.end_season(open_, 250.0))["ends_at"] == 200.0  # an end stays where it was
    with pytest.raises(ValueError):
        await store.leaderboard("nimmt", season=0)


async def test_a_game_at_the_instant_a_season_is_ended_by_hand_is_in_exactly_one_season(store):
    """A season ended by hand at an instant (``/season end``, a change of
    mode with the next season made in the same transaction): a game that
    ended at that very instant counts in exactly one season.  Recorded after
    the end was saved, it is the next season's (the end is excluded); one
    recorded before, at or after the instant, stays in the season it was
    counted in, so the end falls just after it (and the next season starts
    there), never across it; a season started by hand does not take a game
    recorded before it either."""
    import math

    from app.store.base import SeasonPlan

    async def games(user, season):
        p = await store.profile(user, "nimmt", season=season)
        return p and p["games"]

    async def named(guild_id, name):
        return next(x for x in await store.seasons(guild_id) if x["name"] == name)

    players = [(1, 1, 0), (2, 2, 3)]
    # guild 10: nothing recorded at the instant before the end
    cup = await store.create_season(10, "cup", 100.0)
    await store.record_game(_at(1, 199.999, players))
    ended = await store.end_season(cup, 200.0, then=[SeasonPlan(10, "next", 200.0, 300.0)])
    assert ended["ends_at"] == 200.0
    following = await named(10, "next")
    assert following["starts_at"] == 200.0 and following["ends_at"] == 300.0
    await store.record_game(_at(2, 200.0, players))  # the boundary's own instant: the next one's
    assert (await games(1, cup), await games(1, following["id"])) == (1, 1)
    # guild 11: a game that ended at the instant was recorded before the end was saved
    mine = await store.create_season(11, "mine", 100.0)
    await store.record_game(_at(3, 200.0, players, guild_id=11))
    ended = await store.end_season(mine, 200.0, then=[SeasonPlan(11, "next", 200.0, 300.0)])
    assert ended["ends_at"] == math.nextafter(200.0, math.inf)  # just after it
    following = await named(11, "next")
    assert following["starts_at"] == ended["ends_at"]
    await store.record_game(_at(4, 200.0, players, guild_id=11))  # the same instant, recorded after: the same one
    await store.record_game(_at(5, ended["ends_at"], players, guild_id=11))
    assert (await games(1, mine), await games(1, following["id"])) == (2, 1)
    assert (await store.profile(1, "nimmt", 11))["games"] == 3  # (every game once on the server's board)
    # guild 12, by hand: a start at an instant a game recorded already ended at
    await store.record_game(_at(6, 500.0, players, guild_id=12))
    started = await store.season(await store.create_season(12, "late", 500.0))
    assert started["starts_at"] == math.nextafter(500.0, math.inf) and await games(1, started["id"]) is None
    # the calendar's seasons made late do the same (not the global one's: made ahead); one left with
    # nothing is not made
    await store.record_game(_at(7, 450.0, players, guild_id=14))
    await store.record_game(_at(8, 450.0, players, guild_id=15))
    made = await store.make_seasons([SeasonPlan(13, "m", 400.0, 500.0), SeasonPlan(14, "m", 400.0, 500.0),
                                     SeasonPlan(0, "m", 400.0, 500.0),
                                     SeasonPlan(15, "m", 400.0, math.nextafter(450.0, math.inf))])
    assert [(await store.season(x))["starts_at"] for x in made[:3]] == [400.0, math.nextafter(450.0, math.inf),
                                                                        400.0]
    assert made[3] is None


async def test_postgresql_a_season_ended_while_a_game_is_being_recorded(pg_dsn, monkeypatch):
    """PostgreSQL reads the seasons holding a game's end before the
    statement that writes it, without a lock: another process ends the
    season (and starts the next, a change of mode) in between.  The game
    ended at the boundary's instant, so it is the next season's: the
    recording finds the seasons changed and counts it there, in exactly one
    season."""
    from app.store.base import SeasonPlan

    store = await open_store(pg_dsn)
    cup = await store.create_season(10, "cup", 100.0)

    async def other_process() -> None:
        other = await open_store(pg_dsn)
        try:
            await other.end_season(cup, 200.0, then=[SeasonPlan(10, "next", 200.0, 300.0)])
        finally:
            await other.close()

    calls = between_read_and_write(monkeypatch, other_process)
    try:
        assert await store.record_game(_at(1, 200.0, [(1, 1, 0), (2, 2, 3)])) is not None
        assert len(calls) == 2  # the seasons read again
        following = next(x for x in await store.seasons(10) if x["name"] == "next")
        assert (await store.season(cup))["ends_at"] == 200.0 == following["starts_at"]
        assert await store.profile(1, "nimmt", season=cup) is None
        assert (await store.profile(1, "nimmt", season=following["id"]))["games"] == 1
        assert (await store.profile(1, "nimmt", 10))["games"] == 1
    finally:
        await store.close()


async def _plan(store, sql, *args):
    """The query plan of *sql* with *args* (EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL), as text."""
    if store.backend == "sqlite":
        rows = await store._r.execute_fetchall("EXPLAIN QUERY PLAN " + sql, *args)
        return "\n".join(str(row[-1]) for row in rows)
    return "\n".join(row[0] for row in await store._pool.fetch("EXPLAIN " + sql, *args))


async def test_the_look_at_the_calendar_finds_ended_seasons_without_reading_every_season(store):
    """Among thousands of closed seasons (every server's past months), the
    seasons due to close are found through the index of the unclosed ones
    by end, and parking a rating looks its season up by id: neither reads
    the whole seasons table."""
    from app.seasons import make_all
    from app.store.base import SeasonPlan

    made = await make_all(store, [SeasonPlan(g, "past", 0.0, 1000.0) for g in range(100, 3100)]
                          + [SeasonPlan(g, "now", 1000.0, 3000.0) for g in range(100, 3100)])
    await store.set_seasons_meta({season_id: {"closed": True} for season_id in made[:2990]})
    await store.record_game(_at(1, 1500.0, [(1, 1, 0), (2, 2, 5)], guild_id=100))
    if store.backend == "sqlite":
        from app.store import sqlite as backend
        await store._write(lambda conn: conn.execute("ANALYZE"))
        ended = (backend._SEASONS_ENDED, (2000.0,))
        park = (backend._PARK.format(where=f"scope NOT IN ({backend._WINDOWED})"),
                {"cut": 1.0, "custom": "[]", "now": 2000.0})
    else:
        from app.store import postgres as backend
        await store._pool.execute("ANALYZE")
        ended = (backend._SEASONS_ENDED, 2000.0)
        park = (backend._PARK.format(where=f"scope NOT IN ({backend._WINDOWED})"), 1.0, [], 2000.0)
    plan = await _plan(store, *ended)
    assert "seasons_due" in plan and "SCAN seasons" not in plan and "Seq Scan" not in plan, plan
    assert [x["id"] for x in await store.seasons_ended(2000.0)] == made[2990:3000]  # the 10 left, by end
    plan = await _plan(store, *park)
    assert "Seq Scan on seasons" not in plan and "SCAN seasons" not in plan, plan
    assert ("seasons_pkey" in plan if store.backend == "postgresql" else "INTEGER PRIMARY KEY" in plan), plan


class Crash(Exception):
    """The process stops in the middle of a rollover."""


async def test_a_boundary_rolls_every_server_in_batches_and_resumes_after_a_stop(store_target):
    """Seven servers and the global calendar roll at a boundary three at a
    time: their next seasons are made once (asking again makes nothing, an
    overlapping one is not made), a game ending the last instant of a season
    counts in it and one ending at the boundary in the next, each once; a
    stop in the middle of the closing leaves the batches saved before it
    closed and the rest to the next look after the restart, which closes
    every ended season once (only the stopped batch's are told again); a
    server's season is told with the one before it closed."""
    from app.seasons import close_ended, make_all
    from app.store.base import SeasonPlan

    guilds = list(range(10, 17))
    first = [SeasonPlan(g, "first", 1000.0, 2000.0) for g in [0, *guilds]]
    ahead = [SeasonPlan(g, "next", 2000.0, 3000.0) for g in [0, *guilds]]
    s = await open_store(store_target, checkpoint_interval=None)
    told: list[int] = []

    async def close(season):
        if len(told) == 6 and crash:
            raise Crash
        told.append(season["id"])
        before = [x for x in await s.seasons(season["guild_id"]) if x["starts_at"] < season["starts_at"]]
        assert all(x["meta"].get("closed") for x in before), season
        return {"champions": {"nimmt": [season["guild_id"]]}}

    try:
        zero = await s.create_season(10, "zero", 500.0, 1000.0)  # (ended long ago, never closed)
        made = await make_all(s, first + ahead, batch=3)
        assert None not in made and len(set(made)) == len(made) == 16
        assert await make_all(s, ahead + first, batch=5) == made[8:] + made[:8]  # asked again: the same ones
        later = await s.make_seasons([SeasonPlan(10, "clash", 2500.0, 3500.0), SeasonPlan(11, "later", 3000.0)])
        assert later[0] is None and later[1] is not None  # (a guild's season by hand would run over it)
        with pytest.raises(ValueError):  # two of one guild that overlap: neither is made
            await s.make_seasons([SeasonPlan(12, "a", 3000.0, 4000.0), SeasonPlan(12, "b", 3500.0)])
        assert [x["name"] for x in await s.seasons(12)] == ["next", "first"]
        for i, g in enumerate(guilds):
            await s.record_game(_at(2 * i, 1999.999, [(1, 1, 0), (2, 2, 5)], guild_id=g))
            await s.record_game(_at(2 * i + 1, 2000.0, [(2, 1, 0), (1, 2, 5)], guild_id=g))
        crash = True
        with pytest.raises(Crash):
            await close_ended(s, 2000.5, close, batch=3)
    finally:
        await s.close()
    # told: zero and the global season (saved: guild 10 comes again), the first of
    # 10, 11, 12 (saved), of 13, then the stop
    ended = [zero, *made[:8]]
    assert told == ended[:6]
    s = await open_store(store_target, checkpoint_interval=None)  # the restart
    try:
        crash = False
        assert await close_ended(s, 2000.5, close, batch=3) == 4  # 13 to 16: the batches before were saved
        assert await close_ended(s, 2000.5, close, batch=3) == 0
        assert sorted(told) == sorted(ended + [made[4]])  # the stopped batch's one told again, no other
        for season_id in ended:
            season = await s.season(season_id)  # (the closing's check: the one before closed first)
            assert season["meta"] == {"closed": True, "champions": {"nimmt": [season["guild_id"]]}}
        for i, g in enumerate(guilds):
            this, following = made[1 + i], made[9 + i]
            assert (await s.profile(1, "nimmt", season=this))["wins"] == 1  # 1999.999: the first season's
            assert (await s.profile(2, "nimmt", season=following))["wins"] == 1  # 2000.0: the next one's
            assert (await s.profile(1, "nimmt", season=this))["games"] == 1
            assert (await s.profile(1, "nimmt", season=following))["games"] == 1
            assert (await s.profile(1, "nimmt", g))["games"] == 2
        assert (await s.profile(1, "nimmt", season=made[0]))["games"] == 7  # the global season: every server's
        assert (await s.profile(1, "nimmt", season=made[8]))["games"] == 7
    finally:
        await s.close()


def test_both_backends_offer_exactly_the_store_interface():
    """What the bot may ask of its database is declared once (app.store.api.Store);
    each backend offers every method of it with the same parameters, and nothing
    public beyond it (a method only one backend had would work on one database)."""
    import inspect

    from app.store.api import Store
    from app.store.postgres import PostgresStore
    from app.store.sqlite import SqliteStore

    declared = {name for name, _ in inspect.getmembers(Store, inspect.isfunction) if not name.startswith("_")}
    assert {"record_game", "save_table", "leaderboard", "versus"} <= declared
    for backend in (SqliteStore, PostgresStore):
        public = {name for name, _ in inspect.getmembers(backend, inspect.isfunction) if not name.startswith("_")}
        assert public == declared, f"{backend.__name__}: {public ^ declared}"
        for name in declared:
            assert (inspect.signature(getattr(backend, name)).parameters.keys()
                    == inspect.signature(getattr(Store, name)).parameters.keys()), f"{backend.__name__}.{name}"


# -- who is really playing ---------------------------------------------------------


async def test_a_rating_without_a_recent_rated_game_leaves_the_board_and_comes_back(store):
    """Past the activity window a rating is parked: off the rating board (the
    others' ranks exact), kept on the profile; an unrated game does not bring
    it back, the next rated game does, starting from the parked rating.  A
    server's own window applies to its board only."""
    for t in range(MIN_GAMES):  # 1 and 2 play, 3 and 4 play
        await store.record_game(_at(t, 1000.0 + t, [(1, 1, 0), (2, 2, 5)]))
        await store.record_game(_at(100 + t, 1000.0 + t, [(3, 1, 0), (4, 2, 5)]))
    board = await store.leaderboard("nimmt", by="rating")
    assert board.total == 4
    kept = await store.profile(1, "nimmt")
    later = time.time() + 2 * 86400  # two days on, with a window of one day: everyone is parked
    assert await store.park_inactive(later, days=1) == 4 * 2  # globally and in guild 10
    assert (await store.leaderboard("nimmt", by="rating")).total == 0
    now = time.time()
    await store.record_game(_at(200, now, [(3, 1, 0), (4, 2, 5)]))  # 3 and 4 play again: back on it
    assert await store.park_inactive(now + 3600.0, days=1) == 0  # (recent enough)
    board = await store.leaderboard("nimmt", by="rating")
    assert [r["user_id"] for r in board.rows] == [3, 4] and board.total == 2
    assert await store.board_place(4, "nimmt", by="rating") == (2, 2)
    parked = await store.profile(1, "nimmt")
    assert parked["parked"] and parked["rank"] is None
    assert (parked["mu"], parked["sigma"]) == (kept["mu"], kept["sigma"])  # the rating is kept
    assert (await store.leaderboard("nimmt", by="wins")).total == 4  # the other boards keep everyone
    await store.record_game(GameRecord(**{**_at(300, now, [(1, 1, 0), (2, 2, 5)]).__dict__, "rated": False}))
    assert (await store.profile(1, "nimmt"))["parked"]  # an unrated game: still parked
    await store.record_game(_at(301, now, [(1, 1, 0), (2, 2, 5)]))
    back = await store.profile(1, "nimmt")
    assert not back["parked"] and back["rank"] == 1
    assert back["mu"] > kept["mu"]  # from the parked rating on, not from scratch
    assert back["rated_games"] == MIN_GAMES + 1
    assert await store.rated_at(1, "nimmt") is not None and await store.rated_at(99, "nimmt") is None
    # guild 10's own window of 0.01 day: its board only
    assert await store.park_inactive(time.time() + 3600.0, windows={10: 0.01}, days=30) == 4
    assert (await store.leaderboard("nimmt", 10, by="rating")).total == 0
    assert (await store.leaderboard("nimmt", by="rating")).total == 4


async def test_a_servers_activity_window_holds_for_its_season_boards_too(store):
    """A server's own window takes a rating off its season's rating board as
    off its all-time one; another server's boards, its seasons' and the
    boards of all servers (their global season too) keep the default.  An
    ended season's board stays as it ended (browsable after the end)."""
    mine = await store.create_season(10, "cup", 0.0)
    theirs = await store.create_season(11, "cup", 0.0, 1500.0)  # (ended long ago)
    world = await store.create_season(0, "w", 0.0)
    for t in range(MIN_GAMES):
        await store.record_game(_at(t, 1000.0 + t, [(1, 1, 0), (2, 2, 5)]))
        await store.record_game(_at(100 + t, 1000.0 + t, [(1, 1, 0), (2, 2, 5)], guild_id=11))

    async def shown(guild_id=None, season=None):
        return (await store.leaderboard("nimmt", guild_id, by="rating", season=season)).total

    assert await shown(10) == await shown(season=mine) == 2
    assert await store.park_inactive(time.time() + 3600.0, windows={10: 0.01}, days=30) == 2 + 2
    assert await shown(10) == await shown(season=mine) == 0
    assert await shown(11) == await shown(season=theirs) == 2
    assert await shown() == await shown(season=world) == 2
    assert (await store.profile(1, "nimmt", season=mine))["parked"]
    assert await store.park_inactive(time.time() + 40 * 86400) == 3 * 2  # 30 days on: the rest, but the ended
    assert await shown(11) == await shown() == await shown(season=world) == 0
    assert await shown(season=theirs) == 2


def test_aiosqlite_has_the_primitive_the_store_runs_its_transactions_with():
    """app/store/sqlite.py's one reach into aiosqlite (``_in_worker``): an upgrade
    that moves it fails here, by name."""
    import inspect

    import aiosqlite

    assert inspect.iscoroutinefunction(aiosqlite.Connection._execute)
    assert isinstance(inspect.getattr_static(aiosqlite.Connection, "_conn"), property)


# -- members excluded from a server's boards --------------------------------------


async def test_an_excluded_member_leaves_every_board_of_the_server_and_comes_back(store, tmp_path):
    """Excluded from guild 10's boards, a member is on none of them (all-time,
    its seasons, every kind, a season made while excluded too), the others'
    shared places and exact ranks close up; their games still count, the
    boards of all servers and of another server keep them; included again,
    they are back where every result puts them, the games played while
    excluded included."""
    s1 = await store.create_season(10, "s1", 1000.0, 2000.0)
    world = await store.create_season(0, "w", 0.0, None)
    for t in range(MIN_GAMES):
        await store.record_game(_at(t, 1000.0 + t, [(1, 1, 0), (2, 2, 3), (3, 3, 6), (4, 4, 9)]))
    await store.record_game(_at(50, 1100.0, [(2, 1, 0), (3, 2, 5)]))

    async def board(by, guild_id=10, **kw):
        page = await store.leaderboard("nimmt", guild_id, by=by, **kw)
        return [(r["rank"], r["user_id"]) for r in page.rows], page.total

    wins_before = ([(1, 1), (2, 2), (3, 3), (3, 4)], 4)  # 3 and 4 share the third place
    assert await board("wins") == await board("wins", season=s1) == wins_before
    assert await store.exclude_member(10, 2, 5000.0)
    assert not await store.exclude_member(10, 2, 5001.0)  # twice: nothing changes
    assert await store.excluded_members(10) == [2] and await store.is_excluded(10, 2)
    assert not await store.is_excluded(11, 2) and await store.excluded_members(11) == []
    for season in (None, s1):
        assert await board("wins", season=season) == ([(1, 1), (2, 3), (2, 4)], 3)
        assert await board("games", season=season) == ([(1, 3), (2, 1), (2, 4)], 3)  # 3 played one more
        assert [u for _, u in (await board("rating", season=season))[0]] == [1, 3, 4]
        assert (await board("win_rate", season=season))[1] == 3
    assert await store.board_place(4, "nimmt", 10, by="wins") == (2, 3)
    assert await store.board_place(2, "nimmt", 10, by="wins") is None
    assert (await store.profile(2, "nimmt", 10))["rank"] is None
    assert (await board("wins", None))[1] == 4 and (await board("wins", None, season=world))[1] == 4

    # games while excluded count, on no board of guild 10 (a new season's neither)
    await store.record_game(_at(60, 1500.0, [(2, 1, 0), (1, 2, 5)]))
    s2 = await store.create_season(10, "s2", 2000.0, 3000.0)
    await store.record_game(_at(61, 2500.0, [(2, 1, 0), (4, 2, 5)]))
    await store.record_game(_at(62, 2600.0, [(2, 1, 0), (3, 2, 3)], guild_id=11))
    assert await board("wins") == ([(1, 1), (2, 3), (2, 4)], 3)
    assert await board("wins", season=s2) == ([(1, 4)], 1)
    assert (await store.profile(2, "nimmt", 10))["games"] == MIN_GAMES + 3
    assert (await board("wins", 11))[0] == [(1, 2), (2, 3)]  # another server's boards keep them
    assert (await board("wins", None))[0][:2] == [(1, 1), (2, 2)]
    assert (await board("wins", None, season=world))[1] == 4
    if store.backend == "sqlite":
        _check_buckets(str(tmp_path / "bot.db"))

    assert await store.include_member(10, 2)
    assert not await store.include_member(10, 2)
    assert await store.excluded_members(10) == []
    assert await board("wins") == ([(1, 1), (2, 2), (3, 3), (3, 4)], 4)  # 2's three wins: 1 of them excluded
    assert (await store.profile(2, "nimmt", 10))["wins"] == 3
    assert await board("wins", season=s1) == ([(1, 1), (2, 2), (3, 3), (3, 4)], 4)
    assert await board("wins", season=s2) == ([(1, 2), (2, 4)], 2)
    assert (await board("rating"))[1] == 4 and (await board("games"))[1] == 4
    assert await store.board_place(2, "nimmt", 10, by="games") == (1, 1)
    assert (await store.profile(2, "nimmt", 10))["rank"] is not None
    assert await store.integrity_check() == ["ok"]
    if store.backend == "sqlite":
        _check_buckets(str(tmp_path / "bot.db"))
    else:
        async with store._pool.acquire() as conn:
            for scope in (10, -s1, -s2):
                await _pg_buckets_exact(conn, scope)


async def _pg_buckets_exact(conn, scope):
    """Every PostgreSQL bucket count of guild *scope*'s boards equals the keys in its range."""
    for board, (_, col) in BOARDS.items():
        keys = [r[0] for r in await conn.fetch(
            f"SELECT {col} FROM stats WHERE game = $1 AND scope = $2 AND {col} IS NOT NULL ORDER BY {col}",
            NIMMT, scope)]
        buckets = await conn.fetch("SELECT lo, cnt FROM buckets WHERE game = $1 AND scope = $2 AND board = $3"
                                   " ORDER BY lo COLLATE \"C\"", NIMMT, scope, board)
        assert _ranges([b["lo"] for b in buckets], keys) == [b["cnt"] for b in buckets]


async def test_postgresql_boards_stay_exact_across_the_exclusion_migration(pg_dsn):
    """PostgreSQL's version 6 remakes the generated sort keys (``hidden`` in
    them): boards recorded at version 5, over many buckets, read the same
    after it, their counts exact, and an exclusion on them keeps them exact."""
    from app.store import pg_migrations

    conn = await asyncpg.connect(pg_dsn)
    try:
        await pg_migrations.migrate(conn, target=5)
        await conn.execute(pg_migrations.bucket_max_function(4))  # many buckets for 30 players
        await conn.execute("INSERT INTO players (user_id, name) SELECT u, 'user' || u FROM generate_series(1, 30) AS u")
        for u in range(1, 31):  # one row a statement (a row trigger splits with the rows it can see)
            await conn.execute("INSERT INTO stats (game, scope, user_id, games, wins, rated_games, mu, sigma)"
                               " VALUES ($1, 10, $2, $3, $4, $3, $5, 3)", NIMMT, u, 5 + u % 3, u % 4, 20.0 + u % 7)
        order = {col: [r[0] for r in await conn.fetch(
            f"SELECT user_id FROM stats WHERE game = $1 AND scope = 10 AND {col} IS NOT NULL ORDER BY {col}", NIMMT)]
            for _, col in BOARDS.values()}
        assert all(len(users) == 30 for users in order.values())
        await _pg_buckets_exact(conn, 10)
    finally:
        await conn.close()
    store = await open_store(pg_dsn)  # migrates to the latest version
    try:
        for board, (name, col) in BOARDS.items():
            page = await store.leaderboard("nimmt", 10, by=name, page_size=30)
            assert [r["user_id"] for r in page.rows] == order[col] and page.total == 30
        async with store._pool.acquire() as conn:
            await _pg_buckets_exact(conn, 10)
        assert await store.exclude_member(10, order["k_wins"][0], 1.0)
        wins = await store.leaderboard("nimmt", 10, by="wins", page_size=30)
        assert [r["user_id"] for r in wins.rows] == order["k_wins"][1:] and wins.total == 29
        async with store._pool.acquire() as conn:
            await _pg_buckets_exact(conn, 10)
    finally:
        await store.close()
