"""Fixtures of the end-to-end tests (everything here is marked ``e2e`` by tests/conftest.py):
bot processes that do not outlive their test."""
from __future__ import annotations

from typing import Any, Callable, Iterator, TypeVar

import pytest

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
