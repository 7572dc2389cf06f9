"""Configuration from the environment (and a ``.env`` file beside bot.py).

| variable | meaning | default |
|---|---|---|
| ``DISCORD_TOKEN`` | the bot's token (required) | - |
| ``DEV_GUILD`` | a server id: slash commands are synced there instantly at start | none |
| ``DATABASE_PATH`` | SQLite file | ``data/bot.db`` |
| ``DATABASE_URL`` | ``postgresql://user:password@host/db``: use PostgreSQL instead of the SQLite file | unset |
| ``COMPUTER_DELAY`` | seconds a computer player pauses before it moves | ``1.5`` |
| ``LOG_LEVEL`` | ``DEBUG``, ``INFO``, ``WARNING``... | ``INFO`` |
| ``TIME_SCALE`` | multiplies every game timer (turn timer, pauses); tests only | ``1`` |
| ``TABLE_SEED`` | fixed seed for every new table; tests only | random |
| ``TABLE_SEEDS`` | each new table's seed drawn from this number and the table's number (a deal of its own per table, the same on every run); tests only; ``TABLE_SEED`` wins | random |
| ``REQUESTS_PER_SECOND`` | the whole bot's pace of requests Discord counts (its global limit is 50/s, one per token; 0 = no pacing); a process of a shard cluster paces its share, by its shards | ``38`` |
| ``SHARD_COUNT`` | shards of the whole bot (every process sets the same number) | unset: one unsharded process |
| ``SHARD_IDS`` | the shards this process runs, e.g. ``0,1`` (needs ``SHARD_COUNT``) | all of ``SHARD_COUNT`` |
| ``AI_BUDGET`` | seconds a hard computer player (or a hint) searches per decision | ``0.15`` |
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Config:
    token: str | None
    dev_guild: int | None = None
    database: Path = ROOT / "data" / "bot.db"
    database_url: str | None = None
    computer_delay: float = 1.5
    log_level: str = "INFO"
    time_scale: float = 1.0
    table_seed: int | None = None
    table_seeds: int | None = None
    ai_budget: float = 0.15
    requests_per_second: float = 38.0
    shard_count: int | None = None
    shard_ids: tuple[int, ...] | None = None

    @property
    def sharded(self) -> bool:
        return self.shard_count is not None

    @property
    def runs_shard_zero(self) -> bool:
        """The process that does what must happen once for the whole bot
        (command sync, WAL checkpoints): the unsharded one, or the one running shard 0."""
        return self.shard_count is None or 0 in (self.shard_ids or (0,))

    @property
    def process_requests_per_second(self) -> float:
        """This process's share of the bot's request pace: Discord's global
        limit is one per bot token, whichever process sends.

        >>> Config(token="x", requests_per_second=38, shard_count=4, shard_ids=(2, 3)).process_requests_per_second
        19.0
        >>> Config(token="x", requests_per_second=38).process_requests_per_second
        38.0
        """
        if self.shard_count is None or self.shard_ids is None:
            return float(self.requests_per_second)
        return self.requests_per_second * len(self.shard_ids) / self.shard_count

    def owns_guild(self, guild_id: int) -> bool:
        """Whether this process runs the shard of ``guild_id`` (Discord's routing)."""
        if self.shard_count is None:
            return True
        shard = shard_of(guild_id, self.shard_count)
        return self.shard_ids is None or shard in self.shard_ids

    @property
    def database_name(self) -> str:
        """The database in use, for messages (a URL without its password)."""
        if self.database_url:
            from app.store.postgres import safe_url

            return safe_url(self.database_url)
        return str(self.database)

    def __repr__(self) -> str:  # never show the token
        return (f"Config(token={'***' if self.token else None}, dev_guild={self.dev_guild}, "
                f"database={self.database_name!r}, computer_delay={self.computer_delay}, "
                f"shard_count={self.shard_count}, shard_ids={self.shard_ids})")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, dotenv: Path | None = ROOT / ".env") -> "Config":
        values: dict[str, str] = {}
        if dotenv is not None and dotenv.is_file():
            from dotenv import dotenv_values

            values.update({k: v for k, v in dotenv_values(dotenv).items() if v is not None})
        values.update(os.environ if env is None else env)

        def num(name: str, default: float) -> float:
            raw = values.get(name, "").strip()
            return float(raw) if raw else default

        guild = values.get("DEV_GUILD", "").strip()
        seed = values.get("TABLE_SEED", "").strip()
        seeds = values.get("TABLE_SEEDS", "").strip()
        db = values.get("DATABASE_PATH", "").strip()
        url = values.get("DATABASE_URL", "").strip() or None
        if url is not None and url.split("://", 1)[0] not in ("postgres", "postgresql"):
            raise ValueError(f"DATABASE_URL must be a postgresql:// URL, not {url.split('://', 1)[0]!r}")
        count_raw = values.get("SHARD_COUNT", "").strip()
        ids_raw = values.get("SHARD_IDS", "").strip()
        shard_count = int(count_raw) if count_raw else None
        shard_ids = tuple(int(part) for part in ids_raw.split(",") if part.strip()) if ids_raw else None
        if shard_count is None and shard_ids is not None:
            raise ValueError("SHARD_IDS needs SHARD_COUNT (the shards of the whole bot)")
        if shard_count is not None:
            if shard_count < 1:
                raise ValueError(f"SHARD_COUNT must be at least 1, not {shard_count}")
            bad = [i for i in shard_ids or () if not 0 <= i < shard_count]
            if bad or (shard_ids is not None and (not shard_ids or len(set(shard_ids)) != len(shard_ids))):
                raise ValueError(f"SHARD_IDS must be distinct numbers from 0 to {shard_count - 1}, not {ids_raw!r}")
        return cls(
            token=values.get("DISCORD_TOKEN", "").strip() or None,
            dev_guild=int(guild) if guild else None,
            database=Path(db) if db else ROOT / "data" / "bot.db",
            database_url=url,
            computer_delay=num("COMPUTER_DELAY", 1.5),
            log_level=values.get("LOG_LEVEL", "INFO").strip().upper() or "INFO",
            time_scale=num("TIME_SCALE", 1.0),
            table_seed=int(seed) if seed else None,
            table_seeds=int(seeds) if seeds else None,
            requests_per_second=num("REQUESTS_PER_SECOND", 38.0),
            shard_count=shard_count,
            shard_ids=shard_ids,
            ai_budget=num("AI_BUDGET", 0.15),
        )


def shard_of(guild_id: int, shard_count: int) -> int:
    """The shard Discord sends a server's events to: ``(guild_id >> 22) % shard_count``."""
    return (int(guild_id) >> 22) % shard_count
