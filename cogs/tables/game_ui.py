"""What a game cog plugs into the shared table machinery.

Its clicks do not come through here: a game's cog declares its own typed
items (:class:`~cogs.tables.router.TableButton` / ``TableSelect``
subclasses); :class:`GameCog` registers them and the game's UI.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, ClassVar, Mapping, Optional, Protocol

import discord
from discord import app_commands
from discord.ext import commands

from app.i18n.catalogue import t
from app.tables.manager import Table
from app.text import plain
from cogs.common.parts import parts
from cogs.common.translator import command_str
from cogs.tables.panel import HandPanels
from core import registry
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


def variant_choices(*specs: GameSpec) -> list[app_commands.Choice[str]]:
    """The ``variant:`` choices of a command: the variants these games declare."""
    seen: dict[str, app_commands.Choice[str]] = {}
    for spec in specs:
        for variant in spec.variants:
            seen.setdefault(variant.name, app_commands.Choice(
                name=command_str(f"commands.choice_{variant.name}.name"), value=variant.name))
    return list(seen.values())


def variant_line(game: str, options: Mapping[str, Any], lang: str) -> str | None:
    """What a table's variant is, in a line (None: the standard game)."""
    variant = registry.spec(game).variant(options.get("variant"))
    if variant is None:
        return None
    return t(lang, "table.variant_line", variant=t(lang, variant.label_key), info=t(lang, variant.info_key))


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
    own, a seat's cards in a replay shown as its ``hand``, and its private
    panels (``panels``, if it has any) following their players down the thread."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot

    def follow(self, table: Table, users: list[int]) -> None:
        """The live table just pinged ``users`` (the presenter says so): their open private
        panels come afresh below the ping (:meth:`HandPanels.follow`)."""
        panels = getattr(self, "panels", None)
        if isinstance(panels, HandPanels):
            panels.follow(table, users)

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


#: ``turn_time`` of ``/<game> new``: seconds per turn before the computer plays (0: no timer)
TURN_TIME = app_commands.Range[int, 0, 3600]
DEFAULT_TURN_TIME = 120


def new_command(spec: GameSpec) -> app_commands.Group:
    """``/<game> new``, built from the game's spec: ``seats`` in the engine's
    limits (its default the spec's), one option per :class:`~core.spec.OptionSpec`
    in its range (left out: the game's default), and ``turn_time``.  Its
    texts are catalogue keys by convention: ``commands.<key>.name`` and
    ``.description`` (the group), ``commands.<key>_new.*`` (the command),
    ``commands.opt_<key>_seats.description``, ``commands.opt_<option>.name``
    and ``.description``.  Its callback is a method of the game's cog
    (:meth:`GameCog.open_table`).
    """
    group = app_commands.Group(name=command_str(f"commands.{spec.key}.name"),
                               description=command_str(f"commands.{spec.key}.description"), guild_only=True)

    async def new(self: GameCog, interaction: discord.Interaction, **chosen: Any) -> None:
        await self.open_table(interaction, **chosen)

    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD), P("interaction", P.POSITIONAL_OR_KEYWORD, annotation=discord.Interaction),
              P("seats", P.POSITIONAL_OR_KEYWORD, default=spec.default_seats,
                annotation=app_commands.Range[int, spec.min_seats, spec.max_seats])]
    names = {"seats": command_str("commands.opt_seats.name")}
    texts = {"seats": command_str(f"commands.opt_{spec.key}_seats.description")}
    for option in spec.options:
        params.append(P(option.name, P.POSITIONAL_OR_KEYWORD, default=None,
                        annotation=Optional[app_commands.Range[int, option.minimum, option.maximum]]))
        names[option.name] = command_str(f"commands.opt_{option.name}.name")
        texts[option.name] = command_str(f"commands.opt_{option.name}.description")
    params.append(P("turn_time", P.POSITIONAL_OR_KEYWORD, default=DEFAULT_TURN_TIME, annotation=TURN_TIME))
    names["turn_time"] = command_str("commands.opt_turn_time.name")
    texts["turn_time"] = command_str("commands.opt_turn_time.description")
    if spec.variants:  # ``variant``: one of the game's declared variants (left out: the standard game)
        params.append(P("variant", P.POSITIONAL_OR_KEYWORD, default=None, annotation=Optional[str]))
        names["variant"] = command_str("commands.opt_variant.name")
        texts["variant"] = command_str("commands.opt_variant.description")
    setattr(new, "__signature__", inspect.Signature(params))  # what discord.py reads the options from
    new.__qualname__ = "GameCog.new"  # a method of the cog: discord.py binds it to the cog
    callback: Callable[..., Any] = app_commands.rename(**names)(app_commands.describe(**texts)(new))
    if spec.variants:
        callback = app_commands.choices(variant=variant_choices(spec))(callback)
    group.command(name=command_str(f"commands.{spec.key}_new.name"),
                  description=command_str(f"commands.{spec.key}_new.description"))(callback)
    return group


class GameCog(commands.Cog):
    """A game's cog: its :class:`GameUI` (``ui_class``) plugged into the
    table cog, and its typed items (``items``) registered while it is loaded.
    ``spec`` is the game's :class:`~core.spec.GameSpec`, ``pictures`` the
    module of its pictures (its ``warm_up`` runs in the drawing processes).
    A game's cog adds its ``new`` command (:func:`new_command`)."""

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

    def table_options(self, seats: int, options: dict[str, Any]) -> dict[str, Any]:
        """The options a new table gets from ``/<game> new``'s: an option
        capped by the seats (``at_most_seats``) is capped here."""
        for option in self.spec.options:
            value = options.get(option.name)
            if option.at_most_seats and value is not None:
                options[option.name] = min(value, seats)
        return options

    async def open_table(self, interaction: discord.Interaction, *, seats: int, turn_time: int = DEFAULT_TURN_TIME,
                         **options: Any) -> None:
        """``/<game> new`` (see :func:`new_command`): a lobby in this channel."""
        await parts(self.bot).tables.lobby.create_table(interaction, self.spec.key, seats=seats, rounds=None,
                                                        turn_time=turn_time, options=self.table_options(seats, options))
