"""Drawing off the event loop, and off the bot's GIL: table pictures
(renderers marked :func:`app.render.common.table_picture`) in one worker
process below the bot's priority; the rest (a hand, a profile card) in a
second worker process at the bot's priority, fed one picture at a time by a
painter thread that takes a click's picture first."""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import importlib
import itertools
import logging
import multiprocessing
import os
import queue
import sys
import threading
import time
from typing import Any, Callable

from app.render import base as rb
from app.render.common import serialised, is_table_picture

log = logging.getLogger(__name__)

__all__ = ["warm_up", "draw", "start_pool", "stop_pool"]


# --------------------------------------------------------------------------
# Start-up

#: the games' picture warm-ups (each a module-level function, so it reaches the
#: drawing processes by name); set by :func:`start_pool`
_WARM_UPS: tuple[Callable[[], None], ...] = ()


@serialised
def warm_up(games: tuple[Callable[[], None], ...] = ()) -> None:
    """Build fonts, glyph coverage and the common card sprites ahead of time,
    so the first images of a game are as fast as the rest.  Optional; call
    once at start-up (in a thread: it takes a fraction of a second).  Each
    game's pictures warm their own sprites (``games``: their ``warm_up``
    functions), and so does the profile card."""
    from app.render import profile

    for size in (13, 14, 16, 17, 18, 20, 22, 24, 26, 28, 30):
        rb.font(size)
    rb.clean("".join(chr(c) for c in range(32, 127)))
    for warm in (*games, profile.warm_up):
        warm()


# --------------------------------------------------------------------------
# Drawing off the event loop

class _Painter:
    """One thread handing the click pictures' process one picture at a time,
    those that answer a click (a hand, a profile card) before the others (a
    panel redrawn after someone else's move).  Shared with the table pictures,
    a click's picture queued behind every table picture of a busy evening:
    hundreds of milliseconds, sometimes past Discord's 3 seconds.  Drawn in
    this thread instead, a picture held the bot's GIL from its loop."""

    def __init__(self) -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Any, Callable[..., Any], tuple[Any, ...]]] = \
            queue.PriorityQueue()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()

    def submit(self, urgent: bool, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((0 if urgent else 1, next(self._order), future, fn, args))
        with self._start:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="painter", daemon=True)
                self._thread.start()
        return future

    def _run(self) -> None:
        while True:
            _, _, future, fn, args = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(_in_click_process(fn, args))
            except BaseException as error:  # handed to the awaiting coroutine
                future.set_exception(error)


def _in_click_process(fn: Callable[..., bytes], args: tuple[Any, ...]) -> bytes:
    """``fn(*args)`` in the click pictures' process, waited for here (this
    thread lets go of the GIL while it waits, so the bot's loop runs on); in
    this thread when there is no such process, or ``fn`` is not a renderer
    that process can find again by its module and name (a test's stand-in)."""
    global _CLICKS_OFF
    module, name = getattr(fn, "__module__", ""), getattr(fn, "__name__", "")
    pool = _clicks() if _findable(fn, module, name) else None
    if pool is not None:
        try:
            return pool.submit(_pooled, *rb.fonts(), module, name, args).result()
        except concurrent.futures.BrokenExecutor:
            log.warning("the click pictures' process died; drawing them in a thread from now on")
            _CLICKS_OFF = True
            _let_go("_CLICKS")
    return fn(*args)


def _findable(fn: Callable[..., Any], module: str, name: str) -> bool:
    return getattr(sys.modules.get(module), name, None) is fn


_PAINTER = _Painter()

_POOL: concurrent.futures.ProcessPoolExecutor | None = None  # table pictures
_CLICKS: concurrent.futures.ProcessPoolExecutor | None = None  # pictures a click waits for
_POOL_LOCK = threading.Lock()
_POOL_OFF = _CLICKS_OFF = os.cpu_count() == 1


def _pooled(font: str | None, fallbacks: tuple[str, ...], module: str, name: str, args: tuple[Any, ...]) -> bytes:
    """In the worker process: the renderer ``module.name`` with the bot's fonts."""
    if rb.fonts() != (font, fallbacks):
        rb.set_font(font, fallbacks)
    return getattr(importlib.import_module(module), name)(*args)


#: how much lower the drawing process's CPU priority is than the bot's: when
#: the cores are short, answering a click within Discord's 3 s comes before a
#: table picture (which is redrawn later anyway, with the latest state)
WORKER_NICENESS = 5


def _worker_start(parent: int, niceness: int, games: tuple[Callable[[], None], ...] = ()) -> None:
    """In a worker process: fonts and sprites ready; gone when the bot is gone
    (even killed: nobody else would end it); ``niceness`` below the bot's CPU
    priority."""
    if niceness:
        with contextlib.suppress(OSError):
            os.nice(niceness)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    warm_up(games)


def _worker(niceness: int) -> concurrent.futures.ProcessPoolExecutor:
    # spawn: a fresh interpreter, not a fork of a process with threads and a loop
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start,
        initargs=(os.getpid(), niceness, _WARM_UPS))


def _pool() -> concurrent.futures.ProcessPoolExecutor | None:
    """The table pictures' process (started on first use), or None."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None and not _POOL_OFF:
            _POOL = _worker(WORKER_NICENESS)
        return _POOL


def _clicks() -> concurrent.futures.ProcessPoolExecutor | None:
    """The click pictures' process (started on first use), or None."""
    global _CLICKS
    with _POOL_LOCK:
        if _CLICKS is None and not _CLICKS_OFF:
            _CLICKS = _worker(0)
        return _CLICKS


def start_pool(games: tuple[Callable[[], None], ...] = ()) -> None:
    """Start the worker processes now (their start-up and warm-up take a second
    of CPU: better while the bot restores its tables than while clicks come in);
    ``games``: the games' picture warm-ups they run first."""
    global _WARM_UPS
    _WARM_UPS = tuple(games)
    for pool in (_pool(), _clicks()):
        if pool is not None:
            pool.submit(os.getpid)


def stop_pool(wait: bool = False) -> None:
    """Let the worker processes go (at shutdown; the next picture starts them again)."""
    for which in ("_POOL", "_CLICKS"):
        _let_go(which, wait)


def _let_go(which: str, wait: bool = False) -> None:
    with _POOL_LOCK:
        pool = globals()[which]
        globals()[which] = None
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=True)


atexit.register(stop_pool, True)


async def draw(fn: Callable[..., bytes], *args: Any, urgent: bool = False) -> bytes:
    """``fn(*args)`` (one of the renderers) off the event loop: a table picture
    in the table pictures' process, anything else through the painter thread
    in the click pictures' process; ``urgent`` for a picture a player's click
    waits for (drawn before queued ones)."""
    global _POOL_OFF
    module, name = getattr(fn, "__module__", ""), getattr(fn, "__name__", "")
    pool = _pool() if not urgent and is_table_picture(fn) else None
    if pool is not None:
        try:
            job = pool.submit(_pooled, *rb.fonts(), module, name, args)
            return await asyncio.wrap_future(job)
        except concurrent.futures.BrokenExecutor:
            log.warning("the table pictures' process died; drawing them in a thread from now on")
            _POOL_OFF = True
            _let_go("_POOL")
    return await asyncio.wrap_future(_PAINTER.submit(urgent, fn, *args))
