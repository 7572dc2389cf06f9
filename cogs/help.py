"""``/help``: how a game night works here, and every command the user can run.

The command list is made from the command tree's own translated payload (what
Discord is sent at a sync), so it names each command, subcommand and option
exactly as the user's Discord client shows them, in their language, and it
never goes stale when a command is added.  Commands Discord hides from the
user (``/settings`` without Manage Server, server-only commands in a DM) are
left out, and ``/sync`` is listed to the bot's owner alone.  The answer is ephemeral.
"""
from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app.i18n.catalogue import has, t
from cogs.common.translator import DISCORD_LOCALES
from cogs.common.ui import reply, user_lang
from core import registry

log = logging.getLogger(__name__)

#: the Discord locale whose localisation a catalogue language reads (English: the default text),
#: from the translator's own table (its first locale of each language)
DISCORD_LOCALE = {lang: locale for locale, lang in reversed(DISCORD_LOCALES.items())}
SUBCOMMAND, GROUP = 1, 2  # option types of the payload
DESCRIPTION_MAX = 4096  # an embed's description


def _local(item: dict[str, Any], field: str, lang: str) -> str:
    locale = DISCORD_LOCALE.get(lang)
    if locale is None:
        return item[field]
    return (item.get(f"{field}_localizations") or {}).get(locale) or item[field]


def command_lines(payload: dict[str, Any], lang: str) -> list[str]:
    """One line per runnable command of a top-level command's payload:
    ``/name sub <required> [optional]`` and its description, in ``lang``.

    >>> p = {"name": "dice", "name_localizations": {"de": "würfel"}, "description": "Play",
    ...      "options": [{"type": 1, "name": "new", "name_localizations": {"de": "neu"},
    ...                   "description": "Open", "description_localizations": {"de": "Öffnen"},
    ...                   "options": [{"type": 4, "name": "seats", "name_localizations": {"de": "plätze"},
    ...                                "description": "n", "required": False}]}]}
    >>> command_lines(p, "de"), command_lines(p, "en")
    (['`/würfel neu [plätze]` — Öffnen'], ['`/dice new [seats]` — Open'])
    """
    lines: list[str] = []

    def walk(item: dict[str, Any], path: list[str]) -> None:
        path = path + [_local(item, "name", lang)]
        options = item.get("options") or []
        subs = [o for o in options if o.get("type") in (SUBCOMMAND, GROUP)]
        if subs:
            for sub in subs:
                walk(sub, path)
            return
        args = [f"<{_local(o, 'name', lang)}>" if o.get("required") else f"[{_local(o, 'name', lang)}]"
                for o in options]
        usage = " ".join(["/" + " ".join(path), *args])
        lines.append(f"`{usage}` — {_local(item, 'description', lang)}")

    walk(payload, [])
    return lines


def local_path(payloads: list[dict[str, Any]], path: list[str], lang: str) -> str:
    """``/night start`` as ``lang``'s client names it (the English names where one is missing)."""
    out, items = [], payloads
    for name in path:
        item = next((i for i in items if i["name"] == name), None)
        if item is None:
            return "/" + " ".join(path)
        out.append(_local(item, "name", lang))
        items = item.get("options") or []
    return "/" + " ".join(out)


def visible(command: Any, interaction: discord.Interaction, owner: bool) -> bool:
    """Whether Discord offers ``command`` to this user here: its default
    permissions (``/settings``, ``/sync``), and server-only commands in a DM;
    a command only the bot's owner may run (``/sync``, which Discord also
    offers to a server's administrators and in every DM) for the owner alone."""
    if getattr(command, "extras", {}).get("owner_only") and not owner:
        return False
    if interaction.guild is None:
        return not getattr(command, "guild_only", False)
    needed = getattr(command, "default_permissions", None)
    return needed is None or interaction.permissions >= needed


class HelpCog(commands.Cog, name="Help"):
    """The ``/help`` command."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self._payloads: list[tuple[Any, dict[str, Any]]] | None = None

    async def payloads(self) -> list[tuple[Any, dict[str, Any]]]:
        """Every top-level slash command with its translated payload (made once)."""
        if self._payloads is None:
            tree = self.bot.tree
            out = []
            for command in tree.get_commands(type=discord.AppCommandType.chat_input):
                payload = None
                if tree.translator is not None:
                    try:
                        payload = await command.get_translated_payload(tree, tree.translator)
                    except Exception:  # the English names rather than no help
                        log.exception("no translated payload for /%s", command.name)
                out.append((command, payload or command.to_dict(tree)))
            self._payloads = out
        return self._payloads

    @app_commands.command(name=_("help", key="commands.help.name"),
                          description=_("How to play here, and every command", key="commands.help.description"))
    async def help(self, interaction: discord.Interaction) -> None:
        lang = user_lang(interaction)
        lines: list[str] = []
        payloads = await self.payloads()
        games = list(registry.KEYS)
        # the games' own commands (opening a table) first, in the registry's order; the rest as loaded
        ordered = sorted(payloads, key=lambda cp: games.index(cp[1]["name"]) if cp[1]["name"] in games else len(games))
        owner = await self.bot.is_owner(interaction.user)
        for command, payload in ordered:
            if visible(command, interaction, owner):
                lines += command_lines(payload, lang)
        every = [payload for _, payload in payloads]
        # (the words of the first game that has them: this module names no game)
        new = local_path(every, [games[0], "new"], lang).split()[-1]
        hand = next((t(lang, f"{key}.my_hand") for key in games if has(f"{key}.my_hand")), "🃏")
        intro = t(lang, "help.intro", rules=f"`{local_path(every, ['rules'], lang)}`",
                  night=f"`{local_path(every, ['night', 'start'], lang)}`", new=new,
                  join=t(lang, "table.join"), start=t(lang, "table.start"), hand=hand,
                  leave=f"`{local_path(every, ['leave'], lang)}`", back=t(lang, "table.im_back"),
                  away=t(lang, "table.step_away"))
        text = intro + "\n\n" + t(lang, "help.commands") + "\n" + "\n".join(lines)
        if interaction.guild is None:
            text += "\n\n" + t(lang, "help.in_dm")
        embed = discord.Embed(title=t(lang, "help.title"), description=text[:DESCRIPTION_MAX],
                              colour=discord.Colour.blurple())
        await reply(interaction, embed=embed)


async def setup(bot: Any) -> None:
    await bot.add_cog(HelpCog(bot))
