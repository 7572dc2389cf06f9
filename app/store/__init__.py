"""The bot's persistence layer: one interface (:class:`Store`), two backends.

    store = await open_store("data/bot.db")                    # SQLite file (app.store.sqlite)
    store = await open_store("postgresql://bot@db/cardnight")  # PostgreSQL (app.store.postgres)

Both migrate at open (numbered migrations each, applied under a lock so
processes starting together migrate once) and offer the same methods with
the same results and exceptions (:mod:`app.store.api`).  The SQL of each
backend lives beside its code: ``sqlite.py`` + ``sqlite_migrations.py``,
``postgres.py`` + ``pg_migrations.py``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from app.store.api import GameDetail, HistoryEntry, NightRow, Store
from app.store.base import (
    ACTIVE, BOARDS, CLOSED, GAME_CODES, GUILD_DEFAULTS, MIN_GAMES, RECORD_BATCH, ChannelBusy, GameRecord, Page,
    PlayerResult, StoreUnavailable, TableRecord,
)
from app.store.sqlite import SqliteStore

__all__ = ["Store", "open_store", "SqliteStore", "StoreUnavailable", "ChannelBusy", "TableRecord", "GameRecord",
           "PlayerResult", "Page", "HistoryEntry", "GameDetail", "NightRow", "GUILD_DEFAULTS", "ACTIVE", "CLOSED",
           "BOARDS", "GAME_CODES", "MIN_GAMES", "RECORD_BATCH", "is_database_url"]


def is_database_url(target: str | Path) -> bool:
    """Whether *target* names a PostgreSQL database rather than an SQLite file."""
    return isinstance(target, str) and target.split("://", 1)[0] in ("postgres", "postgresql")


async def open_store(target: str | Path, **options: Any) -> Store:
    """The store at *target*: PostgreSQL for a ``postgresql://`` URL, else an SQLite
    file (created if missing); migrated.  *options* go to the backend's ``open``
    (PostgreSQL ignores the SQLite file's)."""
    if is_database_url(target):
        from app.store.postgres import PostgresStore

        return await PostgresStore.open(str(target), **options)
    return await SqliteStore.open(str(target), **options)
