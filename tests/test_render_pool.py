"""Table pictures are drawn in a worker process (off the bot's GIL): the very
same pictures as drawn in the bot's own process, with the bot's fonts."""
from __future__ import annotations

import os

from app import render, render_base
from tests.test_render import LABELS, garbage_view, nimmt_view


async def test_table_pictures_from_the_worker_are_the_pictures():
    names = ["Ana", "Ben", "Cleo", "Dan"]
    nimmt, garbage = nimmt_view(), garbage_view()
    assert await render.draw(render.render_nimmt_table, nimmt, names, LABELS) == \
        render.render_nimmt_table(nimmt, names, LABELS)
    assert await render.draw(render.render_garbage_table, garbage, names, LABELS) == \
        render.render_garbage_table(garbage, names, LABELS)
    pool = render._pool()
    if os.cpu_count() != 1:  # one core: no worker, the drawing thread draws them
        assert pool is not None and pool._processes  # a worker process drew them
        assert all(pid != os.getpid() for pid in pool._processes)


async def test_the_worker_draws_with_the_font_the_bot_set():
    names = ["Ana", "Ben", "Cleo", "Dan"]
    view = nimmt_view()
    shipped = await render.draw(render.render_nimmt_table, view, names, LABELS)
    try:
        render.set_font(None)  # Pillow's embedded font
        plain = await render.draw(render.render_nimmt_table, view, names, LABELS)
        assert plain == render.render_nimmt_table(view, names, LABELS) and plain != shipped
    finally:
        render.set_font(render_base.SHIPPED_FONT)
    assert await render.draw(render.render_nimmt_table, view, names, LABELS) == shipped
