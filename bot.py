"""Card Night: a Discord bot for 11 nimmt! and Garbage.

Run ``python bot.py`` with ``DISCORD_TOKEN`` in the environment or in a
``.env`` file beside this file.  ``python bot.py --sync-global`` publishes the
slash commands to every server once (this takes up to an hour to show);
``DEV_GUILD`` syncs them to one server instantly at every start.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
from typing import Any

import discord
from discord.ext import commands

from app.config import Config

log = logging.getLogger("cardbot")

INITIAL_EXTENSIONS = (
    "cogs.tables",
    "cogs.nimmt",
    "cogs.garbage",
    "cogs.stats",
    "cogs.rules",
    "cogs.admin",
)


class CardBot(commands.Bot):
    """The bot: owns the store and the table manager; cogs do the talking."""

    def __init__(self, config: Config, *, sync_global: bool = False) -> None:
        intents = discord.Intents.none()
        intents.guilds = True  # channels and threads; no privileged intent is needed
        intents.guild_messages = True  # to notice a deleted table message (content stays hidden)
        super().__init__(command_prefix=commands.when_mentioned, intents=intents, help_command=None)
        self.config = config
        self.sync_global = sync_global
        self.store: Any = None
        self.tables: Any = None
        self._redraw_task: asyncio.Task[None] | None = None

    async def setup_hook(self) -> None:
        from app.store import Store
        from app.tables import TableManager
        from core import garbage, nimmt

        self.config.database.parent.mkdir(parents=True, exist_ok=True)
        self.store = await Store.open(str(self.config.database))  # checkpoints WAL itself
        from app.computers import Computers

        games = {"nimmt": nimmt.Nimmt, "garbage": garbage.Garbage}
        legacy = {"nimmt": nimmt.greedy_player, "garbage": garbage.greedy_player}
        self.tables = TableManager(
            self.store,
            games,
            legacy,
            computer_delay=self.config.computer_delay,
            time_scale=self.config.time_scale,
            seed=self.config.table_seed,
            players=Computers(games, budget=self.config.ai_budget, fallback=legacy),
        )
        try:
            from app.translator import CatalogueTranslator

            await self.tree.set_translator(CatalogueTranslator())
        except ImportError:
            log.warning("no command translator available")
        for extension in INITIAL_EXTENSIONS:
            try:
                await self.load_extension(extension)
            except Exception:
                log.exception("extension %s failed to load", extension)
        restored = await self.tables.restore()
        log.info("restored %d table(s)", len(restored))
        self.tables.start_timers()
        if restored:  # drawn once connected: opening a missing thread needs the server cached
            self._redraw_task = asyncio.get_running_loop().create_task(self._redraw_restored(restored))
        if self.config.dev_guild:
            guild = discord.Object(self.config.dev_guild)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d command(s) to the development server", len(synced))
        if self.sync_global:
            synced = await self.tree.sync()
            log.info("synced %d command(s) globally", len(synced))

    async def _redraw_restored(self, restored: list[Any]) -> None:
        await self.wait_until_ready()
        tables_cog = self.get_cog("Tables")
        for table in restored:  # the last move before a stop may not have been drawn yet
            if table.status == "finished":  # the game ended, its end was not shown yet
                tables_cog.on_table_change(table, table.ending)
                continue
            # No thread yet: the Start was never shown, so the first ping was not sent either.
            tables_cog.redraw(table, repost=False, ping=not table.thread_id)

    async def close(self) -> None:
        if self.tables is not None:
            await self.tables.shutdown()
        tables_cog = self.get_cog("Tables")
        if tables_cog is not None:
            await tables_cog.stop_presenting()
        await super().close()
        if self.store is not None:
            await self.store.close()

    async def on_ready(self) -> None:
        log.info("ready as %s in %d server(s)", self.user, len(self.guilds))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sync-global", action="store_true",
                        help="publish the slash commands to every server, then keep running")
    args = parser.parse_args(argv)
    config = Config.from_env()
    if not config.token:
        print("DISCORD_TOKEN is not set: put DISCORD_TOKEN=<your bot token> in the environment "
              "or in a .env file next to bot.py.", file=sys.stderr)
        return 2
    level = getattr(logging, config.log_level, logging.INFO)
    discord.utils.setup_logging(level=level)
    bot = CardBot(config, sync_global=args.sync_global)
    try:
        asyncio.run(_run(bot, config.token))
    except KeyboardInterrupt:
        pass
    except discord.LoginFailure:
        log.error("Discord refused the token in DISCORD_TOKEN (login failed)")
        return 1
    return 0


async def _run(bot: CardBot, token: str) -> None:
    import signal

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    async with bot:
        runner = asyncio.create_task(bot.start(token))
        freezer = asyncio.create_task(_freeze_when_ready(bot))
        waiter = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if runner in done:
            runner.result()
        await bot.close()
        if runner not in done:
            runner.cancel()
        freezer.cancel()


async def _freeze_when_ready(bot: CardBot) -> None:
    """Once started, everything loaded lives as long as the process: keep it
    out of the garbage collector's full passes, which otherwise pause the
    event loop for a millisecond or two (measured by bench/store.py)."""
    await bot.wait_until_ready()
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
