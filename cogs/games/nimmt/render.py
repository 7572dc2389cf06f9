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
from app.render.common import (BLUE, FELT, GOLD, LINE, M, MUTED, ORANGE, PANEL, PANEL_HI, RED, TEXT, hline,
                               banner, legible, marker, name_of, names_for, seat_badge, serialised, table_picture, wrap)
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
    "last_played",   # {cards} {label}           e.g. "{cards} on {label}"
    "last_took",     # {label} {count}           e.g. "took stack {label} ({count} cards)"
    "last_bull",     # (none)                    e.g. "a bull card"
    "last_bull_from",  # {victim}                e.g. "a bull card from {victim}"
    "last_opened",   # {label} {card}            e.g. "opened {label} with {card}"
    "last_passed",   # (none)                    e.g. "ended the turn"
    "last_revealed",  # {stacks}                 e.g. "new stacks: {stacks}"
    "round_start",   # {round} {name}            e.g. "Round {round} starts: {name} begins"
    "last_round_over",  # {round}                e.g. "round {round} over" (after the move that ended it)
    "new_stack",     # (none)  tag under a stack just revealed, e.g. "new"
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

W = 720  # the table picture's width: a phone shows it at about half (PHONE_WIDTH)
MIN_TEXT = legible(W)
_ACTS = ("played", "took", "opened", "passed", "bull", "no_bull")


@rb.cached(maxsize=512)
def _badge(text: str, max_w: int, hot: bool) -> Image.Image:
    """A stack's letter in a pill (orange when played this turn)."""
    f = rb.font(18)
    lab = rb.fit(text, f, max_w - 12)
    w = int(max(26, f.getlength(lab) + 14))
    im = Image.new("RGB", (w, 24), FELT)
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((0, 0, w - 1, 23), 11, fill=ORANGE if hot else PANEL)
    rb.text(d, (w / 2, 12), lab, f, (30, 20, 10) if hot else TEXT, anchor="mm", stroke=0)
    return im


def last_turn(recent: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The events of the latest turn in which someone acted (the turn going on,
    else the one before it), and the events after it (a new round, new stacks).

    >>> last_turn([{"type": "played", "seat": 0}, {"type": "turn", "seat": 1}])
    ([{'type': 'played', 'seat': 0}], [{'type': 'turn', 'seat': 1}])
    """
    windows: list[list[Mapping[str, Any]]] = [[]]
    for e in recent:
        if e.get("type") in ("turn", "round_start"):
            windows.append([])
        windows[-1].append(e)
    for k in range(len(windows) - 1, -1, -1):
        acts = [e for e in windows[k] if e.get("type") in _ACTS or e.get("type") == "revealed"]
        if any(e.get("type") in _ACTS for e in acts):
            return acts, [e for w in windows[k + 1:] for e in w]
    return [], [e for w in windows for e in w]


def _caption(events: Sequence[Mapping[str, Any]], nm: list[str], labels: Mapping[str, str]) -> tuple[str, list[str]]:
    """Who made the last move, and what it did, in words (one part per step)."""
    parts: list[str] = []
    who = ""
    for e in events:
        kind = e.get("type")
        if kind in _ACTS and not who:
            who = name_of(nm, e.get("seat"))
        if kind == "played":
            parts.append(label(labels, "last_played", cards=", ".join(str(c) for c in e["cards"]),
                               label=e["label"]))
        elif kind == "took":
            parts.append(label(labels, "last_took", label=e["label"], count=e["count"]))
        elif kind == "bull":
            parts.append(label(labels, "last_bull_from", victim=name_of(nm, e.get("victim")))
                         if e.get("source") == "player" else label(labels, "last_bull"))
        elif kind == "opened":
            parts.append(label(labels, "last_opened", label=e["label"], card=e["card"]))
        elif kind == "passed":
            parts.append(label(labels, "last_passed"))
        elif kind == "revealed" and e.get("stacks"):
            parts.append(label(labels, "last_revealed",
                               stacks=", ".join(f"{st['label']} {st['top']}" for st in e["stacks"])))
    return who, parts


@table_picture
@serialised
def render_nimmt_table(view: Mapping[str, Any], names: Sequence[str], labels: Mapping[str, str],
                       recent: Sequence[Mapping[str, Any]] = ()) -> bytes:
    """The public 11 nimmt! table: header, the last move (who, what, where:
    the stacks it touched are framed and tagged with the player's name), a
    new round's banner, the stacks and one row per player.

    ``view``: a seat or public view; ``names``: display name per seat;
    ``recent``: the public events of the latest turns (``Table.recent``).
    """
    seats = int(view["seats"])
    nm = names_for(names, seats)
    stacks = list(view["stacks"])
    to_move = view["to_move"]
    phase = view["phase"]
    turn = view["turn"]
    played = set(turn["played_stacks"])
    viewer = view["seat"]

    # the last move: the stacks it played on or opened (by id), the stacks revealed after a take
    last, after = last_turn(recent)
    new_round = next((e for e in after if e.get("type") == "round_start"), None)
    marks: dict[Any, int] = {}
    fresh: set[Any] = set()
    if new_round is None:  # (a new round's stacks are not the ones the move touched)
        for e in last:
            if e.get("type") in ("played", "opened"):
                marks[e["stack"]] = int(e["seat"])
            elif e.get("type") == "revealed":
                fresh.update(st["id"] for st in e.get("stacks") or ())
    who, parts = _caption(last, nm, labels)
    if new_round is not None and parts:  # (the stacks it names went with the round it ended)
        parts.append(label(labels, "last_round_over", round=int(new_round.get("round", 2)) - 1))
    f18 = rb.font(18)
    name_f = rb.font(18)
    who_txt = rb.fit(who + ":", name_f, W / 3) if who else ""
    who_w = name_f.getlength(who_txt) + 8 if who else 0
    cap_lines = wrap(parts, f18, W - 2 * M, first=who_w)[:3] if parts else []

    # grid geometry: two sizes so 60 stacks stay compact
    n = len(stacks)
    if n <= 24:
        cw, ch, cell, cols = 66, 92, 84, 8
    else:
        cw, ch, cell, cols = 54, 76, 68, 10
    cols = max(1, min(cols, n))
    grid_rows = (n + cols - 1) // cols
    tag_h = 24 if (played or marks or fresh) else 4
    row_h = 26 + ch + tag_h + 8
    grid_h = grid_rows * row_h if n else 70

    prow_h = 42
    players_h = 26 + seats * (prow_h + 6)
    banner_h = 40 if new_round is not None else 0
    cap_h = 26 * len(cap_lines) + (8 if cap_lines else 0)

    H = M + 36 + 32 + 10 + banner_h + cap_h + grid_h + 14 + players_h + M
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)

    # header: round, bull supply, draw pile
    y = M
    right = W - M
    # (the counts shrink before they are cut: "Toros en reserva: 10" kept its number)
    pile_txt, fp = rb.shrink(label(labels, "draw_pile", count=view["draw_pile"]), 20, 240, MIN_TEXT)
    tw = fp.getlength(pile_txt)
    rb.text(d, (right, y + 16), pile_txt, fp, TEXT, anchor="rm")
    bx = right - tw - 8 - 20
    im.paste(rc.card_back(20, 28, FELT), (int(bx), y + 2))
    sup_txt, fs = rb.shrink(label(labels, "supply", count=view["supply"]), 20, 240, MIN_TEXT)
    tw2 = fs.getlength(sup_txt)
    sx = bx - 18
    rb.text(d, (sx, y + 16), sup_txt, fs, TEXT, anchor="rm")
    im.paste(rc.bull_icon(20, 28, FELT), (int(sx - tw2 - 8 - 20), y + 2))
    title_w = sx - tw2 - 8 - 20 - 12 - M
    rb.text_fit(d, (M, y + 16), label(labels, "round", round=view["round"], rounds=view["rounds"]),
                28, TEXT, title_w, anchor="lm", stroke=1, smallest=MIN_TEXT)

    # status line
    y += 36
    mover = name_of(nm, to_move)
    key = {"play": "status_play", "steal": "status_steal", "open": "status_open"}.get(phase, "status_over")
    status = label(labels, key, name=mover, seat=(to_move + 1) if isinstance(to_move, int) else "")
    x = M
    if phase != "over" and isinstance(to_move, int):
        marker(im, x, y + 16, 16)
        x += 22
    extra, fx = "", f18
    if phase == "play" and (turn["max_stacks"] > 1 or played):
        extra, fx = rb.shrink(label(labels, "turn_stacks", played=len(played), max=turn["max_stacks"]), 18, 340,
                              MIN_TEXT)
    ew = fx.getlength(extra) if extra else 0
    rb.text_fit(d, (x, y + 16), status, 20, GOLD if phase != "over" else TEXT,
                W - M - x - ew - 16, anchor="lm", smallest=MIN_TEXT)
    if extra:
        rb.text(d, (W - M, y + 16), extra, fx, ORANGE if played else MUTED, anchor="rm")
    y += 32 + 4

    # a new round, at a glance; then the last move in words
    if new_round is not None:
        banner(im, d, M, y, W - 2 * M, 32, label(labels, "round_start", round=new_round.get("round", ""),
                                                  name=name_of(nm, new_round.get("start"))), 20, MIN_TEXT)
        y += banner_h
    if cap_lines:
        for k, line in enumerate(cap_lines):
            lx = M
            if k == 0 and who_txt:
                rb.text(d, (lx, y + 12), who_txt, name_f, ORANGE, anchor="lm", stroke=1)
                lx += who_w
            rb.text(d, (lx, y + 12), line, f18, TEXT, anchor="lm")
            y += 26
        y += 8
    hline(d, y, M, W - M)
    y += 6

    # stacks grid: the last move's stacks framed and tagged with who played there
    if not n:
        d.rounded_rectangle((M, y + 6, W - M, y + grid_h - 6), 10, outline=LINE, width=2)
        rb.text_fit(d, (W / 2, y + grid_h / 2), label(labels, "no_stacks"), 22, MUTED, W - 2 * M - 20,
                    anchor="mm", smallest=MIN_TEXT)
    else:
        x0 = (W - cols * cell) / 2 + (cell - cw) / 2
        ft = rb.font(MIN_TEXT)
        played_txt = rb.fit(label(labels, "played"), ft, cell - 2)
        new_txt = rb.fit(label(labels, "new_stack"), ft, cell - 2)
        for i, st in enumerate(stacks):
            r, c = divmod(i, cols)
            cx = x0 + c * cell
            cy: float = y + r * row_h + 26
            sid = st["id"]
            is_played = sid in played
            mark = marks.get(sid)
            hot = is_played or mark is not None
            badge = _badge(str(st["label"]), cell - 8, hot)
            im.paste(badge, (int(cx + cw / 2 - badge.width / 2), int(cy - 26)))
            outline = ORANGE if hot else (BLUE if sid in fresh else None)
            if outline:
                d.rounded_rectangle((cx - 4, cy - 4, cx + cw + 3, cy + ch + 3), 9, outline=outline, width=4)
            im.paste(nimmt_card(int(st["top"]), cw, ch, FELT), (int(cx), int(cy)))
            tag = (rb.fit(nm[mark], ft, cell - 2) if mark is not None else played_txt if is_played
                   else new_txt if sid in fresh else "")
            if tag:
                rb.text(d, (cx + cw / 2, cy + ch + 6), tag, ft, ORANGE if hot else BLUE, anchor="ma")
    y += grid_h + 4
    hline(d, y, M, W - M)
    y += 8

    # one row per player: seat, name, cards in hand, bull cards, score
    bulls = view["bulls"]
    counts = view["hand_counts"]
    scores = view["scores"]
    victims = set(view["victims"]) if phase == "steal" else set()
    winners: set[int] = set()
    if phase == "over" and scores:
        best = min(scores)
        winners = {s for s, v in enumerate(scores) if v == best}
    fh = rb.font(MIN_TEXT)
    you = label(labels, "you")
    hx, bux, scx = W - M - 250, W - M - 150, W - M - 12
    rb.text(d, (hx + 4, y + 9), rb.fit(label(labels, "hand"), fh, 96), fh, MUTED, anchor="lm")
    rb.text(d, (bux + 4, y + 9), rb.fit(label(labels, "bulls"), fh, 96), fh, MUTED, anchor="lm")
    rb.text(d, (scx, y + 9), rb.fit(label(labels, "score"), fh, 80), fh, MUTED, anchor="rm")
    y += 24
    f20b = rb.font(20)
    f24 = rb.font(24)
    mover_seat = int(last[0]["seat"]) if last and isinstance(last[0].get("seat"), int) else None
    for s in range(seats):
        py = y + s * (prow_h + 6)
        cy = py + prow_h / 2
        active = s == to_move and phase != "over"
        fill = PANEL_HI if active else PANEL
        outline = GOLD if active else (RED if s in victims else ORANGE if s == mover_seat else None)
        d.rounded_rectangle((M, py, W - M, py + prow_h), 8, fill=fill, outline=outline,
                            width=2 if outline else 0)
        if active:
            marker(im, M + 6, cy, 14)
        elif s in winners:
            rb.stamp(im, rb.star_mask(16), (M + 5, cy - 9), GOLD)
        seat_badge(im, d, M + 38, cy, s, GOLD if active else LINE, (30, 30, 30) if active else TEXT)
        nx = M + 58
        name_w = hx - nx - 12
        own = viewer == s
        suffix = rb.fit(" " + you, fh, name_w / 2) if own else ""
        sw = fh.getlength(suffix) if suffix else 0
        drawn = rb.text_fit(d, (nx, cy), nm[s], 20, GOLD if active else TEXT, name_w - sw, anchor="lm",
                            stroke=1 if own else 0, smallest=MIN_TEXT)
        if suffix:
            rb.text(d, (nx + drawn + 2, cy + 1), suffix, fh, MUTED, anchor="lm")
        im.paste(rc.card_back(18, 25, fill), (int(hx), int(cy - 12)))
        rb.text(d, (hx + 24, cy), str(counts[s]) if s < len(counts) else "", f20b, TEXT, anchor="lm")
        bv = bulls[s] if s < len(bulls) else 0
        im.paste(rc.bull_icon(18, 25, fill), (int(bux), int(cy - 12)))
        rb.text(d, (bux + 24, cy), str(bv), f20b, RED if s in victims else (TEXT if bv else MUTED), anchor="lm")
        rb.text(d, (scx, cy), str(scores[s]) if s < len(scores) else "", f24, GOLD if s in winners else TEXT,
                anchor="rm", stroke=1)
    return rb.to_png(im)


# --------------------------------------------------------------------------
# 11 nimmt! hand

HAND_ROW = 8  # cards per row of the hand picture
HAND_W = 640  # its width, whatever the hand
HAND_TEXT = legible(HAND_W)

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

    # (a hand of more than five rows takes smaller cards, ten a row, in the same width)
    cw, ch, gap, per_row = (64, 90, 8, HAND_ROW) if len(hand) <= 5 * HAND_ROW else (48, 68, 8, 10)
    cell = cw + gap
    W = HAND_W  # the same width whatever the hand: the panel does not jump from turn to turn
    ft = rb.font(HAND_TEXT)
    on = rb.clean(label(labels, "fits"))
    tags = {c: _fit_lines(on, [lab for _, lab in sorted(v)], ft, cell - 2) for c, v in fits.items()}
    lift = 8
    tag_h = 20 * max((len(t) for t in tags.values()), default=0) + (4 if tags else 0)
    row_h = lift + ch + tag_h + 10
    rows = (len(hand) + per_row - 1) // per_row
    head_h = 40
    H = M + head_h + max(1, rows) * row_h + M - 6
    im = Image.new("RGB", (W, H), FELT)
    d = ImageDraw.Draw(im)
    rb.text_fit(d, (M, M + 14), label(labels, "hand_title", count=len(hand)), 24, TEXT, W - 2 * M,
                anchor="lm", stroke=1, smallest=HAND_TEXT)
    y = M + head_h
    if not hand:
        rb.text_fit(d, (W / 2, y + row_h / 2), label(labels, "hand_empty"), 20, MUTED, W - 2 * M, anchor="mm",
                    smallest=HAND_TEXT)
        return rb.to_png(im)
    x0 = (W - (per_row * cell - gap)) / 2  # (a short hand starts where a full row does)
    for i, c in enumerate(hand):
        r, col = divmod(i, per_row)
        x = x0 + col * cell
        top = y + r * row_h
        if c in tags:
            d.rounded_rectangle((x - 3, top - 3, x + cw + 2, top + ch + 2), 10, outline=GOLD, width=3)
            im.paste(nimmt_card(c, cw, ch, FELT), (int(x), int(top)))
            for k, line in enumerate(tags[c]):
                rb.text(d, (x + cw / 2, top + ch + 6 + 20 * k), line, ft, GOLD, anchor="ma")
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
