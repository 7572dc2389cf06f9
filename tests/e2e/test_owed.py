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
from tests.e2e.test_restart import Run, action_of, people_of

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


class LostAnswer:
    """At the ``at``-th move of a person: Discord posts the thread's next messages but
    every answer to them is lost (a 502 after the work, discord.py tries again 1, 3,
    5 s later); the bot is SIGKILLed as soon as the first one shows, before it could
    save that the thread was told.  Returns the panel the move showed."""

    def __init__(self, at: int = 3) -> None:
        self.at = at
        self.moves = 0
        self.posted: list[Any] = []  # the messages posted while their answers were lost

    async def __call__(self, run: Run, event: str, payload: Any) -> Any:
        if event != "click" or self.posted:
            return None
        user, panel, (kind, custom_id, values) = payload
        if action_of(custom_id, values) is None:
            return None  # (choosing cards: the move is the stack chosen next)
        self.moves += 1
        if self.moves < self.at:
            return None
        fd = run.fd
        before = len(fd.messages(run.thread))
        fd.fail_next("POST", rf"/channels/{run.thread.id}/messages$", status=502, times=20, after=True)
        shown = await panel_answer(await run.interact(user, panel, kind, custom_id, values))
        await fd.wait_for(lambda: len(fd.messages(run.thread)) > before, timeout=10, interval=0.005)
        await run.bot.kill()
        self.posted = fd.messages(run.thread)[before:]
        fd.clear_failures()
        await run.bot.start()
        return shown


async def test_a_move_posted_but_not_saved_as_told_before_a_kill_is_told_once(world, bots, tmp_path):
    """The thread showed a move (and the next turn's ping) but the bot died before it saved
    that: after the restart the thread goes on from there, telling nothing twice."""
    fd = world.fd
    bot = bots(fd, world.guild, tmp_path / "once.db", tmp_path / "once.log")
    await bot.start()
    plan = LostAnswer()
    run = Run(world, bot, people_of(world), hook=plan)
    await run.open("once")
    await run.start()
    await run.play()
    await run.finish_shown()
    assert plan.posted, "no message was posted while its answer was lost"
    assert bot.kills == 1
    shown = "\n".join(m.content for m in fd.messages(run.thread))
    for message in plan.posted:  # what Discord had posted before the kill shows once
        assert shown.count(message.content) == 1, message.content
    assert told_twice(run) == []
    await bot.stop()
    fd.assert_clean()

