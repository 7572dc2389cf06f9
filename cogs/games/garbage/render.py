"""Picture of a Garbage table.

See :mod:`app.render` for the conventions (views in, PNG bytes out, labels
translated by the caller).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render import cards as rc
from app.render.base import label
from app.render.common import (FELT, GOLD, LINE, M, MUTED, ORANGE, PANEL, PANEL_HI, TEXT, banner, hline, legible,
                               marker, name_of, names_for, seat_badge, serialised, table_picture)

GARBAGE_TABLE_LABELS: tuple[str, ...] = (
    "hand_no",       # {hand_no}                 e.g. "Hand {hand_no}"
    "decks",         # {count}                   e.g. "Decks: {count}"
    "status_source", # {name} {seat}             e.g. "{name}: draw from the stock or take the discard"
    "status_draw",   # {name} {seat}             e.g. "{name}: draw from the stock" (G1: the discard does not fit)
    "status_jack",   # {name} {seat}             e.g. "{name}: choose a slot for the Jack"
    "status_over",   # (none)                    e.g. "Game over"
    "stock",         # {count}                   e.g. "Stock: {count}"
    "discard",       # {count}                   e.g. "Discard: {count}"
    "in_hand",       # {name} {seat}             e.g. "In hand"
    "slots",         # {count}                   e.g. "Slots: {count}"
    "you",           # (none)  after the viewer's own name, e.g. "(you)"
    "chain_slot",    # {slot}                    e.g. "→ {slot}" (under a card of the last chain: where it went)
    "chain_discard",  # (none)                   e.g. "discarded" (the card that ended the chain)
    "chain_choose",  # (none)                    e.g. "Jack: ?" (a Jack waiting for its slot)
    "hand_won",      # {name} {hand} {count}     e.g. "{name} wins hand {hand} · slots next hand: {count}"
    "hand_start",    # {hand} {name}             e.g. "Hand {hand} starts: {name} begins"
)
"""Label keys of :func:`render_garbage_table`."""


# --------------------------------------------------------------------------
# Garbage table

_PCW, _PCH, _PGAP = 48, 68, 6          # card size and gap in a layout
_PANEL_W = 2 * 12 + 5 * _PCW + 4 * _PGAP
_PANEL_H = 12 + 30 + 2 * (_PCH + 20) + 8
W = 2 * _PANEL_W + 14 + 2 * M  # two players side by side, at most
MIN_TEXT = legible(W)
_CCW, _CCH = 40, 56  # a card of the last chain


def last_chain(recent: Sequence[Mapping[str, Any]]) -> tuple[int | None, list[tuple[str, str]], frozenset[int],
                                                             Mapping[str, Any] | None]:
    """The latest turn's chain: who, each card with where it went (``("slot", "7")``,
    ``("discard", "")``, ``("choose", "")``), the slots it filled (none once a
    hand was won or started since: the layouts are dealt afresh, face down), and
    a hand won or started since (the banner).

    >>> last_chain([{"type": "drew", "seat": 1, "source": "stock", "card": "7H"},
    ...             {"type": "placed", "seat": 1, "slot": 7, "card": "7H", "uncovered": "3S"},
    ...             {"type": "dead", "seat": 1, "card": "3S", "reason": "filled"}])[:3]
    (1, [('7H', 'slot:7'), ('3S', 'discard:')], frozenset({7}))
    """
    start = max((i for i, e in enumerate(recent) if e.get("type") == "drew"), default=None)
    since = recent[start or 0:]
    hand = next((e for e in since if e.get("type") == "hand_won" and e.get("slots")), None) or next(
        (e for e in since if e.get("type") == "hand_start"), None)  # (a won hand says more than the next's start)
    if start is None:
        return None, [], frozenset(), hand
    seat = recent[start].get("seat")
    current = str(recent[start].get("card", ""))
    chips: list[tuple[str, str]] = []
    filled: set[int] = set()
    rest = list(recent[start + 1:])
    for k, e in enumerate(rest):
        kind = e.get("type")
        if kind in ("placed", "jack_placed", "swapped"):
            chips.append((str(e.get("card") or current), f"slot:{e['slot']}"))
            filled.add(int(e["slot"]))
            current = "J" if kind == "swapped" else str(e.get("uncovered", ""))
        elif kind == "dead":
            chips.append((str(e.get("card") or current), "discard:"))
            break
        elif kind == "choose_jack" and not any(x.get("type") == "jack_placed" for x in rest[k + 1:]):
            chips.append((current, "choose:"))
            break
        elif kind in ("discarded", "hand_won", "turn"):
            break
    return (seat if isinstance(seat, int) else None), chips, frozenset(filled if hand is None else ()), hand


def _garbage_panel(im: Image.Image, d: ImageDraw.ImageDraw, x: float, y: float, seat: int, player: Mapping[str, Any],
                   name: str, active: bool, own: bool, winner: bool, jack_slots: set[int],
                   labels: Mapping[str, str], filled: frozenset[int] = frozenset()) -> None:
    fill = PANEL_HI if active else PANEL
    d.rounded_rectangle((x, y, x + _PANEL_W, y + _PANEL_H), 12, fill=fill,
                        outline=GOLD if active else None, width=3 if active else 0)
    cy = y + 12 + 13
    nx = x + 12
    layout = list(player["layout"])
    slots = int(player["slots"])
    if active:
        marker(im, nx, cy, 14)
        nx += 18
    elif winner:
        rb.stamp(im, rb.star_mask(16), (nx - 2, cy - 9), GOLD)
        nx += 18
    seat_badge(im, d, nx + 11, cy, seat, GOLD if active else LINE, (30, 30, 30) if active else TEXT)
    nx += 28
    f14 = rb.font(MIN_TEXT)
    slot_txt = rb.fit(label(labels, "slots", count=slots), f14, 100)
    rb.text(d, (x + _PANEL_W - 12, cy), slot_txt, f14, MUTED, anchor="rm")
    name_w = x + _PANEL_W - 12 - f14.getlength(slot_txt) - 8 - nx
    suffix = rb.fit(" " + label(labels, "you"), f14, name_w / 2) if own else ""
    sw = f14.getlength(suffix) if suffix else 0
    drawn = rb.text_fit(d, (nx, cy), name, 18, GOLD if active else TEXT, name_w - sw, anchor="lm",
                        stroke=1 if own else 0, smallest=MIN_TEXT)
    if suffix:
        rb.text(d, (nx + drawn + 2, cy + 1), suffix, f14, MUTED, anchor="lm")
    f13 = rb.font(MIN_TEXT)
    top = y + 12 + 30
    for k in range(1, 11):
        r, c = divmod(k - 1, 5)
        cx = x + 12 + c * (_PCW + _PGAP)
        cyy = top + r * (_PCH + 18)
        if k > slots:
            im.paste(rc.empty_slot(_PCW, _PCH, fill, tuple(v - 6 for v in fill), tuple(v + 10 for v in fill)),
                     (int(cx), int(cyy)))
            continue
        card = layout[k - 1] if k - 1 < len(layout) else None
        if k in jack_slots or k in filled:
            d.rounded_rectangle((cx - 3, cyy - 3, cx + _PCW + 2, cyy + _PCH + 2), 8,
                                outline=GOLD if k in jack_slots else ORANGE, width=3)
        sprite = rc.card_back(_PCW, _PCH, fill) if card is None else rc.playing_card(str(card), _PCW, _PCH, fill)
        im.paste(sprite, (int(cx), int(cyy)))
        rb.text(d, (cx + _PCW / 2, cyy + _PCH + 1), str(k), f13,
                GOLD if k in jack_slots else ORANGE if k in filled else MUTED, anchor="ma")


def _complete(player: Mapping[str, Any]) -> bool:
    """G3: every slot face-up (the hand's, at "over" the game's, winner)."""
    lay = list(player["layout"])[: int(player["slots"])]
    return len(lay) == int(player["slots"]) and all(c is not None for c in lay)


@table_picture
@serialised
def render_garbage_table(view: Mapping[str, Any], names: Sequence[str], labels: Mapping[str, str],
                         recent: Sequence[Mapping[str, Any]] = ()) -> bytes:
    """The Garbage table: header, a hand won or started (banner), the last
    chain card by card with where each went (its slots framed in the player's
    panel), stock / discard / card in hand, one panel per player (two rows of
    five slots, two players side by side).  ``recent``: the public events of
    the latest turns."""
    seats = int(view["seats"])
    nm = names_for(names, seats)
    players = list(view["players"])
    to_move = view["to_move"]
    phase = view["phase"]
    viewer = view["seat"]
    n = len(players)
    pcols = 1 if n <= 1 else 2
    prows = (n + pcols - 1) // pcols
    pgap = 14
    mid_h = 150
    actor, chips, filled, hand_news = last_chain(recent)
    fc = rb.font(MIN_TEXT)
    caps = [label(labels, "chain_slot", slot=where.partition(":")[2]) if where.startswith("slot:") else
            label(labels, "chain_discard") if where.startswith("discard:") else label(labels, "chain_choose")
            for _, where in chips]
    # (a chip is as wide as its widest caption: "descarte", "¿hueco?" stay whole)
    chain_w = int(max([_CCW + 12, *(fc.getlength(rb.clean(cap)) + 6 for cap in caps)]))
    chain_w = min(chain_w, (W - 2 * M) // 4)
    per_line = max(1, (W - 2 * M) // chain_w)
    chain_h = (28 + -(-len(chips) // per_line) * (_CCH + 26)) if chips else 0
    banner_h = 40 if hand_news is not None else 0
    H = M + 36 + 30 + 8 + banner_h + chain_h + mid_h + 8 + prows * (_PANEL_H + pgap) - pgap + M
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)
    f20 = rb.font(20)

    # header
    y: float = M
    deck_txt = rb.fit(label(labels, "decks", count=view["decks"]), f20, 200)
    rb.text(d, (W - M, y + 16), deck_txt, f20, MUTED, anchor="rm")
    rb.text_fit(d, (M, y + 16), label(labels, "hand_no", hand_no=view["hand_no"]), 28, TEXT,
                W - 2 * M - f20.getlength(deck_txt) - 16, anchor="lm", stroke=1)
    y += 36
    mover = name_of(nm, to_move)
    key = {"source": "status_source", "jack": "status_jack"}.get(phase, "status_over")
    if key == "status_source" and not (view.get("can_take_discard") and view.get("discard_top")):
        key = "status_draw"  # G1: only offer the discard when it fits
    seat_no = (to_move + 1) if isinstance(to_move, int) else ""
    x = M
    if phase != "over" and isinstance(to_move, int):
        marker(im, x, y + 14, 16)
        x += 22
    rb.text_fit(d, (x, y + 14), label(labels, key, name=mover, seat=seat_no), 20,
                GOLD if phase != "over" else TEXT, W - M - x, anchor="lm", smallest=MIN_TEXT)
    y += 30 + 4
    if hand_news is not None:
        news = (label(labels, "hand_won", name=name_of(nm, hand_news.get("seat")), hand=hand_news.get("hand", ""),
                      count=hand_news.get("slots", "")) if hand_news.get("type") == "hand_won"
                else label(labels, "hand_start", hand=hand_news.get("hand", ""), name=name_of(nm, hand_news.get("start"))))
        banner(im, d, M, y, W - 2 * M, 32, news, 20, MIN_TEXT)
        y += banner_h
    if chips:  # the last chain: who, each card and where it went
        rb.text_fit(d, (M, y + 11), name_of(nm, actor) + ":", 18, ORANGE, W - 2 * M, anchor="lm", stroke=1,
                    smallest=MIN_TEXT)
        y += 28
        for i, (card, where) in enumerate(chips):
            line, col = divmod(i, per_line)
            cx: float = M + col * chain_w
            cy = y + line * (_CCH + 26)
            im.paste(rc.playing_card(card, _CCW, _CCH, FELT), (int(cx), int(cy)))
            what = where.partition(":")[0]
            rb.text(d, (cx + _CCW / 2, cy + _CCH + 3), rb.fit(caps[i], fc, chain_w - 2), fc,
                    ORANGE if what == "slot" else MUTED if what == "discard" else GOLD, anchor="ma")
        y += chain_h - 28
    hline(d, y, M, W - M)
    y += 4

    # stock, discard, card in hand
    bw, bh = 66, 92
    slots = 3
    slot_w = 190
    sx0 = (W - slots * slot_w) / 2
    cap_y = y + 12 + bh + 10 + 8
    # stock: a small pile of backs
    cx = sx0 + (slot_w - bw) / 2
    cy = y + 12
    if view["stock"]:
        for k in (2, 1):
            im.paste(rc.card_back(bw, bh, FELT), (int(cx + 2 * k), int(cy - 2 * k + 4)))
        im.paste(rc.card_back(bw, bh, FELT), (int(cx), int(cy + 4)))
    else:
        im.paste(rc.empty_slot(bw, bh, FELT, FELT, LINE), (int(cx), int(cy + 4)))
    # (the captions shrink rather than lose their count: "Nachziehstapel: 42")
    rb.text_fit(d, (sx0 + slot_w / 2, cap_y), label(labels, "stock", count=view["stock"]), 16, TEXT, slot_w - 8,
                anchor="mm", smallest=MIN_TEXT)
    # discard
    cx = sx0 + slot_w + (slot_w - bw) / 2
    top = view["discard_top"]
    takeable = bool(view["can_take_discard"]) and phase == "source" and top is not None
    if takeable:
        d.rounded_rectangle((cx - 4, cy, cx + bw + 3, cy + 4 + bh + 3), 10, outline=GOLD, width=3)
    if top is None:
        im.paste(rc.empty_slot(bw, bh, FELT, FELT, LINE), (int(cx), int(cy + 4)))
    else:
        im.paste(rc.playing_card(str(top), bw, bh, FELT), (int(cx), int(cy + 4)))
    rb.text_fit(d, (sx0 + slot_w * 1.5, cap_y), label(labels, "discard", count=view["discard_count"]), 16,
                GOLD if takeable else TEXT, slot_w - 8, anchor="mm", smallest=MIN_TEXT)
    # card in hand of the player to move
    in_hand = view["in_hand"]
    cx = sx0 + 2 * slot_w + (slot_w - bw) / 2
    if in_hand is not None:
        d.rounded_rectangle((cx - 4, cy, cx + bw + 3, cy + 4 + bh + 3), 10, outline=GOLD, width=3)
        im.paste(rc.playing_card(str(in_hand), bw, bh, FELT), (int(cx), int(cy + 4)))
    else:
        im.paste(rc.empty_slot(bw, bh, FELT, FELT, LINE), (int(cx), int(cy + 4)))
    rb.text_fit(d, (sx0 + slot_w * 2.5, cap_y), label(labels, "in_hand", name=mover, seat=seat_no), 16,
                GOLD if in_hand is not None else MUTED, slot_w - 8, anchor="mm", smallest=MIN_TEXT)
    y += mid_h + 4

    # players
    jack_slots = {int(k) for k in view["jack_slots"]}
    gx0 = (W - (pcols * _PANEL_W + (pcols - 1) * pgap)) / 2
    for s, player in enumerate(players):
        r, c = divmod(s, pcols)
        active = s == to_move and phase != "over"
        _garbage_panel(im, d, gx0 + c * (_PANEL_W + pgap), y + r * (_PANEL_H + pgap), s, player,
                       name_of(nm, s) or str(s + 1), active, viewer == s,
                       phase == "over" and _complete(player), jack_slots if active else set(), labels,
                       filled if s == actor else frozenset())
    return rb.to_png(im)


def warm_up() -> None:
    """Card sprites and one small table picture (called by
    :func:`app.render.pool.warm_up`, under the render lock)."""
    for suit in rc.SUITS:
        for rank in rc.RANKS:
            rc.playing_card(rank + suit, _PCW, _PCH, PANEL)
    view = {"game": "garbage", "seat": 0, "seats": 2, "hand_no": 1, "to_move": 0, "phase": "jack",
            "players": [{"slots": 10, "layout": [None] * 9 + ["JS"]}, {"slots": 9, "layout": [None] * 9}],
            "stock": 30, "discard_top": "QH", "discard_count": 1, "in_hand": "JD",
            "can_take_discard": False, "jack_slots": [1, 2], "decks": 1, "start_seat": 0}
    render_garbage_table.__wrapped__(view, ["A"], {})
