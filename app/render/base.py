"""Drawing primitives shared by the image renderers (``app/render.py``).

Fonts, glyph-safe text, label formatting, icons (ox head, suits, star) and
card sprites.  Everything here is pure Pillow: no discord, no game objects.

Fonts: ``PIL.ImageFont.load_default(size=...)`` (the scalable font Pillow
embeds when FreeType is available) with a fallback to the bitmap default, so
the renderer never depends on system fonts.  The embedded font only covers
ASCII and a few symbols, so the bot ships DejaVu Sans (``data/fonts``, free
licence beside it) and uses it when present: accents of Spanish and German,
Greek and Cyrillic names are drawn as written.  Behind it comes a fallback
chain (:data:`FALLBACK_FONTS`: Noto Sans CJK for Chinese, Japanese and Korean,
Noto Emoji), and each character is drawn with the first font of the chain that
has it (:class:`ChainFont`).  :func:`clean` folds what no font has (``é`` ->
``e``, ``ß`` -> ``ss``) and replaces what cannot be folded by ``?``.
:func:`set_font` picks other fonts.
"""
from __future__ import annotations

import contextlib
import io
import math
import struct
import unicodedata
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from isal import isal_zlib
from PIL import Image, ImageDraw, ImageFont

Color = tuple[int, int, int]

# --------------------------------------------------------------------------
# Fonts

_FONTS = Path(__file__).resolve().parents[2] / "data" / "fonts"
_SHIPPED_FONT = _FONTS / "DejaVuSans.ttf"
SHIPPED_FONT: str | None = str(_SHIPPED_FONT) if _SHIPPED_FONT.is_file() else None
# Tried in order for characters the main font lacks (OFL, licence beside them).
FALLBACK_FONTS: tuple[str, ...] = tuple(
    str(_FONTS / name) for name in ("NotoSansCJKjp-Regular-subset.otf", "NotoEmoji-Regular.ttf")
    if (_FONTS / name).is_file())
_FONT_PATH: str | None = SHIPPED_FONT
_FALLBACK_PATHS: tuple[str, ...] = FALLBACK_FONTS
_CACHES: list[Any] = []
#: whether text is drawn and measured through the caches of this module (the
#: glyph masks of :func:`text`, the widths of :func:`fit`, :func:`shrink` and
#: ``ChainFont.getlength``); off, every call goes to Pillow as it did before
#: them.  Only tests turn it off (:func:`set_text_caches`), to compare.
_TEXT_CACHES = True
#: while :func:`recording` runs: the pixel size and text of every text drawn
_DRAWN: list[tuple[int, str]] | None = None


#: WCAG 2 contrast a text needs against its background (level AA, normal text)
READABLE = 4.5


def luminance(colour: Color) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0 black .. 1 white)."""
    def channel(c: int) -> float:
        v = c / 255
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: Color, b: Color) -> float:
    """WCAG 2 contrast ratio of two colours (1 .. 21).

    >>> round(contrast((255, 255, 255), (0, 0, 0)), 1)
    21.0
    """
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def readable(fg: Color, bg: Color, ratio: float = READABLE) -> Color:
    """*fg*, lightened towards white (or darkened towards black on a light
    *bg*) just enough to reach *ratio* against *bg*: a game's accent colour
    stays recognisable as a text colour and stays legible.

    >>> contrast(readable((196, 38, 46), (45, 51, 63)), (45, 51, 63)) >= 4.5
    True
    """
    target: Color = (255, 255, 255) if luminance(bg) < 0.18 else (0, 0, 0)
    for step in range(21):
        r, g, b = (round(c + (t - c) * step / 20) for c, t in zip(fg, target))
        if contrast((r, g, b), bg) >= ratio:
            return (r, g, b)
    return target


def cached(maxsize: int) -> Any:
    """``lru_cache`` that :func:`clear_caches` knows about.

    ``lru_cache`` keeps its own table consistent under threads; the values
    cached here are never changed after they are made (sprites are pasted
    from, masks drawn through), so the painter thread and the worker process
    (which has caches of its own) can share them."""
    def deco(fn: Any) -> Any:
        wrapped = lru_cache(maxsize=maxsize)(fn)
        _CACHES.append(wrapped)
        return wrapped
    return deco


def clear_caches() -> None:
    """Forget cached fonts, glyph coverage, glyph masks, widths and sprites."""
    for c in _CACHES:
        c.cache_clear()


def set_text_caches(on: bool) -> None:
    """Draw and measure text through the caches (``True``, the default) or
    straight through Pillow; forgets every cache (sprites hold drawn text)."""
    global _TEXT_CACHES
    _TEXT_CACHES = bool(on)
    clear_caches()


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[int, str]]]:
    """Within it, every text drawn is listed (font size in pixels, text): what
    a picture's smallest text is (tests hold it legible on a phone).  The
    caches are cleared first, so card sprites draw their numbers again."""
    global _DRAWN
    clear_caches()
    drawn: list[tuple[int, str]] = []
    _DRAWN = drawn
    try:
        yield drawn
    finally:
        _DRAWN = None
        clear_caches()


def set_font(path: str | None, fallbacks: tuple[str, ...] | None = None) -> None:
    """Use the TrueType/OpenType font at ``path`` (``None``: Pillow's default),
    then ``fallbacks`` for the characters it lacks (default: the shipped chain
    behind a font file, none behind Pillow's default).

    Call once at start-up, e.g. with a font shipped with the bot that covers
    more scripts than Pillow's embedded one.  An unreadable font falls back to
    the default.
    """
    global _FONT_PATH, _FALLBACK_PATHS
    _FONT_PATH = path
    _FALLBACK_PATHS = (FALLBACK_FONTS if path else ()) if fallbacks is None else tuple(fallbacks)
    clear_caches()


def fonts() -> tuple[str | None, tuple[str, ...]]:
    """The font and the fallbacks :func:`set_font` chose (what a drawing process sets again)."""
    return _FONT_PATH, _FALLBACK_PATHS


def _truetype(path: str, size: int) -> Any:
    # Basic layout: no shaping library in the way (raqm rejects some inputs).
    return ImageFont.truetype(path, size, layout_engine=ImageFont.Layout.BASIC)


@cached(maxsize=64)
def _primary(size: int) -> Any:
    if _FONT_PATH:
        try:
            return _truetype(_FONT_PATH, size)
        except OSError:
            pass
    try:
        return ImageFont.load_default(size=size)
    except Exception:  # no FreeType: bitmap font, one size only
        return ImageFont.load_default()


@cached(maxsize=64)
def _chain(size: int) -> tuple[Any, ...]:
    """The main font and the fallbacks that load, at one size."""
    fonts = [_primary(size)]
    if _is_ft(fonts[0]):
        for path in _FALLBACK_PATHS:
            try:
                fonts.append(_truetype(path, size))
            except OSError:
                pass
    return tuple(fonts)


class ChainFont:
    """A main font with fallbacks: each character in the first font that has it.

    Quacks like the ``FreeTypeFont`` the renderers use (``getlength``, ``size``,
    ``getmetrics``); :func:`text` draws it run by run on one baseline."""

    def __init__(self, fonts: tuple[Any, ...]) -> None:
        self.fonts = fonts
        self.main = fonts[0]
        self.size = self.main.size

    def runs(self, s: str) -> list[tuple[Any, str]]:
        """``s`` cut into runs of one font each."""
        return [(self.fonts[index], part) for index, part in _runs(s)]

    def getlength(self, s: str, *args: Any, **kwargs: Any) -> float:
        if _TEXT_CACHES and not args and not kwargs:
            return _length(self, s)
        return self._getlength(s, *args, **kwargs)

    def _getlength(self, s: str, *args: Any, **kwargs: Any) -> float:
        runs = _runs(s)
        if len(runs) == 1:
            return self.fonts[runs[0][0]].getlength(s, *args, **kwargs)
        return sum(self.fonts[index].getlength(part, *args, **kwargs) for index, part in runs)

    def getmetrics(self) -> tuple[int, int]:
        return self.main.getmetrics()

    def getbbox(self, s: str, *args: Any, **kwargs: Any) -> tuple[float, float, float, float]:
        top, bottom = self.main.getbbox("Ag")[1::2]
        return (0, top, self.getlength(s), bottom)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.main, name)


@cached(maxsize=4096)
def _length(f: ChainFont, s: str) -> float:
    """``f.getlength(s)``, remembered (the same labels, names and numbers are
    measured on every redraw)."""
    return f._getlength(s)


@cached(maxsize=4096)
def _runs(s: str) -> tuple[tuple[int, str], ...]:
    """``s`` cut into runs drawn by one font of the chain each: (font index, text)."""
    out: list[tuple[int, str]] = []
    for ch in s:
        index = _font_index(ch)
        if out and out[-1][0] == index:
            out[-1] = (index, out[-1][1] + ch)
        else:
            out.append((index, ch))
    return tuple(out) or ((0, ""),)


@cached(maxsize=64)
def font(size: int) -> Any:
    """A font of roughly ``size`` pixels (with its fallbacks), cached per size.

    A scalable font always comes as a :class:`ChainFont` (even without
    fallbacks), whose ``getlength`` is cached."""
    fonts = _chain(size)
    return ChainFont(fonts) if isinstance(fonts[0], ImageFont.FreeTypeFont) else fonts[0]


def _is_ft(f: Any) -> bool:
    return isinstance(f, (ImageFont.FreeTypeFont, ChainFont))


def _glyph(f: Any, ch: str) -> tuple[Any, bytes]:
    mask = f.getmask(ch)
    return mask.size, bytes(mask)


@cached(maxsize=8192)
def _font_index(ch: str) -> int:
    """The first font of the chain with a real glyph for ``ch`` (0 when none has)."""
    for index, f in enumerate(_chain(16)):
        if index == 0 and not isinstance(f, ImageFont.FreeTypeFont):
            return 0
        if ch == " " or _glyph(f, ch) != _notdef(index):
            return index
    return 0


@cached(maxsize=4096)
def _covered(ch: str) -> bool:
    """Whether a font of the chain has a real glyph for ``ch``."""
    f = _primary(16)
    if not _is_ft(f):
        return " " <= ch <= "~"
    if ch == " ":
        return True
    index = _font_index(ch)
    return index > 0 or _glyph(f, ch) != _notdef(0)


@cached(maxsize=8)
def _notdef(index: int = 0) -> tuple[Any, bytes]:
    return _glyph(_chain(16)[index], "\ue000")  # private use: never in a text font


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
    if _TEXT_CACHES:
        return _fit(text, f, max_w)
    return _fit.__wrapped__(text, f, max_w)


@cached(maxsize=4096)
def _fit(text: str, f: Any, max_w: float) -> str:
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
    if _DRAWN is not None:
        _DRAWN.append((int(getattr(f, "size", 0)), s))
    if isinstance(f, ChainFont):
        runs = f.runs(s)
        if len(runs) > 1:
            _chain_text(draw, xy, runs, f, fill, anchor, stroke)
            return
        f = runs[0][0]
    if _is_ft(f):
        _ft_text(draw, xy, s, f, fill, anchor, stroke)
        return
    # bitmap fallback font: no anchors, place by bounding box
    x, y = xy
    left, t, r, b = draw.textbbox((0, 0), s, font=f)
    if anchor[0] == "m":
        x -= (r - left) / 2
    elif anchor[0] == "r":
        x -= r - left
    if anchor[1] == "m":
        y -= (b + t) / 2
    elif anchor[1] in ("s", "d"):
        y -= b
    draw.text((x, y), s, font=f, fill=fill)


def _chain_text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], runs: list[tuple[Any, str]],
                f: ChainFont, fill: Color, anchor: str, stroke: int) -> None:
    """Draw runs of several fonts on the main font's baseline, placed as ``anchor`` says."""
    x, y = xy
    total = sum(rf.getlength(part) for rf, part in runs)
    if anchor[0] == "m":
        x -= total / 2
    elif anchor[0] == "r":
        x -= total
    ascent, descent = f.main.getmetrics()
    v = anchor[1] if len(anchor) > 1 else "a"
    baseline = {"a": y + ascent, "t": y + ascent, "m": y + (ascent - descent) / 2,
                "d": y - descent, "b": y - descent}.get(v, y)
    for rf, part in runs:
        _ft_text(draw, (x, baseline), part, rf, fill, "ls", stroke)
        x += rf.getlength(part)


def _ft_text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], s: str, f: Any,
             fill: Color, anchor: str, stroke: int) -> None:
    """One line in one FreeType font: what ``draw.text`` does for it, with the
    glyph mask from :func:`_mask` (cached).

    Pillow's ``ImageDraw.text`` for one line, a ``fill`` ink and a stroke
    of the same ink: the mask of ``getmask2`` at the fractional part of the
    position, drawn at the whole part plus the mask's offset with
    ``draw_bitmap``."""
    if not _TEXT_CACHES or "\n" in s or isinstance(fill, str) or draw.fontmode != "L":
        draw.text(xy, s, font=f, fill=fill, anchor=anchor,
                  stroke_width=stroke, stroke_fill=fill if stroke else None)
        return
    x, y = xy
    mask, (dx, dy) = _mask(f, s, anchor, stroke, math.modf(x)[0], math.modf(y)[0])
    draw.draw.draw_bitmap((int(x) + dx, int(y) + dy), mask, draw.draw.draw_ink(fill))


@cached(maxsize=2048)
def _mask(f: Any, s: str, anchor: str, stroke: int, fx: float, fy: float) -> tuple[Any, tuple[int, int]]:
    """The "L" glyph mask of ``s`` and its offset, as ``ImageDraw.text`` asks
    FreeType for it: the key is everything the mask depends on (the font,
    the text, the anchor, the stroke and the fractional start); the ink is
    not (it only colours embedded-colour glyphs, which we do not draw)."""
    return f.getmask2(s, "L", None, None, None, stroke, anchor, 0, (fx, fy), stroke_filled=True)


def shrink(s: str, size: int, max_w: float, min_size: int = 9) -> tuple[str, Any]:
    """``s`` cleaned, in the largest font from ``size`` down to ``min_size``
    that fits ``max_w``; cut with an ellipsis only if even the smallest is too
    wide (long German captions stay whole)."""
    if _TEXT_CACHES:
        return _shrink_text(s, size, max_w, min_size)
    return _shrink_text.__wrapped__(s, size, max_w, min_size)


@cached(maxsize=1024)
def _shrink_text(s: str, size: int, max_w: float, min_size: int) -> tuple[str, Any]:
    s = clean(s)
    for px in range(size, min_size - 1, -1):
        f = font(px)
        if f.getlength(s) <= max_w:
            return s, f
    f = font(min_size)
    return fit(s, f, max_w), f


def text_fit(draw: ImageDraw.ImageDraw, xy: tuple[float, float], s: str, size: int,
             fill: Color, max_w: float, anchor: str = "la", stroke: int = 0, smallest: int | None = None) -> float:
    """Clean, truncate and draw ``s``; returns the drawn width.  With
    ``smallest``, a text too wide at ``size`` is drawn smaller first (down to
    ``smallest``), and cut only if it does not fit even then."""
    f = font(size)
    if smallest is not None:
        cleaned = clean(s)
        while size > smallest and f.getlength(cleaned) > max_w:
            size -= 1
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
    def P(pts: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x * k, y * k) for x, y in pts]
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
    def P(pts: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(x * k, y * k) for x, y in pts]
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

    Deflate is ISA-L's (``isal``) at level 1: a tenth of zlib's level 1 time
    on these pictures, which zlib's deflate was 65-80% of, for up to 7% more
    bytes.  Each row gets its filter byte (0: None) band by band of about
    64 KiB fed to one deflate stream.  ISA-L may pick other (equally valid)
    matches from one call to the next, so one picture encoded twice can differ
    by a few bytes; what it shows is the same.  The bands come straight from
    Pillow's raw encoder (what ``tobytes`` runs, whole rows per call), so no
    copy of the image's few MiB is made: a big fresh buffer per picture cost
    page faults and copies, a third of a 60-stack table's encoding.
    """
    if im.mode != "RGB":
        buf = io.BytesIO()
        im.save(buf, "PNG", optimize=False, compress_level=1)
        return buf.getvalue()
    w, h = im.size
    stride = 3 * w
    deflate = isal_zlib.compressobj(1)
    parts = [deflate.compress(b"\0" + b"\0".join(rows)) for rows in _bands(im, stride)]
    parts.append(deflate.flush())
    return b"".join((
        b"\x89PNG\r\n\x1a\n",
        _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)),
        _chunk(b"IDAT", b"".join(parts)),
        _chunk(b"IEND", b""),
    ))


_BAND = 1 << 16  # bytes of rows per deflate call (cache-sized)
#: Pillow's encoder factory, as ``Image.tobytes`` calls it (None: not there)
_RAW_ENCODER: Any = getattr(Image, "_getencoder", None)


def _bands(im: Image.Image, stride: int) -> Iterator[list[memoryview]]:
    """The rows of an RGB ``im`` (``stride`` bytes each), a band at a time,
    from the raw encoder that ``Image.tobytes`` runs (whole rows per call)."""
    size = max(1, _BAND // (stride + 1)) * stride
    getencoder = _RAW_ENCODER
    if getencoder is None:  # another Pillow: one copy of the whole image
        raw = memoryview(im.tobytes())
        for start in range(0, len(raw), size):
            yield [raw[i:i + stride] for i in range(start, min(start + size, len(raw)), stride)]
        return
    encoder = getencoder(im.mode, "raw", im.mode)
    try:
        encoder.setimage(im.im, (0, 0, *im.size))
        while True:
            _, status, data = encoder.encode(size)
            if status < 0 or len(data) % stride:
                raise RuntimeError(f"raw encoder: status {status}, {len(data)} bytes for rows of {stride}")
            band = memoryview(data)
            yield [band[i:i + stride] for i in range(0, len(band), stride)]
            if status:
                break
    finally:
        encoder.cleanup()
