"""Drawing primitives shared by the image renderers (``app/render.py``).

Fonts, glyph-safe text, label formatting, icons (ox head, suits, star) and
card sprites.  Everything here is pure Pillow: no discord, no game objects.

Fonts: ``PIL.ImageFont.load_default(size=...)`` (the scalable font Pillow
embeds when FreeType is available) with a fallback to the bitmap default, so
the renderer never depends on system fonts.  The embedded font only covers
ASCII and a few symbols, so the bot ships DejaVu Sans (``data/fonts``, free
licence beside it) and uses it when present: accents of Spanish and German,
Greek and Cyrillic names are drawn as written.  :func:`clean` folds what the
font in use lacks (``é`` -> ``e``, ``ß`` -> ``ss``) and replaces what cannot
be folded by ``?``.  :func:`set_font` picks another font.
"""
from __future__ import annotations

import io
import struct
import unicodedata
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from PIL import Image, ImageDraw, ImageFont

Color = tuple[int, int, int]

# --------------------------------------------------------------------------
# Fonts

_SHIPPED_FONT = Path(__file__).resolve().parent.parent / "data" / "fonts" / "DejaVuSans.ttf"
SHIPPED_FONT: str | None = str(_SHIPPED_FONT) if _SHIPPED_FONT.is_file() else None
_FONT_PATH: str | None = SHIPPED_FONT
_CACHES: list[Any] = []


def cached(maxsize: int) -> Any:
    """``lru_cache`` that :func:`clear_caches` knows about."""
    def deco(fn: Any) -> Any:
        wrapped = lru_cache(maxsize=maxsize)(fn)
        _CACHES.append(wrapped)
        return wrapped
    return deco


def clear_caches() -> None:
    """Forget cached fonts, glyph coverage and sprites."""
    for c in _CACHES:
        c.cache_clear()


def set_font(path: str | None) -> None:
    """Use the TrueType/OpenType font at ``path`` (``None``: Pillow's default).

    Call once at start-up, e.g. with a font shipped with the bot that covers
    more scripts than Pillow's embedded one.  An unreadable font falls back to
    the default.
    """
    global _FONT_PATH
    _FONT_PATH = path
    clear_caches()


@cached(maxsize=64)
def font(size: int) -> Any:
    """A font of roughly ``size`` pixels, cached per size."""
    if _FONT_PATH:
        try:
            # Basic layout: no shaping library in the way (raqm rejects some inputs).
            return ImageFont.truetype(_FONT_PATH, size, layout_engine=ImageFont.Layout.BASIC)
        except OSError:
            pass
    try:
        return ImageFont.load_default(size=size)
    except Exception:  # no FreeType: bitmap font, one size only
        return ImageFont.load_default()


def _is_ft(f: Any) -> bool:
    return isinstance(f, ImageFont.FreeTypeFont)


def _glyph(f: Any, ch: str) -> tuple[Any, bytes]:
    mask = f.getmask(ch)
    return mask.size, bytes(mask)


@cached(maxsize=4096)
def _covered(ch: str) -> bool:
    """Whether the current font has a real glyph for ``ch``."""
    f = font(16)
    if not _is_ft(f):
        return " " <= ch <= "~"
    if ch == " ":
        return True
    return _glyph(f, ch) != _notdef()


@cached(maxsize=1)
def _notdef() -> tuple[Any, bytes]:
    return _glyph(font(16), "\ue000")  # private use: never in a text font


_FOLD = {
    "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
    "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d",
    "þ": "th", "Þ": "Th", "ı": "i", "–": "-", "—": "-", "−": "-", "×": "x",
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "„": '"', "‚": "'",
}
# Cyrillic and Greek letters spelled in Latin (names stay readable, not "?")
_CYR = ("абвгдеёжзийклмнопрстуфхцчшщъыьэюяєіїґўђјљњћџ",
        "a b v g d e e zh z i j k l m n o p r s t u f h c ch sh shch  y  e yu ya ye i yi g u dj j lj nj c dz")
_GRK = ("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώςϊϋΐΰ",
        "a v g d e z i th i k l m n x o p r s t y f ch ps o a e i i o y o s i y i y")


def _translit_table() -> dict[str, str]:
    out: dict[str, str] = {}
    for letters, latin in (_CYR, _GRK):
        for ch, lat in zip(letters, latin.split(" ")):
            out[ch] = lat
            up = ch.upper()
            if up != ch and len(up) == 1:
                out[up] = lat[:1].upper() + lat[1:]
    return out


_FOLD.update({k: v for k, v in _translit_table().items() if k not in _FOLD})


@cached(maxsize=2048)
def clean(text: str) -> str:
    """``text`` reduced to characters the font can draw.

    Accents are dropped rather than drawn as boxes; what cannot be folded
    becomes ``?`` (one per run).
    """
    out: list[str] = []
    for ch in str(text):
        cat = unicodedata.category(ch)
        if ch in "\r\n\t" or cat in ("Zl", "Zp", "Zs"):
            ch, cat = " ", "Zs"
        if cat in ("Cf", "Cc", "Cs", "Co") or 0xFE00 <= ord(ch) <= 0xFE0F:
            continue  # controls, joiners, variation selectors: nothing to draw
        if _covered(ch):
            out.append(ch)
            continue
        if cat in ("Mn", "Me"):
            continue  # combining marks the font lacks
        rep = _FOLD.get(ch)
        if rep == "":  # a letter with no sound of its own (Cyrillic hard sign)
            continue
        if rep is None:
            rep = "".join(c for c in unicodedata.normalize("NFKD", ch)
                          if not unicodedata.combining(c))
        if rep and all(_covered(c) for c in rep):
            out.append(rep)
        elif not out or out[-1] != "?":
            out.append("?")
    return "".join(out)


def ellipsis() -> str:
    return "…" if _covered("…") else "..."


def width(text: str, f: Any) -> float:
    return f.getlength(text)


def fit(text: str, f: Any, max_w: float) -> str:
    """``text`` cleaned and cut with an ellipsis to fit ``max_w`` pixels."""
    text = clean(text)
    if f.getlength(text) <= max_w:
        return text
    ell = ellipsis()
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if f.getlength(text[:mid].rstrip() + ell) <= max_w:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + ell if lo else (ell if f.getlength(ell) <= max_w else "")


def text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], s: str, f: Any,
         fill: Color, anchor: str = "la", stroke: int = 0) -> None:
    """Draw already-cleaned ``s``; ``anchor`` as in Pillow (l/m/r + a/m/s/d)."""
    if not s:
        return
    if _is_ft(f):
        draw.text(xy, s, font=f, fill=fill, anchor=anchor,
                  stroke_width=stroke, stroke_fill=fill if stroke else None)
        return
    # bitmap fallback font: no anchors, place by bounding box
    x, y = xy
    l, t, r, b = draw.textbbox((0, 0), s, font=f)
    if anchor[0] == "m":
        x -= (r - l) / 2
    elif anchor[0] == "r":
        x -= r - l
    if anchor[1] == "m":
        y -= (b + t) / 2
    elif anchor[1] in ("s", "d"):
        y -= b
    draw.text((x, y), s, font=f, fill=fill)


def shrink(s: str, size: int, max_w: float, min_size: int = 9) -> tuple[str, Any]:
    """``s`` cleaned, in the largest font from ``size`` down to ``min_size``
    that fits ``max_w``; cut with an ellipsis only if even the smallest is too
    wide (long German captions stay whole)."""
    s = clean(s)
    for px in range(size, min_size - 1, -1):
        f = font(px)
        if f.getlength(s) <= max_w:
            return s, f
    f = font(min_size)
    return fit(s, f, max_w), f


def text_fit(draw: ImageDraw.ImageDraw, xy: tuple[float, float], s: str, size: int,
             fill: Color, max_w: float, anchor: str = "la", stroke: int = 0) -> float:
    """Clean, truncate and draw ``s``; returns the drawn width."""
    f = font(size)
    s = fit(s, f, max_w)
    text(draw, xy, s, f, fill, anchor, stroke)
    return f.getlength(s)


# --------------------------------------------------------------------------
# Labels


class _Safe(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def label(labels: Mapping[str, str], key: str, **params: Any) -> str:
    """``labels[key]`` with its ``{placeholders}`` filled; never raises.

    A missing key shows the key itself so the gap is visible, not fatal.
    """
    value = labels.get(key)
    if value is None:
        value = key
    value = str(value)
    if "{" not in value:
        return value
    try:
        return value.format_map(_Safe(params))
    except (ValueError, IndexError, AttributeError, TypeError, KeyError):
        return value


# --------------------------------------------------------------------------
# Masks (anti-aliased by drawing 4x and shrinking)

_SS = 4


def _shrink(big: Image.Image, w: int, h: int) -> Image.Image:
    return big.resize((max(1, w), max(1, h)), Image.Resampling.BOX)


@cached(maxsize=64)
def ox_mask(s: int) -> Image.Image:
    """An ox head, ``s`` x ``s`` px, as an "L" mask."""
    n = 40 * _SS
    k = n / 40
    im = Image.new("L", (n, n), 0)
    d = ImageDraw.Draw(im)
    P = lambda pts: [(x * k, y * k) for x, y in pts]  # noqa: E731
    # horns
    d.polygon(P([(11, 14), (3, 11), (0, 1), (6, 6), (14, 9)]), fill=255)
    d.polygon(P([(29, 14), (37, 11), (40, 1), (34, 6), (26, 9)]), fill=255)
    # ears
    d.polygon(P([(10, 15), (2, 17), (4, 20), (11, 20)]), fill=255)
    d.polygon(P([(30, 15), (38, 17), (36, 20), (29, 20)]), fill=255)
    # head and muzzle
    d.polygon(P([(11, 9), (29, 9), (30, 20), (26, 31), (14, 31), (10, 20)]), fill=255)
    d.ellipse(P([(12, 26), (28, 39)]), fill=255)
    # eyes and nostrils cut out
    d.ellipse(P([(14, 15), (18, 19)]), fill=0)
    d.ellipse(P([(22, 15), (26, 19)]), fill=0)
    d.ellipse(P([(15.5, 31), (18.5, 34)]), fill=0)
    d.ellipse(P([(21.5, 31), (24.5, 34)]), fill=0)
    return _shrink(im, s, s)


@cached(maxsize=64)
def suit_mask(suit: str, s: int) -> Image.Image:
    """A card suit (S, H, D, C) ``s`` x ``s`` px as an "L" mask."""
    n = 40 * _SS
    k = n / 40
    im = Image.new("L", (n, n), 0)
    d = ImageDraw.Draw(im)
    P = lambda pts: [(x * k, y * k) for x, y in pts]  # noqa: E731
    if suit == "H":
        d.ellipse(P([(2, 4), (21, 23)]), fill=255)
        d.ellipse(P([(19, 4), (38, 23)]), fill=255)
        d.polygon(P([(3.2, 18), (36.8, 18), (20, 38)]), fill=255)
    elif suit == "D":
        d.polygon(P([(20, 1), (35, 20), (20, 39), (5, 20)]), fill=255)
    elif suit == "S":
        d.polygon(P([(3.2, 20), (36.8, 20), (20, 1)]), fill=255)
        d.ellipse(P([(2, 13), (21, 31)]), fill=255)
        d.ellipse(P([(19, 13), (38, 31)]), fill=255)
        d.polygon(P([(20, 24), (27, 39), (13, 39)]), fill=255)
    elif suit == "C":
        d.ellipse(P([(11, 1), (29, 19)]), fill=255)
        d.ellipse(P([(1, 14), (19, 32)]), fill=255)
        d.ellipse(P([(21, 14), (39, 32)]), fill=255)
        d.rectangle(P([(15, 12), (25, 26)]), fill=255)
        d.polygon(P([(20, 20), (27, 39), (13, 39)]), fill=255)
    return _shrink(im, s, s)


@cached(maxsize=32)
def star_mask(s: int) -> Image.Image:
    import math
    n = 40 * _SS
    im = Image.new("L", (n, n), 0)
    pts = []
    for i in range(10):
        r = n * (0.5 if i % 2 == 0 else 0.21)
        a = -math.pi / 2 + i * math.pi / 5
        pts.append((n / 2 + r * math.cos(a), n / 2 + 2 * _SS + r * math.sin(a)))
    ImageDraw.Draw(im).polygon(pts, fill=255)
    return _shrink(im, s, s)


@cached(maxsize=32)
def triangle_mask(s: int) -> Image.Image:
    """A right-pointing triangle (the "to move" marker)."""
    n = 40 * _SS
    im = Image.new("L", (n, n), 0)
    ImageDraw.Draw(im).polygon([(6 * _SS, 3 * _SS), (38 * _SS, 20 * _SS), (6 * _SS, 37 * _SS)], fill=255)
    return _shrink(im, s, s)


def stamp(im: Image.Image, mask: Image.Image, xy: tuple[float, float], color: Color) -> None:
    """Paint ``color`` through ``mask`` with its top-left at ``xy``."""
    im.paste(color, (int(round(xy[0])), int(round(xy[1]))), mask)


# --------------------------------------------------------------------------
# Output


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def to_png(im: Image.Image) -> bytes:
    """Encode an RGB image as PNG, fast.

    Flat-colour images compress as well without PNG's per-row filters, and
    skipping Pillow's adaptive filter choice makes encoding about 3x faster
    (the largest cost of a render).  Other modes go through Pillow.
    """
    if im.mode != "RGB":
        buf = io.BytesIO()
        im.save(buf, "PNG", optimize=False, compress_level=1)
        return buf.getvalue()
    w, h = im.size
    # each row prefixed by filter type 0 (None): shift the bytes one column
    # right in a one-byte-per-sample image, all in C
    flat = Image.frombytes("L", (3 * w, h), im.tobytes())
    padded = Image.new("L", (3 * w + 1, h), 0)
    padded.paste(flat, (1, 0))
    rows = padded.tobytes()
    return b"".join((
        b"\x89PNG\r\n\x1a\n",
        _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)),
        _chunk(b"IDAT", zlib.compress(rows, 1)),
        _chunk(b"IEND", b""),
    ))
