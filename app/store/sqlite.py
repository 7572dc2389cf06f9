"""The bot's persistence layer: one SQLite file through aiosqlite.

    store = await open_store("data/bot.db")    # migrates, starts checkpoints
    table_id = await store.create_table(guild_id, channel_id, game, {"message": 1})
    await store.save_table(table_id, status="playing", meta={...},
                           actions=[(0, "play 12")], first_index=0)
    game_id = await store.record_game(GameRecord(...))   # None if already recorded
    page = await store.leaderboard(game, guild_id, by="rating", page=3)   # game: a registry key
    await store.close()

Connections.  Every SQLite call runs on an aiosqlite worker thread, never on
the event loop.  Three connections to one WAL file:

* ``_w`` writes.  Every write is one explicit ``BEGIN IMMEDIATE ... COMMIT``
  transaction (autocommit mode, nothing implicit) run as ONE call on the
  connection's aiosqlite worker thread (:meth:`Store._write`): one thread
  hop per transaction instead of one per statement, and transactions never
  interleave.
* ``_r`` reads (``query_only``).  Reads see the last committed state and
  never wait behind a write transaction.
* ``_c`` checkpoints.  ``wal_autocheckpoint`` is 0 on every connection, so a
  commit never pays for a checkpoint (those are the 20-30 ms spikes);
  instead :meth:`Store.checkpoint` runs ``PRAGMA wal_checkpoint(PASSIVE)`` on
  its own connection/thread, so neither reads nor writes queue behind it.
  ``Store.open`` starts a background task calling it every
  ``checkpoint_interval`` seconds (``None`` = the caller calls it).
  ``synchronous=NORMAL``: a commit is durable against a crash of the
  process; a power cut may lose the last commits since the last checkpoint,
  never corrupt the file.

Recording.  ``record_game`` is one transaction in one thread hop: read
"already recorded?" and the current ratings and counters, rate
(:mod:`app.ratings`), insert the game and its standings, write eight-ish
``stats`` rows (global and guild scope) together with their sort keys;
triggers move the board counts.  Most of the cost is pages written to the
WAL (~80 a game, each index entry that moves is two), so an existing row
gets an UPDATE naming only the columns that change: a loser's wins key, an
unrated game's rating, a win rate that cannot move are not rewritten, and
neither are their index entries and board counts.  Calls that arrive while
a recording transaction runs are committed together (group commit,
``RECORD_BATCH``), each in a SAVEPOINT.

Leaderboards (details in :mod:`app.store.sqlite_migrations`).  Each board is an index on
a one-column text sort key in ``stats`` plus a two-level order-statistic
index kept exact by triggers in the same transaction: ``buckets`` (<= 1024
consecutive entries each) and ``bucket_groups`` (<= 64 consecutive buckets).
A rank sums the groups before the player's group, the buckets of that group
before the player's bucket, and counts < 1024 index entries; a page finds
its group and bucket by running count (a few dozen group rows, <= 64 bucket
rows) and seeks from the bucket's lower bound with OFFSET < 1024 over the
covering index.  Nothing is held in memory: opening costs the migrations
check only, whatever the size.  A rank, a profile, a keyset page are each
ONE statement; a numbered page is three in one read transaction; each costs
one thread hop.  ``Page.first``/``Page.last`` are keyset
cursors: ``leaderboard(..., after=page.last)`` is the next page,
``before=page.first`` the previous one, with exact ranks.

Boards with another threshold (``min_games`` other than ``MIN_GAMES`` on
the rating and win-rate boards) fall back to plain ``ORDER BY ... OFFSET``
/ ``COUNT`` queries on the same keys: correct, but O(N).

Tie-breaks: equal values order by user id (ascending) on every board; the
rating and win rate are compared after rounding to 1e-9 and 1e-15.
``rank`` = 1 + entries strictly ahead, so ranks are unique and agree with
page contents.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import math
import sqlite3
import time
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import aiosqlite

from app import ratings
from app.store.api import GameDetail, HistoryEntry, NightRow
from app.store.base import (
    ACTIVE, ACTIVE_DAYS, CLOSED, GUILD_DEFAULTS, MIN_GAMES, ChannelBusy, GameRecord,
    GroupRecorder, Page, SeasonPlan, StoreUnavailable, TableRecord, check_plans,
    board_number as _board_number, game_code as _game_code, night_record as _night, page_of, profile_of,
    table_record as _table, UNTOLD_FOR, TIE_LOW, after_recorded, record_scopes, scope_of, season_record,
)
from app.store.sqlite_migrations import (
    BOARD_TRIGGERS, BOARD_TRIGGER_NAMES, BOARDS, GAME_CODES, REBUILD_BUCKETS, VALUE_EXPR, migrate, visible_key,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How long a write waits for a lock held by another connection or process
#: (``busy_timeout``, ms).  Under Discord's 3 s: a click whose save meets a
#: locked file is told "not saved" (or was deferred first, see cogs/tables.py).
BUSY_TIMEOUT_MS = 2000
#: How long opening waits for the lock: another process of a shard cluster may
#: be migrating the same file (processes started together migrate it once).
OPEN_BUSY_TIMEOUT_MS = 30000


# -- SQL ---------------------------------------------------------------------

_PRAGMAS = (
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA wal_autocheckpoint = 0",
    "PRAGMA busy_timeout = {busy_ms}",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA secure_delete = FAST",
    "PRAGMA cache_size = -{cache_kib}",
    "PRAGMA mmap_size = {mmap_bytes}",
)

_CREATE_TABLE = """
INSERT INTO tables (guild_id, channel_id, game, status, meta, created_at, updated_at)
VALUES (?, ?, ?, 'lobby', ?, ?, ?) RETURNING id
"""
_UPDATE_TABLE = "UPDATE tables SET status = ?, meta = ?, updated_at = ? WHERE id = ?"
_INSERT_ACTION = """
INSERT INTO table_actions (table_id, idx, seat, action) VALUES (?, ?, ?, ?)
ON CONFLICT (table_id, idx) DO NOTHING
"""
_CLOSE_TABLE = "UPDATE tables SET status = ?, updated_at = ? WHERE id = ?"
_TABLE_COLUMNS = """
SELECT t.id, t.guild_id, t.channel_id, t.game, t.status, t.meta, t.created_at, t.updated_at,
       (SELECT json_group_array(json_array(a.seat, a.action))
        FROM (SELECT seat, action FROM table_actions WHERE table_id = t.id ORDER BY idx) AS a)
FROM tables AS t
"""
_ACTIVE_TABLES = _TABLE_COLUMNS + "WHERE t.status IN ('lobby', 'playing') ORDER BY t.id"
_TABLE_IN_CHANNEL = (
    _TABLE_COLUMNS + "WHERE t.channel_id = ? AND t.status IN ('lobby', 'playing') ORDER BY t.id DESC LIMIT 1"
)
_TABLE_BY_ID = _TABLE_COLUMNS + "WHERE t.id = ?"
# lobbies a person hosts, outside nights (the first two terms are the partial
# index's own: SQLite then reads the index of active tables, never the history)
_OPEN_LOBBIES = (
    "SELECT count(*) FROM tables WHERE status IN ('lobby', 'playing') AND json_extract(meta, '$.night_id') IS NULL"
    " AND status = 'lobby' AND json_extract(meta, '$.host_id') = ?"
)
# closed before the thread was told (app/tables: a close is a note until told)
_UNTOLD_CLOSED = _TABLE_COLUMNS.replace("FROM tables AS t", "FROM tables AS t INDEXED BY tables_closed") + (
    "WHERE t.status IN ('cancelled', 'abandoned') AND t.updated_at > ? "
    "AND json_array_length(t.meta, '$.notes') > 0 ORDER BY t.id")

# record_game: inside BEGIN IMMEDIATE, one read for "already recorded?" and
# the current ratings of the humans in every scope.
_RECORD_READ = """
SELECT NULL, NULL, NULL, NULL, NULL, NULL FROM games WHERE table_id = :table_id
UNION ALL
SELECT scope, user_id, coalesce(mu, parked_mu), coalesce(sigma, parked_sigma), games, wins FROM stats
WHERE game = :game AND scope IN (SELECT value FROM json_each(:scopes)) AND user_id IN (SELECT value FROM json_each(:users))
"""
# the seasons of a guild and of the global calendar that may hold a game's end
_SEASONS_AT = """
SELECT id, guild_id, starts_at, ends_at FROM seasons
WHERE guild_id IN (0, :g) AND starts_at <= :t AND (ends_at IS NULL OR ends_at > :t)
"""
_INSERT_GAME = """
INSERT INTO games (table_id, guild_id, channel_id, game, started_at, ended_at, seed, rounds,
                   has_bots, rated, n_players)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
"""
_INSERT_RESULT = """
INSERT INTO game_players (game_id, seat, user_id, name, score, place, stats)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""
# Per-game counters (whatever the engine's Result.stats holds, declared by the
# game's spec in core.registry) live in one JSON object per stats row, so a new
# game needs no migration: a game's counters are added key by key.
_ADD_COUNTERS = """(SELECT json_group_object(key, total) FROM (
        SELECT key, SUM(value) AS total FROM (
            SELECT key, value FROM json_each(stats.counters)
            UNION ALL SELECT key, value FROM json_each({new})
        ) GROUP BY key))"""
# After the upsert the four sort keys must match the new counters: a new
# row computes them from its own values, an existing one from the values
# the DO UPDATE is writing (there, bare names are the OLD values).
_AFTER_UPSERT = {
    "games": "(games + 1)",
    "wins": "(wins + excluded.wins)",
    "mu": "coalesce(excluded.mu, mu)",
    "sigma": "coalesce(excluded.sigma, sigma)",
}
_UPSERT_STATS = f"""
INSERT INTO stats (game, scope, user_id, games, wins, score_sum, counters,
                   rated_games, mu, sigma, rated_at, k_rating, k_wins, k_rate, k_games)
SELECT *, {", ".join(visible_key(board, hidden="0") for board in BOARDS)}
FROM (SELECT :g AS game, :s AS scope, :u AS user_id, 1 AS games, :wins AS wins, :score AS score_sum,
             :counters AS counters, :rated AS rated_games, :mu AS mu, :sigma AS sigma,
             CASE WHEN :mu IS NOT NULL THEN :t END AS rated_at)
WHERE true
ON CONFLICT (game, scope, user_id) DO UPDATE SET
    games = games + 1,
    wins = wins + excluded.wins,
    score_sum = score_sum + excluded.score_sum,
    counters = {_ADD_COUNTERS.format(new="excluded.counters")},
    rated_games = rated_games + excluded.rated_games,
    mu = coalesce(excluded.mu, mu),
    sigma = coalesce(excluded.sigma, sigma),
    rated_at = coalesce(excluded.rated_at, rated_at),
    parked_mu = CASE WHEN excluded.mu IS NULL THEN parked_mu END,
    parked_sigma = CASE WHEN excluded.mu IS NULL THEN parked_sigma END,
    {", ".join(f"{col} = {visible_key(board, **_AFTER_UPSERT)}" for board, (_, col) in BOARDS.items())}
"""
# An existing row (read in the same transaction) is updated in place, and
# only the columns that change are written: a column left out of the SET
# list leaves its index entry (and the board counters) untouched, so a game
# rewrites only the board index entries whose key really moves.
_AFTER_UPDATE = {
    "games": "(games + 1)",
    "wins": "(wins + :wins)",
    "mu": "coalesce(:mu, mu)",
    "sigma": "coalesce(:sigma, sigma)",
}
_UPDATE_COUNTERS = (
    "games = games + 1",
    "score_sum = score_sum + :score",
    f"counters = {_ADD_COUNTERS.format(new=':counters')}",
    "rated_games = rated_games + :rated",
    f"k_games = {visible_key(3, **_AFTER_UPDATE)}",  # games always moves
)
#: what else an update may need to write, by name (see ``Store._stats_rows``)
_UPDATE_OPTIONAL = {
    "wins": ("wins = wins + :wins", f"k_wins = {visible_key(1, **_AFTER_UPDATE)}"),
    "rating": ("mu = :mu", "sigma = :sigma", "rated_at = :t", "parked_mu = NULL", "parked_sigma = NULL"),
    "k_rating": (f"k_rating = {visible_key(0, **_AFTER_UPDATE)}",),
    "k_rate": (f"k_rate = {visible_key(2, **_AFTER_UPDATE)}",),
}
#: the update of an existing stats row, per set of optional changes (16
#: statements, each prepared once per connection by sqlite3's cache)
_UPDATE_STATS = {
    frozenset(names): "UPDATE stats SET "
    + ", ".join((*_UPDATE_COUNTERS, *(item for name in names for item in _UPDATE_OPTIONAL[name])))
    + " WHERE game = :g AND scope = :s AND user_id = :u"
    for n in range(len(_UPDATE_OPTIONAL) + 1)
    for names in itertools.combinations(_UPDATE_OPTIONAL, n)
}


def _board_sql(board: int, col: str) -> dict[str, str]:
    """The statements of one indexed board (sort-key column *col*).

    Named parameters: ``:g`` game code, ``:s`` scope, ``:b`` board number,
    ``:k`` a sort key (cursor), ``:u`` a user id, ``:pos`` a 0-based
    position, ``:n`` a page size.  Every bound on ``s.{col}`` is a single
    column, so SQLite seeks the index even when the bound is a subquery.
    """
    on_board = f"s.game = :g AND s.scope = :s AND s.{col} IS NOT NULL"
    board_rows = "game = :g AND scope = :s AND board = :b"

    def holding(key: str) -> str:
        # CTEs ``g`` and ``f``: the group and the bucket holding *key* (the
        # last whose lower bound is <= key; the sentinels '' always exist)
        return f"""
            g AS (SELECT lo FROM bucket_groups WHERE {board_rows} AND lo <= {key} ORDER BY lo DESC LIMIT 1),
            f AS (SELECT lo FROM buckets WHERE {board_rows} AND lo <= {key} ORDER BY lo DESC LIMIT 1)
        """

    def ahead(key: str) -> str:
        # entries strictly ahead of *key*: whole groups before g, whole
        # buckets of g before f, entries of f below key
        return f"""
            (SELECT TOTAL(cnt) FROM bucket_groups WHERE {board_rows} AND lo < (SELECT lo FROM g))
            + (SELECT TOTAL(cnt) FROM buckets
               WHERE {board_rows} AND lo >= (SELECT lo FROM g) AND lo < (SELECT lo FROM f))
            + (SELECT COUNT(*) FROM stats AS s
               WHERE {on_board} AND s.{col} >= (SELECT lo FROM f) AND s.{col} < {key})
        """

    def ahead_alone(key: str) -> str:
        # the same without the CTEs (the group and bucket looked up inline)
        return (ahead(key)
                .replace("(SELECT lo FROM g)", f"(SELECT lo FROM bucket_groups WHERE {board_rows} AND lo <= {key}"
                                               " ORDER BY lo DESC LIMIT 1)")
                .replace("(SELECT lo FROM f)", f"(SELECT lo FROM buckets WHERE {board_rows} AND lo <= {key}"
                                               " ORDER BY lo DESC LIMIT 1)"))

    def tie(key: str) -> str:  # the lowest key of *key*'s value (app.store.base.tie_key)
        return f"(substr({key}, 1, 16) || '{TIE_LOW}')"

    total = f"(SELECT TOTAL(cnt) FROM bucket_groups WHERE {board_rows})"
    row = f"s.user_id, p.name, {VALUE_EXPR[board]}, s.games, s.wins, s.{col}"
    return {
        # group and bucket rows of the board, in order (see Store._find_page)
        "groups": f"SELECT lo, cnt FROM bucket_groups WHERE {board_rows} ORDER BY lo",
        "buckets": f"SELECT lo, cnt FROM buckets WHERE {board_rows} AND lo >= :lo AND lo < :hi ORDER BY lo",
        # :n rows from the entry :skip places after bound :lo (the OFFSET runs
        # over the covering index only)
        "page": f"""
            WITH start AS (
                SELECT s.{col} AS k FROM stats AS s
                WHERE {on_board} AND s.{col} >= :lo ORDER BY s.{col} LIMIT 1 OFFSET :skip
            )
            SELECT {row}
            FROM stats AS s JOIN players AS p ON p.user_id = s.user_id
            WHERE {on_board} AND s.{col} >= (SELECT k FROM start)
            ORDER BY s.{col} LIMIT :n
        """,
        # keyset: the :n entries after key :k, and how many entries are <= :k
        # (keys are 32 hex digits, so :k || ' ' sorts right after :k)
        "after": f"""
            WITH {holding(":k || ' '")}
            SELECT {row}, {ahead(":k || ' '")}, {total}
            FROM stats AS s JOIN players AS p ON p.user_id = s.user_id
            WHERE {on_board} AND s.{col} > :k
            ORDER BY s.{col} LIMIT :n
        """,
        # keyset: the :n entries before key :k (nearest first), and how many are < :k
        "before": f"""
            WITH {holding(':k')}
            SELECT {row}, {ahead(':k')}, {total}
            FROM stats AS s JOIN players AS p ON p.user_id = s.user_id
            WHERE {on_board} AND s.{col} < :k
            ORDER BY s.{col} DESC LIMIT :n
        """,
        # a player's key on the board (NULL = not on it), entries ahead, and
        # entries with a better value (equal values share a place)
        "rank": f"""
            WITH me AS (SELECT s.{col} AS k FROM stats AS s WHERE {on_board} AND s.user_id = :u),
            {holding('(SELECT k FROM me)')}
            SELECT (SELECT k FROM me) AS k, {ahead('(SELECT k FROM me)')} AS ahead,
                   {ahead_alone(tie('(SELECT k FROM me)'))} AS tied
        """,
        # entries with a better value than key :k's
        "tied": f"SELECT {ahead_alone(tie(':k'))}",
    }


_BOARD_SQL = {number: _board_sql(number, col) for number, (_, col) in BOARDS.items()}


def _plain_sql(board: int) -> dict[str, str]:
    """Fallback statements for a board with another games threshold (``:min``).

    The same sort key as the indexed board, computed per row: O(N).
    """
    key = visible_key(board, "games >= :min AND mu IS NOT NULL" if board == 0 else "games >= :min")
    where = f"game = :g AND scope = :s AND {key} IS NOT NULL"
    return {
        "page": f"""
            SELECT s.user_id, p.name, {VALUE_EXPR[board]}, s.games, s.wins, k,
                   (SELECT COUNT(*) FROM stats WHERE {where})
            FROM (SELECT user_id, games, wins, mu, sigma, {key} AS k FROM stats WHERE {where}) AS s
            JOIN players AS p ON p.user_id = s.user_id
            ORDER BY k LIMIT :n OFFSET :pos
        """,
        "count": f"SELECT COUNT(*) FROM stats WHERE {where}",
        "rank": f"""
            WITH me AS (SELECT {key} AS k FROM stats WHERE {where} AND user_id = :u)
            SELECT (SELECT k FROM me), (SELECT COUNT(*) FROM stats WHERE {where} AND {key} < (SELECT k FROM me)),
                   (SELECT COUNT(*) FROM stats WHERE {where}
                    AND {key} < substr((SELECT k FROM me), 1, 16) || '{TIE_LOW}')
        """,
        "tied": f"SELECT COUNT(*) FROM stats WHERE {where} AND {key} < substr(:k, 1, 16) || '{TIE_LOW}'",
    }


_PLAIN_SQL = {number: _plain_sql(number) for number in BOARDS}

# A profile with its rank on the rating board (board 0), in one statement.
_PROFILE = f"""
WITH me AS (
    SELECT s.*, p.name FROM stats AS s JOIN players AS p ON p.user_id = s.user_id
    WHERE s.game = :g AND s.scope = :s AND s.user_id = :u
), rank AS ({_BOARD_SQL[0]["rank"]})
SELECT name, games, wins, score_sum, counters, rated_games,
       coalesce(mu, parked_mu), coalesce(sigma, parked_sigma), k_rating,
       CASE WHEN k_rating IS NOT NULL THEN 1 + (SELECT tied FROM rank) END, parked_mu IS NOT NULL AND mu IS NULL
FROM me
"""

_HISTORY = """
SELECT g.id, g.game, g.guild_id, g.ended_at, gp.place, gp.score, g.n_players, g.table_id
FROM game_players AS gp JOIN games AS g ON g.id = gp.game_id
WHERE gp.user_id = :u
  AND (:guild IS NULL OR g.guild_id = :guild)
  AND (:game IS NULL OR g.game = :game)
ORDER BY gp.game_id DESC
LIMIT :n
"""
_NIGHT_COLUMNS = "SELECT id, guild_id, channel_id, game, status, meta FROM nights "
_CREATE_NIGHT = """
INSERT INTO nights (guild_id, channel_id, game, status, meta, created_at, updated_at)
VALUES (?, ?, ?, 'signup', ?, ?, ?) RETURNING id
"""
_SAVE_NIGHT = "UPDATE nights SET status = ?, meta = ?, updated_at = ? WHERE id = ?"
_INSERT_NIGHT_PLAYER = """
INSERT INTO night_players (night_id, user_id, guild_id, game, place, points, wins, games)
SELECT :night, :user_id, guild_id, game, :place, :points, :wins, :games FROM nights WHERE id = :night
ON CONFLICT (night_id, user_id) DO NOTHING
"""
# (an ended night whose recap was not posted yet is still to be shown)
_OPEN_NIGHTS = _NIGHT_COLUMNS + "WHERE status != 'ended' OR json_extract(meta, '$.recap_due') ORDER BY id"
_NIGHT_IN_CHANNEL = _NIGHT_COLUMNS + "WHERE channel_id = ? ORDER BY status = 'ended', id DESC LIMIT 1"
_NIGHT_RECORD = """
SELECT count(*), sum(place = 1) FROM night_players
WHERE user_id = :u AND game = :g AND (:guild IS NULL OR guild_id = :guild)
"""
_TABLE_RESULT = """
SELECT p.seat, p.user_id, p.score, p.place FROM games AS g JOIN game_players AS p ON p.game_id = g.id
WHERE g.table_id = ? ORDER BY p.seat
"""


_GAME_DETAIL = """
SELECT g.id, g.table_id, g.guild_id, g.channel_id, g.game, g.started_at, g.ended_at, g.seed,
       g.rounds, g.has_bots, g.rated, g.n_players,
       (SELECT json_group_array(json_object(
                   'seat', r.seat, 'user_id', r.user_id, 'name', coalesce(p.name, r.name),
                   'score', r.score, 'place', r.place, 'computer', json(iif(r.user_id IS NULL, 'true', 'false')),
                   'stats', json(r.stats)))
        FROM (SELECT * FROM game_players WHERE game_id = g.id ORDER BY place, seat) AS r
        LEFT JOIN players AS p ON p.user_id = r.user_id)
FROM games AS g WHERE g.id = ?
"""
# park the ratings not changed since :cut (the stats_awake index finds them)
# (an ended season's board stays as it ended: kept browsable, its ratings are not parked;
# each row's season looked up by id, not every ended season read)
_PARK = """
UPDATE stats SET parked_mu = mu, parked_sigma = sigma, mu = NULL, sigma = NULL
WHERE mu IS NOT NULL AND rated_at < :cut AND {where}
  AND NOT EXISTS (SELECT 1 FROM seasons WHERE id = -stats.scope AND ends_at <= :now)
"""
# the scopes of guilds with a window of their own (a JSON list): theirs and their seasons'
_WINDOWED = "SELECT value FROM json_each(:custom) UNION ALL SELECT -id FROM seasons WHERE guild_id IN " \
            "(SELECT value FROM json_each(:custom))"
_RATED_AT = "SELECT rated_at FROM stats WHERE game = :g AND scope = :s AND user_id = :u"
# a member's rows of a guild's boards (its scope and its seasons'), by key
_HIDE = f"""
UPDATE stats SET hidden = :h
WHERE game IN ({", ".join(str(c) for c in sorted(GAME_CODES.values()))})
  AND scope IN (SELECT :g UNION ALL SELECT -id FROM seasons WHERE guild_id = :g)
  AND user_id = :u AND hidden <> :h
"""
_EXCLUDED_OF = "SELECT user_id FROM board_exclusions WHERE guild_id = ? ORDER BY at, user_id"
_IS_EXCLUDED = "SELECT 1 FROM board_exclusions WHERE guild_id = ? AND user_id = ?"
_SEASON_COLUMNS = "SELECT id, guild_id, name, starts_at, ends_at, meta FROM seasons "
_SEASON_BY_ID = _SEASON_COLUMNS + "WHERE id = ?"
_SEASONS_OF = _SEASON_COLUMNS + "WHERE guild_id = ? ORDER BY starts_at DESC"
_SEASONS_ENDED = (_SEASON_COLUMNS + "WHERE ends_at <= ? AND coalesce(json_extract(meta, '$.closed'), 0) = 0"
                  " ORDER BY ends_at, id")
_SEASON_NAMED = "SELECT id FROM seasons WHERE guild_id = :g AND name = :n"
_SEASON_OVERLAP = """
SELECT 1 FROM seasons WHERE guild_id = :g AND (:e IS NULL OR starts_at < :e) AND (ends_at IS NULL OR ends_at > :a)
"""
_CREATE_SEASON = "INSERT INTO seasons (guild_id, name, starts_at, ends_at) VALUES (:g, :n, :a, :e) RETURNING id"
_END_SEASON = "UPDATE seasons SET ends_at = :t WHERE id = :id AND starts_at < :t AND (ends_at IS NULL OR ends_at > :t)"
# seasons planned after the end (a calendar's next one) that no game counted in yet
_DROP_PLANNED = """
DELETE FROM seasons WHERE guild_id = (SELECT guild_id FROM seasons WHERE id = :id) AND starts_at >= :t
  AND id != :id AND NOT EXISTS (SELECT 1 FROM stats WHERE game IN ({codes}) AND scope = -seasons.id)
""".format(codes=", ".join(str(code) for code in sorted(GAME_CODES.values())))
_SET_SEASON_META = "UPDATE seasons SET meta = ? WHERE id = ?"
# the seasons of the names asked for (a JSON list of [guild id, name])
_SEASONS_NAMED_IN = """
SELECT s.id, s.guild_id, s.name FROM json_each(?) AS p
JOIN seasons AS s ON s.guild_id = json_extract(p.value, '$[0]') AND s.name = json_extract(p.value, '$[1]')
"""


# the end of the guild's last game recorded that ended in [:a, :e) (games_guild_end)
_LAST_GAME_IN = """
SELECT max(ended_at) FROM games WHERE guild_id = :g AND ended_at >= :a AND (:e IS NULL OR ended_at < :e)
"""


def _boundary(conn: sqlite3.Connection, guild_id: int, at: float, until: float | None) -> float:
    """In a write transaction (recordings wait): where a season of
    *guild_id* that runs until *until* starts, or ends, when it is made or
    ended at *at* (:func:`app.store.base.after_recorded`; the global
    calendar's seasons are made ahead and never ended by hand: *at*)."""
    if not guild_id:
        return at
    last = conn.execute(_LAST_GAME_IN, {"g": guild_id, "a": at, "e": until}).fetchone()[0]
    return after_recorded(at, last)


def _make_season(conn: sqlite3.Connection, plan: SeasonPlan) -> tuple[int | None, bool]:
    """In a write transaction: the guild's season of the plan's name (not
    made), else the plan's season made, from its start or just after the
    last game it would hold that is recorded already (a season never takes
    a game counted before it was there); ``(None, False)`` when its span
    overlaps another season of the guild (a game would count in both) or
    nothing is left of it."""
    same = conn.execute(_SEASON_NAMED, {"g": plan.guild_id, "n": plan.name}).fetchone()
    if same is not None:
        return int(same[0]), False
    start = _boundary(conn, plan.guild_id, plan.starts_at, plan.ends_at)
    if plan.ends_at is not None and start >= plan.ends_at:
        return None, False
    params = {"g": plan.guild_id, "n": plan.name, "a": start, "e": plan.ends_at}
    if conn.execute(_SEASON_OVERLAP, params).fetchone() is not None:
        return None, False
    return int(conn.execute(_CREATE_SEASON, params).fetchone()[0]), True
_GUILDS_WITH_SETTING = "SELECT guild_id, value FROM guild_settings WHERE key = ?"
_GUILD_SETTINGS = "SELECT key, value FROM guild_settings WHERE guild_id = ?"
_SET_GUILD_SETTING = """
INSERT INTO guild_settings (guild_id, key, value) VALUES (?, ?, ?)
ON CONFLICT (guild_id, key) DO UPDATE SET value = excluded.value
"""


async def _in_worker(db: aiosqlite.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """``fn(conn)`` with *db*'s sqlite3 connection, on *db*'s own worker thread.

    aiosqlite has no public call for that; ``Connection._execute`` (and ``_conn``)
    are the primitive its own ``execute_fetchall`` is built on: the one place the
    store reaches into aiosqlite (pinned 0.22.1; tests/unit/test_store.py checks
    they are there, and covers every read and write).
    """
    result: T = await db._execute(lambda: fn(db._conn))
    return result


def _daemon(db: aiosqlite.Connection) -> aiosqlite.Connection:
    """*db* before it starts, with its worker thread a daemon.

    aiosqlite runs each connection in a thread of its own that is not a
    daemon: a process that ends with a connection still open (a crash before
    :meth:`SqliteStore.close`, a failed test holding its store) would wait for
    that thread for ever instead of exiting.  What was committed is in the
    WAL already; what was not is rolled back by SQLite at the next open.
    """
    thread = getattr(db, "_thread", None)
    if thread is not None and not thread.is_alive():
        thread.daemon = True
    return db


class SqliteStore(GroupRecorder):
    """Async persistence for tables, results, stats and settings (see module doc)."""

    backend = "sqlite"

    def __init__(self, w: aiosqlite.Connection, r: aiosqlite.Connection, c: aiosqlite.Connection) -> None:
        self._w, self._r, self._c = w, r, c
        self._checkpointer: asyncio.Task[None] | None = None
        self._init_recorder()

    # -- lifecycle -----------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path: str,
        *,
        checkpoint_interval: float | None = 30.0,
        cache_mib: int = 64,
        mmap_mib: int = 0,
        page_size: int = 4096,
    ) -> "SqliteStore":
        """Open (creating if needed) and migrate the database at *path*.

        ``cache_mib`` is SQLite's page cache per connection (three
        connections); ``mmap_mib`` > 0 maps that much of the file.
        """
        if path == ":memory:" or str(path).startswith("file::memory:"):
            raise ValueError("Store needs a database file (it opens three connections to it)")
        conns: list[aiosqlite.Connection] = []
        try:
            # The writer switches the file to WAL and migrates before the
            # other two connections open, so they all see a WAL database.
            for i in range(3):
                db = _daemon(aiosqlite.connect(path, isolation_level=None))
                conns.append(await db)
                for pragma in _PRAGMAS:
                    await db.execute(pragma.format(cache_kib=cache_mib * 1024, mmap_bytes=mmap_mib << 20,
                                                  busy_ms=BUSY_TIMEOUT_MS))
                if i == 0:
                    await db.execute(f"PRAGMA busy_timeout = {OPEN_BUSY_TIMEOUT_MS}")
                    # only takes effect on a new, empty file
                    await db.execute(f"PRAGMA page_size = {int(page_size)}")
                    mode = list(await db.execute_fetchall("PRAGMA journal_mode = WAL"))[0][0]
                    if mode != "wal":
                        log.warning("journal_mode is %s, not wal", mode)
                    await db.execute("PRAGMA journal_size_limit = 67108864")
                    version = await migrate(db)
                    # A file that opened read-only (its permissions, a read-only mount) shows
                    # only at the first write: try one now, at start-up, and undo it.
                    await db.execute("BEGIN IMMEDIATE")
                    try:
                        await db.execute(f"PRAGMA user_version = {int(version)}")
                    finally:
                        await db.execute("ROLLBACK")
                    await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            w, r, c = conns
            await r.execute("PRAGMA query_only = ON")
        except BaseException as error:
            for db in conns:
                with contextlib.suppress(Exception):
                    await db.close()
            if isinstance(error, (sqlite3.Error, OSError)):
                raise StoreUnavailable(str(path), str(error)) from error
            raise
        store = cls(w, r, c)
        if checkpoint_interval is not None:
            store._checkpointer = asyncio.create_task(store._checkpoint_loop(checkpoint_interval))
        return store

    async def close(self) -> None:
        """Stop the checkpoint task, checkpoint once and close the connections."""
        if self._checkpointer is not None:
            self._checkpointer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checkpointer
            self._checkpointer = None
        await self._finish_recording()
        with contextlib.suppress(Exception):
            await self._c.execute("PRAGMA wal_checkpoint(PASSIVE)")
        for db in (self._r, self._c, self._w):
            await db.close()

    async def checkpoint(self, mode: str = "PASSIVE") -> tuple[int, int, int]:
        """Run a WAL checkpoint on the checkpoint connection.

        Returns SQLite's ``(busy, wal_frames, checkpointed_frames)``.
        PASSIVE (the background task's) never blocks writers or readers;
        frames still needed by an open reader are left for the next call.
        Under a continuous stream of writes it cannot catch up, so the WAL
        grows until writes pause; the first write after a complete
        checkpoint restarts it, and ``journal_size_limit`` trims the file to
        64 MiB.  ``mode="TRUNCATE"`` forces that at a quiet moment (it waits
        for the current writer, up to ``busy_timeout``).
        """
        if mode not in ("PASSIVE", "FULL", "RESTART", "TRUNCATE"):
            raise ValueError(f"unknown checkpoint mode {mode!r}")
        rows = list(await self._c.execute_fetchall(f"PRAGMA wal_checkpoint({mode})"))
        busy, frames, done = rows[0]
        return int(busy), int(frames), int(done)

    async def _checkpoint_loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                # a pass that did not catch up (writes arrived meanwhile) is
                # followed by short ones over the small remainder: the WAL
                # restarts only after a pass leaves nothing behind
                for _ in range(5):
                    busy, frames, done = await self.checkpoint()
                    if busy or done >= frames:
                        break
                    await asyncio.sleep(0.02)
            except Exception:
                log.exception("WAL checkpoint failed")

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(conn, *args)`` in one write transaction, in ONE thread hop.

        ``fn`` is plain sqlite3 code; it runs on the write connection's
        aiosqlite worker thread between ``BEGIN IMMEDIATE`` and ``COMMIT``
        (``ROLLBACK`` if it raises), never on the event loop.  The worker
        runs one queued call at a time, so write transactions never
        interleave and need no lock (:func:`_in_worker`).
        """
        def transaction(conn: sqlite3.Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn, *args)
                conn.execute("COMMIT")
            except BaseException:
                # Also when COMMIT itself failed (disk full, I/O error): the
                # transaction is still open then, and must not swallow the
                # next write.
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise
            return result

        return await _in_worker(self._w, transaction)

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(conn, *args)`` on the read connection's worker thread: one
        thread hop for several statements (same primitive as :meth:`_write`)."""
        return await _in_worker(self._r, lambda conn: fn(conn, *args))

    # -- tables that survive a restart ---------------------------------------

    async def create_table(self, guild_id: int, channel_id: int, game: str, meta: dict[str, Any]) -> int:
        """Save a new lobby; returns its id.  Raises :class:`ChannelBusy` when
        the channel holds an active table already (a unique index: two
        concurrent creations cannot both succeed, whichever process runs them)."""
        now = time.time()
        params = (guild_id, channel_id, game, json.dumps(meta), now, now)
        try:
            return await self._write(lambda conn: int(conn.execute(_CREATE_TABLE, params).fetchone()[0]))
        except sqlite3.IntegrityError as error:
            if "tables.channel_id" not in str(error):
                raise
            raise ChannelBusy(channel_id) from None

    async def save_table(
        self,
        table_id: int,
        *,
        status: str,
        meta: dict[str, Any],
        actions: Iterable[tuple[int, str]] = (),
        first_index: int = 0,
    ) -> None:
        """Update status and meta and append actions at ``first_index..``, atomically.

        Actions already stored at an index are left as they are, so saving
        the same actions twice is harmless.  Raises ``LookupError`` for an
        unknown table.
        """
        if status not in ACTIVE + CLOSED:
            raise ValueError(f"unknown table status {status!r}")
        params = (status, json.dumps(meta), time.time(), table_id)
        rows = [(table_id, first_index + i, seat, text) for i, (seat, text) in enumerate(actions)]

        def save(conn: sqlite3.Connection) -> None:
            if conn.execute(_UPDATE_TABLE, params).rowcount != 1:
                raise LookupError(f"no table {table_id}")
            conn.executemany(_INSERT_ACTION, rows)

        await self._write(save)

    async def active_tables(self) -> list[TableRecord]:
        """Every table in 'lobby' or 'playing', with its actions, oldest first."""
        return [_table(row) for row in await self._r.execute_fetchall(_ACTIVE_TABLES)]

    async def untold_closed_tables(self) -> list[TableRecord]:
        """Tables stopped, cancelled or closed for idleness in the last
        :data:`UNTOLD_FOR` seconds whose closing the thread was not told yet
        (``meta.notes``), oldest first."""
        rows = await self._r.execute_fetchall(_UNTOLD_CLOSED, (time.time() - UNTOLD_FOR,))
        return [_table(row) for row in rows]

    async def table_in_channel(self, channel_id: int) -> TableRecord | None:
        """The active table in *channel_id* (the newest if several), or None."""
        rows = list(await self._r.execute_fetchall(_TABLE_IN_CHANNEL, (channel_id,)))
        return _table(rows[0]) if rows else None

    async def open_lobbies(self, host_id: int) -> int:
        """How many lobbies ``host_id`` hosts, outside game nights, in every
        process of this database."""
        rows = list(await self._r.execute_fetchall(_OPEN_LOBBIES, (host_id,)))
        return int(rows[0][0])

    async def table(self, table_id: int) -> TableRecord | None:
        """Any table by id, active or closed."""
        rows = list(await self._r.execute_fetchall(_TABLE_BY_ID, (table_id,)))
        return _table(rows[0]) if rows else None

    async def close_table(self, table_id: int, status: str) -> None:
        """Mark a table 'finished', 'cancelled' or 'abandoned' (it leaves ``active_tables``)."""
        if status not in CLOSED:
            raise ValueError(f"a table closes as one of {CLOSED}, not {status!r}")
        params = (status, time.time(), table_id)
        await self._write(lambda conn: conn.execute(_CLOSE_TABLE, params))

    # -- results and stats ----------------------------------------------------

    # record_game (app.store.base.GroupRecorder): group commit, each
    # record of a batch inside its own SAVEPOINT, so a bad record fails alone

    async def _record_records(self, records: list[GameRecord]) -> list[Any]:
        return await self._write(self._record_batch, records)

    @classmethod
    def _record_batch(cls, conn: sqlite3.Connection, records: list[GameRecord]) -> list[Any]:
        """Worker thread, inside the transaction: each record in a savepoint
        (a lone record needs none: if it fails, the transaction rolls back
        and ``record_game`` raises, the same outcome without the copies of
        every written page that a savepoint keeps)."""
        if len(records) == 1:
            return [cls._record_one(conn, records[0])]
        out: list[Any] = []
        for record in records:
            conn.execute("SAVEPOINT record_game")
            try:
                out.append(cls._record_one(conn, record))
            except Exception as exc:
                conn.execute("ROLLBACK TO record_game")
                out.append(exc)
            conn.execute("RELEASE record_game")
        return out

    @classmethod
    def _record_one(cls, conn: sqlite3.Connection, record: GameRecord) -> int | None:
        code = _game_code(record.game)
        # global, the guild's, and the seasons holding the game's end, read in this
        # transaction: a season that ends or starts meanwhile cannot lose or double it
        seasons = conn.execute(_SEASONS_AT, {"g": record.guild_id or 0, "t": record.ended_at}).fetchall()
        scopes = record_scopes(record, seasons)
        users = [p.user_id for p in record.players if p.user_id is not None]
        read = {"table_id": record.table_id, "game": code, "scopes": json.dumps(scopes), "users": json.dumps(users)}
        current: dict[tuple[int, int], tuple[Any, ...]] = {}
        for row in conn.execute(_RECORD_READ, read):
            if row[0] is None:  # (a scope is never NULL; season scopes are negative)
                return None  # this table's game is already recorded
            current[row[0], row[1]] = row[2:]  # mu, sigma, games, wins
        game_id = int(conn.execute(_INSERT_GAME, (
            record.table_id, record.guild_id, record.channel_id, record.game, record.started_at,
            record.ended_at, record.seed, record.rounds, int(record.has_bots), int(record.rated),
            len(record.players),
        )).fetchone()[0])
        conn.executemany(_INSERT_RESULT, [
            (game_id, p.seat, p.user_id, p.name, p.score, p.place, json.dumps(p.stats))
            for p in record.players
        ])
        # an existing row: an UPDATE writing only what changes; a new one:
        # the upsert (grouped by statement, one executemany each)
        by_sql: dict[str, list[dict[str, Any]]] = {}
        for changes, row in cls._stats_rows(record, code, scopes, current):
            sql = _UPSERT_STATS if changes is None else _UPDATE_STATS[changes]
            by_sql.setdefault(sql, []).append(row)
        for sql, rows in by_sql.items():
            conn.executemany(sql, rows)
        return game_id

    @staticmethod
    def _stats_rows(
        record: GameRecord, code: int, scopes: list[int], current: dict[tuple[int, int], tuple[Any, ...]]
    ) -> list[tuple[frozenset[str] | None, dict[str, Any]]]:
        """The stats rows to write, each with the optional changes its
        existing row needs (``_UPDATE_OPTIONAL``), None for a new row.

        *current*: ``(mu, sigma, games, wins)`` of the rows that exist.  A
        board key is left alone only when it provably stays equal: wins
        unchanged (k_wins), rating unchanged and on/off the board as before
        (k_rating), on/off the board as before and the win rate unchanged or
        off the board (k_rate; rates compared exactly, as fractions).
        """
        default = (ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA)
        now = time.time()  # when a rating changes (the activity window counts from it; as on PostgreSQL)
        out: list[tuple[frozenset[str] | None, dict[str, Any]]] = []
        for scope in scopes:
            new: list[tuple[float, float] | None] = [None] * len(record.players)
            if record.rated and len(record.players) >= 2:
                before = []
                for p in record.players:
                    old = current.get((scope, p.user_id)) if p.user_id is not None else None
                    before.append(default if old is None or old[0] is None else (old[0], old[1]))
                new = list(ratings.rate(before, [p.place for p in record.players]))
            for p, rating in zip(record.players, new):
                if p.user_id is None:
                    continue
                st = p.stats
                won = int(p.place == 1)
                mu, sigma = rating if rating is not None else (None, None)
                old = current.get((scope, p.user_id))
                changes: frozenset[str] | None = None  # a new row: the upsert computes everything
                if old is not None:
                    old_mu, _, games, wins = old
                    joins = (games >= MIN_GAMES) != (games + 1 >= MIN_GAMES)  # the 5th game
                    names = set()
                    if won:
                        names.add("wins")
                    if mu is not None:
                        names.update(("rating", "k_rating"))
                    elif old_mu is not None and joins:
                        names.add("k_rating")
                    if joins or games >= MIN_GAMES and wins * (games + 1) != (wins + won) * games:
                        names.add("k_rate")
                    changes = frozenset(names)
                out.append((changes, {
                    "g": code, "s": scope, "u": p.user_id, "wins": won, "score": p.score,
                    "counters": json.dumps({k: int(v) for k, v in st.items()
                                            if isinstance(v, (int, float)) and not isinstance(v, bool)}),
                    "rated": int(mu is not None), "mu": mu, "sigma": sigma, "t": now,
                }))
        return out

    async def profile(self, user_id: int, game: str, guild_id: int | None = None, *,
                      season: int | None = None) -> dict[str, Any] | None:
        """A player's figures for *game* in a guild (or globally, or in a
        *season*); None if never played.

        ``rank`` is the exact place on that scope's rating board (None when
        not on it: unrated, or fewer than ``MIN_GAMES`` games).
        """
        code = _game_code(game)
        params = {"g": code, "s": scope_of(guild_id, season), "b": 0, "u": user_id}
        rows = list(await self._r.execute_fetchall(_PROFILE, params))
        if not rows:
            return None
        (name, games, wins, score_sum, counters, rated_games, mu, sigma, _, rank, parked) = rows[0]
        return profile_of(user_id, game, guild_id, (name, games, wins, score_sum, counters, rated_games, mu, sigma,
                                                    rank, parked))

    async def leaderboard(
        self,
        game: str,
        guild_id: int | None = None,
        by: str = "rating",
        page: int = 0,
        page_size: int = 10,
        min_games: int = MIN_GAMES,
        *,
        after: str | None = None,
        before: str | None = None,
        season: int | None = None,
    ) -> Page:
        """One page of a board (0-based *page*), or the page after/before a cursor
        (a *season*'s board instead of the guild's or the global one).

        Boards: 'rating' (ordinal, players with >= *min_games* games and a
        rating), 'wins', 'win_rate' (>= *min_games* games), 'games'.  Order:
        value descending, then user id ascending; ``rank`` = 1 + entries
        ahead.  A *page* past the end returns the last page.
        """
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        board = _board_number(by)
        params: dict[str, Any] = {"g": _game_code(game), "s": scope_of(guild_id, season), "b": board, "n": page_size}
        if min_games != MIN_GAMES and by in ("rating", "win_rate"):
            if after is not None or before is not None:
                raise ValueError("cursors need the indexed board (min_games == MIN_GAMES)")
            return await self._plain_page(params, min_games, max(page, 0), page_size)
        sql = _BOARD_SQL[board]
        pos = max(page, 0) * page_size
        if after is not None or before is not None:
            params["k"] = after if after is not None else before
            rows = list(await self._r.execute_fetchall(sql["after" if after is not None else "before"], params))
            if before is not None:
                rows.reverse()
            if rows:
                ahead = int(rows[0][6]) - (len(rows) if before is not None else 0)
                return self._page(rows, ahead, int(rows[0][7]), page_size,
                                  await self._tied(sql, params, rows[0][5], ahead))
            # nothing beyond the cursor: the first or the last page
            pos = 0 if before is not None else -1
        rows, pos, total, tied = await self._read(self._find_page, sql, params, pos)
        if not rows:
            return Page([], 0, 0, 0)
        return self._page(rows, pos, total, page_size, tied)

    async def _tied(self, sql: dict[str, str], params: dict[str, Any], key: str, ahead: int) -> int:
        """Entries with a better value than *key*'s (*ahead* entries are before it)."""
        if ahead == 0:
            return 0
        return int(list(await self._r.execute_fetchall(sql["tied"], {**params, "k": key}))[0][0])

    @staticmethod
    def _find_page(conn: sqlite3.Connection, sql: dict[str, str], params: dict[str, Any], pos: int
                   ) -> tuple[list[Any], int, int, int]:
        """Reader's worker thread, one read transaction: the page at *pos*
        (the last page if *pos* is past the end or negative), and how many
        entries have a better value than its first (its shared place).

        Walks the group rows (a few dozen) to the last group whose running
        count is <= pos, then that group's bucket rows (<= GROUP_MAX) the same
        way, then seeks from the bucket's bound.  Three statements, one hop.
        """
        conn.execute("BEGIN")
        try:
            groups = conn.execute(sql["groups"], params).fetchall()
            total = sum(cnt for _, cnt in groups)
            if total == 0:
                return [], 0, 0, 0
            if not 0 <= pos < total:
                pos = (total - 1) // params["n"] * params["n"]
            before, i = 0, 0
            while before + groups[i][1] <= pos:
                before += groups[i][1]
                i += 1
            hi = groups[i + 1][0] if i + 1 < len(groups) else "~"  # '~' sorts after every key
            lo = groups[i][0]
            for bound, cnt in conn.execute(sql["buckets"], {**params, "lo": lo, "hi": hi}):
                if before + cnt > pos:
                    lo = bound
                    break
                before += cnt
            rows = conn.execute(sql["page"], {**params, "lo": lo, "skip": pos - before}).fetchall()
            tied = int(conn.execute(sql["tied"], {**params, "k": rows[0][5]}).fetchone()[0]) if pos and rows else 0
        finally:
            conn.execute("COMMIT")
        return rows, pos, total, tied

    _page = staticmethod(page_of)

    async def _plain_page(self, params: dict[str, Any], min_games: int, page: int, page_size: int) -> Page:
        sql = _PLAIN_SQL[params["b"]]
        params = {**params, "min": min_games, "pos": page * page_size}
        rows = list(await self._r.execute_fetchall(sql["page"], params))
        if not rows:
            total = int(list(await self._r.execute_fetchall(sql["count"], params))[0][0])
            if total == 0:
                return Page([], 0, 0, 0)
            params["pos"] = (total - 1) // page_size * page_size
            rows = list(await self._r.execute_fetchall(sql["page"], params))
        return self._page(rows, params["pos"], int(rows[0][6]), page_size,
                          await self._tied(sql, params, rows[0][5], params["pos"]))

    async def rank(
        self, user_id: int, game: str, guild_id: int | None = None, by: str = "rating", min_games: int = MIN_GAMES,
        *, season: int | None = None,
    ) -> int | None:
        """Exact 1-based rank of *user_id* on a board (shared with the
        entries of equal value); None if not on it."""
        place = await self.board_place(user_id, game, guild_id, by, min_games, season=season)
        return None if place is None else place[0]

    async def board_place(
        self, user_id: int, game: str, guild_id: int | None = None, by: str = "rating", min_games: int = MIN_GAMES,
        *, season: int | None = None,
    ) -> tuple[int, int] | None:
        """``(rank, position)`` of *user_id* on a board: the shared place and
        the 1-based position in the board's order (its page is
        ``(position - 1) // page_size``); None if not on it."""
        board = _board_number(by)
        params = {"g": _game_code(game), "s": scope_of(guild_id, season), "b": board, "u": user_id}
        if min_games != MIN_GAMES and by in ("rating", "win_rate"):
            sql = _PLAIN_SQL[board]["rank"]
            params["min"] = min_games
        else:
            sql = _BOARD_SQL[board]["rank"]
        key, ahead, tied = list(await self._r.execute_fetchall(sql, params))[0]
        return None if key is None else (int(tied) + 1, int(ahead) + 1)

    async def history(
        self, user_id: int, limit: int = 10, guild_id: int | None = None, game: str | None = None
    ) -> list[HistoryEntry]:
        """A player's latest games, newest first."""
        rows = await self._r.execute_fetchall(
            _HISTORY, {"u": user_id, "guild": guild_id, "game": game, "n": limit}
        )
        return [
            {"game_id": r[0], "game": r[1], "guild_id": r[2], "ended_at": r[3], "place": r[4],
             "score": r[5], "players": r[6], "table_id": r[7]}
            for r in rows
        ]

    async def game_detail(self, game_id: int) -> GameDetail | None:
        """A recorded game with its standings ordered by place (then seat)."""
        rows = list(await self._r.execute_fetchall(_GAME_DETAIL, (game_id,)))
        if not rows:
            return None
        r = rows[0]
        return {
            "game_id": r[0], "table_id": r[1], "guild_id": r[2], "channel_id": r[3], "game": r[4],
            "started_at": r[5], "ended_at": r[6], "seed": r[7], "rounds": r[8],
            "has_bots": bool(r[9]), "rated": bool(r[10]), "players": r[11],
            "standings": json.loads(r[12]),
        }

    # -- game nights ---------------------------------------------------------

    async def create_night(self, guild_id: int, channel_id: int, game: str, meta: dict[str, Any]) -> int:
        """Save a new night in sign-up; raises ``LookupError`` if the channel
        has an open night already."""
        now = time.time()
        params = (guild_id, channel_id, game, json.dumps(meta), now, now)

        def create(conn: sqlite3.Connection) -> int:
            try:
                return int(conn.execute(_CREATE_NIGHT, params).fetchone()[0])
            except sqlite3.IntegrityError:
                raise LookupError(f"channel {channel_id} has an open night") from None

        return await self._write(create)

    async def save_night(self, night_id: int, status: str, meta: dict[str, Any]) -> None:
        params = (status, json.dumps(meta), time.time(), night_id)
        await self._write(lambda conn: conn.execute(_SAVE_NIGHT, params))

    async def end_night(self, night_id: int, meta: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
        """Close a night and record its final standings (``rows``: user_id,
        place, points, wins, games), in one transaction; ending twice keeps
        the first standings."""
        params = ("ended", json.dumps(meta), time.time(), night_id)

        def end(conn: sqlite3.Connection) -> None:
            conn.execute(_SAVE_NIGHT, params)
            conn.executemany(_INSERT_NIGHT_PLAYER, [{"night": night_id, **row} for row in rows])

        await self._write(end)

    async def open_nights(self) -> list[NightRow]:
        """Every night not ended, and every ended one whose recap is still due
        (``meta.recap_due``): ``{"id", "guild_id", "channel_id", "game", "status", "meta"}``."""
        return [_night(row) for row in await self._r.execute_fetchall(_OPEN_NIGHTS)]

    async def night_in_channel(self, channel_id: int) -> NightRow | None:
        """The channel's open night, else its last one, else None."""
        rows = list(await self._r.execute_fetchall(_NIGHT_IN_CHANNEL, (channel_id,)))
        return _night(rows[0]) if rows else None

    async def night_record(self, user_id: int, game: str, guild_id: int | None = None) -> dict[str, int]:
        """Nights of *game* a player finished (``played``) and topped (``won``)."""
        rows = list(await self._r.execute_fetchall(_NIGHT_RECORD, {"u": user_id, "g": game, "guild": guild_id}))
        played, won = rows[0]
        return {"played": int(played or 0), "won": int(won or 0)}

    async def table_result(self, table_id: int) -> list[dict[str, Any]] | None:
        """The recorded finish of a table's game, per seat in seat order
        (``seat``, ``user_id``, ``score``, ``place``), or None when no game
        of that table was recorded."""
        rows = list(await self._r.execute_fetchall(_TABLE_RESULT, (table_id,)))
        if not rows:
            return None
        return [{"seat": r[0], "user_id": r[1], "score": r[2], "place": r[3]} for r in rows]

    # -- guild settings ------------------------------------------------------

    async def guild_settings(self, guild_id: int) -> dict[str, Any]:
        """Settings of a guild over ``GUILD_DEFAULTS``."""
        out = dict(GUILD_DEFAULTS)
        for key, value in await self._r.execute_fetchall(_GUILD_SETTINGS, (guild_id,)):
            out[key] = json.loads(value)
        return out

    async def set_guild_setting(self, guild_id: int, key: str, value: Any) -> None:
        """Set one setting (any JSON value)."""
        params = (guild_id, key, json.dumps(value))
        await self._write(lambda conn: conn.execute(_SET_GUILD_SETTING, params))

    # -- who is really playing ----------------------------------------------

    async def park_inactive(self, now: float, windows: dict[int, float] | None = None,
                            days: float = ACTIVE_DAYS) -> int:
        """Take off the rating boards every rating whose last rated game is
        older than its window (*days*; in *windows*, guild id -> days, a
        guild's own for its boards and its seasons'): the rating is kept (parked) and comes back with
        the next rated game.  Returns how many rows were parked."""
        custom = windows or {}

        def park(conn: sqlite3.Connection) -> int:
            count = conn.execute(_PARK.format(where=f"scope NOT IN ({_WINDOWED})"),
                                 {"cut": now - days * 86400, "custom": json.dumps(sorted(custom)), "now": now}).rowcount
            for guild_id, window in custom.items():
                count += conn.execute(_PARK.format(where=f"scope IN ({_WINDOWED})"),
                                      {"cut": now - window * 86400, "custom": json.dumps([guild_id]),
                                       "now": now}).rowcount
            return count

        return await self._write(park)

    # -- members excluded from a server's boards ----------------------------

    async def exclude_member(self, guild_id: int, user_id: int, now: float) -> bool:
        """Take a member off every board of *guild_id* (all-time and its
        seasons, every kind): their rows stay and keep counting, hidden
        (NULL sort keys: the board triggers keep the counts exact).  False
        if they were excluded already."""
        def exclude(conn: sqlite3.Connection) -> bool:
            added = conn.execute("INSERT OR IGNORE INTO board_exclusions (guild_id, user_id, at) VALUES (?, ?, ?)",
                                 (guild_id, user_id, now)).rowcount
            if added:
                conn.execute(_HIDE, {"g": guild_id, "u": user_id, "h": 1})
            return bool(added)

        return await self._write(exclude)

    async def include_member(self, guild_id: int, user_id: int) -> bool:
        """Put an excluded member back on *guild_id*'s boards where their
        results (games played while excluded included) put them.  False if
        they were not excluded."""
        def include(conn: sqlite3.Connection) -> bool:
            removed = conn.execute("DELETE FROM board_exclusions WHERE guild_id = ? AND user_id = ?",
                                   (guild_id, user_id)).rowcount
            if removed:
                conn.execute(_HIDE, {"g": guild_id, "u": user_id, "h": 0})
            return bool(removed)

        return await self._write(include)

    async def excluded_members(self, guild_id: int) -> list[int]:
        """The members excluded from *guild_id*'s boards, first excluded first."""
        return [int(row[0]) for row in await self._r.execute_fetchall(_EXCLUDED_OF, (guild_id,))]

    async def is_excluded(self, guild_id: int, user_id: int) -> bool:
        """Whether *user_id* is excluded from *guild_id*'s boards."""
        return bool(list(await self._r.execute_fetchall(_IS_EXCLUDED, (guild_id, user_id))))

    async def rated_at(self, user_id: int, game: str, guild_id: int | None = None, *,
                       season: int | None = None) -> float | None:
        """When a player's rating (in a guild, globally or in a season) last
        changed: a rated game (None: never rated)."""
        rows = list(await self._r.execute_fetchall(_RATED_AT, {"g": _game_code(game), "s": scope_of(guild_id, season),
                                                               "u": user_id}))
        return rows[0][0] if rows else None

    # -- seasons -------------------------------------------------------------

    async def create_season(self, guild_id: int, name: str, starts_at: float, ends_at: float | None = None, *,
                            exist_ok: bool = False) -> int:
        """Save a season of *guild_id* (0: the global calendar's) from
        *starts_at* (or just after the guild's last game recorded already in
        its span: :func:`app.store.base.after_recorded`) to *ends_at* (None:
        until ended by hand); returns its id.

        ``LookupError`` when the guild has a season of that name already
        (with *exist_ok*: its id instead, for calendar seasons made by every
        process alike); ``ValueError`` when the span overlaps another season
        of the guild (a game would count in both)."""
        (plan,) = check_plans([SeasonPlan(guild_id, name, starts_at, ends_at)])

        def create(conn: sqlite3.Connection) -> int:
            season_id, made = _make_season(conn, plan)
            if season_id is None:
                raise ValueError(f"season {name!r} overlaps another season of guild {guild_id}")
            if not made and not exist_ok:
                raise LookupError(f"guild {guild_id} has a season {name!r}")
            return season_id

        return await self._write(create)

    async def make_seasons(self, plans: Sequence[SeasonPlan]) -> list[int | None]:
        """Make the seasons of *plans* a guild has not got yet (by name), in
        one write transaction; none when a read finds them all (every look
        at the calendar but the first after a boundary).  Each plan's
        season id; None where its span overlaps another season of the guild."""
        todo = check_plans(plans)
        if not todo:
            return []
        named = json.dumps([[plan.guild_id, plan.name] for plan in todo])
        found = {(g, n): i for i, g, n in await self._r.execute_fetchall(_SEASONS_NAMED_IN, (named,))}
        if all((plan.guild_id, plan.name) in found for plan in todo):
            return [found[(plan.guild_id, plan.name)] for plan in todo]
        return await self._write(lambda conn: [_make_season(conn, plan)[0] for plan in todo])

    async def end_season(self, season_id: int, at: float, *,
                         then: Sequence[SeasonPlan] = ()) -> dict[str, Any] | None:
        """End a season at *at* (an open one, or one planned to end later),
        or just after the last game it counted already that ended at or after
        *at* (:func:`app.store.base.after_recorded`); drop the guild's seasons
        planned to start after the end that hold no game; make the seasons of
        *then* (a change of mode's), none starting before the end: all in one
        transaction, so that a game is never recorded between the end and the
        next season.  Returns the season as it is now (None: no such season)."""
        plans = check_plans(then)

        def end(conn: sqlite3.Connection) -> Any:
            row = conn.execute(_SEASON_BY_ID, (season_id,)).fetchone()
            if row is None:
                return None
            season = season_record(row)
            bound = at
            if season["starts_at"] < at and (season["ends_at"] is None or season["ends_at"] > at):
                bound = min(_boundary(conn, season["guild_id"], at, season["ends_at"]),
                            math.inf if season["ends_at"] is None else season["ends_at"])
            conn.execute(_END_SEASON, {"id": season_id, "t": bound})
            conn.execute(_DROP_PLANNED, {"id": season_id, "t": bound})
            for plan in plans:
                _make_season(conn, plan._replace(starts_at=max(plan.starts_at, bound)))
            return conn.execute(_SEASON_BY_ID, (season_id,)).fetchone()

        row = await self._write(end)
        return None if row is None else season_record(row)

    async def season(self, season_id: int) -> dict[str, Any] | None:
        """One season: ``{"id", "guild_id", "name", "starts_at", "ends_at", "meta"}``."""
        rows = list(await self._r.execute_fetchall(_SEASON_BY_ID, (season_id,)))
        return season_record(rows[0]) if rows else None

    async def seasons(self, guild_id: int) -> list[dict[str, Any]]:
        """Every season of a guild (0: the global calendar's), newest first."""
        return [season_record(row) for row in await self._r.execute_fetchall(_SEASONS_OF, (guild_id,))]

    async def seasons_ended(self, now: float) -> list[dict[str, Any]]:
        """Seasons of every guild that have ended by *now* and are not
        closed yet (``meta.closed``: their final standings told), oldest first."""
        return [season_record(row) for row in await self._r.execute_fetchall(_SEASONS_ENDED, (now,))]

    async def set_seasons_meta(self, metas: Mapping[int, dict[str, Any]]) -> None:
        """Set the meta of many seasons (season id -> meta) in one transaction."""
        rows = [(json.dumps(meta), season_id) for season_id, meta in metas.items()]
        if rows:
            await self._write(lambda conn: conn.executemany(_SET_SEASON_META, rows))

    async def guilds_with_setting(self, key: str) -> dict[int, Any]:
        """Every guild that has set *key*, with its value."""
        return {g: json.loads(v) for g, v in await self._r.execute_fetchall(_GUILDS_WITH_SETTING, (key,))}

    # -- maintenance ---------------------------------------------------------

    async def rebuild_boards(self) -> None:
        """Recount every board's buckets from ``stats`` (one transaction).

        For repair, or after a bulk load done with the board triggers
        dropped (see ``bench/store.py``).
        """
        def rebuild(conn: sqlite3.Connection) -> None:
            for name in BOARD_TRIGGER_NAMES:
                conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            for statement in (*REBUILD_BUCKETS, *BOARD_TRIGGERS):
                conn.execute(statement)

        await self._write(rebuild)

    async def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` plus ``foreign_key_check``; ['ok'] when sound."""
        rows = [r[0] for r in await self._r.execute_fetchall("PRAGMA integrity_check")]
        fk = list(await self._r.execute_fetchall("PRAGMA foreign_key_check"))
        return rows + [f"foreign key: {tuple(r)}" for r in fk]

    # -- after the game: verification, replay, head-to-head -------------------

    async def game_of_table(self, table_id: int) -> int | None:
        """The recorded game id of a table (None if not recorded)."""
        rows = list(await self._r.execute_fetchall(_GAME_OF_TABLE, (table_id,)))
        return int(rows[0][0]) if rows else None

    async def versus(self, user_id: int, other_id: int, game: str | None = None) -> dict[str, dict[str, Any]]:
        """Head-to-head of two players across all servers, per game.

        ``{game: {"games", "ahead", "behind", "level", "score", "other_score"}}``
        (``ahead``: games *user_id* finished ahead of *other_id*; scores are
        sums over the shared games).  Indexed (migration 5): the shared games
        come from the covering index ``game_players_versus`` alone, driven by
        the player with fewer games (their global game counts in ``stats``
        are two primary-key reads): one index range plus one seek per game of
        that player, one ``games`` row per shared game.
        """
        if game is not None:
            _game_code(game)
        params = {"a": user_id, "b": other_id, "game": game}

        def read(conn: sqlite3.Connection) -> list[Any]:
            conn.execute("BEGIN")
            try:
                counts = dict(conn.execute(_VERSUS_COUNTS, params).fetchall())
                swap = counts.get(other_id, 0) < counts.get(user_id, 0)
                driver, other = (other_id, user_id) if swap else (user_id, other_id)
                rows = conn.execute(_VERSUS, {"d": driver, "o": other, "game": game}).fetchall()
            finally:
                conn.execute("COMMIT")
            return [(r[0], r[1], r[3], r[2], r[4], r[6], r[5]) if swap else r for r in rows]

        out: dict[str, dict[str, Any]] = {}
        for name, games, ahead, behind, level, score, other_score in await self._read(read):
            out[name] = {"games": games, "ahead": ahead, "behind": behind, "level": level,
                         "score": score, "other_score": other_score}
        return out


_GAME_OF_TABLE = "SELECT id FROM games WHERE table_id = ?"
_VERSUS_COUNTS = """
SELECT user_id, SUM(games) FROM stats
WHERE game IN (SELECT value FROM json_each(:codes)) AND scope = 0 AND user_id IN (:a, :b)
GROUP BY user_id
""".replace(":codes", "'" + json.dumps(sorted(GAME_CODES.values())) + "'")
# d drives (its index range, in order); o is one seek per row of d; CROSS JOIN
# keeps that order.  Rows: game, shared games, d ahead, o ahead, level, d's and o's score sums.
_VERSUS = """
SELECT g.game, COUNT(*), SUM(d.place < o.place), SUM(d.place > o.place), SUM(d.place = o.place),
       SUM(d.score), SUM(o.score)
FROM game_players AS d INDEXED BY game_players_versus
CROSS JOIN game_players AS o INDEXED BY game_players_versus
CROSS JOIN games AS g
WHERE d.user_id = :d AND o.user_id = :o AND o.game_id = d.game_id AND g.id = d.game_id
  AND (:game IS NULL OR g.game = :game)
GROUP BY g.game
ORDER BY g.game DESC
"""
