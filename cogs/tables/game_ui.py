"""What a game cog plugs into the shared table machinery.

Its clicks do not come through here: a game's cog declares its own typed
items (:class:`~cogs.tables.router.TableButton` / ``TableSelect``
subclasses) and registers them with ``bot.add_dynamic_items``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import discord

from app.tables.manager import Table
from core.protocol import Event


@dataclass
class TableMessage:
    """What a game wants the public table message to show."""

    content: str
    embed: discord.Embed
    image: bytes | None
    view: discord.ui.View | None


class GameUI(Protocol):
    """What a game cog plugs into the shared table machinery."""

    key: str  # the game's key in core.registry

    async def table_message(self, table: Table, lang: str) -> TableMessage: ...

    def narrate(self, table: Table, events: list[Event], lang: str) -> list[str]: ...

    def lobby_lines(self, table: Table, lang: str) -> list[str]: ...
