"""End-to-end harness: the real bot, the real discord.py client, a local
stand-in for Discord (``tests.fakediscord``), and players who only type
slash commands and click what they see.
"""
from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from app.config import Config
from app.i18n import t as translate
from bot import CardBot


@contextlib.asynccontextmanager
async def running_bot(fd: Any, database: Path, guild: Any, **overrides: Any) -> AsyncIterator[CardBot]:
    """Start the bot in this event loop against the stand-in; stop it after."""
    settings = dict(token=fd.token, dev_guild=guild.id, database=database, computer_delay=0.02,
                    time_scale=1.0, table_seed=None, log_level="WARNING")
    settings.update(overrides)
    config = Config(**settings)
    with fd.patched():
        bot = CardBot(config)
        task = asyncio.create_task(bot.start(fd.token))
        try:
            ready = asyncio.ensure_future(_ready(fd))
            await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():  # the bot stopped before it was ready: show why
                ready.cancel()
                task.result()
                raise AssertionError("the bot stopped before it was ready")
            ready.result()
            yield bot
        finally:
            await bot.close()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _ready(fd: Any) -> None:
    await fd.wait_ready(timeout=15)
    await fd.wait_commands(timeout=15)


def button(message: Any, pattern: str) -> dict[str, Any] | None:
    """The first enabled button whose custom_id matches ``pattern``."""
    for b in message.buttons():
        if b.get("custom_id") and re.fullmatch(pattern, b["custom_id"]) and not b.get("disabled"):
            return b
    return None


def select(message: Any, pattern: str) -> dict[str, Any] | None:
    for s in message.selects():
        if s.get("custom_id") and re.fullmatch(pattern, s["custom_id"]):
            return s
    return None


@dataclass
class Table:
    """What the players see of one table, found through the stand-in."""

    fd: Any
    channel: Any
    lobby: Any
    table_id: int
    thread: Any = None
    acks: list[Any] = field(default_factory=list)

    def record(self, result: Any) -> Any:
        self.acks.append(result)
        return result

    async def click(self, user: Any, message: Any, custom_id: str) -> Any:
        return self.record(await self.fd.click(user, message, custom_id))

    async def choose(self, user: Any, message: Any, custom_id: str, values: list[str]) -> Any:
        return self.record(await self.fd.select(user, message, custom_id, values))

    async def wait_thread(self) -> Any:
        threads = await self.fd.wait_for(lambda: self.fd.threads(self.channel), timeout=10)
        self.thread = threads[-1]
        return self.thread

    def table_message(self) -> Any | None:
        """The newest table message in the thread (the one with the game's image)."""
        where = self.thread or self.channel
        found = None
        for message in self.fd.messages(where):
            if any(a.get("filename") == "table.png" for a in message.attachments) or any(
                    b.get("custom_id") == f"table:{self.table_id}:hand" for b in message.buttons()):
                found = message
        return found

    def log_text(self) -> str:
        where = self.thread or self.channel
        return "\n".join(m.content for m in self.fd.messages(where) if m.content)


async def open_table(fd: Any, host: Any, channel: Any, command: str, **options: Any) -> Table:
    result = await fd.slash(host, channel, command, **options)
    assert result.ack_type == 4 and not result.ephemeral, result
    lobby = result.message
    match = re.match(r"table:(\d+):join", lobby.buttons()[0]["custom_id"])
    assert match, lobby.buttons()
    table = Table(fd, channel, lobby, int(match.group(1)))
    table.record(result)
    return table


async def seat_players(table: Table, host: Any, players: list[Any], computers: int = 0,
                       level: str = "normal") -> None:
    """People join; the host adds computer players (normal: the button; another
    level: the lobby's level menu)."""
    for user in players:
        r = await table.click(user, table.lobby, f"table:{table.table_id}:join")
        assert r.ack_type == 7
        table.lobby = r.message
    for _ in range(computers):
        if level == "normal":
            r = await table.click(host, table.lobby, f"table:{table.table_id}:cpu")
        else:
            r = await table.choose(host, table.lobby, f"tsel:{table.table_id}:cpu", [level])
        assert r.ack_type == 7
        table.lobby = r.message


async def nimmt_turn(t: Table, user: Any, panel: Any = None, lang: str = "en") -> None:
    """One whole 11 nimmt! turn as a player does it: open the hand (or refresh
    an open panel), pick a stack where a card fits, play; take a stack when
    nothing fits; end a bull-card turn when no other stack takes a card."""
    if panel is None:
        r = await t.click(user, t.table_message(), f"table:{t.table_id}:hand")
        assert r.ack_type == 4 and r.ephemeral, r
    else:
        r = await t.click(user, panel, f"table:{t.table_id}:nrefresh")
        assert r.ack_type == 7, r
    panel = r.message
    assert panel.ephemeral_to == user.id
    no_fit = translate(lang, "nimmt.stack_no_fit")
    for _ in range(40):
        steal = select(panel, r"tsel:\d+:nsteal:.*")
        opener = select(panel, r"tsel:\d+:nopen:.*")
        cards = select(panel, r"tsel:\d+:ncards:.*")
        stacks = select(panel, r"tsel:\d+:nstack:.*")
        end = button(panel, r"table:\d+:npass:.*")
        take = button(panel, r"table:\d+:ntake:.*")
        fitting = [o for o in (stacks or {}).get("options", []) if o.get("description") != no_fit]
        if steal:
            r = await t.choose(user, panel, steal["custom_id"], [steal["options"][0]["value"]])
        elif opener:
            r = await t.choose(user, panel, opener["custom_id"], [opener["options"][0]["value"]])
        elif cards:
            values = [o["value"] for o in cards["options"]][: cards["max_values"]]
            r = await t.choose(user, panel, cards["custom_id"], values)
        elif fitting and not take:
            r = await t.choose(user, panel, stacks["custom_id"], [fitting[0]["value"]])
        elif end:
            r = await t.click(user, panel, end["custom_id"])
        elif take:
            r = await t.click(user, panel, take["custom_id"])
        elif stacks:
            r = await t.choose(user, panel, stacks["custom_id"], [stacks["options"][0]["value"]])
        else:
            return  # no controls left: the turn is over
        assert r.ack_type == 7, r
        panel = r.message


async def play_nimmt(fd: Any, t: Table, people: dict[Any, str], table_lang: str = "en") -> None:
    """Everyone plays when pinged (``people``: user -> their language) until
    the lobby message shows the final standings."""
    finished = translate(table_lang, "table.finished")
    pinged = {u.id: 0 for u in people}

    def pings(user: Any) -> int:
        return sum(1 for m in fd.messages(t.thread) if user.id in m.mentions)

    for _ in range(3000):
        if finished in t.lobby.text():
            return
        mover = None
        for user in people:
            count = pings(user)
            if count > pinged[user.id]:
                pinged[user.id] = count
                mover = user
        if mover is None:
            await fd.wait_for(lambda: finished in t.lobby.text()
                              or any(pings(u) > pinged[u.id] for u in people), timeout=30)
            continue
        await nimmt_turn(t, mover, lang=people[mover])
    raise AssertionError("the game did not end")
