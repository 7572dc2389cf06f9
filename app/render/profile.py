"""A player's profile card: the figures their game declares (core.registry).

See :mod:`app.render` for the conventions (views in, PNG bytes out, labels
translated by the caller).
"""
from __future__ import annotations

from typing import Any, Mapping

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render.base import label
from app.render.common import SLATE, SLATE_MUTED, SLATE_PANEL, TEXT, serialised
from core import registry

PROFILE_LABELS: tuple[str, ...] = (
    "games",         # (none)                    e.g. "Games"
    "wins",          # (none)                    e.g. "Wins"
    "win_rate",      # (none)                    e.g. "Win rate"
    "rating",        # (none)                    e.g. "Rating"
    "rating_detail", # {mu} {sigma}              e.g. "mu {mu} / sigma {sigma}"
    "rank",          # {rank}                    e.g. "Rank #{rank}"
    "unranked",      # (none)                    e.g. "Unranked"
    "decimal_mark",  # (none)  the reader's decimal separator, e.g. "." or ","
    "percent",       # {value}                   e.g. "{value}%" or "{value} %"
)
"""Label keys of :func:`render_profile`; besides them, ``game_<key>`` is the
name of the card's game (its registry key), and each figure the game
declares (its :class:`~core.spec.StatSpec` ``label_key``), given by the caller."""


# --------------------------------------------------------------------------
# Profile card

def _plain_num(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


@serialised
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
    # text in the game's colour, on the panel and on the card, lightened until legible (WCAG AA)
    badge_ink, title_ink = rb.readable(accent, SLATE_PANEL), rb.readable(accent, SLATE)

    # name, game, rank
    rank = profile.get("rank")
    rank_txt = label(labels, "rank", rank=rank) if rank is not None else label(labels, "unranked")
    f20 = rb.font(20)
    rank_txt = rb.fit(rank_txt, f20, 180)
    rw = f20.getlength(rank_txt)
    if rank_txt:
        d.rounded_rectangle((W - pad - rw - 20, pad + 4, W - pad, pad + 36), 16, fill=SLATE_PANEL)
        rb.text(d, (W - pad - 10 - rw / 2, pad + 20), rank_txt, f20, badge_ink, anchor="mm")
    rb.text_fit(d, (pad + 6, pad + 20), str(profile.get("name") or ""), 30, TEXT,
                W - 2 * pad - rw - 40, anchor="lm", stroke=1)
    sub = label(labels, f"game_{spec.key}")  # the game's name, given by the caller
    detail = ""
    if profile.get("mu") is not None and profile.get("sigma") is not None:
        detail = label(labels, "rating_detail", mu=_num(profile.get("mu")), sigma=_num(profile.get("sigma")))
    sub_w = rb.text_fit(d, (pad + 6, pad + 56), sub, 18, title_ink, W / 2, anchor="lm")
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
            share = max(0.0, min(1.0, float(profile.get("win_rate") or 0)))
            d.rectangle((x + 12, ty + th - 8, x + tw - 12, ty + th - 5), fill=SLATE)
            if share > 0:
                d.rectangle((x + 12, ty + th - 8, x + 12 + (tw - 24) * share, ty + th - 5), fill=accent)

    return rb.to_png(im)


def warm_up() -> None:
    """One small card (called by :func:`app.render.pool.warm_up`)."""
    render_profile.__wrapped__({"name": "A", "game": "", "win_rate": 0.5, "rank": 1}, {})
