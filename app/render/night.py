"""The recap image of a game night: podium, standings table, highlights.

Pure Pillow, called in a worker thread (``run_in_executor``); every text
arrives translated (``data`` is built by the night cog).
"""
from __future__ import annotations

from typing import Any, Mapping

from PIL import Image, ImageDraw

from app.render import base as rb
from app.render.common import GOLD, SLATE, SLATE_MUTED, SLATE_PANEL, TEXT

SILVER = (192, 200, 212)
BRONZE = (205, 127, 50)
MEDALS = {1: GOLD, 2: SILVER, 3: BRONZE}


def render_recap(data: Mapping[str, Any]) -> bytes:
    """``data``: title, subtitle, podium [(rank, name, points)] (everyone
    placed 1 to 3; equal ranks share a step), header (5
    column titles), rows [(rank, name, points, wins, games)],
    highlights_title, highlights [text]."""
    W, pad = 720, 24
    podium = list(data.get("podium") or [])
    rows = list(data.get("rows") or [])
    lines = list(data.get("highlights") or [])
    row_h, hl_h = 30, 28
    podium_h = 190 if podium else 0
    H = pad + 70 + podium_h + 20 + row_h * (len(rows) + 1) + (24 + 34 + hl_h * len(lines) if lines else 0) + pad
    im = Image.new("RGB", (W, H), SLATE)
    d = ImageDraw.Draw(im)
    d.rectangle((0, 0, W, 6), fill=GOLD)
    rb.text_fit(d, (W / 2, pad + 18), str(data.get("title") or ""), 30, TEXT, W - 2 * pad, anchor="mm", stroke=1)
    rb.text_fit(d, (W / 2, pad + 52), str(data.get("subtitle") or ""), 18, SLATE_MUTED, W - 2 * pad, anchor="mm")
    y = pad + 70

    # podium: 2nd left, 1st centre, 3rd right; block height by step.  Equal
    # places share a step (two winners stand together on the top one).
    if podium:
        col_w = (W - 2 * pad - 40) / 3
        heights = (110, 80, 56)
        slots = (1, 0, 2)  # step -> column
        base = y + podium_h - 10
        steps: dict[int, list[tuple[str, str]]] = {}
        for rank, name, points in podium:
            steps.setdefault(int(rank), []).append((str(name), str(points)))
        for step, rank in enumerate(sorted(steps)[:3]):
            col = slots[step]
            x0 = pad + col * (col_w + 20)
            h = heights[step]
            colour = MEDALS.get(rank, SLATE_MUTED)
            names = ", ".join(name for name, _ in steps[rank])
            d.rounded_rectangle((x0, base - h, x0 + col_w, base), 10, fill=SLATE_PANEL, outline=colour, width=3)
            rb.text(d, (x0 + col_w / 2, base - h / 2), str(rank), rb.font(34), colour, anchor="mm")
            rb.text_fit(d, (x0 + col_w / 2, base - h - 44), names, 22, TEXT, col_w - 8, anchor="mm")
            rb.text_fit(d, (x0 + col_w / 2, base - h - 18), steps[rank][0][1], 18, colour, col_w - 8, anchor="mm")
        y += podium_h + 20

    # standings table
    xs = (pad + 10, pad + 70, W - pad - 230, W - pad - 130, W - pad - 40)
    header = list(data.get("header") or ("#", "", "", "", ""))
    f = rb.font(16)
    for i, cap in enumerate(header[:5]):
        anchor = "lm" if i < 2 else "mm"
        rb.text(d, (xs[i], y + row_h / 2), rb.fit(str(cap), f, 110 if i != 1 else xs[2] - xs[1] - 70), f,
                SLATE_MUTED, anchor=anchor)
    y += row_h
    f18 = rb.font(18)
    for n, (rank, name, points, wins, games) in enumerate(rows):
        if n % 2 == 0:
            d.rectangle((pad, y, W - pad, y + row_h), fill=SLATE_PANEL)
        colour = MEDALS.get(int(rank), TEXT)
        cy = y + row_h / 2
        rb.text(d, (xs[0], cy), str(rank), f18, colour, anchor="lm")
        rb.text(d, (xs[1], cy), rb.fit(str(name), f18, xs[2] - xs[1] - 70), f18, TEXT, anchor="lm")
        for i, value in ((2, points), (3, wins), (4, games)):
            rb.text(d, (xs[i], cy), str(value), f18, TEXT if i != 2 else GOLD, anchor="mm")
        y += row_h

    if lines:
        y += 24
        rb.text_fit(d, (pad, y + 14), str(data.get("highlights_title") or ""), 22, GOLD, W - 2 * pad, anchor="lm")
        y += 34
        for line in lines:
            rb.text_fit(d, (pad + 12, y + hl_h / 2), "• " + str(line), 17, TEXT, W - 2 * pad - 12, anchor="lm")
            y += hl_h
    return rb.to_png(im)
