"""``/rules [game]``: the rules of every game of the registry, house rules included.

The answer is ephemeral, in the user's language, one embed per page with
Previous/Next buttons and a button to each other game.  Every button is a
``RulesButton`` (a ``DynamicItem``): its custom_id ``rules:<game>:<lang>:<page>``
carries the page it leads to, so clicks keep working after a restart.
"""
from __future__ import annotations

import logging
import re
from typing import Optional

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str
from discord.ext import commands

from app.i18n.catalogue import normalise, t
from app.i18n.rules import GAMES, rules_pages
from cogs.common.ui import on_own_private_message
from core import registry

log = logging.getLogger(__name__)

CUSTOM_ID_TEMPLATE = rf"rules:(?P<game>{registry.KEY_PATTERN}):(?P<lang>en|es|de):(?P<page>\d+)"
_CUSTOM_ID = re.compile(CUSTOM_ID_TEMPLATE)


def choice_key(game: str) -> str:
    """The catalogue key of a game's name in command choices."""
    return f"commands.choice_{game}.name"


def game_choices() -> list[Choice[str]]:
    """One choice per registered game (``/rules``, ``/stats``, ``/leaderboard``)."""
    return [Choice(name=locale_str(t("en", choice_key(spec.key)), key=choice_key(spec.key)), value=spec.key)
            for spec in registry.GAMES]


def custom_id(game: str, lang: str, page: int) -> str:
    """The custom_id of a button that shows ``page`` (0-based) of ``game``.

    >>> custom_id("abc", "de", 2)
    'rules:abc:de:2'
    """
    return f"rules:{game}:{lang}:{page}"


def parse_custom_id(text: str) -> Optional[tuple[str, str, int]]:
    """``(game, lang, page)`` from a custom_id, or ``None`` if it is not ours.

    >>> parse_custom_id(f"rules:{GAMES[0]}:es:1") == (GAMES[0], "es", 1), parse_custom_id("rules:chess:en:0")
    (True, None)
    """
    match = _CUSTOM_ID.fullmatch(text)
    if match is None:
        return None
    return match["game"], match["lang"], int(match["page"])


def page_count(game: str, lang: str) -> int:
    return len(rules_pages(game, lang))


def build_embed(game: str, lang: str, page: int) -> tuple[discord.Embed, int]:
    """The embed for ``page`` of ``game`` in ``lang`` (page clamped into
    range, e.g. after the rules text shrank) and the page actually shown."""
    pages = rules_pages(game, lang)
    page = max(0, min(page, len(pages) - 1))
    title, body = pages[page]
    embed = discord.Embed(title=title, description=body, colour=discord.Colour.from_rgb(*registry.spec(game).colour))
    embed.set_footer(text=t(lang, "rules.footer", page=page + 1, pages=len(pages)))
    return embed, page


def button_specs(game: str, lang: str, page: int, pages: int) -> list[dict]:
    """What the buttons under ``page`` are: label, target custom_id, style,
    disabled.  Custom ids are unique within the message (Discord requires it).

    >>> first, second = GAMES[:2]
    >>> [(b["custom_id"], b["disabled"]) for b in button_specs(first, "en", 0, 3)][:3] == [
    ...     (f"rules:{first}:en:0", True), (f"rules:{first}:en:1", False), (f"rules:{second}:en:0", False)]
    True
    """
    specs: list[dict] = []
    if pages > 1:
        specs.append(dict(
            label=t(lang, "rules.previous"), emoji="◀️", style=discord.ButtonStyle.secondary,
            custom_id=custom_id(game, lang, max(page - 1, 0)), disabled=page == 0,
        ))
        specs.append(dict(
            label=t(lang, "rules.next"), emoji="▶️", style=discord.ButtonStyle.secondary,
            custom_id=custom_id(game, lang, min(page + 1, pages - 1)), disabled=page >= pages - 1,
        ))
    for other in GAMES:
        if other != game:
            specs.append(dict(
                label=t(lang, "rules.other_game", game=t(lang, choice_key(other)))[:80], emoji="📖",
                style=discord.ButtonStyle.primary, custom_id=custom_id(other, lang, 0), disabled=False,
            ))
    return specs


def build_page(game: str, lang: str, page: int) -> tuple[discord.Embed, discord.ui.View]:
    """Embed and buttons for one page; the view holds only dynamic items, so
    discord.py keeps no per-message state for it."""
    embed, page = build_embed(game, lang, page)
    view = discord.ui.View(timeout=None)
    for spec in button_specs(game, lang, page, page_count(game, lang)):
        view.add_item(RulesButton.from_spec(**spec))
    return embed, view


class RulesButton(discord.ui.DynamicItem[discord.ui.Button], template=CUSTOM_ID_TEMPLATE):
    """A button that turns the rules message to the page named in its custom_id."""

    def __init__(self, button: discord.ui.Button) -> None:
        super().__init__(button)
        parsed = parse_custom_id(button.custom_id or "")
        if parsed is None:
            raise ValueError(f"not a rules custom_id: {button.custom_id!r}")
        self.game, self.lang, self.page = parsed

    @classmethod
    def from_spec(cls, *, label: str, emoji: str, style: discord.ButtonStyle, custom_id: str, disabled: bool) -> "RulesButton":
        return cls(discord.ui.Button(label=label, emoji=emoji, style=style, custom_id=custom_id, disabled=disabled))

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item, match: re.Match[str], /) -> "RulesButton":
        # ``item`` is the button as it came in with the message.
        return cls(discord.ui.Button(custom_id=match.group(0), label=getattr(item, "label", None)))

    async def callback(self, interaction: discord.Interaction) -> None:
        try:
            embed, view = build_page(self.game, self.lang, self.page)
        except Exception:
            # Exceptions in dynamic items are only logged: tell the user ourselves.
            log.exception("rules page %s:%s:%s failed", self.game, self.lang, self.page)
            await _send_error(interaction, self.lang)
            return
        if on_own_private_message(interaction):
            await interaction.response.edit_message(embed=embed, view=view)
        else:  # (a forged click on a public message: the page comes privately)
            await interaction.response.send_message(embed=embed, view=view, ephemeral=True)


async def _send_error(interaction: discord.Interaction, lang: str) -> None:
    text = t(lang, "rules.error", command=t(lang, "commands.rules.name"))
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException:
        log.warning("could not tell the user that /rules failed", exc_info=True)


class Rules(commands.Cog):
    """The ``/rules`` command and its page buttons."""

    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(RulesButton)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(RulesButton)

    @app_commands.command(
        name=locale_str("rules", key="commands.rules.name"),
        description=locale_str(
            "Read the rules of a game, including this bot's house rules",
            key="commands.rules.description",
        ),
    )
    @app_commands.rename(game=locale_str("game", key="commands.opt_game.name"))
    @app_commands.describe(game=locale_str("Which game's rules to show", key="commands.opt_rules_game.description"))
    @app_commands.choices(game=game_choices())
    async def rules(self, interaction: discord.Interaction, game: Optional[Choice[str]] = None) -> None:
        lang = normalise(interaction.locale)
        embed, view = build_page(game.value if game else GAMES[0], lang, 0)
        await interaction.response.send_message(embed=embed, view=view, ephemeral=True)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Rules(bot))
