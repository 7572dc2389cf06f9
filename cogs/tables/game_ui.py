"""What a game cog plugs into the shared table machinery.

Its clicks do not come through here: a game's cog declares its own typed
items (:class:`~cogs.tables.router.TableButton` / ``TableSelect``
subclasses); :class:`GameCog` registers them and the game's UI.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Protocol

import discord
from discord.ext import commands

from app.i18n.catalogue import t
from app.tables.manager import Table
from app.text import plain
from cogs.common.parts import parts
from core.protocol import Event
from core.spec import GameSpec


def seat_label(table: Table, seat: int, lang: str, away: bool = True, picture: bool = False) -> str:
    """A seat as the table's text shows it: a computer with its level, a seat
    a computer holds while its owner is away (``away``: the game summaries;
    narration names the person only), else the name a player chose (escaped,
    never a ping).  ``picture``: the short form the table's picture draws, as
    drawn text (no Markdown to escape)."""
    s = table.seats[seat]
    name = s.name if picture else plain(s.name)
    if s.computer:
        return t(lang, "ai.picture_seat" if picture else "ai.computer_seat", name=name,
                 level=t(lang, f"ai.level_{s.level}"))
    if s.away and away:
        return t(lang, "table.picture_away" if picture else "table.seat_away", name=name)
    return name


def picture_names(table: Table, lang: str) -> list[str]:
    """Every seat as the table's picture names it (:func:`seat_label`'s short form)."""
    return [seat_label(table, seat, lang, picture=True) for seat in range(len(table.seats))]


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

    def progress(self, table: Table, lang: str) -> tuple[str, list[int]]: ...

    def replay_seat(self, seen: dict[str, Any], table: dict[str, Any], revealed: dict[str, Any] | None,
                    seat: int, name: str, lang: str) -> list[str]: ...


class TableExtra(Protocol):
    """Another cog's additions to what every table shows (e.g. cogs.after: the
    shuffle commitment, the seed at the end, Replay)."""

    def table_message(self, table: Table, message: TableMessage, lang: str) -> None: ...

    def narrate(self, table: Table, events: list[Event], lang: str) -> list[str]: ...

    async def standings(self, table: Table, embed: discord.Embed, view: discord.ui.View) -> None: ...


class BaseUI:
    """What a game's UI does unless it says otherwise: no lobby lines of its
    own, and a seat's cards in a replay shown as its ``hand``."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot

    def lobby_lines(self, table: Table, lang: str) -> list[str]:
        return []

    def replay_seat(self, seen: dict[str, Any], table: dict[str, Any], revealed: dict[str, Any] | None,
                    seat: int, name: str, lang: str) -> list[str]:
        """The lines a replay shows for ``seat`` (``name``, escaped): ``seen``
        is its own view, ``table`` the table's, ``revealed`` what no view
        shows (the engine's ``revealed()``, if any), all at the replayed step."""
        if "hand" not in seen:
            return []
        cards = ", ".join(str(c) for c in seen["hand"]) or "-"
        return [t(lang, "after.replay_hand", name=name, cards=cards)]


class GameCog(commands.Cog):
    """A game's cog: its :class:`GameUI` (``ui_class``) plugged into the
    table cog, and its typed items (``items``) registered while it is loaded.
    ``spec`` is the game's :class:`~core.spec.GameSpec`, ``pictures`` the
    module of its pictures (its ``warm_up`` runs in the drawing processes).
    A game's cog adds its ``new`` command."""

    spec: ClassVar[GameSpec]
    pictures: ClassVar[ModuleType | None] = None
    ui_class: ClassVar[Any]
    items: ClassVar[tuple[type[discord.ui.DynamicItem[Any]], ...]] = ()

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.ui = self.ui_class(bot)

    async def cog_load(self) -> None:
        parts(self.bot).tables.register(self.ui)
        self.bot.add_dynamic_items(*self.items)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(*self.items)
