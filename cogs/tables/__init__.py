"""The table machinery shared by every game: lobby, thread, table message,
narration, pings, errors.  Thin: each click becomes one call on the
:class:`~app.tables.TableManager`; each game cog adds a :class:`GameUI` that
turns the engine's views and events into messages.

Every component on a table message is a typed ``DynamicItem`` (a
:class:`~cogs.tables.router.TableButton` or ``TableSelect`` subclass) with a
template of its own, ``<kind>:<table>[:<version>]{:<field>}``: the lobby's in
:mod:`.lobby`, each game's in its own cog, which registers them.  No custom_id
ever holds a card from a hand; the version makes old buttons harmless.  Ids
of the version before (``table:``/``tsel:``) still route (:mod:`.router`).

The machinery is three objects, each built with what it uses: a
:class:`~.lobby.Lobby` (lobby messages and commands), a
:class:`~.presenter.Presenter` (threads, narration, pings, the table
message; it draws lobby messages through the lobby) and a
:class:`~.router.Router` (every click on a table's items, and the error
answers), owned by :class:`TablesCog`, which only declares the commands and
listeners.  :mod:`.panel` is every game's private hand panel
(:class:`~.panel.HandPanels`, which a game's UI gives its panel's text,
controls and picture); :mod:`.game_ui` is what a game cog provides;
:mod:`cogs.common.ui` holds the answer helpers every cog uses.
"""
from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app.tables.manager import TableManager
from cogs.common.parts import parts
from cogs.tables.game_ui import GameUI, TableExtra
from cogs.tables.lobby import ITEMS as LOBBY_ITEMS, Lobby
from cogs.tables.presenter import Presenter
from cogs.tables.router import LegacyButton, LegacySelect, Router

log = logging.getLogger(__name__)


class TablesCog(commands.Cog, name="Tables"):
    """Lobbies and tables of every game: owns the lobby, presenter and router."""

    table_group = app_commands.Group(
        name=_("table", key="commands.table.name"),
        description=_("The table of this channel or thread", key="commands.table.description"),
        guild_only=True)

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.manager: TableManager = bot.tables
        #: the games' UIs by key (each game's cog registers its own when it loads)
        self.uis: dict[str, GameUI] = {}
        #: other cogs' additions to what a table shows (e.g. cogs.after: the shuffle
        #: commitment, the seed at the end, Replay)
        self.extras: list[TableExtra] = []
        self.lobby = Lobby(bot, self.manager, self.uis)
        self.presenter = Presenter(bot, self.manager, self.lobby, self.uis, self.extras)
        self.router = Router(self.manager, self.lobby, self.presenter)
        self.manager.listener = self.presenter.on_table_change

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(*LOBBY_ITEMS, LegacyButton, LegacySelect)
        parts(self.bot).loaded_tables = self

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(*LOBBY_ITEMS, LegacyButton, LegacySelect)
        if parts(self.bot).loaded_tables is self:
            parts(self.bot).loaded_tables = None
        await self.presenter.stop_presenting()

    def register(self, ui: GameUI) -> None:
        self.uis[ui.key] = ui

    # ------------------------------------------------------------ commands
    @table_group.command(name=_("stop", key="commands.table_stop.name"),
                         description=_("End the lobby or game of this channel or thread (host or moderators)",
                                       key="commands.table_stop.description"))
    async def table_stop(self, interaction: discord.Interaction) -> None:
        await self.lobby.stop_command(interaction)

    @table_group.command(name=_("list", key="commands.table_list.name"),
                         description=_("This server's tables: lobbies with free seats, and games being played",
                                       key="commands.table_list.description"))
    async def table_list(self, interaction: discord.Interaction) -> None:
        await self.lobby.list_command(interaction)

    @app_commands.command(name=_("join", key="commands.join.name"),
                          description=_("Take a seat at the table of this channel or thread",
                                        key="commands.join.description"))
    @app_commands.guild_only()
    async def join_command(self, interaction: discord.Interaction) -> None:
        await self.lobby.command(interaction, "join")

    @app_commands.command(name=_("start", key="commands.start.name"),
                          description=_("Start the table of this channel or thread (host)",
                                        key="commands.start.description"))
    @app_commands.guild_only()
    async def start_command(self, interaction: discord.Interaction) -> None:
        await self.lobby.command(interaction, "start")

    @app_commands.command(name=_("leave", key="commands.leave.name"),
                          description=_("Leave this channel's table; in a game a computer plays your seat until "
                                        "you're back", key="commands.leave.description"))
    @app_commands.guild_only()
    async def leave_command(self, interaction: discord.Interaction) -> None:
        await self.lobby.command(interaction, "leave")

    # ------------------------------------------------------------ listeners
    @commands.Cog.listener()
    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        await self.presenter.thread_deleted(payload.thread_id)

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        await self.presenter.message_deleted(payload.message_id)


async def setup(bot: Any) -> None:
    await bot.add_cog(TablesCog(bot))
