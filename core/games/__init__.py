"""The games the bot hosts, one package each: its engine (``engine``), its
computer players (``players``) and its :class:`~core.spec.GameSpec`
(``SPEC``).  :data:`GAMES` is the one list of them, in the order the bot
shows them (the first is the default game); :mod:`core.registry` reads it.
"""
from core.games import garbage, nimmt, take6
from core.spec import GameSpec

GAMES: tuple[GameSpec, ...] = (nimmt.SPEC, garbage.SPEC, take6.SPEC)
