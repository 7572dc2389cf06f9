"""pytest fixture for the Discord stand-in.

Use it from a test module or conftest.py:

    from tests.fakediscord.pytest_plugin import fake_discord  # noqa: F401

    async def test_something(fake_discord):
        fd = fake_discord
        ...

The fixture starts a FakeDiscord, patches discord.py to point at it for the duration of the test, yields it,
then stops it and fails the test if violations were recorded (``fd.assert_clean()``).  Tests that provoke
violations on purpose should remove them with ``fd.take_violations(pattern)``.
"""
from __future__ import annotations

import pytest_asyncio

from .server import FakeDiscord


@pytest_asyncio.fixture
async def fake_discord():
    fd = FakeDiscord()
    await fd.start()
    try:
        with fd.patched():
            yield fd
    finally:
        await fd.stop()
    fd.assert_clean()
