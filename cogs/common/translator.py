"""Localised slash commands: names, descriptions and choices from the catalogues.

Declare every user-visible part of a slash command with a ``locale_str``
whose message is the English text and whose ``key`` extra names an entry of
``data/locales/<lang>/commands.json`` (the English entry repeats the
message; a test checks they agree)::

    @app_commands.command(
        name=locale_str("rules", key="commands.rules.name"),
        description=locale_str("Read the rules ...", key="commands.rules.description"),
    )
    @app_commands.rename(game=locale_str("game", key="commands.opt_game.name"))
    @app_commands.describe(game=locale_str("Which game's rules to show", key="commands.opt_rules_game.description"))
    @app_commands.choices(by=[Choice(name=locale_str("wins", key="commands.choice_wins.name"), value="wins")])

Key conventions (all flat, in ``commands.json``):

- ``<command>.name`` / ``<command>.description``: a top-level command or
  group (``commands.settings.name``); a subcommand is ``<group>_<sub>.name``
  (``commands.settings_language.name``).
- ``opt_<option>.name`` / ``opt_<option>.description``: an option, shared by
  every command that has it; a command-specific description gets its own
  key (``commands.opt_rules_game.description``).
- ``choice_<value>.name``: the display name of a choice.
- ``<menu>.menu_name``: a context-menu name.

Names (every ``.name`` key except ``choice_*``) must pass ``is_valid_name``;
descriptions and choice names hold 1..100 characters; context-menu names
1..32 characters of any case.  ``command_str(key)`` builds the ``locale_str``
with the English text taken from the catalogue.

Install once, before syncing the tree (``bot.py`` does, in ``setup_hook``)::

    await bot.tree.set_translator(CatalogueTranslator())
"""
from __future__ import annotations

import logging
import unicodedata
from typing import Any, Optional

from discord import app_commands
from discord.app_commands import TranslationContextLocation as Where
from discord.app_commands import locale_str

from app.i18n.catalogue import DEFAULT, catalogue, t

log = logging.getLogger(__name__)

# Discord locale code -> catalogue language.  English is the source text that
# is registered with Discord anyway, so it needs no localisation.
DISCORD_LOCALES: dict[str, str] = {"es-ES": "es", "es-419": "es", "de": "de"}

NAME_MAX = 32
TEXT_MAX = 100  # descriptions and choice names

_NAME_PLACES = frozenset({Where.command_name, Where.group_name, Where.parameter_name})


def is_valid_name(text: str) -> bool:
    """Whether ``text`` is a valid slash-command, group or option name.

    Discord's rule is ``^[-_\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``, and
    letters that have a lowercase form must be lowercase.

    >>> [is_valid_name(n) for n in ("regeln", "jugar-carta", "größe", "año_2")]
    [True, True, True, True]
    >>> [is_valid_name(n) for n in ("Rules", "two words", "", "x" * 33, "stop!")]
    [False, False, False, False, False]
    """
    if not 1 <= len(text) <= NAME_MAX:
        return False
    for ch in text:
        if ch in "-_":
            continue
        category = unicodedata.category(ch)
        if category[0] in "LN" or unicodedata.name(ch, "").startswith(("DEVANAGARI", "THAI")):
            if ch.lower() != ch:
                return False
            continue
        return False
    return True


def is_valid_text(text: str) -> bool:
    """Descriptions and choice names: 1..100 characters, not blank.

    >>> is_valid_text("Which game"), is_valid_text(" "), is_valid_text("x" * 101)
    (True, False, False)
    """
    return 1 <= len(text) <= TEXT_MAX and not text.isspace()


def key_kind(key: str) -> Optional[str]:
    """What a ``commands.*`` key holds under the conventions above:
    ``"name"``, ``"text"`` (description, choice name), ``"menu"`` or ``None``.

    >>> [key_kind(k) for k in ("commands.settings_language.name", "commands.choice_wins.name",
    ...                        "commands.opt_by.description", "commands.card.menu_name", "table.join")]
    ['name', 'text', 'text', 'menu', None]
    """
    if not key.startswith("commands."):
        return None
    if key.startswith("commands.choice_") or key.endswith(".description"):
        return "text"
    if key.endswith(".menu_name"):
        return "menu"
    if key.endswith(".name"):
        return "name"
    return None


def command_str(key: str, **extras: Any) -> locale_str:
    """A ``locale_str`` for ``key`` whose message is the English catalogue text.

    >>> s = command_str("commands.rules.name")
    >>> str(s), s.extras["key"]
    ('rules', 'commands.rules.name')
    """
    return locale_str(t(DEFAULT, key), key=key, **extras)


def translate_key(key: str, locale: object, where: Optional[Where] = None, *, menu: bool = False) -> Optional[str]:
    """The translation of ``key`` for a Discord ``locale``, or ``None``.

    ``None`` when the locale is not one we translate into, when the
    language's own catalogue lacks the key (no English fallback: Discord
    then shows the default text), or when the translation is not a valid
    value for ``where`` (a name with capitals, a description that is too
    long); the latter is logged.

    >>> translate_key("commands.rules.name", "de"), translate_key("commands.rules.name", "es-419")
    ('regeln', 'reglas')
    >>> translate_key("commands.rules.name", "fr"), translate_key("commands.rules.name", "en-US")
    (None, None)
    """
    lang = DISCORD_LOCALES.get(str(getattr(locale, "value", locale)))
    if lang is None:
        return None
    value = catalogue(lang).get(key)
    if not isinstance(value, str):
        return None
    if where in _NAME_PLACES and not menu:
        ok = is_valid_name(value)
    elif where in _NAME_PLACES:
        ok = 1 <= len(value) <= NAME_MAX
    else:
        ok = is_valid_text(value)
    if not ok:
        log.warning("invalid %s translation for %r in %s: %r", getattr(where, "name", "text"), key, lang, value)
        return None
    return value


class CatalogueTranslator(app_commands.Translator):
    """Translates ``locale_str(..., key=...)`` through ``app.i18n`` catalogues
    for Spanish (``es-ES``, ``es-419``) and German (``de``)."""

    async def translate(
        self,
        string: locale_str,
        locale: Any,
        context: app_commands.TranslationContextTypes,
    ) -> Optional[str]:
        key = string.extras.get("key")
        if not key:
            return None
        menu = context.location is Where.command_name and isinstance(context.data, app_commands.ContextMenu)
        return translate_key(key, locale, context.location, menu=menu)
