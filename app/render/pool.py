"""Drawing off the event loop: table pictures (renderers marked
:func:`app.render.common.table_picture`) in one worker process, the rest in
one painter thread that takes a click's picture first."""
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
import threading
import time
from typing import Any, Callable

from app.render import base as rb
from app.render.common import _serialised
from core import registry

log = logging.getLogger(__name__)

__all__ = ["warm_up", "draw", "start_pool", "stop_pool"]


# --------------------------------------------------------------------------
# Start-up

@_serialised
def warm_up() -> None:
    """Build fonts, glyph coverage and the common card sprites ahead of time,
    so the first images of a game are as fast as the rest.  Optional; call
    once at start-up (in a thread: it takes a fraction of a second).  Each
    picture module (a game's ``renderer`` in core.registry, and the profile
    card) warms its own sprites."""
    for size in (13, 14, 16, 17, 18, 20, 22, 24, 26, 28, 30):
        rb.font(size)
    rb.clean("".join(chr(c) for c in range(32, 127)))
    for module in _picture_modules():
        warm = getattr(importlib.import_module(module), "warm_up", None)
        if warm is not None:
            warm()


def _picture_modules() -> list[str]:
    return [spec.renderer for spec in registry.GAMES if spec.renderer] + ["app.render.profile"]


# --------------------------------------------------------------------------
# Drawing off the event loop

class _Painter:
    """One drawing thread taking the pictures that answer a click (a hand, a
    profile card) before the background ones (table messages).  With a pool,
    a click's picture queued behind every table picture of a busy evening
    (the renders take turns on one lock anyway): hundreds of milliseconds,
    sometimes past Discord's 3 seconds."""

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
                future.set_result(fn(*args))
            except BaseException as error:  # handed to the awaiting coroutine
                future.set_exception(error)


_PAINTER = _Painter()

_POOL: concurrent.futures.ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
_POOL_OFF = os.cpu_count() == 1


def _pooled(font: str | None, fallbacks: tuple[str, ...], module: str, name: str, args: tuple[Any, ...]) -> bytes:
    """In the worker process: the renderer ``module.name`` with the bot's fonts."""
    if (rb._FONT_PATH, rb._FALLBACK_PATHS) != (font, fallbacks):
        rb.set_font(font, fallbacks)
    return getattr(importlib.import_module(module), name)(*args)  # type: ignore[no-any-return]


#: how much lower the drawing process's CPU priority is than the bot's: when
#: the cores are short, answering a click within Discord's 3 s comes before a
#: table picture (which is redrawn later anyway, with the latest state)
WORKER_NICENESS = 5


def _worker_start(parent: int) -> None:
    """In the worker process: fonts and sprites ready; gone when the bot is gone
    (even killed: nobody else would end it); below the bot's CPU priority."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    warm_up()


def _pool() -> concurrent.futures.ProcessPoolExecutor | None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None and not _POOL_OFF:
            # spawn: a fresh interpreter, not a fork of a process with threads and a loop
            _POOL = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start,
                initargs=(os.getpid(),))
        return _POOL


def start_pool() -> None:
    """Start the worker process now (its start-up and warm-up take a second of
    CPU: better while the bot restores its tables than while clicks come in)."""
    pool = _pool()
    if pool is not None:
        pool.submit(os.getpid)


def stop_pool(wait: bool = False) -> None:
    """Let the worker process go (at shutdown; the next picture starts it again)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=True)


atexit.register(stop_pool, True)


async def draw(fn: Callable[..., bytes], *args: Any, urgent: bool = False) -> bytes:
    """``fn(*args)`` (one of the renderers) off the event loop: a table picture
    in the worker process, anything else in the drawing thread; ``urgent``
    for a picture a player's click waits for (drawn before queued ones)."""
    global _POOL_OFF
    module, name = getattr(fn, "__module__", ""), getattr(fn, "__name__", "")
    pool = _pool() if not urgent and getattr(fn, "table_picture", False) else None
    if pool is not None:
        try:
            job = pool.submit(_pooled, rb._FONT_PATH, rb._FALLBACK_PATHS, module, name, args)
            return await asyncio.wrap_future(job)
        except concurrent.futures.BrokenExecutor:
            log.warning("the drawing process died; drawing in a thread from now on")
            _POOL_OFF = True
            stop_pool()
    return await asyncio.wrap_future(_PAINTER.submit(urgent, fn, *args))
