"""A game night's own messages (a round's table announcements with their pings, the
night's standings) are owed like a table's: tried until they land, and named by a
nonce from what is saved, so Discord's 5xx errors, answers lost on the way back and
SIGKILLs neither lose nor double them."""
from __future__ import annotations

import json
import re
from typing import Any

import pytest

from app.i18n.catalogue import t
from tests.e2e import running_bot, updated
from tests.e2e.processes import connect
from tests.e2e.test_night import FAST, GAME, FastBotProcess, round_tables, signed_up_night

pytestmark = pytest.mark.timeout(240)


def standings_messages(fd: Any, channel: Any) -> list[Any]:
    title = t("en", "nights.standings_title", game=GAME)
    return [m for m in fd.messages(channel) if any(e.get("title") == title for e in m.embeds)]


def announcements(fd: Any, channel: Any) -> list[Any]:
    return [m for m in fd.messages(channel) if (m.content or "").startswith("Game night, round 1, table ")]


def recaps(fd: Any, channel: Any) -> list[Any]:
    return [m for m in fd.messages(channel) if any(a.get("filename") == "night.png" for a in m.attachments)]


async def test_a_rounds_announcement_and_standings_land_once_through_discord_errors(world, tmp_path):
    """Discord fails the round's first messages in the channel: twice outright (503, which
    discord.py does not try again), then twice after it posted them (the answer is lost).
    The table is announced once, pinging its players, its thread opens from that
    announcement, and the standings show once."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup, night_id = await signed_up_night(fd, world, ana, [ben], game="nimmt", table_size=2, rounds=1,
                                                 turn_time=1)
        posts = rf"/channels/{world.channel.id}/messages$"
        fd.fail_next("POST", posts, status=503, times=2)
        fd.fail_next("POST", posts, status=503, times=2, after=True)
        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        await fd.wait_for(lambda: recaps(fd, world.channel), timeout=90)
        assert not fd.clear_failures()  # every failure met a message
        [announced] = announcements(fd, world.channel)
        assert sorted(announced.pinged) == sorted([ana.id, ben.id])
        [(message, _)] = round_tables(fd, world.channel, 1).values()
        assert message.id == announced.id
        assert any(th.id == announced.id for th in fd.threads(world.channel))  # its thread opens from it
        moved = t("en", "table.moved", table=0).split("#")[0]
        assert not [m for m in fd.messages(world.channel) if (m.content or "").startswith(moved)]
        [board] = standings_messages(fd, world.channel)
        await fd.wait_for(lambda: "games: 1" in board.text(), timeout=20)  # it followed the game to its end
    fd.assert_clean()


async def test_a_rounds_announcement_and_standings_posted_just_before_a_kill_show_once(world, tmp_path):
    """Discord posts the round's announcement and the night's standings but every answer
    is lost (a 503 after the work), and the bot is SIGKILLed before it could save them.
    Once it runs again the table is announced once, the standings show once (kept up
    to date), and the night ends with its recap."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    bot = FastBotProcess(fd, world.guild, tmp_path / "kill.db", tmp_path / "kill.log")
    posts = rf"/channels/{world.channel.id}/messages$"
    try:
        await bot.start()
        signup, night_id = await signed_up_night(fd, world, ana, [ben], game="nimmt", table_size=2, rounds=1,
                                                 turn_time=1)
        fd.fail_next("POST", posts, status=503, times=1000, after=True)
        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        await fd.wait_for(lambda: announcements(fd, world.channel) and standings_messages(fd, world.channel),
                          timeout=30, interval=0.005)
        await bot.kill()
        assert fd.clear_failures()  # (the bot was still trying)
        await bot.start()
        await fd.wait_for(lambda: recaps(fd, world.channel), timeout=90)
        assert len(announcements(fd, world.channel)) == 1
        assert len(recaps(fd, world.channel)) == 1
        [board] = standings_messages(fd, world.channel)
        await fd.wait_for(lambda: "games: 1" in board.text(), timeout=20)  # the one standings message followed the game
        await bot.stop()
    finally:
        bot.finalize()
    fd.assert_clean()


async def test_a_deleted_sign_up_comes_back_once_through_discord_errors(world, tmp_path):
    """The sign-up (the night's controls) is deleted during round 1; when the round ends the
    night posts it again, and Discord fails that post three times: it lands after them,
    once, and shows the break between the rounds."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup, night_id = await signed_up_night(fd, world, ana, [ben], game="nimmt", table_size=2, rounds=2,
                                                 turn_time=1)
        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        await fd.wait_for(lambda: announcements(fd, world.channel) and standings_messages(fd, world.channel),
                          timeout=20)
        fd.delete_message(signup)
        fd.fail_next("POST", rf"/channels/{world.channel.id}/messages$", status=503, times=3)

        def reposted() -> list[Any]:
            return [m for m in fd.messages(world.channel)
                    if any(b["custom_id"] == f"night:{night_id}:end" for b in m.buttons())]

        [again] = await fd.wait_for(reposted, timeout=90)
        await fd.wait_for(lambda: t("en", "nights.status_between", round=1) in again.text(), timeout=30)
        assert not fd.clear_failures()  # the three failures met it
        assert reposted() == [again]
    fd.assert_clean()


async def test_the_organiser_is_told_once_why_the_first_round_did_not_start_through_discord_errors(world, tmp_path):
    """The first round's time comes with too few signed up; Discord fails the note to the
    organiser twice, then posts it but loses the answer: it shows once, pinging them."""
    fd = world.fd
    ana = world.person("ana")
    why = t("en", "nights.error_too_few", min=2)
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        posts = rf"/channels/{world.channel.id}/messages$"
        fd.fail_next("POST", posts, status=503, times=2)
        fd.fail_next("POST", posts, status=503, times=1, after=True)
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", starts_in=1)
        assert r.ack_type == 4 and not r.ephemeral

        def told() -> list[Any]:
            return [m for m in fd.messages(world.channel) if why in m.text()]

        [note] = await fd.wait_for(told, timeout=30)
        assert note.pinged == [ana.id]
        # the try after the lost answer lands (Discord answers with the note already posted)
        await fd.wait_for(lambda: any(q.method == "POST" and re.search(posts, q.path) and q.status == 200
                                      for q in fd.requests), timeout=20)
        assert not fd.clear_failures()
        assert len(told()) == 1
    fd.assert_clean()


def night_meta(database: Any, night_id: int) -> dict[str, Any]:
    """The night as the bot last saved it."""
    con = connect(database)
    try:
        [meta] = con.execute("SELECT meta FROM nights WHERE id = ?", (night_id,)).fetchone()
    finally:
        con.close()
    return json.loads(meta)


@pytest.mark.parametrize("landed", [False, True])
async def test_why_the_first_round_did_not_start_is_told_once_across_a_kill(world, tmp_path, landed):
    """The first round's time comes with too few signed up, and the note to the organiser
    does not get through: Discord refuses it (``landed``: it posts it, and only its answer
    is lost); the bot is SIGKILLed before it could save that the organiser was told.  Once
    it runs again the organiser is told why, once, pinged; the night saves that they were,
    so a restart after that tells nothing again."""
    fd = world.fd
    ana = world.person("ana")
    why = t("en", "nights.error_too_few", min=2)
    posts = rf"/channels/{world.channel.id}/messages$"

    def told() -> list[Any]:
        return [m for m in fd.messages(world.channel) if why in m.text()]

    bot = FastBotProcess(fd, world.guild, tmp_path / "kill.db", tmp_path / "kill.log")
    try:
        await bot.start()
        fd.fail_next("POST", posts, status=503, times=1000, after=landed)
        signup = (await fd.slash(ana, world.channel, "night start", game="nimmt", starts_in=1)).message
        join = re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])
        assert join, signup.buttons()
        night_id = int(join[1])
        if landed:
            await fd.wait_for(told, timeout=30, interval=0.005)
        else:
            await fd.wait_for(lambda: any(q.method == "POST" and re.search(posts, q.path) and q.status == 503
                                          for q in fd.requests), timeout=30, interval=0.005)
        await bot.kill()
        assert fd.clear_failures()  # (the bot was still trying)
        assert night_meta(bot.database, night_id)["missed"]["code"] == "too_few"  # saved with the night
        await bot.start()
        await fd.wait_for(lambda: "missed" not in night_meta(bot.database, night_id), timeout=30)
        [note] = told()
        assert note.pinged == [ana.id]
        assert note.text() == t("en", "nights.first_missed", organiser=f"<@{ana.id}>", why=why,
                                start=t("en", "nights.start_round"))
        await bot.stop()
        await bot.start()
        await updated(await fd.click(ana, signup, f"night:{night_id}:end"))
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text(), timeout=20)
        assert told() == [note]
        await bot.stop()
    finally:
        bot.finalize()
    fd.assert_clean()
