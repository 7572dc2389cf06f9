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
import io
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

import aiohttp
import discord
from discord.ext import commands

from app.i18n import normalise, t
from app.tables import LEVELS, Table, TableError, TableManager
from core.protocol import Event, GameError

log = logging.getLogger(__name__)

_ID = r"(?P<id>\d{1,20}):(?P<op>[a-z_]{1,16})(?::(?P<ver>\d{1,9}))?(?::(?P<arg>[A-Za-z0-9_.-]{1,40}))?"

# What the bot needs in a channel to host a table there.
NEEDED_PERMISSIONS = (
    "view_channel", "send_messages", "embed_links", "attach_files", "read_message_history",
    "create_public_threads", "send_messages_in_threads",
)


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
        await cog.route(interaction, self.table_id, self.op, self.ver, self.arg, list(self.item.values))


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

    key: str  # engine key, e.g. "nimmt"

    async def table_message(self, table: Table, lang: str) -> TableMessage: ...

    def narrate(self, table: Table, events: list[Event], lang: str) -> list[str]: ...

    def lobby_lines(self, table: Table, lang: str) -> list[str]: ...

    async def on_component(self, cog: "TablesCog", interaction: discord.Interaction, table: Table,
                           op: str, ver: int | None, arg: str | None, values: list[str]) -> None: ...


@dataclass
class _Presenter:
    """Per table: narration goes out in order; the table message is redrawn
    apart from it, coalescing changes, so a rate-limited edit never holds
    back a ping."""

    lines: list[str] = field(default_factory=list)
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
    try:
        if interaction.response.is_done():
            await interaction.followup.send(content, **kwargs)
        else:
            await interaction.response.send_message(content, **kwargs)
    except discord.HTTPException:
        log.warning("could not answer interaction %s", interaction.id, exc_info=True)


def chunk_lines(lines: Sequence[str], limit: int = 1900) -> list[str]:
    """Join lines into messages under Discord's 2,000 characters.

    >>> [len(m) for m in chunk_lines(["a" * 1000, "b" * 1000, "c"])]
    [1000, 1002]
    """
    out: list[str] = []
    current = ""
    for line in lines:
        line = line[:limit]
        if current and len(current) + 1 + len(line) > limit:
            out.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current:
        out.append(current)
    return out


class TablesCog(commands.Cog, name="Tables"):
    """Lobbies and tables of every game."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.uis: dict[str, GameUI] = {}
        self.presenters: dict[int, _Presenter] = {}
        self.manager: TableManager = bot.tables
        self.manager.listener = self.on_table_change

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(TableButton, TableSelect)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(TableButton, TableSelect)
        await self.stop_presenting()

    async def stop_presenting(self) -> None:
        """Stop posting (at shutdown); what was saved is shown again after a start."""
        tasks = [task for p in self.presenters.values() for task in (p.sender, p.updater) if task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.presenters.clear()

    def register(self, ui: GameUI) -> None:
        self.uis[ui.key] = ui

    # --------------------------------------------------------------- errors
    def error_text(self, lang: str, error: Exception) -> str:
        if isinstance(error, TableError):  # a code with a dot names its own catalogue key
            key = error.code if "." in error.code else f"errors.{error.code}"
            return t(lang, key, **error.params)
        if isinstance(error, GameError):
            key = f"errors.{error.code}"
            from app.i18n import has

            return t(lang, key) if has(key) else t(lang, "errors.illegal")
        return t(lang, "errors.unexpected")

    async def route(self, interaction: discord.Interaction, table_id: int, op: str, ver: int | None,
                    arg: str | None, values: list[str]) -> None:
        """Every table click lands here: one place turns errors into answers."""
        lang = user_lang(interaction)
        try:
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
        except discord.HTTPException:
            log.warning("Discord refused an answer at table %s (%s)", table_id, op, exc_info=True)
        except Exception:
            log.exception("click %s at table %s failed", op, table_id)
            await reply(interaction, t(lang, "errors.unexpected"))

    # ---------------------------------------------------------------- lobby
    def missing_permissions(self, interaction: discord.Interaction) -> list[str]:
        perms = interaction.app_permissions
        return [name for name in NEEDED_PERMISSIONS if not getattr(perms, name, False)]

    async def table_language(self, interaction: discord.Interaction) -> str:
        settings = await self.bot.store.guild_settings(interaction.guild_id)
        return normalise(settings.get("language") or interaction.guild_locale)

    async def create_table(self, interaction: discord.Interaction, game: str, *, seats: int,
                           rounds: int | None, turn_time: int, computers: int | Sequence[str] = 0,
                           invite: Sequence[int] = ()) -> None:
        """``/<game> new`` (and *Play again*): post a lobby in this channel."""
        lang = user_lang(interaction)
        channel = interaction.channel
        if interaction.guild_id is None or channel is None:
            return await reply(interaction, t(lang, "errors.guild_only"))
        if isinstance(channel, discord.Thread) or getattr(channel, "type", None) not in (
                discord.ChannelType.text, discord.ChannelType.news):
            return await reply(interaction, t(lang, "errors.text_channel_only"))
        missing = self.missing_permissions(interaction)
        if missing:
            names = ", ".join(t(lang, f"perms.{name}") for name in missing)
            return await reply(interaction, t(lang, "errors.missing_permissions", permissions=names))
        try:
            table_lang = await self.table_language(interaction)
            table = await self.manager.create(
                guild_id=interaction.guild_id, channel_id=channel.id, game=game,
                host_id=interaction.user.id, host_name=interaction.user.display_name,
                seats=seats, rounds=rounds, turn_time=turn_time, locale=table_lang)
        except TableError as error:
            orphan = self.manager.in_channel(channel.id)
            if not (error.code == "channel_busy" and orphan is not None and orphan.status == "lobby"
                    and not orphan.messages.get("lobby")):
                return await reply(interaction, self.error_text(lang, error))
            table = orphan  # saved, but its message was never posted (a stop in between): post it now
        for level in (["normal"] * computers if isinstance(computers, int) else computers):
            await self.manager.add_computer(table, table.host_id, level)
        content = None
        if invite:
            content = t(table.locale, "table.again_invite", host=f"<@{table.host_id}>",
                        mentions=" ".join(f"<@{user_id}>" for user_id in invite))
        try:
            response = await interaction.response.send_message(
                content=content, embed=self.lobby_embed(table), view=self.lobby_view(table),
                allowed_mentions=discord.AllowedMentions(users=True, everyone=False, roles=False))
        except discord.HTTPException:
            log.warning("lobby message for table %s could not be posted", table.id, exc_info=True)
            await self.manager.cancel(table, table.host_id, can_manage=True)
            return
        message_id = getattr(response, "message_id", None)
        if message_id is None:
            message_id = (await interaction.original_response()).id
        self.manager.set_message(table, "lobby", message_id)
        await self.manager.save_messages(table)

    def lobby_embed(self, table: Table) -> discord.Embed:
        lang = table.locale
        title = t(lang, f"{table.game}.title")
        embed = discord.Embed(title=t(lang, "table.lobby_title", game=title, table=table.id),
                              colour=discord.Colour.blurple())
        turn = table.options.get("turn_time", 0)
        timer = t(lang, "table.timer_off") if not turn else t(lang, "table.timer_seconds", count=turn)
        desc = [t(lang, "table.lobby_host", host=f"<@{table.host_id}>"),
                t(lang, "table.lobby_seats", taken=len(table.seats), seats=table.max_seats),
                t(lang, "table.lobby_timer", timer=timer),
                *self.uis[table.game].lobby_lines(table, lang)]
        if table.options.get("hints"):
            desc.append(t(lang, "ai.hints_on"))
        if table.status == "cancelled":
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
        return discord.utils.escape_markdown(seat.name)

    def lobby_view(self, table: Table) -> discord.ui.View | None:
        if table.status != "lobby":
            return None
        lang = table.locale
        B = discord.ButtonStyle
        hints = bool(table.options.get("hints"))
        levels = [discord.SelectOption(label=t(lang, "ai.add_level", level=t(lang, f"ai.level_{level}")),
                                       value=level, description=t(lang, f"ai.desc_{level}"), emoji="🤖")
                  for level in LEVELS]
        return view_of(
            TableButton.make(table.id, "join", t(lang, "table.join"), style=B.success, row=0),
            TableButton.make(table.id, "leave", t(lang, "table.leave"), row=0),
            TableButton.make(table.id, "cpu", t(lang, "table.add_computer"), row=0),  # a normal one
            TableButton.make(table.id, "start", t(lang, "table.start"), style=B.primary, row=0),
            TableButton.make(table.id, "cancel", t(lang, "table.cancel"), style=B.danger, row=0),
            TableButton.make(table.id, "rules", t(lang, "table.rules"), emoji="📖", row=1),
            TableButton.make(table.id, "hints", t(lang, "ai.hints_button_on" if hints else "ai.hints_button_off"),
                             emoji="💡", style=B.success if hints else B.secondary, arg="off" if hints else "on",
                             row=1),
            TableSelect.make(table.id, "cpu", t(lang, "ai.add_computer"), levels, row=2),  # at a chosen level
        )

    async def _lobby_update(self, interaction: discord.Interaction, table: Table) -> None:
        await interaction.response.edit_message(embed=self.lobby_embed(table), view=self.lobby_view(table))

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
        perms = getattr(interaction.user, "guild_permissions", None) or discord.Permissions.none()
        channel_perms = interaction.permissions
        can_manage = bool(channel_perms.manage_messages or perms.manage_messages or perms.administrator)
        await self.manager.cancel(table, interaction.user.id, can_manage=can_manage)
        if interaction.message is not None and interaction.message.id == table.messages.get("lobby"):
            await self._lobby_update(interaction, table)
        else:
            await reply(interaction, t(user_lang(interaction), "table.cancelled"))

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
            from app.tables import Seat

            game, options, max_seats = record.game, record.meta["options"], record.meta["max_seats"]
            seats = [Seat.from_dict(s) for s in record.meta["seats"]]
        if not any(seat.user_id == interaction.user.id for seat in seats):
            raise TableError("not_seated")
        await self.create_table(
            interaction, game, seats=max_seats, rounds=options.get("rounds"),
            turn_time=options.get("turn_time", 0), computers=[s.level for s in seats if s.computer],
            invite=[s.user_id for s in seats if s.user_id not in (None, interaction.user.id)])

    async def op_back(self, interaction: discord.Interaction, table: Table) -> None:
        await self.manager.back(table, interaction.user.id)
        await reply(interaction, t(user_lang(interaction), "table.welcome_back"))

    # ------------------------------------------------------------ presenting
    def on_table_change(self, table: Table, events: list[Event]) -> None:
        """Listener of the manager: narrate now, present in the background."""
        if table.status == "lobby":
            return  # lobby changes are shown by the interaction that made them
        presenter = self.presenters.setdefault(table.id, _Presenter())
        kinds = {e.get("type") for e in events}
        if "started" in kinds:
            presenter.need_thread = True
        if kinds & {"round_start", "hand_start"}:
            presenter.repost = True  # a fresh table message each round (old messages edit slowly)
        presenter.lines.extend(self.narrate(table, events))
        ping = self.ping_line(table, events)
        if ping:
            presenter.lines.append(ping)
        if table.status != "cancelled":
            presenter.table_dirty = True
        if presenter.sender is None or presenter.sender.done():
            presenter.sender = asyncio.get_running_loop().create_task(self._sender(table, presenter))
        changed = getattr(self.uis[table.game], "changed", None)
        if changed is not None:
            changed(table)  # e.g. private panels that keep themselves current

    async def _sender(self, table: Table, presenter: _Presenter) -> None:
        failures = 0
        while True:
            try:
                if presenter.need_thread:
                    presenter.need_thread = False
                    again, presenter.again = presenter.again, False
                    await self._open_thread(table, again=again)
                lines, presenter.lines = presenter.lines, []
                unsent: list[str] = []
                if lines and (table.status != "cancelled" or table.thread_id):
                    unsent = await self._send(table, lines)
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

    def redraw(self, table: Table, *, new_thread: bool = False, repost: bool = True, ping: bool = True) -> None:
        """Show the table again (its message or thread was deleted, or the bot restarted)."""
        if table.status != "playing":
            return
        presenter = self.presenters.setdefault(table.id, _Presenter())
        if new_thread:
            presenter.need_thread = presenter.again = True
        elif not table.thread_id:  # e.g. a stop between Start and the thread: open it now
            presenter.need_thread = True
        presenter.repost = presenter.repost or repost
        presenter.table_dirty = True
        line = self.ping_line(table, [{"type": "turn"}]) if ping else None
        if line:
            presenter.lines.append(line)
        if presenter.sender is None or presenter.sender.done():
            presenter.sender = asyncio.get_running_loop().create_task(self._sender(table, presenter))

    @commands.Cog.listener()
    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        for table in list(self.manager.tables.values()):
            if table.thread_id == payload.thread_id and table.status == "playing":
                log.info("thread of table %s was deleted; opening a new one", table.id)
                self.manager.set_message(table, "thread", None)
                self.redraw(table, new_thread=True)

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        for table in list(self.manager.tables.values()):
            if table.messages.get("table") == payload.message_id and table.status == "playing":
                log.info("table message of table %s was deleted; posting it again", table.id)
                self.manager.set_message(table, "table", None)
                self.redraw(table)

    async def _updater(self, table: Table, presenter: _Presenter) -> None:
        failures = 0
        while presenter.table_dirty:
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
            elif kind == "started":
                lines.append(t(lang, "table.game_started", game=t(lang, f"{table.game}.title")))
            else:
                ui_events.append(event)
        lines.extend(self.uis[table.game].narrate(table, ui_events, lang))
        return lines

    def ping_line(self, table: Table, events: list[Event]) -> str | None:
        engine = table.engine
        if engine is None or table.status != "playing":
            return None
        seat = engine.to_move
        if seat is None or table.seats[seat].automatic:
            return None
        new_turn = any(e.get("type") in ("turn", "round_start", "hand_start", "started", "back")
                       for e in events)
        if not new_turn:
            return None
        line = t(table.locale, "table.your_turn", mention=f"<@{table.seats[seat].user_id}>")
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

    async def _send(self, table: Table, lines: list[str]) -> list[str]:
        """Post narration in order; returns the chunks Discord did not take."""
        mentions = discord.AllowedMentions(users=True, everyone=False, roles=False)
        chunks = chunk_lines(lines)
        for index, text in enumerate(chunks):
            try:
                try:
                    await self.where(table).send(text, allowed_mentions=mentions)
                except discord.NotFound:
                    # The thread was deleted: open a new one and go on there.
                    await self._open_thread(table, again=True)
                    await self.where(table).send(text, allowed_mentions=mentions)
            except TRANSIENT as error:
                log.warning("narration of table %s failed (%r)", table.id, error)
                return chunks[index:]
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
                starter = await channel.send(t(lang, "table.moved", table=table.id))
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
                                          view=message.view)
        except discord.NotFound:  # the thread is gone: open a new one
            await self._open_thread(table, again=True)
            messageable = self.where(table)
            sent = await messageable.send(content=message.content, embed=message.embed, files=files(),
                                          view=message.view)
        if old and repost:
            try:
                await messageable.get_partial_message(old).delete()
            except discord.HTTPException:
                pass
        self.manager.set_message(table, "table", sent.id)
        await self.manager.save_messages(table)

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
        try:
            await self.where(table, thread=False).get_partial_message(lobby).edit(embed=embed, view=again)
        except discord.HTTPException:
            log.info("lobby message of table %s could not be updated at the end", table.id)


async def setup(bot: Any) -> None:
    await bot.add_cog(TablesCog(bot))
