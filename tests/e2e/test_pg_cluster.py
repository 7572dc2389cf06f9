"""PostgreSQL end to end with real bot processes on ``DATABASE_URL`` (the suite's
own server, tests/pg.py), against the stand-in, driven by clicks.

* A shard cluster: two processes of two of four shards each on one
  database; tables in servers of different processes play to the end, the
  global leaderboard seen from either process shows the players of both;
  one process is SIGKILLed mid-game, the other finishes its table, and the
  killed one's table resumes when it comes back (a button of the old table
  message answers), its game recorded once.
* Moving from SQLite: a bot on a file with a finished game, a setting, a
  lobby, a night's sign-up and a live table mid-game is stopped;
  ``python bot.py --copy-db <url>`` copies the file; the bot started on
  ``DATABASE_URL`` finishes the live table there and shows the old games
  beside the new one.  The copy refuses a database that holds rows (exit
  code 3) and leaves the SQLite file as it was.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import asyncpg
import pytest

from app.i18n.catalogue import t
from app.store import open_store
from tests import pg
from tests.conftest import make_world
from tests.fakediscord import NoAcknowledgement
from tests.e2e.processes import BotProcess
from tests.e2e.test_restart import Run, decide, final_state
from tests.e2e import description, panel_answer, private_answer, updated
from tests.e2e.test_shards import SHARDS, ShardProcess, board, syncs
from tests.e2e.test_store_copy import copy_db

pytestmark = pytest.mark.timeout(240)


# ----------------------------------------------------------------- the database, as the test reads it
async def pg_table_row(dsn: str, table_id: int) -> tuple[str, dict[str, Any], int]:
    """(status, meta, number of saved actions) as the bots last committed them."""
    conn = await asyncpg.connect(dsn)
    try:
        status, meta = await conn.fetchrow("SELECT status, meta FROM tables WHERE id = $1", table_id)
        count = await conn.fetchval("SELECT count(*) FROM table_actions WHERE table_id = $1", table_id)
        return status, json.loads(meta), count
    finally:
        await conn.close()


async def pg_final_state(dsn: str, table_id: int) -> dict[str, Any]:
    conn = await asyncpg.connect(dsn)
    try:
        status = await conn.fetchval("SELECT status FROM tables WHERE id = $1", table_id)
        games = await conn.fetch("SELECT id, n_players FROM games WHERE table_id = $1", table_id)
        standings = await conn.fetch(
            "SELECT p.seat, p.user_id, p.place FROM game_players p JOIN games g ON g.id = p.game_id "
            "WHERE g.table_id = $1 ORDER BY p.seat", table_id)
        return {"status": status, "games": [tuple(g) for g in games], "standings": [tuple(s) for s in standings]}
    finally:
        await conn.close()


class PgRun(Run):
    """A scripted table (tests/e2e/test_restart.py) whose saved state is read from PostgreSQL."""

    dsn: str = ""

    async def astate(self) -> tuple[str, dict[str, Any], int]:
        if not self.dsn:  # still on the SQLite file
            return self.state()
        return await pg_table_row(self.dsn, self.table_id)

    async def mover(self) -> Any | None:
        """The person to move (None: the game is over); waits while the computer thinks."""
        async def ready() -> Any:
            status, meta, _ = await self.astate()
            if status != "playing":
                return ("over",)
            seat = meta["turn_seat"]
            user_id = meta["seats"][seat]["user_id"] if seat is not None else None
            return (user_id,) if user_id is not None else None

        found = await self.fd.wait_for(ready, timeout=20, interval=0.05)
        if found == ("over",):
            return None
        return next(u for u in self.people if u.id == found[0])

    async def step(self, user: Any) -> None:
        """As :meth:`Run.step`; a hand opened the moment the database names its
        owner may still show the turn before (the bot commits a move, then shows
        it: on PostgreSQL the pool's release is one more round trip in between):
        the player then presses *Refresh* until their controls come."""
        panel = self.panels.get(user.id)
        if panel is not None and decide(panel) is not None:
            return await super().step(user)
        r = await self.interact(user, self.table_message(), "click", f"nimmt.hand:{self.table_id}", [])
        panel = await private_answer(r)
        assert panel.ephemeral_to == user.id, r
        await self._until_controls(user, panel)

    async def _until_controls(self, user: Any, panel: Any) -> None:
        for _ in range(50):
            if decide(panel) is not None:
                break
            await asyncio.sleep(0.1)
            panel = await panel_answer(await self.interact(user, panel, "click", f"nimmt.refresh:{self.table_id}", []))
        assert decide(panel) is not None, f"{user.name}'s turn, but no controls:\n{panel.text()}"
        self.panels[user.id] = panel

    async def reopen_on(self, message: Any) -> None:
        """The mover clicks *My hand* on ``message`` (e.g. the table message shown
        before a restart) and gets their panel; the game goes on from it."""
        user = await self.mover()
        assert user is not None, "the game ended too early for the test"
        r = await self.interact(user, message, "click", f"nimmt.hand:{self.table_id}", [])
        panel = await private_answer(r)
        assert panel.ephemeral_to == user.id, r
        await self._until_controls(user, panel)


class PgBotProcess(BotProcess):
    """The unsharded bot on ``DATABASE_URL`` (``DATABASE_PATH`` still names the old file)."""

    def __init__(self, fd: Any, guild: Any, database: Path, logs: Path, dsn: str) -> None:
        super().__init__(fd, guild, database, logs)
        self.dsn = dsn

    def env(self) -> dict[str, str]:
        return {**super().env(), "DATABASE_URL": self.dsn}


def pg_run(dsn: str, *args: Any, **kwargs: Any) -> PgRun:
    run = PgRun(*args, **kwargs)
    run.dsn = dsn
    return run


class PgShardProcess(ShardProcess):
    """A process of the shard cluster on ``DATABASE_URL`` instead of a file."""

    def __init__(self, fd: Any, dsn: str, logs: Path, shard_ids: tuple[int, ...]) -> None:
        # DATABASE_PATH stays set: with both, the URL wins (the file is never made)
        super().__init__(fd, logs.with_suffix(".db"), logs, shard_ids)
        self.dsn = dsn

    def env(self) -> dict[str, str]:
        return {**super().env(), "DATABASE_URL": self.dsn}


def games_line(text: str) -> int:
    found = re.findall(r"Games: (\d+) ·", text)
    assert found, text
    return int(found[0])


async def profile(fd: Any, user: Any, channel: Any) -> str:
    r = await fd.slash(user, channel, "stats")
    assert r.ack_type in (4, 5) and r.ephemeral, r
    await r.settled(timeout=10)
    return (r.followups[0] if r.followups else r.message).text()


# ----------------------------------------------------------------- a shard cluster on one PostgreSQL
async def test_two_processes_of_two_shards_on_one_postgresql(processes, pg_dsn, tmp_path):
    async with make_world(shard_count=SHARDS, max_concurrency=SHARDS) as world:
        fd = world.fd
        north, south = fd.add_guild("North", shard=1), fd.add_guild("South", shard=2)
        people = {}
        for guild, names in ((north, ("ana", "ben")), (south, ("cat", "dan"))):
            for name in names:
                people[name] = fd.add_user(name)
                fd.add_member(guild, people[name])
        one = processes(PgShardProcess(fd, pg_dsn, tmp_path / "one.log", (0, 1)))
        two = processes(PgShardProcess(fd, pg_dsn, tmp_path / "two.log", (2, 3)))
        await asyncio.gather(one.start(), two.start())  # both migrate the empty database at once: once
        await fd.wait_commands(timeout=15)
        assert sorted(map(tuple, fd.identified_shards)) == [(i, SHARDS) for i in range(SHARDS)]
        assert syncs(fd) == 1, "commands are synced by the process running shard 0 only"

        n = pg_run(pg_dsn, SimpleNamespace(fd=fd, guild=north), one, [people["ana"], people["ben"]])
        s = pg_run(pg_dsn, SimpleNamespace(fd=fd, guild=south), two, [people["cat"], people["dan"]])
        await n.open("games")
        await s.open("games")
        await n.start()
        await s.start()
        for _ in range(4):  # both tables get going
            for run in (n, s):
                user = await run.mover()
                assert user is not None, "a game ended too early for the test"
                await run.step(user)
        old_table = s.table_message()
        await two.kill()  # mid-game: the South's process dies
        status, _, version = await s.astate()
        assert status == "playing"
        shown = len(fd.messages(s.thread))
        with pytest.raises(NoAcknowledgement):  # nobody runs shard 2 now
            await fd.click(people["cat"], old_table, f"nimmt.hand:{s.table_id}")

        await n.play()  # the North's process finishes its table meanwhile
        assert "Game over!" in await n.finish_shown()
        assert (await s.astate())[::2] == ("playing", version), "a process moved a table of a server it does not run"
        assert len(fd.messages(s.thread)) == shown
        north_board = await board(fd, people["ana"], n.channel, "global")
        assert "ana" in north_board and "ben" in north_board and "cat" not in north_board, north_board

        await two.start()  # the South's process comes back: its table resumes, the old message's button works
        assert syncs(fd) == 1, "a process without shard 0 never syncs commands"
        await s.reopen_on(old_table)
        await s.play()
        assert "Game over!" in await s.finish_shown()

        for who, channel in ((people["ana"], n.channel), (people["dan"], s.channel)):  # from either process
            everyone = await board(fd, who, channel, "global")
            for name in people:
                assert name in everyone, everyone
        local = await board(fd, people["cat"], s.channel, "server")
        assert "cat" in local and "dan" in local and "ana" not in local, local
        for name in people:  # one game each, recorded once (the South's across a kill)
            assert games_line(await profile(fd, people[name], (n if name in ("ana", "ben") else s).channel)) == 1

        for process in (one, two):
            await process.stop()
        for run in (n, s):
            state = await pg_final_state(pg_dsn, run.table_id)
            assert state["status"] == "finished" and len(state["games"]) == 1, state
            assert [seat[1] for seat in state["standings"]] == [u.id for u in run.people] + [None]
        assert not one.database.exists() and not two.database.exists()


# ----------------------------------------------------------------- moving from SQLite with --copy-db
def fingerprint(database: Path) -> tuple[str, int]:
    """The SQLite file byte for byte, and what its write-ahead log holds (0: no
    change waiting to be written into the file; reading a WAL file leaves an
    empty -wal and a -shm beside it)."""
    wal = database.with_name(database.name + "-wal")
    return hashlib.sha256(database.read_bytes()).hexdigest(), wal.stat().st_size if wal.exists() else 0


async def row_counts(dsn: str) -> dict[str, int]:
    conn = await asyncpg.connect(dsn)
    try:
        return {name: await conn.fetchval(f"SELECT count(*) FROM {name}")
                for name in ("tables", "table_actions", "games", "game_players", "stats", "nights", "guild_settings")}
    finally:
        await conn.close()


async def test_copy_db_moves_a_running_bot_to_postgresql(world, processes, pg_dsn, tmp_path):
    fd = world.fd
    ana, ben, cat = world.person("ana"), world.person("ben"), world.person("cat")
    boss = world.person("boss", manage_guild=True)
    database = tmp_path / "bot.db"
    lite = processes(BotProcess(fd, world.guild, database, tmp_path / "lite.log"))
    await lite.start()

    done = pg_run("", world, lite, [ana, ben])  # a finished game on the file
    await done.open("first")
    await done.start()
    await done.play()
    assert "Game over!" in await done.finish_shown()
    live = pg_run("", world, lite, [ana, ben])  # a table left mid-game
    await live.open("live")
    await live.start()
    for _ in range(6):
        user = await live.mover()
        assert user is not None, "the game ended too early for the test"
        await live.step(user)

    r = await fd.slash(boss, world.channel, "settings language", language="de")  # a setting: tables speak German
    assert r.ephemeral and r.message.text() == t("en", "admin.language_set", language="Deutsch"), r.message.text()
    lobby_channel = fd.add_channel(world.guild, "lobby")
    r = await fd.slash(ben, lobby_channel, "nimmt new", seats=3, rounds=1, turn_time=0)  # a lobby
    assert r.ack_type == 4 and r.message.buttons()[0]["label"] == t("de", "table.join"), r
    lobby = r.message
    lobby_id = int(re.match(r"table.join:(\d+)", lobby.buttons()[0]["custom_id"])[1])
    night_channel = fd.add_channel(world.guild, "night")
    r = await fd.slash(ana, night_channel, "night start", game="nimmt", table_size=4)  # a night's sign-up
    assert r.ack_type == 4 and not r.ephemeral, r
    signup = r.message
    night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
    await updated(await fd.click(ben, signup, f"night:{night_id}:join"))
    assert t("de", "nights.signed_up", count=2) in signup.text()
    await lite.stop()
    status, _, moves = live.state()
    assert status == "playing" and moves > 0
    before = fingerprint(database)

    copied = copy_db(database, pg_dsn)  # python bot.py --copy-db <url>, DATABASE_PATH set
    assert copied.returncode == 0, copied.stderr
    assert "Copied" in copied.stdout and "1 games" in copied.stdout, copied.stdout
    assert fingerprint(database) == before, "the copy changed the SQLite file"
    assert sorted(p.name for p in database.parent.glob("bot.db*")) == ["bot.db"], "the copy left files beside it"
    moved = await row_counts(pg_dsn)
    refused = copy_db(database, pg_dsn)  # a second copy: the target holds rows now
    assert refused.returncode == 3, (refused.returncode, refused.stderr)
    assert "Refusing to copy" in refused.stderr and "not empty" in refused.stderr, refused.stderr
    assert await row_counts(pg_dsn) == moved, "the refused copy changed the database"
    assert fingerprint(database) == before

    old_table = live.table_message()
    on_pg = processes(PgBotProcess(fd, world.guild, database, tmp_path / "pg.log", pg_dsn))
    await on_pg.start()
    live.bot, live.dsn = on_pg, pg_dsn
    assert (await live.astate())[::2] == (status, moves), "the live table was not copied as it was"
    await live.reopen_on(old_table)  # the old table message's button answers on PostgreSQL
    await live.play()
    assert "Game over!" in await live.finish_shown()

    r = await fd.click(cat, lobby, f"table.join:{lobby_id}")  # the lobby fills up, in German (its setting)
    await updated(r)
    assert "cat" in r.message.text(), r
    r = await fd.slash(cat, fd.add_channel(world.guild, "fresh"), "nimmt new", seats=2)
    assert r.ack_type == 4 and r.message.buttons()[0]["label"] == t("de", "table.join"), r
    r = await fd.click(cat, signup, f"night:{night_id}:join")  # the night's sign-up goes on
    await updated(r)
    assert t("de", "nights.signed_up", count=3) in signup.text(), signup.text()

    for user in (ana, ben):  # the old game and the new one
        assert games_line(await profile(fd, user, world.channel)) == 2
    r = await fd.slash(ana, world.channel, "history")
    assert r.ack_type == 4 and r.ephemeral
    assert len(description(r.message).splitlines()) == 2, description(r.message)
    everyone = await board(fd, ben, world.channel, "global")
    assert "ana" in everyone and "ben" in everyone and "2 games" in everyone, everyone
    await on_pg.stop()

    first, second = await pg_final_state(pg_dsn, done.table_id), await pg_final_state(pg_dsn, live.table_id)
    assert first["status"] == second["status"] == "finished"
    assert len(first["games"]) == len(second["games"]) == 1
    assert first["games"][0][0] < second["games"][0][0], "the new game's id follows the copied ones"
    assert final_state(database, live.table_id)["status"] == "playing", "the file was written after the move"
    assert fingerprint(database) == before

    # docs/hosting.md's backup: pg_dump -Fc, pg_restore into an empty database: the same games, boards and tables
    dump, restored = tmp_path / "cardnight.dump", pg.fresh_database()
    for command in (["pg_dump", "-Fc", "-f", str(dump), pg_dsn], ["pg_restore", "-d", restored, str(dump)]):
        out = subprocess.run([str(pg.bindir() / command[0]), *command[1:]], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    assert await row_counts(restored) == await row_counts(pg_dsn)
    stores = [await open_store(url) for url in (pg_dsn, restored)]
    try:
        seen = [(await s.leaderboard("nimmt", None, by="games", page_size=10), await s.history(ana.id),
                 await s.profile(ben.id, "nimmt"), [(r.id, r.status, r.actions) for r in await s.active_tables()])
                for s in stores]
        assert seen[0] == seen[1]
        assert await stores[1].integrity_check() == ["ok"]
    finally:
        for s in stores:
            await s.close()
