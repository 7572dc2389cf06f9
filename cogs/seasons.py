"""Seasons: ``/season mode|start|end|role`` (Manage Server), the calendar's
rollover and a season's end (its final standings posted, champion roles).

The rules of seasons live in :mod:`app.seasons`, their boards in the store
(a season's boards are its own scope, next to the all-time ones); this cog
asks, tells and gives roles.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app.i18n.catalogue import normalise, t
from app.seasons import (
    CALENDAR, GLOBAL_MODE, MODES, TICK, calendar_plans, champions, close_ended, current, make_all, period,
    started_by_change,
)
from app.store.base import SeasonPlan
from app.text import plain
from cogs.common.translator import command_str
from cogs.common.ui import reply, user_lang
from cogs.rules import game_choices
from core import registry

log = logging.getLogger(__name__)

#: lines of each game's final standings in the season's closing message
FINAL_ROWS = 10
#: what ``/boards visibility`` offers: all boards, this server's seasons only, none of this server's
BOARD_VISIBILITY = ("all", "season", "off")
#: how often ``/boards schedule`` posts
POST_EVERY = ("weekly", "monthly", "off")


class SeasonsCog(commands.Cog, name="Seasons"):
    """Per-server seasons and the global calendar season."""

    season = app_commands.Group(
        name=_("season", key="commands.season.name"),
        description=_("Seasons of this server's leaderboards", key="commands.season.description"),
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        #: the time seasons go by (a test may move it)
        self.clock = time.time
        #: seconds between two looks at the calendar
        self.tick_seconds = TICK
        self._task: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()  # one look at a time (a tick, or an admin's change of seasons or of a board post)

    async def cog_load(self) -> None:
        try:  # the global calendar's season is there before any game can end (they count in it)
            await self._make(calendar_plans({0: GLOBAL_MODE}, self.clock()))
        except Exception:  # (the first look at the calendar makes it)
            log.exception("seasons: the global season could not be made")
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def cog_unload(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        await self.bot.wait_until_ready()
        while True:
            try:
                await self.tick()
            except Exception:  # the next look tries again
                log.exception("seasons: the calendar could not be looked at")
            await asyncio.sleep(self.tick_seconds)

    # ------------------------------------------------------------ the calendar
    async def tick(self) -> None:
        """Make the calendar's current and next seasons (global, and of this
        process's servers on a calendar), and close the seasons that ended."""
        async with self.lock:
            now = self.clock()
            store = self.bot.store
            modes = {0: GLOBAL_MODE}  # (another process's servers are that process's to roll)
            modes.update((guild_id, mode) for guild_id, mode in (await store.guilds_with_setting("season_mode")).items()
                         if mode in CALENDAR and self.bot.get_guild(guild_id) is not None)
            await self._make(calendar_plans(modes, now))
            await close_ended(store, now, self._close)
            # who is really playing: ratings without a recent rated game leave the rating boards
            windows = {g: float(days) for g, days in (await store.guilds_with_setting("activity_days")).items()
                       if isinstance(days, (int, float))}
            await store.park_inactive(now, windows)
            for guild_id, plan in (await store.guilds_with_setting("board_post")).items():
                guild = self.bot.get_guild(guild_id)
                if guild is not None and isinstance(plan, dict) and post_due(plan, now):
                    await self._post_board(guild, plan, now)

    async def _post_board(self, guild: discord.Guild, plan: dict[str, Any], now: float) -> None:
        """A board posted on its schedule (``/boards schedule``): the server's
        (or, season-only, its running season's) top 10; then the next is due."""
        store = self.bot.store
        settings = await store.guild_settings(guild.id)
        lang = settings.get("language") or normalise(guild.preferred_locale)
        shown = settings.get("boards") or "all"
        season = current(await store.seasons(guild.id), now) if shown == "season" else None
        channel = guild.get_channel(int(plan.get("channel") or 0))
        if shown != "off" and (shown == "all" or season is not None) and isinstance(channel, discord.abc.Messageable):
            game, by = str(plan.get("game") or registry.GAMES[0].key), str(plan.get("by") or "rating")
            board = await store.leaderboard(game, guild.id, by=by, page_size=FINAL_ROWS,
                                            season=None if season is None else season["id"])
            where = (t(lang, "seasons.board_scope", name=plain(season["name"])) if season is not None
                     else t(lang, "stats.server"))
            embed = discord.Embed(title=t(lang, "stats.board_title", game=t(lang, f"{game}.title"), scope=where,
                                          by=t(lang, f"stats.by_{by}")), colour=discord.Colour.gold())
            embed.description = "\n".join(
                t(lang, "seasons.final_line", rank=row["rank"], name=plain(row["name"] or str(row["user_id"])),
                  value=_value(lang, by, row["value"]), by=t(lang, f"stats.by_{by}"))
                for row in board.rows) or t(lang, "stats.board_empty")
            try:
                await channel.send(embed=embed, allowed_mentions=discord.AllowedMentions.none())
            except discord.HTTPException:  # (the next one is due on schedule all the same)
                log.warning("boards: the scheduled board of server %s could not be posted", guild.id, exc_info=True)
        await store.set_guild_setting(guild.id, "board_post", {**plan, "last": now})

    async def _make(self, plans: list[SeasonPlan]) -> list[int | None]:
        """The calendar's seasons of *plans* made, a batch of servers at a
        time; each plan's season id (None: not made)."""
        made = await make_all(self.bot.store, plans)
        for plan, season_id in zip(plans, made):
            if season_id is None:  # a season made by hand still runs over it: it ends first
                log.warning("seasons: %s of server %s overlaps another season", plan.name, plan.guild_id)
        return made

    async def _close(self, season: dict[str, Any]) -> dict[str, Any] | None:
        """A season ended: its final standings in the chosen channel, the
        champion roles moved to its champions; what its meta keeps (the
        global season: nothing to post, its boards stay; None: another
        process's server)."""
        if season["guild_id"] == 0:
            return {}
        guild = self.bot.get_guild(season["guild_id"])
        if guild is None:
            return None
        store = self.bot.store
        settings = await store.guild_settings(guild.id)
        lang = settings.get("language") or normalise(guild.preferred_locale)
        roles: dict[str, int] = settings.get("season_roles") or {}
        before = next((s for s in await store.seasons(guild.id)
                       if s["meta"].get("closed") and s["starts_at"] < season["starts_at"]), None)
        embed = discord.Embed(title=t(lang, "seasons.final_title", name=plain(season["name"])),
                              colour=discord.Colour.gold())
        won: dict[str, list[int]] = {}
        notes: list[str] = []
        for spec in registry.GAMES:
            by = "rating"
            board = await store.leaderboard(spec.key, by=by, page_size=FINAL_ROWS, season=season["id"])
            if not board.rows:  # nobody rated enough: the wins decide
                by = "wins"
                board = await store.leaderboard(spec.key, by=by, page_size=FINAL_ROWS, season=season["id"])
            if not board.rows:
                continue
            won[spec.key] = champions(board.rows)
            lines = [t(lang, "seasons.final_line", rank=row["rank"], name=plain(row["name"] or str(row["user_id"])),
                       value=_value(lang, by, row["value"]), by=t(lang, f"stats.by_{by}"))
                     for row in board.rows]
            embed.add_field(name=t(lang, f"{spec.key}.title"), value="\n".join(lines)[:1024], inline=False)
            if spec.key in roles:
                notes.append(await self._crown(guild, lang, spec.key, roles[spec.key], won[spec.key],
                                               (before or {}).get("meta", {}).get("champions", {}).get(spec.key, [])))
        if not won:
            embed.description = t(lang, "seasons.final_empty")
        if notes:
            embed.add_field(name=t(lang, "seasons.roles_title"), value="\n".join(notes)[:1024], inline=False)
        message_id = None
        channel = guild.get_channel(settings.get("season_channel") or 0)
        if isinstance(channel, discord.abc.Messageable):
            try:  # the same nonce on every try: a retry after a restart does not post it twice
                sent = await channel.send(embed=embed, nonce=f"season-{season['id']}"[:25],
                                          allowed_mentions=discord.AllowedMentions.none())
                message_id = sent.id
            except discord.HTTPException:
                log.warning("seasons: the final standings of season %s could not be posted", season["id"],
                            exc_info=True)
        return {"champions": won, "message": message_id}

    async def _crown(self, guild: discord.Guild, lang: str, game: str, role_id: int, champions_now: list[int],
                     champions_before: list[int]) -> str:
        """Give the game's champion role to its champions (and take it from
        the last season's); what happened, or exactly what is missing."""
        role = guild.get_role(role_id)
        missing = role_problem(guild, role, lang)
        game_title = t(lang, f"{game}.title")
        if missing:
            return t(lang, "seasons.role_not_given", game=game_title, why=missing)
        assert role is not None
        for user_id in champions_before:
            if user_id not in champions_now:
                with contextlib.suppress(discord.HTTPException):  # (gone from the server: nothing to take)
                    await self.bot.http.remove_role(guild.id, user_id, role.id, reason="season champion")
        given = []
        for user_id in champions_now:
            try:
                await self.bot.http.add_role(guild.id, user_id, role.id, reason="season champion")
                given.append(f"<@{user_id}>")
            except discord.HTTPException:
                log.warning("seasons: role %s not given to %s", role.id, user_id, exc_info=True)
        return t(lang, "seasons.role_given", game=game_title, role=role.mention, names=", ".join(given) or "-")

    # ---------------------------------------------------------------- commands
    @season.command(name=_("mode", key="commands.season_mode.name"),
                    description=_("How this server's seasons go: none, monthly, quarterly or by hand",
                                  key="commands.season_mode.description"))
    @app_commands.rename(mode=_("mode", key="commands.opt_season_mode.name"),
                         channel=_("channel", key="commands.opt_season_channel.name"))
    @app_commands.describe(mode=_("none keeps the all-time boards only", key="commands.opt_season_mode.description"),
                           channel=_("Where a season's final standings are posted",
                                     key="commands.opt_season_channel.description"))
    @app_commands.choices(mode=[
        app_commands.Choice(name=command_str(f"commands.choice_season_{mode}.name"), value=mode) for mode in MODES])
    async def mode(self, interaction: discord.Interaction, mode: app_commands.Choice[str],
                   channel: discord.TextChannel | None = None) -> None:
        lang = user_lang(interaction)
        guild = interaction.guild
        if guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        await interaction.response.defer(ephemeral=True, thinking=True)
        store = self.bot.store
        try:
            async with self.lock:
                now = self.clock()  # (once a look holding the lock is done: the change is made now)
                seasons = await store.seasons(guild.id)
                running = current(seasons, now)
                old = (await store.guild_settings(guild.id)).get("season_mode") or "none"
                changed = mode.value != old
                plans = calendar_plans({guild.id: mode.value}, now) if mode.value in CALENDAR else []
                if changed:  # a season of the new cadence runs from now on, under a name not used yet
                    plans = started_by_change(plans, seasons)
                if running is not None and changed:  # the running season ends now and the next starts there,
                    await store.end_season(running["id"], now, then=plans)  # in one transaction
                else:
                    await self._make(plans)
                await store.set_guild_setting(guild.id, "season_mode", mode.value)
                if channel is not None:
                    await store.set_guild_setting(guild.id, "season_channel", channel.id)
                started = None
                if changed and plans and any(s["name"] == plans[0].name for s in await store.seasons(guild.id)):
                    started = plans[0].name
        except Exception:
            log.warning("season mode of server %s not saved", guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        lines = [t(lang, f"seasons.mode_{mode.value}", start=_command(lang, "season_start"),
                   end=_command(lang, "season_end"))]
        where = channel or guild.get_channel((await store.guild_settings(guild.id)).get("season_channel") or 0)
        if running is not None and changed:
            lines.append(t(lang, "seasons.ended_now" if where is not None else "seasons.ended_now_unposted",
                           name=plain(running["name"])))
        if started is not None:
            lines.append(t(lang, "seasons.started", name=plain(started)))
        lines.append(t(lang, "seasons.channel_is", channel=where.mention) if where is not None
                     else t(lang, "seasons.no_channel", command=_command(lang, "season_mode")))
        if isinstance(where, discord.abc.GuildChannel):  # saved, and said now what the bot lacks there
            lines.append(channel_problem(where, lang) or "")
        await reply(interaction, "\n".join(filter(None, lines)))
        await self.tick()  # a season ended by the change is closed (its standings posted) now

    @season.command(name=_("start", key="commands.season_start.name"),
                    description=_("Start a season now (mode: by hand)", key="commands.season_start.description"))
    @app_commands.rename(name=_("name", key="commands.opt_season_name.name"))
    @app_commands.describe(name=_("The season's name, e.g. Spring cup", key="commands.opt_season_name.description"))
    async def start(self, interaction: discord.Interaction, name: app_commands.Range[str, 1, 40]) -> None:
        lang = user_lang(interaction)
        guild = interaction.guild
        if guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        name = " ".join(name.split())
        if not name:  # only spaces
            return await reply(interaction, t(lang, "seasons.name_empty"))
        await interaction.response.defer(ephemeral=True, thinking=True)  # (a look may be rolling seasons over)
        store = self.bot.store
        try:
            async with self.lock:
                mode = (await store.guild_settings(guild.id)).get("season_mode") or "none"
                running = current(await store.seasons(guild.id), self.clock())
                if mode == "manual" and running is None:
                    try:
                        await store.create_season(guild.id, name, self.clock())
                    except LookupError:
                        return await reply(interaction, t(lang, "seasons.name_taken", name=plain(name)))
        except Exception:
            log.warning("season of server %s not started", guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        if mode != "manual":
            return await reply(interaction, t(lang, "seasons.not_manual", mode=t(lang, f"seasons.name_{mode}"),
                                              command=_command(lang, "season_mode")))
        if running is not None:
            return await reply(interaction, t(lang, "seasons.already_running", name=plain(running["name"]),
                                              command=_command(lang, "season_end")))
        await reply(interaction, t(lang, "seasons.started", name=plain(name)))

    @season.command(name=_("end", key="commands.season_end.name"),
                    description=_("End the running season now: its final standings are posted",
                                  key="commands.season_end.description"))
    async def end(self, interaction: discord.Interaction) -> None:
        lang = user_lang(interaction)
        guild = interaction.guild
        if guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        await interaction.response.defer(ephemeral=True, thinking=True)
        store = self.bot.store
        try:
            async with self.lock:
                now = self.clock()
                running = current(await store.seasons(guild.id), now)
                if running is None:
                    return await reply(interaction, t(lang, "seasons.none_running"))
                await store.end_season(running["id"], now)
            where = guild.get_channel((await store.guild_settings(guild.id)).get("season_channel") or 0)
        except Exception:
            log.warning("season of server %s not ended", guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        if where is None:  # nowhere to post the final standings: said, not promised
            text = t(lang, "seasons.ended_unposted", name=plain(running["name"]),
                     command=_command(lang, "season_mode"))
        else:
            text = "\n".join(filter(None, (t(lang, "seasons.ended", name=plain(running["name"])),
                                            channel_problem(where, lang)
                                            if isinstance(where, discord.abc.GuildChannel) else None)))
        await reply(interaction, text)
        await self.tick()

    @season.command(name=_("role", key="commands.season_role.name"),
                    description=_("A role for each season's champion of a game",
                                  key="commands.season_role.description"))
    @app_commands.rename(game=_("game", key="commands.opt_game.name"),
                         role=_("role", key="commands.opt_season_role.name"))
    @app_commands.describe(game=_("Which game", key="commands.opt_game.description"),
                           role=_("The champion role (leave empty: no role)",
                                  key="commands.opt_season_role.description"))
    @app_commands.choices(game=game_choices())
    async def role(self, interaction: discord.Interaction, game: app_commands.Choice[str],
                   role: discord.Role | None = None) -> None:
        lang = user_lang(interaction)
        guild = interaction.guild
        if guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        store = self.bot.store
        try:
            roles = dict((await store.guild_settings(guild.id)).get("season_roles") or {})
            if role is None:
                roles.pop(game.value, None)
            else:
                roles[game.value] = role.id
            await store.set_guild_setting(guild.id, "season_roles", roles)
        except Exception:
            log.warning("season role of server %s not saved", guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        title = t(lang, f"{game.value}.title")
        if role is None:
            return await reply(interaction, t(lang, "seasons.role_cleared", game=title))
        text = t(lang, "seasons.role_set", game=title, role=role.mention)
        missing = role_problem(guild, guild.get_role(role.id) or role, lang)
        if missing:  # saved, and said now what must change before the season ends
            text += "\n" + t(lang, "seasons.role_warning", why=missing)
        await reply(interaction, text)


class BoardsCog(commands.Cog, name="Boards"):
    """``/boards visibility|activity|exclude|include|schedule`` (Manage
    Server): this server's own leaderboards shown or not, who is on them, and
    posted on a schedule (by the seasons' look at the calendar,
    :meth:`SeasonsCog.tick`)."""

    boards = app_commands.Group(
        name=_("boards", key="commands.boards.name"),
        description=_("This server's leaderboards: shown or not, posted on a schedule",
                      key="commands.boards.description"),
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    def __init__(self, bot: Any, seasons: SeasonsCog) -> None:
        self.bot = bot
        self.seasons = seasons

    @boards.command(name=_("visibility", key="commands.boards_visibility.name"),
                    description=_("Show this server's leaderboards, only its seasons', or none",
                                  key="commands.boards_visibility.description"))
    @app_commands.rename(shown=_("shown", key="commands.opt_boards_shown.name"))
    @app_commands.describe(shown=_("all-time and seasons, seasons only, or off",
                                   key="commands.opt_boards_shown.description"))
    @app_commands.choices(shown=[
        app_commands.Choice(name=command_str(f"commands.choice_boards_{value}.name"), value=value)
        for value in BOARD_VISIBILITY])
    async def visibility(self, interaction: discord.Interaction, shown: app_commands.Choice[str]) -> None:
        lang = user_lang(interaction)
        if interaction.guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        try:
            await self.bot.store.set_guild_setting(interaction.guild.id, "boards", shown.value)
        except Exception:
            log.warning("boards of server %s not saved", interaction.guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        await reply(interaction, t(lang, f"seasons.boards_{shown.value}"))

    @boards.command(name=_("activity", key="commands.boards_activity.name"),
                    description=_("How long a rating stays on this server's board without a rated game",
                                  key="commands.boards_activity.description"))
    @app_commands.rename(days=_("days", key="commands.opt_boards_days.name"))
    @app_commands.describe(days=_("Days (default 30)", key="commands.opt_boards_days.description"))
    async def activity(self, interaction: discord.Interaction, days: app_commands.Range[int, 1, 365]) -> None:
        lang = user_lang(interaction)
        if interaction.guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            await self.bot.store.set_guild_setting(interaction.guild.id, "activity_days", int(days))
            await self.seasons.tick()  # who is off the board now goes at once, before the answer
        except Exception:
            log.warning("activity window of server %s not saved", interaction.guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        await reply(interaction, t(lang, "seasons.activity_set", count=int(days)))

    @boards.command(name=_("exclude", key="commands.boards_exclude.name"),
                    description=_("Take a member off every leaderboard of this server (their games still count)",
                                  key="commands.boards_exclude.description"))
    @app_commands.rename(member=_("member", key="commands.opt_boards_member.name"))
    @app_commands.describe(member=_("Who leaves this server's leaderboards",
                                    key="commands.opt_boards_member.description"))
    async def exclude(self, interaction: discord.Interaction, member: discord.User) -> None:
        await self._member(interaction, member, exclude=True)

    @boards.command(name=_("include", key="commands.boards_include.name"),
                    description=_("Put an excluded member back on this server's leaderboards",
                                  key="commands.boards_include.description"))
    @app_commands.rename(member=_("member", key="commands.opt_boards_member.name"))
    @app_commands.describe(member=_("Who comes back on this server's leaderboards",
                                    key="commands.opt_boards_member_back.description"))
    async def include(self, interaction: discord.Interaction, member: discord.User) -> None:
        await self._member(interaction, member, exclude=False)

    async def _member(self, interaction: discord.Interaction, member: discord.User, *, exclude: bool) -> None:
        """A member off this server's boards (*exclude*) or back on them; the
        answer private.  A bot, or (to exclude) someone not in the server, is
        told so; someone who left may be put back."""
        lang = user_lang(interaction)
        guild = interaction.guild
        if guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        if exclude and member.bot:
            return await reply(interaction, t(lang, "seasons.exclude_bot", member=member.mention))
        if exclude and not isinstance(member, discord.Member):  # Discord resolves a member of the server as one
            return await reply(interaction, t(lang, "seasons.exclude_not_member", member=member.mention))
        store = self.bot.store
        try:
            done = await (store.exclude_member(guild.id, member.id, self.seasons.clock()) if exclude
                          else store.include_member(guild.id, member.id))
        except Exception:
            log.warning("board membership of %s in server %s not saved", member.id, guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        key = {(True, True): "excluded", (True, False): "exclude_twice",
               (False, True): "included", (False, False): "include_not_excluded"}[exclude, done]
        await reply(interaction, t(lang, f"seasons.{key}", member=member.mention,
                                   command=_command(lang, "boards_include")))

    @boards.command(name=_("schedule", key="commands.boards_schedule.name"),
                    description=_("Post a leaderboard every week or month in a channel",
                                  key="commands.boards_schedule.description"))
    @app_commands.rename(every=_("every", key="commands.opt_boards_every.name"),
                         channel=_("channel", key="commands.opt_boards_channel.name"),
                         game=_("game", key="commands.opt_game.name"), by=_("by", key="commands.opt_by.name"))
    @app_commands.describe(every=_("How often (off: no more posts)", key="commands.opt_boards_every.description"),
                           channel=_("Where the board is posted", key="commands.opt_boards_channel.description"),
                           game=_("Which game", key="commands.opt_game.description"),
                           by=_("What to rank by", key="commands.opt_by.description"))
    @app_commands.choices(
        every=[app_commands.Choice(name=command_str(f"commands.choice_every_{value}.name"), value=value)
               for value in POST_EVERY],
        game=game_choices(),
        by=[app_commands.Choice(name=_("rating", key="commands.choice_rating.name"), value="rating"),
            app_commands.Choice(name=_("wins", key="commands.choice_wins.name"), value="wins"),
            app_commands.Choice(name=_("win rate", key="commands.choice_win_rate.name"), value="win_rate"),
            app_commands.Choice(name=_("games", key="commands.choice_games.name"), value="games")])
    async def schedule(self, interaction: discord.Interaction, every: app_commands.Choice[str],
                       channel: discord.TextChannel | None = None, game: app_commands.Choice[str] | None = None,
                       by: app_commands.Choice[str] | None = None) -> None:
        lang = user_lang(interaction)
        guild = interaction.guild
        if guild is None or not _can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        if every.value != "off" and channel is None:
            return await reply(interaction, t(lang, "seasons.schedule_needs_channel"))
        plan = {"every": every.value, "channel": channel.id if channel else None,
                "game": game.value if game else registry.GAMES[0].key, "by": by.value if by else "rating",
                "last": None}  # the first one goes out at the next look, then on schedule
        await interaction.response.defer(ephemeral=True, thinking=True)  # (a look may be rolling seasons over)
        try:
            async with self.seasons.lock:  # (a look posting the board meanwhile would save its old plan)
                await self.bot.store.set_guild_setting(guild.id, "board_post", plan)
        except Exception:
            log.warning("board schedule of server %s not saved", guild.id, exc_info=True)
            return await reply(interaction, t(lang, "faults.not_saved"))
        if every.value == "off":
            return await reply(interaction, t(lang, "seasons.schedule_off"))
        assert channel is not None
        text = t(lang, f"seasons.schedule_{every.value}", channel=channel.mention,
                 game=t(lang, f"{plan['game']}.title"), by=t(lang, f"stats.by_{plan['by']}"))
        await reply(interaction, "\n".join(filter(None, (text, channel_problem(channel, lang),
                                                          await self._nothing_shown(guild.id, lang)))))
        await self.seasons.tick()  # the first post, now



    async def _nothing_shown(self, guild_id: int, lang: str) -> str | None:
        """Why a scheduled board would post nothing now (this server's boards
        off, or seasons only and none running); None if it posts."""
        store = self.bot.store
        shown = (await store.guild_settings(guild_id)).get("boards") or "all"
        if shown == "off":
            return t(lang, "seasons.schedule_boards_off", command=_command(lang, "boards_visibility"))
        if shown == "season" and current(await store.seasons(guild_id), self.seasons.clock()) is None:
            return t(lang, "seasons.schedule_no_season", command=_command(lang, "season_mode"))
        return None


def post_due(plan: dict[str, Any], now: float) -> bool:
    """Whether a scheduled board is due: never posted yet, a week since the
    last (weekly), or a new calendar month (monthly, UTC).

    >>> post_due({"every": "weekly", "last": None}, 10.0), post_due({"every": "weekly", "last": 0.0}, 86400.0)
    (True, False)
    >>> post_due({"every": "monthly", "last": 0.0}, 31 * 86400.0), post_due({"every": "off", "last": None}, 1.0)
    (True, False)
    """
    every, last = plan.get("every"), plan.get("last")
    if every not in ("weekly", "monthly"):
        return False
    if last is None:
        return True
    if every == "weekly":
        return now - float(last) >= 7 * 86400
    return period("monthly", now)[0] != period("monthly", float(last))[0]


#: what the bot needs in a channel it posts a board in
POST_PERMISSIONS = ("view_channel", "send_messages", "embed_links")


def channel_problem(channel: discord.abc.GuildChannel, lang: str) -> str | None:
    """What the bot lacks to post a board in *channel* (Discord's
    permissions there, overwrites included), in words an admin can act on;
    None if nothing."""
    me = channel.guild.me
    perms = channel.permissions_for(me) if me is not None else discord.Permissions.none()
    missing = [name for name in POST_PERMISSIONS if not getattr(perms, name)]
    if not missing:
        return None
    return t(lang, "seasons.why_channel", channel=channel.mention,
             permissions=", ".join(t(lang, f"perms.{name}") for name in missing))


def role_problem(guild: discord.Guild, role: discord.Role | None, lang: str) -> str | None:
    """Why the bot cannot give *role* (Discord's rules: Manage Roles, and a
    role below the bot's highest), in words an admin can act on; None if it can."""
    me = guild.me
    if role is None:
        return t(lang, "seasons.why_role_gone")
    if role.is_default() or role.managed:
        return t(lang, "seasons.why_role_managed", role=role.mention)
    if me is None or not me.guild_permissions.manage_roles:
        return t(lang, "seasons.why_manage_roles")
    if role >= me.top_role:
        return t(lang, "seasons.why_role_above", role=role.mention, top=me.top_role.mention)
    return None


def _value(lang: str, by: str, value: float) -> str:
    return f"{value:.1f}".replace(".", t(lang, "stats.decimal_mark")) if by == "rating" else str(int(value))


def _command(lang: str, key: str) -> str:
    group = key.partition("_")[0]
    return f"/{t(lang, f'commands.{group}.name')} {t(lang, f'commands.{key}.name')}"


def _can_manage(interaction: discord.Interaction) -> bool:
    perms = interaction.permissions
    return bool(perms.manage_guild or perms.administrator)


async def setup(bot: Any) -> None:
    seasons = SeasonsCog(bot)
    await bot.add_cog(seasons)
    await bot.add_cog(BoardsCog(bot, seasons))
