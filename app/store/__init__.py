"""The bot's persistence layer: one API, two backends.

    store = await Store.open("data/bot.db")                    # SQLite file (app.store.sqlite)
    store = await Store.open("postgresql://bot@db/cardnight")  # PostgreSQL (app.store.postgres)

Both migrate at open (numbered migrations each, applied under a lock so
processes starting together migrate once) and offer the same methods with
the same results and exceptions (see :mod:`app.store.base`).  The SQL of
each backend lives beside its code: ``sqlite.py`` + ``sqlite_migrations.py``,
``postgres.py`` + ``pg_migrations.py``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from app.store.base import (
    ACTIVE, BOARDS, CLOSED, GAME_CODES, GUILD_DEFAULTS, MIN_GAMES, RECORD_BATCH, ChannelBusy, GameRecord, Page,
    PlayerResult, StoreUnavailable, TableRecord,
)
from app.store.sqlite import SqliteStore

__all__ = ["Store", "SqliteStore", "StoreUnavailable", "ChannelBusy", "TableRecord", "GameRecord", "PlayerResult",
           "Page", "GUILD_DEFAULTS", "ACTIVE", "CLOSED", "BOARDS", "GAME_CODES", "MIN_GAMES", "RECORD_BATCH",
           "is_database_url"]


def is_database_url(target: str | Path) -> bool:
    """Whether *target* names a PostgreSQL database rather than an SQLite file."""
    return isinstance(target, str) and target.split("://", 1)[0] in ("postgres", "postgresql")


class Store(SqliteStore):
    """``Store.open(path_or_url)``: an SQLite file, or PostgreSQL for a
    ``postgresql://`` URL (then a :class:`app.store.postgres.PostgresStore`)."""

    @classmethod
    async def open(cls, target: Any, **options: Any) -> Any:  # type: ignore[override]
        if is_database_url(target):
            from app.store.postgres import PostgresStore

            return await PostgresStore.open(target, **options)
        return await super().open(target, **options)
