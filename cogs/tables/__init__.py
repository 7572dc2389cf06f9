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

The machinery is split by job: :mod:`.lobby`, :mod:`.presenter` and
:mod:`.router` (the custom_ids and error answers); :mod:`.game_ui` is what a
game cog provides; :mod:`cogs.common.ui` holds the answer helpers every cog uses.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from discord.ext import commands

from app.tables.manager import TableManager
from cogs.tables.game_ui import GameUI
from cogs.tables.lobby import ITEMS as LOBBY_ITEMS, Lobby
from cogs.tables.presenter import Presenter, _Presenter
from cogs.tables.router import LegacyButton, LegacySelect, Router

log = logging.getLogger(__name__)

class TablesCog(Lobby, Presenter, Router, commands.Cog, name="Tables"):
    """Lobbies and tables of every game."""


    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.uis: dict[str, GameUI] = {}
        self.presenters: dict[int, _Presenter] = {}
        self._deleting: set[int] = set()  # ids of messages the bot itself is deleting
        self._edits: set[asyncio.Task[None]] = set()
        self.manager: TableManager = bot.tables
        self.manager.listener = self.on_table_change
        #: other cogs' additions to what a table shows (e.g. cogs.after: the shuffle
        #: commitment, the seed at the end, Replay): objects with
        #: ``table_message(table, message, lang)``, ``narrate(table, events, lang)`` and
        #: ``async standings(table, embed, view)``
        self.extras: list[Any] = []

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(*LOBBY_ITEMS, LegacyButton, LegacySelect)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(*LOBBY_ITEMS, LegacyButton, LegacySelect)
        await self.stop_presenting()


    def register(self, ui: GameUI) -> None:
        self.uis[ui.key] = ui

async def setup(bot: Any) -> None:
    await bot.add_cog(TablesCog(bot))
