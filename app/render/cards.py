"""Card sprites for the renderers: number cards with ox heads, French
playing cards, card backs and empty slots.

Sprites are small RGB images drawn on a known background colour (so rounded
corners need no alpha) and cached: after the first few renders a table is
mostly ``paste`` calls.
"""
from __future__ import annotations

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render.base import Color

# --------------------------------------------------------------------------
# Number cards with ox heads


#: heads -> (card face, ink for number and ox heads, frame)
HEAD_COLORS: dict[int, tuple[Color, Color, Color]] = {
    1: ((246, 243, 234), (38, 38, 44), (30, 30, 34)),
    2: ((133, 196, 240), (16, 44, 88), (20, 40, 70)),
    3: ((255, 212, 84), (74, 50, 0), (70, 50, 10)),
    5: ((226, 68, 80), (255, 255, 255), (90, 16, 24)),
    7: ((142, 84, 214), (255, 255, 255), (50, 20, 90)),
}


@rb.cached(maxsize=512)
def number_card(card: int, heads: int, w: int, h: int, bg: Color, dim: bool = False) -> Image.Image:
    """A number card ``w`` x ``h``: big number, ``heads`` ox heads on top, colour by heads."""
    hd = heads
    face, ink, frame = HEAD_COLORS.get(hd, HEAD_COLORS[1])
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    r = max(3, w // 9)
    d.rounded_rectangle((0, 0, w - 1, h - 1), r, fill=face, outline=frame, width=2)
    # a thin inner frame, like the printed border of the real cards
    inset = max(3, w // 14)
    light = tuple(min(255, c + 28) for c in face) if hd != 1 else (255, 255, 255)
    d.rounded_rectangle((inset, inset, w - 1 - inset, h - 1 - inset), max(2, r - 2),
                        outline=light if hd != 1 else (205, 200, 188), width=1)
    # ox heads: rows of at most 4 (5 as 3 + 2, 7 as 4 + 3), big enough to read
    rows = {5: [3, 2], 7: [4, 3]}.get(hd, [hd])
    s = max(6, min(round(w * 0.2), (w - 2 * inset - 4) // max(rows)))
    y = inset + 2
    mask = rb.ox_mask(s)
    for cnt in rows:
        x0 = (w - cnt * s) / 2
        for i in range(cnt):
            rb.stamp(im, mask, (x0 + i * s, y), ink)
        y += s + 1
    # the number
    size = int(h * (0.40 if card < 100 else 0.32))
    f = rb.font(size)
    ty = max(y + (h - y - inset) / 2 + 1, h * 0.56)
    rb.text(d, (w / 2, ty), str(card), f, ink, anchor="mm", stroke=1 if size >= 18 else 0)
    if dim:
        im = Image.blend(im, Image.new("RGB", (w, h), bg), 0.55)
    return im


@rb.cached(maxsize=64)
def bull_icon(w: int, h: int, bg: Color) -> Image.Image:
    """A small bull card (for bull counts)."""
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((0, 0, w - 1, h - 1), max(2, w // 6), fill=(150, 40, 40), outline=(60, 10, 10))
    s = max(5, w - 4)
    rb.stamp(im, rb.ox_mask(s), ((w - s) / 2, (h - s) / 2), (255, 236, 200))
    return im


# --------------------------------------------------------------------------
# Playing cards

RED: Color = (204, 30, 48)
BLACK: Color = (24, 24, 28)
SUITS = "SHDC"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def parse_card(text: str) -> tuple[str, str]:
    """``"10H"`` -> ``("10", "H")``; unknown text gives an empty suit.

    >>> parse_card("10H"), parse_card("JS"), parse_card("??")
    (('10', 'H'), ('J', 'S'), ('??', ''))
    """
    text = str(text).strip().upper()
    if len(text) >= 2 and text[-1] in SUITS:
        return text[:-1], text[-1]
    return text, ""


@rb.cached(maxsize=512)
def playing_card(card: str, w: int, h: int, bg: Color) -> Image.Image:
    """A face-up card: rank, suit symbol, corner indices; Jacks (wild) in gold."""
    rank, suit = parse_card(card)
    jack = rank == "J"
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    r = max(3, w // 9)
    face = (255, 239, 178) if jack else (252, 252, 248)
    frame = (196, 142, 16) if jack else (70, 70, 76)
    d.rounded_rectangle((0, 0, w - 1, h - 1), r, fill=face, outline=frame, width=3 if jack else 1)
    ink = RED if suit in "HD" and suit else BLACK
    # rank (big, upper half) and suit (big, lower half)
    size = int(h * 0.36) if len(rank) < 2 else int(h * 0.32)
    f = rb.font(size)
    rb.text(d, (w / 2, h * 0.30), rb.fit(rank, f, w - 6), f, ink, anchor="mm", stroke=1)
    s = int(min(w * 0.52, h * 0.38))
    if suit:
        rb.stamp(im, rb.suit_mask(suit, s), ((w - s) / 2, h * 0.53), ink)
    if jack:  # wild: a star in the corner
        st = max(7, w // 4)
        rb.stamp(im, rb.star_mask(st), (2, 2), (196, 142, 16))
    return im


@rb.cached(maxsize=64)
def card_back(w: int, h: int, bg: Color) -> Image.Image:
    """A face-down card: blue, diagonal pattern, light inner frame."""
    im = Image.new("RGB", (w, h), bg)
    d = ImageDraw.Draw(im)
    r = max(3, w // 9)
    d.rounded_rectangle((0, 0, w - 1, h - 1), r, fill=(38, 78, 150), outline=(16, 30, 64), width=1)
    inset = max(3, w // 10)
    pat = Image.new("RGB", (w, h), (38, 78, 150))
    pd = ImageDraw.Draw(pat)
    step = max(4, w // 7)
    for k in range(-h, w + h, step):
        pd.line((k, 0, k + h, h), fill=(60, 108, 190), width=1)
        pd.line((k + h, 0, k, h), fill=(60, 108, 190), width=1)
    m = Image.new("L", (w, h), 0)
    ImageDraw.Draw(m).rounded_rectangle((inset, inset, w - 1 - inset, h - 1 - inset), max(2, r - 2), fill=255)
    im.paste(pat, (0, 0), m)
    d.rounded_rectangle((inset, inset, w - 1 - inset, h - 1 - inset), max(2, r - 2), outline=(176, 200, 240), width=1)
    return im


@rb.cached(maxsize=64)
def empty_slot(w: int, h: int, bg: Color, fill: Color, line: Color) -> Image.Image:
    """A place where no card lies (an empty pile, a slot beyond N)."""
    im = Image.new("RGB", (w, h), bg)
    ImageDraw.Draw(im).rounded_rectangle((0, 0, w - 1, h - 1), max(3, w // 9), fill=fill, outline=line, width=1)
    return im
