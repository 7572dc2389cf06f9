"""Unit tests: the engine, the store, the renderers and the bot's parts, one at a time.
The helpers several of these modules share live here."""
from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Coroutine

import pytest


def between_read_and_write(monkeypatch: pytest.MonkeyPatch, other_process: Callable[[], Coroutine[Any, Any, None]],
                           times: int = 1) -> list[tuple[Any, ...]]:
    """Makes another process change the seasons between a PostgreSQL recording's read of
    them and its write: ``other_process`` (its own connections) runs to its end, on a
    thread with an event loop of its own, before each of the first ``times`` reads of the
    seasons (``postgres.record_scopes``).  The arguments of every read, as they come."""
    from app.store import postgres

    real = postgres.record_scopes
    calls: list[tuple[Any, ...]] = []

    def record_scopes(*args: Any) -> list[int]:
        if len(calls) < times:
            thread = threading.Thread(target=lambda: asyncio.run(other_process()))
            thread.start()
            thread.join()
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(postgres, "record_scopes", record_scopes)
    return calls
