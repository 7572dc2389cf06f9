"""An upgrade from the version before the games became slices (commit a141ddb)
to today's code: its database and the messages it had posted keep working.

The fixture ``fixtures/schema_a141ddb.sqlite3-fixture`` is the database that
version left behind, made by ``fixtures/make_schema_a141ddb.py`` run from a
checkout of a141ddb against that version's own stand-in: a game night (11
nimmt!, tables of two, three rounds) whose round 1 is over (two games recorded,
the stats written) and whose round 2 is being played; a running 11 nimmt! table
(one turn played), a running 6 nimmt! table (with a computer), a running
Garbage table, and a Garbage lobby.  ``fixtures/schema_a141ddb.json`` holds the
Discord side the old bot left: the server, channels, threads and people (their
snowflakes), and every message of the bot with buttons, with the custom_ids it
gave them.

The test rebuilds that Discord side in the stand-in, starts today's bot on a
copy of the database, and checks what the players would: the schema is
migrated to today's, every table and the night are back, and clicks on the old
messages (My hand and a move on each running table, Join on the lobby, Join on
the night's sign-up) answer and act; /stats and /leaderboard show the games the
old version recorded.

The upgrade is taken to happen just after the old bot stopped: the clock times
saved in the copy (epoch seconds near the moment it was made) are moved forward
by the fixture's age, or the tables would count as idle for days.
"""
from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio

from app.store import open_store
from app.store.sqlite_migrations import LATEST
from tests.conftest import World
from tests.fakediscord import FakeDiscord
from tests.e2e import Table, button, description, nimmt_turn, private_answer, running_bot, updated

pytestmark = pytest.mark.timeout(240)

FIXTURES = Path(__file__).parent / "fixtures"
DATABASE = FIXTURES / "schema_a141ddb.sqlite3-fixture"
SAVED = json.loads((FIXTURES / "schema_a141ddb.json").read_text())
TWO_DAYS = 2 * 86400


def shift_clock(path: Path) -> None:
    """Move every saved clock time (a REAL column, or a number in a JSON column, within two
    days of when the fixture was made: its last table update) forward to now."""
    con = sqlite3.connect(path)
    try:
        made = con.execute("SELECT max(updated_at) FROM tables").fetchone()[0]
        seconds = time.time() - made
        low, high = made - TWO_DAYS, made + TWO_DAYS

        def moved(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: moved(v) for k, v in value.items()}
            if isinstance(value, list):
                return [moved(v) for v in value]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high:
                return value + seconds
            return value

        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            columns = con.execute(f'PRAGMA table_info("{name}")').fetchall()
            for _, column, kind, *_ in columns:
                if kind.upper() == "REAL":
                    con.execute(f'UPDATE "{name}" SET "{column}" = "{column}" + ? WHERE "{column}" BETWEEN ? AND ?',
                                (seconds, low, high))
                elif column == "meta":
                    rows = con.execute(f'SELECT rowid, meta FROM "{name}"').fetchall()
                    con.executemany(f'UPDATE "{name}" SET meta = ? WHERE rowid = ?',
                                    [(json.dumps(moved(json.loads(meta))), rowid) for rowid, meta in rows])
        con.commit()
    finally:
        con.close()


def schema(path: Path) -> dict[str, set[str]]:
    """Table -> its column names, and index -> its table, of a database file."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found: dict[str, set[str]] = {}
        for kind, name, table in con.execute("SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE "
                                             "'sqlite_%'"):
            if kind == "table":
                found[name] = {r[1] for r in con.execute(f'PRAGMA table_info("{name}")')}
            else:
                found[f"{kind} {name}"] = {table}
        return found
    finally:
        con.close()


def rebuild_discord(world: World) -> dict[int, Any]:
    """The server, channels, threads, people and bot messages of the saved world, with their
    snowflakes (the bot's messages authored by today's bot user); returns user id -> user."""
    fd = world.fd
    guild = fd.add_guild(SAVED["guild"]["name"], id=SAVED["guild"]["id"])
    channels: dict[int, Any] = {}
    for saved in sorted(SAVED["channels"], key=lambda c: c["parent_id"] is not None):
        if saved["parent_id"] is None:
            channels[saved["id"]] = fd.add_channel(guild, saved["name"], type=saved["type"], id=saved["id"])
        else:
            channels[saved["id"]] = fd.add_thread(channels[saved["parent_id"]], saved["name"], owner=fd.bot_user,
                                                  private=saved["type"] == 12, id=saved["id"])
    users = {}
    for saved in SAVED["users"]:
        user = fd.add_user(saved["name"], locale=saved["locale"], id=saved["id"])
        fd.add_member(guild, user)
        users[user.id] = user
    for saved in SAVED["messages"]:
        fd.add_message(channels[saved["channel_id"]], fd.bot_user, id=saved["id"], content=saved["content"],
                       embeds=saved["embeds"], components=saved["components"], flags=saved["flags"])
    world.guild = guild
    world.channel = channels[SAVED["night"]["channel_id"]]
    world.users = {u.name: u for u in users.values()}
    return users


def games_recorded(path: Path) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return int(con.execute("SELECT count(*) FROM games").fetchone()[0])
    finally:
        con.close()


def panel_control(panel: Any, pattern: str) -> dict[str, Any]:
    found = button(panel, pattern)
    assert found, [b.get("custom_id") for b in panel.buttons()]
    return found


@pytest_asyncio.fixture
async def stand_in() -> AsyncIterator[FakeDiscord]:
    """A started stand-in with nothing in it (the saved world is rebuilt into it)."""
    fd = FakeDiscord()
    await fd.start()
    try:
        yield fd
    finally:
        await fd.stop()
    fd.assert_clean()


async def test_tables_lobbies_nights_and_stats_of_a141ddb_work_after_the_upgrade(stand_in, tmp_path):
    fd = stand_in
    world = World(fd, None, None)
    users = rebuild_discord(world)
    person = world.users
    database = tmp_path / "bot.db"
    shutil.copyfile(DATABASE, database)
    assert sqlite3.connect(database).execute("PRAGMA user_version").fetchone()[0] < LATEST
    shift_clock(database)
    fresh = tmp_path / "fresh.db"
    await (await open_store(fresh)).close()  # today's schema, made from nothing
    tables = {key: saved["id"] for key, saved in SAVED["tables"].items()}
    night_tables = SAVED["night"]["round_2_tables"]
    async with running_bot(fd, database, world.guild) as bot:
        # -- the schema is today's
        assert sqlite3.connect(database).execute("PRAGMA user_version").fetchone()[0] == LATEST
        assert schema(database) == schema(fresh)

        # -- every table is back where it was
        for table_id in [*tables.values(), *night_tables]:
            table = bot.tables.get(table_id)
            assert table is not None and table.status == "playing" and table.engine is not None, table_id
        lobby = bot.tables.get(SAVED["lobby"]["id"])
        assert lobby is not None and lobby.status == "lobby"
        assert [s.user_id for s in lobby.seats] == [person["kim"].id]

        # -- 11 nimmt!: My hand on the old table message, then a whole turn from that panel
        nimmt = bot.tables.get(tables["nimmt"])
        before = nimmt.version
        mover = users[nimmt.seats[nimmt.engine.to_move].user_id]
        message = fd.message(SAVED["tables"]["nimmt"]["message_id"])
        seen = Table(fd, fd.channel(message.channel_id), None, nimmt.id, thread=fd.channel(message.channel_id))
        if message.deleted:  # the restored table put its live table at the bottom of its thread
            message = seen.table_message()
        panel = await private_answer(await seen.click(mover, message, f"nimmt.hand:{nimmt.id}"))
        assert panel.ephemeral_to == mover.id and panel_control(panel, r"nimmt\.refresh:\d+")
        await nimmt_turn(seen, mover, panel)
        await fd.wait_for(lambda: bot.tables.get(nimmt.id).version > before, timeout=20)

        # -- 6 nimmt!: My hand on the old table message, then a card chosen on the panel
        take6 = bot.tables.get(tables["take6"])
        chooser = next(users[s.user_id] for s in take6.seats if s.user_id in users)
        message = fd.message(SAVED["tables"]["take6"]["message_id"])
        if message.deleted:  # the restored table put its live table at the bottom of its thread
            message = Table(fd, fd.channel(message.channel_id), None, take6.id,
                            thread=fd.channel(message.channel_id)).table_message()
        r = await fd.click(chooser, message, f"take6.hand:{take6.id}")
        panel = await private_answer(r)
        assert panel.ephemeral_to == chooser.id
        card = panel_control(panel, r"take6\.card:.*")
        before = take6.version
        r = await fd.click(chooser, panel, card["custom_id"])
        assert r.ack_type in (6, 7), r
        await fd.wait_for(lambda: bot.tables.get(take6.id).version > before, timeout=20)

        # -- Garbage: the old Draw button on the table message, clicked by the player to move
        garbage = bot.tables.get(tables["garbage"])
        drawer = users[garbage.seats[garbage.engine.to_move].user_id]
        message = fd.message(SAVED["tables"]["garbage"]["message_id"])
        if message.deleted:  # the restored table put its live table at the bottom of its thread
            message = Table(fd, fd.channel(message.channel_id), None, garbage.id,
                            thread=fd.channel(message.channel_id)).table_message()
        draw = panel_control(message, r"garbage\.draw:.*")
        before = garbage.version
        r = await fd.click(drawer, message, draw["custom_id"])
        assert r.ack_type in (6, 7), r
        await fd.wait_for(lambda: bot.tables.get(garbage.id).version > before, timeout=20)

        # -- the lobby: Join on the old lobby message seats the newcomer
        message = fd.message(SAVED["lobby"]["message_id"])
        r = await fd.click(person["ana"], message, f"table.join:{lobby.id}")
        await updated(r)
        assert [s.user_id for s in bot.tables.get(lobby.id).seats] == [person["kim"].id, person["ana"].id]
        assert "ana" in r.message.text()

        # -- the night: round 2 (its seats away, computers play for them) ends under today's code,
        #    and Join on the old sign-up message signs a newcomer up for round 3
        await fd.wait_for(lambda: games_recorded(database) == 4, timeout=120)
        night = SAVED["night"]
        signup = fd.message(night["signup"])
        r = await fd.click(person["eve"], signup, f"night:{night['id']}:join")
        await updated(r)
        assert "eve" in signup.text()

        # -- /stats and /leaderboard show the games the old version recorded (round 1)
        r = await fd.slash(person["ana"], world.channel, "stats", game="nimmt")
        await r.settled(timeout=10)
        shown = (r.followups[0] if r.followups else r.message).text()
        # (round 1's game, recorded by the old version, and round 2's, by today's)
        assert "Games: 2 · wins:" in shown, shown
        r = await fd.slash(person["ana"], world.channel, "leaderboard", game="nimmt", by="wins")
        await r.settled(timeout=10)
        board = description(r.followups[0] if r.followups else r.message)
        assert all(name in board for name in ("ana", "ben", "cleo", "dan")), board
