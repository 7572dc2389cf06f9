"""Garbage (Trash): the engine (``engine``), its computer players
(``players``) and what the bot knows of the game (:data:`SPEC`)."""
from core.games.garbage import highlights, players
from core.games.garbage.engine import Garbage, greedy_player, random_player
from core.spec import GameSpec, StatSpec, VariantSpec

SPEC = GameSpec(
    key="garbage", code=1, game=Garbage, default_seats=4,
    computers={"random": random_player, "normal": greedy_player},
    players=players,
    highlights=highlights.KINDS, moments=highlights.moments,
    stats=(StatSpec("hands_won", "hands_won", param="hands"),),
    stats_line="stats.garbage_line", deal_event="hand_start", colour=(46, 125, 50),
    variants=(VariantSpec("short", "garbage.variant_short", "garbage.variant_short_info", {"slots": 5}),),
)
