"""11 nimmt!: the engine (``engine``), its computer players (``players``) and
what the bot knows of the game (:data:`SPEC`)."""
from core.games.nimmt import highlights, players
from core.games.nimmt.engine import Nimmt, greedy_player, random_player
from core.spec import GameSpec, OptionSpec, StatSpec

SPEC = GameSpec(
    key="nimmt", code=0, game=Nimmt, default_seats=4,
    options=(OptionSpec("rounds", 1, 7, None, at_most_seats=True,
                        label_key="table.lobby_rounds", default_key="table.lobby_rounds_auto"),),
    computers={"random": random_player, "normal": greedy_player},
    players=players,
    highlights=highlights.KINDS, moments=highlights.moments,
    stats=(StatSpec("avg_penalty_per_round", "avg_penalty", "average", per="penalty_rounds", param="avg"),
           StatSpec("rounds_won", "rounds_won", param="rounds"),
           StatSpec("bulls_earned", "bulls_earned", param="bulls")),
    stats_line="stats.nimmt_line", deal_event="round_start", colour=(196, 38, 46),
)
