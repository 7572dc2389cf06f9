"""What every picture shares: the palette, the margin, seat badges and the
one-render-at-a-time lock (FreeType faces and the sprite caches are shared).

The pictures themselves live beside their game (``cogs/games/<key>/render.py``),
the profile card in :mod:`app.render.profile`; :mod:`app.render.pool` draws them off the event loop.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, ParamSpec, Protocol, Sequence, TypeVar

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render.base import Color

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
BLUE: Color = (110, 190, 255)
SLATE: Color = (33, 37, 46)
SLATE_PANEL: Color = (45, 51, 63)
SLATE_MUTED: Color = (150, 160, 180)

M = 20  # outer margin

_F = TypeVar("_F", bound=Callable[..., bytes])
_P = ParamSpec("_P")
_R = TypeVar("_R")
_LOCK = threading.Lock()
_TABLE_PICTURES: set[tuple[str, str]] = set()  # (module, name) of every table_picture


class Serialised(Protocol[_P, _R]):
    """A renderer that takes the render lock; ``__wrapped__`` draws without it
    (a warm-up, which holds the lock already)."""

    __wrapped__: Callable[_P, _R]

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...


def serialised(fn: Callable[_P, _R]) -> Serialised[_P, _R]:
    """One render at a time: FreeType faces and the sprite caches are shared,
    and the bot calls us from a thread pool."""
    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with _LOCK:
            return fn(*args, **kwargs)
    return wrapper


def names_for(names: Sequence[str], seats: int) -> list[str]:
    """A name for every seat: the given one, else the seat's number (1-based).

    >>> names_for(["ana", " "], 3)
    ['ana', '2', '3']
    """
    out = []
    for s in range(seats):
        name = names[s] if s < len(names) and names[s] is not None else ""
        out.append(str(name) if str(name).strip() else str(s + 1))
    return out


def name_of(names: list[str], seat: Any) -> str:
    """The name of *seat* (a view's seat number), "" for none."""
    return names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else ""


def seat_badge(im: Image.Image, d: ImageDraw.ImageDraw, cx: float, cy: float, seat: int,
                fill: Color, ink: Color, r: int = 13) -> None:
    """The seat's number (1-based) in a disc centred on (*cx*, *cy*)."""
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    rb.text(d, (cx, cy), str(seat + 1), rb.font(16 if seat < 9 else 14), ink, anchor="mm")


#: the display width a phone gives a picture, and the smallest text height
#: (pixels) a player reads there
PHONE_WIDTH, PHONE_TEXT = 360, 8


def legible(width: int) -> int:
    """The smallest font size (pixels) a picture ``width`` pixels wide may use:
    scaled to a phone's width, it is still :data:`PHONE_TEXT` pixels tall.

    >>> legible(720), legible(600)
    (16, 14)
    """
    return -(-PHONE_TEXT * width // PHONE_WIDTH)


def banner(im: Image.Image, d: ImageDraw.ImageDraw, x: float, y: float, w: float, h: float, s: str,
           size: int, smallest: int, fill: Color = GOLD, ink: Color = (30, 24, 8)) -> None:
    """A coloured band with one line of text: a new round or deal, a move to see at a glance."""
    d.rounded_rectangle((x, y, x + w, y + h), min(12, h // 2), fill=fill)
    rb.text_fit(d, (x + w / 2, y + h / 2), s, size, ink, w - 16, anchor="mm", smallest=smallest)


def wrap(parts: Sequence[str], f: Any, max_w: float, first: float = 0, sep: str = " · ") -> list[str]:
    """``parts`` (cleaned) joined by ``sep`` into lines of at most ``max_w``
    pixels (the first line starts ``first`` pixels in); a part too wide alone is cut."""
    lines: list[str] = []
    cur = ""
    for part in (rb.clean(p) for p in parts):
        room = max_w - (first if not lines else 0)
        cand = cur + sep + part if cur else part
        if f.getlength(cand) <= room:
            cur = cand
            continue
        if cur:
            lines.append(cur)
        room = max_w - (first if not lines else 0)
        cur = rb.fit(part, f, room)
    if cur:
        lines.append(cur)
    return lines


def lines_under(text: str, f: Any, max_w: float, most: int = 2) -> list[str]:
    """``text`` (cleaned) word by word in at most ``most`` lines of ``max_w``
    pixels, the last cut only if the rest does not fit: a short label under a
    card ("picks a row", "wählt Reihe") stays whole rather than losing its end."""
    words = wrap(text.split(), f, max_w, sep=" ")
    if len(words) <= most:
        return words
    return [*words[:most - 1], rb.fit(" ".join(words[most - 1:]), f, max_w)]


def marker(im: Image.Image, x: float, cy: float, s: int, color: Color = GOLD) -> None:
    """The triangle that points at the seat to move."""
    rb.stamp(im, rb.triangle_mask(s), (x, cy - s / 2), color)


def hline(d: ImageDraw.ImageDraw, y: float, x0: float, x1: float, color: Color = LINE) -> None:
    """A one-pixel rule from *x0* to *x1*."""
    d.line((x0, y, x1, y), fill=color, width=1)


def table_picture(fn: _F) -> _F:
    """Mark a renderer of a public table picture: :func:`app.render.pool.draw`
    draws those in the worker process (the other core, off this process's
    GIL: about half the bot's CPU on a busy evening).  It must be a module
    level function, found again there by module and name."""
    _TABLE_PICTURES.add((fn.__module__, fn.__name__))
    return fn


def is_table_picture(fn: Callable[..., Any]) -> bool:
    """Whether *fn* is marked :func:`table_picture`."""
    return (getattr(fn, "__module__", ""), getattr(fn, "__name__", "")) in _TABLE_PICTURES
