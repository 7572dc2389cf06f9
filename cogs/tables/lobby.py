"""Lobbies: opening a table, joining, leaving, computers and options, start,
stop, Play again, and what the /join /start /leave /table stop /table list
commands do (:class:`~cogs.tables.TablesCog` declares them).
"""
from __future__ import annotations

import logging
from typing import Any, Sequence

import discord

from app.i18n.catalogue import normalise, t
from app.tables.manager import LEVELS, Note, Seat, Table, TableError, TableManager, counting_saves
from app.text import plain
from core import registry
from core.protocol import GameError
from cogs.common.adapter import answer_id, id_of, sent_once
from cogs.common.ui import (TRANSIENT, UNCERTAIN, can_manage, defer_when_slow, given, on_own_private_message, owed,
                            reply, update_message, user_lang, view_of)
from cogs.tables.game_ui import GameUI, seat_label, variant_line
from cogs.tables.router import Click, SeatKey, TableButton, TableSelect, Word, error_text

log = logging.getLogger(__name__)

# What the bot needs in a channel to host a table there.
NEEDED_PERMISSIONS = (
    "view_channel", "send_messages", "embed_links", "attach_files", "read_message_history",
    "create_public_threads", "send_messages_in_threads",
)
#: the channel's newest messages looked through for a lobby that landed unanswered
LANDED_LOOKBACK = 10



FIELD_MAX = 1024  # an embed field's value


def _cut(lines: list[str], lang: str) -> str:
    """As many whole lines as an embed field holds, then how many more there are.

    >>> _cut(["a", "b"], "en"), _cut(["x" * 600, "y" * 600, "z"], "en")[600:]
    ('a\\nb', '\\n…and 2 more')
    """
    out: list[str] = []
    for index, line in enumerate(lines):
        rest = len(lines) - index - 1  # after this line: they need room for their "…and N more"
        tail = "\n" + t(lang, "table.list_more", count=rest) if rest else ""
        if len("\n".join(out + [line]) + tail) > FIELD_MAX:
            return "\n".join(out + [t(lang, "table.list_more", count=len(lines) - index)])
        out.append(line)
    return "\n".join(out)


def pinging(user_ids: Sequence[int | None]) -> discord.AllowedMentions:
    """Mentions that ping exactly these users (and nobody else, no role, no everyone);
    None (a computer's seat) pings nobody."""
    return discord.AllowedMentions(users=[discord.Object(i) for i in user_ids if i is not None],
                                   everyone=False, roles=False, replied_user=False)


def _seat_key(seat: Seat) -> tuple[str, int]:
    """How the menu that takes a seat out names it: a computer by its number, a person by their id."""
    key = seat.number if seat.computer else seat.user_id
    assert key is not None  # (a computer without a number is not offered)
    return ("c" if seat.computer else "u", key)


class Lobby:
    """Runs lobbies: posts and redraws a table's lobby message, answers its
    buttons and the lobby commands.  ``uis``: the games' UIs by key (shared
    with the cog, which fills it as the games' cogs load)."""

    def __init__(self, bot: Any, manager: TableManager, uis: dict[str, GameUI]) -> None:
        self.bot = bot
        self.manager = manager
        self.uis = uis
        #: tables whose lobby message the click being answered redraws itself (Cancel on the lobby)
        self.redrawing: set[int] = set()

    def redraws_itself(self, table: Table) -> bool:
        """A click on this table's lobby message is redrawing it in its own answer (no other redraw)."""
        return table.id in self.redrawing

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
                           invite: Sequence[int] = (), options: dict[str, Any] | None = None,
                           offer: Sequence[int] = ()) -> None:
        """``/<game> new`` (and *Play again*: ``invite`` the players, ``offer``
        the watchers the seats nobody holds): post a lobby in this channel."""
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
                return await reply(interaction, error_text(lang, error))
            table = orphan
            table.posting = True
        for level in (["normal"] * computers if isinstance(computers, int) else computers):
            try:
                await self.manager.add_computer(table, table.host_id, level)
            except TableError:
                break  # not saved: the lobby opens with fewer computers; the host may add them
        lines = []
        if invite:
            lines.append(t(table.locale, "table.again_invite", host=f"<@{table.host_id}>",
                           mentions=" ".join(f"<@{user_id}>" for user_id in invite)))
        if offer:
            lines.append(t(table.locale, "table.again_watchers", count=len(offer),
                           mentions=" ".join(f"<@{user_id}>" for user_id in offer)))
        content = "\n".join(lines) or None
        mentions = discord.AllowedMentions(users=True, everyone=False, roles=False)
        try:
            mentions = pinging([*invite, *offer])
            if interaction.extras.pop("thinking", False):  # deferred by a slow save: fill "thinking..."
                message_id = await id_of(interaction.edit_original_response(
                    content=content, embed=self.lobby_embed(table), view=self.lobby_view(table),
                    allowed_mentions=discord.AllowedMentions.none()))
            elif interaction.response.is_done():  # Play again, deferred: a new message
                message_id = await self._followup_once(interaction, table, content, mentions)
            else:
                posted = await answer_id(interaction.response.send_message(
                    content=content, embed=self.lobby_embed(table), view=given(self.lobby_view(table)),
                    allowed_mentions=mentions))
                message_id = posted if posted is not None else (await interaction.original_response()).id
        except TRANSIENT:  # refused, or Discord unreachable: not posted
            log.warning("lobby message for table %s could not be posted", table.id, exc_info=True)
            table.posting = False
            try:
                await self.manager.cancel(table, table.host_id, can_manage=True)
            except TableError:
                pass  # not saved: the host's next /new posts this lobby
            return
        self.manager.set_message(table, "lobby", message_id)
        await self.manager.save_messages(table)

    async def _followup_once(self, interaction: discord.Interaction, table: Table, content: str | None,
                             mentions: discord.AllowedMentions) -> int:
        """The lobby of *Play again* (its click deferred) as a followup, posted once: a
        followup has no nonce, and discord.py would send it again after a 5xx that came
        after it landed (two lobbies).  So it is sent once (:func:`sent_once`); when its
        answer is lost, the bot's own followup with this table's Join button among the
        channel's newest messages is the lobby.  Not there, or the followup refused (the
        click's token expired or unknown: 401/50027, 404/10015; nothing was posted), the
        bot posts it itself with a nonce (:func:`owed`: Discord posts it once, however
        often it is tried): the new table opens all the same."""
        embed, view = self.lobby_embed(table), given(self.lobby_view(table))
        channel = interaction.channel
        assert isinstance(channel, discord.abc.Messageable)
        try:
            with sent_once():
                return await id_of(interaction.followup.send(content=given(content), embed=embed, view=view,
                                                             allowed_mentions=mentions, wait=True))
        except UNCERTAIN:
            log.info("table %s: the lobby's followup may have landed; looked for", table.id, exc_info=True)
            me = self.bot.user.id if self.bot.user is not None else None
            join = Join.custom_id_for(table.id)
            async for message in channel.history(limit=LANDED_LOOKBACK):
                if message.author.id == me and message.webhook_id is not None and any(
                        getattr(item, "custom_id", None) == join
                        for row in message.components for item in getattr(row, "children", ())):
                    return message.id
        except discord.HTTPException:
            log.info("table %s: the lobby's followup was refused; the bot posts it", table.id, exc_info=True)
        sent = await channel.send(content=content, embed=embed, view=view, allowed_mentions=mentions,
                                  nonce=owed(table, "g", 0))
        return sent.id

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
        variant = variant_line(table.game, table.options, lang)
        if variant:
            desc.append(variant)
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
        return seat_label(table, index, table.locale, away=False)

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
            Join.make(table.id, t(lang, "table.join"), style=B.success, row=0),
            Leave.make(table.id, t(lang, "table.leave"), row=0),
            AddComputer.make(table.id, t(lang, "table.add_computer"), row=0),  # a normal one
            Start.make(table.id, t(lang, "table.start"), style=B.primary, row=0),
            Cancel.make(table.id, t(lang, "table.cancel"), style=B.danger, row=0),
            Rules.make(table.id, t(lang, "table.rules"), emoji="📖", row=1),
        ]
        players = self.manager.players
        if players is not None and players.supports(table.game):  # levels and the coach
            items += [
                Hints.make(table.id, t(lang, "ai.hints_button_on" if hints else "ai.hints_button_off"),
                           emoji="💡", style=B.success if hints else B.secondary,
                           state="off" if hints else "on", row=1),
                Level.make(table.id, t(lang, "ai.add_computer"), levels, row=2),  # at a chosen level
            ]
        others = [s for s in table.seats if s.user_id != table.host_id]
        if others:  # the host takes a seat out: a computer added by mistake, someone who is not there
            options = [discord.SelectOption(
                label=(t(lang, "ai.level_seat", name=s.name, level=t(lang, f"ai.level_{s.level}"))
                       if s.computer else s.name)[:100],
                value=RemoveSeat.value.write(_seat_key(s)),
                emoji="🤖" if s.computer else "👤") for s in others if not s.computer or s.number is not None]
            if options:
                items.append(RemoveSeat.make(table.id, t(lang, "table.remove_seat"), options, row=3))
        spec = registry.spec(table.game)
        if spec.variants:  # the host goes round the variants before the start
            names = [STANDARD, *(v.name for v in spec.variants)]
            chosen = table.options.get("variant") or STANDARD
            after = names[(names.index(chosen) + 1) % len(names) if chosen in names else 0]
            variant = spec.variant(chosen)
            shown = t(lang, variant.label_key) if variant is not None else t(lang, "table.variant_standard")
            items.append(ChooseVariant.make(table.id, t(lang, "table.variant_pick", variant=shown), emoji="🎲",
                                            row=1, to=after))
        return view_of(*items)

    def closed_line(self, table: Table) -> str | None:
        """Why a table closed early: stopped by a moderator, or nobody played."""
        lang = table.locale
        if table.status == "abandoned" and table.stop_reason:
            return t(lang, f"faults.stop_{table.stop_reason}")
        if table.status == "abandoned" and table.stopped_by:
            return t(lang, "faults.stopped_by", name=plain(table.stopped_by))
        if table.idle:
            return t(lang, "faults.idle_closed", count=max(1, round(self.manager.idle_limit / 3600)))
        return None

    async def update(self, interaction: discord.Interaction, table: Table) -> None:
        """The answer to a click on the lobby message: the lobby as it is now."""
        await update_message(interaction, embed=self.lobby_embed(table), view=self.lobby_view(table))

    async def cancel_clicked(self, interaction: discord.Interaction, table: Table) -> None:
        on_lobby = interaction.message is not None and interaction.message.id == table.messages.get("lobby")
        if on_lobby:
            self.redrawing.add(table.id)  # this click's answer redraws the lobby message
        try:
            await self.manager.cancel(table, interaction.user.id, can_manage=can_manage(interaction),
                                      name=interaction.user.display_name)
        finally:
            self.redrawing.discard(table.id)
        if on_lobby:
            await self.update(interaction, table)
        else:
            await reply(interaction, t(user_lang(interaction), "table.cancelled"))

    async def stop_command(self, interaction: discord.Interaction) -> None:
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
            return await reply(interaction, error_text(lang, error))
        key = "faults.stopped" if table.status == "abandoned" else "faults.lobby_cancelled"
        await reply(interaction, t(lang, key, table=table.id))

    async def list_command(self, interaction: discord.Interaction) -> None:
        """``/table list``: where to join, and where the games are (private;
        only the tables of channels the user can see)."""
        lang = user_lang(interaction)
        guild = interaction.guild
        assert guild is not None
        member = interaction.user

        def sees(channel_id: int) -> bool:
            channel = guild.get_channel(channel_id)
            return channel is not None and isinstance(member, discord.Member) and \
                channel.permissions_for(member).view_channel

        lobbies, games = [], []
        for table in self.manager.in_guild(guild.id):
            if not sees(table.channel_id):
                continue
            title = t(lang, f"{table.game}.title")
            if table.status == "lobby":
                message = table.messages.get("lobby")
                link = f"https://discord.com/channels/{guild.id}/{table.channel_id}/{message}" if message else None
                lobbies.append(t(lang, "table.list_lobby", game=title, table=table.id, channel=f"<#{table.channel_id}>",
                                 taken=len(table.seats), seats=table.max_seats, host=f"<@{table.host_id}>",
                                 link=link or f"<#{table.channel_id}>"))
            else:
                where = table.thread_id or table.channel_id
                names = ", ".join(plain(s.name) for s in table.seats)
                games.append(t(lang, "table.list_game", game=title, table=table.id, thread=f"<#{where}>",
                               players=names))
        sections = [(t(lang, "table.list_lobbies"), lobbies), (t(lang, "table.list_games"), games)]
        sections += [listing(guild.id, lang, sees) for listing in getattr(self.bot, "listings", ())]
        embed = discord.Embed(title=t(lang, "table.list_title"), colour=discord.Colour.blurple())
        for name, lines in sections:
            if lines:
                embed.add_field(name=name, value=_cut(lines, lang), inline=False)
        if not any(lines for _, lines in sections):
            opening = ", ".join(f"`/{t(lang, f'commands.{key}.name')} {t(lang, f'commands.{key}_new.name')}`"
                                for key in registry.KEYS)
            embed.description = t(lang, "table.list_none", commands=opening)
        await reply(interaction, embed=embed)

    async def play_again(self, interaction: discord.Interaction, table_id: int) -> None:
        """*Play again* under a finished game: a new lobby with the same options,
        the clicker as host, the same computer players, the other people invited."""
        old = self.manager.get(table_id)
        if old is not None:
            game, options, max_seats, seats = old.game, old.options, old.max_seats, old.seats
            watchers = [w.user_id for w in old.watchers]
        else:  # finished before a restart: the store still has it
            record = await self.bot.store.table(table_id)
            if record is None:
                raise TableError("table_closed")
            game, options, max_seats = record.game, record.meta["options"], record.meta["max_seats"]
            seats = [Seat.from_dict(s) for s in record.meta["seats"]]
            watchers = [int(user_id) for user_id, _name in record.meta.get("watchers", ())]
        if not any(seat.user_id == interaction.user.id for seat in seats):
            raise TableError("table.again_watcher" if interaction.user.id in watchers else "not_seated")
        people = [s.user_id for s in seats if s.user_id is not None]
        # the seats no person held are the watchers' first: a computer sits only in what they leave
        offer = [w for w in watchers if w not in people][:max_seats - len(people)]
        computers = [s.level for s in seats if s.computer][len(offer):]
        await self.create_table(
            interaction, game, seats=max_seats, rounds=options.get("rounds"),
            turn_time=options.get("turn_time", 0), computers=computers,
            invite=[u for u in people if u != interaction.user.id],
            options={k: v for k, v in options.items() if k not in ("rounds", "turn_time", "hints")}, offer=offer)

    # ------------------------------------------------- /join /start /leave
    async def command(self, interaction: discord.Interaction, op: str) -> None:
        """``/join``, ``/start`` or ``/leave`` (``op``): the same manager calls as the
        lobby's buttons, on the table of the channel (or game thread) it is used in."""
        lang = user_lang(interaction)
        table = self.manager.in_channel(interaction.channel_id) if interaction.channel_id else None
        if table is None:
            return await reply(interaction, t(lang, "slash.no_table"))
        user = interaction.user
        hosting = table.host_id == user.id
        notes: list[Note] = []
        defer_when_slow(interaction)  # a save that waits for the database acknowledges first
        with counting_saves() as saved:
            try:
                if op == "join":
                    await self.manager.join(table, user.id, user.display_name)
                elif op == "leave":
                    notes = await self.manager.leave(table, user.id)
                else:
                    await self.manager.start(table, user.id)
            except (TableError, GameError) as error:
                return await reply(interaction, error_text(lang, error))
            except Exception:
                log.exception("/%s at table %s failed", op, table.id)
                return await reply(interaction, t(lang, "errors.unexpected_saved" if saved else "errors.unexpected"))
        if op == "leave" and table.status != "lobby":  # left a game: a computer holds the seat
            return await reply(interaction, stepped_away_text(lang, table, notes))
        if op == "leave" and hosting:  # the host left: the next person hosts it now
            await reply(interaction, t(lang, "slash.left_host", table=table.id, host=f"<@{table.host_id}>"))
        else:
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


# ------------------------------------------------------------ the lobby's items
# (and the buttons every table message may carry: Rules, I'm back, Play again)
class Join(TableButton, kind="table.join"):
    legacy = "join"

    async def run(self, click: Click) -> None:
        await click.manager.join(click.table, click.user.id, click.user.display_name)
        await click.lobby.update(click.interaction, click.table)


class Leave(TableButton, kind="table.leave"):
    legacy = "leave"

    async def run(self, click: Click) -> None:
        await click.manager.leave(click.table, click.user.id)
        await click.lobby.update(click.interaction, click.table)


class AddComputer(TableButton, kind="table.cpu"):
    """A computer player at the normal level (and a lobby posted before levels existed)."""

    legacy = "cpu"

    async def run(self, click: Click) -> None:
        await click.manager.add_computer(click.table, click.user.id, "normal")
        await click.lobby.update(click.interaction, click.table)


class Level(TableSelect, kind="table.level"):
    """A computer player at the level chosen in the menu."""

    legacy = "cpu"
    value = Word(*LEVELS)

    async def run(self, click: Click) -> None:
        await click.manager.add_computer(click.table, click.user.id, self.choice)
        await click.lobby.update(click.interaction, click.table)


class RemoveSeat(TableSelect, kind="table.remove"):
    """The host takes a seat out of the lobby (a person or a computer)."""

    value = SeatKey()

    async def run(self, click: Click) -> None:
        kind, number = self.choice
        await click.manager.remove_seat(
            click.table, click.user.id, person=number if kind == "u" else None,
            computer=number if kind == "c" else None, can_manage=can_manage(click.interaction))
        await click.lobby.update(click.interaction, click.table)


class Hints(TableButton, kind="table.hints"):
    """The host turns the coach on or off (``state``: what a click does)."""

    legacy = "hints"
    fields = {"state": Word("on", "off")}
    state: str

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        return {"state": arg}

    async def run(self, click: Click) -> None:
        await click.manager.set_hints(click.table, click.user.id, self.state == "on")
        await click.lobby.update(click.interaction, click.table)


STANDARD = "standard"  # the lobby menu's value for the game without a variant


class ChooseVariant(TableButton, kind="table.variant"):
    """The host's button that goes round the game's variants (and the
    standard game): ``to`` is the one a click chooses."""

    fields = {"to": Word(STANDARD, *sorted({v.name for spec in registry.GAMES for v in spec.variants}))}
    to: str

    async def run(self, click: Click) -> None:
        await click.manager.set_variant(click.table, click.user.id, None if self.to == STANDARD else self.to)
        await click.lobby.update(click.interaction, click.table)


class Start(TableButton, kind="table.start"):
    legacy = "start"

    async def run(self, click: Click) -> None:
        await click.manager.start(click.table, click.user.id)
        await click.lobby.update(click.interaction, click.table)


class Cancel(TableButton, kind="table.cancel"):
    legacy = "cancel"

    async def run(self, click: Click) -> None:
        await click.lobby.cancel_clicked(click.interaction, click.table)


class Rules(TableButton, kind="table.rules"):
    legacy = "rules"
    for_watchers = True

    async def run(self, click: Click) -> None:
        from cogs.rules import build_page

        embed, view = build_page(click.table.game, click.lang, 0)
        # A private reply at once, the rules in the answer itself: no deferral of the table
        # message (whose token would redraw it), which after a restart, when many players look
        # at the rules, would draw a burst of tables before their answers.
        await reply(click.interaction, embed=embed, view=view)


class Back(TableButton, kind="table.back"):
    """*I'm back*: the owner takes their seat back from the computer."""

    legacy = "back"

    async def run(self, click: Click) -> None:
        notes = await click.manager.back(click.table, click.user.id)
        await reply(click.interaction, with_notes(click.lang, t(click.lang, "table.welcome_back"), notes))


def hand_controls(table: Table, lang: str, hand: discord.ui.Item[Any]) -> discord.ui.View | None:
    """The live table's controls in a game its players play from private hands: the
    game's ``hand`` button (which opens one), *Rules*, and *I'm back* while a seat is
    away; none once it is over."""
    if table.status != "playing":
        return None
    items = [hand, Rules.make(table.id, t(lang, "table.rules"), emoji="📖")]
    if any(seat.away for seat in table.seats):
        items.append(Back.make(table.id, t(lang, "table.im_back")))
    return view_of(*items)


class StepAway(TableButton, kind="table.away"):
    """*Step away* (in a player's panel, or on a table message everyone plays
    from): as ``/leave`` in a game, a computer plays the seat until *I'm
    back*.  ``step``: ``ask`` (the panel's button: a click beside the moves
    asks first) or ``now`` (the question's answer)."""

    fields = {"step": Word("ask", "now")}
    step: str

    async def run(self, click: Click) -> None:
        manager, lang = click.manager, click.lang
        if self.step == "ask":
            manager.may_hand_over(click.table, click.user.id, away=True)
            sure = StepAway.make(click.table.id, t(lang, "table.step_away"), emoji="💤", step="now",
                                 style=discord.ButtonStyle.danger)
            return await reply(click.interaction, t(lang, "table.step_away_ask", back=t(lang, "table.im_back")),
                               view=view_of(sure))
        notes = await manager.step_away(click.table, click.user.id)
        text = stepped_away_text(lang, click.table, notes)
        if on_own_private_message(click.interaction):  # (the question's answer replaces the question)
            await update_message(click.interaction, content=text, view=None)
        else:
            await reply(click.interaction, text)


def with_notes(lang: str, text: str, notes: Sequence[Note]) -> str:
    """An answer about a seat handed over, and what else it changed for them (the away hooks' notes)."""
    return "\n".join([text] + [note(lang) for note in notes])


def stepped_away_text(lang: str, table: Table, notes: Sequence[Note]) -> str:
    """The answer to someone who stepped away."""
    return with_notes(lang, t(lang, "slash.stepped_away", table=table.id, back=t(lang, "table.im_back")), notes)


def step_away_button(table: Table, lang: str, row: int) -> StepAway:
    """*Step away*, asking first (wherever it sits beside the moves)."""
    return StepAway.make(table.id, t(lang, "table.step_away"), emoji="💤", step="ask", row=row)


def seat_control(table: Table, seat: int, lang: str, row: int) -> discord.ui.Item | None:
    """A player's own way out of a game and back in, for their panel: *Step
    away* while they play, *I'm back* while a computer holds their seat."""
    if table.status != "playing" or table.seats[seat].user_id is None:
        return None
    if table.seats[seat].away:
        return Back.make(table.id, t(lang, "table.im_back"), row=row)
    return step_away_button(table, lang, row)


class Watch(TableButton, kind="table.watch"):
    """*Watch* on a running table message: follow the game without a seat
    (named on the table message; offered a free seat by *Play again*), or stop."""

    for_watchers = True

    async def run(self, click: Click) -> None:
        on = await click.manager.watch(click.table, click.user.id, click.user.display_name)
        where = click.table.thread_id or click.table.channel_id
        await reply(click.interaction, t(click.lang, "table.watch_on" if on else "table.watch_off",
                                         table=click.table.id, thread=f"<#{where}>"))


class PlayAgain(TableButton, kind="table.again"):
    """Under the final standings: works after the table closed (and after a restart)."""

    legacy = "again"
    open_only = False
    for_watchers = True

    async def run(self, click: Click) -> None:
        await click.lobby.play_again(click.interaction, self.table_id)


ITEMS = (Join, Leave, AddComputer, Level, Hints, ChooseVariant, Start, Cancel, Rules, Back, StepAway, Watch, PlayAgain)
