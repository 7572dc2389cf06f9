"""Images of the game tables, hands and player profiles (PNG bytes).

Pure functions from *view* dicts (what ``Game.view(seat)`` returns: plain,
JSON-serialisable data; never game objects) to PNG bytes.  The bot calls them
through :func:`draw` (one painter thread) on every move, so they are fast (a few ms; card sprites
are cached) and keep images modest (at most 1000 px wide, flat colours).

Every word drawn comes from the ``labels`` argument, already translated by
the caller; numbers and player names are drawn as given.  Each function's
label keys are exported as a tuple constant (``NIMMT_TABLE_LABELS`` ...)
whose comment lists each key's ``{placeholders}``.  Every placeholder of a
key is always supplied, so a translation may use any subset of them.  Use
forms that need no plural ("Draw pile: {count}").  A missing key is drawn as
the key itself (visible, never a crash).

Fonts: Pillow's embedded scalable font (no system fonts needed); see
:mod:`app.render_base` for how characters it lacks are folded.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import itertools
import queue
import threading
from typing import Any, Callable, Mapping, Sequence, TypeVar

from PIL import Image, ImageDraw

from app import render_base as rb
from app import render_cards as rc
from app.render_base import Color, label, set_font  # noqa: F401  (set_font re-exported)
from app.render_cards import heads  # noqa: F401  (re-exported)
from core import registry

__all__ = [
    "render_nimmt_table", "render_nimmt_hand", "render_garbage_table", "render_profile",
    "NIMMT_TABLE_LABELS", "NIMMT_HAND_LABELS", "GARBAGE_TABLE_LABELS", "PROFILE_LABELS",
    "set_font", "heads", "warm_up", "draw",
]

# --------------------------------------------------------------------------
# Label keys per function (placeholders in the comments)

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
)
"""Label keys of :func:`render_garbage_table`."""

PROFILE_LABELS: tuple[str, ...] = (
    "game_nimmt",    # (none)                    e.g. "11 nimmt!"
    "game_garbage",  # (none)                    e.g. "Garbage"
    "games",         # (none)                    e.g. "Games"
    "wins",          # (none)                    e.g. "Wins"
    "win_rate",      # (none)                    e.g. "Win rate"
    "avg_penalty",   # (none)                    e.g. "Penalty per round"
    "rounds_won",    # (none)                    e.g. "Rounds won"
    "bulls_earned",  # (none)                    e.g. "Bulls earned"
    "hands_won",     # (none)                    e.g. "Hands won"
    "rating",        # (none)                    e.g. "Rating"
    "rating_detail", # {mu} {sigma}              e.g. "mu {mu} / sigma {sigma}"
    "rank",          # {rank}                    e.g. "Rank #{rank}"
    "unranked",      # (none)                    e.g. "Unranked"
    "decimal_mark",  # (none)  the reader's decimal separator, e.g. "." or ","
    "percent",       # {value}                   e.g. "{value}%" or "{value} %"
)
"""Label keys of :func:`render_profile`."""

# --------------------------------------------------------------------------
# Palette (flat colours; an opaque "felt" background reads on dark and light
# Discord themes alike)

FELT: Color = (27, 60, 47)
PANEL: Color = (37, 79, 62)
PANEL_HI: Color = (70, 84, 46)
LINE: Color = (58, 104, 84)
TEXT: Color = (242, 245, 240)
MUTED: Color = (160, 192, 176)
GOLD: Color = (255, 202, 64)
ORANGE: Color = (255, 138, 61)
RED: Color = (255, 99, 99)
SLATE: Color = (33, 37, 46)
SLATE_PANEL: Color = (45, 51, 63)
SLATE_MUTED: Color = (150, 160, 180)

M = 20  # outer margin

_F = TypeVar("_F", bound=Callable[..., bytes])
_LOCK = threading.Lock()


def _serialised(fn: _F) -> _F:
    """One render at a time: FreeType faces and the sprite caches are shared,
    and the bot calls us from a thread pool."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> bytes:
        with _LOCK:
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


def _names(names: Sequence[str], seats: int) -> list[str]:
    out = []
    for s in range(seats):
        name = names[s] if s < len(names) and names[s] is not None else ""
        out.append(str(name) if str(name).strip() else str(s + 1))
    return out


def _name(names: list[str], seat: Any) -> str:
    return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else ""


def _seat_badge(im: Image.Image, d: ImageDraw.ImageDraw, cx: float, cy: float, seat: int,
                fill: Color, ink: Color, r: int = 11) -> None:
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    rb.text(d, (cx, cy), str(seat + 1), rb.font(14 if seat < 9 else 12), ink, anchor="mm")


def _marker(im: Image.Image, x: float, cy: float, s: int, color: Color = GOLD) -> None:
    rb.stamp(im, rb.triangle_mask(s), (x, cy - s / 2), color)


def _hline(d: ImageDraw.ImageDraw, y: float, x0: float, x1: float, color: Color = LINE) -> None:
    d.line((x0, y, x1, y), fill=color, width=1)


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

@_serialised
def render_nimmt_table(view: Mapping[str, Any], names: Sequence[str], labels: Mapping[str, str]) -> bytes:
    """The public 11 nimmt! table: header, stacks grid, player strip.

    ``view``: a seat or public view; ``names``: display name per seat.
    """
    seats = int(view["seats"])
    nm = _names(names, seats)
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
    mover = _name(nm, to_move)
    key = {"play": "status_play", "steal": "status_steal", "open": "status_open"}.get(phase, "status_over")
    status = label(labels, key, name=mover, seat=(to_move + 1) if isinstance(to_move, int) else "")
    x = M
    if phase != "over" and isinstance(to_move, int):
        _marker(im, x, y + 16, 16)
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
    _hline(d, y, M, W - M)
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
            cy = y + r * row_h + 24
            is_played = st["id"] in played
            badge = _badge(str(st["label"]), cell - 8, is_played)
            im.paste(badge, (int(cx + cw / 2 - badge.width / 2), int(cy - 24)))
            if is_played:
                d.rounded_rectangle((cx - 3, cy - 3 + 0, cx + cw + 2, cy + ch + 2), 9, outline=ORANGE, width=3)
            im.paste(rc.nimmt_card(int(st["top"]), cw, ch, FELT), (int(cx), int(cy)))
            if is_played:
                rb.text(d, (cx + cw / 2, cy + ch + 5), played_txt, ft, ORANGE, anchor="ma")
    y += grid_h + 4
    _hline(d, y, M, W - M)
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
            _marker(im, px + 6, cy, 14)
        elif s in winners:
            rb.stamp(im, rb.star_mask(16), (px + 5, cy - 9), GOLD)
        _seat_badge(im, d, px + 36, cy, s, GOLD if active else LINE, (30, 30, 30) if active else TEXT)
        hx, bux, scx = px + colw - 210, px + colw - 140, px + colw - 12
        nx = px + 54
        name_w = hx - nx - 10
        own = viewer == s
        suffix = rb.fit(" " + you, f14, name_w / 2) if own else ""
        sw = f14.getlength(suffix) if suffix else 0
        drawn = rb.text_fit(d, (nx, cy), nm[s], 18, GOLD if active else TEXT, name_w - sw, anchor="lm",
                            stroke=1 if own else 0)
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

@_serialised
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
            im.paste(rc.nimmt_card(c, cw, ch, FELT), (int(x), int(top)))
            for k, line in enumerate(tags[c]):
                rb.text(d, (x + cw / 2, top + ch + 6 + 17 * k), line, f14, GOLD, anchor="ma")
        else:
            im.paste(rc.nimmt_card(c, cw, ch, FELT, dim=any_play), (int(x), int(top + lift)))
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


# --------------------------------------------------------------------------
# Garbage table

_PCW, _PCH, _PGAP = 48, 68, 6          # card size and gap in a layout
_PANEL_W = 2 * 12 + 5 * _PCW + 4 * _PGAP
_PANEL_H = 12 + 30 + 2 * (_PCH + 18) + 10


def _garbage_panel(im: Image.Image, d: ImageDraw.ImageDraw, x: float, y: float, seat: int, player: Mapping[str, Any],
                   name: str, active: bool, own: bool, winner: bool, jack_slots: set[int],
                   labels: Mapping[str, str]) -> None:
    fill = PANEL_HI if active else PANEL
    d.rounded_rectangle((x, y, x + _PANEL_W, y + _PANEL_H), 12, fill=fill,
                        outline=GOLD if active else None, width=3 if active else 0)
    cy = y + 12 + 13
    nx = x + 12
    layout = list(player["layout"])
    slots = int(player["slots"])
    if active:
        _marker(im, nx, cy, 14)
        nx += 18
    elif winner:
        rb.stamp(im, rb.star_mask(16), (nx - 2, cy - 9), GOLD)
        nx += 18
    _seat_badge(im, d, nx + 11, cy, seat, GOLD if active else LINE, (30, 30, 30) if active else TEXT)
    nx += 28
    f14 = rb.font(14)
    slot_txt = rb.fit(label(labels, "slots", count=slots), f14, 100)
    rb.text(d, (x + _PANEL_W - 12, cy), slot_txt, f14, MUTED, anchor="rm")
    name_w = x + _PANEL_W - 12 - f14.getlength(slot_txt) - 8 - nx
    suffix = rb.fit(" " + label(labels, "you"), f14, name_w / 2) if own else ""
    sw = f14.getlength(suffix) if suffix else 0
    drawn = rb.text_fit(d, (nx, cy), name, 18, GOLD if active else TEXT, name_w - sw, anchor="lm",
                        stroke=1 if own else 0)
    if suffix:
        rb.text(d, (nx + drawn + 2, cy + 1), suffix, f14, MUTED, anchor="lm")
    f13 = rb.font(13)
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
        if k in jack_slots:
            d.rounded_rectangle((cx - 3, cyy - 3, cx + _PCW + 2, cyy + _PCH + 2), 8, outline=GOLD, width=3)
        sprite = rc.card_back(_PCW, _PCH, fill) if card is None else rc.playing_card(str(card), _PCW, _PCH, fill)
        im.paste(sprite, (int(cx), int(cyy)))
        rb.text(d, (cx + _PCW / 2, cyy + _PCH + 2), str(k), f13, GOLD if k in jack_slots else MUTED, anchor="ma")


def _complete(player: Mapping[str, Any]) -> bool:
    """G3: every slot face-up (the hand's, at "over" the game's, winner)."""
    lay = list(player["layout"])[: int(player["slots"])]
    return len(lay) == int(player["slots"]) and all(c is not None for c in lay)


@_serialised
def render_garbage_table(view: Mapping[str, Any], names: Sequence[str], labels: Mapping[str, str]) -> bytes:
    """The Garbage table: header, stock / discard / card in hand, one panel
    per player (two rows of five slots)."""
    seats = int(view["seats"])
    nm = _names(names, seats)
    players = list(view["players"])
    to_move = view["to_move"]
    phase = view["phase"]
    viewer = view["seat"]
    n = len(players)
    pcols = 1 if n <= 1 else 2 if n in (2, 4) else 3
    prows = (n + pcols - 1) // pcols
    pgap = 14
    W = max(pcols * _PANEL_W + (pcols - 1) * pgap + 2 * M, 600)
    mid_h = 150
    H = M + 36 + 30 + 8 + mid_h + 8 + prows * (_PANEL_H + pgap) - pgap + M
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)
    f20 = rb.font(20)

    # header
    y = M
    deck_txt = rb.fit(label(labels, "decks", count=view["decks"]), f20, 200)
    rb.text(d, (W - M, y + 16), deck_txt, f20, MUTED, anchor="rm")
    rb.text_fit(d, (M, y + 16), label(labels, "hand_no", hand_no=view["hand_no"]), 28, TEXT,
                W - 2 * M - f20.getlength(deck_txt) - 16, anchor="lm", stroke=1)
    y += 36
    mover = _name(nm, to_move)
    key = {"source": "status_source", "jack": "status_jack"}.get(phase, "status_over")
    if key == "status_source" and not (view.get("can_take_discard") and view.get("discard_top")):
        key = "status_draw"  # G1: only offer the discard when it fits
    seat_no = (to_move + 1) if isinstance(to_move, int) else ""
    x = M
    if phase != "over" and isinstance(to_move, int):
        _marker(im, x, y + 14, 16)
        x += 22
    rb.text_fit(d, (x, y + 14), label(labels, key, name=mover, seat=seat_no), 20,
                GOLD if phase != "over" else TEXT, W - M - x, anchor="lm")
    y += 30 + 4
    _hline(d, y, M, W - M)
    y += 4

    # stock, discard, card in hand
    bw, bh = 66, 92
    slots = 3
    slot_w = 150
    sx0 = (W - slots * slot_w) / 2
    cap_y = y + 12 + bh + 10 + 8
    f16 = rb.font(16)
    # stock: a small pile of backs
    cx = sx0 + (slot_w - bw) / 2
    cy = y + 12
    if view["stock"]:
        for k in (2, 1):
            im.paste(rc.card_back(bw, bh, FELT), (int(cx + 2 * k), int(cy - 2 * k + 4)))
        im.paste(rc.card_back(bw, bh, FELT), (int(cx), int(cy + 4)))
    else:
        im.paste(rc.empty_slot(bw, bh, FELT, FELT, LINE), (int(cx), int(cy + 4)))
    rb.text(d, (sx0 + slot_w / 2, cap_y), rb.fit(label(labels, "stock", count=view["stock"]), f16, slot_w - 8),
            f16, TEXT, anchor="mm")
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
    rb.text(d, (sx0 + slot_w * 1.5, cap_y),
            rb.fit(label(labels, "discard", count=view["discard_count"]), f16, slot_w - 8),
            f16, GOLD if takeable else TEXT, anchor="mm")
    # card in hand of the player to move
    in_hand = view["in_hand"]
    cx = sx0 + 2 * slot_w + (slot_w - bw) / 2
    if in_hand is not None:
        d.rounded_rectangle((cx - 4, cy, cx + bw + 3, cy + 4 + bh + 3), 10, outline=GOLD, width=3)
        im.paste(rc.playing_card(str(in_hand), bw, bh, FELT), (int(cx), int(cy + 4)))
    else:
        im.paste(rc.empty_slot(bw, bh, FELT, FELT, LINE), (int(cx), int(cy + 4)))
    rb.text(d, (sx0 + slot_w * 2.5, cap_y),
            rb.fit(label(labels, "in_hand", name=mover, seat=seat_no), f16, slot_w - 8),
            f16, GOLD if in_hand is not None else MUTED, anchor="mm")
    y += mid_h + 4

    # players
    jack_slots = {int(k) for k in view["jack_slots"]}
    gx0 = (W - (pcols * _PANEL_W + (pcols - 1) * pgap)) / 2
    for s, player in enumerate(players):
        r, c = divmod(s, pcols)
        active = s == to_move and phase != "over"
        _garbage_panel(im, d, gx0 + c * (_PANEL_W + pgap), y + r * (_PANEL_H + pgap), s, player,
                       _name(nm, s) or str(s + 1), active, viewer == s,
                       phase == "over" and _complete(player), jack_slots if active else set(), labels)
    return rb.to_png(im)


# --------------------------------------------------------------------------
# Profile card

def _plain_num(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


@_serialised
def render_profile(profile: Mapping[str, Any], labels: Mapping[str, str]) -> bytes:
    """A compact stats card for one player and one game."""
    game = profile.get("game")
    W, pad = 560, 18
    mark = labels.get("decimal_mark") or "."

    def _num(value: Any) -> str:  # numbers in the reader's style
        return _plain_num(value).replace(".", mark)

    rate = round(100 * float(profile.get("win_rate") or 0))
    tiles: list[tuple[str, str]] = [
        (label(labels, "games"), _num(profile.get("games"))),
        (label(labels, "wins"), _num(profile.get("wins"))),
        (label(labels, "win_rate"), label(labels, "percent", value=rate) if "percent" in labels else f"{rate}%"),
    ]
    spec = registry.spec(str(game or registry.GAMES[0].key))
    # the figures the game declares, in its order (core.registry)
    tiles += [(label(labels, stat.label_key), _num(profile.get(stat.key))) for stat in spec.stats]
    tiles.append((label(labels, "rating"), _num(profile.get("ordinal"))))
    cols = len(tiles) if len(tiles) <= 5 else 4
    tw = (W - 2 * pad - (cols - 1) * 10) / cols
    th = 64
    rows = (len(tiles) + cols - 1) // cols
    H = pad + 78 + rows * (th + 10) - 10 + pad
    im = Image.new("RGB", (W, H), SLATE)
    d = ImageDraw.Draw(im)
    accent = spec.colour
    d.rectangle((0, 0, 5, H), fill=accent)

    # name, game, rank
    rank = profile.get("rank")
    rank_txt = label(labels, "rank", rank=rank) if rank is not None else label(labels, "unranked")
    f20 = rb.font(20)
    rank_txt = rb.fit(rank_txt, f20, 180)
    rw = f20.getlength(rank_txt)
    if rank_txt:
        d.rounded_rectangle((W - pad - rw - 20, pad + 4, W - pad, pad + 36), 16, fill=SLATE_PANEL)
        rb.text(d, (W - pad - 10 - rw / 2, pad + 20), rank_txt, f20, accent, anchor="mm")
    rb.text_fit(d, (pad + 6, pad + 20), str(profile.get("name") or ""), 30, TEXT,
                W - 2 * pad - rw - 40, anchor="lm", stroke=1)
    sub = label(labels, f"game_{spec.key}")  # the game's name, given by the caller
    detail = ""
    if profile.get("mu") is not None and profile.get("sigma") is not None:
        detail = label(labels, "rating_detail", mu=_num(profile.get("mu")), sigma=_num(profile.get("sigma")))
    sub_w = rb.text_fit(d, (pad + 6, pad + 56), sub, 18, accent, W / 2, anchor="lm")
    if detail:
        rb.text_fit(d, (W - pad, pad + 56), detail, 16, SLATE_MUTED, W - 2 * pad - sub_w - 30, anchor="rm")

    # tiles
    y = pad + 78
    f26 = rb.font(26)
    for i, (cap, val) in enumerate(tiles):
        r, c = divmod(i, cols)
        x = pad + c * (tw + 10)
        ty = y + r * (th + 10)
        d.rounded_rectangle((x, ty, x + tw, ty + th), 10, fill=SLATE_PANEL)
        rb.text(d, (x + tw / 2, ty + 23), rb.fit(val, f26, tw - 8), f26, TEXT, anchor="mm", stroke=1)
        caption, fc = rb.shrink(cap, 13, tw - 8)
        rb.text(d, (x + tw / 2, ty + 47), caption, fc, SLATE_MUTED, anchor="mm")
        if i == 2:  # win rate: a bar along the tile's bottom edge
            rate = max(0.0, min(1.0, float(profile.get("win_rate") or 0)))
            d.rectangle((x + 12, ty + th - 8, x + tw - 12, ty + th - 5), fill=SLATE)
            if rate > 0:
                d.rectangle((x + 12, ty + th - 8, x + 12 + (tw - 24) * rate, ty + th - 5), fill=accent)

    return rb.to_png(im)


# --------------------------------------------------------------------------
# Start-up

@_serialised
def warm_up() -> None:
    """Build fonts, glyph coverage and the common card sprites ahead of time,
    so the first images of a game are as fast as the rest.  Optional; call
    once at start-up (in a thread: it takes a fraction of a second)."""
    for size in (13, 14, 16, 17, 18, 20, 22, 24, 26, 28, 30):
        rb.font(size)
    rb.clean("".join(chr(c) for c in range(32, 127)))
    for c in range(1, 101):
        rc.nimmt_card(c, 66, 92, FELT)
        rc.nimmt_card(c, 64, 90, FELT)
    for suit in rc.SUITS:
        for rank in rc.RANKS:
            rc.playing_card(rank + suit, _PCW, _PCH, PANEL)
    # one small image of each kind builds the remaining icons and badges
    nimmt = {"game": "nimmt", "seat": 0, "seats": 4, "round": 1, "rounds": 4, "to_move": 0, "phase": "play",
             "stacks": [{"id": i, "label": chr(65 + i), "top": 10 * i + 5, "heads": 1} for i in range(4)],
             "hand_counts": [2, 2, 2, 2], "bulls": [1, 0, 0, 0], "supply": 9, "draw_pile": 50,
             "scores": [0, 0, 0, 0], "start_seat": 0, "turn": {"played_stacks": [0], "max_stacks": 2},
             "victims": [], "hand": [6, 17], "playable": {1: [17]}}
    garbage = {"game": "garbage", "seat": 0, "seats": 2, "hand_no": 1, "to_move": 0, "phase": "jack",
               "players": [{"slots": 10, "layout": [None] * 9 + ["JS"]}, {"slots": 9, "layout": [None] * 9}],
               "stock": 30, "discard_top": "QH", "discard_count": 1, "in_hand": "JD",
               "can_take_discard": False, "jack_slots": [1, 2], "decks": 1, "start_seat": 0}
    render_nimmt_table.__wrapped__(nimmt, ["A"], {})  # type: ignore[attr-defined]
    render_nimmt_hand.__wrapped__(nimmt, {})  # type: ignore[attr-defined]
    render_garbage_table.__wrapped__(garbage, ["A"], {})  # type: ignore[attr-defined]
    render_profile.__wrapped__({"name": "A", "game": "nimmt", "win_rate": 0.5, "rank": 1}, {})  # type: ignore[attr-defined]


# --------------------------------------------------------------------------
# Drawing off the event loop

class _Painter:
    """One drawing thread taking the pictures that answer a click (a hand, a
    profile card) before the background ones (table messages).  With a pool,
    a click's picture queued behind every table picture of a busy evening
    (the renders take turns on one lock anyway): hundreds of milliseconds,
    sometimes past Discord's 3 seconds."""

    def __init__(self) -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Any, Callable[..., Any], tuple[Any, ...]]] = \
            queue.PriorityQueue()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def submit(self, urgent: bool, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((0 if urgent else 1, next(self._order), future, fn, args))
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="painter", daemon=True)
                self._thread.start()
        return future

    def _run(self) -> None:
        while True:
            _, _, future, fn, args = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as error:  # handed to the awaiting coroutine
                future.set_exception(error)


_PAINTER = _Painter()


async def draw(fn: Callable[..., bytes], *args: Any, urgent: bool = False) -> bytes:
    """``fn(*args)`` (one of the renderers) in the drawing thread; ``urgent``
    for a picture a player's click waits for."""
    return await asyncio.wrap_future(_PAINTER.submit(urgent, fn, *args))
