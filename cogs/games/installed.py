"""The games' table side: one :class:`~cogs.tables.game_ui.GameCog` per game
of :data:`core.games.GAMES`, in the same order.  bot.py loads them and hands
their pictures' warm-ups to the drawing processes.  (Kept apart from
``cogs/games/__init__.py`` so that a drawing process, which imports a game's
``render`` module, does not import Discord.)"""
from cogs.games.garbage.cog import GarbageCog
from cogs.games.nimmt.cog import NimmtCog
from cogs.games.take6.cog import Take6Cog
from cogs.tables.game_ui import GameCog

COGS: tuple[type[GameCog], ...] = (NimmtCog, GarbageCog, Take6Cog)
