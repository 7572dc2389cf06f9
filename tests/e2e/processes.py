"""The bot as a process of its own (``python -m tests.fakediscord.launch bot:main``) on one
database file, for the tests that kill and restart it, and what it last committed there."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests import ROOT

SEED = 17  # with this deck a bull-card holder ends turns by hand (End turn)


class BotProcess:
    """``python -m tests.fakediscord.launch bot:main`` on one database file."""

    def __init__(self, fd: Any, guild: Any, database: Path, logs: Path, seed: int = SEED) -> None:
        self.fd = fd
        self.guild = guild
        self.database = database
        self.logs = logs
        self.seed = seed
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "DATABASE_"))}
        env.update(self.fd.env())
        env.update({
            "DISCORD_TOKEN": self.fd.token,
            "DEV_GUILD": str(self.guild.id),
            "DATABASE_PATH": str(self.database),
            "COMPUTER_DELAY": "0.05",
            "TIME_SCALE": "1",
            "TABLE_SEED": str(self.seed),
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        })
        return env

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for path in sorted(self.logs.parent.glob(self.logs.name + "*")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(out)

    async def start(self) -> None:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        before = self.fd.identify_count
        self.starts += 1
        log = open(f"{self.logs}.{self.starts}", "wb")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.fakediscord.launch", "bot:main"],
                cwd=ROOT, env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        proc = self.proc
        try:
            await self.fd.wait_for(
                lambda: proc.poll() is not None or (self.fd.identify_count > before and self.fd.connected),
                timeout=30)
        except TimeoutError:
            raise AssertionError(f"the bot did not connect\n{self.log_tail()}") from None
        assert proc.poll() is None, f"the bot exited with {proc.returncode}\n{self.log_tail()}"

    def _signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, the socket just drops."""
        assert self.proc is not None and self.proc.poll() is None, f"the bot is not running\n{self.log_tail()}"
        self._signal(signal.SIGKILL)
        self.kills += 1
        await self._reap(5)
        await self.fd.wait_for(lambda: not self.fd.connected, timeout=10)

    async def stop(self) -> None:
        """SIGTERM: the bot's own graceful shutdown."""
        self._signal(signal.SIGTERM)
        await self._reap(15)
        assert self.proc is not None, "the bot was never started"
        assert self.proc.returncode == 0, f"exit code {self.proc.returncode}\n{self.log_tail()}"

    async def restart(self) -> None:
        await self.kill()
        await self.start()

    async def _reap(self, timeout: float) -> None:
        proc = self.proc
        assert proc is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while proc.poll() is None:
            if loop.time() > deadline:
                proc.kill()
                proc.wait(5)
                raise AssertionError(f"the bot did not exit\n{self.log_tail()}")
            await asyncio.sleep(0.02)

    def finalize(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def connect(database: Path, readonly: bool = True) -> sqlite3.Connection:
    """A connection to the bot's database file beside the running bot (read-only unless asked)."""
    if readonly:
        return sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
    return sqlite3.connect(database, timeout=5)


def table_row(database: Path, table_id: int) -> tuple[str, dict[str, Any], int]:
    """(status, meta, number of saved actions) as the bot last committed them."""
    con = connect(database)
    try:
        status, meta = con.execute("SELECT status, meta FROM tables WHERE id = ?", (table_id,)).fetchone()
        count = con.execute("SELECT count(*) FROM table_actions WHERE table_id = ?", (table_id,)).fetchone()[0]
        return status, json.loads(meta), count
    finally:
        con.close()
