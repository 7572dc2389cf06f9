"""A database saved by the version before the game registry (schema 3: four
counter columns in ``stats``) with live tables in it loads after the change:
lobbies and games in progress come back and go on, stats keep their figures,
and new games add to them."""
from __future__ import annotations

import json
import random
import time

import aiosqlite
import pytest

from app.store.sqlite_migrations import LATEST, migrate, user_version
from app.store import GameRecord, PlayerResult, open_store
from app.tables.manager import TableManager
from core import registry
from core.games.garbage import engine as garbage
from core.games.nimmt import engine as nimmt
from core.protocol import to_act
from tests.e2e import private_answer, running_bot

pytestmark = pytest.mark.timeout(120)

GUILD = 555


def seats(*people):
    return [{"user_id": uid, "name": name, "away": False, "missed": 0} for uid, name in people]


def meta(host, people, seed=None, max_seats=4, **options):
    return {"host_id": host, "max_seats": max_seats, "options": {"turn_time": 0, **options}, "locale": "en",
            "seats": seats(*people), "seed": seed, "messages": {}, "created_at": 1.0,
            "started_at": 2.0 if seed is not None else None, "turn_seat": None, "turn_deadline": None}


def played(cls, n, seed, steps, player, **options):
    game = cls.new(n, seed, **options)
    rng = random.Random(seed)
    for _ in range(steps):
        seat = min(to_act(game))
        game.apply(seat, player(game, seat, rng))
    return game


async def old_database(path, channel, people, guild=GUILD):
    """What the previous version left behind: schema 3, a lobby, two games in
    progress with their action logs, finished games and their stats rows."""
    (ana, _), (ben, _) = people
    db = await aiosqlite.connect(path, isolation_level=None)
    assert await migrate(db, target=3) == 3
    games = {
        "nimmt": played(nimmt.Nimmt, 2, 7, 9, nimmt.greedy_player, rounds=2),
        "garbage": played(garbage.Garbage, 2, 8, 6, garbage.greedy_player),
    }
    rows = [(key, "playing", meta(ana, people, seed=g.seed, **g.options), g.log) for key, g in games.items()]
    rows.append(("nimmt", "lobby", meta(ana, people[:1]), []))
    # the 11 nimmt! game in ``channel``, the others beside it; saved a minute ago
    # (a table nobody touched for a day closes itself)
    now = time.time() - 60
    for number, (game, status, data, log) in enumerate(rows):
        cursor = await db.execute(
            "INSERT INTO tables (guild_id, channel_id, game, status, meta, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (guild, channel + number, game, status, json.dumps(data), now, now))
        table_id = (await cursor.fetchone())[0]
        for idx, (seat, action) in enumerate(log):
            await db.execute("INSERT INTO table_actions VALUES (?, ?, ?, ?)", (table_id, idx, seat, action))
    # stats as schema 3 kept them: 11 nimmt! in the counter columns rounds (the
    # rounds played), rounds_won, bulls_earned; Garbage in hands_won
    await db.execute("INSERT INTO players VALUES (?, 'ana'), (?, 'ben')", (ana, ben))
    for scope in (0, guild):
        await db.execute(
            "INSERT INTO stats (game, scope, user_id, games, wins, score_sum, rounds, rounds_won, bulls_earned,"
            " hands_won, rated_games, mu, sigma) VALUES (0, ?, ?, 2, 1, 20, 8, 3, 2, 0, 2, 26.0, 7.0)", (scope, ana))
        await db.execute(
            "INSERT INTO stats (game, scope, user_id, games, wins, score_sum, rounds, rounds_won, bulls_earned,"
            " hands_won, rated_games, mu, sigma) VALUES (1, ?, ?, 3, 2, 4, 0, 0, 0, 5, 3, 27.0, 6.0)", (scope, ana))
    await db.close()
    return games


async def test_old_tables_and_stats_load_and_go_on(tmp_path):
    path = tmp_path / "old.db"
    games = await old_database(path, 900, [(11, "ana"), (12, "ben")])
    store = await open_store(str(path))
    try:
        assert await user_version(store._r) == LATEST
        # stats keep their figures under the game's declared names
        p = await store.profile(11, "nimmt")
        assert (p["games"], p["wins"], p["rounds_won"], p["bulls_earned"]) == (2, 1, 3, 2)
        assert p["avg_penalty_per_round"] == pytest.approx(20 / 8)
        g = await store.profile(11, "garbage", GUILD)
        assert (g["games"], g["hands_won"]) == (3, 5)
        assert (await store.leaderboard("nimmt", GUILD, by="wins")).rows[0]["user_id"] == 11
        # lobbies and games in progress come back as they were and go on
        manager = TableManager(store, {s.key: s.engine() for s in registry.GAMES},
                               {s.key: s.computer() for s in registry.GAMES})
        restored = {t.game + ":" + t.status: t for t in await manager.restore()}
        assert set(restored) == {"nimmt:lobby", "nimmt:playing", "garbage:playing"}
        for key, game in games.items():
            table = restored[f"{key}:playing"]
            assert table.engine.to_dict() == game.to_dict()
            seat = table.engine.to_move
            action = registry.spec(key).computer()(table.engine, seat, random.Random(0))
            await manager.act(table, table.seats[seat].user_id, action)
            assert table.version == len(game.log) + 1
        await manager.join(restored["nimmt:lobby"], 12, "ben")
        # a new game adds to the old counters; a third game starts its own
        await store.record_game(GameRecord(
            table_id=99, guild_id=GUILD, channel_id=900, game="nimmt", started_at=3, ended_at=4, seed=1, rounds=2,
            has_bots=False, rated=True, players=[
                PlayerResult(11, "ana", 0, 6, 1, {"rounds_won": 2, "bulls_earned": 0, "penalty_rounds": 2}),
                PlayerResult(12, "ben", 1, 9, 2, {"rounds_won": 0, "bulls_earned": 1, "penalty_rounds": 2})]))
        p = await store.profile(11, "nimmt", GUILD)
        assert (p["games"], p["rounds_won"], p["bulls_earned"]) == (3, 5, 2)
        assert p["avg_penalty_per_round"] == pytest.approx(26 / 10)
        await store.record_game(GameRecord(
            table_id=100, guild_id=GUILD, channel_id=900, game="take6", started_at=3, ended_at=4, seed=1, rounds=3,
            has_bots=False, rated=True, players=[
                PlayerResult(11, "ana", 0, 70, 2, {"deals": 3, "deals_won": 1, "rows_taken": 4}),
                PlayerResult(12, "ben", 1, 30, 1, {"deals": 3, "deals_won": 2, "rows_taken": 1})]))
        s = await store.profile(12, "take6")
        assert (s["games"], s["wins"], s["deals_won"], s["rows_taken"]) == (1, 1, 2, 1)
        assert s["avg_penalty_per_deal"] == pytest.approx(10.0)
        assert (await store.profile(12, "nimmt"))["games"] == 1  # the games keep apart
    finally:
        await manager.shutdown()
        await store.close()


async def test_the_bot_starts_on_an_old_database(world, tmp_path):
    """The real bot on a schema-3 file: the game in progress is shown again
    and playable, and /stats shows the figures saved before."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    path = tmp_path / "old.db"
    games = await old_database(path, world.channel.id, [(ana.id, "ana"), (ben.id, "ben")], guild=world.guild.id)
    async with running_bot(fd, path, world.guild) as bot:
        r = await fd.slash(ana, world.channel, "stats")
        await r.settled(timeout=10)
        text = (r.followups[0] if r.followups else r.message).text()
        assert "Games: 2 · wins: 1" in text, text
        assert "Penalty per round: 2.5 · rounds won: 3 · bull cards earned: 2" in text, text
        # the 11 nimmt! game in progress is shown again, in a thread, and its hands open
        threads = await fd.wait_for(lambda: fd.threads(world.channel), timeout=10)
        table_message = await fd.wait_for(lambda: next((m for m in fd.messages(threads[-1]) if any(
            b.get("custom_id", "").startswith("nimmt.hand:") for b in m.buttons())), None), timeout=10)
        seat = games["nimmt"].to_move
        mover = (ana, ben)[seat]
        hand_button = next(b for b in table_message.buttons() if b["custom_id"].startswith("nimmt.hand:"))
        r = await fd.click(mover, table_message, hand_button["custom_id"])
        panel = await private_answer(r)  # a deferred update of the table message, the panel privately
        assert panel.ephemeral and panel.ephemeral_to == mover.id
        table = next(t for t in bot.tables.tables.values() if t.game == "nimmt" and t.status == "playing")
        for card in table.engine.view(seat)["hand"]:
            assert str(card) in panel.text()
