"""The 6 nimmt! table image (PNG bytes), in the style of the other tables (:mod:`app.render`).

A pure function of the table's view (``Take6.view(None)``): the four rows with
every card and its ox heads, then one line per player with their cards in
hand, whether they have chosen this turn (never what), the size of their
penalty pile and their total.  Every word comes from ``labels`` (keys in
:data:`TAKE6_TABLE_LABELS`); the bot calls it in a worker thread.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render import cards as rc
from app.render.common import (FELT, GOLD, LINE, MUTED, ORANGE, PANEL, PANEL_HI, RED, TEXT, M, names_for, seat_badge,
                               serialised, table_picture)
from app.render.base import label
from core.games.take6.engine import HEADS

TAKE6_TABLE_LABELS: tuple[str, ...] = (
    "deal",          # {deal} {turn}            e.g. "Deal {deal} · turn {turn}/10"
    "limit",         # {limit}                  e.g. "Game ends at {limit} points"
    "deals",         # {deals}                  e.g. "{deals} deals"
    "status_choose", # {count}                  e.g. "Everyone chooses a card ({count} still to choose)"
    "status_row",    # {name} {card}            e.g. "{name} picks a row for the {card}"
    "status_over",   # (none)                   e.g. "Game over"
    "chosen",        # (none)                   e.g. "chosen"
    "choosing",      # (none)                   e.g. "choosing…"
    "hand",          # (none)  column header, e.g. "Hand"
    "pile",          # (none)  column header, e.g. "Taken"
    "score",         # (none)  column header, e.g. "Points"
    "revealed",      # (none)                   e.g. "Revealed"
)
"""Label keys of :func:`render_take6_table`."""

ROW_LABELS = ("A", "B", "C", "D")
W = 760
CW, CH = 64, 90  # card size
ROW_H = CH + 14
LINE_H = 30


@table_picture
@serialised
def render_take6_table(view: Mapping[str, Any], names: Sequence[str], labels: Mapping[str, str]) -> bytes:
    seats = int(view["seats"])
    names = names_for(names, seats)
    rows = view["rows"]
    pending = view.get("pending") or []
    head_h = 64
    reveal_h = (CH // 2 + 40) if pending else 0
    H = M + head_h + len(rows) * ROW_H + reveal_h + 34 + seats * LINE_H + M
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)

    # header: deal and turn, the game's end, what happens now
    y = M
    rb.text(d, (M, y + 12), label(labels, "deal", deal=view["deal"], turn=view["turn"]), rb.font(22), TEXT,
            anchor="lm", stroke=1)
    end = (label(labels, "deals", deals=view["deals"]) if view.get("deals")
           else label(labels, "limit", limit=view.get("limit")))
    rb.text_fit(d, (W - M, y + 12), end, 16, MUTED, W / 2 - M, anchor="rm")
    if view["phase"] == "over":
        status = label(labels, "status_over")
    elif view["phase"] == "row" and view.get("to_move") is not None:
        card = pending[0][1] if pending else ""
        status = label(labels, "status_row", name=names[view["to_move"]], card=card)
    else:
        status = label(labels, "status_choose", count=len(view.get("to_act") or []))
    rb.text_fit(d, (M, y + 42), status, 17, GOLD, W - 2 * M, anchor="lm")
    y += head_h

    # the four rows: every card, ox heads on each; a sixth place marks where a row is taken
    for r, cards in enumerate(rows):
        top = y + r * ROW_H
        d.rounded_rectangle((M, top, W - M, top + ROW_H - 6), 10, fill=PANEL)
        rb.text(d, (M + 22, top + (ROW_H - 6) / 2), ROW_LABELS[r], rb.font(26), TEXT, anchor="mm", stroke=1)
        x = M + 46
        for card in cards:
            im.paste(rc.number_card(int(card), HEADS[int(card)], CW, CH, PANEL), (int(x), int(top + 4)))
            x += CW + 8
        for _ in range(len(cards), 5):
            d.rounded_rectangle((x, top + 4, x + CW, top + 4 + CH), 6, outline=LINE, width=1)
            x += CW + 8
        d.rounded_rectangle((x, top + 4, x + CW, top + 4 + CH), 6, outline=RED if len(cards) >= 5 else LINE,
                            width=2 if len(cards) >= 5 else 1)
        rb.text(d, (x + CW / 2, top + 4 + CH / 2), "6", rb.font(24), RED if len(cards) >= 5 else LINE,
                anchor="mm")
        heads = view["row_heads"][r]
        rb.stamp(im, rb.ox_mask(18), (W - M - 66, top + (ROW_H - 6) / 2 - 9), TEXT)
        rb.text(d, (W - M - 14, top + (ROW_H - 6) / 2), str(heads), rb.font(22), TEXT, anchor="rm", stroke=1)
    y += len(rows) * ROW_H

    # cards revealed this turn and still to be placed (a row choice is pending, S2)
    if pending:
        rb.text(d, (M, y + 14), label(labels, "revealed"), rb.font(16), MUTED, anchor="lm")
        x = M
        cw, ch = CW // 2 + 8, CH // 2 + 6
        for i, (seat, card) in enumerate(pending):
            if x + cw > W - M:
                break
            im.paste(rc.number_card(int(card), HEADS[int(card)], cw, ch, FELT), (int(x), int(y + 28)))
            if i == 0:
                d.rounded_rectangle((x - 3, y + 25, x + cw + 3, y + 28 + ch + 3), 6, outline=ORANGE, width=2)
            x += cw + 8
        y += reveal_h

    # players: hand, chosen this turn, penalty pile, total
    cols = (M + 250, M + 420, M + 540, W - M)
    f15 = rb.font(15)
    for text, x in zip((label(labels, "hand"), "", label(labels, "pile"), label(labels, "score")), cols):
        if text:
            rb.text(d, (x, y + 14), rb.fit(text, f15, 110), f15, MUTED, anchor="rm")
    y += 30
    to_act = set(view.get("to_act") or [])
    for s in range(seats):
        top = y + s * LINE_H
        if s in to_act:
            d.rounded_rectangle((M, top + 1, W - M, top + LINE_H - 2), 8, fill=PANEL_HI)
        seat_badge(im, d, M + 14, top + LINE_H / 2, s, PANEL if s not in to_act else GOLD, TEXT)
        rb.text_fit(d, (M + 32, top + LINE_H / 2), names[s], 17, TEXT, 180, anchor="lm", smallest=13)
        rb.text(d, (cols[0], top + LINE_H / 2), str(view["hand_counts"][s]), rb.font(17), TEXT, anchor="rm")
        if view["phase"] == "choose":
            chosen = view["chosen"][s]
            rb.text_fit(d, (cols[1], top + LINE_H / 2), label(labels, "chosen" if chosen else "choosing"), 15,
                        GOLD if chosen else MUTED, 150, anchor="rm")
        rb.text(d, (cols[2], top + LINE_H / 2), str(view["pile_sizes"][s]), rb.font(17), TEXT, anchor="rm")
        rb.text(d, (cols[3], top + LINE_H / 2), str(view["scores"][s]), rb.font(17), TEXT, anchor="rm", stroke=1)
    return rb.to_png(im)
