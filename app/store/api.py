"""The store's interface: what the bot asks of its database, whichever backend
holds it (:class:`~app.store.sqlite.SqliteStore` for an SQLite file,
:class:`~app.store.postgres.PostgresStore` for PostgreSQL).  Both implement
:class:`Store`; the type checker holds them to it (``open_store`` returns
either as a ``Store``), and the store's tests run each method on both.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol, Sequence, TypedDict

from app.store.base import ACTIVE_DAYS, GameRecord, Page, SeasonPlan, TableRecord
from core.registry import MIN_GAMES


class HistoryEntry(TypedDict):
    """One game of a player's history (:meth:`Store.history`)."""

    game_id: int
    game: str  # the game's registry key
    guild_id: int | None
    ended_at: float
    place: int
    score: int
    players: int
    table_id: int  # its table (the variant it played is in the table's meta)


class GameDetail(TypedDict):
    """A recorded game (:meth:`Store.game_detail`); ``standings``: one dict per
    seat (``seat``, ``user_id``, ``name``, ``score``, ``place``), by place."""

    game_id: int
    table_id: int
    guild_id: int | None
    channel_id: int | None
    game: str
    started_at: float
    ended_at: float
    seed: int
    rounds: int
    has_bots: bool
    rated: bool
    players: int
    standings: list[dict[str, Any]]


class NightRow(TypedDict):
    """A saved game night (:meth:`Store.open_nights`): its columns, and ``meta``
    (everything else, see :mod:`app.nights.night`)."""

    id: int
    guild_id: int
    channel_id: int
    game: str
    status: str
    meta: dict[str, Any]


class Store(Protocol):
    """Tables, results, stats, game nights, seasons and settings, saved."""

    backend: str  # "sqlite" or "postgresql"

    async def record_game(self, record: GameRecord) -> int | None:
        """Record a finished game once per table (stats, ratings, boards); its id."""
        ...

    async def close(self) -> None:
        """Stop the checkpoint task, checkpoint once and close the connections."""
        ...

    async def checkpoint(self, mode: str = "PASSIVE") -> tuple[int, int, int]:
        """Run a WAL checkpoint on the checkpoint connection."""
        ...

    async def create_table(self, guild_id: int, channel_id: int, game: str, meta: dict[str, Any]) -> int:
        ...

    async def save_table(self, table_id: int, *, status: str, meta: dict[str, Any], actions: Iterable[tuple[int, str]] = (), first_index: int = 0) -> None:
        """Update status and meta and append actions at ``first_index..``, atomically."""
        ...

    async def active_tables(self) -> list[TableRecord]:
        """Every table in 'lobby' or 'playing', with its actions, oldest first."""
        ...

    async def untold_closed_tables(self) -> list[TableRecord]:
        ...

    async def table_in_channel(self, channel_id: int) -> TableRecord | None:
        """The active table in *channel_id* (the newest if several), or None."""
        ...

    async def open_lobbies(self, host_id: int) -> int:
        ...

    async def table(self, table_id: int) -> TableRecord | None:
        """Any table by id, active or closed."""
        ...

    async def close_table(self, table_id: int, status: str) -> None:
        """Mark a table 'finished', 'cancelled' or 'abandoned' (it leaves ``active_tables``)."""
        ...

    async def profile(self, user_id: int, game: str, guild_id: int | None = None, *, season: int | None = None) -> dict[str, Any] | None:
        ...

    async def leaderboard(self, game: str, guild_id: int | None = None, by: str = "rating", page: int = 0, page_size: int = 10, min_games: int = MIN_GAMES, *, after: str | None = None, before: str | None = None, season: int | None = None) -> Page:
        ...

    async def rank(self, user_id: int, game: str, guild_id: int | None = None, by: str = "rating", min_games: int = MIN_GAMES, *, season: int | None = None) -> int | None:
        ...

    async def board_place(self, user_id: int, game: str, guild_id: int | None = None, by: str = "rating", min_games: int = MIN_GAMES, *, season: int | None = None) -> tuple[int, int] | None:
        ...

    async def history(self, user_id: int, limit: int = 10, guild_id: int | None = None, game: str | None = None) -> list[HistoryEntry]:
        """A player's latest games, newest first."""
        ...

    async def game_detail(self, game_id: int) -> GameDetail | None:
        """A recorded game with its standings ordered by place (then seat)."""
        ...

    async def create_night(self, guild_id: int, channel_id: int, game: str, meta: dict[str, Any]) -> int:
        ...

    async def save_night(self, night_id: int, status: str, meta: dict[str, Any]) -> None:
        ...

    async def end_night(self, night_id: int, meta: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
        ...

    async def open_nights(self) -> list[NightRow]:
        ...

    async def night_in_channel(self, channel_id: int) -> NightRow | None:
        """The channel's open night, else its last one, else None."""
        ...

    async def night_record(self, user_id: int, game: str, guild_id: int | None = None) -> dict[str, int]:
        """Nights of *game* a player finished (``played``) and topped (``won``)."""
        ...

    async def table_result(self, table_id: int) -> list[dict[str, Any]] | None:
        ...

    async def guild_settings(self, guild_id: int) -> dict[str, Any]:
        """Settings of a guild over ``GUILD_DEFAULTS``."""
        ...

    async def set_guild_setting(self, guild_id: int, key: str, value: Any) -> None:
        """Set one setting (any JSON value)."""
        ...

    async def park_inactive(self, now: float, windows: dict[int, float] | None = None,
                            days: float = ACTIVE_DAYS) -> int:
        """Take every rating without a rated game within its window off the
        rating boards (kept, back with the next rated game); how many rows.
        A guild's window in *windows* (days) holds for its boards and its
        seasons'; *days* for every other board."""
        ...

    async def rated_at(self, user_id: int, game: str, guild_id: int | None = None, *,
                       season: int | None = None) -> float | None:
        """When a player's rating last changed (None: never rated)."""
        ...

    async def exclude_member(self, guild_id: int, user_id: int, now: float) -> bool:
        """Take a member off every board of a guild (all-time and its seasons;
        their games still count); False if excluded already."""
        ...

    async def include_member(self, guild_id: int, user_id: int) -> bool:
        """Put an excluded member back on a guild's boards; False if not excluded."""
        ...

    async def excluded_members(self, guild_id: int) -> list[int]:
        """The members excluded from a guild's boards."""
        ...

    async def is_excluded(self, guild_id: int, user_id: int) -> bool:
        """Whether a member is excluded from a guild's boards."""
        ...

    async def create_season(self, guild_id: int, name: str, starts_at: float, ends_at: float | None = None, *, exist_ok: bool = False) -> int:
        ...

    async def make_seasons(self, plans: Sequence[SeasonPlan]) -> list[int | None]:
        """Make the seasons of *plans* a guild has not got yet (by name), all
        in one transaction (none when every one is there): the calendar's
        seasons of many guilds at once.  Each plan's season id (the one of
        that name, or new); None where its span overlaps another season of
        the guild.  ``ValueError`` when two plans of one guild share a name
        or overlap (:func:`app.store.base.check_plans`)."""
        ...

    async def end_season(self, season_id: int, at: float, *,
                         then: Sequence[SeasonPlan] = ()) -> dict[str, Any] | None:
        """End a season at *at*, or just after the last game it counted
        already that ended at or after *at* (a game stays in the season it
        was counted in: :func:`app.store.base.after_recorded`); drop the
        guild's seasons planned after the end that hold no game; make the
        seasons of *then*, none starting before the end (a change of mode's
        next season): in one transaction, so a game that ends at the boundary
        counts in exactly one season.  The season as it is now (None: no
        such season)."""
        ...

    async def season(self, season_id: int) -> dict[str, Any] | None:
        """One season: ``{"id", "guild_id", "name", "starts_at", "ends_at", "meta"}``."""
        ...

    async def seasons(self, guild_id: int) -> list[dict[str, Any]]:
        """Every season of a guild (0: the global calendar's), newest first."""
        ...

    async def seasons_ended(self, now: float) -> list[dict[str, Any]]:
        ...

    async def set_seasons_meta(self, metas: Mapping[int, dict[str, Any]]) -> None:
        """Set the meta of many seasons (season id -> meta) in one transaction."""
        ...

    async def guilds_with_setting(self, key: str) -> dict[int, Any]:
        """Every guild that has set *key*, with its value."""
        ...

    async def rebuild_boards(self) -> None:
        """Recount every board's buckets from ``stats`` (one transaction)."""
        ...

    async def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` plus ``foreign_key_check``; ['ok'] when sound."""
        ...

    async def game_of_table(self, table_id: int) -> int | None:
        """The recorded game id of a table (None if not recorded)."""
        ...

    async def versus(self, user_id: int, other_id: int, game: str | None = None) -> dict[str, dict[str, Any]]:
        """Head-to-head of two players across all servers, per game."""
        ...
