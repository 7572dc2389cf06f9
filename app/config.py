"""Configuration from the environment (and a ``.env`` file beside bot.py).

| variable | meaning | default |
|---|---|---|
| ``DISCORD_TOKEN`` | the bot's token (required) | - |
| ``DEV_GUILD`` | a server id: slash commands are synced there instantly at start | none |
| ``DATABASE_PATH`` | SQLite file | ``data/bot.db`` |
| ``COMPUTER_DELAY`` | seconds a computer player pauses before it moves | ``1.5`` |
| ``LOG_LEVEL`` | ``DEBUG``, ``INFO``, ``WARNING``... | ``INFO`` |
| ``TIME_SCALE`` | multiplies every game timer (turn timer, pauses); tests only | ``1`` |
| ``TABLE_SEED`` | fixed seed for every new table; tests only | random |
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
    computer_delay: float = 1.5
    log_level: str = "INFO"
    time_scale: float = 1.0
    table_seed: int | None = None
    ai_budget: float = 0.15

    def __repr__(self) -> str:  # never show the token
        return (f"Config(token={'***' if self.token else None}, dev_guild={self.dev_guild}, "
                f"database={str(self.database)!r}, computer_delay={self.computer_delay})")

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
        db = values.get("DATABASE_PATH", "").strip()
        return cls(
            token=values.get("DISCORD_TOKEN", "").strip() or None,
            dev_guild=int(guild) if guild else None,
            database=Path(db) if db else ROOT / "data" / "bot.db",
            computer_delay=num("COMPUTER_DELAY", 1.5),
            log_level=values.get("LOG_LEVEL", "INFO").strip().upper() or "INFO",
            time_scale=num("TIME_SCALE", 1.0),
            table_seed=int(seed) if seed else None,
            ai_budget=num("AI_BUDGET", 0.15),
        )
