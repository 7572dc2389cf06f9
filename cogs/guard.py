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
guard reads the one place dispatch reads
(:func:`cogs.common.adapter.view_registries`), and ``tests/unit/test_adapter.py``
pins what it relies on.  Should a discord.py upgrade move them, the guard logs
an error and lets discord.py's dispatch answer, as before it existed.
"""
from __future__ import annotations

import logging
import math
import re
from typing import Any, Mapping, Sequence

import discord
from discord.ext import commands

from app.i18n.catalogue import normalise, t
from cogs.common.adapter import view_registries
from cogs.common.ui import reply

log = logging.getLogger(__name__)

INT64_MAX = 2**63 - 1  # SQLite's integers; Discord ids and every number the bot puts in a component fit
_NUMBER = re.compile(r"[0-9]{1,19}")


def digits_upto(high: int) -> str:
    """A regular expression of the decimal numbers 0..``high`` written in at most as
    many digits as ``high``: an id field of a custom_id template that no number the
    store cannot hold matches (so a forged one is no click of the item: the guard
    answers it).

    >>> pattern = re.compile(digits_upto(305))
    >>> [n for n in ("0", "099", "299", "305", "306", "310", "999", "1000") if pattern.fullmatch(n)]
    ['0', '099', '299', '305']
    >>> ID.fullmatch(str(INT64_MAX)) is not None, ID.fullmatch(str(INT64_MAX + 1)), ID.fullmatch("9" * 20)
    (True, None, None)
    """
    text = str(high)
    width = len(text)
    shorter = [rf"\d{{1,{width - 1}}}"] if width > 1 else []
    same = [text] + [text[:i] + f"[0-{int(d) - 1}]" + (rf"\d{{{width - i - 1}}}" if i < width - 1 else "")
                     for i, d in enumerate(text) if d != "0"]
    return "(?:" + "|".join(shorter + same) + ")"


#: an id field of a custom_id template: a number the store (64-bit signed integers) can hold
ID_PATTERN = digits_upto(INT64_MAX)
ID = re.compile(ID_PATTERN)


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


def data_of(interaction: discord.Interaction) -> dict[str, Any]:
    """The interaction's ``data`` as Discord sent it (discord.py declares a union of
    payload types), empty when there is none: read only to check or log it."""
    data: Mapping[str, Any] = interaction.data or {}
    return dict(data)


def option_problem(interaction: discord.Interaction) -> str | None:
    """What is wrong with a slash command's options, as the command declares them
    (type, range, length, choices, required), or None.  Discord's client sends only
    what the command declares; a forged payload can send anything, and discord.py
    checks only choices (raising deep in the call, as an error of the command)."""
    data = data_of(interaction)
    if data.get("type", 1) != 1:
        return None  # a context menu: a user or message Discord resolved
    command = interaction.command
    if not isinstance(command, discord.app_commands.Command):
        return None  # no such command: discord.py raises CommandNotFound, answered in command_failed
    options = data.get("options") or []
    while options and isinstance(options[0], dict) and options[0].get("type") in (1, 2):
        options = options[0].get("options") or []  # the subcommand's own
    if not isinstance(options, list):
        return "options are not a list"
    params = {param.display_name: param for param in command.parameters}
    seen: set[str] = set()
    for option in options:
        name = option.get("name") if isinstance(option, dict) else None
        param = params.get(name) if isinstance(name, str) else None
        if param is None or name in seen:
            return f"{name!r} is no option of /{command.qualified_name} (or came twice)"
        seen.add(param.display_name)
        if option.get("type") != param.type.value:
            return f"{name}: type {option.get('type')!r}, not {param.type.value}"
        problem = _value_problem(param, option.get("value"), data.get("resolved") or {})
        if problem is not None:
            return f"{name}: {problem}"
    missing = [p for p in params.values() if p.required and p.display_name not in seen]
    return f"{missing[0].display_name} is required" if missing else None


#: the integers Discord sends in an integer option
_DISCORD_INT = 2**53


#: where Discord puts what an option of each kind names (users, channels, roles...): by option type
_RESOLVED = {6: ("users",), 7: ("channels",), 8: ("roles",), 9: ("users", "roles"), 11: ("attachments",)}


def _value_problem(param: discord.app_commands.Parameter, value: Any, resolved: dict[str, Any]) -> str | None:
    kind = discord.AppCommandOptionType
    low, high = param.min_value, param.max_value
    if param.type is kind.string:
        if not isinstance(value, str):
            return f"{value!r} is not text"
        measure: float = len(value)
    elif param.type is kind.integer:
        if not isinstance(value, int) or isinstance(value, bool) or abs(value) > _DISCORD_INT:
            return f"{value!r} is not a whole number Discord sends"
        measure = value
    elif param.type is kind.number:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return f"{value!r} is not a number"
        measure = value
    elif param.type is kind.boolean:
        return None if isinstance(value, bool) else f"{value!r} is not true or false"
    else:  # a user, channel, role, mentionable or attachment: its id, which Discord resolves
        if not isinstance(value, str) or not ID.fullmatch(value):
            return f"{value!r} is not an id"
        kinds = _RESOLVED.get(param.type.value, ())
        if not any(isinstance(resolved.get(k), dict) and value in resolved[k] for k in kinds):
            return f"{value} is not among what Discord resolved"
        return None
    if (low is not None and measure < low) or (high is not None and measure > high):
        return f"{value!r} is outside {low}..{high}"
    if param.choices and value not in {choice.value for choice in param.choices}:
        return f"{value!r} is not one of the choices"
    return None


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


_BAD_COMMAND = (discord.app_commands.TransformerError, discord.app_commands.CommandNotFound,
                discord.app_commands.CommandSignatureMismatch)


class GuardCog(commands.Cog, name="Guard"):
    """Answers component interactions that no handler of the bot will, and
    slash commands whose callback failed unexpectedly (the last resort: every
    command answers its own refusals; without this, the user would see only
    Discord's "The application did not respond")."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self._warned = False
        self._previous_on_error: Any = None
        self._previous_check: Any = None

    async def cog_load(self) -> None:
        tree = self.bot.tree
        self._previous_on_error = tree.on_error
        self._previous_check = tree.interaction_check
        tree.on_error = self.command_failed
        tree.interaction_check = self.command_check

    async def cog_unload(self) -> None:
        self.bot.tree.on_error = self._previous_on_error
        self.bot.tree.interaction_check = self._previous_check

    async def command_check(self, interaction: discord.Interaction, /) -> bool:
        """The tree's check before any command runs: options the command does not
        take (a forged payload) are bad input, answered privately; nothing runs."""
        if interaction.type is not discord.InteractionType.application_command:
            return True
        try:
            problem = option_problem(interaction)
        except Exception as error:  # a payload too garbled to read is no command of ours either
            problem = f"unreadable options ({type(error).__name__})"
        if problem is None:
            return True
        log.debug("command %r by %s refused: %s", data_of(interaction).get("name"), interaction.user.id, problem)
        await reply(interaction, t(normalise(interaction.locale), "guard.bad_option"))
        return False

    async def command_failed(self, interaction: discord.Interaction,
                             error: discord.app_commands.AppCommandError) -> None:
        lang = normalise(interaction.locale)
        name = interaction.command.qualified_name if interaction.command else "?"
        if isinstance(error, _BAD_COMMAND):
            # an option outside the command's choices, a command or signature the bot does
            # not have (forged, or a client that has not seen the last sync): bad input
            log.debug("command /%s refused: %s", name, error)
            return await reply(interaction, t(lang, "guard.bad_option"))
        log.error("command /%s failed", name, exc_info=error)
        # (a command that failed may have changed something before: no "nothing changed" here)
        await reply(interaction, t(lang, "errors.command_failed"))

    def handled(self, interaction: discord.Interaction) -> bool:
        data = data_of(interaction)
        custom_id = str(data.get("custom_id", ""))
        component_type = int(data.get("component_type", 0))
        registries = view_registries(self.bot)
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
            log.info("component %r by %s is none of ours", data_of(interaction).get("custom_id"),
                     interaction.user.id)
            await reply(interaction, t(normalise(interaction.locale), "guard.bad_input"))


async def setup(bot: Any) -> None:
    await bot.add_cog(GuardCog(bot))
