"""The games' table side: one :class:`~cogs.tables.game_ui.GameCog` per game
of :data:`core.games.GAMES`, in the same order (:func:`cogs`).  bot.py loads
them and hands their pictures' warm-ups to the drawing processes.  (Kept
apart from ``cogs/games/__init__.py``, so that a drawing process, which
imports a game's ``render`` module, does not import Discord; imported only
when asked for, so that a test registry imports none of them.)"""
from __future__ import annotations

from cogs.tables.game_ui import GameCog

_COGS: tuple[type[GameCog], ...] | None = None


def cogs() -> tuple[type[GameCog], ...]:
    """The game cogs the bot loads: the built-in games', unless :func:`use` chose others."""
    global _COGS
    if _COGS is None:
        from cogs.games.garbage.cog import GarbageCog
        from cogs.games.nimmt.cog import NimmtCog
        from cogs.games.take6.cog import Take6Cog

        _COGS = (NimmtCog, GarbageCog, Take6Cog)
    return _COGS


def use(game_cogs: tuple[type[GameCog], ...]) -> None:
    """The cogs of a test registry (see :func:`core.registry.use`), before bot.py is imported."""
    global _COGS
    _COGS = tuple(game_cogs)
