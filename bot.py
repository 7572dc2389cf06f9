"""Card Night: a Discord bot for card games (the games are listed in core/games/__init__.py).

Run ``python bot.py`` with ``DISCORD_TOKEN`` in the environment or in a
``.env`` file beside this file.  ``python bot.py --sync-global`` publishes the
slash commands to every server once (this takes up to an hour to show);
``DEV_GUILD`` syncs them to one server instantly at every start.
"""
from __future__ import annotations

import argparse
import asyncio
import contextvars
import logging
import sys
from typing import TYPE_CHECKING, Any, Callable

import discord
from discord.ext import commands

from app.budget import RequestBudget
from app.config import Config
from app.store import Store, StoreUnavailable
from cogs.common import adapter
from cogs.games import installed
from cogs.common.parts import Parts
from core.registry import GAMES

if TYPE_CHECKING:
    from app.nights.host import NightHost
    from app.tables.manager import TableManager

log = logging.getLogger("cardbot")

#: requests the bot may make at once before its pace (``Config.requests_per_second``):
#: 10 + 38 a second stays under Discord's global 50/s, so no 429 stops the bot's
#: answers to clicks, and a table's start (thread, lobby, narration, ping, picture) goes at once
REQUEST_BURST = 10
#: seconds a stop (SIGTERM, a deploy) waits at most for the answers and edits of the
#: interactions it acknowledged, then for the table messages and narration they caused
DRAIN_SECONDS = 10.0
#: set while discord.py dispatches an interaction: the tasks it starts (its handlers) carry it
_ANSWERING: contextvars.ContextVar[bool] = contextvars.ContextVar("answering", default=False)
#: seconds between WAL checkpoints in the process running shard 0 (or the only process)
CHECKPOINT_INTERVAL = 30.0
#: ... and in the other processes of a shard cluster (a backstop)
CHECKPOINT_BACKSTOP = 300.0

INITIAL_EXTENSIONS = (
    "cogs.tables",
    *(cog.__module__ for cog in installed.cogs()),  # each game's cog (its module is the extension)
    "cogs.stats",
    "cogs.after",
    "cogs.rules",
    "cogs.admin",
    "cogs.guard",
    "cogs.night",
    "cogs.seasons",
    "cogs.help",
)


async def open_database(config: Config) -> Store:
    """Open (and migrate) the database: PostgreSQL when ``DATABASE_URL`` is
    set, else the SQLite file, which checkpoints its WAL itself;
    :class:`StoreUnavailable` when it cannot be written."""
    from app.store import open_store

    if config.database_url:
        return await open_store(config.database_url)
    try:
        config.database.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreUnavailable(str(config.database), str(error)) from error
    # WAL checkpoints of a shared file are the job of one process (the one running shard 0):
    # SQLite runs one checkpoint at a time, more would only compete for it. The other
    # processes check rarely, so the WAL cannot grow without end while that one is down.
    interval = CHECKPOINT_INTERVAL if config.runs_shard_zero else CHECKPOINT_BACKSTOP
    return await open_store(str(config.database), checkpoint_interval=interval)


class CardBot(commands.Bot):
    """The bot: owns the store and the table manager; cogs do the talking."""

    def __init__(self, config: Config, *, sync_global: bool = False, **options: Any) -> None:
        intents = discord.Intents.none()
        intents.guilds = True  # channels and threads; no privileged intent is needed
        intents.guild_messages = True  # to notice a deleted table message (content stays hidden)
        intents.voice_states = True  # a night's "Seat my voice channel" (not privileged)
        # who marks a night's calendar event "Interested" gets its reminder (not privileged)
        intents.guild_scheduled_events = True
        # Nothing pings unless a message says whom (each table message names its seat).
        # No message cache: nothing reads it (a deleted table message is noticed from the raw
        # event), and 1,000 cached messages with their embeds are ~10 KB per table at 500 tables.
        super().__init__(command_prefix=commands.when_mentioned, intents=intents, help_command=None,
                         allowed_mentions=discord.AllowedMentions.none(), max_messages=None, **options)
        self.config = config
        self.sync_global = sync_global
        self._store: Store | None = None  # set by the launcher, else opened in setup_hook
        self._tables: TableManager | None = None  # made in setup_hook
        self._nights: NightHost | None = None  # made in setup_hook
        #: the loaded cogs that other cogs and items use, typed (each sets itself when it loads)
        self.parts = Parts()
        #: more sections of ``/table list``, each (guild id, language, can the user see
        #: channel id?) -> (title, lines): the game nights' cog adds its nights
        self.listings: list[Callable[[int, str, Callable[[int], bool]], tuple[str, list[str]]]] = []
        self._syncing: asyncio.Task[None] | None = None
        self.stopping = False  # a stop began: no new interaction is taken
        #: the tasks handling interactions (and what they started): a stop lets them finish
        self.answering: set[asyncio.Future[Any]] = set()
        self._untrack: Callable[[], None] | None = None  # puts the event loop's task factory back
        self.budget = RequestBudget(config.process_requests_per_second, REQUEST_BURST)
        adapter.check_version()
        adapter.pace_requests(self, self.budget.wrap)  # every request within the budget (app/budget.py)
        adapter.trim_ratelimits(self.http)  # idle rate-limit buckets go, scanned every few seconds
        adapter.skip_own_messages(adapter.connection_of(self))  # the bot's own messages are not parsed back
        adapter.break_cycles()  # discord.py's cycles of every move (pictures, views, answers) are broken
        adapter.answers_unparsed()  # Discord's answers the bot needs at most the id of are not parsed
        adapter.whole_forms()  # a message with files goes out in one write, not one per part
        adapter.raw_event_users(adapter.connection_of(self))

    # The bot's services (the store, the tables, the game nights): there from setup_hook on.
    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the store is opened in setup_hook")
        return self._store

    @store.setter
    def store(self, store: Store) -> None:
        self._store = store

    @property
    def tables(self) -> TableManager:
        if self._tables is None:
            raise RuntimeError("the tables are made in setup_hook")
        return self._tables

    @property
    def nights(self) -> NightHost:
        if self._nights is None:
            raise RuntimeError("the game nights are made in setup_hook")
        return self._nights

    async def setup_hook(self) -> None:
        from app.nights.host import NightHost
        from app.render import pool as render_pool
        from app.tables.computers import Computers
        from app.tables.manager import TableManager

        # the drawing processes warm up while the tables are restored
        render_pool.start_pool(tuple(warm for cog in installed.cogs() if (warm := getattr(cog.pictures, "warm_up", None))))
        if self._store is None:  # the launcher opens it before connecting (open_database)
            self._store = await open_database(self.config)
        games = {spec.key: spec.engine() for spec in GAMES}
        legacy = {spec.key: spec.computer() for spec in GAMES}
        self._tables = TableManager(
            self.store,
            games,
            legacy,
            computer_delay=self.config.computer_delay,
            time_scale=self.config.time_scale,
            seed=self.config.table_seed,
            seeds=self.config.table_seeds,
            players=Computers(games, budget=self.config.ai_budget, fallback=legacy),
        )
        self._nights = NightHost(self.store, self.tables)
        # Each process resumes only the servers of its shards (Discord sends it no others).
        await self.nights.restore(owns=self.config.owns_guild)  # before any table can finish: a night hears of it
        try:
            from cogs.common.translator import CatalogueTranslator

            await self.tree.set_translator(CatalogueTranslator())
        except ImportError:
            log.warning("no command translator available")
        for extension in INITIAL_EXTENSIONS:
            try:
                await self.load_extension(extension)
            except Exception:
                log.exception("extension %s failed to load", extension)
        tables_cog = self.parts.loaded_tables
        # The tables are restored while the bot connects, the most recently active first;
        # each one, once restored, tells what was saved but not told yet, in order, before
        # its timer runs (opening a missing thread waits until connected: it needs the
        # server cached). A click on a table not restored yet restores that one first;
        # any other interaction waits until every table is back (gate_interactions).
        self.tables.restore_in_background(
            owns=self.config.owns_guild, resume=tables_cog.presenter.resume if tables_cog is not None else None)
        track_answers(self)
        gate_interactions(self)
        self.tables.start_timers()  # the idle sweep too: each process closes its own tables
        if not self.config.runs_shard_zero:
            log.info("shards %s: commands are synced by the process running shard 0", self.config.shard_ids)
        elif self.config.dev_guild or self.sync_global:
            self._syncing = asyncio.get_running_loop().create_task(self._sync_commands())  # while connecting

    async def _sync_commands(self) -> None:
        try:
            if self.config.dev_guild:
                guild = discord.Object(self.config.dev_guild)
                self.tree.copy_global_to(guild=guild)
                synced = await self.tree.sync(guild=guild)
                log.info("synced %d command(s) to the development server", len(synced))
            if self.sync_global:
                synced = await self.tree.sync()
                log.info("synced %d command(s) globally", len(synced))
        except Exception:
            log.exception("the commands could not be synced")

    async def close(self) -> None:
        """Stop gracefully: take no new interaction (Discord tells its clicker the bot did
        not respond; nothing changed), let the acknowledged ones finish their answers and
        edits, and what they made the tables show, for :data:`DRAIN_SECONDS` at most; then
        close the connections.  Whatever was saved and not shown is shown after a start."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DRAIN_SECONDS
        self.stopping = True
        answering = [task for task in self.answering if task is not asyncio.current_task()]
        if answering:
            _, late = await asyncio.wait(answering, timeout=DRAIN_SECONDS)
            if late:
                log.warning("stopping: %d interaction(s) still being answered", len(late))
        if self._untrack is not None:
            self._untrack()
            self._untrack = None
        if self._tables is not None:
            await self._tables.shutdown()
        if self._nights is not None:
            await self._nights.close()
        tables_cog = self.parts.loaded_tables
        if tables_cog is not None:
            await tables_cog.presenter.stop_presenting(drain=max(0.0, deadline - loop.time()))
        await super().close()
        from app.render import pool as render_pool

        render_pool.stop_pool()
        if self._store is not None:
            await self._store.close()

    async def on_ready(self) -> None:
        log.info("ready as %s in %d server(s)", self.user, len(self.guilds))


def track_answers(bot: CardBot) -> None:
    """Every task started while discord.py dispatches an interaction (its handlers, and
    the tasks those start: a panel redrawn after the click was acknowledged...) is kept
    in ``bot.answering`` until it ends, so that a stop can let them finish; once a stop
    began, a new interaction is left unanswered (its clicker clicks again after the start)."""
    loop = asyncio.get_running_loop()
    factory = loop.get_task_factory()

    def wrapper(parse: Callable[[Any], None]) -> Callable[[Any], None]:
        def tracked(data: Any) -> None:
            if bot.stopping:
                return
            token = _ANSWERING.set(True)
            try:
                parse(data)
            finally:
                _ANSWERING.reset(token)

        return tracked

    def make_task(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
        if factory is not None:
            task = factory(loop, coro, **kwargs)
        else:
            task = asyncio.Task(coro, loop=loop, **kwargs)
        context = kwargs.get("context")
        if context.get(_ANSWERING) if context is not None else _ANSWERING.get():
            bot.answering.add(task)
            task.add_done_callback(bot.answering.discard)
        return task

    def untrack() -> None:
        if loop.get_task_factory() is make_task:
            loop.set_task_factory(factory)

    adapter.wrap_parser(bot, "INTERACTION_CREATE", wrapper)
    loop.set_task_factory(make_task)
    bot._untrack = untrack


def gate_interactions(bot: CardBot) -> None:
    """While the tables are being restored at a start: a click on a table waits only
    for that table (restored at once if its turn has not come), any other interaction
    until every table is back; then interactions go straight through again."""
    from cogs.tables.router import table_of

    manager = bot.tables
    waiting: set[asyncio.Task[None]] = set()

    def gate(parse: Callable[[Any], None]) -> Callable[[Any], None]:
        async def later(data: Any, table_id: int | None) -> None:
            if table_id is not None:
                await manager.restored(table_id)
            else:
                await manager.loaded()
            parse(data)

        def gated(data: Any) -> None:
            if manager.is_loaded:
                ungate()  # every table is back: no more gate
                parse(data)
                return
            table_id = None
            if data.get("type") == 3:  # a component
                table_id = table_of(str((data.get("data") or {}).get("custom_id", "")))
                if table_id is not None and manager.get(table_id) is not None:
                    parse(data)  # restored already
                    return
            task = asyncio.get_running_loop().create_task(later(data, table_id))
            waiting.add(task)
            task.add_done_callback(waiting.discard)

        return gated

    ungate = adapter.wrap_parser(bot, "INTERACTION_CREATE", gate)


class ShardedCardBot(CardBot, commands.AutoShardedBot):
    """The bot running some shards of a cluster (``SHARD_COUNT``/``SHARD_IDS``)."""

    def __init__(self, config: Config, *, sync_global: bool = False) -> None:
        super().__init__(config, sync_global=sync_global, shard_count=config.shard_count,
                         shard_ids=list(config.shard_ids) if config.shard_ids is not None else None)
        self._concurrency: int | None = None
        self._identify_locks: dict[int, asyncio.Lock] = {}
        self._identified: dict[int, float] = {}

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Discord lets ``max_concurrency`` shards IDENTIFY per 5 s (bucket
        ``shard_id % max_concurrency``); discord.py's default waits 5 s before
        every shard but the first."""
        if self._concurrency is None:
            try:
                _, _, limit = await self.http.get_bot_gateway()
                self._concurrency = max(1, int(limit.get("max_concurrency") or 1))
            except Exception:
                self._concurrency = 1
        key = (shard_id or 0) % self._concurrency
        loop = asyncio.get_running_loop()
        async with self._identify_locks.setdefault(key, asyncio.Lock()):
            last = self._identified.get(key)
            if last is not None and loop.time() - last < 5.0:
                await asyncio.sleep(5.0 - (loop.time() - last))
            self._identified[key] = loop.time()


def make_bot(config: Config, *, sync_global: bool = False) -> CardBot:
    """An unsharded bot, or one running the shards ``config`` names."""
    cls = ShardedCardBot if config.sharded else CardBot
    return cls(config, sync_global=sync_global)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sync-global", action="store_true",
                        help="publish the slash commands to every server, then keep running")
    parser.add_argument("--copy-db", metavar="POSTGRESQL_URL",
                        help="copy the SQLite database (DATABASE_PATH) into this empty PostgreSQL database, then exit")
    args = parser.parse_args(argv)
    try:
        config = Config.from_env()
    except ValueError as error:
        print(f"Bad setting: {error}", file=sys.stderr)
        return 2
    if args.copy_db is not None:
        return copy_db(config, args.copy_db)
    if not config.token:
        print("DISCORD_TOKEN is not set: put DISCORD_TOKEN=<your bot token> in the environment "
              "or in a .env file next to bot.py.", file=sys.stderr)
        return 2
    level = getattr(logging, config.log_level, logging.INFO)
    discord.utils.setup_logging(level=level)
    try:
        asyncio.run(_run(config, sync_global=args.sync_global))
    except KeyboardInterrupt:
        pass
    except discord.LoginFailure:
        log.error("Discord refused the token in DISCORD_TOKEN (login failed)")
        return 1
    except StoreUnavailable as error:
        _say_unavailable(error, url=bool(config.database_url))
        return 1
    return 0


def _say_unavailable(error: StoreUnavailable, *, url: bool) -> None:
    if url:
        print(f"Cannot use the PostgreSQL database {error.path} ({error.reason}). Check that the server "
              "runs and is reachable, that the user, password and database in DATABASE_URL are right, and "
              "that the user may create tables there.", file=sys.stderr)
    else:
        print(f"Cannot use the database file {error.path} ({error.reason}). Check that the file and its "
              "folder exist and are writable by the user running the bot, that the disk is not full, and "
              "that no other program holds the file locked (DATABASE_PATH sets another file).", file=sys.stderr)


def copy_db(config: Config, url: str) -> int:
    """``--copy-db``: the SQLite file into an empty PostgreSQL database.
    0 when copied, 1 when a database cannot be used, 3 when the target is not empty."""
    from app.store import is_database_url
    from app.store.postgres import TargetNotEmpty, copy_sqlite, safe_url

    if not is_database_url(url):
        print(f"--copy-db needs a postgresql:// URL, not {url!r}", file=sys.stderr)
        return 2
    if not config.database.is_file():
        print(f"There is no SQLite database at {config.database} to copy (DATABASE_PATH sets another file).",
              file=sys.stderr)
        return 1
    try:
        counts = asyncio.run(copy_sqlite(str(config.database), url))
    except TargetNotEmpty as error:
        print(f"Refusing to copy: {error}. --copy-db only fills an empty database; create a new one "
              "(createdb) or empty this one first.", file=sys.stderr)
        return 3
    except StoreUnavailable as error:
        _say_unavailable(error, url=error.path == safe_url(url))
        return 1
    copied = ", ".join(f"{n} {name}" for name, n in counts.items())
    print(f"Copied {config.database} into {safe_url(url)}: {copied}. Set DATABASE_URL={safe_url(url)} "
          "(with its password) and start the bot.")
    return 0


async def _run(config: Config, *, sync_global: bool) -> None:
    import signal

    store = await open_database(config)  # a database that cannot be written stops here, before Discord
    bot = make_bot(config, sync_global=sync_global)
    bot.store = store
    token = config.token
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    assert token, "main() checked DISCORD_TOKEN"
    async with bot:
        runner = asyncio.create_task(bot.start(token))
        freezer = asyncio.create_task(_keep_frozen())
        waiter = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if runner in done:
            runner.result()
        await bot.close()
        if runner not in done:
            runner.cancel()
        freezer.cancel()


async def _keep_frozen() -> None:
    """From the start, what is loaded lives as long as the process: keep it
    out of the cyclic collector's full passes, which otherwise pause the
    event loop (app/lean.py).  Not only once the bot is ready: discord.py
    tells it ready two seconds after the last server arrived, and the tables
    are restored and the first clicks answered before that."""
    from app import lean

    lean.freeze_loaded()
    await lean.keep_frozen()  # until the bot stops: what lives on is frozen every half second


if __name__ == "__main__":
    sys.exit(main())
