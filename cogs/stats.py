"""Stats, leaderboards and history: ``/stats``, ``/leaderboard``, ``/history``.

The figures come from ``app.store``; this cog only asks and shows.
"""
from __future__ import annotations

import io
import logging
import re
import time
from datetime import datetime, timezone
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app.render import pool as render_pool, profile as render_profile_card
from app.cooldown import Cooldown
from app.i18n.catalogue import t
from app.text import plain
from cogs.guard import ID_PATTERN, BadInput, first
from cogs.rules import game_choices
from cogs.common.adapter import quietly
from cogs.common.parts import parts
from cogs.common.ui import decimal, on_own_private_message, reply, user_lang
from core import registry
from app import ratings
from app.store.base import ACTIVE_DAYS
from core.registry import MIN_GAMES

log = logging.getLogger(__name__)

GAME_CHOICES = game_choices()
DEFAULT_GAME = registry.GAMES[0].key
BOARD_SIZE = 10
PROFILE_CARDS = (5, 60.0)  # profile cards a user may have drawn per this many seconds


def _pct(value: float | None, lang: str = "en") -> str:
    """A win rate as the reader writes percentages.

    >>> _pct(0.5), _pct(0.5, "de"), _pct(None)
    ('50%', '50 %', '-')
    """
    return "-" if value is None else t(lang, "stats.percent", value=f"{100 * value:.0f}")


def board_value(lang: str, by: str, row: dict[str, Any]) -> str:
    if by == "win_rate":
        return _pct(row["value"], lang)
    if by == "rating":
        return decimal(row["value"], lang=lang)
    return str(int(row["value"]))


class BoardButton(discord.ui.DynamicItem[discord.ui.Button],
                  template=r"lb:(?P<game>" + registry.KEY_PATTERN + r"):(?P<scope>g|s?" + ID_PATTERN + r"):(?P<by>rating|wins|win_rate|games):(?P<page>\d{1,7})"):
    """Previous/next on a leaderboard; everything needed lives in the custom_id."""

    def __init__(self, game: str, scope: str, by: str, page: int, label: str, disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(label=label, disabled=disabled,
                                           custom_id=f"lb:{game}:{scope}:{by}:{page}"))
        self.game, self.scope, self.by, self.page = game, scope, by, page

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /):
        # (a forged custom_id may sit on a select: no label then)
        return cls(match["game"], match["scope"], match["by"], int(match["page"]), getattr(item, "label", None) or "-")

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = parts(interaction.client).stats
        await cog.show_board(interaction, self.game, self.scope, self.by, self.page, edit=True)


class MyPlaceButton(discord.ui.DynamicItem[discord.ui.Button],
                    template=r"lbme:(?P<game>" + registry.KEY_PATTERN + r"):(?P<scope>g|s?" + ID_PATTERN + r"):(?P<by>rating|wins|win_rate|games)"):
    """*My place* on a leaderboard: the page with the user's own line (found at the click)."""

    def __init__(self, game: str, scope: str, by: str, label: str) -> None:
        super().__init__(discord.ui.Button(label=label, emoji="📍", custom_id=f"lbme:{game}:{scope}:{by}"))
        self.game, self.scope, self.by = game, scope, by

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /):
        return cls(match["game"], match["scope"], match["by"], getattr(item, "label", None) or "-")

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = parts(interaction.client).stats
        await cog.show_board(interaction, self.game, self.scope, self.by, None, edit=True)


class HistorySelect(discord.ui.DynamicItem[discord.ui.Select], template=rf"hist:(?P<user>{ID_PATTERN})"):
    """Pick one of the recent games to see its final standings."""

    def __init__(self, user_id: int, options: list[discord.SelectOption] | None = None, placeholder: str = "-") -> None:
        super().__init__(discord.ui.Select(custom_id=f"hist:{user_id}", options=options or [
            discord.SelectOption(label="-", value="0")], placeholder=placeholder))
        self.user_id = user_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /):
        made = cls(int(match["user"]))
        if isinstance(item, discord.ui.Select):  # (a forged id on a button: no game chosen)
            made.item = item
        return made

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = parts(interaction.client).stats
        try:
            game_id = first(self.item.values)
        except BadInput:
            return await reply(interaction, t(user_lang(interaction), "guard.bad_input"))
        await cog.show_game(interaction, game_id)


class StatsCog(commands.Cog, name="Stats"):
    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.cards = Cooldown(*PROFILE_CARDS)

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(BoardButton, MyPlaceButton, HistorySelect)
        parts(self.bot).loaded_stats = self

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(BoardButton, MyPlaceButton, HistorySelect)
        if parts(self.bot).loaded_stats is self:
            parts(self.bot).loaded_stats = None

    # ------------------------------------------------------------------ /stats
    @app_commands.command(name=_("stats", key="commands.stats.name"),
                          description=_("A player's stats and rating", key="commands.stats.description"))
    @app_commands.rename(user=_("user", key="commands.opt_user.name"), game=_("game", key="commands.opt_game.name"))
    @app_commands.describe(user=_("Whose stats (default: yours)", key="commands.opt_user.description"),
                           game=_("Which game", key="commands.opt_game.description"))
    @app_commands.choices(game=GAME_CHOICES)
    async def stats(self, interaction: discord.Interaction, user: discord.User | None = None,
                    game: app_commands.Choice[str] | None = None) -> None:
        lang = user_lang(interaction)
        target = user or interaction.user
        shown = plain(target.display_name)
        # The answer fills this "thinking..." message as an edit of it (@original): discord.py
        # sends an edit again after a 5xx, which changes nothing, whereas a followup (no nonce)
        # sent again after a 5xx that came after it landed shows the answer twice.
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            played = await self.played_games(target.id)
            # no game asked: the one the person played last (not always the first game of the list)
            key = game.value if game else next(iter(played), DEFAULT_GAME)
            profile = played.get(key) or await self.bot.store.profile(target.id, key, None)
            local = await self.bot.store.profile(target.id, key, interaction.guild_id) if interaction.guild_id else None
            settings = await self.bot.store.guild_settings(interaction.guild_id) if interaction.guild_id else None
            if profile:
                profile = {**profile, "rated_at": await self.bot.store.rated_at(target.id, key, None)}
            if local:
                local = {**local, "rated_at": await self.bot.store.rated_at(target.id, key, interaction.guild_id),
                         "window": (settings or {}).get("activity_days") or ACTIVE_DAYS,
                         "excluded": await self.bot.store.is_excluded(interaction.guild_id, target.id),
                         "boards": (settings or {}).get("boards") or "all"}
        except Exception:
            log.exception("stats of %s failed", target.id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        others = [t(lang, f"{other}.title") for other in played if other != key]
        also = t(lang, "stats.also_played", games=", ".join(others), option=t(lang, "commands.opt_game.name"),
                 command=f"/{t(lang, 'commands.stats.name')}") if others else ""
        if not profile or not profile.get("games"):
            text = (t(lang, "stats.no_games", name=shown, game=t(lang, f"{key}.title")) if game or played
                    else t(lang, "stats.no_games_any", name=shown))
            return await quietly(interaction.edit_original_response(content="\n".join(filter(None, (text, also)))))
        wait = self.cards.take(interaction.user.id)
        if wait is not None:
            return await quietly(interaction.edit_original_response(
                content=t(lang, "guard.cooldown", when=f"<t:{int(time.time() + wait) + 1}:R>")))
        profile = {**profile, "name": target.display_name, "game": key}
        embed = discord.Embed(title=t(lang, "stats.title", name=shown, game=t(lang, f"{key}.title")),
                              colour=discord.Colour.green())
        embed.description = self.profile_text(lang, key, profile, settings)
        try:
            nights = await self.bot.store.night_record(target.id, key)
        except Exception:
            log.exception("night record of %s failed", target.id)
            nights = {"played": 0}
        if nights["played"]:
            embed.description += "\n" + t(lang, "nights.stats_line", played=nights["played"], won=nights["won"])
        if local and local.get("excluded") and target.id != interaction.user.id:
            local = None  # this server's boards do not list them: their own /stats alone says so
        if local and local.get("games"):
            embed.add_field(name=t(lang, "stats.this_server"), value=self.profile_text(lang, key, local, settings),
                            inline=False)
        if also:
            embed.set_footer(text=also)
        labels = {k: t(lang, f"render.{k}") for k in render_profile_card.PROFILE_LABELS}
        spec = registry.spec(key)  # the card lays out the figures the game declares
        labels.update({stat.label_key: t(lang, stat.label) for stat in spec.stats})
        labels[f"game_{key}"] = t(lang, spec.title_key)
        try:
            image = await render_pool.draw(render_profile_card.render_profile, profile, labels, urgent=True)
        except Exception:  # e.g. a name the font engine cannot lay out: the figures still go out
            log.exception("profile card of %s could not be drawn", target.id)
            return await quietly(interaction.edit_original_response(embed=embed))
        embed.set_image(url="attachment://profile.png")
        await quietly(interaction.edit_original_response(
            embed=embed, attachments=[discord.File(io.BytesIO(image), "profile.png")]))

    async def played_games(self, user_id: int) -> dict[str, dict[str, Any]]:
        """The person's global profile of every game they finished, the game
        played last first."""
        store = self.bot.store
        last = {g["game"]: i for i, g in enumerate(await store.history(user_id, limit=1))}
        out = {}
        for spec in registry.GAMES:
            profile = await store.profile(user_id, spec.key, None)
            if profile and profile.get("games"):
                out[spec.key] = profile
        return dict(sorted(out.items(), key=lambda item: last.get(item[0], len(last))))

    def profile_text(self, lang: str, game: str, p: dict[str, Any], settings: dict[str, Any] | None = None) -> str:
        """The figures of a profile, and why it has no rank when it has none
        (*settings*: the server's, where the question was asked)."""
        lines = [t(lang, "stats.games", games=p["games"], wins=p["wins"], rate=_pct(p.get("win_rate"), lang))]
        if p.get("excluded"):  # /boards exclude: on no board of this server, whatever the figures
            lines.append(t(lang, "stats.excluded_here"))
        elif p.get("boards") == "off":  # /boards visibility: no rank here to speak of
            lines.append(t(lang, "seasons.boards_are_off"))
        elif p.get("boards") == "season":
            lines.append(t(lang, "seasons.boards_are_season_only", option=t(lang, "commands.opt_season.name")))
        elif p.get("ordinal") is not None:
            rank = p.get("rank")
            figures = {"rating": decimal(p["ordinal"], lang=lang), "mu": decimal(p.get("mu"), lang=lang),
                       "sigma": decimal(p.get("sigma"), lang=lang)}
            if rank:
                lines.append(t(lang, "stats.rating", rank=rank, **figures))
            else:  # rated, but not on the board yet: how many games to go
                lines.append(t(lang, "stats.rating_unranked", **figures,
                               why=t(lang, "stats.rank_after", count=max(1, MIN_GAMES - int(p["games"])))))
            rated_at, window = p.get("rated_at"), float(p.get("window") or ACTIVE_DAYS)
            if rated_at is not None and (rank or p.get("parked")):  # until when it is on the board, or since when not
                until = f"<t:{int(rated_at + window * 86400)}:D>"
                key = "stats.activity_off" if p.get("parked") else "stats.activity_on"
                lines.append(t(lang, key, when=until, count=int(window)))
                idle = (time.time() - rated_at) / 86400
                if idle >= 1:  # its uncertainty as it has grown since (app.ratings.idle_sigma)
                    sigma = ratings.idle_sigma(float(p["sigma"]), idle)
                    lines.append(t(lang, "stats.activity_idle", count=int(idle), sigma=decimal(sigma, lang=lang),
                                   rating=decimal(float(p["mu"]) - 3 * sigma, lang=lang)))
        else:
            rated_setting = f"/{t(lang, 'commands.settings.name')} {t(lang, 'commands.settings_rated.name')}"
            why = ("stats.unrated_computers_here" if settings is not None and not settings.get("rate_bot_games")
                   else "stats.unrated_computers")
            lines.append(t(lang, "stats.unrated_why", count=p["games"], why=t(lang, why, command=rated_setting)))
        spec = registry.spec(game)
        if spec.stats_line:  # the figures the game declares (core.registry)
            counts = {stat.param: decimal(p.get(stat.key), lang=lang) if stat.kind == "average" else p.get(stat.key) or 0
                      for stat in spec.stats}
            lines.append(t(lang, spec.stats_line, **counts))
        return "\n".join(lines)

    # ------------------------------------------------------------ /leaderboard
    @app_commands.command(name=_("leaderboard", key="commands.leaderboard.name"),
                          description=_("The best players, in this server or everywhere",
                                        key="commands.leaderboard.description"))
    @app_commands.rename(game=_("game", key="commands.opt_game.name"), scope=_("scope", key="commands.opt_scope.name"),
                         by=_("by", key="commands.opt_by.name"), season=_("season", key="commands.opt_season.name"))
    @app_commands.describe(game=_("Which game", key="commands.opt_game.description"),
                           scope=_("This server or all servers", key="commands.opt_scope.description"),
                           by=_("What to rank by", key="commands.opt_by.description"),
                           season=_("A season's board (this season or a past one)",
                                    key="commands.opt_season.description"))
    @app_commands.choices(
        game=GAME_CHOICES,
        scope=[app_commands.Choice(name=_("this server", key="commands.choice_server.name"), value="server"),
               app_commands.Choice(name=_("global", key="commands.choice_global.name"), value="global")],
        by=[app_commands.Choice(name=_("rating", key="commands.choice_rating.name"), value="rating"),
            app_commands.Choice(name=_("wins", key="commands.choice_wins.name"), value="wins"),
            app_commands.Choice(name=_("win rate", key="commands.choice_win_rate.name"), value="win_rate"),
            app_commands.Choice(name=_("games", key="commands.choice_games.name"), value="games")],
    )
    async def leaderboard(self, interaction: discord.Interaction, game: app_commands.Choice[str] | None = None,
                          scope: app_commands.Choice[str] | None = None,
                          by: app_commands.Choice[str] | None = None,
                          season: app_commands.Range[str, 1, 60] | None = None) -> None:
        where = "g" if (scope and scope.value == "global") or interaction.guild_id is None else str(interaction.guild_id)
        if season is not None:  # a season's board: of this server, else the global calendar's
            found = await self.find_season(interaction, season, global_only=where == "g")
            if found is None:
                return await reply(interaction, t(user_lang(interaction), "seasons.no_such_season",
                                                  name=plain(season)))
            where = f"s{found['id']}"
        # "this server" asked in a DM: there is none, and the answer says which board it is instead
        note = scope is not None and scope.value == "server" and interaction.guild_id is None
        await self.show_board(interaction, game.value if game else DEFAULT_GAME, where, by.value if by else "rating", 0,
                              note="stats.dm_all_servers" if note else None)

    async def find_season(self, interaction: discord.Interaction, text: str,
                          global_only: bool = False) -> dict[str, Any] | None:
        """The season a user named (or picked: its id) among this server's
        and the global calendar's, newest first."""
        store = self.bot.store
        seasons = [] if global_only or interaction.guild_id is None else await store.seasons(interaction.guild_id)
        seasons += await store.seasons(0)
        wanted = text.strip().casefold()
        return next((s for s in seasons if str(s["id"]) == wanted or s["name"].casefold() == wanted), None)

    @leaderboard.autocomplete("season")
    async def season_names(self, interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        lang = user_lang(interaction)
        store = self.bot.store
        try:
            mine = await store.seasons(interaction.guild_id) if interaction.guild_id else []
            every = await store.seasons(0)
        except Exception:
            log.warning("season names failed", exc_info=True)
            return []
        shown = [(s["name"], str(s["id"])) for s in mine]
        shown += [(t(lang, "seasons.global_season", name=s["name"]), str(s["id"])) for s in every]
        typed = current.casefold()
        return [app_commands.Choice(name=name[:100], value=value) for name, value in shown
                if typed in name.casefold()][:25]

    async def show_board(self, interaction: discord.Interaction, game: str, scope: str, by: str, page: int | None,
                         edit: bool = False, note: str | None = None) -> None:
        """A page of a board (``page`` None: the page with the user's own line); *scope*
        "g" (all servers), a guild id, or "s" and a season id."""
        lang = user_lang(interaction)
        store = self.bot.store
        season = None
        if scope.startswith("s"):
            try:
                season = await store.season(int(scope[1:]))
            except Exception:
                log.exception("season %s failed", scope)
                return await reply(interaction, t(lang, "errors.unexpected"))
            if season is None or season["guild_id"] not in (0, interaction.guild_id):
                return await reply(interaction, t(lang, "guard.other_server"))  # forged: another server's season
        elif scope != "g" and scope != str(interaction.guild_id):
            return await reply(interaction, t(lang, "guard.other_server"))  # a forged id: another server's board
        guild_id = None if scope == "g" or season is not None else int(scope)
        where_season = None if season is None else season["id"]
        if guild_id is not None or (season is not None and season["guild_id"]):  # this server's own boards
            try:
                shown = (await store.guild_settings(interaction.guild_id)).get("boards") or "all"
            except Exception:
                log.exception("board settings failed")
                return await reply(interaction, t(lang, "errors.unexpected"))
            if shown == "off":
                return await reply(interaction, t(lang, "seasons.boards_are_off"))
            if shown == "season" and season is None:
                return await reply(interaction, t(lang, "seasons.boards_are_season_only",
                                                  option=t(lang, "commands.opt_season.name")))
        try:
            place = await store.board_place(interaction.user.id, game, guild_id, by=by, season=where_season)
            own, position = place if place is not None else (None, None)
            if page is None:  # the page holding the user's own line (equal values share a rank, not a line)
                page = (position - 1) // BOARD_SIZE if position else 0
            board = await store.leaderboard(game, guild_id, by=by, page=page, page_size=BOARD_SIZE, min_games=MIN_GAMES,
                                            season=where_season)
        except Exception:
            log.exception("leaderboard failed")
            return await reply(interaction, t(lang, "errors.unexpected"))
        if season is not None:
            where = t(lang, "seasons.board_scope", name=plain(season["name"]))
            if season["guild_id"] == 0:
                where = t(lang, "seasons.global_season", name=where)
        else:
            where = t(lang, "stats.global") if guild_id is None else t(lang, "stats.server")
        embed = discord.Embed(title=t(lang, "stats.board_title", game=t(lang, f"{game}.title"), scope=where,
                                      by=t(lang, f"stats.by_{by}")), colour=discord.Colour.gold())
        lines = []
        for row in board.rows:
            mark = "**" if row["user_id"] == interaction.user.id else ""
            name = plain(row["name"] or str(row["user_id"]))
            lines.append(f"{mark}{row['rank']}. {name} — {board_value(lang, by, row)} "
                         f"({t(lang, 'stats.games_short', count=row['games'])}){mark}")
        embed.description = "\n".join(lines) or t(lang, "stats.board_empty")
        if note is not None:
            embed.description = (t(lang, note, command=f"/{t(lang, 'commands.leaderboard.name')}")
                                 + "\n\n" + embed.description)
        footer = [t(lang, "stats.page", page=board.page + 1, pages=max(1, board.pages))]
        footer.append(t(lang, "stats.your_rank", rank=own) if own else t(lang, "stats.not_ranked"))
        if by in ("rating", "win_rate"):
            footer.append(t(lang, "stats.min_games", count=MIN_GAMES))
        embed.set_footer(text=" · ".join(footer))
        view = discord.ui.View(timeout=None)
        view.add_item(BoardButton(game, scope, by, max(0, board.page - 1), t(lang, "pager.previous"),
                                  disabled=board.page <= 0))
        view.add_item(BoardButton(game, scope, by, board.page + 1, t(lang, "pager.next"),
                                  disabled=board.page + 1 >= board.pages))
        if position and not board.page - 1 <= (position - 1) // BOARD_SIZE <= board.page + 1:  # beyond a click
            view.add_item(MyPlaceButton(game, scope, by, t(lang, "stats.my_place")))
        if edit and on_own_private_message(interaction):  # (never onto a public message: a forged click)
            await interaction.response.edit_message(embed=embed, view=view)
        else:
            await interaction.response.send_message(embed=embed, view=view, ephemeral=True)

    # ---------------------------------------------------------------- /history
    @app_commands.command(name=_("history", key="commands.history.name"),
                          description=_("Recent games of a player", key="commands.history.description"))
    @app_commands.rename(user=_("user", key="commands.opt_user.name"))
    @app_commands.describe(user=_("Whose games (default: yours)", key="commands.opt_history_user.description"))
    async def history(self, interaction: discord.Interaction, user: discord.User | None = None) -> None:
        lang = user_lang(interaction)
        target = user or interaction.user
        shown = plain(target.display_name)
        try:  # in a server: the games played in it (a DM shows every server's)
            games = await self.bot.store.history(target.id, limit=10, guild_id=interaction.guild_id)
        except Exception:
            log.exception("history of %s failed", target.id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        if not games:
            empty_key = "guard.no_history" if interaction.guild_id else "stats.no_history"
            return await reply(interaction, t(lang, empty_key, name=shown))
        lines = []
        options = []
        variants = await self.variants_of(games)
        for g in games:
            when = f"<t:{int(g['ended_at'])}:d>"
            title = t(lang, f"{g['game']}.title")
            variant = registry.spec(g["game"]).variant(variants.get(g["game_id"])) if g["game"] in registry.KEYS else None
            if variant is not None:  # a variant's game says so
                title = t(lang, "stats.history_variant", game=title, variant=t(lang, variant.label_key))
            lines.append(t(lang, "stats.history_line", game=title, when=when, place=g["place"],
                           players=g["players"], score=g["score"]))
            # several games a day: the time (and score) tell the options apart
            stamp = datetime.fromtimestamp(g["ended_at"], tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            options.append(discord.SelectOption(
                label=t(lang, "stats.history_option", game=title, place=g["place"], players=g["players"])[:100],
                description=f"{stamp} · {g['score']}"[:100], value=str(g["game_id"])))
        title_key = "guard.history_title" if interaction.guild_id else "stats.history_title"
        embed = discord.Embed(title=t(lang, title_key, name=shown),
                              description="\n".join(lines), colour=discord.Colour.teal())
        view = discord.ui.View(timeout=None)
        view.add_item(HistorySelect(target.id, options, t(lang, "stats.history_pick")))
        await interaction.response.send_message(embed=embed, view=view, ephemeral=True)

    async def variants_of(self, games: list[dict[str, Any]]) -> dict[int, str]:
        """Game id -> its table's variant, for the games that had one (read from their tables)."""
        out: dict[int, str] = {}
        for g in games:
            record = await self.bot.store.table(g["table_id"]) if g.get("table_id") is not None else None
            variant = ((record.meta.get("shuffle") or {}).get("variant") if record is not None else None)
            if variant:
                out[g["game_id"]] = str(variant)
        return out

    async def show_game(self, interaction: discord.Interaction, game_id: int) -> None:
        lang = user_lang(interaction)
        try:
            detail = await self.bot.store.game_detail(game_id)
        except Exception:
            log.exception("game %s failed", game_id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        if not detail:
            return await reply(interaction, t(lang, "stats.no_such_game"))
        if interaction.guild_id is not None and detail["guild_id"] != interaction.guild_id:
            return await reply(interaction, t(lang, "guard.other_server"))
        title = t(lang, f"{detail['game']}.title")
        lines = []
        for p in detail["standings"]:
            name = plain(p["name"])
            if p.get("computer"):
                name = t(lang, "table.computer_name", name=name)
            lines.append(t(lang, "table.standing", place=p["place"], name=name, score=p["score"]))
        embed = discord.Embed(title=t(lang, "stats.game_title", game=title, id=game_id),
                              description="\n".join(lines), colour=discord.Colour.teal())
        embed.add_field(name=t(lang, "stats.when"), value=f"<t:{int(detail['ended_at'])}:f>")
        embed.add_field(name=t(lang, "stats.rounds"), value=str(detail.get("rounds", "-")))
        after = parts(interaction.client).loaded_after  # Replay and Verify (cogs/after.py)
        if after is not None:
            return await reply(interaction, embed=embed, view=after.game_view(game_id, lang))
        await reply(interaction, embed=embed)


async def setup(bot: Any) -> None:
    await bot.add_cog(StatsCog(bot))
