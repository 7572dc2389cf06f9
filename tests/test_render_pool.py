"""Table pictures are drawn in a worker process (off the bot's GIL): the very
same pictures as drawn in the bot's own process, with the bot's fonts."""
from __future__ import annotations

import os

from app.render import base as render_base, garbage as render_garbage, nimmt as render_nimmt, pool as render_pool
from tests.test_render import LABELS, garbage_view, nimmt_view


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
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = ("import asyncio, os, time\n"
            "from app.render import nimmt as render_nimmt, pool as render_pool\n"
            "from tests.test_render import LABELS, nimmt_view\n"
            "asyncio.run(render_pool.draw(render_nimmt.render_nimmt_table, nimmt_view(), ['A', 'B', 'C', 'D'], LABELS))\n"
            "print(*render_pool._pool()._processes, flush=True)\n"
            "time.sleep(60)\n")
    bot = subprocess.Popen([sys.executable, "-c", code], cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(pid) for pid in bot.stdout.readline().split()]
        assert workers and all(alive(pid) for pid in workers)
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
