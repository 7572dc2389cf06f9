"""Every click on a table lands here.

A table's components are :class:`TableItem` subclasses, ``DynamicItem``\\ s
with a template of their own: ``<kind>:<table>[:<version>]{:<field>}``, e.g.
``table.join:12`` (Join at table 12), or a game's ``<game>.<op>:12:40:2:5``
(version 40, then the item's own fields: a stack, a place in the hand).  A
game's cog declares its items beside its UI and registers them
(``bot.add_dynamic_items``) in its ``cog_load``; the lobby's items live in
:mod:`cogs.tables.lobby`.  Each item declares its fields (:class:`Int` with
bounds, :class:`Word` from a fixed set) and, for a select, what its values
are; :meth:`TableItem.run` gets them typed.

Every callback goes through :meth:`Router.route` (the loaded
:class:`~cogs.tables.TablesCog`'s router, found through
:func:`cogs.common.parts.parts`): a slow save is deferred,
the fields and values are checked (anything the bot never made is
:class:`~cogs.guard.BadInput`), a closed table answers so, a versioned item
from an earlier moment calls its :meth:`TableItem.stale` (nothing acts), and
every error becomes one private answer.  The manager takes the table's one
lock for every change (and checks the version again under it).

No custom_id ever holds a card from a hand (a card is named by its place in
the hand, pinned by the version); select values are checked on every click.

Tables saved by the version before typed items carry ``table:<id>:<op>...``
and ``tsel:<id>:<op>...`` ids on their messages and open panels:
:class:`LegacyButton` and :class:`LegacySelect` map them onto today's items
(each item names its old op in ``legacy`` and reads its old argument in
:meth:`TableItem.from_legacy`).
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self, Sequence

import discord
from discord.ui.select import BaseSelect

from app.i18n.catalogue import has, t
from app.tables.manager import Table, TableError, counting_saves
from cogs.guard import INT64_MAX, BadInput, data_of, number
from core.protocol import GameError
from cogs.common.parts import parts
from cogs.common.ui import defer_when_slow, reply, user_lang

if TYPE_CHECKING:  # (they import this module: the items they draw are declared here)
    from app.tables.manager import TableManager
    from cogs.tables.lobby import Lobby
    from cogs.tables.presenter import Presenter

log = logging.getLogger(__name__)


# ------------------------------------------------------------------ fields
class Int:
    """A whole number field, ``low``..``high`` inclusive.

    >>> Int(0, 9).read("7"), Int(0, 9).pattern
    (7, '\\\\d{1,20}')
    >>> for bad in ("10", "x", "", "9" * 20):
    ...     try:
    ...         Int(0, 9).read(bad)
    ...     except BadInput:
    ...         pass
    ...     else:
    ...         print("accepted", bad)
    """

    pattern = r"\d{1,20}"  # (wider than the bounds: a forged number is answered, not ignored)

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def read(self, text: object) -> int:
        value = number(text)
        if not self.low <= value <= self.high:
            raise BadInput(text)
        return value

    def write(self, value: Any) -> str:
        if not isinstance(value, int) or not self.low <= value <= self.high:
            raise ValueError(f"{value!r} is not in {self.low}..{self.high}")
        return str(value)


class Word:
    """One of a fixed set of words.

    >>> Word("on", "off").read("on")
    'on'
    """

    pattern = r"[a-z0-9_]{1,16}"

    def __init__(self, *words: str) -> None:
        self.words = words

    def read(self, text: object) -> str:
        if text not in self.words:
            raise BadInput(text)
        return str(text)

    def write(self, value: Any) -> str:
        if value not in self.words:
            raise ValueError(f"{value!r} is not one of {self.words}")
        return str(value)


class SeatKey:
    """A seat of a lobby: ``u<user id>`` a person, ``c<number>`` the computer
    ``CPU <number>`` (read as ``("u", id)`` / ``("c", number)``).

    >>> SeatKey().read("u123"), SeatKey().read("c2"), SeatKey().write(("c", 2))
    (('u', 123), ('c', 2), 'c2')
    """

    pattern = r"[uc]\d{1,20}"

    def read(self, text: object) -> tuple[str, int]:
        if not isinstance(text, str) or not re.fullmatch(self.pattern, text) or int(text[1:]) > INT64_MAX:
            raise BadInput(text)
        return text[0], int(text[1:])

    def write(self, value: tuple[str, int]) -> str:
        kind, number = value
        if kind not in ("u", "c") or not 0 <= number <= INT64_MAX:
            raise ValueError(f"{value!r} is not a seat")
        return f"{kind}{number}"


Field = Int | Word | SeatKey

VERSION = Int(0, INT64_MAX)
TABLE = Int(0, INT64_MAX)

#: today's items by the op they had in the ids before typed items: (kind, op) -> {game: class}
_LEGACY: dict[tuple[str, str], dict[str | None, type["TableItem"]]] = {}
#: the first part of every table component's custom_id (the ids before typed items included)
_KINDS: set[str] = {"table", "tsel"}
_KIND_AND_TABLE = re.compile(r"([a-z][a-z0-9_.]*):(\d{1,20})(?::|$)")


def table_of(custom_id: str) -> int | None:
    """The table a component's custom_id belongs to, or None (not a table's component).

    >>> table_of("table:12:join"), table_of("tsel:7:seats"), table_of("night:3:join")
    (12, 7, None)
    """
    match = _KIND_AND_TABLE.match(custom_id)
    return int(match[2]) if match is not None and match[1] in _KINDS else None


@dataclass
class Click:
    """One click on a table component, handed to :meth:`TableItem.run` with
    what an item may act through: the lobby (its messages, Play again), the
    presenter (answers on the table message) and the table manager."""

    lobby: Lobby
    presenter: Presenter
    interaction: discord.Interaction
    table: Table  # (None only for an item with ``open_only = False`` whose table is gone)

    @property
    def manager(self) -> TableManager:
        return self.lobby.manager

    @property
    def lang(self) -> str:
        return user_lang(self.interaction)

    @property
    def user(self) -> discord.abc.User:
        return self.interaction.user

    @property
    def ui(self) -> Any:
        """The game UI of this table (a :class:`~cogs.tables.game_ui.GameUI`; Any: each
        game's items call their own UI's methods)."""
        return self.lobby.uis[self.table.game]


class TableItem(discord.ui.DynamicItem[discord.ui.Item[Any]], template=r"(?!)"):
    """A component of a table.  A subclass names its ``kind`` (the custom_id's
    first part, unique) in the class line and declares the rest:

    - ``game``: the registry key of the game it belongs to (None: any table);
    - ``versioned``: its id carries the table's version; a click from an
      earlier moment calls :meth:`stale` instead of :meth:`run`;
    - ``fields``: name -> :class:`Int` / :class:`Word`, in custom_id order,
      read into attributes of the same name;
    - ``open_only``: the table must be a lobby or running (False: ``run``
      gets ``click.table`` None when the table is gone, e.g. *Play again*);
    - ``legacy``: the op of this item in the ids before typed items.
    """

    kind: ClassVar[str] = ""
    component: ClassVar[str] = ""  # "button" or "select"
    game: ClassVar[str | None] = None
    versioned: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {}
    open_only: ClassVar[bool] = True
    legacy: ClassVar[str | None] = None
    #: someone watching the table may use it (else it is a player's control: a watcher is told so)
    for_watchers: ClassVar[bool] = False

    table_id: int
    ver: int | None
    values: list[Any]

    def __init_subclass__(cls, *, kind: str | None = None, **kwargs: Any) -> None:
        if kind is None:  # an abstract layer (TableButton, a game's own base)
            super().__init_subclass__(template=r"(?!)", **kwargs)
            return
        cls.kind = kind
        _KINDS.add(kind)
        clash = [name for name in cls.fields if name in ("table_id", "ver", "values") or hasattr(TableItem, name)]
        if clash:  # (a field must not hide an attribute of the item, e.g. its row)
            raise TypeError(f"{cls.__name__}: field names {clash} are taken")
        parts = [re.escape(kind), rf"(?P<table_id>{TABLE.pattern})"]
        if cls.versioned:
            parts.append(rf"(?P<ver>{VERSION.pattern})")
        parts += [rf"(?P<{name}>{field.pattern})" for name, field in cls.fields.items()]
        super().__init_subclass__(template=":".join(parts), **kwargs)
        if cls.legacy is not None:
            _LEGACY.setdefault((cls.component, cls.legacy), {})[cls.game] = cls

    def __init__(self, item: discord.ui.Item[Any]) -> None:
        super().__init__(item)
        self._match = self.template.fullmatch(self.custom_id)

    @classmethod
    def custom_id_for(cls, table_id: int, ver: int | None = None, **fields: Any) -> str:
        """>>> from cogs.tables.lobby import Join
        >>> Join.custom_id_for(12)
        'table.join:12'
        """
        parts = [cls.kind, TABLE.write(table_id)]
        if cls.versioned:
            parts.append(VERSION.write(ver))
        elif ver is not None:
            raise ValueError(f"{cls.__name__} carries no version")
        if set(fields) != set(cls.fields):
            raise ValueError(f"{cls.__name__} needs {list(cls.fields)}, got {list(fields)}")
        parts += [field.write(fields[name]) for name, field in cls.fields.items()]
        custom_id = ":".join(parts)
        assert len(custom_id) <= 100, custom_id
        return custom_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> "TableItem":
        return cls(item)  # (read in the callback, where a bad field gets its answer)

    def read(self) -> None:
        """The typed fields and values of this click, or :class:`BadInput`."""
        match = self._match
        if match is None:
            raise BadInput(self.custom_id)
        self.table_id = TABLE.read(match["table_id"])
        self.ver = VERSION.read(match["ver"]) if self.versioned else None
        for name, field in self.fields.items():
            setattr(self, name, field.read(match[name]))
        self.values = self.read_values(list(getattr(self.item, "values", None) or ()))

    def read_values(self, values: list[str]) -> list[Any]:
        return []

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        """This item's fields from an id of the version before typed items
        (``table:<id>:<op>[:<ver>][:<arg>]``); :class:`BadInput` if it cannot be one."""
        if cls.fields:
            raise NotImplementedError(f"{cls.__name__} reads no legacy argument")
        return {}

    async def callback(self, interaction: discord.Interaction) -> None:
        await parts(interaction.client).tables.router.route(interaction, self)

    async def run(self, click: Click) -> None:
        raise NotImplementedError

    async def stale(self, click: Click) -> None:
        """A click on a component from an earlier moment of the table: nothing acts."""
        raise TableError("stale")


class TableButton(TableItem):
    """A table's button: ``make`` it with its fields."""

    component = "button"

    @classmethod
    def make(cls, table_id: int, label: str, *, ver: int | None = None,
             style: discord.ButtonStyle = discord.ButtonStyle.secondary, emoji: str | None = None,
             disabled: bool = False, row: int | None = None, **fields: Any) -> Self:
        return cls(discord.ui.Button(label=label[:80], style=style, emoji=emoji, disabled=disabled, row=row,
                                     custom_id=cls.custom_id_for(table_id, ver, **fields)))


class TableSelect(TableItem):
    """A table's select menu; ``value`` checks every value chosen (``choices``:
    how many at most may be chosen; one unless a subclass says more)."""

    component = "select"
    value: ClassVar[Field] = Int(0, INT64_MAX)
    choices: ClassVar[int] = 1

    @classmethod
    def make(cls, table_id: int, placeholder: str, options: Sequence[discord.SelectOption], *,
             ver: int | None = None, min_values: int = 1, max_values: int = 1, row: int | None = None,
             **fields: Any) -> Self:
        options = list(options)[:25]
        return cls(discord.ui.Select(
            custom_id=cls.custom_id_for(table_id, ver, **fields), placeholder=placeholder[:150], options=options,
            min_values=min(min_values, len(options)), max_values=max(1, min(max_values, len(options), cls.choices)),
            row=row))

    def read_values(self, values: list[str]) -> list[Any]:
        # (a forged select id sent as a button has no values at all)
        if not 1 <= len(values) <= self.choices:
            raise BadInput(values)
        return [self.value.read(v) for v in values]

    @property
    def choice(self) -> Any:
        """The one value of a single-choice select."""
        return self.values[0]


# ------------------------------------------------------------ legacy ids
_ID = r"(?P<id>\d{1,20}):(?P<op>[a-z_]{1,16})(?::(?P<ver>\d{1,9}))?(?::(?P<arg>[A-Za-z0-9_.-]{1,40}))?"


class _Legacy(discord.ui.DynamicItem[discord.ui.Item[Any]], template=r"(?!)"):
    component: ClassVar[str] = ""

    def __init__(self, item: discord.ui.Item[Any]) -> None:
        super().__init__(item)
        self._match = self.template.fullmatch(self.custom_id)

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> "_Legacy":
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        await parts(interaction.client).tables.router.route_legacy(interaction, self)

    def today(self, manager: TableManager) -> TableItem:
        """The item of today that this old id means, wrapping the clicked
        component (with its values); :class:`BadInput` when there is none."""
        match = self._match
        assert match is not None
        table_id = TABLE.read(match["id"])
        ver = VERSION.read(match["ver"]) if match["ver"] is not None else None
        candidates = _LEGACY.get((self.component, match["op"]), {})
        table = manager.get(table_id)
        cls = candidates.get(table.game if table is not None else None) or candidates.get(None)
        if cls is None:
            if table is None or table.status not in ("lobby", "playing"):
                raise TableError("table_closed")  # (a game's button of a table that is gone)
            raise BadInput(self.custom_id)
        fields = cls.from_legacy(ver, match["arg"])
        try:
            custom_id = cls.custom_id_for(table_id, (ver or 0) if cls.versioned else None, **fields)
        except ValueError:  # a field out of its bounds
            raise BadInput(self.custom_id) from None
        if isinstance(self.item, (discord.ui.Button, BaseSelect)):
            self.item.custom_id = custom_id
        return cls(self.item)


class LegacyButton(_Legacy, template=r"table:" + _ID):
    """A button posted before typed items (``table:<id>:<op>...``)."""

    component = "button"


class LegacySelect(_Legacy, template=r"tsel:" + _ID):
    """A select menu posted before typed items (``tsel:<id>:<op>...``)."""

    component = "select"


def legacy_page(arg: str | None) -> int:
    """The page of an old pager or menu id (``p<n>``).

    >>> legacy_page("p3"), legacy_page(None)
    (3, 0)
    """
    if arg is None:
        return 0
    if not arg.startswith("p"):
        raise BadInput(arg)
    return number(arg[1:])


def error_text(lang: str, error: Exception) -> str:
    """What a refusal tells the user: a table's or a game's, or a save the
    store refused ("not saved, nothing changed"), in ``lang``."""
    if isinstance(error, TableError):  # a code with a dot names its own catalogue key
        if "." in error.code:
            return t(lang, error.code, **error.params)
        key = f"faults.{error.code}"
        return t(lang, key if has(key) else f"errors.{error.code}", **error.params)
    if isinstance(error, GameError):
        key = f"errors.{error.code}"
        return t(lang, key) if has(key) else t(lang, "errors.illegal")
    return t(lang, "errors.unexpected")


class Router:
    """Routes every click on a table's components (:class:`TableItem`) to its
    item's :meth:`~TableItem.run`, with the lobby and presenter the item acts
    through, and turns every error into one private answer."""

    def __init__(self, manager: TableManager, lobby: Lobby, presenter: Presenter) -> None:
        self.manager = manager
        self.lobby = lobby
        self.presenter = presenter

    async def route(self, interaction: discord.Interaction, item: TableItem) -> None:
        """Every table click lands here: one place turns errors into answers."""
        defer_when_slow(interaction)
        await self._answering(interaction, item.custom_id, self._dispatch(interaction, item))

    async def route_legacy(self, interaction: discord.Interaction, old: _Legacy) -> None:
        """An id of the version before typed items: the same path, as today's item."""
        defer_when_slow(interaction)

        async def dispatch() -> None:
            await self._dispatch(interaction, old.today(self.manager))

        await self._answering(interaction, old.custom_id, dispatch())

    async def _dispatch(self, interaction: discord.Interaction, item: TableItem) -> None:
        item.read()
        table = self.manager.get(item.table_id)
        if table is None or table.status not in ("lobby", "playing"):
            if item.open_only:
                raise TableError("table_closed")
        elif item.game is not None and table.game != item.game:
            raise BadInput(item.custom_id)  # another game's id: the bot never put it on this table
        if (table is not None and not item.for_watchers and table.watching(interaction.user.id)
                and table.seat_of(interaction.user.id) is None):
            raise TableError("table.watcher_control")
        click = Click(self.lobby, self.presenter, interaction, table)  # type: ignore[arg-type]  # None only for open_only = False items (Click.table)
        if item.versioned and table is not None and item.ver != table.version:
            return await item.stale(click)
        await item.run(click)

    async def _answering(self, interaction: discord.Interaction, custom_id: str, handling: Any) -> None:
        lang = user_lang(interaction)
        with counting_saves() as saved:
            await self._answer_errors(interaction, custom_id, handling, lang, saved)

    async def _answer_errors(self, interaction: discord.Interaction, custom_id: str, handling: Any, lang: str,
                             saved: list[bool]) -> None:
        try:
            await handling
        except (TableError, GameError) as error:
            await reply(interaction, error_text(lang, error))
        except BadInput:
            values = data_of(interaction).get("values")
            log.info("click %r carried values the bot never made: %r", custom_id, values)
            await reply(interaction, t(lang, "guard.bad_input"))
        except discord.HTTPException:
            log.warning("Discord refused an answer to %r", custom_id, exc_info=True)
        except Exception:
            log.exception("click %r failed", custom_id)
            # after a save, the change happened: say so, not "nothing was changed"
            await reply(interaction, t(lang, "errors.unexpected_saved" if saved else "errors.unexpected"))
