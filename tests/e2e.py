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


async def seat_players(table: Table, host: Any, players: list[Any], computers: int = 0) -> None:
    for user in players:
        r = await table.click(user, table.lobby, f"table:{table.table_id}:join")
        assert r.ack_type == 7
        table.lobby = r.message
    for _ in range(computers):
        r = await table.click(host, table.lobby, f"table:{table.table_id}:cpu")
        assert r.ack_type == 7
        table.lobby = r.message
