"""What the thread says besides the moves survives a SIGKILL: the start, the
turn timer's "time ran out" lines, "I'm back" and a stop (on the lobby too),
and a lobby shows a join whose click went unanswered.  The bot (in a
subprocess) has saved each with the change it belongs to; Discord fails the
first tries of the message (discord.py waits 1 s, then 3 s, before trying
again), or every try until the kill, and the bot is killed meanwhile.  After
the restart every line is in the thread, once, in the order it happened."""
from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from app.i18n.catalogue import t
from tests.e2e import LAST_MOVES, posted, updated
from tests.e2e.processes import BotProcess, table_row

pytestmark = pytest.mark.timeout(240)


class TimerBot(BotProcess):
    """Quick turn timers (60 s turns last 1.2 s); computers take ``delay`` s a move."""

    def __init__(self, *args: Any, delay: float = 0.01, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.delay = delay

    def env(self) -> dict[str, str]:
        return {**super().env(), "COMPUTER_DELAY": str(self.delay), "TIME_SCALE": "0.02"}


async def open_game(fd: Any, world: Any, people: list[Any], name: str, *, fail_first: bool = False
                    ) -> tuple[int, Any, Any]:
    """A 2-seat 11 nimmt! game with 60 s turns; ``fail_first``: Discord fails the
    thread's messages, every try, until the test clears the failures."""
    channel = fd.add_channel(world.guild, name)
    r = await fd.slash(people[0], channel, "nimmt new", seats=2, rounds=2, turn_time=60)
    lobby = await posted(r)
    join = re.match(r"table.join:(\d+)", lobby.buttons()[0]["custom_id"])
    assert join, lobby.buttons()
    table_id = int(join[1])
    await updated(await fd.click(people[1], lobby, f"table.join:{table_id}"))
    if fail_first:  # (every message but those in the channel: the thread's)
        fd.fail_next("POST", rf"/channels/(?!{channel.id}/)\d+/messages$", status=500, times=1000)
    await updated(await fd.click(people[0], lobby, f"table.start:{table_id}"))
    thread = (await fd.wait_for(lambda: fd.threads(channel), timeout=15))[-1]
    if not fail_first:
        await fd.wait_for(lambda: any(m.mentions for m in fd.messages(thread)), timeout=15)  # the first ping
    return table_id, channel, thread


def lines(fd: Any, thread: Any) -> list[str]:
    """What the thread tells: its messages' lines (the rounds' records) and the moves of
    the round going on that the live table (the newest message with the picture) shows."""
    shown = fd.messages(thread)
    told = [line for m in shown for line in (m.content or "").splitlines()]
    live = next((m for m in reversed(shown) if any(a.get("filename") == "table.png" for a in m.attachments)), None)
    if live is not None:
        told += [line for e in live.embeds for f in e.get("fields") or () if f.get("name") in LAST_MOVES
                 for line in f["value"].splitlines()]
    return told


def fail_narration(fd: Any, thread: Any) -> None:
    """Discord fails (500) every try of a message in the thread and of an edit of one
    (the live table tells the round's moves; a click's token may redraw it) until the
    test clears the failures at the kill: nothing reaches the thread before it, however
    slow the machine and whatever else the bot tells meanwhile (a turn timer's move)."""
    fd.fail_next("POST", rf"/channels/{thread.id}/messages$", status=500, times=1000)
    fd.fail_next("PATCH", rf"/channels/{thread.id}/messages/\d+$", status=500, times=1000)
    fd.fail_next("PATCH", r"/webhooks/\d+/[^/]+/messages/@original$", status=500, times=1000)


async def test_time_ran_out_lines_saved_before_a_kill_are_told_after_it_once(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    bot = TimerBot(fd, world.guild, tmp_path / "timeout.db", tmp_path / "timeout.log")
    try:
        await bot.start()
        table_id, _, thread = await open_game(fd, world, [ana, ben], "timers", fail_first=True)
        # nobody plays: the first timed-out turn is saved; nothing is posted in the thread yet
        # (Discord fails every try until the kill, however long the timer took on a busy machine)
        await fd.wait_for(lambda: any(s["missed"] for s in table_row(bot.database, table_id)[1]["seats"]),
                          timeout=20, interval=0.005)
        assert lines(fd, thread) == []
        await bot.kill()
        fd.clear_failures()
        await bot.start()
        # three missed turns each: then computers hold both seats and finish the game
        await fd.wait_for(lambda: table_row(bot.database, table_id)[0] == "finished", timeout=60)
        # (the thread tells the whole game after the finish, paced by Discord's limits: slow on a busy machine)
        await fd.wait_for(lambda: any("Game over!" in line for line in lines(fd, thread)), timeout=60)
        told = lines(fd, thread)
        # the start's lines (with the shuffle commitment) once, first
        started = t("en", "table.game_started", game=t("en", "nimmt.title"))
        assert told.count(started) == 1 and told.index(started) < 3, told[:5]
        sha = table_row(bot.database, table_id)[1]["shuffle"]["sha256"]
        assert told.count(t("en", "after.narrate_commitment", sha=sha)) == 1, told[:5]
        for user in (ana, ben):
            timed_out = [line for line in told if line == t("en", "table.timeout", name=user.name)]
            away = [line for line in told if line == t("en", "table.timeout_away", name=user.name)]
            assert (len(timed_out), len(away)) == (2, 1), (user.name, timed_out, away, told)
            last = told.index(away[0])
            assert all(told.index(line) < last for line in timed_out)
        # each "time ran out" line follows the move the computer made for that player
        for index, line in enumerate(told):
            if line.startswith("⏰"):
                name = "ana" if "ana" in line else "ben"
                moves = [x for x in told[:index] if x.startswith("**")]
                assert moves and moves[-1].startswith(f"**{name}**"), (line, moves[-3:])
        await bot.stop()
    finally:
        bot.finalize()
    fd.take_violations()  # (an unanswered ping from before the kill is no fault of this test)


async def test_im_back_saved_before_a_kill_is_told_after_it_once(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    bot = TimerBot(fd, world.guild, tmp_path / "back.db", tmp_path / "back.log", delay=1.5)
    try:
        await bot.start()
        table_id, _, thread = await open_game(fd, world, [ana, ben], "back")
        seat = lambda user: next(s for s in table_row(bot.database, table_id)[1]["seats"]  # noqa: E731
                                 if s["user_id"] == user.id)
        await fd.wait_for(lambda: seat(ana)["away"], timeout=30)
        message = await fd.wait_for(lambda: next((m for m in reversed(fd.messages(thread))
                                                  if any(b.get("custom_id", "").startswith(f"table.back:{table_id}")
                                                         for b in m.buttons())), None), timeout=20)
        fail_narration(fd, thread)
        back_id = next(b["custom_id"] for b in message.buttons()
                       if b.get("custom_id", "").startswith(f"table.back:{table_id}"))
        r = await fd.click(ana, message, back_id)
        assert r.ephemeral and not seat(ana)["away"], r
        back = t("en", "table.back", name="ana")
        assert back not in lines(fd, thread)
        await bot.kill()
        fd.clear_failures()
        await bot.start()
        await fd.wait_for(lambda: back in lines(fd, thread), timeout=20)
        told = lines(fd, thread)
        assert told.count(back) == 1
        assert told.index(back) > told.index(t("en", "table.timeout_away", name="ana"))
        await bot.stop()
    finally:
        bot.finalize()
    fd.take_violations()


async def test_a_stop_saved_before_a_kill_is_told_in_the_thread_and_on_the_lobby_after_it(world, tmp_path):
    """A moderator stops a game (told privately at once); the bot dies before the
    thread and the lobby message say so.  After the restart both say it, once,
    and the table message loses its buttons."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    mod = world.person("mod", manage_messages=True)
    bot = TimerBot(fd, world.guild, tmp_path / "stop.db", tmp_path / "stop.log")
    try:
        await bot.start()
        r = await fd.slash(ana, world.channel, "nimmt new", seats=2, rounds=1, turn_time=0)
        lobby = await posted(r)
        table_id = int(re.match(r"table.join:(\d+)", lobby.buttons()[0]["custom_id"])[1])
        await updated(await fd.click(ben, lobby, f"table.join:{table_id}"))
        await updated(await fd.click(ana, lobby, f"table.start:{table_id}"))
        thread = (await fd.wait_for(lambda: fd.threads(world.channel), timeout=15))[-1]
        await fd.wait_for(lambda: any(m.mentions for m in fd.messages(thread)), timeout=15)
        await fd.wait_for(lambda: f"<#{thread.id}>" in lobby.text(), timeout=15)
        await fd.wait_for(lambda: "table" in table_row(bot.database, table_id)[1]["messages"], timeout=15)
        # Discord fails the next messages and edits for a while (tried again after 1 s, 3 s)
        fd.fail_next("POST", rf"/channels/{thread.id}/messages$", status=500, times=2)
        fd.fail_next("PATCH", rf"/channels/{world.channel.id}/messages/{lobby.id}$", status=500, times=2)
        r = await fd.slash(mod, thread, "table stop")
        assert r.ephemeral and r.message.text() == t("en", "faults.stopped", table=table_id), r
        stopped = t("en", "faults.stopped_by", name="mod")
        assert table_row(bot.database, table_id)[0] == "abandoned"
        assert stopped not in lines(fd, thread) and stopped not in lobby.text()
        await bot.kill()
        fd.clear_failures()
        await bot.start()
        await fd.wait_for(lambda: stopped in lines(fd, thread) and stopped in lobby.text(), timeout=20)
        await fd.wait_for(lambda: not table_row(bot.database, table_id)[1]["notes"], timeout=10)
        table_message = fd.message(table_row(bot.database, table_id)[1]["messages"]["table"])
        await fd.wait_for(lambda: not table_message.buttons(), timeout=10)
        await bot.restart()  # told: nothing more to say
        r = await fd.slash(mod, thread, "table stop")  # (the restarted bot answers: nothing here)
        assert r.ephemeral and r.message.text() == t("en", "faults.no_table_here"), r.message.text()
        assert lines(fd, thread).count(stopped) == 1
        await bot.stop()
    finally:
        bot.finalize()
    fd.take_violations()


async def test_a_join_saved_before_a_kill_shows_on_the_lobby_after_it(world, tmp_path):
    """Ben's Join was saved, then the bot died before the click was answered
    (Discord failed the answer; "the application did not respond"): after the
    restart the lobby message shows Ben seated without anyone clicking again."""
    from tests.fakediscord import NoAcknowledgement

    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    bot = TimerBot(fd, world.guild, tmp_path / "join.db", tmp_path / "join.log")
    try:
        await bot.start()
        r = await fd.slash(ana, world.channel, "nimmt new", seats=3, rounds=1, turn_time=0)
        lobby = await posted(r)
        table_id = int(re.match(r"table.join:(\d+)", lobby.buttons()[0]["custom_id"])[1])
        # the answer fails past Discord's 3 s (discord.py tries again after 1, 3, 5 s)
        fd.fail_next("POST", r"/interactions/\d+/[^/]+/callback$", status=500, times=3)
        click = asyncio.ensure_future(fd.click(ben, lobby, f"table.join:{table_id}"))
        await fd.wait_for(lambda: click.done() or len(table_row(bot.database, table_id)[1]["seats"]) == 2,
                          timeout=10, interval=0.005)
        await bot.kill()
        fd.clear_failures()
        with pytest.raises(NoAcknowledgement):
            await click
        fd.take_violations(r"not acknowledged within")
        assert "Seats taken: 1/3" in lobby.text()
        await bot.start()
        await fd.wait_for(lambda: "Seats taken: 2/3" in lobby.text(), timeout=15)
        assert "ben" in lobby.text() and lobby.buttons()
        await bot.stop()
    finally:
        bot.finalize()


async def test_a_step_away_saved_before_a_kill_is_told_after_it_once(world, tmp_path):
    """/leave in the game's thread is answered (a computer holds the seat);
    the bot dies before the thread says so.  After the restart the thread
    says it once, and the computer plays that seat."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    bot = TimerBot(fd, world.guild, tmp_path / "away.db", tmp_path / "away.log", delay=1.5)
    try:
        await bot.start()
        table_id, _, thread = await open_game(fd, world, [ana, ben], "away")
        seat = lambda user: next(s for s in table_row(bot.database, table_id)[1]["seats"]  # noqa: E731
                                 if s["user_id"] == user.id)
        fail_narration(fd, thread)
        r = await fd.slash(ben, thread, "leave")
        assert r.ephemeral and r.message.text() == t("en", "slash.stepped_away", table=table_id,
                                                      back=t("en", "table.im_back"))
        assert seat(ben)["away"]  # saved before the answer
        away = t("en", "table.stepped_away", name="ben", back=t("en", "table.im_back"))
        assert away not in lines(fd, thread)
        await bot.kill()
        fd.clear_failures()
        await bot.start()
        await fd.wait_for(lambda: away in lines(fd, thread), timeout=20)
        assert lines(fd, thread).count(away) == 1 and seat(ben)["away"]
        await bot.stop()
    finally:
        bot.finalize()
    fd.take_violations()
