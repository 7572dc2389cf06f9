"""The table machinery shared by every game: lobby, thread, table message,
narration, pings, errors.  Thin: each click becomes one call on the
:class:`~app.tables.TableManager`; each game cog adds a :class:`GameUI` that
turns the engine's views and events into messages.

Every component on a table message is a :class:`TableButton` or
:class:`TableSelect`, a ``DynamicItem`` whose custom_id is
``table:<id>:<op>[:<version>][:<arg>]`` (``tsel:`` for selects).  No custom_id
ever holds a card from a hand; the version makes old buttons harmless.
"""
from __future__ import annotations

import asyncio
import contextvars
import io
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

import aiohttp
import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app import budget
from app.i18n.catalogue import has, normalise, t
from app.tables.manager import LEVELS, Table, TableError, TableManager, starts_turn, when_slow
from app.text import plain
from cogs.guard import INT64_MAX, BadInput
from core import registry
from core.protocol import Event, GameError, to_act

log = logging.getLogger(__name__)

_ID = r"(?P<id>\d{1,20}):(?P<op>[a-z_]{1,16})(?::(?P<ver>\d{1,9}))?(?::(?P<arg>[A-Za-z0-9_.-]{1,40}))?"

# What the bot needs in a channel to host a table there.
NEEDED_PERMISSIONS = (
    "view_channel", "send_messages", "embed_links", "attach_files", "read_message_history",
    "create_public_threads", "send_messages_in_threads",
)


#: the table whose lobby message the current click's own answer redraws
_ANSWER_REDRAWS: contextvars.ContextVar[int | None] = contextvars.ContextVar("_ANSWER_REDRAWS", default=None)

TRANSIENT = (discord.HTTPException, aiohttp.ClientError, OSError, asyncio.TimeoutError)
RETRIES = 3  # redraws of a table message after Discord errors
RETRY_DELAY = 0.5  # seconds, times the attempt number


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
        cog: TablesCog = interaction.client.get_cog("Tables")  # type: ignore[assignment]
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
        cog: TablesCog = interaction.client.get_cog("Tables")  # type: ignore[assignment]
        values = list(getattr(self.item, "values", ()))  # (a forged button has none)
        await cog.route(interaction, self.table_id, self.op, self.ver, self.arg, values)


def view_of(*items: discord.ui.Item) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for item in items:
        view.add_item(item)
    return view


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

    async def on_component(self, cog: "TablesCog", interaction: discord.Interaction, table: Table,
                           op: str, ver: int | None, arg: str | None, values: list[str]) -> None: ...


NO_PINGS = discord.AllowedMentions.none()


@dataclass
class _Item:
    """One thing the thread is told: a narration line, or the ping of a turn.

    ``upto`` is the table's version (log entries) this item belongs to: once
    it is posted, that many entries have been narrated."""

    text: str | None = None
    ping: tuple[int, ...] | None = None  # the seats pinged (``text`` is None)
    turn: int = 0  # which turn of this presenter the ping is for
    upto: int = 0


@dataclass
class _Presenter:
    """Per table: narration goes out in order; the table message is redrawn
    apart from it, coalescing changes, so a rate-limited edit never holds
    back a ping."""

    lines: list[_Item] = field(default_factory=list)
    turn: int = 0  # counts the turns this presenter saw start
    pinged: int = -1  # the last turn pinged (a turn is pinged once)
    need_thread: bool = False
    again: bool = False  # the thread must be opened anew (it was deleted)
    repost: bool = False
    table_dirty: bool = False
    sender: asyncio.Task[None] | None = None
    updater: asyncio.Task[None] | None = None


def user_lang(interaction: discord.Interaction) -> str:
    return normalise(interaction.locale)


async def reply(interaction: discord.Interaction, content: str | None = None, **kwargs: Any) -> None:
    """Answer ephemerally, whether or not the interaction was answered already."""
    kwargs.setdefault("ephemeral", True)
    kwargs.setdefault("allowed_mentions", NO_PINGS)
    try:
        if interaction.extras.pop("thinking", False):
            # A public "thinking..." (a slow save of a command): its answer fills it
            # (a first followup would be public anyway).
            kwargs.pop("ephemeral", None)
            await interaction.edit_original_response(content=content, **kwargs)
        elif interaction.response.is_done():
            await interaction.followup.send(content, **kwargs)
        else:
            await interaction.response.send_message(content, **kwargs)
    except discord.HTTPException:
        log.warning("could not answer interaction %s", interaction.id, exc_info=True)


async def update_message(interaction: discord.Interaction, **kwargs: Any) -> None:
    """Redraw the message a component is on, also after a deferred answer."""
    if interaction.response.is_done():
        await interaction.edit_original_response(**kwargs)
    else:
        await interaction.response.edit_message(**kwargs)


def defer_when_slow(interaction: discord.Interaction) -> None:
    """While this interaction is handled, a slow save (a database locked
    elsewhere) acknowledges it first: the answer then follows the save,
    however long the store takes to commit or refuse it.  The deadline runs
    from the first call for this interaction (a click that opens a lobby
    calls it twice)."""
    if interaction.extras.get("slow_save_armed"):
        return
    interaction.extras["slow_save_armed"] = True

    async def defer() -> None:
        if interaction.response.is_done():
            return
        command = interaction.type == discord.InteractionType.application_command
        await interaction.response.defer(thinking=command)
        if command:
            interaction.extras["thinking"] = True

    when_slow(defer)


def can_manage(interaction: discord.Interaction) -> bool:
    """Manage Messages here (or server-wide, or administrator)."""
    perms = getattr(interaction.user, "guild_permissions", None) or discord.Permissions.none()
    return bool(interaction.permissions.manage_messages or perms.manage_messages or perms.administrator)


def _chunk_items(items: Sequence[_Item], limit: int = 1900) -> list[list[_Item]]:
    """Narration items grouped into messages under Discord's 2,000 characters.

    >>> [len(m) for m in _chunk_items([_Item("a" * 1000), _Item("b" * 1000), _Item("c")])]
    [1, 2]
    """
    out: list[list[_Item]] = []
    current: list[_Item] = []
    size = 0
    for item in items:
        n = len((item.text or "")[:limit])
        if current and size + 1 + n > limit:
            out.append(current)
            current, size = [item], n
        else:
            size = size + 1 + n if current else n
            current.append(item)
    if current:
        out.append(current)
    return out


class TablesCog(commands.Cog, name="Tables"):
    """Lobbies and tables of every game."""

    table_group = app_commands.Group(
        name=_("table", key="commands.table.name"),
        description=_("The table of this channel or thread", key="commands.table.description"),
        guild_only=True)

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
        self.bot.add_dynamic_items(TableButton, TableSelect)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(TableButton, TableSelect)
        await self.stop_presenting()

    async def stop_presenting(self) -> None:
        """Stop posting (at shutdown); what was saved is shown again after a start."""
        tasks = [task for p in self.presenters.values() for task in (p.sender, p.updater) if task]
        tasks += self._edits
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.presenters.clear()

    def register(self, ui: GameUI) -> None:
        self.uis[ui.key] = ui

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

    # ---------------------------------------------------------------- lobby
    def hosting_refusal(self, interaction: discord.Interaction) -> str | None:
        """Why tables cannot be hosted where this command was used (in the
        user's language), or None: a server's text channel where the bot has
        every permission it needs."""
        lang = user_lang(interaction)
        channel = interaction.channel
        if interaction.guild_id is None or channel is None:
            return t(lang, "errors.guild_only")
        if isinstance(channel, discord.Thread) or getattr(channel, "type", None) not in (
                discord.ChannelType.text, discord.ChannelType.news):
            return t(lang, "errors.text_channel_only")
        missing = self.missing_permissions(interaction)
        if missing:
            names = ", ".join(t(lang, f"perms.{name}") for name in missing)
            return t(lang, "errors.missing_permissions", permissions=names)
        return None

    def missing_permissions(self, interaction: discord.Interaction) -> list[str]:
        perms = interaction.app_permissions
        return [name for name in NEEDED_PERMISSIONS if not getattr(perms, name, False)]

    async def table_language(self, interaction: discord.Interaction) -> str:
        settings = await self.bot.store.guild_settings(interaction.guild_id)
        return normalise(settings.get("language") or interaction.guild_locale)

    async def create_table(self, interaction: discord.Interaction, game: str, *, seats: int,
                           rounds: int | None, turn_time: int, computers: int | Sequence[str] = 0,
                           invite: Sequence[int] = (), options: dict[str, Any] | None = None) -> None:
        """``/<game> new`` (and *Play again*): post a lobby in this channel."""
        lang = user_lang(interaction)
        channel = interaction.channel
        refusal = self.hosting_refusal(interaction)
        if refusal is not None:
            return await reply(interaction, refusal)
        assert channel is not None and interaction.guild_id is not None
        defer_when_slow(interaction)
        try:
            table_lang = await self.table_language(interaction)
            table = await self.manager.create(
                guild_id=interaction.guild_id, channel_id=channel.id, game=game,
                host_id=interaction.user.id, host_name=interaction.user.display_name,
                seats=seats, rounds=rounds, turn_time=turn_time, locale=table_lang, options=options)
        except TableError as error:
            orphan = self.manager.in_channel(channel.id)
            # Only the asker's own lobby whose message was never posted (the bot stopped in
            # between) is posted now; never a table someone is creating at this moment.
            if not (error.code == "channel_busy" and orphan is not None and orphan.status == "lobby"
                    and orphan.host_id == interaction.user.id and not orphan.messages.get("lobby")
                    and not orphan.posting):
                return await reply(interaction, self.error_text(lang, error))
            table = orphan
            table.posting = True
        for level in (["normal"] * computers if isinstance(computers, int) else computers):
            try:
                await self.manager.add_computer(table, table.host_id, level)
            except TableError:
                break  # not saved: the lobby opens with fewer computers; the host may add them
        content = None
        if invite:
            content = t(table.locale, "table.again_invite", host=f"<@{table.host_id}>",
                        mentions=" ".join(f"<@{user_id}>" for user_id in invite))
        mentions = discord.AllowedMentions(users=True, everyone=False, roles=False)
        try:
            mentions = self.pinging(invite)
            if interaction.extras.pop("thinking", False):  # deferred by a slow save: fill "thinking..."
                sent = await interaction.edit_original_response(
                    content=content, embed=self.lobby_embed(table), view=self.lobby_view(table),
                    allowed_mentions=discord.AllowedMentions.none())
                message_id = sent.id
            elif interaction.response.is_done():  # Play again, deferred: a new message
                sent = await interaction.followup.send(
                    content=content, embed=self.lobby_embed(table), view=self.lobby_view(table),
                    allowed_mentions=mentions, wait=True)
                message_id = sent.id
            else:
                response = await interaction.response.send_message(
                    content=content, embed=self.lobby_embed(table), view=self.lobby_view(table),
                    allowed_mentions=mentions)
                message_id = getattr(response, "message_id", None)
                if message_id is None:
                    message_id = (await interaction.original_response()).id
        except discord.HTTPException:
            log.warning("lobby message for table %s could not be posted", table.id, exc_info=True)
            table.posting = False
            try:
                await self.manager.cancel(table, table.host_id, can_manage=True)
            except TableError:
                pass  # not saved: the host's next /new posts this lobby
            return
        self.manager.set_message(table, "lobby", message_id)
        await self.manager.save_messages(table)

    def lobby_embed(self, table: Table) -> discord.Embed:
        lang = table.locale
        title = t(lang, f"{table.game}.title")
        embed = discord.Embed(title=t(lang, "table.lobby_title", game=title, table=table.id),
                              colour=discord.Colour.blurple())
        stopped = self.closed_line(table)
        turn = table.options.get("turn_time", 0)
        timer = t(lang, "table.timer_off") if not turn else t(lang, "table.timer_seconds", count=turn)
        desc = [t(lang, "table.lobby_host", host=f"<@{table.host_id}>"),
                t(lang, "table.lobby_seats", taken=len(table.seats), seats=table.max_seats),
                t(lang, "table.lobby_timer", timer=timer),
                *self.uis[table.game].lobby_lines(table, lang)]
        if table.options.get("hints"):
            desc.append(t(lang, "ai.hints_on"))
        if stopped:
            desc.insert(0, stopped)
        elif table.status == "cancelled":
            desc.insert(0, t(lang, "table.cancelled"))
        elif table.status == "playing" and table.thread_id:
            desc.insert(0, t(lang, "table.in_thread", thread=f"<#{table.thread_id}>"))
        elif table.status == "playing":
            desc.insert(0, t(lang, "table.started"))
        embed.description = "\n".join(desc)
        players = [f"{i + 1}. {self.seat_name(table, i)}" for i in range(len(table.seats))]
        embed.add_field(name=t(lang, "table.players"), value="\n".join(players) or "-", inline=False)
        return embed

    def seat_name(self, table: Table, index: int) -> str:
        seat = table.seats[index]
        if seat.computer:
            return t(table.locale, "ai.computer_seat", name=seat.name,
                     level=t(table.locale, f"ai.level_{seat.level}"))
        return plain(seat.name)

    @staticmethod
    def pinging(user_ids: Sequence[int]) -> discord.AllowedMentions:
        """Mentions that ping exactly these users (and nobody else, no role, no everyone)."""
        return discord.AllowedMentions(users=[discord.Object(i) for i in user_ids], everyone=False,
                                       roles=False, replied_user=False)

    def lobby_view(self, table: Table) -> discord.ui.View | None:
        if table.status != "lobby":
            return None
        lang = table.locale
        B = discord.ButtonStyle
        hints = bool(table.options.get("hints"))
        levels = [discord.SelectOption(label=t(lang, "ai.add_level", level=t(lang, f"ai.level_{level}")),
                                       value=level, description=t(lang, f"ai.desc_{level}"), emoji="🤖")
                  for level in LEVELS]
        items: list[discord.ui.Item] = [
            TableButton.make(table.id, "join", t(lang, "table.join"), style=B.success, row=0),
            TableButton.make(table.id, "leave", t(lang, "table.leave"), row=0),
            TableButton.make(table.id, "cpu", t(lang, "table.add_computer"), row=0),  # a normal one
            TableButton.make(table.id, "start", t(lang, "table.start"), style=B.primary, row=0),
            TableButton.make(table.id, "cancel", t(lang, "table.cancel"), style=B.danger, row=0),
            TableButton.make(table.id, "rules", t(lang, "table.rules"), emoji="📖", row=1),
        ]
        players = self.manager.players
        if players is not None and players.supports(table.game):  # levels and the coach
            items += [
                TableButton.make(table.id, "hints", t(lang, "ai.hints_button_on" if hints else "ai.hints_button_off"),
                                 emoji="💡", style=B.success if hints else B.secondary,
                                 arg="off" if hints else "on", row=1),
                TableSelect.make(table.id, "cpu", t(lang, "ai.add_computer"), levels, row=2),  # at a chosen level
            ]
        return view_of(*items)

    def closed_line(self, table: Table) -> str | None:
        """Why a table closed early: stopped by a moderator, or nobody played."""
        lang = table.locale
        if table.status == "abandoned" and table.stopped_by:
            return t(lang, "faults.stopped_by", name=plain(table.stopped_by))
        if table.idle:
            return t(lang, "faults.idle_closed", count=max(1, round(self.manager.idle_limit / 3600)))
        return None

    async def _lobby_update(self, interaction: discord.Interaction, table: Table) -> None:
        await update_message(interaction, embed=self.lobby_embed(table), view=self.lobby_view(table))

    async def op_join(self, interaction: discord.Interaction, table: Table) -> None:
        await self.manager.join(table, interaction.user.id, interaction.user.display_name)
        await self._lobby_update(interaction, table)

    async def op_leave(self, interaction: discord.Interaction, table: Table) -> None:
        await self.manager.leave(table, interaction.user.id)
        await self._lobby_update(interaction, table)

    async def op_cpu(self, interaction: discord.Interaction, table: Table) -> None:
        # the level menu, or the plain button (and a lobby posted before levels existed): normal
        values = (interaction.data or {}).get("values") or ["normal"]  # type: ignore[union-attr]
        await self.manager.add_computer(table, interaction.user.id, str(values[0]))
        await self._lobby_update(interaction, table)

    async def op_hints(self, interaction: discord.Interaction, table: Table) -> None:
        custom_id = str((interaction.data or {}).get("custom_id", ""))  # type: ignore[union-attr]
        await self.manager.set_hints(table, interaction.user.id, custom_id.endswith(":on"))
        await self._lobby_update(interaction, table)

    async def op_start(self, interaction: discord.Interaction, table: Table) -> None:
        await self.manager.start(table, interaction.user.id)
        await self._lobby_update(interaction, table)

    async def op_cancel(self, interaction: discord.Interaction, table: Table) -> None:
        on_lobby = interaction.message is not None and interaction.message.id == table.messages.get("lobby")
        if on_lobby:
            _ANSWER_REDRAWS.set(table.id)  # this click's answer redraws the lobby message
        await self.manager.cancel(table, interaction.user.id, can_manage=can_manage(interaction),
                                  name=interaction.user.display_name)
        if on_lobby:
            await self._lobby_update(interaction, table)
        else:
            await reply(interaction, t(user_lang(interaction), "table.cancelled"))

    @table_group.command(name=_("stop", key="commands.table_stop.name"),
                         description=_("End the lobby or game of this channel or thread (host or moderators)",
                                       key="commands.table_stop.description"))
    async def table_stop(self, interaction: discord.Interaction) -> None:
        """``/table stop``: the host cancels their lobby; anyone with Manage
        Messages ends any lobby or running game here (recorded as abandoned)."""
        lang = user_lang(interaction)
        defer_when_slow(interaction)
        table = self.manager.in_channel(interaction.channel_id) if interaction.channel_id else None
        try:
            if table is None:
                raise TableError("no_table_here")
            await self.manager.cancel(table, interaction.user.id, can_manage=can_manage(interaction),
                                      name=interaction.user.display_name)
        except TableError as error:
            return await reply(interaction, self.error_text(lang, error))
        key = "faults.stopped" if table.status == "abandoned" else "faults.lobby_cancelled"
        await reply(interaction, t(lang, key, table=table.id))

    async def op_rules(self, interaction: discord.Interaction, table: Table) -> None:
        from cogs.rules import build_page

        embed, view = build_page(table.game, user_lang(interaction), 0)
        await reply(interaction, embed=embed, view=view)

    async def op_again(self, interaction: discord.Interaction, table_id: int) -> None:
        """*Play again* under a finished game: a new lobby with the same options,
        the clicker as host, the same computer players, the other people invited."""
        old = self.manager.get(table_id)
        if old is not None:
            game, options, max_seats, seats = old.game, old.options, old.max_seats, old.seats
        else:  # finished before a restart: the store still has it
            record = await self.bot.store.table(table_id)
            if record is None:
                raise TableError("table_closed")
            from app.tables.manager import Seat

            game, options, max_seats = record.game, record.meta["options"], record.meta["max_seats"]
            seats = [Seat.from_dict(s) for s in record.meta["seats"]]
        if not any(seat.user_id == interaction.user.id for seat in seats):
            raise TableError("not_seated")
        await self.create_table(
            interaction, game, seats=max_seats, rounds=options.get("rounds"),
            turn_time=options.get("turn_time", 0), computers=[s.level for s in seats if s.computer],
            invite=[s.user_id for s in seats if s.user_id not in (None, interaction.user.id)],
            options={k: v for k, v in options.items() if k not in ("rounds", "turn_time", "hints")})

    async def op_back(self, interaction: discord.Interaction, table: Table) -> None:
        await self.manager.back(table, interaction.user.id)
        await reply(interaction, t(user_lang(interaction), "table.welcome_back"))

    # ------------------------------------------------- /join /start /leave
    # The same manager calls as the lobby's buttons, on the table of the
    # channel (or game thread) the command is used in.
    @app_commands.command(name=_("join", key="commands.join.name"),
                          description=_("Take a seat at the table of this channel or thread",
                                        key="commands.join.description"))
    @app_commands.guild_only()
    async def join_command(self, interaction: discord.Interaction) -> None:
        await self._lobby_command(interaction, "join")

    @app_commands.command(name=_("start", key="commands.start.name"),
                          description=_("Start the table of this channel or thread (host)",
                                        key="commands.start.description"))
    @app_commands.guild_only()
    async def start_command(self, interaction: discord.Interaction) -> None:
        await self._lobby_command(interaction, "start")

    @app_commands.command(name=_("leave", key="commands.leave.name"),
                          description=_("Leave the table of this channel or thread before it starts",
                                        key="commands.leave.description"))
    @app_commands.guild_only()
    async def leave_command(self, interaction: discord.Interaction) -> None:
        await self._lobby_command(interaction, "leave")

    async def _lobby_command(self, interaction: discord.Interaction, op: str) -> None:
        lang = user_lang(interaction)
        table = self.manager.in_channel(interaction.channel_id) if interaction.channel_id else None
        if table is None:
            return await reply(interaction, t(lang, "slash.no_table"))
        user = interaction.user
        defer_when_slow(interaction)  # a save that waits for the database acknowledges first
        try:
            if op == "join":
                await self.manager.join(table, user.id, user.display_name)
            elif op == "leave":
                await self.manager.leave(table, user.id)
            else:
                await self.manager.start(table, user.id)
        except (TableError, GameError) as error:
            return await reply(interaction, self.error_text(lang, error))
        except Exception:
            log.exception("/%s at table %s failed", op, table.id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        done = {"join": "joined", "leave": "left", "start": "started"}[op]
        await reply(interaction, t(lang, f"slash.{done}", table=table.id))
        lobby_id = table.messages.get("lobby")
        if op != "start" and lobby_id:  # (a start redraws the lobby when its thread is open)
            channel = self.bot.get_partial_messageable(table.channel_id)
            try:
                await channel.get_partial_message(lobby_id).edit(embed=self.lobby_embed(table),
                                                                 view=self.lobby_view(table))
            except TRANSIENT:
                log.info("lobby message of table %s could not be updated", table.id, exc_info=True)

    # ------------------------------------------------------------ presenting
    def on_table_change(self, table: Table, events: list[Event]) -> None:
        """Listener of the manager: narrate now, present in the background."""
        if table.status == "lobby":
            return  # lobby changes are shown by the interaction that made them
        presenter = self.presenters.setdefault(table.id, _Presenter())
        kinds = {e.get("type") for e in events}
        if "started" in kinds:
            presenter.need_thread = True
        if kinds & {"abandoned", "idle", "cancelled"} and _ANSWER_REDRAWS.get() != table.id:
            self._edit_lobby_later(table)
        acting = to_act(table.engine) if table.engine is not None else frozenset()
        new_turn = "started" in kinds or any(starts_turn(table.game, e) for e in events) or any(
            e.get("type") == "back" and e.get("seat") in acting
            for e in events)  # a seat taken back on its own turn: that turn is its owner's now
        if registry.spec(table.game).deal_event in kinds:
            presenter.repost = True  # a fresh table message each round (old messages edit slowly)
        upto = table.version
        presenter.lines.extend(_Item(text=line, upto=upto) for line in self.narrate(table, events))
        if new_turn:
            presenter.turn += 1
            self._queue_ping(table, presenter)
        elif presenter.lines:
            presenter.lines[-1].upto = upto
        if table.status in ("playing", "finished") or (table.status == "abandoned" and table.messages.get("table")):
            presenter.table_dirty = True  # (a stopped game's table message is drawn once more, without buttons)
        self._wake(table, presenter)
        changed = getattr(self.uis[table.game], "changed", None)
        if changed is not None:
            changed(table)  # e.g. private panels that keep themselves current

    def _queue_ping(self, table: Table, presenter: _Presenter) -> None:
        """Ping the players to act, once for this turn (checked again when it is sent)."""
        seats = self._ping_seats(table)
        if seats and presenter.pinged != presenter.turn and not any(
                item.ping is not None and item.turn == presenter.turn for item in presenter.lines):
            presenter.lines.append(_Item(ping=seats, turn=presenter.turn, upto=table.version))

    def _ping_seats(self, table: Table) -> tuple[int, ...]:
        """The seats whose turn needs their human now (several when everyone chooses at once)."""
        engine = table.engine
        if engine is None or table.status != "playing":
            return ()
        return tuple(seat for seat in sorted(to_act(engine)) if not table.seats[seat].automatic)

    def _wake(self, table: Table, presenter: _Presenter) -> None:
        if presenter.sender is None or presenter.sender.done():
            # (a context of its own: the click's deferral hook stays with the click)
            presenter.sender = asyncio.get_running_loop().create_task(self._sender(table, presenter),
                                                                      context=contextvars.Context())

    def resume(self, table: Table) -> None:
        """After a start: tell what was saved but not yet told (in order, once),
        ping the turn if its ping was not sent, and show the table again."""
        missed: list[Event] = []
        if table.narrated < table.version:
            try:
                missed = self.manager.replay_events(table, table.narrated)
            except Exception:
                log.exception("table %s: the moves since the last narration could not be replayed", table.id)
        if table.status == "finished":  # the game ended; its end was not shown yet
            self.on_table_change(table, missed or table.ending)
            return
        if table.status != "playing":
            return
        if not table.thread_id:  # the Start was never shown, so the game's first lines were not either
            missed = [{"type": "started"}, *missed]
        presenter = self.presenters.setdefault(table.id, _Presenter())
        if missed:
            self.on_table_change(table, missed)
        if not any(starts_turn(table.game, e) or e.get("type") in ("started", "back") for e in missed):
            presenter.pinged = presenter.turn  # this turn's ping went out before the stop
        self.redraw(table, repost=False, ping=False)

    async def _sender(self, table: Table, presenter: _Presenter) -> None:
        budget.background()  # narration takes turns with redraws; pings go first
        if presenter.need_thread and not self.bot.is_ready():
            # restored tables are resumed before the bot is connected; opening a
            # thread needs the server in the cache
            await self.bot.wait_until_ready()
        failures = 0
        while True:
            try:
                if presenter.need_thread:
                    presenter.need_thread = False
                    again, presenter.again = presenter.again, False
                    await self._open_thread(table, again=again)
                items, presenter.lines = presenter.lines, []
                unsent: list[_Item] = []
                if items and (table.status not in ("cancelled", "abandoned") or table.thread_id):
                    unsent = await self._send(table, presenter, items)
                    told = max((item.upto for item in items[:len(items) - len(unsent)]), default=0)
                    if told > table.narrated:
                        table.narrated = told
                        await self.manager.save_messages(table)
                if unsent:
                    failures += 1
                    if failures <= RETRIES:
                        presenter.lines[:0] = unsent  # in order, nothing lost, nothing twice
                        await asyncio.sleep(RETRY_DELAY * failures)
                else:
                    failures = 0
            except TRANSIENT as error:  # opening the thread failed
                failures += 1
                log.warning("table %s: no thread yet (%r), try %d", table.id, error, failures)
                if failures <= RETRIES:
                    presenter.need_thread = True
                    await asyncio.sleep(RETRY_DELAY * failures)
            except Exception:
                log.exception("narrating table %s failed", table.id)
            if presenter.table_dirty and (presenter.updater is None or presenter.updater.done()):
                presenter.updater = asyncio.get_running_loop().create_task(self._updater(table, presenter))
            if not presenter.lines and not presenter.need_thread:
                break
        if (table.status not in ("lobby", "playing", "finished") and self.presenters.get(table.id) is presenter
                and (presenter.updater is None or presenter.updater.done())):
            self.presenters.pop(table.id, None)  # closed early: nothing more to show

    def _edit_lobby_later(self, table: Table) -> None:
        """Show on the lobby message that a table was stopped or closed itself
        (a Cancel click on the lobby redraws it through its own answer)."""
        lobby = table.messages.get("lobby")
        if not lobby:
            return

        async def edit() -> None:
            try:
                await self.where(table, thread=False).get_partial_message(lobby).edit(
                    embed=self.lobby_embed(table), view=None)
            except (discord.HTTPException, *TRANSIENT):
                log.info("lobby message of table %s could not be updated", table.id)

        task = asyncio.get_running_loop().create_task(edit())
        self._edits.add(task)
        task.add_done_callback(self._edits.discard)

    def redraw(self, table: Table, *, new_thread: bool = False, repost: bool = True, ping: bool = True) -> None:
        """Show the table again (its message or thread was deleted, or the bot restarted).

        ``ping``: ping the player to move unless this turn was pinged already."""
        if table.status != "playing":
            return
        presenter = self.presenters.setdefault(table.id, _Presenter())
        if new_thread:
            presenter.need_thread = presenter.again = True
            presenter.pinged = -1  # the ping went with the deleted thread: ping in the new one
        elif not table.thread_id:  # e.g. a stop between Start and the thread: open it now
            presenter.need_thread = True
        presenter.repost = presenter.repost or repost
        presenter.table_dirty = True
        if ping:
            self._queue_ping(table, presenter)
        self._wake(table, presenter)

    @commands.Cog.listener()
    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        for table in list(self.manager.tables.values()):
            if table.thread_id == payload.thread_id and table.status == "playing":
                log.info("thread of table %s was deleted; opening a new one", table.id)
                self.manager.set_message(table, "thread", None)
                self.redraw(table, new_thread=True)

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        if payload.message_id in self._deleting:
            return  # the bot's own deletion of a replaced table message
        for table in list(self.manager.tables.values()):
            if table.messages.get("table") == payload.message_id and table.status == "playing":
                log.info("table message of table %s was deleted; posting it again", table.id)
                self.manager.set_message(table, "table", None)
                self.redraw(table)

    async def _updater(self, table: Table, presenter: _Presenter) -> None:
        budget.background()  # redraws yield to clicks and pings, take turns with narration
        spend = getattr(self.bot, "budget", None)
        failures = 0
        while presenter.table_dirty:
            if spend is not None:
                # The picture is drawn only once its request may go: while the bot's
                # requests are spent, moves made meanwhile join this one redraw.
                await spend.prepay()
            presenter.table_dirty = False
            repost, presenter.repost = presenter.repost, False
            try:
                await self._update_table_message(table, repost=repost)
                failures = 0
            except TRANSIENT as error:
                # Discord failed (5xx, dropped connection...): the game is saved and
                # goes on; draw the table again shortly, a few times at most.
                failures += 1
                log.warning("table %s message update failed (%r), try %d", table.id, error, failures)
                if failures <= RETRIES:
                    presenter.table_dirty = True
                    presenter.repost = presenter.repost or repost
                    await asyncio.sleep(RETRY_DELAY * failures)
            except Exception:
                log.exception("updating the table message of table %s failed", table.id)
        if table.status == "finished" and self.presenters.get(table.id) is presenter:
            try:
                await self._finish(table)
            except Exception:
                log.exception("closing table %s failed", table.id)
        if table.status not in ("lobby", "playing") and not presenter.lines:
            self.presenters.pop(table.id, None)

    def narrate(self, table: Table, events: list[Event]) -> list[str]:
        lang = table.locale
        lines: list[str] = []
        ui_events: list[Event] = []
        for event in events:
            kind = event.get("type")
            if kind == "timeout":
                key = "table.timeout_away" if event["away"] else "table.timeout"
                lines.extend(self.uis[table.game].narrate(table, ui_events, lang))
                ui_events = []
                lines.append(t(lang, key, name=self.seat_name(table, event["seat"])))
            elif kind == "back":
                lines.append(t(lang, "table.back", name=self.seat_name(table, event["seat"])))
            elif kind == "cancelled":
                lines.append(t(lang, "table.cancelled"))
            elif kind in ("abandoned", "idle"):
                line = self.closed_line(table)
                if line:
                    lines.append(line)
            elif kind == "started":
                lines.append(t(lang, "table.game_started", game=t(lang, f"{table.game}.title")))
            else:
                ui_events.append(event)
        lines.extend(self.uis[table.game].narrate(table, ui_events, lang))
        for extra in self.extras:
            lines.extend(extra.narrate(table, events, lang))
        return lines

    def ping_line(self, table: Table, seats: Sequence[int]) -> str:
        mentions = " ".join(f"<@{table.seats[seat].user_id}>" for seat in seats)
        if len(seats) > 1:  # a simultaneous turn: everyone chooses at once
            line = t(table.locale, "simultaneous.several_turn", mentions=mentions)
        else:
            line = t(table.locale, "table.your_turn", mention=mentions)
        if table.turn_deadline:
            line += " " + t(table.locale, "table.deadline", when=f"<t:{int(table.turn_deadline)}:R>")
        return line

    def where(self, table: Table, thread: bool = True) -> discord.PartialMessageable:
        """The table's thread (or its channel), without needing the cache."""
        if thread and table.thread_id:
            return self.bot.get_partial_messageable(table.thread_id, guild_id=table.guild_id,
                                                    type=discord.ChannelType.public_thread)
        return self.bot.get_partial_messageable(table.channel_id, guild_id=table.guild_id,
                                                type=discord.ChannelType.text)

    async def _post(self, table: Table, text: str, mentions: discord.AllowedMentions) -> None:
        try:
            await self.where(table).send(text, allowed_mentions=mentions)
        except discord.NotFound:
            # The thread was deleted: open a new one and go on there.
            await self._open_thread(table, again=True)
            await self.where(table).send(text, allowed_mentions=mentions)

    async def _send(self, table: Table, presenter: _Presenter, items: list[_Item]) -> list[_Item]:
        """Post narration in order (pinging nobody) and each turn's ping on its
        own (pinging that player only, and only while that turn is still on);
        returns the items Discord did not take."""
        index = 0
        while index < len(items):
            item = items[index]
            try:
                if item.ping is not None:
                    # only those still to act: who chose meanwhile is not called
                    seats = [seat for seat in item.ping if seat in self._ping_seats(table)]
                    if item.turn == presenter.turn and presenter.pinged != item.turn and seats:
                        with budget.foreground():
                            await self._post(table, self.ping_line(table, seats),
                                             self.pinging([table.seats[seat].user_id for seat in seats]))
                        presenter.pinged = item.turn
                    # else: that turn has passed (or was pinged): a ping now would mislead
                    index += 1
                    continue
                end = index
                while end < len(items) and items[end].ping is None:
                    end += 1
                for chunk in _chunk_items(items[index:end]):
                    await self._post(table, "\n".join((i.text or "")[:1900] for i in chunk), NO_PINGS)
                    index += len(chunk)
            except TRANSIENT as error:
                log.warning("narration of table %s failed (%r)", table.id, error)
                return items[index:]
        return []

    async def _open_thread(self, table: Table, again: bool = False) -> None:
        lang = table.locale
        name = t(lang, "table.thread_name", game=t(lang, f"{table.game}.title"), table=table.id)[:100]
        channel = self.where(table, thread=False)
        thread_id: int | None = None
        try:
            lobby_id = table.messages.get("lobby")
            if lobby_id and not again:
                thread = await channel.get_partial_message(lobby_id).create_thread(
                    name=name, auto_archive_duration=1440)
            else:
                starter = await channel.send(t(lang, "table.moved", table=table.id), allowed_mentions=NO_PINGS)
                thread = await starter.create_thread(name=name, auto_archive_duration=1440)
            thread_id = thread.id
        except discord.HTTPException:
            log.warning("no thread for table %s; playing in the channel", table.id, exc_info=True)
        self.manager.set_message(table, "thread", thread_id)
        self.manager.set_message(table, "table", None)
        await self.manager.save_messages(table)
        if table.messages.get("lobby"):
            try:
                await channel.get_partial_message(table.messages["lobby"]).edit(
                    embed=self.lobby_embed(table), view=None)
            except discord.HTTPException:
                log.info("lobby message of table %s could not be updated", table.id)

    async def _update_table_message(self, table: Table, repost: bool = False) -> None:
        message = await self.uis[table.game].table_message(table, table.locale)
        for extra in self.extras:
            extra.table_message(table, message, table.locale)
        try:
            await self._post_table_message(table, message, repost, with_image=message.image is not None)
        except discord.Forbidden:
            if message.image is None:
                raise
            # The bot may no longer attach files here: the text summary carries the game.
            log.warning("table %s: image refused (missing Attach Files?); posting text only", table.id)
            message.embed.set_image(url=None)
            await self._post_table_message(table, message, repost, with_image=False)

    async def _post_table_message(self, table: Table, message: TableMessage, repost: bool, *,
                                  with_image: bool) -> None:
        def files() -> list[discord.File]:
            return [discord.File(io.BytesIO(message.image), filename="table.png")] if with_image else []

        if with_image:
            message.embed.set_image(url="attachment://table.png")
        messageable = self.where(table)
        old = table.messages.get("table")
        if old and not repost:
            try:
                await messageable.get_partial_message(old).edit(
                    content=message.content, embed=message.embed, attachments=files(), view=message.view)
                return
            except discord.NotFound:
                pass  # deleted: post it again below
        try:
            sent = await messageable.send(content=message.content, embed=message.embed, files=files(),
                                          view=message.view, allowed_mentions=NO_PINGS)
        except discord.NotFound:  # the thread is gone: open a new one
            await self._open_thread(table, again=True)
            messageable = self.where(table)
            sent = await messageable.send(content=message.content, embed=message.embed, files=files(),
                                          view=message.view, allowed_mentions=NO_PINGS)
        # Record the new message before the old one goes: the deletion event may
        # arrive before Discord's answer, and must not be taken for a user's.
        self.manager.set_message(table, "table", sent.id)
        await self.manager.save_messages(table)
        if old and repost:
            self._deleting.add(old)
            try:
                await messageable.get_partial_message(old).delete()
            except discord.HTTPException:
                pass
            finally:
                asyncio.get_running_loop().call_later(60, self._deleting.discard, old)

    async def _finish(self, table: Table) -> None:
        try:
            await self._show_standings(table)
        finally:
            await self.manager.ended(table)

    async def _show_standings(self, table: Table) -> None:
        lobby = table.messages.get("lobby")
        if not lobby:
            return
        embed = self.lobby_embed(table)
        result = table.engine.result if table.engine else None
        if result is not None:
            lang = table.locale
            order = sorted(range(len(table.seats)), key=lambda s: (result.places[s], s))
            embed.description = t(lang, "table.finished") + "\n" + "\n".join(
                t(lang, "table.standing", place=result.places[s], name=self.seat_name(table, s),
                  score=result.scores[s]) for s in order)
        again = view_of(TableButton.make(table.id, "again", t(table.locale, "table.again"),
                                         style=discord.ButtonStyle.success, emoji="🔁"))
        for extra in self.extras:
            await extra.standings(table, embed, again)
        try:
            await self.where(table, thread=False).get_partial_message(lobby).edit(embed=embed, view=again)
        except discord.HTTPException:
            log.info("lobby message of table %s could not be updated at the end", table.id)


async def setup(bot: Any) -> None:
    await bot.add_cog(TablesCog(bot))
