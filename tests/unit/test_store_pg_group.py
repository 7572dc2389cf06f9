"""PostgreSQL group recording (PostgresStore._record_group): a burst of games
written with one statement per table gives the same game ids, boards,
ratings and profiles as the same games recorded one at a time."""
from __future__ import annotations

import asyncio
import random
import threading

from app.store import GameRecord, PlayerResult, open_store
from tests.pg import fresh_database


def game(table_id: int, users: list[int | None], rnd: random.Random, kind: str, guild: int | None) -> GameRecord:
    scores = [rnd.randint(0, 20) for _ in users]
    places = [1 + sum(o < s for o in scores) for s in scores]
    return GameRecord(
        table_id=table_id, guild_id=guild, channel_id=5, game=kind, started_at=1.0, ended_at=2.0, seed=table_id,
        rounds=3, has_bots=None in users, rated=True,
        players=[PlayerResult(u, f"u{u}" if u else "Bot", seat, s, p, {"rounds_won": int(p == 1)})
                 for seat, (u, s, p) in enumerate(zip(users, scores, places))])


def burst(n: int = 200, seed: int = 1) -> list[GameRecord]:
    """Players who meet again and again (ratings chain inside one group), a
    computer seat now and then, two games, global-only and two servers, one
    table recorded twice."""
    rnd = random.Random(seed)
    games = [game(t, [*rnd.sample(range(1, 30), 3), None if t % 5 == 0 else 100 + t], rnd,
                  rnd.choice(["nimmt", "garbage"]), rnd.choice([None, 10, 11])) for t in range(n)]
    games.insert(50, games[10])
    return games


async def same_everywhere(one, two) -> None:
    for kind in ("nimmt", "garbage"):
        for guild in (None, 10, 11):
            for by in ("rating", "wins", "games", "win_rate"):
                assert (await one.leaderboard(kind, guild, by=by, page_size=200, min_games=1)
                        == await two.leaderboard(kind, guild, by=by, page_size=200, min_games=1)), (kind, guild, by)
            for u in range(1, 30):
                assert await one.profile(u, kind, guild) == await two.profile(u, kind, guild)
    assert await two.integrity_check() == ["ok"]


async def test_a_group_equals_one_game_at_a_time():
    games = burst()
    serial, grouped = await open_store(fresh_database()), await open_store(fresh_database())
    try:
        one_by_one = [await serial.record_game(g) for g in games]
        ids = []
        for i in range(0, len(games), 40):
            ids += await grouped._record_group(games[i:i + 40])
        assert ids == one_by_one
        assert ids[50] is None  # the table recorded twice counts once
        await same_everywhere(serial, grouped)
    finally:
        await serial.close()
        await grouped.close()


async def test_concurrent_calls_and_a_bad_record_fail_alone():
    """record_game from 32 tasks at once (group commit); a record the
    database refuses fails alone, the others are recorded as one at a time
    would in the order of their game ids."""
    games = burst(seed=2)
    bad = GameRecord(**{**games[7].__dict__, "table_id": 9_999, "players": [
        PlayerResult(1, "u1", 0, 0, 1), PlayerResult(2, "u2", 1, 2**40, 2)]})  # a score past integer
    serial, grouped = await open_store(fresh_database()), await open_store(fresh_database())
    try:
        queue = iter(games[:100] + [bad] + games[100:])
        errors, recorded = [], []

        async def worker() -> None:
            for g in queue:
                try:
                    game_id = await grouped.record_game(g)
                except Exception as error:
                    errors.append((g.table_id, error))
                else:
                    if game_id is not None:
                        recorded.append((game_id, g))

        await asyncio.gather(*(worker() for _ in range(32)))
        assert [t for t, _ in errors] == [9_999]
        assert len(recorded) == len(games) - 1  # the table recorded twice counts once
        for _, g in sorted(recorded, key=lambda pair: pair[0]):
            await serial.record_game(g)
        await same_everywhere(serial, grouped)
    finally:
        await serial.close()
        await grouped.close()


async def test_a_game_another_process_records_meanwhile_counts_first(monkeypatch):
    """Two games with a player in common finish at once in two processes:
    the first reads its players' rows, the second is recorded meanwhile,
    then the first finds a row changed, reads again and rates after it.
    Both count, and ratings and boards are a serial run's in id order."""
    from app import ratings

    rnd = random.Random(3)
    mine = game(1, [1, 2, 3, 4], rnd, "nimmt", 10)
    theirs = game(2, [1, 5, 6, 7], rnd, "nimmt", 10)
    dsn = fresh_database()

    async def other_process() -> None:
        store = await open_store(dsn)
        try:
            assert await store.record_game(theirs) is not None
        finally:
            await store.close()

    real, calls = ratings.rate, []

    def rate(*args):
        if not calls:  # between this process's read and its write
            calls.append(1)
            thread = threading.Thread(target=lambda: asyncio.run(other_process()))
            thread.start()
            thread.join()
        calls.append(2)
        return real(*args)

    monkeypatch.setattr(ratings, "rate", rate)
    shared, serial = await open_store(dsn), await open_store(fresh_database())
    try:
        assert await shared.record_game(mine) is not None
        assert len(calls) > 1 + 2 * 2  # this game was rated twice in each scope: it read again
        assert await shared.game_of_table(2) < await shared.game_of_table(1)
        for g in (theirs, mine):  # id order
            await serial.record_game(g)
        await same_everywhere(serial, shared)
        assert (await shared.profile(1, "nimmt"))["games"] == 2
    finally:
        await shared.close()
        await serial.close()


async def test_rows_a_process_remembers_but_another_changed_are_read_again():
    """A process records a game, another process then records one with a
    player in common, and the first records its players' next game from the
    rows it remembers writing: the changed row is noticed (its games count),
    the game is rated from the other process's row, and everything equals a
    serial run in id order."""
    rnd = random.Random(4)
    games = [game(1, [1, 2, 3, 4], rnd, "nimmt", 10), game(2, [1, 5, 6, 7], rnd, "nimmt", 10),
             game(3, [1, 2, 3, 4], rnd, "nimmt", 10), game(4, [2, 3, 4, 8], rnd, "nimmt", None)]
    dsn = fresh_database()
    one, two, serial = await open_store(dsn), await open_store(dsn), await open_store(fresh_database())
    try:
        assert await one.record_game(games[0]) is not None
        assert await two.record_game(games[1]) is not None  # player 1's rows change behind one's back
        assert await one.record_game(games[2]) is not None
        assert await one.record_game(games[3]) is not None
        assert await two.record_game(games[2]) is None  # recorded once, whichever process asks
        for g in games:
            await serial.record_game(g)
        await same_everywhere(serial, one)
        assert (await one.profile(1, "nimmt", 10))["games"] == 3
    finally:
        await one.close()
        await two.close()
        await serial.close()
