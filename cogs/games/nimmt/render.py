"""Pictures of 11 nimmt!: the table and a player's hand.

See :mod:`app.render` for the conventions (views in, PNG bytes out, labels
translated by the caller).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render import cards as rc
from app.render.base import Color, label
from app.render.common import (FELT, GOLD, LINE, M, MUTED, ORANGE, PANEL, PANEL_HI, RED, TEXT, hline,
                               marker, name_of, names_for, seat_badge, serialised, table_picture)
from core.games.nimmt.engine import HEADS

NIMMT_TABLE_LABELS: tuple[str, ...] = (
    "round",         # {round} {rounds}          e.g. "Round {round}/{rounds}"
    "draw_pile",     # {count}                   e.g. "Draw pile: {count}"
    "supply",        # {count}                   e.g. "Bull supply: {count}"
    "status_play",   # {name} {seat}             e.g. "{name} to move"
    "status_steal",  # {name} {seat}             e.g. "{name} takes a bull card from another player"
    "status_open",   # {name} {seat}             e.g. "{name} opens a new stack"
    "status_over",   # (none)                    e.g. "Game over"
    "turn_stacks",   # {played} {max}            e.g. "Stacks played this turn: {played}/{max}"
    "no_stacks",     # (none)                    e.g. "No stacks on the table"
    "played",        # (none)  tag under a stack played this turn, e.g. "played"
    "hand",          # (none)  column header, e.g. "Hand"
    "bulls",         # (none)  column header, e.g. "Bulls"
    "score",         # (none)  column header, e.g. "Score"
    "you",           # (none)  after the viewer's own name, e.g. "(you)"
)
"""Label keys of :func:`render_nimmt_table` (placeholders in the comments)."""

NIMMT_HAND_LABELS: tuple[str, ...] = (
    "hand_title",    # {count}                   e.g. "Your hand ({count})"
    "hand_empty",    # (none)                    e.g. "No cards in hand"
    "fits",          # (none)  before the stack letters under a playable card, e.g. "on"
)
"""Label keys of :func:`render_nimmt_hand`."""


# --------------------------------------------------------------------------
# The cards


def heads(card: int) -> int:
    """Ox heads of an 11 nimmt! card (H1; the one table lives in the engine).

    >>> [heads(c) for c in (55, 11, 99, 10, 100, 5, 15, 1, 54)]
    [7, 5, 5, 3, 3, 2, 2, 1, 1]
    """
    return HEADS[card] if 1 <= card <= 100 else 1


def nimmt_card(card: int, w: int, h: int, bg: Color, dim: bool = False) -> Image.Image:
    """An 11 nimmt! card ``w`` x ``h``: big number, ox heads on top, colour by heads."""
    return rc.number_card(card, heads(card) if isinstance(card, int) else 1, w, h, bg, dim)


# --------------------------------------------------------------------------
# 11 nimmt! table


@rb.cached(maxsize=512)
def _badge(text: str, max_w: int, hot: bool) -> Image.Image:
    """A stack's letter in a pill (orange when played this turn)."""
    f = rb.font(17)
    lab = rb.fit(text, f, max_w - 12)
    w = int(max(24, f.getlength(lab) + 14))
    im = Image.new("RGB", (w, 22), FELT)
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((0, 0, w - 1, 21), 10, fill=ORANGE if hot else PANEL)
    rb.text(d, (w / 2, 11), lab, f, (30, 20, 10) if hot else TEXT, anchor="mm", stroke=0)
    return im

@table_picture
@serialised
def render_nimmt_table(view: Mapping[str, Any], names: Sequence[str], labels: Mapping[str, str]) -> bytes:
    """The public 11 nimmt! table: header, stacks grid, player strip.

    ``view``: a seat or public view; ``names``: display name per seat.
    """
    seats = int(view["seats"])
    nm = names_for(names, seats)
    stacks = list(view["stacks"])
    to_move = view["to_move"]
    phase = view["phase"]
    turn = view["turn"]
    played = set(turn["played_stacks"])
    viewer = view["seat"]
    W = 900

    # grid geometry: two sizes so 60 stacks stay compact
    n = len(stacks)
    if n <= 20:
        cw, ch, cell, cols = 66, 92, 84, 10
    else:
        cw, ch, cell, cols = 54, 76, 68, 12
    cols = max(1, min(cols, n))
    grid_rows = (n + cols - 1) // cols
    tag_h = 18 if played else 4
    row_h = 24 + ch + tag_h + 10
    grid_h = grid_rows * row_h if n else 70

    pcols = 1 if seats <= 3 else 2
    prow_h = 38
    prows = (seats + pcols - 1) // pcols
    players_h = 24 + prows * (prow_h + 6)

    H = M + 36 + 32 + 12 + grid_h + 14 + players_h + M
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)

    # header: round, bull supply, draw pile
    y = M
    right = W - M
    pile_txt = rb.fit(label(labels, "draw_pile", count=view["draw_pile"]), rb.font(20), 220)
    f20 = rb.font(20)
    tw = f20.getlength(pile_txt)
    rb.text(d, (right, y + 16), pile_txt, f20, TEXT, anchor="rm")
    bx = right - tw - 8 - 20
    im.paste(rc.card_back(20, 28, FELT), (int(bx), y + 2))
    sup_txt = rb.fit(label(labels, "supply", count=view["supply"]), f20, 220)
    tw2 = f20.getlength(sup_txt)
    sx = bx - 22
    rb.text(d, (sx, y + 16), sup_txt, f20, TEXT, anchor="rm")
    im.paste(rc.bull_icon(20, 28, FELT), (int(sx - tw2 - 8 - 20), y + 2))
    title_w = sx - tw2 - 8 - 20 - 16 - M
    rb.text_fit(d, (M, y + 16), label(labels, "round", round=view["round"], rounds=view["rounds"]),
                28, TEXT, title_w, anchor="lm", stroke=1)

    # status line
    y += 36
    mover = name_of(nm, to_move)
    key = {"play": "status_play", "steal": "status_steal", "open": "status_open"}.get(phase, "status_over")
    status = label(labels, key, name=mover, seat=(to_move + 1) if isinstance(to_move, int) else "")
    x = M
    if phase != "over" and isinstance(to_move, int):
        marker(im, x, y + 16, 16)
        x += 22
    extra = ""
    if phase == "play" and (turn["max_stacks"] > 1 or played):
        extra = rb.fit(label(labels, "turn_stacks", played=len(played), max=turn["max_stacks"]), f20, 360)
    ew = f20.getlength(extra) if extra else 0
    rb.text_fit(d, (x, y + 16), status, 20, GOLD if phase != "over" else TEXT,
                W - M - x - ew - 16, anchor="lm")
    if extra:
        rb.text(d, (W - M, y + 16), extra, f20, ORANGE if played else MUTED, anchor="rm")
    y += 32 + 6
    hline(d, y, M, W - M)
    y += 6

    # stacks grid
    if not n:
        d.rounded_rectangle((M, y + 6, W - M, y + grid_h - 6), 10, outline=LINE, width=2)
        rb.text_fit(d, (W / 2, y + grid_h / 2), label(labels, "no_stacks"), 22, MUTED, W - 2 * M - 20, anchor="mm")
    else:
        x0 = (W - cols * cell) / 2 + (cell - cw) / 2
        ft = rb.font(13)
        played_txt = rb.fit(label(labels, "played"), ft, cell - 2)
        for i, st in enumerate(stacks):
            r, c = divmod(i, cols)
            cx = x0 + c * cell
            cy: float = y + r * row_h + 24
            is_played = st["id"] in played
            badge = _badge(str(st["label"]), cell - 8, is_played)
            im.paste(badge, (int(cx + cw / 2 - badge.width / 2), int(cy - 24)))
            if is_played:
                d.rounded_rectangle((cx - 3, cy - 3 + 0, cx + cw + 2, cy + ch + 2), 9, outline=ORANGE, width=3)
            im.paste(nimmt_card(int(st["top"]), cw, ch, FELT), (int(cx), int(cy)))
            if is_played:
                rb.text(d, (cx + cw / 2, cy + ch + 5), played_txt, ft, ORANGE, anchor="ma")
    y += grid_h + 4
    hline(d, y, M, W - M)
    y += 10

    # player strip
    bulls = view["bulls"]
    counts = view["hand_counts"]
    scores = view["scores"]
    victims = set(view["victims"]) if phase == "steal" else set()
    winners: set[int] = set()
    if phase == "over" and scores:
        best = min(scores)
        winners = {s for s, v in enumerate(scores) if v == best}
    gap = 16
    colw = (W - 2 * M - gap * (pcols - 1)) / pcols
    f14 = rb.font(14)
    you = label(labels, "you")
    for pc in range(pcols):
        px = M + pc * (colw + gap)
        hx, bux, scx = px + colw - 210, px + colw - 140, px + colw - 12
        rb.text(d, (hx + 4, y + 8), rb.fit(label(labels, "hand"), f14, 64), f14, MUTED, anchor="lm")
        rb.text(d, (bux + 4, y + 8), rb.fit(label(labels, "bulls"), f14, 64), f14, MUTED, anchor="lm")
        rb.text(d, (scx, y + 8), rb.fit(label(labels, "score"), f14, 64), f14, MUTED, anchor="rm")
    y += 20
    f18 = rb.font(18)
    f22 = rb.font(22)
    for s in range(seats):
        pc, pr = divmod(s, prows)
        px = M + pc * (colw + gap)
        py = y + pr * (prow_h + 6)
        cy = py + prow_h / 2
        active = s == to_move and phase != "over"
        fill = PANEL_HI if active else PANEL
        outline = GOLD if active else (RED if s in victims else None)
        d.rounded_rectangle((px, py, px + colw, py + prow_h), 8, fill=fill, outline=outline,
                            width=2 if outline else 0)
        if active:
            marker(im, px + 6, cy, 14)
        elif s in winners:
            rb.stamp(im, rb.star_mask(16), (px + 5, cy - 9), GOLD)
        seat_badge(im, d, px + 36, cy, s, GOLD if active else LINE, (30, 30, 30) if active else TEXT)
        hx, bux, scx = px + colw - 210, px + colw - 140, px + colw - 12
        nx = px + 54
        name_w = hx - nx - 10
        own = viewer == s
        suffix = rb.fit(" " + you, f14, name_w / 2) if own else ""
        sw = f14.getlength(suffix) if suffix else 0
        drawn = rb.text_fit(d, (nx, cy), nm[s], 18, GOLD if active else TEXT, name_w - sw, anchor="lm",
                            stroke=1 if own else 0, smallest=14)
        if suffix:
            rb.text(d, (nx + drawn + 2, cy + 1), suffix, f14, MUTED, anchor="lm")
        # hand size, bull cards, score
        im.paste(rc.card_back(16, 22, fill), (int(hx), int(cy - 11)))
        rb.text(d, (hx + 22, cy), str(counts[s]) if s < len(counts) else "", f18, TEXT, anchor="lm")
        bv = bulls[s] if s < len(bulls) else 0
        im.paste(rc.bull_icon(16, 22, fill), (int(bux), int(cy - 11)))
        rb.text(d, (bux + 22, cy), str(bv), f18, RED if s in victims else (TEXT if bv else MUTED), anchor="lm")
        rb.text(d, (scx, cy), str(scores[s]) if s < len(scores) else "", f22, GOLD if s in winners else TEXT,
                anchor="rm", stroke=1)
    return rb.to_png(im)


# --------------------------------------------------------------------------
# 11 nimmt! hand

@serialised
def render_nimmt_hand(view: Mapping[str, Any], labels: Mapping[str, str]) -> bytes:
    """The seat's own hand (``view["hand"]``), playable cards lifted and framed
    with the letters of the stacks they fit under them."""
    hand = sorted(int(c) for c in view["hand"])
    playable = view["playable"] or {}
    order = {str(st["id"]): (i, str(st["label"])) for i, st in enumerate(view["stacks"])}
    fits: dict[int, list[tuple[int, str]]] = {}
    for sid, cards in playable.items():
        pos = order.get(str(sid), (len(order), str(sid)))
        for c in cards:
            fits.setdefault(int(c), []).append(pos)
    any_play = bool(fits)

    cw, ch, gap = 64, 90, 8
    cell = cw + gap
    per_row = 12
    cols = max(1, min(per_row, len(hand)))
    W = max(cols * cell - gap + 2 * M, 420)
    f14 = rb.font(14)
    on = rb.clean(label(labels, "fits"))
    tags = {c: _fit_lines(on, [lab for _, lab in sorted(v)], f14, cell - 2) for c, v in fits.items()}
    lift = 8
    tag_h = 17 * max((len(t) for t in tags.values()), default=0) + (4 if tags else 0)
    row_h = lift + ch + tag_h + 10
    rows = (len(hand) + per_row - 1) // per_row
    head_h = 40
    H = M + head_h + max(1, rows) * row_h + M - 6
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)
    rb.text_fit(d, (M, M + 14), label(labels, "hand_title", count=len(hand)), 24, TEXT, W - 2 * M,
                anchor="lm", stroke=1)
    y = M + head_h
    if not hand:
        rb.text_fit(d, (W / 2, y + row_h / 2), label(labels, "hand_empty"), 20, MUTED, W - 2 * M, anchor="mm")
        return rb.to_png(im)
    x0 = (W - (cols * cell - gap)) / 2
    for i, c in enumerate(hand):
        r, col = divmod(i, per_row)
        x = x0 + col * cell
        top = y + r * row_h
        if c in tags:
            d.rounded_rectangle((x - 3, top - 3, x + cw + 2, top + ch + 2), 10, outline=GOLD, width=3)
            im.paste(nimmt_card(c, cw, ch, FELT), (int(x), int(top)))
            for k, line in enumerate(tags[c]):
                rb.text(d, (x + cw / 2, top + ch + 6 + 17 * k), line, f14, GOLD, anchor="ma")
        else:
            im.paste(nimmt_card(c, cw, ch, FELT, dim=any_play), (int(x), int(top + lift)))
    return rb.to_png(im)


def _fit_lines(prefix: str, letters: list[str], f: Any, max_w: float, max_lines: int = 2) -> list[str]:
    """Stack letters under a card, wrapped to ``max_lines``; the rest as "+n".

    ``prefix`` (the translated "on") starts the first line when it fits.
    """
    letters = [rb.clean(x) for x in letters]
    lines: list[str] = []
    cur = prefix
    i = 0
    while i < len(letters):
        cand = (cur + " " + letters[i]).strip()
        if f.getlength(cand) <= max_w:
            cur = cand
            i += 1
            continue
        if cur and cur != prefix:
            lines.append(cur)
            cur = ""
        elif cur == prefix and prefix:  # the prefix and one letter do not fit together: drop it
            cur = ""
        else:  # a single label wider than the cell
            lines.append(rb.fit(letters[i], f, max_w))
            i += 1
        if len(lines) == max_lines:
            break
    if cur and len(lines) < max_lines:
        lines.append(cur)
    rest = len(letters) - i
    if rest:
        last = lines[-1] if lines else ""
        more = f"+{rest}"
        while last and f.getlength(last + " " + more) > max_w:
            last = last.rsplit(" ", 1)[0] if " " in last else ""
            rest += 1
            more = f"+{rest}"
        # letters dropped from the last line are counted in ``rest`` above
        lines[-1:] = [(last + " " + more).strip()]
    return lines


def warm_up() -> None:
    """Card sprites and one small picture of each kind (called by
    :func:`app.render.pool.warm_up`, under the render lock)."""
    for c in range(1, 101):
        nimmt_card(c, 66, 92, FELT)
        nimmt_card(c, 64, 90, FELT)
    view = {"game": "nimmt", "seat": 0, "seats": 4, "round": 1, "rounds": 4, "to_move": 0, "phase": "play",
            "stacks": [{"id": i, "label": chr(65 + i), "top": 10 * i + 5, "heads": 1} for i in range(4)],
            "hand_counts": [2, 2, 2, 2], "bulls": [1, 0, 0, 0], "supply": 9, "draw_pile": 50,
            "scores": [0, 0, 0, 0], "start_seat": 0, "turn": {"played_stacks": [0], "max_stacks": 2},
            "victims": [], "hand": [6, 17], "playable": {1: [17]}}
    render_nimmt_table.__wrapped__(view, ["A"], {})
    render_nimmt_hand.__wrapped__(view, {})
