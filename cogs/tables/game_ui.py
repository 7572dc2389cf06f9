"""What a game cog plugs into the shared table machinery.

Its clicks do not come through here: a game's cog declares its own typed
items (:class:`~cogs.tables.router.TableButton` / ``TableSelect``
subclasses); :class:`GameCog` registers them and the game's UI.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from enum import IntEnum
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


#: the live table's picture, as its message attaches it
TABLE_PICTURE = "table.png"
#: what Discord lets a Components V2 message hold: characters of text display in all
LAYOUT_TEXT = 4000
NOTE_TEXT = 1024  # at most, a note's text (the last moves, who watches)
ROW_WIDTH = 5  # buttons in an action row; a select fills one


class Part(IntEnum):
    """The ``id`` of each text of the live table's layout (Discord keeps a component's ``id``
    and says it is there to find non-interactive components by): a reader finds the
    summary or a note without knowing the layout's order. Notes take ``NOTES + i``."""

    HEADING = 1
    PICTURE = 2
    SUMMARY = 3
    FOOTER = 4
    NOTES = 10


@dataclass
class TableMessage:
    """What the public live table shows, as pieces: a game supplies its title, its
    colour, the table as text (``summary``: round, rows, players and scores), its
    picture and its controls (``view``: rows as a View lays them out); the table
    machinery adds the whose-turn line (``heading``: the ping), notes (the last
    moves, who watches) and the footer's small print; :meth:`layout` puts them in a
    Components V2 message."""

    title: str
    summary: str
    colour: discord.Colour
    image: bytes | None
    view: discord.ui.View | None
    heading: str = ""
    notes: list[tuple[str, str]] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)

    def note(self, title: str, text: str) -> None:
        """A titled block of text under the summary (its end kept when it is long)."""
        self.notes.append((title, text[-NOTE_TEXT:]))

    def layout(self, with_picture: bool) -> discord.ui.LayoutView:
        """The message: one container in the game's colour holding the title and the
        whose-turn line, the picture (``attachment://``, sent along), the summary and the
        notes as real text, the controls in action rows, then the small print. Without
        the picture (no Attach Files) the text carries the game alone. The texts share
        Discord's 4,000 characters: the summary gives way first."""
        heading = f"### {self.title}" + (f"\n{self.heading}" if self.heading else "")
        notes = [f"**{title}**\n{text}" for title, text in self.notes]
        footer = "\n".join(f"-# {line}" for line in self.footer)
        room = LAYOUT_TEXT - len(heading) - sum(map(len, notes)) - len(footer)
        summary = self.summary if len(self.summary) <= room else self.summary[:max(room - 1, 0)] + "…"
        box: discord.ui.Container[Any] = discord.ui.Container(accent_colour=self.colour)
        box.add_item(discord.ui.TextDisplay(heading, id=Part.HEADING))
        if with_picture and self.image is not None:
            box.add_item(discord.ui.MediaGallery(
                discord.MediaGalleryItem(f"attachment://{TABLE_PICTURE}", description=self.title[:1024]),
                id=Part.PICTURE))
        if summary:
            box.add_item(discord.ui.TextDisplay(summary, id=Part.SUMMARY))
        for i, note in enumerate(notes):
            box.add_item(discord.ui.TextDisplay(note, id=Part.NOTES + i))
        for row in action_rows(self.view):
            box.add_item(row)
        if footer:
            box.add_item(discord.ui.TextDisplay(footer, id=Part.FOOTER))
        view = discord.ui.LayoutView(timeout=None)
        view.add_item(box)
        return view


def action_rows(view: discord.ui.View | None) -> list[discord.ui.ActionRow[Any]]:
    """A View's items as the action rows it would show: an item asking for a row goes
    there, the others fill the first row with room, as discord.py lays out a View."""
    rows: dict[int, list[discord.ui.Item[Any]]] = {}
    loose: list[discord.ui.Item[Any]] = []
    for item in view.children if view is not None else ():
        (rows.setdefault(item.row, []) if item.row is not None else loose).append(item)
    width = {n: sum(item.width for item in items) for n, items in rows.items()}
    for item in loose:
        n = next(n for n in range(len(rows) + len(loose) + 1) if width.get(n, 0) + item.width <= ROW_WIDTH)
        rows.setdefault(n, []).append(item)
        width[n] = width.get(n, 0) + item.width
    return [discord.ui.ActionRow(*rows[n]) for n in sorted(rows)]


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

    def tokens(self, table: Table) -> list[tuple[discord.Webhook, float]]:
        """The living interaction tokens of the table's private panels in its thread, with
        the time.monotonic() each is too old from (:meth:`HandPanels.tokens`)."""
        panels = getattr(self, "panels", None)
        return panels.tokens(table) if isinstance(panels, HandPanels) else []

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
