"""A shard cluster end to end: two real bot processes, each running two of
four shards (``SHARD_COUNT=4``, ``SHARD_IDS``), on one SQLite file, against
the stand-in, which sends every server's clicks only to its shard.

Tables in servers of different processes play to the end; the global
leaderboard shows the players of both; one process is SIGKILLed mid-game
while the other keeps playing (and even restarts without touching the dead
one's table); the killed one resumes its table when it comes back, and every
game is recorded once."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import make_world
from tests.fakediscord import NoAcknowledgement
from tests import ROOT
from tests.e2e.processes import SEED, BotProcess
from tests.e2e.test_restart import Run, final_state

pytestmark = pytest.mark.timeout(240)

SHARDS = 4


class ShardProcess(BotProcess):
    """``python -m tests.fakediscord.launch bot:main --sync-global`` running ``shard_ids``;
    every process gets the same command line, only the one running shard 0 syncs."""

    def __init__(self, fd: Any, database: Path, logs: Path, shard_ids: tuple[int, ...]) -> None:
        super().__init__(fd, None, database, logs)
        self.shard_ids = shard_ids

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("DISCORD_", "DATABASE_", "SHARD_", "DEV_GUILD"))}
        env.update(self.fd.env())
        env.update({
            "DISCORD_TOKEN": self.fd.token,
            "DATABASE_PATH": str(self.database),
            "SHARD_COUNT": str(SHARDS),
            "SHARD_IDS": ",".join(map(str, self.shard_ids)),
            "COMPUTER_DELAY": "0.05",
            "TABLE_SEED": str(SEED),
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        })
        return env

    def mine_ready(self) -> bool:
        return set(self.shard_ids) <= set(self.fd.ready_shards())

    async def start(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        log = open(f"{self.logs}.{self.starts}", "wb")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.fakediscord.launch", "bot:main", "--sync-global"],
                cwd=ROOT, env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        proc = self.proc
        try:
            await self.fd.wait_for(lambda: proc.poll() is not None or self.mine_ready(), timeout=30)
        except TimeoutError:
            raise AssertionError(f"shards {self.shard_ids} did not connect\n{self.log_tail()}") from None
        assert proc.poll() is None, f"the bot exited with {proc.returncode}\n{self.log_tail()}"

    async def kill(self) -> None:
        assert self.proc is not None and self.proc.poll() is None, f"not running\n{self.log_tail()}"
        self._signal(signal.SIGKILL)
        self.kills += 1
        await self._reap(5)
        await self.fd.wait_for(lambda: not set(self.shard_ids) & set(self.fd.ready_shards()), timeout=10)


def syncs(fd: Any) -> int:
    """Global command syncs (bulk overwrites) the stand-in received."""
    return sum(1 for r in fd.requests if r.method == "PUT" and re.search(r"/applications/\d+/commands$", r.path))


def touching(fd: Any, since: int, *channels: Any) -> list[str]:
    ids = {str(c.id) for c in channels if c is not None}
    return [f"{r.method} {r.path}" for r in fd.requests[since:] if ids & set(re.findall(r"\d+", r.path))]


async def board(fd: Any, user: Any, channel: Any, scope: str) -> str:
    r = await fd.slash(user, channel, "leaderboard", game="nimmt", scope=scope, by="games")
    assert r.ack_type in (4, 5), r
    await r.settled()
    return r.message.text()


async def test_two_processes_of_two_shards_share_one_file(processes, tmp_path):
    async with make_world(shard_count=SHARDS, max_concurrency=SHARDS) as world:
        fd = world.fd
        north, south = fd.add_guild("North", shard=0), fd.add_guild("South", shard=3)
        people = {}
        for guild, names in ((north, ("ana", "ben")), (south, ("cat", "dan"))):
            for name in names:
                people[name] = fd.add_user(name)
                fd.add_member(guild, people[name])
        database = tmp_path / "shared.db"
        one = processes(ShardProcess(fd, database, tmp_path / "one.log", (0, 1)))
        two = processes(ShardProcess(fd, database, tmp_path / "two.log", (2, 3)))
        await one.start()
        await two.start()
        await fd.wait_commands(timeout=15)
        assert sorted(map(tuple, fd.identified_shards)) == [(i, SHARDS) for i in range(SHARDS)]
        assert syncs(fd) == 1, "commands are synced by the process running shard 0 only"

        n = Run(SimpleNamespace(fd=fd, guild=north), one, [people["ana"], people["ben"]])
        s = Run(SimpleNamespace(fd=fd, guild=south), two, [people["cat"], people["dan"]])
        await n.open("games")
        await s.open("games")
        await n.start()
        await s.start()
        for _ in range(5):  # a few moves in the South, then its process dies mid-game
            user = await s.mover()
            assert user is not None, "the South's game ended too early for the test"
            await s.step(user)
        await two.kill()
        status, _, version = s.state()
        assert status == "playing"
        shown = len(fd.messages(s.thread))
        since = len(fd.requests)

        with pytest.raises(NoAcknowledgement):  # nobody runs shard 3 now: no other process answers it
            await fd.click(people["cat"], s.table_message(), f"nimmt.hand:{s.table_id}")

        for _ in range(3):  # the North keeps playing...
            user = await n.mover()
            await n.step(user)
        await one.restart()  # ...and even restarts without taking over the South's table
        assert syncs(fd) == 2
        await n.play()
        assert "Game over!" in await n.finish_shown()
        status, _, now = s.state()
        assert (status, now) == ("playing", version), "a process moved a table of a server it does not run"
        assert len(fd.messages(s.thread)) == shown
        assert touching(fd, since, s.channel, s.thread) == []

        await two.start()  # the South's process comes back and resumes its table
        assert syncs(fd) == 2, "a process without shard 0 never syncs commands"
        await s.play()
        assert "Game over!" in await s.finish_shown()

        everyone = await board(fd, people["ana"], n.channel, "global")
        for name in people:
            assert name in everyone, everyone
        local = await board(fd, people["cat"], s.channel, "server")
        assert "cat" in local and "dan" in local and "ana" not in local and "ben" not in local, local

        for process in (one, two):
            await process.stop()
        for run in (n, s):
            state = final_state(database, run.table_id)
            assert state["integrity"] == ["ok"] and state["fk"] == []
            assert state["status"] == "finished" and len(state["games"]) == 1, state
