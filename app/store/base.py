"""What both backends share: the records callers pass and get back, the
errors they raise, and the group-commit recorder.

Every backend (:mod:`app.store.sqlite`, :mod:`app.store.postgres`) offers
the same methods with the same results and raises the same exceptions:
:class:`StoreUnavailable` when the database cannot be opened for writing,
:class:`ChannelBusy` for a second active table in a channel,
``LookupError`` for an unknown table or a second open night in a channel,
``ValueError`` for an unknown game, board or status; any other failure of a
write (a lock held too long, a lost connection) is an exception that the
table manager reports as "not saved".
"""
from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, NamedTuple, Sequence

from core import registry
from core.registry import GAMES, MIN_GAMES as MIN_GAMES  # (MIN_GAMES: the one threshold, re-exported)

if TYPE_CHECKING:
    from app.store.api import NightRow

ACTIVE = ("lobby", "playing")
CLOSED = ("finished", "cancelled", "abandoned")
#: seconds a table's closing not told in its thread yet is still told after a restart
#: (``untold_closed_tables``)
UNTOLD_FOR = 7 * 24 * 3600
GUILD_DEFAULTS: dict[str, Any] = {"language": None, "rate_bot_games": False, "rate_variants": False}
#: days a rating stays on the rating boards after its last rated game (a
#: server may set its own window for its boards, ``/boards activity``)
ACTIVE_DAYS = 30.0
#: most games recorded in one transaction (group commit)
RECORD_BATCH = 64
#: board number -> (name, sort-key column)
BOARDS: dict[int, tuple[str, str]] = {
    0: ("rating", "k_rating"),
    1: ("wins", "k_wins"),
    2: ("win_rate", "k_rate"),
    3: ("games", "k_games"),
}
BOARD_NUMBERS = {name: number for number, (name, _) in BOARDS.items()}
#: numeric codes of the games in ``stats`` (kept small: they are the first
#: column of every board index); each game's spec holds its code.
GAME_CODES = {spec.key: spec.code for spec in GAMES}


class StoreUnavailable(Exception):
    """The database file cannot be opened for writing (read-only file or
    folder, missing folder, full disk, locked by another program...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ChannelBusy(Exception):
    """``create_table`` in a channel that has an active table already."""


@dataclass(frozen=True)
class TableRecord:
    """A lobby or game table as saved: replay ``actions`` from the seed in ``meta``."""

    id: int
    guild_id: int
    channel_id: int
    game: str
    status: str
    meta: dict[str, Any]
    actions: list[tuple[int, str]]
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class PlayerResult:
    """One seat's result; ``user_id`` None is a computer player."""

    user_id: int | None
    name: str
    seat: int
    score: int
    place: int
    stats: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GameRecord:
    """A finished game, recorded once per ``table_id``."""

    table_id: int
    guild_id: int | None
    channel_id: int | None
    game: str
    started_at: float
    ended_at: float
    seed: int | None
    rounds: int
    has_bots: bool
    rated: bool
    players: list[PlayerResult]


@dataclass(frozen=True)
class Page:
    """One leaderboard page.

    ``rows``: ``{"rank", "position", "user_id", "name", "value", "games", "wins"}``
    (``rank``: the shared place, equal values share it; ``position``: 1-based
    place in the board's order, unique);
    ``page`` is 0-based, ``pages`` the page count, ``total`` the board size.
    ``first``/``last`` are keyset cursors for ``before=``/``after=``.
    """

    rows: list[dict[str, Any]]
    page: int
    pages: int
    total: int
    first: str | None = None
    last: str | None = None



def table_record(row: Sequence[Any]) -> TableRecord:
    """A row ``id, guild_id, channel_id, game, status, meta, created_at,
    updated_at, actions`` (meta and actions as JSON text)."""
    return TableRecord(
        id=row[0], guild_id=row[1], channel_id=row[2], game=row[3], status=row[4],
        meta=json.loads(row[5]), actions=[(s, a) for s, a in json.loads(row[8])],
        created_at=row[6], updated_at=row[7],
    )


def night_record(row: Sequence[Any]) -> NightRow:
    return {"id": row[0], "guild_id": row[1], "channel_id": row[2], "game": row[3], "status": row[4],
            "meta": json.loads(row[5])}


def game_code(game: str) -> int:
    try:
        return GAME_CODES[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r}; expected one of {sorted(GAME_CODES)}") from None


def board_number(by: str) -> int:
    try:
        return BOARD_NUMBERS[by]
    except KeyError:
        raise ValueError(f"unknown board {by!r}; expected one of {sorted(BOARD_NUMBERS)}") from None


#: the user-id half of a sort key at its lowest: ``key[:16] + TIE_LOW`` is
#: the first key of every entry with *key*'s value (see :func:`tie_key`)
TIE_LOW = "0" * 16


def tie_key(key: str) -> str:
    """The lowest key holding *key*'s board value: the entries strictly
    ahead of it are the entries with a better value (shared places).

    >>> tie_key("00000000000000050000000000000123")
    '00000000000000050000000000000000'
    """
    return key[:16] + TIE_LOW


def shared_ranks(keys: Sequence[str], ahead: int, tied_ahead: int | None = None) -> list[int]:
    """Places of consecutive board entries (sort *keys* in order) whose first
    has *ahead* entries before it, *tied_ahead* of them with a better value
    (None: all of them): equal values share the place of the first of them
    ("1224", standard competition ranking).

    >>> key = lambda value, user: f"{value:016X}{user:016X}"
    >>> shared_ranks([key(5, 1), key(5, 2), key(7, 1)], 0, 0)
    [1, 1, 3]
    >>> shared_ranks([key(5, 3), key(7, 1)], 10, 7)  # the first ties with entries of the page before
    [8, 12]
    """
    out: list[int] = []
    for i, key in enumerate(keys):
        if i == 0:
            out.append((ahead if tied_ahead is None else tied_ahead) + 1)
        elif key[:16] == keys[i - 1][:16]:
            out.append(out[-1])
        else:
            out.append(ahead + i + 1)
    return out


def page_of(rows: Sequence[Sequence[Any]], ahead: int, total: int, page_size: int,
            tied_ahead: int | None = None) -> Page:
    """A :class:`Page` from rows ``user_id, name, value, games, wins, key, ...``
    whose first entry has *ahead* entries before it (*tied_ahead* of them
    with a better value: equal values share a rank, see :func:`shared_ranks`)."""
    ranks = shared_ranks([r[5] for r in rows], ahead, tied_ahead)
    out = [
        {"rank": rank, "position": ahead + i + 1, "user_id": r[0], "name": r[1], "value": r[2], "games": r[3],
         "wins": r[4]}
        for i, (r, rank) in enumerate(zip(rows, ranks))
    ]
    return Page(
        rows=out, page=ahead // page_size, pages=-(-total // page_size), total=total,
        first=rows[0][5] if rows else None,
        last=rows[-1][5] if rows else None,
    )


def profile_of(user_id: int, game: str, guild_id: int | None, row: Sequence[Any]) -> dict[str, Any]:
    """The profile dict from ``name, games, wins, score_sum, counters (JSON),
    rated_games, mu, sigma, rank, parked`` (``parked``: the rating is kept
    off the rating boards for want of a recent rated game)."""
    from app import ratings

    name, games, wins, score_sum, counters, rated_games, mu, sigma, rank, parked = row
    counters = json.loads(counters or "{}")
    declared = {stat.key: stat.value(score_sum, counters) for stat in registry.spec(game).stats}
    return {
        "user_id": user_id,
        "game": game,
        "guild_id": guild_id,
        "name": name,
        "games": games,
        "wins": wins,
        "win_rate": wins / games if games else 0.0,
        "score_sum": score_sum,
        "counters": counters,
        **declared,  # the figures the game's spec declares (core.registry)
        "rated_games": rated_games,
        "mu": mu,
        "sigma": sigma,
        "ordinal": ratings.ordinal(mu, sigma) if mu is not None else None,
        "rank": int(rank) if rank is not None else None,
        "parked": bool(parked),
    }


def scope_of(guild_id: int | None, season: int | None = None) -> int:
    """The ``stats`` scope of a board: a season's (``-id``), else a guild's
    (its id), else the global one (0).

    >>> scope_of(None), scope_of(42), scope_of(42, season=7)
    (0, 42, -7)
    """
    if season is not None:
        if season <= 0:
            raise ValueError(f"no season {season}")
        return -season
    return guild_id or 0


class SeasonPlan(NamedTuple):
    """A season to make (:meth:`app.store.api.Store.make_seasons`): of
    ``guild_id`` (0: the global calendar's), from ``starts_at`` to
    ``ends_at`` (None: until ended by hand)."""

    guild_id: int
    name: str
    starts_at: float
    ends_at: float | None = None


def check_plans(plans: Sequence[SeasonPlan]) -> list[SeasonPlan]:
    """*plans* as SeasonPlans; ``ValueError`` for a span that ends before it
    starts, or two plans of one guild with one name or overlapping spans.

    >>> check_plans([(1, "a", 0.0, 10.0), (1, "b", 10.0, None), (2, "a", 5.0, 6.0)])[1]
    SeasonPlan(guild_id=1, name='b', starts_at=10.0, ends_at=None)
    >>> check_plans([(1, "a", 0.0, 10.0), (1, "b", 9.0, 20.0)])
    Traceback (most recent call last):
    ValueError: seasons 'a' and 'b' of guild 1 overlap
    """
    out = [SeasonPlan(*plan) for plan in plans]
    for plan in out:
        if plan.ends_at is not None and plan.ends_at <= plan.starts_at:
            raise ValueError(f"season {plan.name!r} ends before it starts")
    ordered = sorted(out, key=lambda plan: (plan.guild_id, plan.starts_at))
    for a, b in zip(ordered, ordered[1:]):
        if a.guild_id == b.guild_id and (a.name == b.name or a.ends_at is None or a.ends_at > b.starts_at):
            raise ValueError(f"seasons {a.name!r} and {b.name!r} of guild {a.guild_id} overlap")
    return out


def after_recorded(at: float, last: float | None) -> float:
    """Where a season starts or ends that is made or ended at *at*, when
    *last* is the end of the last game of its guild recorded already at or
    after *at* (None: none): *at*, or the first instant after that game.
    A game counts in the season its end falls in, the end excluded; one
    recorded before the boundary was set stays where it was counted, so the
    boundary falls after it, never across it (the game that ended in the
    very millisecond of a ``/season end`` is in exactly one season).

    >>> after_recorded(100.0, None), after_recorded(100.0, 100.0) > 100.0, after_recorded(100.0, 100.5) > 100.5
    (100.0, True, True)
    """
    return at if last is None else max(at, math.nextafter(last, math.inf))


def season_record(row: Sequence[Any]) -> dict[str, Any]:
    """A row ``id, guild_id, name, starts_at, ends_at, meta`` (meta as JSON text)."""
    return {"id": row[0], "guild_id": row[1], "name": row[2], "starts_at": row[3], "ends_at": row[4],
            "meta": json.loads(row[5] or "{}")}


def record_scopes(record: GameRecord, seasons: Sequence[Sequence[Any]]) -> list[int]:
    """The scopes a game counts in: global, its guild's, and every season of
    its guild or of the global calendar (``guild_id`` 0) whose span
    ``[starts_at, ends_at)`` holds its end (*seasons*: rows ``id, guild_id,
    starts_at, ends_at``): a game at a boundary counts in the season that
    starts there, once.

    >>> game = GameRecord(1, 5, 1, "cards", 0.0, 100.0, 1, 1, False, True, [])
    >>> record_scopes(game, [(1, 5, 0.0, 100.0), (2, 5, 100.0, None), (3, 0, 50.0, 200.0), (4, 6, 0.0, None)])
    [0, 5, -2, -3]
    """
    out = [0] if not record.guild_id else [0, record.guild_id]
    for season_id, guild_id, starts_at, ends_at in seasons:
        if guild_id in (0, record.guild_id or 0) and starts_at <= record.ended_at and (
                ends_at is None or record.ended_at < ends_at):
            out.append(-season_id)
    return out


def check_record(record: GameRecord) -> None:
    game_code(record.game)
    users = [p.user_id for p in record.players if p.user_id is not None]
    if len(set(users)) != len(users):
        raise ValueError("a user appears twice in one game")


class GroupRecorder:
    """``record_game`` with group commit, for a backend that supplies
    ``_record_records(records) -> [game id | None | exception, ...]`` (one
    transaction, each record failing alone).

    Games recorded while a recording transaction is running wait and go
    together into the next one (up to ``RECORD_BATCH``).  A lone call costs
    one transaction.
    """

    _record_records: Callable[[list[GameRecord]], Awaitable[list[Any]]]

    def _init_recorder(self) -> None:
        self._pending: list[tuple[GameRecord, asyncio.Future[int | None]]] = []
        self._recorder: asyncio.Task[None] | None = None
        self._recording = False  # a recording transaction is in flight

    async def record_game(self, record: GameRecord) -> int | None:
        """Store a finished game and update counters and ratings, once.

        Returns the new game id, or None if a game of ``record.table_id`` is
        already recorded (safe to call twice, or concurrently, from any
        process).  Counters update in the global scope and the guild's;
        ratings only if ``record.rated``.  Computer players (``user_id``
        None) are stored in the game's standings only.
        """
        check_record(record)
        if not self._recording:
            # nobody is recording: write it now, no queue, no task
            self._recording = True
            try:
                (result,) = await self._record_records([record])
            finally:
                if self._pending:  # arrived meanwhile: one transaction for all of them, next
                    # (still "recording" until that task has written them: a call arriving
                    # before it runs joins the group instead of starting a transaction of its own)
                    self._recorder = asyncio.create_task(self._record_pending())
                else:
                    self._recording = False
            if isinstance(result, BaseException):
                raise result
            return result
        future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self._pending.append((record, future))
        return await future

    async def _record_pending(self) -> None:
        try:
            await self._record_queue()
        finally:
            self._recording = False

    async def _record_queue(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:RECORD_BATCH], self._pending[RECORD_BATCH:]
            try:
                results = await self._record_records([record for record, _ in batch])
            except BaseException as exc:  # the transaction failed as a whole
                results = [exc] * len(batch)
            for (_, future), result in zip(batch, results):
                if future.done():  # the caller gave up waiting
                    continue
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    async def _finish_recording(self) -> None:
        if self._recorder is not None:
            await self._recorder  # games already handed to record_game are written
