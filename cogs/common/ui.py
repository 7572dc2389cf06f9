"""What every cog's answers share: the reply helpers, the user's language,
the deferral of a slow save, who may manage a table, and message helpers (what
failed uncertainly, the nonce of a message owed, :func:`owed`).
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
import discord

from app.i18n.catalogue import normalise, t
from app.tables.manager import Table, when_slow
from cogs.common.adapter import quietly

if TYPE_CHECKING:
    from app.nights.night import Night

log = logging.getLogger(__name__)

_T = TypeVar("_T")

NO_PINGS = discord.AllowedMentions.none()

#: errors of a Discord request worth retrying
TRANSIENT = (discord.HTTPException, aiohttp.ClientError, OSError, asyncio.TimeoutError)
#: a post that may have landed (its answer was lost), unlike a refusal
UNCERTAIN = (discord.DiscordServerError, aiohttp.ClientError, OSError, asyncio.TimeoutError)


def view_of(*items: discord.ui.Item) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for item in items:
        view.add_item(item)
    return view


def given(value: _T | None) -> _T:
    """*value*, or discord.py's "not given" (``MISSING``) for None: its send methods
    declare their optional arguments without None.  Not for an edit, where None
    removes (a view, an embed) and MISSING keeps."""
    return discord.utils.MISSING if value is None else value


def decimal(value: float | None, digits: int = 1, lang: str = "en") -> str:
    """A decimal with the reader's decimal mark.

    >>> decimal(-5.75), decimal(-5.75, lang="es"), decimal(None)
    ('-5.8', '-5,8', '-')
    """
    if value is None:
        return "-"
    return f"{value:.{digits}f}".replace(".", t(lang, "stats.decimal_mark"))


def user_lang(interaction: discord.Interaction) -> str:
    return normalise(interaction.locale)


async def reply(interaction: discord.Interaction, content: str | None = None, **kwargs: Any) -> None:
    """Answer ephemerally, whether or not the interaction was answered already."""
    kwargs.setdefault("ephemeral", True)
    kwargs.setdefault("allowed_mentions", NO_PINGS)
    try:
        if interaction.extras.pop("thinking", False):
            # A public "thinking..." (a slow save of a command): the first followup would fill it,
            # publicly.  The answer is private: the public message goes, and the answer follows.
            try:
                await interaction.delete_original_response()
            except discord.HTTPException:  # still there: fill it rather than leave it thinking
                kwargs.pop("ephemeral", None)
                await quietly(interaction.edit_original_response(content=content, **kwargs))
                return
            await quietly(interaction.followup.send(given(content), **kwargs))
        elif interaction.response.is_done():
            await quietly(interaction.followup.send(given(content), **kwargs))
        else:
            await quietly(interaction.response.send_message(content, **kwargs))
    except discord.HTTPException:
        log.warning("could not answer interaction %s", interaction.id, exc_info=True)


def on_own_private_message(interaction: discord.Interaction) -> bool:
    """Whether the clicked component is on an ephemeral message shown to the clicker:
    the only kind of message a private answer (a hand panel) may be drawn onto.  Discord
    delivers only components that are on a message, but a forged click can name a
    public one (a table message): that must get a fresh private answer instead."""
    message = interaction.message
    if message is None or not message.flags.ephemeral:
        return False
    meta = message.interaction_metadata
    return meta is None or meta.user.id == interaction.user.id


async def update_message(interaction: discord.Interaction, **kwargs: Any) -> None:
    """Redraw the message a component is on, also after a deferred answer."""
    if interaction.response.is_done():
        await quietly(interaction.edit_original_response(**kwargs))
    else:
        await quietly(interaction.response.edit_message(**kwargs))


def defer_when_slow(interaction: discord.Interaction) -> None:
    """While this interaction is handled, a slow save (a database locked
    elsewhere) acknowledges it first: the answer then follows the save,
    however long the store takes to commit or refuse it.  The deadline runs
    from the first call for this interaction (a click that opens a lobby
    calls it twice)."""
    if interaction.extras.get("slow_save_armed"):
        return
    interaction.extras["slow_save_armed"] = True

    async def defer() -> None:
        if interaction.response.is_done():
            return
        command = interaction.type == discord.InteractionType.application_command
        await interaction.response.defer(thinking=command)
        if command:
            interaction.extras["thinking"] = True

    when_slow(defer)


def can_manage(interaction: discord.Interaction) -> bool:
    """Manage Messages here (or server-wide, or administrator)."""
    perms = getattr(interaction.user, "guild_permissions", None) or discord.Permissions.none()
    return bool(interaction.permissions.manage_messages or perms.manage_messages or perms.administrator)


def owed(owner: Table | Night, kind: str, serial: int, replaces: int | None = None) -> str:
    """The nonce of a message the bot owes the players of a table (or of a game
    night): ``kind`` and ``serial`` say which one, from what is saved, so every try
    of it, after a restart too, names it alike.  discord.py sends it with
    ``enforce_nonce``: Discord posts a message once per nonce and author (for a few
    minutes) and answers a repeat with the message posted first, so a try whose
    answer was lost, or a kill between posting and saving that it was posted, does
    not post it twice.  ``replaces``: the saved id of the message it replaces (a live
    table posted anew), so a repost showing the same state as a message posted
    earlier (after that one was deleted, or to bring it below a record) is a message
    of its own, not Discord's answer with the earlier one.

    >>> owed(Table(7, 1, 2, "game", 3, 4, {}), "l", 12)
    't7l12'
    >>> owed(Table(7, 1, 2, "game", 3, 4, {}), "v", 12, replaces=1578568861614211118)
    't7v12rqkwf1q'
    """
    nonce = f"{'t' if isinstance(owner, Table) else 'n'}{owner.id}{kind}{serial}"
    if replaces:
        nonce += "r" + _base36(replaces % 36 ** 6)
    assert len(nonce) <= 25, nonce  # Discord's limit
    return nonce


def _base36(n: int) -> str:
    digits = ""
    while True:
        n, digit = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if not n:
            return digits
