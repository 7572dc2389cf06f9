"""The bot on PostgreSQL (``DATABASE_URL``), end to end through clicks: a
game played to the end lands once in /stats, /history and /leaderboard; a
lobby and a running game survive a restart and carry on."""
from __future__ import annotations

from typing import Any

import pytest

from app.i18n.catalogue import t
from tests.e2e import description, open_table, running_bot, seat_players, updated
from tests.e2e.test_stats import answer, board_rows, full_game, final_standings

pytestmark = pytest.mark.timeout(300)


async def test_a_bot_on_postgresql_plays_records_and_resumes(world, tmp_path, pg_dsn):
    fd = world.fd
    ana, ben, cid = world.person("ana"), world.person("ben"), world.person("cid")
    on_pg: dict[str, Any] = {"database_url": pg_dsn}
    async with running_bot(fd, tmp_path / "unused.db", world.guild, **on_pg) as bot:
        assert bot.store.backend == "postgresql"
        game = await full_game(fd, world.channel, ana, [ben])
        standings = final_standings(game)
        assert set(standings) == {"ana", "ben"}
        r = await fd.slash(ben, world.channel, "stats")
        text = (await answer(r)).text()
        won = int(standings["ben"][0] == 1)
        assert t("en", "stats.games", games=1, wins=won, rate=f"{100 * won}%") in text
        r = await fd.slash(ana, world.channel, "history")
        assert len(description(r.message).splitlines()) == 1
        r = await fd.slash(ana, world.channel, "leaderboard", by="games")
        rows = board_rows(r.message)  # one game each: a shared place, listed by user id
        assert [(rank, name, games) for rank, name, _, games, _ in rows] == [(1, "ana", 1), (1, "ben", 1)]
        # a lobby waits in another channel over the restart
        other = fd.add_channel(world.guild, "more")
        lobby = await open_table(fd, ana, other, "nimmt new", seats=3, rounds=1, turn_time=0)
        await seat_players(lobby, ana, [ben])
    assert not (tmp_path / "unused.db").exists()  # nothing went to the SQLite file

    async with running_bot(fd, tmp_path / "unused.db", world.guild, **on_pg) as bot:
        (table,) = bot.tables.tables.values()
        assert table.id == lobby.table_id and [s.name for s in table.seats] == ["ana", "ben"]
        r = await lobby.click(cid, lobby.lobby, f"table.join:{lobby.table_id}")  # the old button works
        await updated(r)
        r = await lobby.click(ana, lobby.lobby, f"table.start:{lobby.table_id}")
        await updated(r)
        assert (await bot.store.table(lobby.table_id)).status == "playing"
        # the game recorded before the restart is still there, once
        r = await fd.slash(ben, world.channel, "history")
        assert len(description(r.message).splitlines()) == 1
