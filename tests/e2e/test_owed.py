"""What the bot owes the players reaches them exactly once, whatever Discord
and the machine do meanwhile: a message whose answer was lost and a kill
before the bot saved that it was posted (told once), a deploy's SIGTERM in the
middle of a move (its answers and edits land), Discord's 5xx errors (the
final standings still show once they clear).  The bot runs in a subprocess
(tests/e2e/test_restart.py's :class:`BotProcess`) against the stand-in."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from tests.e2e import panel_answer
from tests.e2e.test_restart import AtMove, Run, played

pytestmark = pytest.mark.timeout(240)

MOVE = re.compile(r"^\*\*(?P<name>[^*]+)\*\* (?:played|took stack|ended the turn|opened stack|takes a bull)")


def told_twice(run: Run) -> list[str]:
    """The thread's lines that tell a card played more than once (each card is played once
    in a game), and the pings that follow another ping of the same person with no move of
    theirs between (a turn pinged twice)."""
    names = {u.id: u.name for u in run.people}
    played = Counter(line for m in run.fd.messages(run.thread) for line in m.content.splitlines()
                     if " played " in line)
    doubled = [line for line, n in played.items() if n > 1]
    waiting: int | None = None
    for message in run.fd.messages(run.thread):
        for line in message.content.splitlines():
            move = MOVE.match(line)
            if move and waiting is not None and move["name"] == names[waiting]:
                waiting = None
        for user in message.mentions:
            if user == waiting:
                doubled.append(f"second ping: {message.content}")
            waiting = user
    return doubled


class LostAnswer(AtMove):
    """At the ``at``-th move of a person: Discord posts the thread's next messages but
    every answer to them is lost (a 502 after the work, discord.py tries again 1, 3,
    5 s later); the bot is SIGKILLed as soon as the first one shows, before it could
    save that the thread was told.  Returns the panel the move showed."""

    def __init__(self, at: int = 3) -> None:
        super().__init__(at)
        self.posted: list[Any] = []  # the messages posted while their answers were lost

    async def act(self, run: Run, user: Any, panel: Any, kind: str, custom_id: str, values: list[str]) -> Any:
        fd = run.fd
        before = len(fd.messages(run.thread))
        # (the thread's messages: the bot's own posts, and a live table posted through a click's token)
        fd.fail_next("POST", rf"(/channels/{run.thread.id}/messages|/webhooks/\d+/[^/]+)$", status=502, times=20,
                     after=True)
        shown = await panel_answer(await run.interact(user, panel, kind, custom_id, values))
        await fd.wait_for(lambda: len(fd.messages(run.thread)) > before, timeout=10, interval=0.005)
        await run.bot.kill()
        self.posted = fd.messages(run.thread)[before:]
        self.done = True
        fd.clear_failures()
        await run.bot.start()
        return shown


async def test_a_move_posted_but_not_saved_as_told_before_a_kill_is_told_once(world, bots, tmp_path):
    """The thread showed a move (and the next turn's ping) but the bot died before it saved
    that: after the restart the thread goes on from there, telling nothing twice."""
    fd = world.fd
    plan = LostAnswer()
    run = await played(world, bots, tmp_path, "once", plan)
    bot = run.bot
    await run.finish_shown()
    assert plan.posted, "no message was posted while its answer was lost"
    assert bot.kills == 1
    shown = "\n".join(m.content for m in fd.messages(run.thread))
    for message in plan.posted:  # what Discord had posted before the kill shows once
        if not message.attachments:  # (a live table is replaced by the next one: only records stay)
            assert shown.count(message.content) == 1, message.content
    # one live table (the picture) stays in the thread, not one per try
    assert sum(1 for m in fd.messages(run.thread) if m.attachments) == 1
    assert told_twice(run) == []
    await bot.stop()
    fd.assert_clean()


def ends_the_game(run: Run, custom_id: str, values: list[str]) -> bool:
    """Whether this control of a person's panel makes the game's last move."""
    moved = run.after(custom_id, values)
    return moved is not None and bool(moved[1].over)


class FailingEnd(AtMove):
    """At the last move, Discord fails: every try of the lobby message's next edit
    (502, five times: discord.py gives up after trying again 1, 3, 5 and 7 s later) and
    the thread's next five messages (503: discord.py does not try those again)."""

    def __init__(self) -> None:
        super().__init__(at=1)

    def counts(self, run: Run, user: Any, custom_id: str, values: list[str]) -> bool:
        return ends_the_game(run, custom_id, values)

    async def act(self, run: Run, user: Any, panel: Any, kind: str, custom_id: str, values: list[str]) -> Any:
        self.done = True
        run.fd.fail_next("PATCH", rf"/channels/{run.channel.id}/messages/{run.lobby.id}$", status=502, times=5)
        run.fd.fail_next("POST", rf"/channels/{run.thread.id}/messages$", status=503, times=5)
        return None  # the move is made as usual


class EndRun(Run):
    async def mover(self) -> Any | None:
        """Nobody once the last move was made (the store says "playing" until the end was shown)."""
        return None if getattr(self.hook, "done", False) else await super().mover()


async def test_the_end_is_shown_once_discord_errors_clear(world, bots, tmp_path):
    """Discord fails the end's narration and the lobby's standings for a while: once
    it takes them again, the thread says the game is over and the lobby shows the
    final standings (the bot tried again until they landed)."""
    fd = world.fd
    plan = FailingEnd()
    run = await played(world, bots, tmp_path, "end", plan, EndRun, seed=2)  # a person moves last
    bot = run.bot
    assert plan.done

    def failed(method: str, path: str) -> int:
        return sum(1 for r in fd.requests if r.method == method and re.fullmatch(path, r.path) and r.status >= 500)

    lobby = rf"/channels/{run.channel.id}/messages/{run.lobby.id}"
    await fd.wait_for(lambda: failed("PATCH", lobby) == 5, timeout=60)  # discord.py gave up on that edit
    await fd.wait_for(lambda: "The game is over" in run.lobby.text(), timeout=60)
    await fd.wait_for(lambda: "Game over!" in run.thread_text(), timeout=60)
    assert failed("POST", rf"/channels/{run.thread.id}/messages") == 5
    assert run.thread_text().count("Game over!") == 1
    await bot.stop()
    fd.assert_clean()


class Deploy(AtMove):
    """At the ``at``-th move of the person seated before the computer (the turn then goes
    to the computer: the live table is edited in place, and the other person's panel,
    no ping bringing it down, is redrawn where it is): Discord fails the first tries of
    the edits the move causes (its panel, the table message: discord.py tries each again
    1 s, then 3 s later); the bot gets SIGTERM as soon as both are under way, after the
    move was acknowledged, and must let them land before it exits."""

    def counts(self, run: Run, user: Any, custom_id: str, values: list[str]) -> bool:
        return super().counts(run, user, custom_id, values) and user is run.people[-1]

    async def act(self, run: Run, user: Any, panel: Any, kind: str, custom_id: str, values: list[str]) -> Any:
        self.done = True
        fd = run.fd
        table = run.table_message()
        assert table is not None
        edits = table.edit_count
        before = panel.text()
        start = len(fd.requests)

        def failed() -> int:
            return sum(1 for r in fd.requests[start:] if r.status == 500)

        # (each message by itself, whichever way the bot edits it: through the click's token, a
        # My hand token whose @original is the table message, or the channel; a failure left
        # to whichever edit comes first could fall on one edit four times, 16 s of tries)
        for message in (panel, table):
            fd.fail_next("PATCH", r"/messages/[^/]+$", status=500, times=2, message=message.id)
        r = await run.interact(user, panel, kind, custom_id, values)
        assert r.ack_type in (6, 7), r
        await fd.wait_for(lambda: failed() >= 2, timeout=10, interval=0.002)  # both edits are being tried again
        await run.bot.stop()  # SIGTERM; exit code 0
        fd.clear_failures()
        shown = fd.message(r.message.id)
        assert shown.text() != before, "the panel still shows the move as not made"
        newest = run.table_message()
        assert newest is not None
        assert newest.id != table.id or newest.edit_count > edits, "the table message was not redrawn"
        await run.bot.start()
        return shown


async def test_a_deploy_stop_lets_the_answers_to_an_acknowledged_move_land(world, bots, tmp_path):
    """SIGTERM while the answers to a move are being sent: the bot finishes them (the
    player's panel and the table message show the move) before it exits; after the
    start the game goes on to its end."""
    fd = world.fd
    plan = Deploy()
    run = await played(world, bots, tmp_path, "term", plan)
    bot = run.bot
    await run.finish_shown()
    assert plan.done
    log = "\n".join(path.read_text(errors="replace") for path in tmp_path.glob("term.log*"))
    assert "Session is closed" not in log and "Traceback" not in log, log[-3000:]
    await bot.stop()
    fd.assert_clean()


class RepostKill(AtMove):
    """From the ``at``-th move of a person on: Discord posts the thread's next messages
    but loses every answer (a 503 after the work; the bot tries again later, under the
    same nonce); as soon as the move has reposted the live table at the bottom (the next
    person's turn, pinged), the bot is SIGKILLed, before it could save that it did.  A
    move after which the live table was only edited (a computer's turn) tries the next."""

    def __init__(self, at: int = 3) -> None:
        super().__init__(at)
        self.reposted: Any = None  # the live table posted just before the kill
        self.replaced: Any = None  # the live table it replaced

    async def act(self, run: Run, user: Any, panel: Any, kind: str, custom_id: str, values: list[str]) -> Any:
        fd = run.fd
        live = run.table_message()
        before = len(fd.messages(run.thread))
        fd.fail_next("POST", rf"/channels/{run.thread.id}/messages$", status=503, times=1000, after=True)
        shown = await panel_answer(await run.interact(user, panel, kind, custom_id, values))

        def reposted() -> Any:
            return next((m for m in fd.messages(run.thread)[before:] if m.attachments), None)

        try:
            self.reposted = await fd.wait_for(reposted, timeout=3, interval=0.005)
        except TimeoutError:  # no repost at this move: the next one
            fd.clear_failures()
            return shown
        self.done = True
        await run.bot.kill()
        fd.clear_failures()
        self.replaced = live
        await run.bot.start()
        return shown


async def test_a_live_table_reposted_just_before_a_kill_is_posted_once(world, bots, tmp_path):
    """The live table was posted anew at the bottom (pinging the next person) but the bot
    died before it saved that: after the restart it is that message, still the newest
    one and the only live table, not a second post; the one it replaced is gone; the
    ping is not sent twice and the game goes on to its end."""
    fd = world.fd
    plan = RepostKill()

    class Checked(Run):
        async def mover(self) -> Any | None:
            if plan.reposted is not None and not getattr(self, "checked", False):
                self.checked = True
                # the restarted bot settles on the message posted before the kill
                await fd.wait_for(lambda: fd.message(plan.replaced.id).deleted, timeout=20)
                lives = [m for m in fd.messages(self.thread) if m.attachments]
                assert [m.id for m in lives] == [plan.reposted.id]
                assert fd.messages(self.thread)[-1].id == plan.reposted.id
            return await super().mover()

    run = await played(world, bots, tmp_path, "repost", plan, Checked)
    bot = run.bot
    await run.finish_shown()
    assert plan.reposted is not None and bot.kills == 1
    assert sum(1 for m in fd.messages(run.thread) if m.attachments) == 1
    assert told_twice(run) == []
    await bot.stop()
    fd.assert_clean()
