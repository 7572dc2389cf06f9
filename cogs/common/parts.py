"""The bot's own cogs that other cogs and items use, typed: each one puts itself
here when it loads and takes itself away when it unloads.  A cog or a
``DynamicItem`` (which discord.py builds from a custom_id, so nothing can be
handed to its constructor) reaches another cog through :func:`parts` and a
typed attribute, never ``bot.get_cog("Name")``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import discord

if TYPE_CHECKING:
    from cogs.after import AfterCog
    from cogs.night import NightCog
    from cogs.stats import StatsCog
    from cogs.tables import TablesCog

T = TypeVar("T")


class NotLoaded(RuntimeError):
    """A cog that another one needs is not loaded."""


def _loaded(part: T | None, extension: str) -> T:
    if part is None:
        raise NotLoaded(f"{extension} is not loaded")
    return part


class Parts:
    """The loaded cogs by job: ``loaded_<job>`` is None while that cog is not
    loaded; the property ``<job>`` is for callers that cannot go on without it."""

    def __init__(self) -> None:
        self.loaded_tables: TablesCog | None = None
        self.loaded_stats: StatsCog | None = None
        self.loaded_after: AfterCog | None = None
        self.loaded_night: NightCog | None = None

    @property
    def tables(self) -> TablesCog:
        return _loaded(self.loaded_tables, "cogs.tables")

    @property
    def stats(self) -> StatsCog:
        return _loaded(self.loaded_stats, "cogs.stats")

    @property
    def after(self) -> AfterCog:
        return _loaded(self.loaded_after, "cogs.after")

    @property
    def night(self) -> NightCog:
        return _loaded(self.loaded_night, "cogs.night")


def parts(client: discord.Client) -> Parts:
    """The :class:`Parts` of this bot (``CardBot.parts``)."""
    found = getattr(client, "parts", None)
    if not isinstance(found, Parts):
        raise NotLoaded("this client keeps no Parts (bot.CardBot makes them)")
    return found
