"""Running the bot: what an admin sees at start."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from tests.fakediscord import FakeDiscord

from tests import ROOT


def test_without_a_token_it_says_what_to_set_and_exits_2(tmp_path):
    env = {**os.environ, "DISCORD_TOKEN": "", "DATABASE_PATH": str(tmp_path / "x.db")}
    run = subprocess.run([sys.executable, "bot.py"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2
    assert "DISCORD_TOKEN" in run.stderr and ".env" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()


async def test_the_token_never_reaches_the_log_even_at_debug_level(tmp_path):
    secret = "MTIzNDU2Nzg5.SECRET-token-never-logged"
    fd = FakeDiscord(token=secret)
    await fd.start()
    guild = fd.add_guild("Game Night")
    fd.add_channel(guild, "games")
    env = {**os.environ, **fd.env(), "DISCORD_TOKEN": secret, "DEV_GUILD": str(guild.id),
           "DATABASE_PATH": str(tmp_path / "bot.db"), "LOG_LEVEL": "DEBUG"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakediscord.launch", "bot:main", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    # Read as it is written: a full pipe would block the verbose bot mid-log.
    reading = asyncio.ensure_future(proc.stdout.read())
    try:
        await fd.wait_ready(timeout=30)
        await fd.wait_commands(timeout=30)
    finally:
        proc.terminate()
        output = await asyncio.wait_for(reading, timeout=30)
        await asyncio.wait_for(proc.wait(), timeout=30)
        await fd.stop()
    text = output.decode("utf-8", "replace")
    assert "synced" in text and "DEBUG" in text  # it did log, verbosely
    assert secret not in text and "SECRET-token" not in text
    assert proc.returncode == 0  # SIGTERM is a clean stop
    assert (tmp_path / "bot.db").exists()
