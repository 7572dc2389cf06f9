"""The real bot when its database fails mid-game, when people click at the
same instant, and when a game has to be stopped.

Faults are injected where SQLite reports them (tests/faults.py): commits
refused as on a full disk, a failing device or a read-only file, and the
write lock held by another connection to the file.  Each test checks that
what a player was told matches what the game shows, that the game goes on
once the database is back, and that a restart keeps everything that was
acknowledged.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

import pytest

from app.i18n.catalogue import t as translate
from tests.e2e import (button, open_hand, open_table, panel_answer, play_nimmt, running_bot, seat_players, select,
                       start_table, updated)
from tests import ROOT
from tests.faults import DISK_FULL, IO_ERROR, READ_ONLY, failing_commits, held_lock

pytestmark = pytest.mark.timeout(120)

NOT_SAVED = translate("en", "faults.not_saved")


def text_of(r) -> str:
    """The private answer a click or command got (its followup after a deferral)."""
    message = r.followups[-1] if r.followups else r.message
    return message.text()


async def started(fd, world, people, computers=0, **options):
    """A started 11 nimmt! table without a turn timer, hosted by ``people[0]``."""
    return await start_table(fd, world.channel, people[0], people[1:], computers=computers, turn_time=0, **options)


async def first_move(t, user):
    """Open the hand and make the first move it offers (pick a stack first if
    needed); returns the answer to the click that made the move."""
    panel = await open_hand(t, user)
    no_fit = translate("en", "nimmt.stack_no_fit")
    for _ in range(3):
        for op in ("steal", "open"):
            menu = select(panel, rf"nimmt.{op}:\d+:.*")
            if menu:
                return await t.choose(user, panel, menu["custom_id"], [menu["options"][0]["value"]])
        cards = select(panel, r"nimmt.cards:\d+:.*")
        if cards:
            return await t.choose(user, panel, cards["custom_id"], [cards["options"][0]["value"]])
        for op in ("take", "pass"):
            b = button(panel, rf"nimmt.{op}:\d+:.*")
            if b:
                return await t.click(user, panel, b["custom_id"])
        stacks = select(panel, r"nimmt.stack:\d+:.*")
        fitting = [o for o in stacks["options"] if o.get("description") != no_fit] or stacks["options"]
        panel = await panel_answer(await t.choose(user, panel, stacks["custom_id"], [fitting[0]["value"]]))
    raise AssertionError("no move offered")


async def quiet(fd, bot, t):
    """Until the bot has shown everything of the table (narration sent, table message drawn)."""
    presenter = bot.parts.tables.presenter

    def idle():
        p = presenter.shows.get(t.table_id)
        return p is None or (not p.lines and not p.table_dirty and all(
            task is None or task.done() for task in (p.sender, p.updater)))
    await fd.wait_for(idle, timeout=15)


def to_move(bot, t, people):
    table = bot.tables.get(t.table_id)
    seat = table.engine.to_move
    return next(p for p in people if p.id == table.seats[seat].user_id)


@pytest.mark.parametrize("fault", [DISK_FULL, IO_ERROR, READ_ONLY])
async def test_a_refused_move_is_told_and_not_played_and_a_restart_keeps_what_was_told(world, tmp_path, fault):
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        t = await started(fd, world, people)
        table = bot.tables.get(t.table_id)
        disk = failing_commits(bot.store)
        for _ in range(2):
            mover = to_move(bot, t, people)
            await quiet(fd, bot, t)
            version, narration, shown = table.version, t.log_text(), t.table_message().text()
            disk.error = fault
            r = await first_move(t, mover)
            assert r.ack_type == 4 and r.ephemeral and r.message.content == NOT_SAVED
            assert disk.refused >= 1
            # Nothing happened, for the player, the others and the store alike.
            await asyncio.sleep(0.3)
            assert table.version == version and t.log_text() == narration and t.table_message().text() == shown
            assert (await bot.store.table(t.table_id)).actions == table.log
            disk.error = None
            r = await first_move(t, mover)  # the disk is fine again: the same move goes through
            await panel_answer(r)
            assert table.version > version
            await fd.wait_for(lambda: t.log_text() != narration, timeout=10)
        told = list(table.log)
    async with running_bot(fd, db, world.guild) as bot:  # a restart: every acknowledged move is there
        table = bot.tables.get(t.table_id)
        assert table.log == told and table.status == "playing"
        r = await first_move(t, to_move(bot, t, people))  # and the game goes on
        await panel_answer(r)
        assert table.version > len(told)


async def test_a_lock_held_elsewhere_defers_the_click_and_answers_truthfully(world, tmp_path):
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        t = await started(fd, world, people)
        table = bot.tables.get(t.table_id)
        mover = to_move(bot, t, people)
        version = table.version
        # Locked for longer than Discord waits: acknowledged in time, then told "not saved".
        with held_lock(db):
            r = await first_move(t, mover)
            assert r.ack_type == 6  # (the stand-in fails the test if no answer came within 3 s)
            await r.settled(timeout=15)
        assert text_of(r) == NOT_SAVED and r.followups[-1].ephemeral
        assert table.version == version and (await bot.store.table(t.table_id)).actions == table.log
        # Locked a little longer than the deferral: acknowledged, then the move is saved and shown.
        await quiet(fd, bot, t)
        narration = t.log_text()
        lock = held_lock(db)
        lock.__enter__()
        asyncio.get_running_loop().call_later(1.6, lock.__exit__, None, None, None)
        r = await first_move(t, mover)
        assert r.ack_type == 6
        await r.settled(timeout=15)
        assert table.version > version and not r.followups  # the panel itself was redrawn
        assert (await bot.store.table(t.table_id)).actions == table.log
        # ... showing the move, as the thread tells it (the live table's last moves).
        move = r.message.text().splitlines()[1]
        assert move.startswith(f"**{mover.name}**"), r.message.text()
        await fd.wait_for(lambda: t.log_text().count(move) > narration.count(move), timeout=10)
        told = list(table.log)
    async with running_bot(fd, db, world.guild) as bot:  # a restart keeps the move it was told about
        assert bot.tables.get(t.table_id).log == told


async def test_a_computer_waits_for_a_locked_database_and_plays_once_it_is_free(world, tmp_path):
    fd = world.fd
    ana = world.person("ana")
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild, computer_delay=1.0) as bot:
        t = await started(fd, world, [ana], computers=1)
        table = bot.tables.get(t.table_id)
        await fd.wait_for(lambda: table.engine.to_move == 0, timeout=10)
        r = await first_move(t, ana)
        await panel_answer(r)
        assert table.engine.to_move == 1  # the computer is next, in a second
        await quiet(fd, bot, t)
        pings = sum(1 for m in fd.messages(t.thread) if ana.id in m.mentions)
        version = table.version
        with held_lock(db):
            await asyncio.sleep(4)  # the computer's move meets the lock, more than once
            frozen = table.version
        assert frozen == version
        # Free again: the computer plays by itself and ana is called back, nothing lost.
        await fd.wait_for(lambda: table.version > version and table.engine.to_move == 0, timeout=15)
        await fd.wait_for(lambda: sum(1 for m in fd.messages(t.thread) if ana.id in m.mentions) > pings,
                          timeout=10)
        assert (await bot.store.table(t.table_id)).actions == table.log


async def test_a_start_that_was_not_saved_leaves_a_lobby_that_starts_later(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        disk = failing_commits(bot.store)
        disk.error = READ_ONLY
        r = await fd.slash(ana, world.channel, "nimmt new", seats=2, turn_time=0)
        assert r.ack_type == 4 and r.ephemeral and r.message.content == NOT_SAVED
        assert bot.tables.in_channel(world.channel.id) is None  # nothing blocks the channel
        disk.error = None
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=2, turn_time=0)
        await seat_players(t, ana, [ben])
        disk.error = READ_ONLY
        r = await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        assert r.ack_type == 4 and r.message.content == NOT_SAVED
        table = bot.tables.get(t.table_id)
        assert table.status == "lobby" and table.engine is None and fd.threads(world.channel) == []
        lobby = fd.message(t.lobby.id)
        assert button(lobby, rf"table.start:{t.table_id}") and "already started" not in lobby.text()
        disk.error = None
        r = await t.click(ana, lobby, f"table.start:{t.table_id}")
        await updated(r)
        await t.wait_thread()
        assert (await bot.store.table(t.table_id)).status == "playing"


async def test_two_new_tables_at_the_same_instant_give_one_table(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    busy = "There is already a table in this channel"
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        for pair in ((ana, ben), (ana, ana)):
            results = await asyncio.gather(*(fd.slash(u, world.channel, "nimmt new", seats=2) for u in pair))
            lobbies = [r for r in results if not r.ephemeral]
            refused = [r for r in results if r.ephemeral]
            assert len(lobbies) == 1 and len(refused) == 1 and busy in refused[0].message.content
            posted = [m for m in fd.messages(world.channel) if m.buttons()]
            assert posted[-1].id == lobbies[0].message.id
            table_id = int(re.match(r"table.join:(\d+)", lobbies[0].message.buttons()[0]["custom_id"]).group(1))
            assert [r.id for r in await bot.store.active_tables()] == [table_id]
            r = await fd.click(pair[0] if lobbies[0] is results[0] else pair[1], lobbies[0].message,
                               f"table.cancel:{table_id}")
            assert r.ack_type == 7
        assert len([m for m in fd.messages(world.channel) if m.buttons() or m.embeds]) == 2


async def test_two_play_again_clicks_at_once_open_one_rematch(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await started(fd, world, [ana, ben], rounds=1)
        await play_nimmt(fd, t, {ana: "en", ben: "en"})
        lobby = fd.message(t.lobby.id)
        again = button(lobby, rf"table.again:{t.table_id}")["custom_id"]
        results = await asyncio.gather(fd.click(ana, lobby, again), fd.click(ben, lobby, again))
        public = [r for r in results if not r.ephemeral]
        assert len(public) == 1 and "already a table" in [r for r in results if r.ephemeral][0].message.text()
        assert len(await bot.store.active_tables()) == 1


async def played_to_its_end(fd, world, bot, people):
    """A one-round game of ``people`` (two) played to its end and everything of it shown:
    its lobby message and the custom_id of the lobby's *Play again*."""
    t = await started(fd, world, people, rounds=1)
    await play_nimmt(fd, t, {user: "en" for user in people})
    await quiet(fd, bot, t)
    lobby = fd.message(t.lobby.id)
    return lobby, button(lobby, rf"table.again:{t.table_id}")["custom_id"]


async def again_while_saving_slowly(fd, db, user, lobby, again) -> int:
    """``user`` clicks *Play again* (``again``) while the database is locked a little longer
    than the bot waits before acknowledging: the click is deferred (type 6), the new table
    is saved, then posted.  Where the requests from the click on start in ``fd.requests``."""
    lock = held_lock(db)
    lock.__enter__()
    asyncio.get_running_loop().call_later(1.6, lock.__exit__, None, None, None)
    since = len(fd.requests)
    r = await fd.click(user, lobby, again)
    assert r.ack_type == 6, r
    return since


async def the_one_new_lobby(fd, bot, world, invited):
    """The channel's new table once its lobby is shown, and that lobby: the only one in
    the channel, offering to join the new table and naming ``invited``."""
    new = await fd.wait_for(lambda: (table := bot.tables.in_channel(world.channel.id)) is not None
                            and table.messages.get("lobby") and table, timeout=15)
    lobbies = [m for m in fd.messages(world.channel) if button(m, r"table.join:\d+")]
    assert [m.id for m in lobbies] == [new.messages["lobby"]], lobbies
    shown = lobbies[0]
    assert button(shown, rf"table.join:{new.id}") and f"<@{invited.id}>" in shown.content
    return new, shown


async def joined(fd, user, lobby, new) -> list[int]:
    """``user`` joins the two-seat table ``new`` from its lobby, which then shows both
    seats taken; the users of its seats, in order."""
    r = await fd.click(user, lobby, f"table.join:{new.id}")
    await updated(r)
    assert "Seats taken: 2/2" in r.message.text()
    return [s.user_id for s in new.seats]


@pytest.mark.parametrize("status, landed", [(502, True), (0, True), (502, False)])
async def test_play_again_whose_followup_answer_failed_opens_one_lobby(world, tmp_path, status, landed):
    """A save slower than the deferral makes *Play again* answer with a followup.  Discord
    posts it and only its answer fails (a 502 of its edge, or the connection dropped on the
    way back; ``landed``), or it fails before posting: either way the channel shows one
    lobby of the new table (the one that landed, found; else the bot's own post), and the
    invited player joins the new table from it."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        lobby, again = await played_to_its_end(fd, world, bot, [ana, ben])
        fd.fail_next("POST", r"/webhooks/\d+/[^/]+$", status=status, after=landed)
        since = await again_while_saving_slowly(fd, db, ben, lobby, again)
        new, shown = await the_one_new_lobby(fd, bot, world, ana)
        assert (shown.webhook_id is not None) == landed  # landed: the followup; else the bot's own post
        followups = [q for q in fd.requests[since:] if q.method == "POST" and q.path.startswith("/webhooks/")]
        assert [q.status for q in followups] == [status], followups  # sent once, never again
        assert await joined(fd, ana, shown, new) == [ben.id, ana.id]
        assert len(await bot.store.active_tables()) == 1


@pytest.mark.parametrize("refusal", ["expired", "unknown"])
async def test_play_again_whose_followup_is_refused_opens_the_lobby_all_the_same(world, tmp_path, refusal):
    """*Play again*, its click deferred by a slow save, answers with a followup that Discord
    refuses: the click's token expired on the way (401, ``Invalid Webhook Token``, 50027: the
    stand-in's own answer to a token older than 15 minutes) or is not known (404, ``Unknown
    Webhook``, 10015, as Discord answers a token it lost).  Nothing was posted: the bot posts
    the lobby of the new table in the channel itself, once, and the invited player joins it
    (the table used to be cancelled)."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        lobby, again = await played_to_its_end(fd, world, bot, [ana, ben])
        followup = r"/webhooks/\d+/[^/]+$"
        held = None
        if refusal == "expired":
            held = fd.hold("POST", followup)  # Discord is slow to take the followup: the token expires meanwhile
        else:
            fd.fail_next("POST", followup, status=404, json={"message": "Unknown Webhook", "code": 10015})
        since = await again_while_saving_slowly(fd, db, ben, lobby, again)
        if held is not None:
            await fd.wait_for(lambda: held.caught, timeout=15)
            fd.age_tokens(15 * 60)
            held.release()
        new, shown = await the_one_new_lobby(fd, bot, world, ana)
        assert shown.webhook_id is None and ana.id in shown.pinged  # the bot's own post, which invites
        followups = [q for q in fd.requests[since:] if q.method == "POST" and q.path.startswith("/webhooks/")]
        assert [q.status for q in followups] == [401 if refusal == "expired" else 404], followups
        own = [q for q in fd.requests[since:] if q.method == "POST" and q.path == f"/channels/{world.channel.id}/messages"]
        assert [q.status for q in own] == [200], own
        assert await joined(fd, ana, shown, new) == [ben.id, ana.id]
        assert new.status == "lobby" and len(await bot.store.active_tables()) == 1


async def test_moderators_stop_a_running_game_and_the_channel_is_free(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    mod = world.person("mod", manage_messages=True)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        r = await fd.slash(ana, world.channel, "table stop")
        assert r.ephemeral and r.message.content == translate("en", "faults.no_table_here")
        t = await started(fd, world, [ana, ben])
        r = await first_move(t, to_move(bot, t, [ana, ben]))
        r = await fd.slash(ana, t.thread, "table stop")  # the host, once the game runs: no
        assert r.ephemeral and r.message.content == translate("en", "faults.stop_denied")
        r = await fd.slash(ben, world.channel, "nimmt new")
        assert r.ephemeral and "already a table" in r.message.content
        r = await fd.slash(mod, t.thread, "table stop")
        assert r.ephemeral and r.message.content == translate("en", "faults.stopped", table=t.table_id)
        line = translate("en", "faults.stopped_by", name="mod")
        await fd.wait_message(t.thread, line)
        await fd.wait_for(lambda: line in fd.message(t.lobby.id).text(), timeout=10)
        record = await bot.store.table(t.table_id)
        assert record.status == "abandoned"
        assert await bot.store.history(ana.id) == []  # not a result: no statistics, no rating
        # The table message loses its buttons; the channel takes a new table.
        await fd.wait_for(lambda: not t.table_message().buttons(), timeout=10)
        again = await open_table(fd, ben, world.channel, "nimmt new", seats=2)
        # The host cancels their own lobby with the same command.
        r = await fd.slash(ben, world.channel, "table stop")
        assert r.message.content == translate("en", "faults.lobby_cancelled", table=again.table_id)
        await fd.wait_for(lambda: "cancelled" in fd.message(again.lobby.id).text(), timeout=10)
        assert bot.tables.tables == {}


async def test_a_host_left_alone_ends_the_game(world, tmp_path):
    """Everyone else has left the running game (a computer plays their
    seats): the host may then end it with ``/table stop``; it is recorded
    as abandoned, no result.  While another person still plays, the host
    may not."""
    fd = world.fd
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await started(fd, world, [ana, ben, cleo])
        r = await fd.slash(ben, t.thread, "leave")  # ben steps away: a computer plays his seat
        assert r.ephemeral
        r = await fd.slash(ana, t.thread, "table stop")  # cleo is still there: no
        assert r.ephemeral and r.message.content == translate("en", "faults.stop_denied")
        r = await fd.slash(cleo, t.thread, "table stop")  # and never a player who is not the host
        assert r.ephemeral and r.message.content == translate("en", "faults.stop_denied")
        r = await fd.slash(cleo, t.thread, "leave")
        assert r.ephemeral
        r = await fd.slash(cleo, t.thread, "table stop")  # (cleo left; still not the host)
        assert r.ephemeral and r.message.content == translate("en", "faults.stop_denied")
        r = await fd.slash(ana, t.thread, "table stop")  # ana is alone with computers now
        assert r.ephemeral and r.message.content == translate("en", "faults.stopped", table=t.table_id)
        await fd.wait_message(t.thread, translate("en", "faults.stopped_by", name="ana"))
        assert (await bot.store.table(t.table_id)).status == "abandoned"
        assert await bot.store.history(ana.id) == []  # not a result


async def test_a_game_nobody_plays_for_a_day_closes_itself_after_a_restart(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        t = await started(fd, world, [ana, ben])
        hours = round(bot.tables.idle_limit / 3600)
    # Stopped; the last move is more than a day old when it starts again.
    conn = sqlite3.connect(db)
    meta = json.loads(conn.execute("SELECT meta FROM tables WHERE id = ?", (t.table_id,)).fetchone()[0])
    meta["active_at"] = time.time() - hours * 3600 - 60
    conn.execute("UPDATE tables SET meta = ? WHERE id = ?", (json.dumps(meta), t.table_id))
    conn.commit()
    conn.close()
    async with running_bot(fd, db, world.guild) as bot:
        line = translate("en", "faults.idle_closed", count=hours)
        await fd.wait_message(t.thread, line, timeout=15)
        await fd.wait_for(lambda: line in fd.message(t.lobby.id).text(), timeout=10)
        assert (await bot.store.table(t.table_id)).status == "abandoned" and bot.tables.tables == {}
        await open_table(fd, ana, world.channel, "nimmt new", seats=2)  # the channel is free


async def test_one_person_hosts_a_few_lobbies_at_most(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    channels = [world.channel] + [fd.add_channel(world.guild, f"games-{i}") for i in range(4)]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        limit = bot.tables.max_open_lobbies
        opened = [await open_table(fd, ana, channel, "nimmt new") for channel in channels[:limit]]
        r = await fd.slash(ana, channels[limit], "nimmt new")
        assert r.ephemeral and r.message.content == translate("en", "faults.lobby_limit", count=limit)
        await open_table(fd, ben, channels[limit], "nimmt new")  # someone else may
        r = await fd.click(ana, opened[0].lobby, f"table.cancel:{opened[0].table_id}")
        await updated(r)
        await open_table(fd, ana, channels[limit + 1], "nimmt new")


async def test_opening_and_cancelling_tables_does_not_grow_memory(world, tmp_path):
    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        presenter = bot.parts.tables.presenter
        for _ in range(25):
            t = await open_table(fd, ana, world.channel, "nimmt new", seats=2)
            r = await t.click(ana, t.lobby, f"table.cancel:{t.table_id}")
            await updated(r)
            assert "cancelled" in r.message.text()
        await fd.wait_for(lambda: bot.tables.tables == {} and presenter.shows == {}, timeout=10)


def test_a_read_only_database_at_start_up_is_one_clear_line(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    database = folder / "bot.db"
    sqlite3.connect(database).execute("CREATE TABLE x (y)").connection.close()
    database.chmod(0o444)
    folder.chmod(0o555)
    env = {**os.environ, "DISCORD_TOKEN": "not-used", "DATABASE_PATH": str(database)}
    command = [sys.executable, "bot.py"]
    if os.geteuid() == 0:  # root writes anyway: run as an unprivileged user (a user namespace)
        command = ["unshare", "--user", *command]
    try:
        run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    finally:
        folder.chmod(0o755)
    own = [line for line in run.stderr.splitlines() if "discord.client" not in line]  # library notices
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert len(own) == 1 and str(database) in own[0] and "writable" in own[0] and "readonly" in own[0]


async def test_a_refused_garbage_move_is_told_and_the_table_goes_on(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=5) as bot:
        t = await open_table(fd, ana, world.channel, "garbage new", seats=2, turn_time=0)
        await seat_players(t, ana, [ben])
        await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        await t.wait_thread()
        table = bot.tables.get(t.table_id)

        def draw_button():
            message = t.table_message()
            found = message and button(message, rf"garbage.draw:{t.table_id}:{table.version}")
            return (message, found["custom_id"]) if found else None

        message, draw = await fd.wait_for(draw_button, timeout=10)
        mover = ana if table.seats[table.engine.to_move].user_id == ana.id else ben
        disk = failing_commits(bot.store)
        disk.error = DISK_FULL
        r = await t.click(mover, message, draw)
        assert r.ack_type == 4 and r.ephemeral and r.message.content == NOT_SAVED
        assert table.log == [] and (await bot.store.table(t.table_id)).actions == []
        disk.error = None
        r = await t.click(mover, message, draw)  # the same button, still current: it works now
        assert r.ack_type == 6 and table.log and table.log[0][1] == "stock"
        assert (await bot.store.table(t.table_id)).actions == table.log


async def test_a_lobby_saved_before_a_stop_is_posted_for_its_host_only(world, tmp_path):
    """The bot stopped between saving a lobby and posting it: the host's next
    /new posts that lobby; nobody else is handed it."""
    from app.store import open_store

    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    db = tmp_path / "bot.db"
    store = await open_store(str(db), checkpoint_interval=None)
    meta = {"host_id": ana.id, "max_seats": 3, "options": {"turn_time": 0}, "locale": "en",
            "seats": [{"user_id": ana.id, "name": "ana", "away": False, "missed": 0}], "messages": {},
            "created_at": time.time(), "active_at": time.time()}
    orphan = await store.create_table(world.guild.id, world.channel.id, "nimmt", meta)
    await store.close()
    async with running_bot(fd, db, world.guild) as bot:
        r = await fd.slash(ben, world.channel, "nimmt new")
        assert r.ephemeral and "already a table" in r.message.content
        r = await fd.slash(ana, world.channel, "nimmt new")
        assert r.ack_type == 4 and not r.ephemeral
        assert button(r.message, rf"table.join:{orphan}")
        assert bot.tables.get(orphan).messages["lobby"] == r.message.id
        r = await fd.slash(ana, world.channel, "nimmt new")  # posted now: no second copy
        assert r.ephemeral and "already a table" in r.message.content


async def test_a_kill_while_a_save_waits_for_another_process_loses_only_what_nobody_was_told(world, tmp_path):
    """The bot in its own process; this test process holds the write lock.  A
    click is acknowledged ("thinking"), the bot is SIGKILLed before the store
    answered: after the restart the move is not there, nobody read it
    anywhere, and the same player plays it again."""
    from tests.e2e.processes import BotProcess, table_row

    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    db = tmp_path / "bot.db"
    bot = BotProcess(fd, world.guild, db, tmp_path / "bot.log")
    try:
        await bot.start()
        t = await started(fd, world, [ana, ben])
        # the start's narration and the table message that pings the first mover are out
        begun = translate("en", "table.game_started", game=translate("en", "nimmt.title"))
        await fd.wait_for(lambda: begun in t.log_text() and any(m.mentions for m in fd.messages(t.thread)),
                          timeout=15)
        _, meta, saved = table_row(db, t.table_id)
        mover = ana if meta["seats"][meta["turn_seat"]]["user_id"] == ana.id else ben
        narration = t.log_text()
        with held_lock(db):
            r = await first_move(t, mover)
            assert r.ack_type == 6  # acknowledged in time; the move is not told yet
            await bot.kill()
        assert not r.followups or text_of(r) == NOT_SAVED
        assert table_row(db, t.table_id)[2] == saved  # not in the store...
        await bot.start()
        await asyncio.sleep(1.0)
        assert t.log_text() == narration  # ...nor in the thread, after the restart either
        r = await first_move(t, mover)  # the same player is to move and plays
        await panel_answer(r)
        await fd.wait_for(lambda: t.log_text() != narration, timeout=10)
        assert table_row(db, t.table_id)[2] > saved
    finally:
        bot.finalize()


async def test_new_tables_while_the_database_is_locked_are_answered_in_time(world, tmp_path):
    fd = world.fd
    people = [world.person(name) for name in ("ana", "ben", "cleo")]
    channels = [world.channel] + [fd.add_channel(world.guild, f"games-{i}") for i in range(2)]
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        with held_lock(db):  # each creation waits for the store, the later ones also for each other
            results = await asyncio.gather(*(fd.slash(p, c, "nimmt new", seats=2)
                                              for p, c in zip(people, channels)))
            assert [r.ack_type for r in results] == [5, 5, 5]  # "thinking...", within 3 s
            for r in results:
                await r.settled(timeout=20)
                await fd.wait_for(lambda: r.followups, timeout=5)  # (the "thinking..." goes before the answer)
        for r in results:  # told privately: the public "thinking..." is gone, nothing else is left in the channel
            assert text_of(r) == NOT_SAVED and r.followups[-1].ephemeral and r.message.deleted
        assert not [m for c in channels for m in fd.messages(c)]
        assert bot.tables.tables == {} and await bot.store.active_tables() == []
        for p, c in zip(people, channels):  # the database is free: every channel takes its table
            await open_table(fd, p, c, "nimmt new", seats=2)


@pytest.mark.parametrize("fault", [DISK_FULL, READ_ONLY])
async def test_server_settings_a_database_refuses_or_locks_are_told_privately_and_change_nothing(
        world, tmp_path, fault):
    """/settings while the database refuses the change: the admin is told at
    once, privately, that nothing changed. While another process holds the
    lock: a private "thinking..." within Discord's 3 s, then the same truth.
    Once the database is back, the same command is saved and survives a restart."""
    fd = world.fd
    boss = world.person("boss", administrator=True)
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        disk = failing_commits(bot.store)
        disk.error = fault
        for path, option in (("settings language", {"language": "de"}), ("settings rated_computers", {"enabled": True})):
            r = await fd.slash(boss, world.channel, path, **option)
            assert r.ack_type == 4 and r.ephemeral and r.message.text() == NOT_SAVED
        assert disk.refused == 2
        disk.error = None
        with held_lock(db):
            r = await fd.slash(boss, world.channel, "settings language", language="de")
            assert r.ack_type == 5 and r.ephemeral  # deferred privately (the stand-in checks the 3 s)
            await r.settled(timeout=15)
        assert text_of(r) == NOT_SAVED and r.followups[-1].ephemeral
        assert await bot.store.guild_settings(world.guild.id) == {"language": None, "rate_bot_games": False,
                                                                       "rate_variants": False}
        r = await fd.slash(boss, world.channel, "settings language", language="de")
        assert r.ack_type == 4 and r.message.text() == translate(
            "en", "admin.language_set", language=translate("de", "admin.language_name"))
    async with running_bot(fd, db, world.guild) as bot:
        assert (await bot.store.guild_settings(world.guild.id))["language"] == "de"


async def test_a_night_whose_saves_are_refused_or_locked_tells_the_truth_in_time(world, tmp_path):
    """A game night's sign-up while the database refuses changes or another
    process holds its lock: /night start and the sign-up's buttons are
    answered within Discord's 3 s, say "not saved" when nothing was saved
    (and nothing changed), and do what was asked when the lock goes away in
    time."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        with held_lock(db):  # locked for longer than the store waits: thinking..., then the truth
            r = await fd.slash(ana, world.channel, "night start", game="nimmt")
            assert r.ack_type == 5  # (the stand-in fails the test if no answer came within 3 s)
            await r.settled(timeout=15)
            await fd.wait_for(lambda: r.followups, timeout=5)  # (the "thinking..." goes before the answer)
        assert text_of(r) == NOT_SAVED and r.followups[-1].ephemeral  # privately: the public "thinking..." went
        assert r.message.deleted and bot.nights.in_channel(world.channel.id) is None
        r = await fd.slash(ana, world.channel, "night start", game="nimmt")  # free again: the night opens
        signup = r.message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        before = signup.text()

        disk = failing_commits(bot.store)
        disk.error = READ_ONLY
        r = await fd.click(ben, signup, f"night:{night_id}:join")
        assert r.ack_type == 4 and r.ephemeral and r.message.text() == NOT_SAVED
        disk.error = None
        with held_lock(db):
            r = await fd.click(ben, signup, f"night:{night_id}:join")
            assert r.ack_type == 6
            await r.settled(timeout=15)
        assert text_of(r) == NOT_SAVED and r.followups[-1].ephemeral
        assert signup.text() == before and [p.user_id for p in bot.nights.in_channel(world.channel.id).active()] == [ana.id]

        lock = held_lock(db)  # locked a little longer than the deferral: the join is saved and shown
        lock.__enter__()
        asyncio.get_running_loop().call_later(1.6, lock.__exit__, None, None, None)
        r = await fd.click(ben, signup, f"night:{night_id}:join")
        assert r.ack_type == 6
        await r.settled(timeout=15)
        assert not r.followups and "ben" in signup.text()
    async with running_bot(fd, db, world.guild) as bot:  # and a restart keeps it
        assert [p.user_id for p in bot.nights.in_channel(world.channel.id).active()] == [ana.id, ben.id]


async def test_a_failure_after_the_move_was_saved_does_not_say_nothing_changed(world, tmp_path, monkeypatch):
    """A bug strikes after a move was saved (here: the panel's narration of
    it): the player is told the move was saved and the table shows it, never
    the "nothing was changed" of a failure before any save."""
    import sys

    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await started(fd, world, people)
        table = bot.tables.get(t.table_id)
        mover = to_move(bot, t, people)
        version = table.version
        ui = sys.modules["cogs.games.nimmt.cog"].NimmtUI  # the module the bot loaded

        def broken(self, table, events, lang):
            raise RuntimeError("a bug after the save")

        monkeypatch.setattr(ui, "narrate", broken)
        r = await first_move(t, mover)
        assert table.version > version  # the move was played
        assert (await bot.store.table(t.table_id)).actions == table.log  # and saved
        assert text_of(r) == translate("en", "errors.unexpected_saved")
        assert "Nothing was changed" not in text_of(r)
        monkeypatch.undo()
        # a failure before anything was saved still says so
        monkeypatch.setattr(bot.tables, "act", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("a bug")))
        other = to_move(bot, t, people)
        await quiet(fd, bot, t)
        r = await first_move(t, other)
        assert text_of(r) == translate("en", "errors.unexpected")


async def test_a_join_command_that_fails_after_its_save_says_it_was_saved(world, tmp_path, monkeypatch):
    """/join saved the seat, then a bug struck (here: telling the table about
    it): the answer says the change was saved, and the seat is taken."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=3)
        table = bot.tables.get(t.table_id)

        def broken(*args, **kwargs):
            raise RuntimeError("a bug after the save")

        monkeypatch.setattr(bot.tables, "listener", broken)
        r = await fd.slash(ben, world.channel, "join")
        await r.settled(timeout=10)
        assert text_of(r) == translate("en", "errors.unexpected_saved")
        assert table.seat_of(ben.id) is not None
        assert [s["user_id"] for s in (await bot.store.table(t.table_id)).meta["seats"]] == [ana.id, ben.id]
