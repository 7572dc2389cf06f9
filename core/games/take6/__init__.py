"""6 nimmt!: the engine (``engine``), its computer players (``players``) and
what the bot knows of the game (:data:`SPEC`)."""
from core.games.take6 import highlights, players
from core.games.take6.engine import Take6, normal_player, random_player
from core.spec import GameSpec, OptionSpec, StatSpec, VariantSpec

SPEC = GameSpec(
    key="take6", code=2, game=Take6, default_seats=4,
    options=(OptionSpec("limit", 10, 200, 66, label_key="take6.lobby_limit"),
             OptionSpec("deals", 1, 20, None, label_key="take6.lobby_deals")),
    computers={"random": random_player, "normal": normal_player},
    players=players,
    highlights=highlights.KINDS, moments=highlights.moments,
    stats=(StatSpec("avg_penalty_per_deal", "take6.avg_penalty", "average", per="deals", param="avg"),
           StatSpec("deals_won", "take6.deals_won", param="deals"),
           StatSpec("rows_taken", "take6.rows_taken", param="rows")),
    stats_line="take6.stats_line", simultaneous=True, deal_event="deal_start", colour=(230, 140, 30),
    variants=(VariantSpec("tactical", "take6.variant_tactical", "take6.variant_tactical_info",
                          {"variant": "tactical"}),),
)
