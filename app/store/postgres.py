"""The PostgreSQL backend: the store's API over asyncpg (``DATABASE_URL``).

    store = await open_store("postgresql://bot:secret@db.example/cardnight")

One connection pool per process; every call is one statement or one
transaction on a pooled connection, so several processes (on one machine or
several) share the database.  The schema is :mod:`app.store.pg_migrations`.

Concurrency.  A write waits at most ``LOCK_TIMEOUT_MS`` for a row lock held
by another transaction (``lock_timeout``, like SQLite's busy timeout) and
then fails: the table manager tells the click "not saved".  The one active
table per channel and the one open night per channel are unique indexes, so
two processes creating at once get one :class:`ChannelBusy` / LookupError.

Recording.  A game, or a group of games (group commit: the games handed
to ``record_game`` while a recording is in flight), is one lock-free read
and one statement, ``record_games_v4`` (pg migrations 2, 3 and 7): the stats
rows of its players are read (or taken as this process last wrote them,
``KNOWN_ROWS``), the new rows (ratings in order) computed here, and the
function writes games, players, results, stats and bucket counts in one
transaction after checking that nothing they came from has changed (every
recording adds one to a row's games count); when something has, it writes
nothing and returns the current rows, and the group is computed again
(after ``RECORD_ATTEMPTS`` misses the read is made under the locks too).  The
function locks the group's players (advisory locks in id order, after the
record lock ``RECORD_LOCK`` taken shared) and takes the game ids under
them: recordings of games without a player in common run in parallel, from
any process; of two games with a player in common the one with the lower
id is rated first, so a serial run in id order gives the same boards.  The
bucket counts are moved by one statement in key order; a bucket past its
limit splits after the commit with ``RECORD_LOCK`` held alone (no
recording runs then: the function names the buckets, so the split looks
up only those), as does :meth:`PostgresStore.rebuild_boards`.  Every
lock is taken in that one order, so no deadlock is expected (one is
retried).  A game already recorded for its table (by any process) makes
``record_game`` return None.

Leaderboards.  The sort keys are generated columns with one index per
board, and a one-level order-statistic index (``buckets``, kept exact by a
row trigger; see :mod:`app.store.pg_migrations`): a rank sums the bucket
rows before the player's bucket and counts fewer than ``BUCKET_MAX`` index
entries; a numbered page picks its bucket by running count and seeks from
its bound; a cursor page seeks from the cursor.  Each is one statement
(a numbered page: two, in one snapshot).  Boards with another games
threshold count and OFFSET over every row instead (O(N)), as on SQLite.
"""
from __future__ import annotations

import asyncio
import collections
import json
import logging
import sqlite3
import time
import urllib.parse
from typing import Any, Iterable, Mapping, Sequence

import asyncpg

from app import ratings
from app.store.api import GameDetail, HistoryEntry, NightRow
from app.store.base import (
    ACTIVE, ACTIVE_DAYS, BOARDS, CLOSED, GAME_CODES, GUILD_DEFAULTS, MIN_GAMES, ChannelBusy, GameRecord, GroupRecorder, Page, SeasonPlan, StoreUnavailable,
    TIE_LOW, TableRecord, UNTOLD_FOR, after_recorded, board_number, record_scopes, scope_of, season_record, game_code, night_record, page_of, profile_of, table_record, check_plans,
)
from app.store.pg_migrations import REBUILD_BUCKETS, RECORD_LOCK, TABLES, VALUE_EXPR, migrate, visible_key

log = logging.getLogger(__name__)

#: how long a write waits for a lock held by another transaction (ms)
LOCK_TIMEOUT_MS = 2000
#: how long a recording waits for the record lock (the other processes'
#: recordings) before it fails (ms); below COMMAND_TIMEOUT
RECORD_LOCK_WAIT_MS = 8000
#: how long a statement may take before the call fails (s)
COMMAND_TIMEOUT = 10.0
#: how long connecting may take (s)
CONNECT_TIMEOUT = 10.0


def safe_url(dsn: str) -> str:
    """*dsn* without its password (for messages and logs)."""
    parts = urllib.parse.urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


# -- SQL ---------------------------------------------------------------------

_TABLE_COLUMNS = """
SELECT t.id, t.guild_id, t.channel_id, t.game, t.status, t.meta::text, t.created_at, t.updated_at,
       coalesce((SELECT json_agg(json_build_array(a.seat, a.action) ORDER BY a.idx)
                 FROM table_actions AS a WHERE a.table_id = t.id), '[]')::text
FROM tables AS t
"""
_ACTIVE_TABLES = _TABLE_COLUMNS + "WHERE t.status IN ('lobby', 'playing') ORDER BY t.id"
_TABLE_IN_CHANNEL = (
    _TABLE_COLUMNS + "WHERE t.channel_id = $1 AND t.status IN ('lobby', 'playing') ORDER BY t.id DESC LIMIT 1"
)
_TABLE_BY_ID = _TABLE_COLUMNS + "WHERE t.id = $1"
_OPEN_LOBBIES = (
    "SELECT count(*) FROM tables WHERE status IN ('lobby', 'playing') AND status = 'lobby'"
    " AND (meta->>'host_id')::bigint = $1 AND meta->>'night_id' IS NULL"
)
# closed before the thread was told (app/tables: a close is a note until told)
_UNTOLD_CLOSED = _TABLE_COLUMNS + (
    "WHERE t.status IN ('cancelled', 'abandoned') AND t.updated_at > $1 "
    "AND jsonb_array_length(coalesce(t.meta -> 'notes', '[]'::jsonb)) > 0 ORDER BY t.id")
_CREATE_TABLE = """
INSERT INTO tables (guild_id, channel_id, game, status, meta, created_at, updated_at)
VALUES ($1, $2, $3, 'lobby', $4::jsonb, $5, $6) RETURNING id
"""
_UPDATE_TABLE = "UPDATE tables SET status = $1, meta = $2::jsonb, updated_at = $3 WHERE id = $4"
_INSERT_ACTION = """
INSERT INTO table_actions (table_id, idx, seat, action) VALUES ($1, $2, $3, $4)
ON CONFLICT (table_id, idx) DO NOTHING
"""
_CLOSE_TABLE = "UPDATE tables SET status = $1, updated_at = $2 WHERE id = $3"

# Recording (PostgresStore._record_group): one lock-free read of the stats
# rows of a group's players and of the group's tables already recorded,
# then one call of record_games (pg migration 2), which checks under the
# record lock that nothing read has changed and writes everything.
_READ_FOR_RECORD = """
SELECT s.game, s.scope, s.user_id, s.games, s.wins, s.score_sum, s.counters::text, s.rated_games,
       coalesce(s.mu, s.parked_mu), coalesce(s.sigma, s.parked_sigma), NULL::bigint
FROM stats AS s JOIN unnest($1::int[], $2::bigint[], $3::bigint[]) AS k (game, scope, user_id)
  ON s.game = k.game AND s.scope = k.scope AND s.user_id = k.user_id
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, table_id FROM games WHERE table_id = ANY($4::bigint[])
"""
_RECORD_GAMES = (
    "SELECT * FROM record_games_v5($1, $2, $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::float8[], $8::float8[],"
    " $9::bigint[], $10::int[], $11::boolean[], $12::boolean[], $13::int[], $14::bigint[], $15::text[],"
    " $16::int[], $17::int[], $18::bigint[], $19::text[], $20::int[], $21::int[], $22::text[],"
    " $23::int[], $24::bigint[], $25::bigint[], $26::int[], $27::int[], $28::int[], $29::bigint[], $30::text[],"
    " $31::int[], $32::float8[], $33::float8[], $34::int[], $35::bigint[], $36::bigint[], $37::int[], $38::bigint[])"
)
# (the pessimistic attempt: record_games takes them again, which is allowed)
_RECORD_LOCKS = """
SELECT set_config('lock_timeout', $1, true), pg_advisory_xact_lock_shared($2),
       (SELECT count(*) FROM (SELECT pg_advisory_xact_lock(u) FROM unnest($3::bigint[]) WITH ORDINALITY AS x (u, n)
                              ORDER BY n) AS l)
"""
# the buckets a recording left overfull, by key (pg migration 7: no scan under the lock)
_SPLIT_BUCKETS = "SELECT split_buckets_at($1, $2, $3::int[], $4::bigint[], $5::smallint[], $6::text[])"
# seasons (app.store.base.record_scopes picks those holding each game's end)
_SEASONS_AT = """
SELECT id, guild_id, starts_at, ends_at FROM seasons
WHERE guild_id = ANY($1::bigint[]) AND (ends_at IS NULL OR ends_at > $2)
"""
_SEASON_COLUMNS = "SELECT id, guild_id, name, starts_at, ends_at, meta FROM seasons "
_SEASON_BY_ID = _SEASON_COLUMNS + "WHERE id = $1"
_SEASONS_OF = _SEASON_COLUMNS + "WHERE guild_id = $1 ORDER BY starts_at DESC"
_SEASONS_ENDED = (_SEASON_COLUMNS + "WHERE ends_at <= $1 AND coalesce((meta::jsonb ->> 'closed')::boolean, false)"
                  " = false ORDER BY ends_at, id")
_SEASON_NAMED = "SELECT id FROM seasons WHERE guild_id = $1 AND name = $2"
_SEASON_OVERLAP = """
SELECT EXISTS (SELECT 1 FROM seasons WHERE guild_id = $1 AND ($3::float8 IS NULL OR starts_at < $3)
               AND (ends_at IS NULL OR ends_at > $2))
"""
_CREATE_SEASON = "INSERT INTO seasons (guild_id, name, starts_at, ends_at) VALUES ($1, $2, $3, $4) RETURNING id"
_END_SEASON = "UPDATE seasons SET ends_at = $2 WHERE id = $1 AND starts_at < $2 AND (ends_at IS NULL OR ends_at > $2)"
_DROP_PLANNED = f"""
DELETE FROM seasons AS d WHERE d.guild_id = (SELECT guild_id FROM seasons WHERE id = $1) AND d.starts_at >= $2
  AND d.id != $1 AND NOT EXISTS (SELECT 1 FROM stats WHERE game = ANY('{{{",".join(str(c) for c in sorted(GAME_CODES.values()))}}}'::int[]) AND scope = -d.id)
"""
_SET_SEASONS_META = """
UPDATE seasons AS s SET meta = m.meta FROM unnest($1::bigint[], $2::text[]) AS m (id, meta) WHERE s.id = m.id
"""
# make_seasons: the plans' seasons there already (by name) ...
_SEASONS_NAMED_IN = """
SELECT p.n, s.id FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS p (guild_id, name, n)
JOIN seasons AS s ON s.guild_id = p.guild_id AND s.name = p.name
"""
# ... the plans' guilds locked (one guild's seasons are made one at a time; in
# one order: two processes' batches do not deadlock) ...
_LOCK_SEASON_GUILDS = """
SELECT count(*) FROM (SELECT pg_advisory_xact_lock($1, h) FROM (SELECT DISTINCT hashint8(g) AS h
                      FROM unnest($2::bigint[]) AS g) AS x ORDER BY h) AS l
"""
# ... and, in that transaction, the missing ones made unless they overlap a
# season of the guild (the plans of one guild do not overlap: check_plans);
# each plan's id by name
_MAKE_SEASONS = """
WITH p AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::float8[], $4::float8[])
        WITH ORDINALITY AS p (guild_id, name, starts_at, ends_at, n)
), made AS (
    INSERT INTO seasons (guild_id, name, starts_at, ends_at)
    SELECT guild_id, name, starts_at, ends_at FROM p
    WHERE NOT EXISTS (SELECT 1 FROM seasons AS s WHERE s.guild_id = p.guild_id AND s.name = p.name)
      AND NOT EXISTS (SELECT 1 FROM seasons AS s WHERE s.guild_id = p.guild_id
                      AND (p.ends_at IS NULL OR s.starts_at < p.ends_at) AND (s.ends_at IS NULL OR s.ends_at > p.starts_at))
    RETURNING id, guild_id, name
)
SELECT p.n, coalesce(s.id, made.id) FROM p
LEFT JOIN seasons AS s ON s.guild_id = p.guild_id AND s.name = p.name
LEFT JOIN made ON made.guild_id = p.guild_id AND made.name = p.name
"""
_PARKED = """
SELECT s.game, s.scope, s.user_id, s.parked_mu, s.parked_sigma
FROM stats AS s JOIN unnest($1::int[], $2::bigint[], $3::bigint[]) AS k (game, scope, user_id)
  ON s.game = k.game AND s.scope = k.scope AND s.user_id = k.user_id
WHERE s.mu IS NULL AND s.parked_mu IS NOT NULL
"""
# (an ended season's board stays as it ended: kept browsable, its ratings are not parked;
# each row's season looked up by id, not every ended season read)
_PARK = """
UPDATE stats SET parked_mu = mu, parked_sigma = sigma, mu = NULL, sigma = NULL
WHERE mu IS NOT NULL AND rated_at < $1 AND {where}
  AND NOT EXISTS (SELECT 1 FROM seasons WHERE id = -stats.scope AND ends_at <= $3)
"""
# the scopes of guilds with a window of their own: theirs and their seasons'
_WINDOWED = "SELECT unnest($2::bigint[]) UNION ALL SELECT -id FROM seasons WHERE guild_id = ANY($2::bigint[])"
_RATED_AT = "SELECT rated_at FROM stats WHERE game = $1 AND scope = $2 AND user_id = $3"
# a member's rows of a guild's boards (its scope and its seasons'), by key
_HIDE = """
UPDATE stats SET hidden = $3
WHERE game = ANY($4::int[]) AND scope IN (SELECT $1::bigint UNION ALL SELECT -id FROM seasons WHERE guild_id = $1)
  AND user_id = $2 AND hidden <> $3
"""
_EXCLUDE = "INSERT INTO board_exclusions (guild_id, user_id, at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
_INCLUDE = "DELETE FROM board_exclusions WHERE guild_id = $1 AND user_id = $2"
_EXCLUDED_OF = "SELECT user_id FROM board_exclusions WHERE guild_id = $1 ORDER BY at, user_id"
_IS_EXCLUDED = "SELECT EXISTS (SELECT 1 FROM board_exclusions WHERE guild_id = $1 AND user_id = $2)"
_GUILDS_WITH_SETTING = "SELECT guild_id, value FROM guild_settings WHERE key = $1"
#: advisory lock (with a guild's hash) around making a guild's season
SEASON_LOCK = 7_535_300
#: what record_games_v5 returns when a season was made or ended since the caller read them
SEASONS_MOVED = "seasons"
# a season is made or ended with the record lock held alone: no recording is between its
# check of the seasons (record_games_v5) and its commit meanwhile
_SEASONS_HELD = "SELECT set_config('lock_timeout', $1, true), pg_advisory_xact_lock($2)"
# the end of the last game of each plan's guild recorded already in the plan's span
# (games_guild_end; the global calendar's seasons are made ahead: none looked for)
_LAST_GAMES_IN = """
SELECT p.n, (SELECT max(g.ended_at) FROM games AS g WHERE g.guild_id = p.guild_id AND g.ended_at >= p.starts_at
                                                  AND (p.ends_at IS NULL OR g.ended_at < p.ends_at))
FROM unnest($1::bigint[], $2::float8[], $3::float8[]) WITH ORDINALITY AS p (guild_id, starts_at, ends_at, n)
WHERE p.guild_id <> 0
"""
#: optimistic attempts of a group before it takes the record lock for its read too
RECORD_ATTEMPTS = 3
#: attempts under the locks: more than one only when the seasons changed under them, which
#: the code before pg version 9 does (it makes and ends seasons without the record lock)
#: while it runs beside this code during a rolling upgrade
LOCKED_ATTEMPTS = 3
#: stats rows a process remembers as it last wrote them (least recently used
#: dropped first): a group whose rows are all known is sent without a read
KNOWN_ROWS = 50_000
#: how long the buckets a recording overfilled wait for their split (s),
#: with those overfilled meanwhile: a split holds the record lock alone, so
#: every process's recordings wait for the ones in flight to end and then for
#: it; an overfull bucket only makes its ranks count more index entries (its
#: counts stay exact), and each recording that adds to it names it again
SPLIT_EVERY = 2.0


def _board_sql(board: int) -> dict[str, str]:
    """The statements of one indexed board (``$1`` game code, ``$2`` scope),
    through its two levels of counts (see app.store.pg_migrations): groups
    of at most ``GROUP_MAX`` buckets, buckets of at most ``BUCKET_MAX``
    entries.  A count sums the group rows; a rank adds the groups before
    its own, the buckets of its group before its own, and the entries of
    its bucket below the key; a numbered page walks down the same way."""
    col = BOARDS[board][1]
    on = f"s.game = $1 AND s.scope = $2 AND s.{col} IS NOT NULL"
    bk = f"game = $1 AND scope = $2 AND board = {board}"
    row = f"s.user_id, p.name, {VALUE_EXPR[board]}, s.games, s.wins, s.{col}"
    joined = "stats AS s JOIN players AS p ON p.user_id = s.user_id"
    total = f"(SELECT coalesce(sum(cnt), 0) FROM bucket_groups WHERE {bk})"

    def holding(key: str) -> str:  # CTEs f, fg: the bucket holding *key*, the group holding f
        return (f"f AS (SELECT lo FROM buckets WHERE {bk} AND lo <= {key} ORDER BY lo DESC LIMIT 1), "
                f"fg AS (SELECT lo FROM bucket_groups WHERE {bk} AND lo <= (SELECT lo FROM f)"
                f" ORDER BY lo DESC LIMIT 1)")

    def ahead(key: str) -> str:  # entries strictly below *key*
        return f"""((SELECT coalesce(sum(cnt), 0) FROM bucket_groups WHERE {bk} AND lo < (SELECT lo FROM fg))
                    + (SELECT coalesce(sum(cnt), 0) FROM buckets
                       WHERE {bk} AND lo >= (SELECT lo FROM fg) AND lo < (SELECT lo FROM f))
                    + (SELECT count(*) FROM stats AS s
                       WHERE {on} AND s.{col} >= (SELECT lo FROM f) AND s.{col} < {key}))"""

    def ahead_alone(key: str) -> str:  # the same without the CTEs (bucket and group looked up inline)
        f = f"(SELECT lo FROM buckets WHERE {bk} AND lo <= {key} ORDER BY lo DESC LIMIT 1)"
        fg = f"(SELECT lo FROM bucket_groups WHERE {bk} AND lo <= {f} ORDER BY lo DESC LIMIT 1)"
        return ahead(key).replace("(SELECT lo FROM fg)", fg).replace("(SELECT lo FROM f)", f)

    def tie(key: str) -> str:  # the lowest key of *key*'s value (app.store.base.tie_key)
        return f"(substr({key}, 1, 16) || '{TIE_LOW}')"

    # CTE b: the entries of the groups before fg and the board's total, from ONE pass
    # over the board's groups
    sums = f"""b AS MATERIALIZED (SELECT coalesce(sum(cnt) FILTER (WHERE lo < (SELECT lo FROM fg)), 0) AS before_g,
                                   coalesce(sum(cnt), 0) AS total FROM bucket_groups WHERE {bk})"""

    def ahead_of(key: str) -> str:  # entries strictly below *key*, with CTE b
        return f"""((SELECT before_g FROM b)
                    + (SELECT coalesce(sum(cnt), 0) FROM buckets
                       WHERE {bk} AND lo >= (SELECT lo FROM fg) AND lo < (SELECT lo FROM f))
                    + (SELECT count(*) FROM stats AS s
                       WHERE {on} AND s.{col} >= (SELECT lo FROM f) AND s.{col} < {key}))"""

    # CTEs from position p.pos: the group (the last whose running count is <= pos), in it
    # the bucket the same way, then the start key an OFFSET (< BUCKET_MAX) into the
    # bucket over the index alone
    walk = f"""
            runs AS (SELECT lo, sum(cnt) OVER (ORDER BY lo) - cnt AS before, lead(lo) OVER (ORDER BY lo) AS hi
                     FROM bucket_groups WHERE {bk}),
            pg AS MATERIALIZED (SELECT runs.lo, runs.before, runs.hi FROM runs, p WHERE runs.before <= p.pos
                                ORDER BY runs.lo DESC LIMIT 1),
            run AS (SELECT b.lo, (SELECT before FROM pg) + sum(b.cnt) OVER (ORDER BY b.lo) - b.cnt AS before
                    FROM buckets AS b WHERE {bk} AND b.lo >= (SELECT lo FROM pg)
                      AND b.lo < coalesce((SELECT hi FROM pg), '~')),  -- ('~': above every key, an index bound)
            pick AS (SELECT run.lo, run.before FROM run, p WHERE run.before <= p.pos ORDER BY run.lo DESC LIMIT 1),
            start AS (SELECT s.{col} AS k FROM stats AS s WHERE {on} AND s.{col} >= (SELECT lo FROM pick)
                      ORDER BY s.{col} OFFSET (SELECT p.pos - pick.before FROM p, pick) LIMIT 1)"""

    return {
        "count": f"SELECT {total}",
        # $3 rows from position $4
        "page": f"""
            WITH p AS (SELECT $4::bigint AS pos), {walk}
            SELECT {row} FROM {joined} WHERE {on} AND s.{col} >= (SELECT k FROM start)
            ORDER BY s.{col} LIMIT $3
        """,
        # the same in ONE statement (one snapshot, one round trip): the total, $4
        # clamped to the last page, the walk down, then only the page's rows
        # joined; every row also carries the position and the total
        "page_at": f"""
            WITH t AS MATERIALIZED (SELECT {total}::bigint AS total),  -- one sum, not one per use
            p AS (SELECT CASE WHEN $4 >= 0 AND $4 < total THEN $4::bigint
                              ELSE greatest((total - 1) / $3 * $3, 0) END AS pos, total FROM t), {walk}
            SELECT {row}, (SELECT pos FROM p), (SELECT total FROM p) FROM {joined}
            WHERE {on} AND s.{col} >= (SELECT k FROM start) ORDER BY s.{col} LIMIT $3
        """,
        # keyset: the $4 entries after key $3, how many entries are <= $3, the total
        # (keys are 32 hex digits, so $3 || ' ' sorts right after $3)
        "after": f"""
            WITH {holding("($3::text || ' ')")}, {sums}
            SELECT {row}, {ahead_of("($3::text || ' ')")}, (SELECT total FROM b)
            FROM {joined} WHERE {on} AND s.{col} > $3::text ORDER BY s.{col} LIMIT $4
        """,
        # keyset: the $4 entries before key $3 (nearest first), how many are < $3, the total
        "before": f"""
            WITH {holding("$3::text")}, {sums}
            SELECT {row}, {ahead_of("$3::text")}, (SELECT total FROM b)
            FROM {joined} WHERE {on} AND s.{col} < $3::text ORDER BY s.{col} DESC LIMIT $4
        """,
        # user $3's key, the entries ahead and those with a better value (no row: not on the board)
        "rank": f"""
            WITH me AS (SELECT s.{col} AS k FROM stats AS s WHERE {on} AND s.user_id = $3),
            {holding("(SELECT k FROM me)")}
            SELECT me.k, {ahead("me.k")}, {ahead_alone(tie("me.k"))} FROM me
        """,
        # the entries with a better value than key $3's
        "tied": f"SELECT {ahead_alone(tie('$3::text'))}",
    }


def _plain_sql(board: int, min_games: int) -> dict[str, str]:
    """The statements of a board with another games threshold: the same key
    computed per row and counted (O(N))."""
    cond = f"games >= {int(min_games)}" + (" AND mu IS NOT NULL" if board == 0 else "")
    src = f'(SELECT *, ({visible_key(board, cond)}) COLLATE "C" AS k FROM stats) AS s'
    on = "s.game = $1 AND s.scope = $2 AND s.k IS NOT NULL"
    row = f"s.user_id, p.name, {VALUE_EXPR[board]}, s.games, s.wins, s.k"
    joined = f"{src} JOIN players AS p ON p.user_id = s.user_id"
    return {
        "count": f"SELECT count(*) FROM {src} WHERE {on}",
        "page": f"SELECT {row} FROM {joined} WHERE {on} ORDER BY s.k LIMIT $3 OFFSET $4",
        "rank": f"""
            SELECT me.k, (SELECT count(*) FROM {src} WHERE {on} AND s.k < me.k),
                   (SELECT count(*) FROM {src} WHERE {on} AND s.k < substr(me.k, 1, 16) || '{TIE_LOW}')
            FROM (SELECT s.k FROM {src} WHERE {on} AND s.user_id = $3) AS me
        """,
        "tied": f"SELECT count(*) FROM {src} WHERE {on} AND s.k < substr($3::text, 1, 16) || '{TIE_LOW}'",
    }


_BOARD_SQL = {board: _board_sql(board) for board in BOARDS}

# a profile with its rank on the rating board (board 0, shared with equal
# ratings: the entries below the lowest key of its value), in one statement
_PROFILE = """
SELECT p.name, s.games, s.wins, s.score_sum, s.counters::text, s.rated_games,
       coalesce(s.mu, s.parked_mu), coalesce(s.sigma, s.parked_sigma),
       CASE WHEN s.k_rating IS NOT NULL THEN 1
           + (SELECT coalesce(sum(g.cnt), 0) FROM bucket_groups AS g
              WHERE g.game = s.game AND g.scope = s.scope AND g.board = 0 AND g.lo < fg.lo)
           + (SELECT coalesce(sum(b.cnt), 0) FROM buckets AS b
              WHERE b.game = s.game AND b.scope = s.scope AND b.board = 0 AND b.lo >= fg.lo AND b.lo < f.lo)
           + (SELECT count(*) FROM stats AS x
              WHERE x.game = s.game AND x.scope = s.scope AND x.k_rating >= f.lo
                AND x.k_rating < substr(s.k_rating, 1, 16) || '0000000000000000') END,
       s.parked_mu IS NOT NULL AND s.mu IS NULL
FROM stats AS s JOIN players AS p ON p.user_id = s.user_id
LEFT JOIN LATERAL (SELECT b.lo FROM buckets AS b
                   WHERE b.game = s.game AND b.scope = s.scope AND b.board = 0
                     AND b.lo <= substr(s.k_rating, 1, 16) || '0000000000000000'
                   ORDER BY b.lo DESC LIMIT 1) AS f ON true
LEFT JOIN LATERAL (SELECT g.lo FROM bucket_groups AS g
                   WHERE g.game = s.game AND g.scope = s.scope AND g.board = 0 AND g.lo <= f.lo
                   ORDER BY g.lo DESC LIMIT 1) AS fg ON true
WHERE s.game = $1 AND s.scope = $2 AND s.user_id = $3
"""
_HISTORY = """
SELECT g.id, g.game, g.guild_id, g.ended_at, gp.place, gp.score, g.n_players, g.table_id
FROM game_players AS gp JOIN games AS g ON g.id = gp.game_id
WHERE gp.user_id = $1
  AND ($2::bigint IS NULL OR g.guild_id = $2)
  AND ($3::text IS NULL OR g.game = $3)
ORDER BY gp.game_id DESC
LIMIT $4
"""
_GAME_DETAIL = """
SELECT g.id, g.table_id, g.guild_id, g.channel_id, g.game, g.started_at, g.ended_at, g.seed,
       g.rounds, g.has_bots, g.rated, g.n_players,
       (SELECT json_agg(json_build_object(
                   'seat', r.seat, 'user_id', r.user_id, 'name', coalesce(p.name, r.name),
                   'score', r.score, 'place', r.place, 'computer', r.user_id IS NULL,
                   'stats', r.stats::json) ORDER BY r.place, r.seat)
        FROM game_players AS r LEFT JOIN players AS p ON p.user_id = r.user_id
        WHERE r.game_id = g.id)::text
FROM games AS g WHERE g.id = $1
"""
_NIGHT_COLUMNS = "SELECT id, guild_id, channel_id, game, status, meta FROM nights "
_CREATE_NIGHT = """
INSERT INTO nights (guild_id, channel_id, game, status, meta, created_at, updated_at)
VALUES ($1, $2, $3, 'signup', $4, $5, $6) RETURNING id
"""
_SAVE_NIGHT = "UPDATE nights SET status = $1, meta = $2, updated_at = $3 WHERE id = $4"
_INSERT_NIGHT_PLAYER = """
INSERT INTO night_players (night_id, user_id, guild_id, game, place, points, wins, games)
SELECT $1, $2, guild_id, game, $3, $4, $5, $6 FROM nights WHERE id = $1
ON CONFLICT (night_id, user_id) DO NOTHING
"""
# (an ended night whose recap was not posted yet is still to be shown)
_OPEN_NIGHTS = _NIGHT_COLUMNS + (
    "WHERE status != 'ended' OR coalesce((meta::jsonb ->> 'recap_due')::boolean, false) ORDER BY id")
_NIGHT_IN_CHANNEL = _NIGHT_COLUMNS + "WHERE channel_id = $1 ORDER BY status = 'ended', id DESC LIMIT 1"
_NIGHT_RECORD = """
SELECT count(*), sum((place = 1)::int) FROM night_players
WHERE user_id = $1 AND game = $2 AND ($3::bigint IS NULL OR guild_id = $3)
"""
_TABLE_RESULT = """
SELECT p.seat, p.user_id, p.score, p.place FROM games AS g JOIN game_players AS p ON p.game_id = g.id
WHERE g.table_id = $1 ORDER BY p.seat
"""
_GUILD_SETTINGS = "SELECT key, value FROM guild_settings WHERE guild_id = $1"
_SET_GUILD_SETTING = """
INSERT INTO guild_settings (guild_id, key, value) VALUES ($1, $2, $3)
ON CONFLICT (guild_id, key) DO UPDATE SET value = excluded.value
"""
_GAME_OF_TABLE = "SELECT id FROM games WHERE table_id = $1"
# the player with fewer games (:meth:`PostgresStore.versus` reads who) drives:
# one range of the covering index game_players_versus, one seek into the
# other's range per game (the LATERAL ... LIMIT 1 keeps it a nested loop).
# Rows: game, shared games, d ahead, o ahead, level, d's and o's score sums.
_VERSUS_COUNTS = """
SELECT user_id, sum(games) FROM stats
WHERE game = ANY($2::integer[]) AND scope = 0 AND user_id = ANY($1::bigint[])
GROUP BY user_id
"""
_VERSUS = """
SELECT g.game, count(*), sum((d.place < o.place)::int), sum((d.place > o.place)::int),
       sum((d.place = o.place)::int), sum(d.score), sum(o.score)
FROM game_players AS d
CROSS JOIN LATERAL (SELECT x.place, x.score FROM game_players AS x
                    WHERE x.user_id = $2 AND x.game_id = d.game_id LIMIT 1) AS o
JOIN games AS g ON g.id = d.game_id
WHERE d.user_id = $1 AND ($3::text IS NULL OR g.game = $3)
GROUP BY g.game
ORDER BY g.game DESC
"""


def _unavailable(dsn: str, error: BaseException) -> StoreUnavailable:
    return StoreUnavailable(safe_url(dsn), str(error) or type(error).__name__)


async def _keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset on release: nothing beyond asyncpg's own (a
    transaction left open is rolled back).  The store leaves no session
    state behind (its settings and advisory locks are transaction-local; no
    LISTEN, no cursor outside a transaction), so asyncpg's default reset
    query (``RESET ALL``, ``pg_advisory_unlock_all()``...) would only cost
    one more round trip after every call (a rank, page or profile took 0.50
    ms median with it, 0.35 without, interleaved on one server)."""


_CONNECT_ERRORS = (OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)


class PostgresStore(GroupRecorder):
    """The store on PostgreSQL (see module doc); the same API as the SQLite store."""

    backend = "postgresql"

    def __init__(self, pool: asyncpg.Pool, dsn: str) -> None:
        self._pool = pool
        self.dsn = dsn
        self._init_recorder()
        # (game code, scope, user id) -> the stats row as this process last wrote it:
        # (games, wins, score_sum, counters, rated_games, mu, sigma)
        self._known: collections.OrderedDict[tuple[int, int, int], tuple] = collections.OrderedDict()
        # buckets overfilled by this process's recordings, not split yet (game, scope, board, lower
        # bound), and since when (time.monotonic() of the first; due SPLIT_EVERY after it)
        self._to_split: dict[tuple[int, int, int, str], None] = {}
        self._split_since: float | None = None

    # -- lifecycle -----------------------------------------------------------

    @classmethod
    async def open(cls, dsn: str, *, min_size: int = 1, max_size: int = 8, **_sqlite_options: Any
                   ) -> "PostgresStore":
        """Connect, migrate (under the migration lock) and open a pool.

        :class:`StoreUnavailable` when the server cannot be reached, refuses
        the login, lacks the database, or is read-only.  SQLite's options
        (``checkpoint_interval``, ``cache_mib``...) are accepted and ignored.
        """
        try:
            conn = await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT)
            try:
                if await conn.fetchval("SHOW transaction_read_only") == "on":
                    raise StoreUnavailable(safe_url(dsn), "the server is read-only (a standby?)")
                await migrate(conn)
            finally:
                await conn.close()
            pool = await asyncpg.create_pool(
                dsn, min_size=min_size, max_size=max_size, timeout=CONNECT_TIMEOUT,
                command_timeout=COMMAND_TIMEOUT, reset=_keep_session,
                server_settings={"lock_timeout": str(LOCK_TIMEOUT_MS), "application_name": "cardnight"},
            )
        except _CONNECT_ERRORS as error:
            raise _unavailable(dsn, error) from error
        return cls(pool, dsn)

    async def close(self) -> None:
        """Write what ``record_game`` was handed, then close the pool."""
        await self._finish_recording()
        await self._pool.close()

    async def checkpoint(self, mode: str = "PASSIVE") -> tuple[int, int, int]:
        """Nothing to do: PostgreSQL checkpoints itself (API parity with SQLite)."""
        if mode not in ("PASSIVE", "FULL", "RESTART", "TRUNCATE"):
            raise ValueError(f"unknown checkpoint mode {mode!r}")
        return 0, 0, 0

    # -- tables that survive a restart ---------------------------------------

    async def create_table(self, guild_id: int, channel_id: int, game: str, meta: dict[str, Any]) -> int:
        """Save a new lobby; :class:`ChannelBusy` when the channel holds an
        active table already (a unique index, across processes)."""
        now = time.time()
        try:
            return int(await self._pool.fetchval(_CREATE_TABLE, guild_id, channel_id, game, json.dumps(meta),
                                                 now, now))
        except asyncpg.UniqueViolationError as error:
            if error.constraint_name != "tables_active_channel":
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
        """Update status and meta and append actions at ``first_index..``,
        atomically (actions already stored are left alone); ``LookupError``
        for an unknown table."""
        if status not in ACTIVE + CLOSED:
            raise ValueError(f"unknown table status {status!r}")
        rows = [(table_id, first_index + i, seat, text) for i, (seat, text) in enumerate(actions)]
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                done = await conn.execute(_UPDATE_TABLE, status, json.dumps(meta), time.time(), table_id)
                if done != "UPDATE 1":
                    raise LookupError(f"no table {table_id}")
                if rows:
                    await conn.executemany(_INSERT_ACTION, rows)

    async def active_tables(self) -> list[TableRecord]:
        return [table_record(row) for row in await self._pool.fetch(_ACTIVE_TABLES)]

    async def untold_closed_tables(self) -> list[TableRecord]:
        rows = await self._pool.fetch(_UNTOLD_CLOSED, time.time() - UNTOLD_FOR)
        return [table_record(row) for row in rows]

    async def table_in_channel(self, channel_id: int) -> TableRecord | None:
        row = await self._pool.fetchrow(_TABLE_IN_CHANNEL, channel_id)
        return table_record(row) if row else None

    async def open_lobbies(self, host_id: int) -> int:
        return int(await self._pool.fetchval(_OPEN_LOBBIES, host_id))

    async def table(self, table_id: int) -> TableRecord | None:
        row = await self._pool.fetchrow(_TABLE_BY_ID, table_id)
        return table_record(row) if row else None

    async def close_table(self, table_id: int, status: str) -> None:
        if status not in CLOSED:
            raise ValueError(f"a table closes as one of {CLOSED}, not {status!r}")
        await self._pool.execute(_CLOSE_TABLE, status, time.time(), table_id)

    # -- results and stats ----------------------------------------------------

    async def _record_records(self, records: list[GameRecord]) -> list[Any]:
        if len(records) > 1:
            try:  # the whole group in one call of record_games
                return await self._record_group(records)
            except Exception:  # some record is bad: each alone, below
                log.debug("group of %d records failed as a whole; recording each alone", len(records),
                          exc_info=True)
        out: list[Any] = []
        for record in records:
            try:
                (result,) = await self._record_group([record])
            except Exception as exc:  # this record alone (its statement wrote nothing)
                result = exc
            out.append(result)
        return out

    async def _record_group(self, records: list[GameRecord]) -> list[Any]:
        """Record *records* with one call of ``record_games_v5`` (pg migrations
        3, 7 and 9), after one lock-free read of their stats rows unless this process
        knows them all (it wrote them last): the new rows (ratings in id
        order, as one game after the other would) are computed here, and the
        function writes them only if nothing they were computed from changed
        meanwhile (a row's games count is the test); else it returns the
        current rows and the group is computed again.  After
        ``RECORD_ATTEMPTS`` such misses the read too is made under the
        players' locks (it cannot miss then).  The seasons holding the
        games' ends are read without a lock too; the function checks them
        under the record lock (a season is made or ended under that lock held
        alone) and, when one was made or ended meanwhile, the group is
        computed again from the seasons read again (a process of the code
        before pg version 9 makes and ends seasons without that lock: an
        attempt under the locks can miss then, and is made again, up to
        ``LOCKED_ATTEMPTS``).  Returns the game ids in the
        order given (None: the table's game is recorded already).  Any error
        fails the whole group (nothing written)."""
        first: dict[int, int] = {}  # table id -> index of its first record in the group
        for i, record in enumerate(records):
            first.setdefault(record.table_id, i)
        fresh = [records[i] for i in sorted(first.values())]
        guilds = sorted({0, *(g.guild_id or 0 for g in fresh)})
        tables = [g.table_id for g in fresh]
        users = sorted({pr.user_id for g in fresh for pr in g.players if pr.user_id is not None})
        known = self._known
        seen: tuple[dict[tuple[int, int, int], tuple[Any, ...]], set[int]] | None = None  # (rows, tables recorded): the last read
        scopes: dict[int, list[int]] = {}
        key_args: list[list[Any]] = []

        async def count_in(conn: asyncpg.Connection) -> None:
            """The seasons holding each game's end (record_scopes), the stats keys they need."""
            nonlocal scopes, key_args, seen
            seasons = [tuple(row) for row in await conn.fetch(_SEASONS_AT, guilds, min(g.ended_at for g in fresh))]
            scopes = {g.table_id: record_scopes(g, seasons) for g in fresh}
            keys = sorted({(game_code(g.game), scope, pr.user_id) for g in fresh
                           for scope in scopes[g.table_id]
                           for pr in g.players if pr.user_id is not None})
            key_args = [list(col) for col in zip(*keys)] if keys else [[], [], []]
            seen = ({key: known[key] for key in keys}, set()) if keys and all(key in known for key in keys) else None

        async with self._pool.acquire() as conn:
            await count_in(conn)
            for attempt in range(RECORD_ATTEMPTS + LOCKED_ATTEMPTS):
                try:
                    if attempt < RECORD_ATTEMPTS:
                        if seen is None:
                            seen = self._read_rows(await conn.fetch(_READ_FOR_RECORD, *key_args, tables))
                        got = await self._try_group(conn, fresh, seen[0], seen[1], key_args, scopes)
                    else:
                        async with conn.transaction():  # the locks record_games takes, before the reads
                            await conn.execute(_RECORD_LOCKS, str(RECORD_LOCK_WAIT_MS), RECORD_LOCK, users)
                            await count_in(conn)  # (no season is made or ended while the lock is held)
                            seen = self._read_rows(await conn.fetch(_READ_FOR_RECORD, *key_args, tables))
                            got = await self._try_group(conn, fresh, seen[0], seen[1], key_args, scopes)
                except (asyncpg.DeadlockDetectedError, asyncpg.SerializationError):
                    if attempt >= RECORD_ATTEMPTS:
                        raise
                    seen = None
                    continue  # (none is expected: every lock is taken in one order)
                except asyncpg.UniqueViolationError as error:
                    # a game without humans (no player lock) recorded by another process meanwhile
                    if attempt >= RECORD_ATTEMPTS or error.constraint_name != "games_table_id_key":
                        raise
                    seen = None
                    continue
                if got == SEASONS_MOVED:  # a season was made or ended since the read: counted again
                    if attempt + 1 < RECORD_ATTEMPTS:  # (an attempt under the locks reads them there)
                        await count_in(conn)
                    continue
                if isinstance(got, str):  # a miss: the rows as they are now
                    seen = self._read_rows(json.loads(got))
                    for key, value in (await self._parked(conn, seen[0])).items():
                        seen[0][key] = value  # (record_games shows a parked rating as none)
                    continue
                ids, split, written = got
                break
            else:  # pragma: no cover - the locked read misses only seasons changed by old code, again and again
                raise RuntimeError("record_games missed under the players' locks")
            for key, row in written.items():
                known[key] = row
                known.move_to_end(key)
            while len(known) > KNOWN_ROWS:
                known.popitem(last=False)
            if split:  # buckets outgrew their limit: split soon, with the ones overfilled meanwhile
                self._to_split.update(dict.fromkeys(zip(*split)))
                if self._split_since is None:
                    self._split_since = time.monotonic()
            if self._split_since is not None and time.monotonic() - self._split_since >= SPLIT_EVERY:
                overfull, self._split_since = list(self._to_split), None
                self._to_split.clear()
                try:  # with the record lock held alone (split_buckets_at: unless another process split them)
                    await conn.fetchval(_SPLIT_BUCKETS, RECORD_LOCK, str(RECORD_LOCK_WAIT_MS),
                                        *[list(column) for column in zip(*overfull)])
                except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, asyncio.TimeoutError):
                    # the games are saved: the split waits for the next recording
                    log.warning("splitting %d overfull buckets failed; again after the next recording", len(overfull),
                                exc_info=True)
                    self._to_split.update(dict.fromkeys(overfull))
                    self._split_since = time.monotonic()
        return [ids.get(r.table_id) if first[r.table_id] == i else None for i, r in enumerate(records)]

    @staticmethod
    async def _parked(conn: asyncpg.Connection, current: dict[tuple[int, int, int], tuple]
                      ) -> dict[tuple[int, int, int], tuple]:
        """The rows of *current* without a rating that have one parked, with it."""
        keys = [key for key, row in current.items() if row[5] is None]
        if not keys:
            return {}
        found = await conn.fetch(_PARKED, *[list(col) for col in zip(*keys)])
        return {(r[0], r[1], r[2]): (*current[(r[0], r[1], r[2])][:5], r[3], r[4]) for r in found}

    @staticmethod
    def _read_rows(rows: Iterable[Sequence[Any]]) -> tuple[dict[tuple[int, int, int], tuple], set[int]]:
        """The rows of _READ_FOR_RECORD (or of a miss, decoded from JSON):
        stats rows by key, and the tables recorded already."""
        current: dict[tuple[int, int, int], tuple] = {}
        recorded: set[int] = set()
        for r in rows:
            if r[10] is not None:
                recorded.add(r[10])
            else:
                counters = json.loads(r[6]) if isinstance(r[6], str) else r[6]
                current[(r[0], r[1], r[2])] = (r[3], r[4], r[5], counters, r[7], r[8], r[9])
        return current, recorded

    @staticmethod
    async def _try_group(conn: asyncpg.Connection, fresh: list[GameRecord], current: dict, recorded: set[int],
                         key_args: list, scopes: dict[int, list[int]]
                         ) -> tuple[dict[int, int], tuple[list, ...] | None, dict] | str:
        """One ``record_games_v5`` from the rows *current* (not changed by
        this call): table id -> game id of the games written, the buckets
        to split (game, scope, board and lower bound columns; None: none)
        and the stats rows written; or, when the function found a row or a
        table changed since, its JSON of the current rows; or
        ``SEASONS_MOVED`` when the seasons holding the games' ends are not
        *scopes*' any more."""
        current = dict(current)
        done = [g for g in fresh if g.table_id not in recorded]  # in id order
        if not done:
            return {}, None, {}
        before = {key: v[0] for key, v in current.items()}
        names: dict[int, str] = {}
        for g in done:
            for pr in g.players:
                if pr.user_id is not None:
                    names[pr.user_id] = pr.name  # the latest name seen wins
        users = sorted(names)
        index = {g.table_id: i + 1 for i, g in enumerate(done)}
        results = [(index[g.table_id], pr.seat, pr.user_id, pr.name, pr.score, pr.place, json.dumps(pr.stats))
                   for g in done for pr in g.players]
        written: dict[tuple[int, int, int], tuple] = {}
        default = (ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA)
        for g in done:
            code = game_code(g.game)
            for scope in scopes[g.table_id]:
                new: list[tuple[float, float] | None] = [None] * len(g.players)
                if g.rated and len(g.players) >= 2:
                    rated_before = []
                    for pr in g.players:
                        old = current.get((code, scope, pr.user_id)) if pr.user_id is not None else None
                        rated_before.append(default if old is None or old[5] is None else (old[5], old[6]))
                    new = list(ratings.rate(rated_before, [pr.place for pr in g.players]))
                for pr, rating in zip(g.players, new):
                    if pr.user_id is None:
                        continue
                    key = (code, scope, pr.user_id)
                    games_, wins, score_sum, counters, rated_games, mu, sigma = current.get(
                        key, (0, 0, 0, {}, 0, None, None))
                    counters = dict(counters)
                    for name, value in pr.stats.items():
                        if isinstance(value, (int, float)) and not isinstance(value, bool):
                            counters[name] = counters.get(name, 0) + int(value)
                    if rating is not None:
                        mu, sigma = rating
                    current[key] = written[key] = (
                        games_ + 1, wins + int(pr.place == 1), score_sum + pr.score, counters,
                        rated_games + int(rating is not None), mu, sigma)
        rows = [(*key, before.get(key, 0), v[0], v[1], v[2], json.dumps(v[3]), v[4], v[5], v[6])
                for key, v in sorted(written.items())]
        columns = [list(col) for col in zip(*rows)] if rows else [[] for _ in range(11)]
        games = [list(col) for col in zip(*(
            (g.table_id, g.guild_id, g.channel_id, g.game, float(g.started_at), float(g.ended_at), g.seed,
             g.rounds, bool(g.has_bots), bool(g.rated), len(g.players)) for g in done))]
        result_columns = [list(col) for col in zip(*results)] if results else [[] for _ in range(7)]
        counted = [(index[g.table_id], -scope) for g in done for scope in scopes[g.table_id] if scope < 0]
        ids, missed, *split = await conn.fetchrow(
            _RECORD_GAMES, RECORD_LOCK, str(RECORD_LOCK_WAIT_MS), *games, users, [names[u] for u in users],
            *result_columns, *columns, *key_args, [c[0] for c in counted], [c[1] for c in counted])
        if ids is None:
            return missed
        return ({g.table_id: int(game_id) for g, game_id in zip(done, ids)}, tuple(split) if split[0] else None,
                written)

    async def profile(self, user_id: int, game: str, guild_id: int | None = None, *,
                      season: int | None = None) -> dict[str, Any] | None:
        row = await self._pool.fetchrow(_PROFILE, game_code(game), scope_of(guild_id, season), user_id)
        return None if row is None else profile_of(user_id, game, guild_id, tuple(row))

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
        """One page of a board, or the page after/before a cursor (as the SQLite store)."""
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        board = board_number(by)
        args = (game_code(game), scope_of(guild_id, season))
        if min_games != MIN_GAMES and by in ("rating", "win_rate"):
            if after is not None or before is not None:
                raise ValueError("cursors need the indexed board (min_games == MIN_GAMES)")
            sql = _plain_sql(board, min_games)
        else:
            sql = _BOARD_SQL[board]
        pos = max(page, 0) * page_size
        if after is not None or before is not None:
            key = after if after is not None else before
            rows = list(await self._pool.fetch(sql["after" if after is not None else "before"], *args, key,
                                               page_size))
            if before is not None:
                rows.reverse()
            if rows:
                ahead = int(rows[0][6]) - (len(rows) if before is not None else 0)
                return page_of(rows, ahead, int(rows[0][7]), page_size, await self._tied(sql, args, rows[0][5], ahead))
            pos = 0 if before is not None else -1  # nothing beyond the cursor: the first or the last page
        if "page_at" in sql:
            rows = list(await self._pool.fetch(sql["page_at"], *args, page_size, pos))
            if not rows:
                return Page([], 0, 0, 0)
            ahead = int(rows[0][6])
            return page_of(rows, ahead, int(rows[0][7]), page_size, await self._tied(sql, args, rows[0][5], ahead))
        async with self._pool.acquire() as conn:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                total = int(await conn.fetchval(sql["count"], *args))
                if total == 0:
                    return Page([], 0, 0, 0)
                if not 0 <= pos < total:
                    pos = (total - 1) // page_size * page_size
                rows = list(await conn.fetch(sql["page"], *args, page_size, pos))
                tied = int(await conn.fetchval(sql["tied"], *args, rows[0][5])) if pos and rows else 0
        return page_of(rows, pos, total, page_size, tied)

    async def _tied(self, sql: dict[str, str], args: tuple[Any, ...], key: str, ahead: int) -> int:
        """Entries with a better value than *key*'s (*ahead* entries are before it)."""
        return 0 if ahead == 0 else int(await self._pool.fetchval(sql["tied"], *args, key))

    async def rank(
        self, user_id: int, game: str, guild_id: int | None = None, by: str = "rating", min_games: int = MIN_GAMES,
        *, season: int | None = None,
    ) -> int | None:
        """Exact 1-based rank of *user_id* on a board (shared with equal values); None if not on it."""
        place = await self.board_place(user_id, game, guild_id, by, min_games, season=season)
        return None if place is None else place[0]

    async def board_place(
        self, user_id: int, game: str, guild_id: int | None = None, by: str = "rating", min_games: int = MIN_GAMES,
        *, season: int | None = None,
    ) -> tuple[int, int] | None:
        """``(rank, position)`` on a board (as the SQLite store)."""
        board = board_number(by)
        plain = min_games != MIN_GAMES and by in ("rating", "win_rate")
        sql = (_plain_sql(board, min_games) if plain else _BOARD_SQL[board])["rank"]
        row = await self._pool.fetchrow(sql, game_code(game), scope_of(guild_id, season), user_id)
        return None if row is None else (int(row[2]) + 1, int(row[1]) + 1)

    async def history(
        self, user_id: int, limit: int = 10, guild_id: int | None = None, game: str | None = None
    ) -> list[HistoryEntry]:
        rows = await self._pool.fetch(_HISTORY, user_id, guild_id, game, limit)
        return [
            {"game_id": r[0], "game": r[1], "guild_id": r[2], "ended_at": r[3], "place": r[4],
             "score": r[5], "players": r[6], "table_id": r[7]}
            for r in rows
        ]

    async def game_detail(self, game_id: int) -> GameDetail | None:
        r = await self._pool.fetchrow(_GAME_DETAIL, game_id)
        if r is None:
            return None
        return {
            "game_id": r[0], "table_id": r[1], "guild_id": r[2], "channel_id": r[3], "game": r[4],
            "started_at": r[5], "ended_at": r[6], "seed": r[7], "rounds": r[8],
            "has_bots": bool(r[9]), "rated": bool(r[10]), "players": r[11],
            "standings": json.loads(r[12] or "[]"),
        }

    # -- game nights ---------------------------------------------------------

    async def create_night(self, guild_id: int, channel_id: int, game: str, meta: dict[str, Any]) -> int:
        now = time.time()
        try:
            return int(await self._pool.fetchval(_CREATE_NIGHT, guild_id, channel_id, game, json.dumps(meta),
                                                 now, now))
        except asyncpg.UniqueViolationError:
            raise LookupError(f"channel {channel_id} has an open night") from None

    async def save_night(self, night_id: int, status: str, meta: dict[str, Any]) -> None:
        await self._pool.execute(_SAVE_NIGHT, status, json.dumps(meta), time.time(), night_id)

    async def end_night(self, night_id: int, meta: dict[str, Any], rows: Sequence[dict[str, Any]]) -> None:
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                await conn.execute(_SAVE_NIGHT, "ended", json.dumps(meta), time.time(), night_id)
                if rows:
                    await conn.executemany(_INSERT_NIGHT_PLAYER, [
                        (night_id, r["user_id"], r["place"], float(r["points"]), r["wins"], r["games"])
                        for r in rows])

    async def open_nights(self) -> list[NightRow]:
        return [night_record(row) for row in await self._pool.fetch(_OPEN_NIGHTS)]

    async def night_in_channel(self, channel_id: int) -> NightRow | None:
        row = await self._pool.fetchrow(_NIGHT_IN_CHANNEL, channel_id)
        return night_record(row) if row else None

    async def night_record(self, user_id: int, game: str, guild_id: int | None = None) -> dict[str, int]:
        played, won = await self._pool.fetchrow(_NIGHT_RECORD, user_id, game, guild_id)
        return {"played": int(played or 0), "won": int(won or 0)}

    async def table_result(self, table_id: int) -> list[dict[str, Any]] | None:
        rows = await self._pool.fetch(_TABLE_RESULT, table_id)
        if not rows:
            return None
        return [{"seat": r[0], "user_id": r[1], "score": r[2], "place": r[3]} for r in rows]

    # -- guild settings ------------------------------------------------------

    async def guild_settings(self, guild_id: int) -> dict[str, Any]:
        out = dict(GUILD_DEFAULTS)
        for key, value in await self._pool.fetch(_GUILD_SETTINGS, guild_id):
            out[key] = json.loads(value)
        return out

    async def set_guild_setting(self, guild_id: int, key: str, value: Any) -> None:
        await self._pool.execute(_SET_GUILD_SETTING, guild_id, key, json.dumps(value))

    # -- maintenance ---------------------------------------------------------

    # -- who is really playing (as the SQLite store) --------------------------

    async def park_inactive(self, now: float, windows: dict[int, float] | None = None,
                            days: float = ACTIVE_DAYS) -> int:
        custom = windows or {}
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                done = await conn.execute(_PARK.format(where=f"scope NOT IN ({_WINDOWED})"), now - days * 86400,
                                          sorted(custom), now)
                count = int(done.split()[-1])
                for guild_id, window in custom.items():
                    done = await conn.execute(_PARK.format(where=f"scope IN ({_WINDOWED})"), now - window * 86400,
                                              [guild_id], now)
                    count += int(done.split()[-1])
        return count

    async def _hide(self, guild_id: int, user_id: int, change: str, *args: Any) -> bool:
        """*change* of ``board_exclusions`` and, when it changed a row, the
        member's rows of the guild's boards hidden or shown, in one
        transaction under the record lock (a recording counts the buckets
        from the keys it read: no key may change under it)."""
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1)", RECORD_LOCK)
                done = await conn.execute(change, guild_id, user_id, *args)
                if done.split()[-1] == "0":
                    return False
                await conn.execute(_HIDE, guild_id, user_id, change == _EXCLUDE, sorted(GAME_CODES.values()))
        return True

    async def exclude_member(self, guild_id: int, user_id: int, now: float) -> bool:
        return await self._hide(guild_id, user_id, _EXCLUDE, now)

    async def include_member(self, guild_id: int, user_id: int) -> bool:
        return await self._hide(guild_id, user_id, _INCLUDE)

    async def excluded_members(self, guild_id: int) -> list[int]:
        return [int(row[0]) for row in await self._pool.fetch(_EXCLUDED_OF, guild_id)]

    async def is_excluded(self, guild_id: int, user_id: int) -> bool:
        return bool(await self._pool.fetchval(_IS_EXCLUDED, guild_id, user_id))

    async def rated_at(self, user_id: int, game: str, guild_id: int | None = None, *,
                       season: int | None = None) -> float | None:
        return await self._pool.fetchval(_RATED_AT, game_code(game), scope_of(guild_id, season), user_id)

    # -- seasons (as the SQLite store) ----------------------------------------

    async def create_season(self, guild_id: int, name: str, starts_at: float, ends_at: float | None = None, *,
                            exist_ok: bool = False) -> int:
        if ends_at is not None and ends_at <= starts_at:
            raise ValueError("a season ends after it starts")
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                # one guild's seasons are made one at a time (the overlap check holds)
                await conn.execute("SELECT pg_advisory_xact_lock($1, hashint8($2))", SEASON_LOCK, guild_id)
                same = await conn.fetchval(_SEASON_NAMED, guild_id, name)
                if same is not None:
                    if exist_ok:
                        return int(same)
                    raise LookupError(f"guild {guild_id} has a season {name!r}")
                await conn.execute(_SEASONS_HELD, str(RECORD_LOCK_WAIT_MS), RECORD_LOCK)
                (plan,) = await self._after_recorded(conn, [SeasonPlan(guild_id, name, starts_at, ends_at)])
                if plan is None or await conn.fetchval(_SEASON_OVERLAP, guild_id, plan.starts_at, ends_at):
                    raise ValueError(f"season {name!r} overlaps another season of guild {guild_id}")
                return int(await conn.fetchval(_CREATE_SEASON, guild_id, name, plan.starts_at, ends_at))

    @staticmethod
    async def _after_recorded(conn: asyncpg.Connection, plans: Sequence[SeasonPlan]) -> list[SeasonPlan | None]:
        """*plans* each from its start or just after the last game of its
        guild recorded already in its span (app.store.base.after_recorded;
        None: nothing left of it), read under the record lock."""
        last = dict(await conn.fetch(_LAST_GAMES_IN, [p.guild_id for p in plans], [p.starts_at for p in plans],
                                     [p.ends_at for p in plans]))
        out: list[SeasonPlan | None] = []
        for n, plan in enumerate(plans, 1):
            start = after_recorded(plan.starts_at, last.get(n))
            out.append(None if plan.ends_at is not None and start >= plan.ends_at
                       else plan._replace(starts_at=start))
        return out

    async def end_season(self, season_id: int, at: float, *,
                         then: Sequence[SeasonPlan] = ()) -> dict[str, Any] | None:
        plans = check_plans(then)
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                row = await conn.fetchrow(_SEASON_BY_ID, season_id)
                if row is None:
                    return None
                season = season_record(tuple(row))
                guild_id = season["guild_id"]
                await conn.execute("SELECT pg_advisory_xact_lock($1, hashint8($2))", SEASON_LOCK, guild_id)
                await conn.execute(_SEASONS_HELD, str(RECORD_LOCK_WAIT_MS), RECORD_LOCK)
                bound = at
                if season["starts_at"] < at and (season["ends_at"] is None or season["ends_at"] > at):
                    (rest,) = await self._after_recorded(conn, [SeasonPlan(guild_id, "", at, season["ends_at"])])
                    bound = season["ends_at"] if rest is None else rest.starts_at
                await conn.execute(_END_SEASON, season_id, bound)
                await conn.execute(_DROP_PLANNED, season_id, bound)
                if plans:
                    await self._make_held(conn, [p._replace(starts_at=max(p.starts_at, bound)) for p in plans])
                row = await conn.fetchrow(_SEASON_BY_ID, season_id)
        return None if row is None else season_record(tuple(row))

    async def season(self, season_id: int) -> dict[str, Any] | None:
        row = await self._pool.fetchrow(_SEASON_BY_ID, season_id)
        return None if row is None else season_record(tuple(row))

    async def seasons(self, guild_id: int) -> list[dict[str, Any]]:
        return [season_record(tuple(row)) for row in await self._pool.fetch(_SEASONS_OF, guild_id)]

    async def seasons_ended(self, now: float) -> list[dict[str, Any]]:
        return [season_record(tuple(row)) for row in await self._pool.fetch(_SEASONS_ENDED, now)]

    async def set_seasons_meta(self, metas: Mapping[int, dict[str, Any]]) -> None:
        if metas:
            await self._pool.execute(_SET_SEASONS_META, list(metas), [json.dumps(m) for m in metas.values()])

    async def make_seasons(self, plans: Sequence[SeasonPlan]) -> list[int | None]:
        """As the SQLite store's: a read, and only when some season is
        missing a transaction of two statements (the guilds' locks, then
        every missing season made at once)."""
        todo = check_plans(plans)
        if not todo:
            return []
        guilds, names = [p.guild_id for p in todo], [p.name for p in todo]
        found = dict(await self._pool.fetch(_SEASONS_NAMED_IN, guilds, names))
        if len(found) < len(todo):
            async with self._pool.acquire() as conn:
                async with conn.transaction():
                    await conn.execute(_LOCK_SEASON_GUILDS, SEASON_LOCK, guilds)
                    await conn.execute(_SEASONS_HELD, str(RECORD_LOCK_WAIT_MS), RECORD_LOCK)
                    return await self._make_held(conn, todo)
        return [found.get(n) for n in range(1, len(todo) + 1)]

    async def _make_held(self, conn: asyncpg.Connection, plans: Sequence[SeasonPlan]) -> list[int | None]:
        """make_seasons' writing, in a transaction holding the plans' guilds'
        locks and the record lock alone: each plan's season id (the one of
        its name, or made from its start or just after the last game of its
        guild recorded in its span; None: it overlaps, or nothing is left of it)."""
        moved = await self._after_recorded(conn, plans)
        made = [(n, p) for n, p in enumerate(moved, 1) if p is not None]
        found = dict(await conn.fetch(_MAKE_SEASONS, [p.guild_id for _, p in made], [p.name for _, p in made],
                                      [p.starts_at for _, p in made], [p.ends_at for _, p in made]))
        by_name = {(p.guild_id, p.name): found.get(i) for i, (_, p) in enumerate(made, 1)}
        if len(made) < len(plans):  # (a plan with nothing left: the season of its name, if any)
            for plan in plans:
                if (plan.guild_id, plan.name) not in by_name:
                    by_name[(plan.guild_id, plan.name)] = await conn.fetchval(_SEASON_NAMED, plan.guild_id, plan.name)
        return [by_name.get((p.guild_id, p.name)) for p in plans]

    async def guilds_with_setting(self, key: str) -> dict[int, Any]:
        return {row[0]: json.loads(row[1]) for row in await self._pool.fetch(_GUILDS_WITH_SETTING, key)}

    async def rebuild_boards(self) -> None:
        """Recount every board's buckets from ``stats`` (one transaction,
        recordings wait for it): for repair, or after a bulk load."""
        async with self._pool.acquire() as conn:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1)", RECORD_LOCK)
                for statement in REBUILD_BUCKETS:
                    await conn.execute(statement, timeout=None)

    async def integrity_check(self) -> list[str]:
        """['ok'] when every bucket counts the entries of its key range,
        every board's buckets sum to its entries, every group of buckets
        counts its buckets and their entries, and every stats row's games
        agree with the recorded games in the global scope (foreign keys and
        unique keys PostgreSQL enforces itself).  O(N)."""
        problems = []
        for board, (_, col) in BOARDS.items():
            for r in await self._pool.fetch(f"""
                SELECT b.game, b.scope, b.lo, b.cnt, (
                    SELECT count(*) FROM stats AS s WHERE s.game = b.game AND s.scope = b.scope
                      AND s.{col} >= b.lo AND (b.hi IS NULL OR s.{col} < b.hi))
                FROM (SELECT *, lead(lo) OVER (PARTITION BY game, scope ORDER BY lo) AS hi
                      FROM buckets WHERE board = {board}) AS b
                WHERE b.cnt != (SELECT count(*) FROM stats AS s WHERE s.game = b.game AND s.scope = b.scope
                                AND s.{col} >= b.lo AND (b.hi IS NULL OR s.{col} < b.hi))
            """, timeout=None):
                problems.append(f"board {board} game {r[0]} scope {r[1]}: bucket {r[2]!r} counts {r[3]}, holds {r[4]}")
            for r in await self._pool.fetch(f"""
                SELECT s.game, s.scope, count(*) FROM stats AS s WHERE s.{col} IS NOT NULL
                GROUP BY s.game, s.scope
                HAVING count(*) != (SELECT coalesce(sum(cnt), 0) FROM buckets AS b
                                    WHERE b.game = s.game AND b.scope = s.scope AND b.board = {board})
                    OR NOT EXISTS (SELECT 1 FROM buckets AS b
                                   WHERE b.game = s.game AND b.scope = s.scope AND b.board = {board} AND b.lo = '')
            """, timeout=None):
                problems.append(f"board {board} game {r[0]} scope {r[1]}: {r[2]} entries, buckets disagree")
        for r in await self._pool.fetch("""
            SELECT g.game, g.scope, g.board, g.lo, g.cnt, g.nb, x.cnt, x.nb
            FROM (SELECT *, lead(lo) OVER (PARTITION BY game, scope, board ORDER BY lo) AS hi
                  FROM bucket_groups) AS g
            CROSS JOIN LATERAL (SELECT coalesce(sum(b.cnt), 0) AS cnt, count(*) AS nb FROM buckets AS b
                                WHERE b.game = g.game AND b.scope = g.scope AND b.board = g.board
                                  AND b.lo >= g.lo AND (g.hi IS NULL OR b.lo < g.hi)) AS x
            WHERE g.cnt <> x.cnt OR g.nb <> x.nb
        """, timeout=None):
            problems.append(f"board {r[2]} game {r[0]} scope {r[1]}: group {r[3]!r} counts {r[4]} in {r[5]} buckets,"
                            f" they hold {r[6]} in {r[7]}")
        for r in await self._pool.fetch("""
            SELECT DISTINCT b.game, b.scope, b.board FROM buckets AS b
            WHERE NOT EXISTS (SELECT 1 FROM bucket_groups AS g
                              WHERE g.game = b.game AND g.scope = b.scope AND g.board = b.board AND g.lo = '')
        """, timeout=None):
            problems.append(f"board {r[2]} game {r[0]} scope {r[1]}: no first group")
        codes = ", ".join(f"({code}, '{key}')" for key, code in sorted(GAME_CODES.items()))
        for r in await self._pool.fetch(f"""
            SELECT s.game, s.user_id, s.games, count(g.id)
            FROM stats AS s
            JOIN (VALUES {codes}) AS c (code, key) ON c.code = s.game
            LEFT JOIN game_players AS gp ON gp.user_id = s.user_id
            LEFT JOIN games AS g ON g.id = gp.game_id AND g.game = c.key
            WHERE s.scope = 0
            GROUP BY s.game, s.user_id, s.games
            HAVING s.games != count(g.id)
        """, timeout=None):
            problems.append(f"stats of user {r[1]} in game {r[0]}: {r[2]} games, {r[3]} recorded")
        return problems or ["ok"]

    # -- after the game: verification, replay, head-to-head -------------------

    async def game_of_table(self, table_id: int) -> int | None:
        value = await self._pool.fetchval(_GAME_OF_TABLE, table_id)
        return int(value) if value is not None else None

    async def versus(self, user_id: int, other_id: int, game: str | None = None) -> dict[str, dict[str, Any]]:
        """Head-to-head of two players across all servers, per game (as the SQLite store)."""
        if game is not None:
            game_code(game)
        counts = {r[0]: r[1] for r in await self._pool.fetch(
            _VERSUS_COUNTS, [user_id, other_id], sorted(GAME_CODES.values()))}
        swap = counts.get(other_id, 0) < counts.get(user_id, 0)
        driver, other = (other_id, user_id) if swap else (user_id, other_id)
        rows = await self._pool.fetch(_VERSUS, driver, other, game)
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            name, games, ahead, behind, level, score, other_score = (
                (r[0], r[1], r[3], r[2], r[4], r[6], r[5]) if swap else tuple(r))
            out[name] = {"games": games, "ahead": ahead, "behind": behind, "level": level,
                         "score": score, "other_score": other_score}
        return out


# -- copying an SQLite database -------------------------------------------------


class TargetNotEmpty(Exception):
    """``copy_sqlite`` into a database that holds data already."""


#: column lists per table (SQLite and PostgreSQL alike) and a converter per column
_COPY_COLUMNS: dict[str, tuple[str, ...]] = {
    "tables": ("id", "guild_id", "channel_id", "game", "status", "meta", "created_at", "updated_at"),
    "table_actions": ("table_id", "idx", "seat", "action"),
    "guild_settings": ("guild_id", "key", "value"),
    "players": ("user_id", "name"),
    "games": ("id", "table_id", "guild_id", "channel_id", "game", "started_at", "ended_at", "seed", "rounds",
              "has_bots", "rated", "n_players"),
    "game_players": ("game_id", "seat", "user_id", "name", "score", "place", "stats"),
    "stats": ("game", "scope", "user_id", "games", "wins", "score_sum", "counters", "rated_games", "mu", "sigma",
              "rated_at", "parked_mu", "parked_sigma", "hidden"),
    "nights": ("id", "guild_id", "channel_id", "game", "status", "meta", "created_at", "updated_at"),
    "night_players": ("night_id", "user_id", "guild_id", "game", "place", "points", "wins", "games"),
    "seasons": ("id", "guild_id", "name", "starts_at", "ends_at", "meta"),
    "board_exclusions": ("guild_id", "user_id", "at"),
}
_FLOATS = {"created_at", "updated_at", "started_at", "ended_at", "mu", "sigma", "points", "starts_at", "ends_at",
           "rated_at", "parked_mu", "parked_sigma", "at"}
_BOOLS = {"has_bots", "rated", "hidden"}
_COPY_CHUNK = 5000


def _convert(column: str, value: Any) -> Any:
    if value is None:
        return None
    if column in _FLOATS:
        return float(value)
    if column in _BOOLS:
        return bool(value)
    return value


async def copy_sqlite(sqlite_path: str, dsn: str) -> dict[str, int]:
    """Copy the SQLite database at *sqlite_path* (migrated to the latest
    version first) into the EMPTY PostgreSQL database *dsn*, in one
    transaction, keeping every id; the identity sequences then continue past
    the copied ids.  Returns the rows copied per table.

    :class:`TargetNotEmpty` if the target holds any row;
    :class:`StoreUnavailable` if either database cannot be opened.
    """
    from app.store.sqlite import SqliteStore

    source = await SqliteStore.open(sqlite_path, checkpoint_interval=None)  # migrates the file
    await source.close()
    target = await PostgresStore.open(dsn, max_size=1)  # migrates the target
    await target.close()
    counts: dict[str, int] = {}
    db = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    try:
        conn = await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT)
    except _CONNECT_ERRORS as error:
        db.close()
        raise _unavailable(dsn, error) from error
    try:
        async with conn.transaction():
            for name in TABLES:  # nobody may write while we look and copy
                await conn.execute(f"LOCK TABLE {name} IN EXCLUSIVE MODE")
            busy = [name for name in TABLES if await conn.fetchval(f"SELECT EXISTS (SELECT 1 FROM {name})")]
            if busy:
                raise TargetNotEmpty(f"{safe_url(dsn)} is not empty (rows in {', '.join(busy)})")
            # one COPY writes many stats rows per statement: the bucket trigger is
            # right for one row per statement only, so the buckets are rebuilt after
            await conn.execute("ALTER TABLE stats DISABLE TRIGGER stats_boards, DISABLE TRIGGER stats_rated")
            for name in TABLES:
                columns = _COPY_COLUMNS[name]
                # a command of its own (the bot is stopped): plain reads, no worker threads
                cursor = db.execute(f"SELECT {', '.join(columns)} FROM {name}")
                counts[name] = 0
                while True:
                    chunk = cursor.fetchmany(_COPY_CHUNK)
                    if not chunk:
                        break
                    records = [tuple(_convert(c, v) for c, v in zip(columns, row)) for row in chunk]
                    await conn.copy_records_to_table(name, records=records, columns=columns)
                    counts[name] += len(records)
            await conn.execute("ALTER TABLE stats ENABLE TRIGGER stats_boards, ENABLE TRIGGER stats_rated")
            for statement in REBUILD_BUCKETS:
                await conn.execute(statement)
            for name in ("tables", "games", "nights", "seasons"):
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), coalesce(max(id), 0) + 1, false)"
                    f" FROM {name}")
        for name in (*TABLES, "buckets"):  # planner statistics, and index-only scans from the start
            await conn.execute(f"VACUUM (ANALYZE) {name}", timeout=None)
    finally:
        await conn.close()
        db.close()
        _tidy_sqlite(sqlite_path)
    return counts


def _tidy_sqlite(path: str) -> None:
    """A read-only reader of a WAL file leaves an empty ``-wal`` and a ``-shm``
    beside it; the last read-write connection to close removes them (after a
    checkpoint of nothing: the file itself stays byte for byte).  Nothing
    happens while the bot still holds the file open."""
    try:
        tidy = sqlite3.connect(path)
        try:
            tidy.execute("SELECT count(*) FROM sqlite_master").fetchall()
        finally:
            tidy.close()
    except sqlite3.Error:
        log.info("%s: left its -wal and -shm files", path, exc_info=True)
