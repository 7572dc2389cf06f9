"""Watchers, end to end: *Watch* on a running table message, the table
message naming who watches (escaped, a count past a few), a watcher never
seeing a hand nor using a player's control (a private answer instead), and
*Play again* offering the watchers the seats no person held; a game night
watched from its standings, which show every live table's state."""
from __future__ import annotations

import re
from typing import Any

import pytest

from app.i18n.catalogue import t as tr
from tests.e2e import fields, play_nimmt, private_answer, running_bot, started, updated
from tests.e2e.test_night import signed_up_night, standings_message

pytestmark = pytest.mark.timeout(300)


async def answer_text(r: object) -> str:
    message = await private_answer(r)
    assert message.ephemeral, message
    return message.text()


async def test_watchers_follow_a_table_see_no_hand_and_are_offered_the_free_seats(world, tmp_path):
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    crowd = [world.person(f"fan{i}") for i in range(5)]
    odd = world.person("**zed** <@1>")  # a name that must neither format nor ping
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, [ana, ben], computers=1, rounds=1, turn_time=0)
        watch = f"table.watch:{t.table_id}"
        r = await t.click(eve, t.table_message(), watch)
        assert tr("en", "table.watch_on", table=t.table_id, thread=f"<#{t.thread.id}>") in await answer_text(r)
        await fd.wait_for(lambda: tr("en", "table.watching", count=1) in t.table_message().text()
                          and "eve" in t.table_message().text())
        assert tr("en", "table.watch_seated") in await answer_text(await t.click(ana, t.table_message(), watch))

        # a watcher's click on a player's control, real or forged, is answered privately: no hand
        for custom_id in (f"nimmt.hand:{t.table_id}", f"nimmt.refresh:{t.table_id}"):
            r = await fd.forge(eve, t.table_message(), custom_id)
            text = await answer_text(r)
            assert tr("en", "table.watcher_control") in text
            assert tr("en", "nimmt.panel_title", table=t.table_id) not in text
        assert not any(m.attachments for m in fd.ephemerals(eve))  # no hand picture either

        for person in [*crowd, odd]:
            await t.click(person, t.table_message(), watch)
        await t.click(crowd[4], t.table_message(), watch)  # changed their mind: stops watching
        await fd.wait_for(lambda: tr("en", "table.watching", count=6) in t.table_message().text())
        shown = t.table_message().text()
        assert "eve, fan0, fan1, fan2, fan3" in shown and tr("en", "table.watching_more", count=1) in shown
        assert [w.user_id for w in table.watchers] == [eve.id, *(u.id for u in crowd[:4]), odd.id]
        watching = next(text for name, text in fields(t.table_message()).items() if name.startswith("👀"))
        assert "<@1>" not in watching

        await play_nimmt(fd, t, {ana: "en", ben: "en"})
        # everything eve was ever shown privately holds no hand, and she sees only public messages
        assert all(tr("en", "nimmt.panel_title", table=t.table_id) not in m.text() for m in fd.ephemerals(eve))
        assert all(m.ephemeral_to in (None, eve.id) for m in fd.visible_messages(eve, t.thread))

        # the game is over: a Watch pressed late (on the last table message) is answered privately
        late = world.person("late")
        r = await fd.forge(late, t.table_message(), watch)
        assert tr("en", "errors.table_closed") in await answer_text(r)
        assert not table.watching(late.id)

        lobby = fd.message(t.lobby.id)
        r = await t.click(eve, lobby, f"table.again:{t.table_id}")
        assert tr("en", "table.again_watcher") in await answer_text(r)
        r = await t.click(ben, lobby, f"table.again:{t.table_id}")
        assert r.ack_type == 4 and not r.ephemeral
        new_lobby = r.message
        # the seat the computer held is offered to the first watcher; no computer takes it
        assert set(new_lobby.pinged) == {ana.id, eve.id}
        assert tr("en", "table.again_watchers", count=1, mentions=f"<@{eve.id}>") in new_lobby.content
        new_id = int(re.match(r"table.join:(\d+)", new_lobby.buttons()[0]["custom_id"]).group(1))
        assert [s.user_id for s in bot.tables.get(new_id).seats] == [ben.id]
        r = await fd.click(eve, new_lobby, f"table.join:{new_id}")
        await updated(r)
        # and a lobby has nothing to watch yet: a forged Watch on it is answered privately
        r = await fd.forge(late, new_lobby, f"table.watch:{new_id}")
        assert tr("en", "table.watch_not_playing") in await answer_text(r)
        assert not bot.tables.get(new_id).watchers


def table_messages(fd: Any, channel: Any) -> dict[int, Any]:
    """Thread id -> the newest table message in it (the one with the table's picture)."""
    out = {}
    for thread in fd.threads(channel):
        drawn = [m for m in fd.messages(thread) if any(a.get("filename") == "table.png" for a in m.attachments)]
        if drawn:
            out[thread.id] = drawn[-1]
    return out


async def test_a_night_is_watched_from_its_standings_which_show_every_live_table(world, tmp_path):
    fd = world.fd
    ana, ben, cleo, dan = (world.person(name) for name in ("ana", "ben", "cleo", "dan"))
    fan = world.person("fan")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, computer_delay=0.01, table_seed=7) as bot:
        signup, night_id = await signed_up_night(fd, world, ana, [ben, cleo, dan], game="nimmt", table_size=2,
                                                 rounds=1, turn_time=0)
        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        await fd.wait_for(lambda: len(table_messages(fd, world.channel)) == 2, timeout=20)
        threads = list(table_messages(fd, world.channel))
        night = bot.nights.nights[night_id]
        tables = [bot.tables.get(nt.table_id) for nt in night.playing_tables()]

        def live_lines() -> list[str]:
            message = standings_message(fd, world.channel)
            text = message.embeds[0]["description"] if message is not None else ""
            return [line for line in text.splitlines() if line.startswith("• ")]

        # one line per live table: its thread, how far it is, who leads, whose turn
        await fd.wait_for(lambda: len(live_lines()) == 2 and all(f"<#{th}>" in "".join(live_lines()) for th in threads),
                          timeout=20)
        for table in tables:
            line = next(line for line in live_lines() if f"<#{table.thread_id}>" in line)
            mover = table.seats[table.engine.to_move].name
            assert tr("en", "nimmt.progress", round=1, rounds=table.engine.view(None)["rounds"]) in line
            assert line.endswith(f"to play: {mover}") and "leads: " in line

        standings = standings_message(fd, world.channel)
        r = await fd.click(fan, standings, f"night:{night_id}:watch")
        assert tr("en", "nights.watch_on", tables="X").split(":")[0] in await answer_text(r)
        await fd.wait_for(lambda: all("fan" in m.text() for m in table_messages(fd, world.channel).values()))
        assert all(table.watching(fan.id) for table in tables)
        # a watcher pressing a player's control at one of those tables is answered privately
        first = table_messages(fd, world.channel)[threads[0]]
        r = await fd.click(fan, first, f"nimmt.hand:{tables[0].id}")
        assert tr("en", "table.watcher_control") in await answer_text(r)
        r = await fd.click(fan, standings, f"night:{night_id}:watch")
        assert tr("en", "nights.watch_off") in await answer_text(r)
        await fd.wait_for(lambda: not any(table.watchers for table in tables))
        await fd.wait_for(lambda: not any("fan" in m.text() for m in table_messages(fd, world.channel).values()))

        await updated(await fd.click(ana, signup, f"night:{night_id}:end"))
        await fd.wait_for(lambda: not standings_message(fd, world.channel).buttons(), timeout=20)
        r = await fd.forge(fan, standings, f"night:{night_id}:watch")
        assert tr("en", "nights.error_ended") in await answer_text(r)
