"""Pictures are drawn in worker processes (off the bot's GIL): table pictures
in one below the bot's priority, the pictures a click waits for in another at
the bot's priority; the very same pictures as drawn in the bot's own process,
with the bot's fonts."""
from __future__ import annotations

import os

from app.render import base as render_base, pool as render_pool
from cogs.games.garbage import render as render_garbage
from cogs.games.nimmt import render as render_nimmt
from tests import ROOT
from tests.unit.test_render import LABELS, garbage_view, nimmt_view


async def test_table_pictures_from_the_worker_are_the_pictures():
    names = ["Ana", "Ben", "Cleo", "Dan"]
    nimmt, garbage = nimmt_view(), garbage_view()
    assert await render_pool.draw(render_nimmt.render_nimmt_table, nimmt, names, LABELS) == \
        render_nimmt.render_nimmt_table(nimmt, names, LABELS)
    assert await render_pool.draw(render_garbage.render_garbage_table, garbage, names, LABELS) == \
        render_garbage.render_garbage_table(garbage, names, LABELS)
    pool = render_pool._pool()
    if os.cpu_count() != 1:  # one core: no worker, the drawing thread draws them
        assert pool is not None and pool._processes  # a worker process drew them
        assert all(pid != os.getpid() for pid in pool._processes)


async def test_hand_pictures_are_drawn_in_the_click_process_not_the_bots():
    """A hand picture a player waits for is drawn in its own process (the bot's
    loop keeps its GIL), the same picture as drawn here; a renderer that
    process cannot find by name (a test's stand-in) is drawn in the painter
    thread."""
    import threading

    view = nimmt_view()
    drawn = await render_pool.draw(render_nimmt.render_nimmt_hand, view, LABELS, urgent=True)
    assert drawn == render_nimmt.render_nimmt_hand(view, LABELS)
    clicks = render_pool._clicks()
    if os.cpu_count() == 1:  # one core: no worker, the painter thread draws it
        assert clicks is None
        return
    assert clicks is not None and clicks._processes
    assert all(pid != os.getpid() for pid in clicks._processes)
    assert set(clicks._processes).isdisjoint(render_pool._pool()._processes)
    assert os.getpriority(os.PRIO_PROCESS, next(iter(clicks._processes))) == os.getpriority(os.PRIO_PROCESS, 0)

    where: list[str] = []

    def stand_in(view, labels):
        where.append(threading.current_thread().name)
        return b"picture"

    assert await render_pool.draw(stand_in, view, LABELS, urgent=True) == b"picture"
    assert where == ["painter"]


async def test_a_dead_click_process_falls_back_to_the_painter_thread():
    """When the click pictures' process dies, the hand is still drawn (in the
    painter thread), and table pictures keep their own process."""
    import signal

    view = nimmt_view()
    await render_pool.draw(render_nimmt.render_nimmt_hand, view, LABELS, urgent=True)
    clicks = render_pool._clicks()
    if clicks is None:  # one core
        return
    tables = render_pool._pool()
    await render_pool.draw(render_nimmt.render_nimmt_table, view, ["A", "B", "C", "D"], LABELS)
    try:
        for pid in list(clicks._processes):
            os.kill(pid, signal.SIGKILL)
        assert await render_pool.draw(render_nimmt.render_nimmt_hand, view, LABELS, urgent=True) == \
            render_nimmt.render_nimmt_hand(view, LABELS)
        assert render_pool._clicks() is None and render_pool._pool() is tables
    finally:
        render_pool._CLICKS_OFF = False


async def test_the_worker_yields_the_cores_to_the_bot():
    """When the cores are short, the bot answering clicks runs before pictures."""
    await render_pool.draw(render_nimmt.render_nimmt_table, nimmt_view(), ["A", "B", "C", "D"], LABELS)
    pool = render_pool._pool()
    if pool is None:  # one core: the drawing thread
        return
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    for pid in pool._processes:
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, mine + render_pool.WORKER_NICENESS)


async def test_the_worker_draws_with_the_font_the_bot_set():
    names = ["Ana", "Ben", "Cleo", "Dan"]
    view = nimmt_view()
    shipped = await render_pool.draw(render_nimmt.render_nimmt_table, view, names, LABELS)
    try:
        render_base.set_font(None)  # Pillow's embedded font
        plain = await render_pool.draw(render_nimmt.render_nimmt_table, view, names, LABELS)
        assert plain == render_nimmt.render_nimmt_table(view, names, LABELS) and plain != shipped
    finally:
        render_base.set_font(render_base.SHIPPED_FONT)
    assert await render_pool.draw(render_nimmt.render_nimmt_table, view, names, LABELS) == shipped


def test_the_worker_goes_when_the_bot_is_killed():
    """A bot killed (SIGKILL, a crash) leaves no drawing process behind."""
    import signal
    import subprocess
    import sys
    import time

    root = ROOT
    code = ("import asyncio, os, time\n"
            "from app.render import pool as render_pool\n"
            "from cogs.games.nimmt import render as render_nimmt\n"
            "from tests.unit.test_render import LABELS, nimmt_view\n"
            "asyncio.run(render_pool.draw(render_nimmt.render_nimmt_table, nimmt_view(), ['A', 'B', 'C', 'D'], LABELS))\n"
            "asyncio.run(render_pool.draw(render_nimmt.render_nimmt_hand, nimmt_view(), LABELS, urgent=True))\n"
            "print(*render_pool._pool()._processes, *render_pool._clicks()._processes, flush=True)\n"
            "time.sleep(60)\n")
    bot = subprocess.Popen([sys.executable, "-c", code], cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(pid) for pid in bot.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
    finally:
        bot.send_signal(signal.SIGKILL)
        bot.wait()
    for _ in range(100):  # the worker looks for its parent every second
        if not any(alive(pid) for pid in workers):
            break
        time.sleep(0.1)
    assert not any(alive(pid) for pid in workers), "the drawing process outlived the bot"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            state = next(line for line in f if line.startswith("State:"))
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "Z" not in state.split()[1]
