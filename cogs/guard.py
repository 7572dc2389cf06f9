"""Components the bot never made: forged, garbled or out-of-range clicks.

Every number the bot reads back from a component (a custom_id part, a
select value) goes through :func:`number`; what the bot could not have made
raises :class:`BadInput`, which the component's handler answers with one
private message (``guard.bad_input``).  :class:`GuardCog` answers the
component interactions no handler of the bot would see at all (a custom_id
of no known shape, or naming a component the message does not have), so
that every click gets an answer.

Why :class:`GuardCog` reads discord.py's private ``ConnectionState._view_store``
(checked against discord.py 2.7.1, the pinned version): the guard must know
whether discord.py's own dispatch will run a handler, and that is decided
from two registries that discord.py 2.7 keeps private.  Its public API can
write them (``Client.add_view``, ``Client.add_dynamic_items`` /
``remove_dynamic_items``) but not read them: ``Client.persistent_views``
lists persistent views without the message each one is bound to (and none
of the views with a timeout), and nothing lists the registered
``DynamicItem`` classes or their templates (``DynamicItem.template`` is a
property of an instance, i.e. of a click already routed).  Keeping a copy of
both registries beside discord.py's would answer the same question from a
second source that can drift from what discord.py really dispatches, so the
guard reads the one place dispatch reads (:func:`_registries`, in one
function) and ``tests/unit/test_guard.py`` pins what it relies on.  Should a
discord.py upgrade move them, the guard logs an error and lets discord.py's
dispatch answer, as before it existed.
"""
from __future__ import annotations

import logging
import re
from typing import Any, Mapping, Sequence

import discord
from discord.ext import commands

from app.i18n.catalogue import normalise, t
from cogs.common.ui import reply

log = logging.getLogger(__name__)

INT64_MAX = 2**63 - 1  # SQLite's integers; Discord ids and every number the bot puts in a component fit
_NUMBER = re.compile(r"[0-9]{1,19}")


class BadInput(Exception):
    """A component value the bot never made."""


def number(text: object, default: int | None = None) -> int:
    """A non-negative integer the bot wrote into a component, read back.

    >>> number("42"), number(None, 0), number("9223372036854775807")
    (42, 0, 9223372036854775807)
    >>> for bad in ("x", "-1", "", "1e3", "٣", "9223372036854775808", "1" * 20, None):
    ...     try:
    ...         number(bad)
    ...     except BadInput:
    ...         pass
    ...     else:
    ...         print("accepted", bad)
    """
    if text is None and default is not None:
        return default
    if not isinstance(text, str) or not _NUMBER.fullmatch(text):
        raise BadInput(text)
    value = int(text)
    if value > INT64_MAX:
        raise BadInput(text)
    return value


def first(values: Sequence[str]) -> int:
    """The one value of a single-choice select, as a number."""
    if len(values) != 1:
        raise BadInput(values)
    return number(values[0])


def _on_message(message: discord.Message | None, component_type: int, custom_id: str) -> bool:
    """Whether the message carries a component of that type and custom_id
    (discord.py only runs a handler for one it finds there)."""
    if message is None:
        return False
    stack: list[Any] = list(message.components)
    while stack:
        item = stack.pop()
        if getattr(item, "custom_id", None) == custom_id and int(getattr(item.type, "value", -1)) == component_type:
            return True
        stack.extend(getattr(item, "children", None) or [])
        accessory = getattr(item, "accessory", None)
        if accessory is not None:
            stack.append(accessory)
    return False


def _registries(bot: Any) -> tuple[Mapping[Any, Mapping[tuple[int, str], Any]], list[re.Pattern[str]]] | None:
    """discord.py's two dispatch registries (private in 2.7, see the module's
    docstring): the views' items by message id (None: any message) and
    ``(component_type, custom_id)``, and the templates of the registered
    dynamic items.  None when this discord.py keeps them elsewhere."""
    store = getattr(getattr(bot, "_connection", None), "_view_store", None)
    views = getattr(store, "_views", None)
    dynamic = getattr(store, "_dynamic_items", None)
    if not isinstance(views, Mapping) or not isinstance(dynamic, Mapping):
        return None
    return views, [p for p in dynamic if isinstance(p, re.Pattern)]


class GuardCog(commands.Cog, name="Guard"):
    """Answers component interactions that no handler of the bot will, and
    slash commands whose callback failed unexpectedly (the last resort: every
    command answers its own refusals; without this, the user would see only
    Discord's "The application did not respond")."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self._warned = False
        self._previous_on_error: Any = None

    async def cog_load(self) -> None:
        self._previous_on_error = self.bot.tree.on_error
        self.bot.tree.on_error = self.command_failed

    async def cog_unload(self) -> None:
        self.bot.tree.on_error = self._previous_on_error

    async def command_failed(self, interaction: discord.Interaction,
                             error: discord.app_commands.AppCommandError) -> None:
        name = interaction.command.qualified_name if interaction.command else "?"
        log.error("command /%s failed", name, exc_info=error)
        # (a command that failed may have changed something before: no "nothing changed" here)
        await reply(interaction, t(normalise(interaction.locale), "errors.command_failed"))

    def handled(self, interaction: discord.Interaction) -> bool:
        data: dict[str, Any] = interaction.data or {}  # type: ignore[assignment]
        custom_id = str(data.get("custom_id", ""))
        component_type = int(data.get("component_type", 0))
        registries = _registries(self.bot)
        if registries is None:  # another discord.py: do not guess, let its dispatch answer
            if not self._warned:
                self._warned = True
                log.error("this discord.py keeps its view registries elsewhere: forged clicks go unanswered "
                          "(see cogs/guard.py)")
            return True
        views, patterns = registries
        message_id = interaction.message.id if interaction.message is not None else None
        key = (component_type, custom_id)
        if key in views.get(message_id, {}) or key in views.get(None, {}):
            return True
        return any(p.fullmatch(custom_id) for p in patterns) and _on_message(
            interaction.message, component_type, custom_id)

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is not discord.InteractionType.component:
            return
        try:
            handled = self.handled(interaction)
        except Exception:  # leave it to discord.py's own dispatch rather than answer twice
            log.exception("could not tell who handles interaction %s", interaction.id)
            return
        if not handled:
            log.info("component %r by %s is none of ours", (interaction.data or {}).get("custom_id"),
                     interaction.user.id)
            await reply(interaction, t(normalise(interaction.locale), "guard.bad_input"))


async def setup(bot: Any) -> None:
    await bot.add_cog(GuardCog(bot))
