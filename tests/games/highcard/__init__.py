"""High card: a game that lives only in the tests, as one slice.

Everything of the game is in this folder: its engine and computer players
(``engine.py``), what the bot knows of it (:data:`SPEC`, here), its table
on Discord (``cog.py``), its texts (``locales/<lang>/*.json``) and rules
(``rules/<lang>.md``).  ``play.py`` registers it in a test registry and
plays it through the Discord stand-in; docs/adding-a-game.md walks through it.
"""
from pathlib import Path

from core.spec import GameSpec, StatSpec
from tests.games.highcard.engine import HighCard, highest_player, random_player

SPEC = GameSpec(
    key="highcard", code=90, game=HighCard, default_seats=2,
    computers={"random": random_player, "normal": highest_player},
    stats=(StatSpec("tricks_won", "highcard.tricks_won", param="tricks"),),
    stats_line="highcard.stats_line", colour=(70, 90, 160),
    data=Path(__file__).resolve().parent,  # its texts live beside it
)
