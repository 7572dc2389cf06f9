"""PostgreSQL boards past one bucket (app.store.pg_migrations): ranks, far
pages and cursors stay exact while buckets split, after a rebuild, and with
another process recording at the same time."""
from __future__ import annotations

import asyncio
import random

import asyncpg

from app.store import GameRecord, PlayerResult, open_store, postgres
from app.store.pg_migrations import BUCKET_FILL, BUCKET_MAX
from tests.pg import fresh_database

#: more players than one bucket holds: the global wins board splits
N_USERS = BUCKET_MAX + 700


def game(table_id: int, users: list[int], rnd: random.Random, guild_id: int = 10) -> GameRecord:
    scores = [rnd.randint(0, 20) for _ in users]
    places = [1 + sum(o < s for o in scores) for s in scores]
    return GameRecord(
        table_id=table_id, guild_id=guild_id, channel_id=5, game="nimmt", started_at=100.0, ended_at=200.0,
        seed=table_id, rounds=3, has_bots=False, rated=True,
        players=[PlayerResult(u, f"user{u}", seat, sc, pl, {"rounds_won": int(pl == 1)})
                 for seat, (u, sc, pl) in enumerate(zip(users, scores, places))],
    )


async def league(store, first_table: int, n_games: int, seed: int) -> None:
    """Every user plays at least once, then random tables of 4 (keys move
    between buckets); 16 recordings in flight (group commit)."""
    rnd = random.Random(seed)
    users = list(range(1, N_USERS + 1))
    rnd.shuffle(users)
    tables = [users[i:i + 4] for i in range(0, len(users) - 3, 4)]
    tables += [rnd.sample(users, 4) for _ in range(n_games - len(tables))]
    queue = iter(enumerate(tables, first_table))

    async def worker() -> None:
        for table_id, seats in queue:
            await store.record_game(game(table_id, seats, rnd, guild_id=10 + table_id % 2))

    await asyncio.gather(*(worker() for _ in range(16)))


async def bucket_errors(dsn: str) -> list[str]:
    """Every bucket whose count differs from the entries in its key range."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("""
            SELECT b.game, b.scope, b.board, b.lo, b.cnt, (
                SELECT count(*) FROM stats AS s
                WHERE s.game = b.game AND s.scope = b.scope
                  AND (ARRAY[s.k_rating, s.k_wins, s.k_rate, s.k_games])[b.board + 1] >= b.lo
                  AND (ARRAY[s.k_rating, s.k_wins, s.k_rate, s.k_games])[b.board + 1] < coalesce((
                      SELECT min(n.lo) FROM buckets AS n
                      WHERE n.game = b.game AND n.scope = b.scope AND n.board = b.board AND n.lo > b.lo),
                      '~')) AS actual
            FROM buckets AS b""")
        return [f"{tuple(r)[:4]}: {r['cnt']} counted, {r['actual']} there" for r in rows if r["cnt"] != r["actual"]]
    finally:
        await conn.close()


async def buckets_of(dsn: str, board: int) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval("SELECT count(*) FROM buckets WHERE game = 0 AND scope = 0 AND board = $1",
                                   board)
    finally:
        await conn.close()


async def check_boards(store) -> None:
    """What a player sees: every rank, a far page by number and by cursor,
    agree with the whole board sorted in one read."""
    for guild in (None, 11):
        for by in ("wins", "rating", "games"):
            full = await store.leaderboard("nimmt", guild, by=by, page_size=N_USERS)
            rows = full.rows
            assert full.total == len(rows)
            assert [r["position"] for r in rows] == list(range(1, len(rows) + 1))
            shared = {r["user_id"]: next(o["position"] for o in rows if o["value"] == r["value"]) for r in rows}
            assert [r["rank"] for r in rows] == [shared[r["user_id"]] for r in rows]  # equal values share
            if not rows:
                continue
            for i in list(range(0, len(rows), 97)) + [len(rows) - 1]:
                assert await store.board_place(rows[i]["user_id"], "nimmt", guild, by=by) == (
                    shared[rows[i]["user_id"]], i + 1), (guild, by, i)
            for n in sorted({0, 1, full.total // 20, max(full.total // 10 - 1, 0), full.total // 10 + 5}):
                p = await store.leaderboard("nimmt", guild, by=by, page=n)
                last = (full.total - 1) // 10
                assert p.page == min(n, last)
                assert [(r["user_id"], r["rank"]) for r in p.rows] == [
                    (r["user_id"], r["rank"]) for r in rows[p.page * 10:p.page * 10 + 10]]
                if p.page < last:
                    after = await store.leaderboard("nimmt", guild, by=by, after=p.last)
                    assert after.rows[0]["position"] == p.page * 10 + 11
                    assert after.rows[0]["rank"] == rows[p.page * 10 + 10]["rank"]
                    assert [r["user_id"] for r in after.rows] == [r["user_id"] for r in rows[p.page * 10 + 10:
                                                                                          p.page * 10 + 20]]
                if p.page > 0:
                    before = await store.leaderboard("nimmt", guild, by=by, before=p.first)
                    assert [r["position"] for r in before.rows] == list(range(p.page * 10 - 9, p.page * 10 + 1))
                    assert [r["rank"] for r in before.rows] == [r["rank"] for r in rows[p.page * 10 - 10:p.page * 10]]
            some = rows[len(rows) // 3]["user_id"]
            if by == "rating":
                assert (await store.profile(some, "nimmt", guild))["rank"] == shared[some]


async def test_ranks_and_far_pages_exact_while_buckets_split(monkeypatch):
    monkeypatch.setattr(postgres, "SPLIT_EVERY", 0.0)  # each overfull bucket split after the recording
    dsn = fresh_database()
    store = await open_store(dsn, max_size=4)
    try:
        await league(store, 1, N_USERS // 4 + 400, seed=1)
        assert await buckets_of(dsn, 1) >= 2  # the global wins board has split
        assert await bucket_errors(dsn) == []
        await check_boards(store)
        assert await store.integrity_check() == ["ok"]
    finally:
        await store.close()


async def test_rebuild_keeps_every_rank_and_page():
    dsn = fresh_database()
    store = await open_store(dsn, max_size=4)
    try:
        await league(store, 1, N_USERS // 4 + 100, seed=2)
        before = await store.leaderboard("nimmt", None, by="wins", page=150)
        ranks = {u: await store.rank(u, "nimmt", None, by="wins") for u in range(1, N_USERS + 1, 131)}
        await store.rebuild_boards()
        assert await buckets_of(dsn, 1) == -(-N_USERS // BUCKET_FILL)  # cut anew into BUCKET_FILL entries
        assert await bucket_errors(dsn) == []
        assert await store.leaderboard("nimmt", None, by="wins", page=150) == before
        assert {u: await store.rank(u, "nimmt", None, by="wins") for u in ranks} == ranks
        await league(store, 10_000, 300, seed=3)  # recording goes on over the rebuilt buckets
        assert await bucket_errors(dsn) == []
        await check_boards(store)
    finally:
        await store.close()


async def test_two_processes_recording_keep_the_counts():
    """Two stores (two pools, as two bot processes) record at once: every
    bucket count is still exact and every rank agrees with the full board."""
    dsn = fresh_database()
    one, two = await open_store(dsn, max_size=4), await open_store(dsn, max_size=4)
    try:
        await asyncio.gather(league(one, 1, N_USERS // 4 + 50, seed=4), league(two, 100_000, 500, seed=5))
        assert await bucket_errors(dsn) == []
        await check_boards(one)
    finally:
        await one.close()
        await two.close()
