"""Fixtures of the end-to-end tests (everything here is marked ``e2e`` by tests/conftest.py):
a stand-in for whole games, bot processes that do not outlive their test."""
from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Iterator, TypeVar

import pytest
import pytest_asyncio

from tests.conftest import World, make_world
from tests.e2e.processes import BotProcess

P = TypeVar("P")


@pytest.fixture
def processes() -> Iterator[Callable[[P], P]]:
    """Registers bot processes (anything with ``finalize()``); every one still alive at the end is SIGKILLed."""
    made: list[Any] = []

    def add(process: P) -> P:
        made.append(process)
        return process

    yield add
    for process in made:
        process.finalize()


@pytest.fixture
def bots(processes: Callable[[BotProcess], BotProcess]) -> Callable[..., BotProcess]:
    """Makes :class:`BotProcess` es (its arguments); every one still alive at the end is SIGKILLed."""
    return lambda *args, **kwargs: processes(BotProcess(*args, **kwargs))


@pytest_asyncio.fixture
async def fast_world() -> AsyncIterator[World]:
    """Like ``world``, with a generous per-channel edit rate.

    Whole games take a few hundred turns and every turn redraws the table
    message; at Discord's 5 edits per 5 s the suite would spend minutes waiting
    on the rate limit.  Everything else is as strict as in ``world``
    (acknowledgement deadline, violations fail the test)."""
    async with make_world(edit_rate=(10_000, 1.0)) as made:
        yield made
