"""A game whose thread is deleted goes on in a new one, opened from a message in the
channel that says so: that message is said once, whatever Discord and the machine do
meanwhile (an answer lost after Discord posted it, which discord.py sends again or the
bot tries again later; a kill before the new thread was saved)."""
from __future__ import annotations

from typing import Any

import pytest

from app.i18n.catalogue import t
from tests.e2e import nimmt_turn, running_bot, started
from tests.e2e.test_owed import told_twice
from tests.e2e.test_restart import Run, played

pytestmark = pytest.mark.timeout(240)


def said_moved(fd: Any, channel: Any, table_id: int) -> list[Any]:
    """The channel's messages that say the table continues in a new thread."""
    text = t("en", "table.moved", table=table_id)
    return [m for m in fd.messages(channel) if m.content == text]


async def test_a_new_threads_message_lands_once_through_lost_answers(world, tmp_path):
    """Discord posts the message that opens the new thread, and its answer is lost twice:
    a 502 (discord.py sends it again a second later) and a 503 (the bot tries again
    later).  The channel says once that the game continues in a new thread, the thread
    opens from that message, and the game goes on there, its player pinged once."""
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        table, live = await started(world, bot, people, rounds=1, turn_time=0)
        gone = table.thread
        posts = rf"/channels/{world.channel.id}/messages$"
        fd.fail_next("POST", posts, status=502, after=True)
        fd.fail_next("POST", posts, status=503, after=True)
        fd.delete_channel(gone)
        table.thread = await fd.wait_for(
            lambda: next((th for th in fd.threads(world.channel) if th.id != gone.id), None), timeout=20)
        assert not fd.clear_failures()  # both answers were lost
        assert [m.id for m in said_moved(fd, world.channel, table.table_id)] == [table.thread.id]
        assert [th.id for th in fd.threads(world.channel)] == [table.thread.id]
        mover = people[live.engine.to_move]
        await fd.wait_for(table.table_message, timeout=10)
        await fd.wait_for(lambda: [u for _, u in fd.pings(table.thread)] == [mover.id], timeout=10)
        await nimmt_turn(table, mover)
        await fd.wait_for(lambda: live.status != "playing" or live.engine.to_move != people.index(mover),
                          timeout=10)
        assert len(said_moved(fd, world.channel, table.table_id)) == 1
    fd.assert_clean()


async def test_the_live_table_waits_for_the_new_thread(world, tmp_path):
    """The message that opens the new thread is posted but both answers to it are lost
    (503s: the bot tries again, later each time).  Meanwhile the live table is not
    posted in the channel: it comes in the new thread, its player pinged once."""
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        table, live = await started(world, bot, people, rounds=1, turn_time=0)
        gone = table.thread
        before = [m.id for m in fd.messages(world.channel)]
        fd.fail_next("POST", rf"/channels/{world.channel.id}/messages$", status=503, times=2, after=True)
        fd.delete_channel(gone)
        table.thread = await fd.wait_for(
            lambda: next((th for th in fd.threads(world.channel) if th.id != gone.id), None), timeout=20)
        mover = people[live.engine.to_move]
        await fd.wait_for(table.table_message, timeout=10)
        await fd.wait_for(lambda: [u for _, u in fd.pings(table.thread)] == [mover.id], timeout=10)
        assert [m.id for m in fd.messages(world.channel)] == [*before, table.thread.id]
        await nimmt_turn(table, mover)
        await fd.wait_for(lambda: live.status != "playing" or live.engine.to_move != people.index(mover),
                          timeout=10)
        assert [m.id for m in fd.messages(world.channel)] == [*before, table.thread.id]
    fd.assert_clean()


class Unsaved:
    """Once the game runs, its thread is deleted while Discord posts the message that
    opens the new one but every answer to it is lost (a 503 after the work, which
    discord.py does not send again); the bot is SIGKILLed as soon as that message shows,
    before it opened and saved the new thread, and started again."""

    def __init__(self) -> None:
        self.done = False
        self.gone: Any = None  # the thread deleted

    async def __call__(self, run: Run, event: str, payload: Any) -> Any:
        if event != "hand" or self.done:
            return None
        self.done = True
        fd = run.fd
        self.gone = run.thread
        fd.fail_next("POST", rf"/channels/{run.channel.id}/messages$", status=503, times=1000, after=True)
        fd.delete_channel(run.thread)
        await fd.wait_for(lambda: said_moved(fd, run.channel, run.table_id), timeout=10, interval=0.005)
        await run.bot.kill()
        assert fd.clear_failures()  # (the bot was still trying)
        await run.bot.start()
        run.thread = await fd.wait_for(
            lambda: next((th for th in fd.threads(run.channel) if th.id != self.gone.id), None), timeout=20)
        await fd.wait_for(run.table_message, timeout=15)
        return None


async def test_a_new_threads_message_posted_just_before_a_kill_is_said_once(world, bots, tmp_path):
    fd = world.fd
    plan = Unsaved()
    run = await played(world, bots, tmp_path, "moved", plan)
    bot = run.bot
    await run.finish_shown()
    assert plan.done and bot.kills == 1
    [said] = said_moved(fd, run.channel, run.table_id)
    assert [th.id for th in fd.threads(run.channel)] == [said.id] == [run.thread.id]
    assert told_twice(run) == []
    await bot.stop()
    fd.assert_clean()
