"""A few hundred fuzzed interactions (tests/e2e/fuzz.py, seeded): every one is
answered within 3 s and the bot logs no traceback (bench/fuzz.py sends 10,000)."""
from __future__ import annotations

import logging

import pytest

from tests.e2e import LogWatch, running_bot
from tests.e2e.fuzz import Fuzzer

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("seed", [3, 11])
async def test_fuzzed_interactions_are_all_answered_without_a_traceback(world, tmp_path, seed):
    fd = world.fd
    with LogWatch(logging.ERROR) as logs:
        async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
            fuzzer = Fuzzer(fd, bot, world.guild, seed)
            await fuzzer.setup()
            figures = await fuzzer.run(300)
    assert figures.sent >= 300
    assert figures.unanswered == 0, figures.slow
    assert [f"{r.name}: {r.getMessage()}" for r in logs.tracebacks()] == []
