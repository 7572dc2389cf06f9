"""Every click on a table lands here.

Every component on a table message is a :class:`TableButton` or
:class:`TableSelect`, a ``DynamicItem`` whose custom_id is
``table:<id>:<op>[:<version>][:<arg>]`` (``tsel:`` for selects).  No custom_id
ever holds a card from a hand; the version makes old buttons harmless.
:class:`Router` finds the table, and turns every error into one private answer.
"""
from __future__ import annotations

import logging
import re
from typing import Sequence

import discord

from app.i18n.catalogue import has, t
from app.tables.manager import TableError
from cogs.guard import INT64_MAX, BadInput
from core.protocol import GameError
from cogs.common.ui import (defer_when_slow, reply, user_lang)

log = logging.getLogger(__name__)

_ID = r"(?P<id>\d{1,20}):(?P<op>[a-z_]{1,16})(?::(?P<ver>\d{1,9}))?(?::(?P<arg>[A-Za-z0-9_.-]{1,40}))?"


def make_id(prefix: str, table_id: int, op: str, ver: int | None = None, arg: object | None = None) -> str:
    """Build a component custom_id (always well under Discord's 100 characters).

    >>> make_id("table", 12, "join")
    'table:12:join'
    >>> make_id("tsel", 12, "stack", 7, "p1")
    'tsel:12:stack:7:p1'
    """
    parts = [prefix, str(table_id), op]
    if ver is not None or arg is not None:
        parts.append(str(ver if ver is not None else 0))
    if arg is not None:
        parts.append(str(arg))
    return ":".join(parts)


def _parse(custom_id: str) -> tuple[int, str, int | None, str | None]:
    match = re.fullmatch(r"(?:table|tsel):" + _ID, custom_id)
    assert match is not None
    ver = match["ver"]
    return int(match["id"]), match["op"], int(ver) if ver is not None else None, match["arg"]


class TableButton(discord.ui.DynamicItem[discord.ui.Button], template=r"table:" + _ID):
    """Every button of every table, routed to :meth:`TablesCog.route`."""

    def __init__(self, item: discord.ui.Button) -> None:
        super().__init__(item)
        self.table_id, self.op, self.ver, self.arg = _parse(item.custom_id or "")

    @classmethod
    def make(cls, table_id: int, op: str, label: str, *, ver: int | None = None, arg: object | None = None,
             style: discord.ButtonStyle = discord.ButtonStyle.secondary, emoji: str | None = None,
             disabled: bool = False, row: int | None = None) -> "TableButton":
        return cls(discord.ui.Button(label=label[:80], style=style, emoji=emoji, disabled=disabled, row=row,
                                     custom_id=make_id("table", table_id, op, ver, arg)))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /):
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        cog: Router = interaction.client.get_cog("Tables")  # type: ignore[assignment]
        await cog.route(interaction, self.table_id, self.op, self.ver, self.arg, [])


class TableSelect(discord.ui.DynamicItem[discord.ui.Select], template=r"tsel:" + _ID):
    """Every select menu of every table."""

    def __init__(self, item: discord.ui.Select) -> None:
        super().__init__(item)
        self.table_id, self.op, self.ver, self.arg = _parse(item.custom_id or "")

    @classmethod
    def make(cls, table_id: int, op: str, placeholder: str, options: Sequence[discord.SelectOption], *,
             ver: int | None = None, arg: object | None = None, min_values: int = 1, max_values: int = 1,
             row: int | None = None) -> "TableSelect":
        options = list(options)[:25]
        return cls(discord.ui.Select(
            custom_id=make_id("tsel", table_id, op, ver, arg), placeholder=placeholder[:150], options=options,
            min_values=min(min_values, len(options)), max_values=max(1, min(max_values, len(options))), row=row))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Select, match: re.Match[str], /):
        return cls(item)

    async def callback(self, interaction: discord.Interaction) -> None:
        cog: Router = interaction.client.get_cog("Tables")  # type: ignore[assignment]
        values = list(getattr(self.item, "values", ()))  # (a forged button has none)
        await cog.route(interaction, self.table_id, self.op, self.ver, self.arg, values)


class Router:
    """The part of :class:`cogs.tables.TablesCog` that routes clicks."""

    # --------------------------------------------------------------- errors
    def error_text(self, lang: str, error: Exception) -> str:
        if isinstance(error, TableError):  # a code with a dot names its own catalogue key
            if "." in error.code:
                return t(lang, error.code, **error.params)
            key = f"faults.{error.code}"
            return t(lang, key if has(key) else f"errors.{error.code}", **error.params)
        if isinstance(error, GameError):
            key = f"errors.{error.code}"
            return t(lang, key) if has(key) else t(lang, "errors.illegal")
        return t(lang, "errors.unexpected")

    async def route(self, interaction: discord.Interaction, table_id: int, op: str, ver: int | None,
                    arg: str | None, values: list[str]) -> None:
        """Every table click lands here: one place turns errors into answers."""
        lang = user_lang(interaction)
        defer_when_slow(interaction)
        table = None
        try:
            if table_id > INT64_MAX:
                raise BadInput(table_id)
            if op == "again":  # the only button of a finished table
                return await self.op_again(interaction, table_id)
            table = self.manager.get(table_id)
            if table is None or table.status not in ("lobby", "playing"):
                raise TableError("table_closed")
            handler = getattr(self, f"op_{op}", None)
            if handler is not None:
                await handler(interaction, table)
            else:
                ui = self.uis[table.game]
                await ui.on_component(self, interaction, table, op, ver, arg, values)
        except (TableError, GameError) as error:
            await reply(interaction, self.error_text(lang, error))
        except BadInput:
            log.info("click %s at table %s carried values the bot never made: %r %r", op, table_id, arg, values)
            await reply(interaction, t(lang, "guard.bad_input"))
        except discord.HTTPException:
            log.warning("Discord refused an answer at table %s (%s)", table_id, op, exc_info=True)
        except Exception:
            log.exception("click %s at table %s failed", op, table_id)
            await reply(interaction, t(lang, "errors.unexpected"))
        finally:
            if table is not None:
                self.heard(table, interaction)  # its token may tell the thread what comes next
