"""Server settings and the owner's command sync."""
from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app.i18n.catalogue import normalise, t
from app.tables.manager import slow_guard, when_slow
from cogs.common.adapter import quietly
from cogs.common.ui import reply, user_lang

log = logging.getLogger(__name__)


class AdminCog(commands.Cog, name="Admin"):
    """``/settings`` for server managers, ``/sync`` for the bot's owner."""

    settings = app_commands.Group(
        name=_("settings", key="commands.settings.name"),
        description=_("Server settings of the card bot", key="commands.settings.description"),
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    def __init__(self, bot: Any) -> None:
        self.bot = bot

    @settings.command(name=_("language", key="commands.settings_language.name"),
                      description=_("Language of the public table messages in this server",
                                    key="commands.settings_language.description"))
    @app_commands.describe(language=_("auto follows the server's language", key="commands.opt_language.description"))
    @app_commands.rename(language=_("language", key="commands.opt_language.name"))
    @app_commands.choices(language=[
        app_commands.Choice(name=_("auto", key="commands.choice_auto.name"), value="auto"),
        app_commands.Choice(name="English", value="en"),
        app_commands.Choice(name="Español", value="es"),
        app_commands.Choice(name="Deutsch", value="de"),
    ])
    async def language(self, interaction: discord.Interaction, language: app_commands.Choice[str]) -> None:
        if not self._can_manage(interaction):
            return await reply(interaction, t(user_lang(interaction), "errors.manage_guild_only"))
        value = None if language.value == "auto" else language.value
        if not await self._save(interaction, "language", value):
            return
        shown = t(value or user_lang(interaction), "admin.language_name") if value else t(
            user_lang(interaction), "admin.language_auto")
        await reply(interaction, t(user_lang(interaction), "admin.language_set", language=shown))

    @settings.command(name=_("rated_computers", key="commands.settings_rated.name"),
                      description=_("Whether games with computer players count for ratings",
                                    key="commands.settings_rated.description"))
    @app_commands.rename(enabled=_("enabled", key="commands.opt_enabled.name"))
    @app_commands.describe(enabled=_("on: games with computer players are rated",
                                     key="commands.opt_enabled.description"))
    async def rated_computers(self, interaction: discord.Interaction, enabled: bool) -> None:
        if not self._can_manage(interaction):
            return await reply(interaction, t(user_lang(interaction), "errors.manage_guild_only"))
        if not await self._save(interaction, "rate_bot_games", bool(enabled)):
            return
        key = "admin.rated_on" if enabled else "admin.rated_off"
        await reply(interaction, t(user_lang(interaction), key))

    @settings.command(name=_("rated_variants", key="commands.settings_rated_variants.name"),
                      description=_("Whether games of a table variant count for the rating boards",
                                    key="commands.settings_rated_variants.description"))
    @app_commands.rename(enabled=_("enabled", key="commands.opt_enabled.name"))
    @app_commands.describe(enabled=_("on: games of a table variant are rated like the standard game",
                                     key="commands.opt_variants_enabled.description"))
    async def rated_variants(self, interaction: discord.Interaction, enabled: bool) -> None:
        if not self._can_manage(interaction):
            return await reply(interaction, t(user_lang(interaction), "errors.manage_guild_only"))
        if not await self._save(interaction, "rate_variants", bool(enabled)):
            return
        key = "admin.variants_rated_on" if enabled else "admin.variants_rated_off"
        await reply(interaction, t(user_lang(interaction), key))

    @settings.command(name=_("show", key="commands.settings_show.name"),
                      description=_("This server's settings of the card bot",
                                    key="commands.settings_show.description"))
    async def show(self, interaction: discord.Interaction) -> None:
        lang = user_lang(interaction)
        if not self._can_manage(interaction):
            return await reply(interaction, t(lang, "errors.manage_guild_only"))
        try:
            settings = await self.bot.store.guild_settings(interaction.guild_id)
            excluded = await self.bot.store.excluded_members(interaction.guild_id)
        except Exception:
            log.exception("settings of server %s", interaction.guild_id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        chosen = settings.get("language")
        if chosen:
            language = t(chosen, "admin.language_name")
        else:  # auto: what the tables use now
            server = normalise(interaction.guild_locale)
            language = t(lang, "admin.show_auto", language=t(server, "admin.language_name"))
        lines = [t(lang, "admin.show_language", language=language),
                 t(lang, "admin.show_rated_on" if settings.get("rate_bot_games") else "admin.show_rated_off"),
                 t(lang, "admin.show_variants_on" if settings.get("rate_variants") else "admin.show_variants_off"),
                 t(lang, "admin.show_excluded", members=", ".join(f"<@{user_id}>" for user_id in excluded))
                 if excluded else t(lang, "admin.show_excluded_none")]
        embed = discord.Embed(title=t(lang, "admin.show_title"), description="\n".join(lines),
                              colour=discord.Colour.blurple())
        await reply(interaction, embed=embed)

    async def _save(self, interaction: discord.Interaction, key: str, value: Any) -> bool:
        """Save one server setting; a database that is locked elsewhere defers the
        answer past Discord's 3 s, one that refuses the change (full, read-only,
        failing) is told, and nothing changed."""
        async def defer() -> None:  # privately: the answer is the admin's alone
            if not interaction.response.is_done():
                await interaction.response.defer(ephemeral=True, thinking=True)

        when_slow(defer)
        try:
            await slow_guard(self.bot.store.set_guild_setting(interaction.guild_id, key, value))
        except Exception:
            log.warning("setting %s of server %s not saved", key, interaction.guild_id, exc_info=True)
            await reply(interaction, t(user_lang(interaction), "faults.not_saved"))
            return False
        return True

    @staticmethod
    def _can_manage(interaction: discord.Interaction) -> bool:
        perms = interaction.permissions
        return bool(perms.manage_guild or perms.administrator)

    @app_commands.command(name=_("sync", key="commands.sync.name"),
                          description=_("Owner only: publish the slash commands to every server",
                                        key="commands.sync.description"),
                          extras={"owner_only": True})  # /help lists it to the owner alone
    @app_commands.default_permissions(administrator=True)  # hidden from ordinary members; the owner check decides
    async def sync(self, interaction: discord.Interaction) -> None:
        lang = user_lang(interaction)
        if not await self.bot.is_owner(interaction.user):
            return await reply(interaction, t(lang, "errors.owner_only"))
        await interaction.response.defer(ephemeral=True, thinking=True)
        synced = await self.bot.tree.sync()
        # (an edit of the "thinking" message: sent again after a 5xx, it changes nothing; a followup was shown twice)
        await quietly(interaction.edit_original_response(content=t(lang, "admin.synced", count=len(synced))))


async def setup(bot: Any) -> None:
    await bot.add_cog(AdminCog(bot))
