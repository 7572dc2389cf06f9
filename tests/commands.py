"""The slash commands as Discord is sent them: a bare bot with every extension
loaded (their services mocked), as ``CommandTree.sync`` would see it."""
from __future__ import annotations

import warnings
from typing import Any
from unittest.mock import MagicMock

import discord
from discord.ext import commands

from tests import ROOT


def extensions() -> list[str]:
    """The extensions the bot loads (bot.INITIAL_EXTENSIONS), else every cog module."""
    try:
        import bot as launcher

        return list(launcher.INITIAL_EXTENSIONS)
    except Exception:
        return [f"cogs.{p.stem}" for p in sorted((ROOT / "cogs").glob("*.py")) if p.stem != "__init__"]


async def tree_with_every_cog() -> commands.Bot:
    """A bare bot with every extension loaded.  Extensions that cannot load this
    way are reported, not fatal: their own tests cover them."""
    from cogs.common.parts import Parts

    bot: Any = commands.Bot(command_prefix="!", intents=discord.Intents.none())
    bot.store, bot.tables, bot.nights, bot.config = MagicMock(), MagicMock(), MagicMock(), MagicMock()
    bot.parts = Parts()  # (the cogs find one another there, as on bot.CardBot)
    for extension in extensions():
        try:
            await bot.load_extension(extension)
        except Exception as exc:  # pragma: no cover - depends on other cogs
            warnings.warn(f"{extension} did not load on a bare bot: {exc!r}")
    return bot


async def slash_commands() -> dict[str, dict[str, list[str]]]:
    """Every command a user types, by its English path (``take6 new``), with the
    English names of its options and of each option's choices, as the translated
    payload sends them (the names a client without a translation shows)."""
    from cogs.common.translator import CatalogueTranslator

    bot = await tree_with_every_cog()
    translator = CatalogueTranslator()
    found: dict[str, dict[str, list[str]]] = {}

    def walk(payload: dict[str, Any], path: str) -> None:
        options = payload.get("options", [])
        groups = [o for o in options if o["type"] in (1, 2)]  # subcommands, subcommand groups
        for group in groups:
            walk(group, f"{path} {group['name']}")
        if not groups:
            found[path] = {o["name"]: [c["name"] for c in o.get("choices", [])] for o in options}

    try:
        for command in bot.tree.get_commands():
            payload = await command.get_translated_payload(bot.tree, translator)
            walk(payload, payload["name"])
    finally:
        await bot.close()
    return found
