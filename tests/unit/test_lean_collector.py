"""The collector policy of app/lean.py: what survives is frozen often, and once in a
while everything is thawed for one full pass, so a cycle that died while frozen is
still freed (a bot that runs for weeks does not keep it)."""
from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from app import lean


class Node:
    def __init__(self) -> None:
        self.other: "Node | None" = None


def frozen_cycle() -> weakref.ref:
    a, b = Node(), Node()
    a.other, b.other = b, a
    gc.freeze()  # alive when frozen (e.g. a table that closes later)
    return weakref.ref(a)


async def run_for(seconds: float, **kwargs) -> None:
    task = asyncio.ensure_future(lean.keep_frozen(**kwargs))
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.fixture(autouse=True)
def thawed():
    yield
    gc.unfreeze()  # leave the test process as it was


async def test_a_cycle_that_died_frozen_is_kept_without_a_thaw():
    ref = frozen_cycle()
    await run_for(0.2, every=0.01, thaw_every=0)
    assert ref() is not None  # frozen: the frequent passes never see it


async def test_the_thaw_frees_a_cycle_that_died_frozen():
    ref = frozen_cycle()
    await run_for(0.3, every=0.01, thaw_every=0.05)
    assert ref() is None


async def test_what_lives_on_is_frozen_and_new_cycles_die_young():
    gc.unfreeze()
    before = gc.get_freeze_count()
    keep = [Node() for _ in range(100)]  # noqa: F841 - lives on
    a, b = Node(), Node()
    a.other, b.other = b, a
    dead = weakref.ref(a)
    del a, b
    await run_for(0.1, every=0.01, thaw_every=0)
    assert dead() is None
    assert gc.get_freeze_count() >= before + 100
