"""The private 6 nimmt! panel stands alone: the hand beside the four rows,
and where each card of the hand would go if it were laid now."""
from __future__ import annotations

from app.i18n.catalogue import t
from app.tables.manager import Seat, Table
from cogs.games.take6.cog import Take6UI, card_text
from core.games.take6.engine import ROW_LABELS, Take6, row_for


def test_the_panel_shows_the_rows_and_where_each_card_goes():
    engine = Take6.new(3, 7)
    table = Table(id=5, guild_id=1, channel_id=2, game="take6", host_id=10, max_seats=3, options={},
                  seats=[Seat(10, "Ana"), Seat(11, "Ben"), Seat(12, "Cy")], status="playing")
    table.engine = engine
    for lang in ("en", "es", "de"):
        text = Take6UI(bot=None).panel(table, 0, lang).embed.description or ""
        view = engine.view(0)
        for r, cards in enumerate(view["rows"]):
            assert t(lang, "take6.summary_row", row=ROW_LABELS[r], cards=" · ".join(map(str, cards)),
                     heads=view["row_heads"][r]) in text
        for card in view["hand"]:
            row = row_for(card, view["rows"])
            goes = (t(lang, "take6.panel_low", card=card_text(card)) if row < 0
                    else t(lang, "take6.panel_goes", card=card_text(card), row=ROW_LABELS[row]))
            assert goes in text, (lang, card)
