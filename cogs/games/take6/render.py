"""The 6 nimmt! table image (PNG bytes), in the style of the other tables (:mod:`app.render`).

A pure function of the table's view (``Take6.view(None)``): the four rows with
every card and its ox heads, then one line per player with their cards in
hand, whether they have chosen this turn (never what), the size of their
penalty pile and their total.  Every word comes from ``labels`` (keys in
:data:`TAKE6_TABLE_LABELS`); the bot calls it in a worker thread.
"""
from __future__ import annotations

from typing import AbstractSet, Any, Mapping, Sequence

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render import cards as rc
from app.render.common import (FELT, GOLD, LINE, MUTED, ORANGE, PANEL, PANEL_HI, RED, TEXT, M, banner, legible,
                               lines_under, names_for, seat_badge, serialised, table_picture)
from app.render.base import label
from core.games.take6.engine import HEADS, ROW_MAX, row_for

TAKE6_TABLE_LABELS: tuple[str, ...] = (
    "deal",          # {deal} {turn}            e.g. "Deal {deal} · turn {turn}/10"
    "limit",         # {limit}                  e.g. "Game ends at {limit} points"
    "deals",         # {deals}                  e.g. "Deals: {deals}" (a picture has no plural forms: the count follows its noun)
    "status_choose", # {count}                  e.g. "Everyone chooses a card ({count} still to choose)"
    "status_row",    # {name} {card}            e.g. "{name} picks a row for the {card}"
    "status_over",   # (none)                   e.g. "Game over"
    "chosen",        # (none)                   e.g. "chosen"
    "choosing",      # (none)                   e.g. "choosing…"
    "hand",          # (none)  column header, e.g. "Hand"
    "pile",          # (none)  column header, e.g. "Taken"
    "score",         # (none)  column header, e.g. "Points"
    "revealed",      # (none)                   e.g. "Revealed, in the order placed"
    "revealed_last",  # {deal}                  e.g. "Last turn of deal {deal}, in the order placed" (a new deal's rows)
    "to_row",        # {row}                    e.g. "→ {row}"
    "took",          # {row}                    e.g. "took {row}"
    "picks_row",     # (none)                   e.g. "picks a row"
    "deal_start",    # {deal}                   e.g. "Deal {deal} starts: new rows"
)
"""Label keys of :func:`render_take6_table`."""

TAKE6_HAND_LABELS: tuple[str, ...] = (
    "hand",          # (none)  over the hand, e.g. "Hand"
    "to_row",        # {row}   where a card would go, e.g. "→ {row}"
    "takes_row",     # {row}   a card that would be a row's sixth, e.g. "takes {row}"
    "picks_row",     # (none)  a card lower than every row, e.g. "picks a row"
)
"""Label keys of :func:`render_take6_hand`."""

ROW_LABELS = ("A", "B", "C", "D")
W = 600  # a row of five cards and the sixth place fill it; a phone shows it at about 0.6
MIN_TEXT = legible(W)
CW, CH = 64, 90  # card size
ROW_H = CH + 14
LINE_H = 34
CHIP_W, CHIP_CW, CHIP_CH = 78, 44, 62  # a revealed card with its player and where it went


def last_reveal(recent: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], Mapping[str, Any] | None]:
    """The latest reveal and what followed it (placed, sixth, row choice, taken
    rows), and a deal started since (its rows are new: nothing in them to mark).

    >>> last_reveal([{"type": "reveal", "cards": [[0, 5]]}, {"type": "placed", "seat": 0, "card": 5, "row": 1}])[0][1]
    {'type': 'placed', 'seat': 0, 'card': 5, 'row': 1}
    """
    start = max((i for i, e in enumerate(recent) if e.get("type") == "reveal"), default=None)
    after = list(recent[start:]) if start is not None else []
    deal = next((e for e in reversed(recent[start or 0:]) if e.get("type") == "deal_start"), None)
    return after, deal


def _draw_rows(im: Image.Image, d: ImageDraw.ImageDraw, y: float, rows: Sequence[Sequence[int]],
               row_heads: Sequence[int], placed: AbstractSet[int] = frozenset(),
               taken: Mapping[int, int] | None = None) -> None:
    """The four rows from ``y`` down (:data:`ROW_H` each): every card with its ox heads,
    the sixth place (red once a row is full) and the row's ox heads; the cards in
    ``placed`` framed orange, the card that took row ``r`` (``taken[r]``) framed red."""
    taken = taken or {}
    for r, cards in enumerate(rows):
        top = y + r * ROW_H
        d.rounded_rectangle((M, top, W - M, top + ROW_H - 6), 10, fill=PANEL,
                            outline=RED if r in taken else None, width=3 if r in taken else 0)
        rb.text(d, (M + 20, top + (ROW_H - 6) / 2), ROW_LABELS[r], rb.font(26), TEXT, anchor="mm", stroke=1)
        x = M + 42
        for card in cards:
            if int(card) in placed or taken.get(r) == int(card):
                d.rounded_rectangle((x - 3, top + 1, x + CW + 2, top + 6 + CH + 1), 8,
                                    outline=RED if taken.get(r) == int(card) else ORANGE, width=3)
            im.paste(rc.number_card(int(card), HEADS[int(card)], CW, CH, PANEL), (int(x), int(top + 4)))
            x += CW + 6
        for _ in range(len(cards), 5):
            d.rounded_rectangle((x, top + 4, x + CW, top + 4 + CH), 6, outline=LINE, width=1)
            x += CW + 6
        d.rounded_rectangle((x, top + 4, x + CW, top + 4 + CH), 6, outline=RED if len(cards) >= 5 else LINE,
                            width=2 if len(cards) >= 5 else 1)
        rb.text(d, (x + CW / 2, top + 4 + CH / 2), "6", rb.font(24), RED if len(cards) >= 5 else LINE,
                anchor="mm")
        hx = x + CW + 8
        rb.stamp(im, rb.ox_mask(20), (hx, top + (ROW_H - 6) / 2 - 22), TEXT)
        rb.text(d, (hx + 10, top + (ROW_H - 6) / 2 + 12), str(row_heads[r]), rb.font(22), TEXT, anchor="mm",
                stroke=1)


@table_picture
@serialised
def render_take6_table(view: Mapping[str, Any], names: Sequence[str], labels: Mapping[str, str],
                       recent: Sequence[Mapping[str, Any]] = ()) -> bytes:
    """The 6 nimmt! table: header, a new deal's banner, the four rows (the
    cards the last reveal placed framed, a row just taken in red), the last
    reveal card by card in the order placed (who, which card, where it went),
    one line per player.  ``recent``: the public events of the latest turns."""
    seats = int(view["seats"])
    names = names_for(names, seats)
    rows = view["rows"]
    pending = view.get("pending") or []
    reveal, deal = last_reveal(recent)
    shown = [(int(s), int(c)) for s, c in (reveal[0]["cards"] if reveal else ())]
    where: dict[int, tuple[str, int]] = {}  # card -> (what happened, row)
    for e in reveal[1:]:
        kind = e.get("type")
        if kind in ("placed", "sixth", "took_row"):
            where[int(e["card"])] = (kind, int(e["row"]))
        elif kind == "row_choice":
            where[int(e["card"])] = ("row_choice", -1)
    fresh = deal is not None and (not reveal or reveal.index(deal) > 0 if deal in reveal else True)
    per_line = max(1, (W - 2 * M) // CHIP_W)
    chip_lines = -(-len(shown) // per_line)
    ft = rb.font(MIN_TEXT)
    next_up = pending[0][1] if pending else None
    dests: list[list[str]] = []  # under each revealed card: where it went, in one or two lines
    for _, chip in shown:
        kind, row = where.get(chip, ("", -1))
        dest = (label(labels, "to_row", row=ROW_LABELS[row]) if kind == "placed"
                else label(labels, "took", row=ROW_LABELS[row]) if kind in ("sixth", "took_row")
                else label(labels, "picks_row") if chip == next_up else "")
        dests.append(lines_under(dest, ft, CHIP_W - 2) if dest else [])
    chip_h = CHIP_CH + 30 + 18 * max([1, *map(len, dests)])
    reveal_h = (30 + chip_lines * chip_h) if shown else 0
    head_h = 64
    banner_h = 40 if fresh else 0
    H = M + head_h + banner_h + len(rows) * ROW_H + reveal_h + 34 + seats * LINE_H + M
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)

    # header: deal and turn, the game's end, what happens now
    y: float = M
    end = (label(labels, "deals", deals=view["deals"]) if view.get("deals")
           else label(labels, "limit", limit=view.get("limit")))
    ew = rb.text_fit(d, (W - M, y + 12), end, 16, MUTED, W / 2 - M, anchor="rm", smallest=MIN_TEXT)
    rb.text_fit(d, (M, y + 12), label(labels, "deal", deal=view["deal"], turn=view["turn"]), 24, TEXT,
                W - 2 * M - ew - 12, anchor="lm", stroke=1, smallest=MIN_TEXT)
    if view["phase"] == "over":
        status = label(labels, "status_over")
    elif view["phase"] == "row" and view.get("to_move") is not None:
        card = pending[0][1] if pending else ""
        status = label(labels, "status_row", name=names[view["to_move"]], card=card)
    else:
        status = label(labels, "status_choose", count=len(view.get("to_act") or []))
    rb.text_fit(d, (M, y + 44), status, 18, GOLD, W - 2 * M, anchor="lm", smallest=MIN_TEXT)
    y += head_h
    if fresh and deal is not None:
        banner(im, d, M, y, W - 2 * M, 32, label(labels, "deal_start", deal=deal.get("deal", view["deal"])), 20,
               MIN_TEXT)
        y += banner_h

    # the four rows: every card, ox heads on each; a sixth place marks where a row is taken
    placed = {c for c, (kind, _) in where.items() if kind == "placed"} if not fresh else set()
    taken = {r: c for c, (kind, r) in where.items() if kind in ("sixth", "took_row")} if not fresh else {}
    _draw_rows(im, d, y, rows, view["row_heads"], placed, taken)
    y += len(rows) * ROW_H

    # the last reveal, in the order the cards were placed: card, player, where it went
    if shown:
        # (under a new deal's rows, the reveal shown is the last turn of the deal before: it says so)
        heading = (label(labels, "revealed_last", deal=int(deal.get("deal", view["deal"])) - 1)
                   if fresh and deal is not None else label(labels, "revealed"))
        rb.text_fit(d, (M, y + 14), heading, 18, MUTED, W - 2 * M, anchor="lm", smallest=MIN_TEXT)
        y += 30
        x0 = M + (W - 2 * M - per_line * CHIP_W) / 2
        for i, (seat, card) in enumerate(shown):
            line, col = divmod(i, per_line)
            cx = x0 + col * CHIP_W
            cy = y + line * chip_h
            kind, row = where.get(card, ("", -1))
            colour = RED if kind in ("sixth", "took_row") else ORANGE if kind == "placed" else GOLD if card == next_up \
                else MUTED
            kx = cx + (CHIP_W - CHIP_CW) / 2
            if kind or card == next_up:
                d.rounded_rectangle((kx - 3, cy - 3, kx + CHIP_CW + 2, cy + CHIP_CH + 2), 6, outline=colour, width=3)
            im.paste(rc.number_card(card, HEADS[card], CHIP_CW, CHIP_CH, FELT), (int(kx), int(cy)))
            rb.text(d, (cx + CHIP_W / 2, cy + CHIP_CH + 5), rb.fit(names[seat], ft, CHIP_W - 4), ft, TEXT,
                    anchor="ma")
            for k, part in enumerate(dests[i]):
                rb.text(d, (cx + CHIP_W / 2, cy + CHIP_CH + 25 + 18 * k), part, ft, colour, anchor="ma")
        y += reveal_h - 30

    # players: hand, chosen this turn, penalty pile, total
    cols = (M + 290, M + 410, M + 480, W - M)
    fh = rb.font(MIN_TEXT)
    for text, x in zip((label(labels, "hand"), "", label(labels, "pile"), label(labels, "score")), cols):
        if text:
            rb.text(d, (x, y + 14), rb.fit(text, fh, 100), fh, MUTED, anchor="rm")
    y += 30
    to_act = set(view.get("to_act") or [])
    f18 = rb.font(18)
    for s in range(seats):
        top = y + s * LINE_H
        cy = top + LINE_H / 2
        if s in to_act:
            d.rounded_rectangle((M, top + 1, W - M, top + LINE_H - 2), 8, fill=PANEL_HI)
        seat_badge(im, d, M + 15, cy, s, PANEL if s not in to_act else GOLD, TEXT)
        rb.text_fit(d, (M + 34, cy), names[s], 18, TEXT, cols[0] - 50 - M - 34, anchor="lm", smallest=MIN_TEXT)
        rb.text(d, (cols[0], cy), str(view["hand_counts"][s]), f18, TEXT, anchor="rm")
        if view["phase"] == "choose":
            chosen = view["chosen"][s]
            rb.text_fit(d, (cols[1], cy), label(labels, "chosen" if chosen else "choosing"), MIN_TEXT,
                        GOLD if chosen else MUTED, 110, anchor="rm")
        rb.text(d, (cols[2], cy), str(view["pile_sizes"][s]), f18, TEXT, anchor="rm")
        rb.text(d, (cols[3], cy), str(view["scores"][s]), f18, TEXT, anchor="rm", stroke=1)
    return rb.to_png(im)


HAND_PER_LINE = 5
HAND_LINE_H = CH + 40  # a hand card and where it would go under it


@serialised
def render_take6_hand(view: Mapping[str, Any], labels: Mapping[str, str]) -> bytes:
    """A seat's private panel picture, from its own view (``Take6.view(seat)``): the four
    rows as on the table, and the hand beside them (below, the width of a phone), each
    card with where it would go if it were laid now (a row, a row it would take as
    its sixth card, or a row to pick, lower than every row).  The same width whatever
    the hand."""
    rows = view["rows"]
    hand = [int(c) for c in view["hand"]]
    lines = max(1, -(-len(hand) // HAND_PER_LINE))
    H = M + len(rows) * ROW_H + 34 + lines * HAND_LINE_H + M
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)
    _draw_rows(im, d, M, rows, view["row_heads"])
    y = M + len(rows) * ROW_H
    rb.text_fit(d, (M, y + 14), label(labels, "hand"), 18, MUTED, W - 2 * M, anchor="lm", smallest=MIN_TEXT)
    y += 34
    cell = (W - 2 * M) / HAND_PER_LINE
    for i, card in enumerate(hand):
        line, col = divmod(i, HAND_PER_LINE)
        cx = M + col * cell + (cell - CW) / 2
        cy = y + line * HAND_LINE_H
        row = row_for(card, rows)
        if row < 0:
            dest, colour = label(labels, "picks_row"), RED
        elif len(rows[row]) >= ROW_MAX:
            dest, colour = label(labels, "takes_row", row=ROW_LABELS[row]), RED
        else:
            dest, colour = label(labels, "to_row", row=ROW_LABELS[row]), ORANGE
        im.paste(rc.number_card(card, HEADS[card], CW, CH, FELT), (int(cx), int(cy)))
        rb.text_fit(d, (cx + CW / 2, cy + CH + 18), dest, 20, colour, cell - 6, anchor="mm", smallest=MIN_TEXT)
    return rb.to_png(im)
