"""Game nights: ``/night start``, ``/night standings``, the sign-up message,
the night standings message and the recap.  Thin: each click is one call on
the :class:`~app.night_host.NightHost`; tables are opened through the table
manager and then shown by the table cog exactly like tables a game's ``new``
command opens.

Buttons are ``night:<id>:<op>`` DynamicItems, one class per button, and the
menu of the filling computers' level is ``night:<id>:level``, so they keep
working after a restart.
"""
from __future__ import annotations

import asyncio
import datetime
import io
import logging
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, ClassVar, Self, cast

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app.i18n.catalogue import has, t
from app.nights.host import BREAK_SECONDS, REMIND_BEFORE, NightHost
from app.nights.night import ENDED, PLAYING, Missed, Night, NightError, NightTable, Standing, standings
from app.nights.when import parse_start
from app.tables.manager import LEVELS, Table, TableError, counting_saves
from cogs.common.parts import parts
from cogs.common.ui import TRANSIENT, defer_when_slow, given, owed, reply, update_message, user_lang
from cogs.guard import ID_PATTERN, BadInput, number
from cogs.tables.game_ui import seat_label, variant_choices, variant_line
from cogs.tables.presenter import backoff, until_it_lands
from cogs.tables.router import error_text as table_error_text
from core import registry
from core.protocol import to_act

log = logging.getLogger(__name__)

SHOWN_ROWS = 30  # standings lines in a message (the recap image shows the top too)
#: how long a night's event in the server's calendar lasts (seconds, times the time scale)
EVENT_LENGTH = 3 * 3600.0
LIVE_SHOWN = 20  # live tables named one by one in the standings (the rest are counted)
PROGRESS_EVERY = 3.0  # seconds: the standings follow the live tables at most this often
MENTIONS_PER_MESSAGE = 80  # a reminder's pings per message at most (also within MESSAGE_LIMIT)
MESSAGE_LIMIT = 2000  # characters of a message's content
EVENT_STATUS = {"active": 2, "completed": 3, "canceled": 4}
#: after Discord refused to change a night's event (403: the bot may not edit events any
#: more; another 4xx): seconds (times the time scale) before it is asked again, doubling
#: with each refusal, up to the second figure; a 5xx waits as a table's messages do
EVENT_RETRY, EVENT_RETRY_MAX = 600.0, 6 * 3600.0
STARTS_AT = "When round 1 starts by itself: a <t:…> timestamp, a Unix time or 2026-12-05 20:00+01:00"


def points_text(value: float, lang: str) -> str:
    """The points of a standing, in the reader's decimals.

    >>> points_text(7.0, "en"), points_text(2.5, "de")
    ('7', '2,5')
    """
    text = f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    return text.replace(".", t(lang, "stats.decimal_mark"))


def ping_chunks(text: str, role: int | None, users: list[int]) -> list[list[int]]:
    """The users a reminder pings, message by message: each message is ``text``
    and its pings (the role in the first), within Discord's 2,000 characters
    and :data:`MENTIONS_PER_MESSAGE` users (an allowed_mentions list holds 100).

    >>> [len(c) for c in ping_chunks("x" * 100, 1, [10**18 + i for i in range(85)])]
    [80, 5]
    >>> [len(c) for c in ping_chunks("x" * 1000, None, [10**18 + i for i in range(85)])]
    [43, 42]
    >>> ping_chunks("x", 1, []), ping_chunks("x", None, [7])
    ([[]], [[7]])
    """
    chunks: list[list[int]] = [[]]
    size = len(text) + 1 + (len(f"<@&{role}>") if role is not None else 0)
    for user in users:
        mention = len(f"<@{user}>") + 1
        if chunks[-1] and (len(chunks[-1]) >= MENTIONS_PER_MESSAGE or size + mention > MESSAGE_LIMIT):
            chunks.append([])
            size = len(text) + 1
        chunks[-1].append(user)
        size += mention
    return chunks


def escape(name: str) -> str:
    return discord.utils.escape_mentions(discord.utils.escape_markdown(name))


class _NightItem:
    """What every item of a sign-up message shares: its night's id from the
    custom id, and a click goes through :meth:`NightCog.route` to ``run``."""

    op: ClassVar[str] = ""
    night_id: int

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> Self:
        make = cast(Callable[[int], Self], cls)  # every item's constructor takes its night's id first
        return make(int(match["id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = parts(interaction.client).night
        await cog.route(interaction, self.night_id, self)

    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        raise NotImplementedError


class NightButton(_NightItem, discord.ui.DynamicItem[discord.ui.Button], template=r"(?!)"):
    """A button of a night's sign-up message, ``night:<id>:<op>``: one
    subclass per button, each with its own template, registered by this cog
    and calling its own method of the cog (no op looked up by name)."""

    items: ClassVar[list[type["NightButton"]]] = []

    def __init_subclass__(cls, *, op: str, **kwargs: Any) -> None:
        cls.op = op
        super().__init_subclass__(template=rf"night:(?P<id>{ID_PATTERN}):{op}", **kwargs)
        NightButton.items.append(cls)

    def __init__(self, night_id: int, label: str = "-",
                 style: discord.ButtonStyle = discord.ButtonStyle.secondary, row: int | None = None,
                 emoji: str | None = None) -> None:
        super().__init__(discord.ui.Button(label=label[:80], style=style, row=row, emoji=emoji,
                                           custom_id=f"night:{night_id}:{self.op}"))
        self.night_id = night_id


class JoinNight(NightButton, op="join"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_join(interaction, night)


class LeaveNight(NightButton, op="leave"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_leave(interaction, night)


class SeatVoice(NightButton, op="voice"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_voice(interaction, night)


class RemindNight(NightButton, op="remind"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_remind(interaction, night)


class WatchNight(NightButton, op="watch"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_watch(interaction, night)


class FillNight(NightButton, op="fill"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_fill(interaction, night)


class AutoNight(NightButton, op="auto"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_auto(interaction, night)


class NightSelect(_NightItem, discord.ui.DynamicItem[discord.ui.Select], template=r"(?!)"):
    """A menu of a night's sign-up message, ``night:<id>:<op>``: one subclass
    per menu, as the buttons."""

    def __init_subclass__(cls, *, op: str, **kwargs: Any) -> None:
        cls.op = op
        super().__init_subclass__(template=rf"night:(?P<id>{ID_PATTERN}):{op}", **kwargs)

    def __init__(self, night_id: int, placeholder: str = "-",
                 options: list[discord.SelectOption] | None = None, row: int | None = None) -> None:
        super().__init__(discord.ui.Select(custom_id=f"night:{night_id}:{self.op}", placeholder=placeholder[:150],
                                           options=options or [discord.SelectOption(label="-")], row=row))
        self.night_id = night_id

    @property
    def choice(self) -> str:
        """The one value chosen ("" for a forged id sent as a button, which has none)."""
        values = list(self.item.values)
        return values[0] if len(values) == 1 else ""


class NightLevel(NightSelect, op="level"):
    """The menu of the level the night's computers play at."""

    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_level(interaction, night, self.choice)


class NightRemove(NightSelect, op="remove"):
    """The organiser's menu of the signed-up players: takes someone who is
    not there off the night."""

    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        try:
            user_id = number(self.choice)
        except BadInput:
            raise NightError("gone") from None
        await cog.op_remove(interaction, night, user_id)


class NightRemoveAnyone(_NightItem, discord.ui.DynamicItem[discord.ui.UserSelect],
                        template=rf"night:(?P<id>{ID_PATTERN}):remove_user"):
    """The same for a night of more sign-ups than a menu holds (25): Discord's
    own member picker, searchable by name; someone picked who is not signed up
    is told so."""

    op = "remove_user"

    def __init__(self, night_id: int, placeholder: str = "-", row: int | None = None) -> None:
        super().__init__(discord.ui.UserSelect(custom_id=f"night:{night_id}:{self.op}",
                                               placeholder=placeholder[:150], row=row))
        self.night_id = night_id

    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        picked = list(self.item.values)
        if len(picked) != 1:  # a forged id sent as a button carries none
            raise NightError("gone")
        await cog.op_remove(interaction, night, picked[0].id)


class StartRound(NightButton, op="start"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_start(interaction, night)


class EndNight(NightButton, op="end"):
    async def run(self, cog: "NightCog", interaction: discord.Interaction, night: Night) -> None:
        await cog.op_end(interaction, night)


@dataclass
class _Refusal:
    """Discord refused to change a night's event: why (``forbidden``: 403, the bot lost
    Manage Events; ``refused``: another 4xx; ``failed``: 5xx or no answer), how many
    times in a row, and from when (loop time) it may be asked again."""
    reason: str
    tries: int
    due: float


@dataclass
class _Presenter:
    signup: bool = False
    standings: bool = False
    recap: bool = False
    task: asyncio.Task[None] | None = None


def can_manage(interaction: discord.Interaction) -> bool:
    perms = interaction.permissions
    return bool(perms.manage_events or perms.manage_messages or perms.administrator)


class NightCog(commands.Cog, name="Night"):
    night = app_commands.Group(name=_("night", key="nights.cmd_night.name"),
                               description=_("Game nights: many tables at once, one standings",
                                             key="nights.cmd_night.description"),
                               guild_only=True)

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.host: NightHost = bot.nights
        self.presenters: dict[int, _Presenter] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._startup: asyncio.Task[None] | None = None
        self._event_locks: dict[int, asyncio.Lock] = {}  # one change of a night's event at a time
        self._refused: dict[int, _Refusal] = {}  # nights whose event Discord refused to change
        self._event_retries: dict[int, asyncio.Task[None]] = {}  # their next try, once it is due
        self._progress: set[int] = set()  # nights whose standings follow their live tables shortly
        self._telling: set[int] = set()  # nights whose organiser is being told why the first round did not start

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(*NightButton.items, NightLevel, NightRemove, NightRemoveAnyone)
        parts(self.bot).loaded_night = self
        self._set_game_choices()
        if isinstance(self.host, NightHost):
            self.host.listener = self.on_night_change
            self.host.round_started = self._launch  # a round that started by itself: announce, start
            self.host.remind = self.send_reminder
            self._startup = asyncio.get_running_loop().create_task(self._resume())
            getattr(self.bot, "listings", []).append(self.listing)
            tables = parts(self.bot).loaded_tables
            if tables is not None:
                tables.extras.append(self)  # the live tables' lines in the standings

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(*NightButton.items, NightLevel, NightRemove, NightRemoveAnyone)
        if parts(self.bot).loaded_night is self:
            parts(self.bot).loaded_night = None
        if self.listing in getattr(self.bot, "listings", []):
            self.bot.listings.remove(self.listing)
        tables = parts(self.bot).loaded_tables
        if tables is not None and self in tables.extras:
            tables.extras.remove(self)
        await self.stop_presenting()

    async def stop_presenting(self) -> None:
        tasks = [p.task for p in self.presenters.values() if p.task] + list(self._tasks)
        if self._startup is not None:
            tasks.append(self._startup)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _set_game_choices(self) -> None:
        """The games a night can be played in: whatever the bot's table manager hosts."""
        games = list(getattr(self.bot.tables, "games", {}) or {})
        tables = parts(self.bot).loaded_tables
        uis = tables.uis if tables is not None else None
        if uis:  # a game the bot can host and show
            games = [key for key in games if key in uis]
        choices = []
        for key in games:
            choice_key = f"commands.choice_{key}.name"
            english = t("en", choice_key) if has(choice_key) else t("en", f"{key}.title")
            choices.append(app_commands.Choice(name=_(english, key=choice_key), value=key))
        for command in self.night.commands:
            param = getattr(command, "_params", {}).get("game")
            if param is not None and choices:
                param.choices = choices[:25]

    # ------------------------------------------------------------- commands
    @night.command(name=_("start", key="nights.cmd_night_start.name"),
                   description=_("Open a game night in this channel: sign-up, then rounds of tables",
                                 key="nights.cmd_night_start.description"))
    @app_commands.rename(game=_("game", key="commands.opt_game.name"),
                         table_size=_("table_size", key="nights.opt_table_size.name"),
                         rounds=_("rounds", key="commands.opt_rounds.name"),
                         turn_time=_("turn_time", key="commands.opt_turn_time.name"),
                         starts_in=_("starts_in", key="nights.opt_starts_in.name"),
                         starts_at=_("starts_at", key="nights.opt_starts_at.name"),
                         remind_role=_("remind_role", key="nights.opt_remind_role.name"),
                         variant=_("variant", key="commands.opt_variant.name"))
    @app_commands.describe(game=_("Which game the night plays", key="nights.opt_night_game.description"),
                           table_size=_("Players per table (as even as possible within the game's limits)",
                                        key="nights.opt_table_size.description"),
                           rounds=_("Rounds of the night (default: until the organiser ends it)",
                                    key="nights.opt_night_rounds.description"),
                           turn_time=_("Seconds per turn before the computer plays for you (0 = no timer)",
                                       key="commands.opt_turn_time.description"),
                           starts_in=_("Minutes until the first round starts by itself (default: the organiser "
                                       "starts it)", key="nights.opt_starts_in.description"),
                           starts_at=_(STARTS_AT, key="nights.opt_starts_at.description"),
                           remind_role=_("A role the reminder before the first round pings (with a start time)",
                                         key="nights.opt_remind_role.description"),
                           variant=_("A table variant of the night's game (default: the standard game)",
                                     key="nights.opt_night_variant.description"))
    @app_commands.choices(variant=variant_choices(*registry.GAMES))
    async def start(self, interaction: discord.Interaction, game: str,
                    table_size: app_commands.Range[int, 2, 12] | None = None,
                    rounds: app_commands.Range[int, 1, 20] | None = None,
                    turn_time: app_commands.Range[int, 0, 3600] = 120,
                    starts_in: app_commands.Range[int, 1, 1440] | None = None,
                    remind_role: discord.Role | None = None, variant: str | None = None,
                    starts_at: app_commands.Range[str, 1, 100] | None = None) -> None:
        lang = user_lang(interaction)
        try:
            at = None if starts_at is None else parse_start(starts_at)
        except NightError as error:
            return await reply(interaction, self.error_text(lang, error))
        if remind_role is not None and starts_in is None and at is None:
            return await reply(interaction, t(lang, "nights.error_role_needs_time"))
        if remind_role is not None and remind_role.is_default():  # @everyone is never pinged
            return await reply(interaction, t(lang, "nights.error_role_everyone"))
        channel = interaction.channel
        lobby = parts(self.bot).tables.lobby
        refusal = lobby.hosting_refusal(interaction)
        if refusal is not None:
            return await reply(interaction, refusal)
        assert channel is not None and interaction.guild_id is not None
        orphan = self.host.in_channel(channel.id)
        defer_when_slow(interaction)  # a database locked elsewhere: "thinking..." within 3 s
        try:
            if orphan is not None and not await self._signup_exists(orphan):
                # saved, but a stop came before its message was posted, or someone deleted it:
                # post it (again) instead of a night nobody could control any more
                night = orphan
            else:
                night_lang = await lobby.table_language(interaction)
                night = await self.host.create(
                    guild_id=interaction.guild_id, channel_id=channel.id, game=game,
                    organiser_id=interaction.user.id, organiser_name=interaction.user.display_name,
                    table_size=table_size, rounds=rounds, turn_time=turn_time, locale=night_lang,
                    starts_in=None if starts_in is None else 60.0 * starts_in,
                    remind_role=None if remind_role is None else remind_role.id, variant=variant, starts_at=at)
        except (NightError, TableError) as error:
            return await reply(interaction, self.error_text(lang, error))
        shown = self.host.shown(night)
        embed, view = self.signup_embed(shown), self.signup_view(shown)
        if interaction.response.is_done():  # deferred while the database was slow: the sign-up fills it
            interaction.extras.pop("thinking", None)
            message_id = (await interaction.edit_original_response(embed=embed, view=view)).id
        else:
            response = await interaction.response.send_message(embed=embed, view=given(view))
            posted: int | None = getattr(response, "message_id", None)
            message_id = posted if posted is not None else (await interaction.original_response()).id
        night.messages["signup"] = message_id
        await self.host.save_messages(night)
        notes = []
        if night.first_start() is not None and night.event_id is None:
            notes.append(await self.add_to_calendar(interaction, night, lang))
        if remind_role is not None and not remind_role.mentionable and not interaction.app_permissions.mention_everyone:
            notes.append(t(lang, "nights.role_not_mentionable", role=remind_role.mention))
        notes = [note for note in notes if note]
        if notes:
            await reply(interaction, "\n".join(notes))

    @night.command(name=_("reschedule", key="nights.cmd_night_reschedule.name"),
                   description=_("Move the first round of this channel's game night (and its calendar event)",
                                 key="nights.cmd_night_reschedule.description"))
    @app_commands.rename(starts_in=_("starts_in", key="nights.opt_starts_in.name"),
                         starts_at=_("starts_at", key="nights.opt_starts_at.name"))
    @app_commands.describe(starts_in=_("Minutes from now until the first round starts by itself",
                                       key="nights.opt_reschedule_starts_in.description"),
                           starts_at=_(STARTS_AT, key="nights.opt_starts_at.description"))
    async def reschedule(self, interaction: discord.Interaction,
                         starts_in: app_commands.Range[int, 1, 1440] | None = None,
                         starts_at: app_commands.Range[str, 1, 100] | None = None) -> None:
        lang = user_lang(interaction)
        night = self.host.in_channel(interaction.channel_id or 0)
        if night is None:
            return await reply(interaction, t(lang, "nights.error_no_night"))
        defer_when_slow(interaction)
        try:
            at = None if starts_at is None else parse_start(starts_at)
            await self.host.reschedule(night, interaction.user.id, can_manage(interaction),
                                       None if starts_in is None else 60.0 * starts_in, at)
        except (NightError, TableError) as error:
            return await reply(interaction, self.error_text(lang, error))
        start = int(night.first_start() or 0)
        lines = [t(lang, "nights.rescheduled", when=f"<t:{start}:F>", relative=f"<t:{start}:R>")]
        if night.event_id is None:
            lines.append(await self.add_to_calendar(interaction, night, lang))
        else:
            refused = await self.sync_event(night)
            if refused:
                lines.append(t(lang, f"nights.{refused}"))
        await reply(interaction, "\n".join(line for line in lines if line))

    @night.command(name=_("standings", key="nights.cmd_night_standings.name"),
                   description=_("The standings of this channel's current or last game night",
                                 key="nights.cmd_night_standings.description"))
    async def standings_command(self, interaction: discord.Interaction) -> None:
        lang = user_lang(interaction)
        night = self.host.in_channel(interaction.channel_id or 0)
        if night is None:
            row = await self.bot.store.night_in_channel(interaction.channel_id or 0)
            if row is not None:
                night = Night.from_record(row["id"], row["guild_id"], row["channel_id"], row["game"],
                                          row["status"], row["meta"])
        if night is None:
            return await reply(interaction, t(lang, "nights.error_no_night"))
        await reply(interaction, embed=self.standings_embed(self.host.shown(night), lang))

    # ---------------------------------------------------------------- clicks
    def error_text(self, lang: str, error: Exception) -> str:
        if isinstance(error, NightError):
            return t(lang, f"nights.error_{error.code}", **error.params)
        return table_error_text(lang, error)  # a table's refusal, a save the store refused

    async def route(self, interaction: discord.Interaction, night_id: int, item: _NightItem) -> None:
        with counting_saves() as saved:
            await self._route(interaction, night_id, item, saved)

    async def _route(self, interaction: discord.Interaction, night_id: int, item: _NightItem,
                     saved: list[bool]) -> None:
        lang = user_lang(interaction)
        op = item.op
        try:
            night = self.host.nights.get(night_id)
            if night is None or night.status == ENDED:
                raise NightError("ended")
            defer_when_slow(interaction)  # a database locked elsewhere: acknowledged within 3 s
            await item.run(self, interaction, night)
        except (NightError, TableError) as error:
            await reply(interaction, self.error_text(lang, error))
        except discord.HTTPException:
            log.warning("Discord refused an answer at night %s (%s)", night_id, op, exc_info=True)
        except Exception:
            log.exception("click %s at night %s failed", op, night_id)
            # after a save, the change happened: say so, not "nothing was changed"
            await reply(interaction, t(lang, "errors.unexpected_saved" if saved else "errors.unexpected"))

    async def _update(self, interaction: discord.Interaction, night: Night) -> None:
        shown = self.host.shown(night)
        await update_message(interaction, embed=self.signup_embed(shown), view=self.signup_view(shown))

    async def op_join(self, interaction: discord.Interaction, night: Night) -> None:
        await self.host.join(night, interaction.user.id, interaction.user.display_name)
        await self._update(interaction, night)

    async def op_leave(self, interaction: discord.Interaction, night: Night) -> None:
        await self.host.leave(night, interaction.user.id)
        await self._update(interaction, night)

    async def op_remove(self, interaction: discord.Interaction, night: Night, player_id: int) -> None:
        await self.host.remove(night, interaction.user.id, can_manage(interaction), player_id)
        await self._update(interaction, night)

    async def op_fill(self, interaction: discord.Interaction, night: Night) -> None:
        await self.host.toggle_fill(night, interaction.user.id, can_manage(interaction))
        await self._update(interaction, night)

    async def op_auto(self, interaction: discord.Interaction, night: Night) -> None:
        await self.host.toggle_auto(night, interaction.user.id, can_manage(interaction))
        await self._update(interaction, night)

    async def op_level(self, interaction: discord.Interaction, night: Night, level: str) -> None:
        await self.host.set_level(night, interaction.user.id, can_manage(interaction), level)
        await self._update(interaction, night)

    async def op_voice(self, interaction: discord.Interaction, night: Night) -> None:
        if not self.host.can_control(night, interaction.user.id, can_manage(interaction)):
            raise NightError("not_organiser")
        voice = getattr(interaction.user, "voice", None)
        channel = getattr(voice, "channel", None)
        if channel is None:
            raise NightError("no_voice")
        people: list[tuple[int, str]] = []
        guild = interaction.guild
        for user_id in channel.voice_states:
            member = guild.get_member(user_id) if guild is not None else None
            if member is None and guild is not None:
                try:
                    member = await guild.fetch_member(user_id)
                except discord.HTTPException:
                    continue
            if member is None or member.bot:
                continue
            people.append((member.id, member.display_name))
        await self.host.join_many(night, interaction.user.id, can_manage(interaction), people)
        await self._update(interaction, night)

    async def op_start(self, interaction: discord.Interaction, night: Night) -> None:
        await self.host.start_round(night, interaction.user.id, can_manage(interaction))
        await self._update(interaction, night)
        self._spawn(self._launch(night))

    async def op_end(self, interaction: discord.Interaction, night: Night) -> None:
        await self.host.end(night, interaction.user.id, can_manage(interaction))
        await self._update(interaction, night)
        await self._calendar_answer(interaction, night)

    async def op_remind(self, interaction: discord.Interaction, night: Night) -> None:
        on = await self.host.toggle_reminder(night, interaction.user.id)
        lang = user_lang(interaction)
        start = int(night.first_start() or 0)
        await reply(interaction, t(lang, "nights.remind_on" if on else "nights.remind_off",
                                   minutes=round(REMIND_BEFORE / 60), when=f"<t:{start}:R>"))
        self.on_night_change(night, "players")  # the sign-up counts them

    async def op_watch(self, interaction: discord.Interaction, night: Night) -> None:
        on = await self.host.toggle_watch(night, interaction.user.id, interaction.user.display_name)
        lang = user_lang(interaction)
        if not on:
            return await reply(interaction, t(lang, "nights.watch_off"))
        tables = ", ".join(self.table_ref(nt, lang) for nt in night.playing_tables()) or "-"
        await reply(interaction, t(lang, "nights.watch_on", tables=tables))

    async def _calendar_answer(self, interaction: discord.Interaction, night: Night) -> None:
        """After the organiser changed the night: its event follows, and when
        Discord refuses, they are told privately why."""
        refused = await self.sync_event(night)
        if refused:
            await reply(interaction, t(user_lang(interaction), f"nights.{refused}"))

    # ------------------------------------------------------------ the calendar
    def event_fields(self, night: Night) -> dict[str, Any]:
        """The night as an external Guild Scheduled Event: in its channel (name and link), from its first round."""
        lang = night.locale
        start = night.first_start() or self.host.clock()
        end = start + EVENT_LENGTH * self.host.tables.time_scale
        channel = self.bot.get_channel(night.channel_id)
        link = f"https://discord.com/channels/{night.guild_id}/{night.channel_id}"
        name = getattr(channel, "name", "") or str(night.channel_id)
        location = f"#{name[:max(1, 97 - len(link) - 3)]} · {link}"
        return {
            "name": t(lang, "nights.title", game=t(lang, f"{night.game}.title"))[:100],
            "description": t(lang, "nights.event_description", channel=f"#{name}",
                             minutes=round(REMIND_BEFORE / 60))[:1000],
            "privacy_level": discord.PrivacyLevel.guild_only.value,
            "entity_type": discord.EntityType.external.value,
            "entity_metadata": {"location": location[:100]},
            "scheduled_start_time": _iso(start),
            "scheduled_end_time": _iso(end),
        }

    async def add_to_calendar(self, interaction: discord.Interaction, night: Night, lang: str) -> str:
        """Put a night with a start time in the server's events; what to tell the
        organiser when it could not be ("" when it is in)."""
        perms = interaction.app_permissions
        if not (perms.manage_events or perms.create_events):
            return t(lang, "nights.calendar_missing")
        start = night.first_start()
        try:
            made = await self.bot.http.create_guild_scheduled_event(night.guild_id, **self.event_fields(night))
        except discord.Forbidden:
            return t(lang, "nights.calendar_missing")
        except discord.HTTPException:
            log.warning("night %s: its event was not created", night.id, exc_info=True)
            return t(lang, "nights.calendar_failed")
        await self.host.event_told(night, int(made["id"]), "scheduled", start)
        self.on_night_change(night, "players")  # the sign-up links the event
        return ""

    def _event_lock(self, night: Night) -> asyncio.Lock:
        return self._event_locks.setdefault(night.id, asyncio.Lock())

    async def sync_event(self, night: Night) -> str | None:
        """Bring the night's event in line with the night: a new start time,
        started (active) with its first round, completed when the night ends
        after one, cancelled when it ends before.  Returns the key of what to
        tell the organiser when Discord refused (None: in line, or no event).

        A refusal is remembered per night and per reason (:class:`_Refusal`): until
        its wait is over, later changes of the night do not ask Discord again (each
        refused request counts towards Discord's invalid-request limit); the change is
        tried once the wait is over, or at once when the bot's roles change."""
        async with self._event_lock(night):
            shown = self.host.shown(night)
            if shown.event_id is None or shown.event_status not in ("scheduled", "active"):
                return None
            change: dict[str, Any] = {}
            status, start = shown.event_status, shown.event_start
            if shown.status == ENDED:
                status = "completed" if shown.event_status == "active" else "canceled"
            elif shown.round or shown.status == PLAYING:
                status = "active"
            elif shown.next_at is None and shown.event_start is not None and shown.event_start <= self.host.clock():
                # its time came and the first round could not start (Discord keeps no start in the past):
                # the night is on, its sign-up open, so the event shows it happening
                status = "active"
            elif shown.first_start() is not None and shown.first_start() != shown.event_start:
                fields = self.event_fields(shown)
                change = {k: fields[k] for k in ("scheduled_start_time", "scheduled_end_time")}
                start = shown.first_start()
            if status != shown.event_status:
                change["status"] = EVENT_STATUS[status]
            if not change:
                self._event_settled(night)
                return None
            refusal = self._refused.get(night.id)
            if refusal is not None and asyncio.get_running_loop().time() < refusal.due:
                return _REFUSAL_KEYS[refusal.reason]  # (known: Discord is not asked again yet)
            try:
                await self.bot.http.edit_scheduled_event(shown.guild_id, shown.event_id, **change)
            except discord.NotFound:  # someone deleted it in Discord: nothing left to keep in step
                self._event_settled(night)
                await self.host.event_told(night, None, None, None)
                return None
            except discord.Forbidden:
                log.info("night %s: its event may not be changed", night.id)
                return self._event_refused(night, "forbidden")
            except discord.HTTPException as error:
                log.warning("night %s: its event was not changed (%s)", night.id, error)
                return self._event_refused(night, "failed" if error.status >= 500 else "refused")
            except TRANSIENT as error:
                log.warning("night %s: its event was not changed (%r)", night.id, error)
                return self._event_refused(night, "failed")
            self._event_settled(night)
            await self.host.event_told(night, shown.event_id, status, start)
            if status in ("completed", "canceled"):  # (over: nothing will change it again)
                self._event_locks.pop(night.id, None)
            return None

    def _event_refused(self, night: Night, reason: str) -> str:
        """Remember that Discord refused the night's event (the same reason again: the
        wait doubles) and try again once the wait is over; a new reason shows on the
        sign-up (what the bot is missing).  Returns the key of what to tell."""
        before = self._refused.get(night.id)
        tries = before.tries + 1 if before is not None and before.reason == reason else 1
        if reason == "failed":
            wait = backoff(tries)
        else:
            wait = min(EVENT_RETRY_MAX, EVENT_RETRY * 2 ** min(tries - 1, 16)) * self.host.tables.time_scale
        self._refused[night.id] = _Refusal(reason, tries, asyncio.get_running_loop().time() + wait)
        self._retry_event_in(night, wait)
        if before is None or before.reason != reason:
            self._redraw_signup(night)
        return _REFUSAL_KEYS[reason]

    def _event_settled(self, night: Night) -> None:
        """The night's event is in step (or gone): nothing refused is remembered."""
        retry = self._event_retries.pop(night.id, None)
        if retry is not None and retry is not asyncio.current_task():
            retry.cancel()
        if self._refused.pop(night.id, None) is not None:
            self._redraw_signup(night)

    def _retry_event_in(self, night: Night, wait: float) -> None:
        async def later() -> None:
            await asyncio.sleep(wait)
            await self.sync_event(night)

        old = self._event_retries.pop(night.id, None)
        if old is not None and old is not asyncio.current_task():
            old.cancel()
        task = asyncio.get_running_loop().create_task(later())
        self._event_retries[night.id] = task
        self._tasks.add(task)

        def done(task: asyncio.Task[None]) -> None:
            self._tasks.discard(task)
            if self._event_retries.get(night.id) is task:
                del self._event_retries[night.id]

        task.add_done_callback(done)

    def _redraw_signup(self, night: Night) -> None:
        presenter = self.presenters.setdefault(night.id, _Presenter())
        presenter.signup = True
        if presenter.task is None or presenter.task.done():
            presenter.task = asyncio.get_running_loop().create_task(self._present(night, presenter))

    def calendar_refused(self, night: Night) -> bool:
        """Whether the bot may not change the night's event any more (shown on its sign-up)."""
        refusal = self._refused.get(night.id)
        return refusal is not None and refusal.reason == "forbidden"

    @commands.Cog.listener()
    async def on_guild_role_update(self, before: discord.Role, after: discord.Role) -> None:
        """A role changed: if the bot may manage events again, the events it was refused follow now."""
        self._permissions_changed(after.guild)

    @commands.Cog.listener()
    async def on_member_update(self, before: discord.Member, after: discord.Member) -> None:
        if self.bot.user is not None and after.id == self.bot.user.id:
            self._permissions_changed(after.guild)

    def _permissions_changed(self, guild: discord.Guild) -> None:
        me = guild.me
        if me is None or not (me.guild_permissions.manage_events or me.guild_permissions.create_events):
            return
        for night_id, refusal in list(self._refused.items()):
            night = self.host.nights.get(night_id)
            if night is not None and night.guild_id == guild.id and refusal.reason == "forbidden":
                refusal.due = 0.0
                self._spawn(self.sync_event(night))

    async def send_reminder(self, night: Night) -> bool:
        """The reminder before the first round: one message pinging who pressed
        *Remind me* or *Interested* (and the organiser's role, if they chose one),
        never anyone else.  The same nonces on every try: sent once."""
        shown = self.host.shown(night)
        start = shown.first_start()
        if start is None or shown.status == ENDED:
            return True  # nothing to remind of any more
        users = shown.to_remind()
        if shown.event_id is not None:  # Interested while the bot was away
            try:
                async for user in self.event_users(shown):
                    if user not in users:
                        users.append(user)
            except discord.HTTPException:
                log.info("night %s: the event's interested users could not be read", night.id)
        lang = shown.locale
        link = f"https://discord.com/channels/{shown.guild_id}/{shown.channel_id}/{shown.messages.get('signup', '')}"
        text = t(lang, "nights.reminder", game=t(lang, f"{shown.game}.title"), when=f"<t:{int(start)}:R>",
                 link=link.rstrip("/"))
        for index, chunk in enumerate(ping_chunks(text, shown.remind_role, users)):
            role = shown.remind_role if index == 0 else None
            pings = ([f"<@&{role}>"] if role is not None else []) + [f"<@{u}>" for u in chunk]
            if not pings:
                continue
            mentions = discord.AllowedMentions(everyone=False, users=[discord.Object(u) for u in chunk],
                                               roles=[discord.Object(role)] if role is not None else False,
                                               replied_user=False)
            await self.where(night).send(content=f"{text}\n{' '.join(pings)}", allowed_mentions=mentions,
                                         nonce=f"remind-{night.id}-{index}"[:25])
        return True

    async def event_users(self, night: Night) -> Any:
        """The ids of everyone interested in the night's event, as Discord lists them (pages of 100)."""
        after = 0
        while True:
            page = await self.bot.http.get_scheduled_event_users(night.guild_id, night.event_id, 100, False,
                                                                 after=after)
            for entry in page:
                yield int(entry["user"]["id"])
            if len(page) < 100:
                return
            after = int(page[-1]["user"]["id"])

    def night_of_event(self, event_id: int) -> Night | None:
        return next((n for n in self.host.nights.values() if n.event_id == event_id), None)

    @commands.Cog.listener()
    async def on_raw_scheduled_event_user(self, data: dict[str, Any], interested: bool) -> None:
        """*Interested* on a night's event in Discord (or taken back): on the reminder's list."""
        night = self.night_of_event(int(data["guild_scheduled_event_id"]))
        if night is None:
            return
        try:
            await self.host.set_interest(night, int(data["user_id"]), interested)
        except TableError:  # not saved: the reminder reads Discord's list anyway
            log.warning("night %s: an interest was not saved", night.id)

    @commands.Cog.listener()
    async def on_scheduled_event_delete(self, event: discord.ScheduledEvent) -> None:
        """Someone deleted a night's event in Discord: the night no longer keeps it in step."""
        night = self.night_of_event(event.id)
        if night is not None:
            async with self._event_lock(night):
                await self.host.event_told(night, None, None, None)

    # ------------------------------------------------------------ messages
    def signup_embed(self, night: Night) -> discord.Embed:
        lang = night.locale
        game = t(lang, f"{night.game}.title")
        embed = discord.Embed(title=t(lang, "nights.title", game=game), colour=discord.Colour.gold())
        timer = (t(lang, "table.timer_off") if not night.turn_time
                 else t(lang, "table.timer_seconds", count=night.turn_time))
        rounds = (t(lang, "nights.rounds_open") if night.rounds is None
                  else t(lang, "nights.rounds_fixed", rounds=night.rounds))
        lines = [t(lang, "nights.organiser", organiser=f"<@{night.organiser_id}>"),
                 t(lang, "nights.table_size", size=night.table_size),
                 rounds,
                 t(lang, "table.lobby_timer", timer=timer),
                 self.fill_line(night, lang),
                 t(lang, "nights.auto_on", seconds=round(BREAK_SECONDS)) if night.auto else t(lang, "nights.auto_off"),
                 self.status_line(night, lang)]
        variant = variant_line(night.game, {"variant": night.variant}, lang)
        if variant:
            lines.insert(1, variant)
        if night.first_start() is not None or night.reminded:
            lines.append(t(lang, "nights.reminder_sent") if night.reminded
                         else t(lang, "nights.reminder_due", minutes=round(REMIND_BEFORE / 60),
                                count=len(night.to_remind())))
        if night.event_id is not None and night.event_status in ("scheduled", "active"):
            lines.append(t(lang, "nights.in_calendar",
                           link=f"https://discord.com/events/{night.guild_id}/{night.event_id}"))
            if self.calendar_refused(night):  # (once the bot may again, its event follows and this goes)
                lines.append(t(lang, "nights.calendar_stuck"))
        embed.description = "\n".join(lines)
        people = night.active()
        names = [escape(p.name) for p in people]
        value = ", ".join(names)
        if len(value) > 1000:
            value = value[:990].rsplit(", ", 1)[0] + " …"
        embed.add_field(name=t(lang, "nights.signed_up", count=len(people)), value=value or "-", inline=False)
        return embed

    def levelled(self, night: Night) -> bool:
        """The night's game has computers at levels (else its own computer player)."""
        players = getattr(self.bot.tables, "players", None)
        return players is not None and players.supports(night.game)

    def fill_line(self, night: Night, lang: str) -> str:
        if not night.fill:
            return t(lang, "nights.fill_off")
        if not self.levelled(night):
            return t(lang, "nights.fill_on", size=night.table_size)
        return t(lang, "nights.fill_on_level", size=night.table_size, level=t(lang, f"ai.level_{night.level}"))

    @staticmethod
    def next_line(night: Night, lang: str) -> str:
        """The countdown to a round that starts by itself (sign-up and standings)."""
        return t(lang, "nights.status_next", round=night.round, next=night.round + 1,
                 when=f"<t:{int(night.next_at or 0)}:R>")

    def status_line(self, night: Night, lang: str) -> str:
        if night.status == ENDED:
            return t(lang, "nights.status_ended")
        if night.status == PLAYING:
            return t(lang, "nights.status_playing", round=night.round)
        if night.round and night.next_at is not None:
            return self.next_line(night, lang)
        if night.round:
            return t(lang, "nights.status_between", round=night.round)
        if night.next_at is not None:
            return t(lang, "nights.status_first", when=f"<t:{int(night.next_at)}:F>",
                     relative=f"<t:{int(night.next_at)}:R>")
        return t(lang, "nights.status_signup")

    def signup_view(self, night: Night) -> discord.ui.View | None:
        if night.status == ENDED:
            return None
        lang = night.locale
        B = discord.ButtonStyle
        view = discord.ui.View(timeout=None)
        for item in (
            JoinNight(night.id, t(lang, "nights.join"), B.success, 0),
            LeaveNight(night.id, t(lang, "nights.leave"), B.secondary, 0),
            SeatVoice(night.id, t(lang, "nights.voice"), B.secondary, 0, "🔊"),
            *([RemindNight(night.id, t(lang, "nights.remind"), B.secondary, 0, "🔔")]
              if night.first_start() is not None and not night.reminded else []),
            FillNight(night.id, t(lang, "nights.fill"), B.secondary, 1, "🤖"),
            AutoNight(night.id, t(lang, "nights.auto"), B.success if night.auto else B.secondary, 1, "⏩"),
            StartRound(night.id, t(lang, "nights.start_round"), B.primary, 1),
            EndNight(night.id, t(lang, "nights.end"), B.danger, 1),
        ):
            view.add_item(item)
        if night.fill and self.levelled(night):  # the computers' level, for the rounds to come
            options = [discord.SelectOption(label=t(lang, "ai.add_level", level=t(lang, f"ai.level_{level}")),
                                            value=level, description=t(lang, f"ai.desc_{level}"), emoji="🤖",
                                            default=level == night.level)
                       for level in LEVELS]
            view.add_item(NightLevel(night.id, t(lang, "nights.level"), options, row=2))
        others = [p for p in night.active() if p.user_id != night.organiser_id]
        if len(others) > 25:  # more than a menu holds: Discord's member picker
            view.add_item(NightRemoveAnyone(night.id, t(lang, "nights.remove"), row=3))
        elif others:  # the organiser takes off someone who signed up and is not there
            options = [discord.SelectOption(label=p.name[:100], value=str(p.user_id), emoji="👤") for p in others]
            view.add_item(NightRemove(night.id, t(lang, "nights.remove"), options, row=3))
        return view

    def standing_line(self, row: Standing, lang: str) -> str:
        line = t(lang, "nights.standing", rank=row.rank, name=escape(row.name), count=row.points,
                 points=points_text(row.points, lang), wins=row.wins, games=row.games)
        return line + (" " + t(lang, "nights.left_mark") if row.left else "")

    def standings_embed(self, night: Night, lang: str) -> discord.Embed:
        game = t(lang, f"{night.game}.title")
        embed = discord.Embed(title=t(lang, "nights.standings_title", game=game), colour=discord.Colour.gold())
        lines = [t(lang, "nights.points_rule"), ""]
        if night.status == PLAYING:
            playing = [self.table_ref(nt, lang) for nt in night.playing_tables()]
            lines.append(t(lang, "nights.round_playing", round=night.round, tables=", ".join(playing) or "-"))
            lines += self.live_lines(night, lang)
        elif night.status == ENDED:
            lines.append(t(lang, "nights.status_ended"))
        elif night.round and night.next_at is not None:
            lines.append(self.next_line(night, lang))
        elif night.round:
            lines.append(t(lang, "nights.round_done", round=night.round))
        rows = standings(night)
        if rows:
            lines.append("")
            lines += [self.standing_line(row, lang) for row in rows[:SHOWN_ROWS]]
            if len(rows) > SHOWN_ROWS:
                lines.append(t(lang, "nights.more", count=len(rows) - SHOWN_ROWS))
        else:
            lines.append(t(lang, "nights.no_results"))
        embed.description = "\n".join(lines)[:4000]
        return embed

    def live_lines(self, night: Night, lang: str) -> list[str]:
        """Every live table of the round in one line each: how far its game is,
        who leads (fewest points), whose turn it is, and a link into its thread."""
        tables = parts(self.bot).loaded_tables
        uis = tables.uis if tables is not None else {}
        lines = []
        live = night.playing_tables()
        for nt in live[:LIVE_SHOWN]:
            table = self.bot.tables.get(nt.table_id)
            ui = uis.get(night.game)
            if table is None or table.engine is None or table.status != "playing" or ui is None:
                continue
            progress, scores = ui.progress(table, lang)
            best = min(scores) if scores else 0
            leaders = [seat_label(table, s, lang) for s, score in enumerate(scores) if score == best]
            acting = sorted(to_act(table.engine))
            turn = ", ".join(seat_label(table, s, lang) for s in acting) or "-"
            lines.append(t(lang, "nights.live_table", table=self.table_ref(nt, lang), progress=progress,
                           leader=", ".join(leaders), points=best, turn=turn))
        if len(live) > LIVE_SHOWN:
            lines.append(t(lang, "nights.live_more", count=len(live) - LIVE_SHOWN))
        return lines

    def table_ref(self, nt: NightTable, lang: str) -> str:
        """"Table 2 (#its-thread)", or a link to its message until the thread is open."""
        table = self.bot.tables.get(nt.table_id)
        name = t(lang, "nights.table_number", number=nt.number)
        if table is None:
            return name
        if table.thread_id:
            return f"{name} (<#{table.thread_id}>)"
        lobby = table.messages.get("lobby")
        if lobby:
            return f"[{name}](https://discord.com/channels/{table.guild_id}/{table.channel_id}/{lobby})"
        return name

    def listing(self, guild_id: int, lang: str, sees: Callable[[int], bool]) -> tuple[str, list[str]]:
        """``/table list``'s section: the server's game nights not over (in
        channels the user can see), how far they are, and where to sign up."""
        lines = []
        for night in list(self.host.nights.values()):
            if night.guild_id != guild_id or night.status == ENDED or not sees(night.channel_id):
                continue
            shown = self.host.shown(night)
            if shown.status == PLAYING:
                stage = t(lang, "nights.list_playing", round=shown.round)
            elif shown.round:
                stage = t(lang, "nights.list_between", round=shown.round)
            else:
                stage = t(lang, "nights.list_signup")
            message = shown.messages.get("signup")
            channel = f"<#{shown.channel_id}>"
            link = f"https://discord.com/channels/{guild_id}/{shown.channel_id}/{message}" if message else channel
            lines.append(t(lang, "nights.list_line", game=t(lang, f"{shown.game}.title"), channel=channel,
                           count=sum(1 for p in shown.players if not p.left), stage=stage, link=link))
        return t(lang, "nights.list_title"), lines

    # ------------------------------------------------------------ presenting
    # ------------------------------------------------ hooks of the table cog
    def table_message(self, table: Table, message: Any, lang: str) -> None:
        """A table of a night was redrawn: its standings follow (at most every
        :data:`PROGRESS_EVERY` seconds), so the live tables' lines stay current."""
        night = self.host.nights.get(table.night_id) if table.night_id is not None else None
        if night is None or night.status != PLAYING or night.id in self._progress:
            return
        self._progress.add(night.id)

        async def later() -> None:
            try:
                await asyncio.sleep(PROGRESS_EVERY)
            finally:
                self._progress.discard(night.id)
            self.on_night_change(night, "progress")

        self._spawn(later())

    def narrate(self, table: Table, events: list[dict[str, Any]], lang: str) -> list[str]:
        return []

    async def standings(self, table: Table, embed: discord.Embed, view: discord.ui.View) -> None:
        return None

    def on_night_change(self, night: Night, kind: str) -> None:
        if kind == "progress":  # only the live tables' lines changed
            presenter = self.presenters.setdefault(night.id, _Presenter())
            presenter.standings = True
            if presenter.task is None or presenter.task.done():
                presenter.task = asyncio.get_running_loop().create_task(self._present(night, presenter))
            return
        if night.event_id is not None:
            self._spawn(self.sync_event(night))
        if kind == "missed" or (kind == "resume" and night.missed is not None):
            self._spawn(self._tell_missed(night))
        presenter = self.presenters.setdefault(night.id, _Presenter())
        presenter.signup = True
        if night.round:
            presenter.standings = True
        if kind == "ended":
            presenter.recap = True
        if presenter.task is None or presenter.task.done():
            presenter.task = asyncio.get_running_loop().create_task(self._present(night, presenter))

    async def _tell_missed(self, night: Night) -> None:
        """The first round's time came and it could not start: the organiser is told
        why in the channel (pinged, nobody else), and that the sign-up stays open.  Why
        is saved with the night until they were told (:attr:`Night.missed`): a restart
        before tells them then, and the nonce from when it was missed posts it once."""
        if night.id in self._telling:
            return  # (being told: a note missed meanwhile follows)
        self._telling.add(night.id)
        try:
            while (missed := self.host.shown(night).missed) is not None:
                await self._post_missed(night, missed)
                await self.host.missed_told(night, missed)
                if self.host.shown(night).missed == missed:
                    return  # not saved as told: told again (once) after a restart
        finally:
            self._telling.discard(night.id)

    async def _post_missed(self, night: Night, missed: Missed) -> None:
        lang = night.locale
        text = t(lang, "nights.first_missed", organiser=f"<@{night.organiser_id}>",
                 why=t(lang, f"nights.error_{missed.code}", **missed.params), start=t(lang, "nights.start_round"))
        nonce = owed(night, "m", missed.at)  # (one nonce for every try, after a restart too: told once)

        async def attempt() -> None:
            try:
                await self.where(night).send(content=text, nonce=nonce, allowed_mentions=discord.AllowedMentions(
                    everyone=False, roles=False, users=[discord.Object(night.organiser_id)]))
            except discord.Forbidden:  # no later try would do better
                log.warning("night %s: the organiser may not be told that the first round did not start", night.id)

        await until_it_lands(f"night {night.id}: why its first round did not start", attempt)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def where(self, night: Night) -> discord.PartialMessageable:
        return self.bot.get_partial_messageable(night.channel_id, guild_id=night.guild_id,
                                                type=discord.ChannelType.text)

    async def _present(self, night: Night, presenter: _Presenter) -> None:
        """Show what the night's messages owe, one step at a time, standings first (the
        recap follows the final standings): each step is tried until it lands, as a
        table's messages are (:func:`~cogs.tables.presenter.until_it_lands`), drawn
        anew from the saved night at each try."""
        while presenter.signup or presenter.standings or presenter.recap:
            if presenter.standings:
                presenter.standings = False
                what, step = "standings", self._show_standings
            elif presenter.signup:
                presenter.signup = False
                what, step = "sign-up", self._show_signup
            else:
                presenter.recap = False
                what, step = "recap", self._post_recap
            try:
                await until_it_lands(f"night {night.id}: the {what}", lambda: step(night))
            except Exception:
                log.exception("night %s: presenting failed", night.id)
                return
        if night.status == ENDED and not night.recap_due and self.presenters.get(night.id) is presenter:
            del self.presenters[night.id]  # over, recap out: nothing of the night is kept

    async def _post_owed(self, night: Night, key: str, kind: str,
                         post: Callable[[str], Awaitable[discord.Message]]) -> None:
        """Post the night's ``key`` message (its sign-up, its standings) anew, named by a
        nonce from what is saved (:func:`~cogs.common.ui.owed`): a post whose
        answer was lost, or a kill before its id was saved, is not posted twice.  One
        that was there and is gone (deleted) is posted under the next serial, saved
        before it is posted."""
        serial = f"{key}#"
        if night.messages.get(key):
            del night.messages[key]
            night.messages[serial] = night.messages.get(serial, 0) + 1
            await self.host.save_messages(night)
        sent = await post(owed(night, kind, night.messages.get(serial, 0)))
        night.messages[key] = sent.id
        await self.host.save_messages(night)

    async def _signup_exists(self, night: Night) -> bool:
        message_id = night.messages.get("signup")
        if not message_id:
            return False
        try:
            await self.where(night).fetch_message(message_id)
        except discord.NotFound:
            return False
        except discord.HTTPException:
            return True  # (Discord failing: assume it is there, as before)
        return True

    async def _show_signup(self, night: Night) -> None:
        message_id = night.messages.get("signup")
        if not message_id and "signup#" not in night.messages:
            return  # (none yet: the command's answer posts it)
        shown = self.host.shown(night)
        embed, view = self.signup_embed(shown), self.signup_view(shown)
        if message_id:  # (else it was deleted and its repost has not landed yet)
            try:
                await self.where(night).get_partial_message(message_id).edit(embed=embed, view=view)
                return
            except discord.NotFound:
                log.info("night %s: the sign-up message is gone; posting it again", night.id)
        if night.status == ENDED:
            return  # nothing left to control: the standings and the recap say the rest
        await self._post_owed(night, "signup", "j", lambda nonce: self.where(night).send(
            embed=embed, view=given(view), nonce=nonce))

    def standings_view(self, night: Night) -> discord.ui.View | None:
        """*Watch* under the standings while the night runs: every live table, round after round."""
        if night.status == ENDED:
            return None
        view = discord.ui.View(timeout=None)
        view.add_item(WatchNight(night.id, t(night.locale, "nights.watch"), emoji="👀"))
        return view

    async def _show_standings(self, night: Night) -> None:
        shown = self.host.shown(night)
        embed, view = self.standings_embed(shown, night.locale), self.standings_view(shown)
        message_id = night.messages.get("standings")
        if message_id:
            try:
                await self.where(night).get_partial_message(message_id).edit(embed=embed, view=view)
                return
            except discord.NotFound:
                pass
        await self._post_owed(night, "standings", "s", lambda nonce: self.where(night).send(
            embed=embed, view=given(view), nonce=nonce))

    async def _post_recap(self, night: Night) -> None:
        if "recap" in night.messages or not night.recap_due:
            return
        from app.render import night as render_night, pool as render_pool

        lang = night.locale
        shown = self.host.shown(night)
        rows = standings(shown)
        lines = [self.highlight_text(h, lang) for h in await self.host.highlights(shown)]
        data = {
            "title": t(lang, "nights.recap_title", game=t(lang, f"{night.game}.title")),
            "subtitle": t(lang, "nights.recap_subtitle", rounds=shown.round, players=len(rows)),
            "podium": [(r.rank, r.name, points_text(r.points, lang)) for r in rows if r.rank <= 3],
            "header": (t(lang, "nights.col_rank"), t(lang, "nights.col_name"), t(lang, "nights.col_points"),
                       t(lang, "nights.col_wins"), t(lang, "nights.col_games")),
            "rows": [(r.rank, r.name, points_text(r.points, lang), r.wins, r.games) for r in rows[:12]],
            "highlights_title": t(lang, "nights.highlights"),
            "highlights": lines,
        }
        try:
            image: bytes | None = await render_pool.draw(render_night.render_recap, data)
        except Exception:  # e.g. a name the font engine cannot lay out: the text still goes out
            log.exception("night %s: the recap picture could not be drawn", night.id)
            image = None
        embed = discord.Embed(title=data["title"], colour=discord.Colour.gold())
        winners = [escape(r.name) for r in rows if r.rank == 1]  # a shared first place names them all
        text = [t(lang, "nights.recap_winner", name=", ".join(winners), count=len(winners)) if rows
                else t(lang, "nights.no_results")]
        text += [self.standing_line(row, lang) for row in rows[:10]]
        if lines:
            text += ["", f"**{data['highlights_title']}**", *(escape(line) for line in lines)]
        embed.description = "\n".join(text)[:4000]
        # The same nonce on every try, also after a restart: Discord posts a message
        # once per nonce (for a few minutes), so a kill between the post and the
        # saving of its id does not post the recap twice.
        nonce = f"recap-{night.id}"[:25]
        try:
            if image is None:
                sent = await self.where(night).send(embed=embed, nonce=nonce)
            else:
                embed.set_image(url="attachment://night.png")
                sent = await self.where(night).send(embed=embed, file=discord.File(io.BytesIO(image), "night.png"),
                                                    nonce=nonce)
        except discord.NotFound:
            # the channel is gone: no later try can post it either (Forbidden is tried
            # again at the next start: permissions can come back)
            log.warning("night %s: the recap cannot be posted in its channel", night.id, exc_info=True)
            sent = None
        try:
            await self.host.recap_posted(night, sent.id if sent is not None else None)
        except Exception:  # a start posts it again (the same nonce)
            log.exception("night %s: recap id not saved", night.id)

    def highlight_text(self, h: dict[str, Any], lang: str) -> str:
        return t(lang, f"nights.hl_{h['kind']}", name=h["name"], value=h["value"], count=h["value"],
                 round=h["round"], table=h["table"])

    # ------------------------------------------------------------- tables
    async def _announce(self, night: Night, table: Table, nt: NightTable) -> None:
        """The table's own message in the channel (its thread opens from it)."""
        if table.messages.get("lobby"):
            return
        lobby = parts(self.bot).tables.lobby
        lang = night.locale
        mentions = " ".join(f"<@{u}>" for u in nt.seats if u is not None)
        content = t(lang, "nights.table_intro", round=nt.round, number=nt.number, players=mentions)
        sent = await self.where(night).send(  # (once across kills: named by its table)
            content=content, embed=lobby.lobby_embed(table), nonce=owed(table, "a", nt.round),
            allowed_mentions=discord.AllowedMentions(users=True, everyone=False, roles=False))
        self.bot.tables.set_message(table, "lobby", sent.id)
        await self.bot.tables.save_messages(table)

    async def _launch(self, night: Night) -> None:
        async def announce(table: Table, nt: NightTable) -> None:
            async def attempt() -> None:
                try:
                    await self._announce(night, table, nt)
                except discord.Forbidden:  # no later try would do better: the table starts, its thread says the rest
                    log.warning("night %s: table %s may not be announced in the channel", night.id, table.id)

            # until it lands: the round's tables start once their announcement (with its pings) shows
            await until_it_lands(f"night {night.id}: table {table.id}'s announcement", attempt)

        await self.host.launch(night, announce)
        self.on_night_change(night, "round")  # the thread links in the standings

    async def _resume(self) -> None:
        """After a start: settle what ended while the bot was down, start
        tables seated but not started, show every open night again."""
        await self.bot.wait_until_ready()
        await self.bot.tables.loaded()  # every table restored (app.tables.manager.restore_in_background)
        for night in list(self.host.nights.values()):
            try:
                async with self.host.lock(night):
                    await self.host.reconcile(night)
                if night.status == PLAYING:  # (apart: a night waiting on Discord does not hold up the others)
                    self._spawn(self._launch(night))
                self.on_night_change(night, "ended" if night.status == ENDED else "resume")
            except Exception:
                log.exception("night %s could not be resumed", night.id)
        self.host.start_timers()  # the countdowns to next rounds, from their saved times


_REFUSAL_KEYS = {"forbidden": "calendar_forbidden", "refused": "calendar_failed", "failed": "calendar_failed"}


def _iso(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, tz=datetime.timezone.utc).isoformat()


async def setup(bot: Any) -> None:
    await bot.add_cog(NightCog(bot))
