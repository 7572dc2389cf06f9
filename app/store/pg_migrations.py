"""Numbered schema migrations for the PostgreSQL store (app.store.postgres).

``MIGRATIONS[k]`` takes a database from version *k* (the row of
``schema_version``; 0 = an empty database) to *k + 1*.  :func:`migrate`
applies every pending migration and the new version in ONE transaction that
first takes ``pg_advisory_xact_lock(MIGRATION_LOCK)``: processes that start
together wait for each other and migrate once (DDL is transactional in
PostgreSQL, so a failure leaves the old version).

Never edit a migration that has shipped; append a new one.

Version 1 is the schema the SQLite migrations 1-7 produce, written for
PostgreSQL:

* ids are identity columns (``--copy-db`` keeps SQLite's ids and then moves
  the sequences past them); Discord ids are ``bigint``;
* a table's ``meta`` and a stats row's ``counters`` are ``jsonb``; the one
  active table per channel is a unique partial index on ``channel_id``
  (night tables, whose meta names a ``night_id``, are exempt);
* the four board sort keys are *generated* columns with the same 32
  hex-digit text as SQLite's (so cursors look the same), in the "C"
  collation (byte order, whatever the server's locale); each board is an
  index on ``(game, scope, key)``;
* an order-statistic index of one level (SQLite's has two): ``buckets``
  cuts each board into consecutive key ranges, ``lo -> cnt`` counting the
  entries with key >= ``lo`` below the next bucket's ``lo``; the first
  bucket of a board is ``''``.  The row trigger ``stats_boards`` keeps the
  counts exact in the writing transaction and splits a bucket past
  ``BUCKET_MAX`` entries at its median key.  A rank sums the buckets before
  the player's and counts < ``BUCKET_MAX`` index entries; a page finds its
  bucket by running count and seeks from its bound.  The trigger is right
  for statements that change one stats row each (what the store does); bulk
  writes (``--copy-db``) disable it and run :data:`REBUILD_BUCKETS`.
"""
from __future__ import annotations

import asyncpg

from app.store.base import BOARDS
from core.registry import MIN_GAMES

#: a bucket holding more entries than this splits in two
BUCKET_MAX = 1024
#: bulk rebuilds cut boards into buckets of this size (room to grow)
BUCKET_FILL = 512

#: the advisory lock of migrations (any constant; "cardnite")
MIGRATION_LOCK = 0x63617264_6E697465 - (1 << 63)
#: the advisory lock held by every recording transaction (see app.store.postgres)
RECORD_LOCK = MIGRATION_LOCK + 1

#: the integer part of each board's key (grows as the value falls), over a
#: ``stats`` row; the same IEEE double arithmetic as SQLite's KEY_EXPR, and
#: SQLite's round() of a positive value below 2**52 is floor(x + 0.5)
KEY_EXPR: dict[int, str] = {
    0: "floor((1e6::float8 - (mu - 3.0::float8 * sigma)) * 1e9::float8 + 0.5::float8)::bigint",
    1: "4611686018427387904 - wins",
    2: "floor((1.0::float8 - wins::float8 / games) * 1e15::float8 + 0.5::float8)::bigint",
    3: "4611686018427387904 - games",
}
#: each board's displayed value
VALUE_EXPR: dict[int, str] = {
    0: "s.mu - 3.0::float8 * s.sigma",
    1: "s.wins",
    2: "s.wins::float8 / s.games",
    3: "s.games",
}
#: the condition for being on each indexed board
ON_BOARD: dict[int, str] = {
    0: f"games >= {MIN_GAMES} AND mu IS NOT NULL",
    1: "true",
    2: f"games >= {MIN_GAMES}",
    3: "true",
}


def sort_key(board: int, on_board: str | None = None) -> str:
    """SQL of *board*'s sort key over a ``stats`` row (NULL when off the
    board): 16 upper-case hex digits of the key, 16 of the user id."""
    cond = ON_BOARD[board] if on_board is None else on_board
    return (f"CASE WHEN {cond} THEN upper(lpad(to_hex({KEY_EXPR[board]}), 16, '0')"
            f" || lpad(to_hex(user_id), 16, '0')) END")


def board_function(bucket_max: int | None = None) -> str:
    """The trigger function keeping every board's bucket counts exact
    (*bucket_max*: the split limit, ``BUCKET_MAX`` unless a test asks)."""
    limit = BUCKET_MAX if bucket_max is None else int(bucket_max)
    blocks = []
    for board, (_, col) in BOARDS.items():
        # the buckets holding the old and the new key; nothing to write when
        # they are the same bucket (the usual case: a key moves a little)
        blocks.append(f"""
    IF TG_OP <> 'UPDATE' OR OLD.{col} IS DISTINCT FROM NEW.{col}
       OR OLD.game <> NEW.game OR OLD.scope <> NEW.scope THEN
        old_lo := NULL;
        new_lo := NULL;
        IF TG_OP <> 'INSERT' AND OLD.{col} IS NOT NULL THEN
            SELECT lo INTO old_lo FROM buckets
            WHERE game = OLD.game AND scope = OLD.scope AND board = {board} AND lo <= OLD.{col}
            ORDER BY lo DESC LIMIT 1;
        END IF;
        IF TG_OP <> 'DELETE' AND NEW.{col} IS NOT NULL THEN
            SELECT lo, cnt + 1 INTO new_lo, b_cnt FROM buckets
            WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo <= NEW.{col}
            ORDER BY lo DESC LIMIT 1;
        END IF;
        IF old_lo IS NULL OR new_lo IS NULL OR old_lo <> new_lo
           OR OLD.game <> NEW.game OR OLD.scope <> NEW.scope THEN
            IF old_lo IS NOT NULL THEN
                UPDATE buckets SET cnt = cnt - 1
                WHERE game = OLD.game AND scope = OLD.scope AND board = {board} AND lo = old_lo;
            END IF;
            IF TG_OP <> 'DELETE' AND NEW.{col} IS NOT NULL THEN
                IF new_lo IS NULL THEN
                    INSERT INTO buckets (game, scope, board, lo, cnt) VALUES (NEW.game, NEW.scope, {board}, '', 1);
                ELSIF b_cnt > {limit} THEN
                    SELECT {col} INTO mid FROM stats
                    WHERE game = NEW.game AND scope = NEW.scope AND {col} IS NOT NULL AND {col} >= new_lo
                    ORDER BY {col} OFFSET b_cnt / 2 LIMIT 1;
                    INSERT INTO buckets (game, scope, board, lo, cnt)
                    VALUES (NEW.game, NEW.scope, {board}, mid, b_cnt - b_cnt / 2);
                    UPDATE buckets SET cnt = b_cnt / 2
                    WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo = new_lo;
                ELSE
                    UPDATE buckets SET cnt = b_cnt
                    WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo = new_lo;
                END IF;
            END IF;
        END IF;
    END IF;""")
    return f"""
CREATE OR REPLACE FUNCTION stats_boards() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    old_lo text COLLATE "C";
    new_lo text COLLATE "C";
    b_cnt integer;
    mid text COLLATE "C";
BEGIN{"".join(blocks)}
    RETURN NULL;
END
$fn$
"""


#: recount every board's buckets from ``stats`` (with the trigger disabled or
#: under the record lock, in one transaction): a bucket every BUCKET_FILL entries
REBUILD_BUCKETS: tuple[str, ...] = (
    "DELETE FROM buckets",
    *(
        f"""
        INSERT INTO buckets (game, scope, board, lo, cnt)
        SELECT game, scope, {board}, CASE WHEN pos = 0 THEN '' ELSE k END, least({BUCKET_FILL}, total - pos)
        FROM (
            SELECT game, scope, {col} AS k,
                   row_number() OVER w - 1 AS pos, count(*) OVER p AS total
            FROM stats WHERE {col} IS NOT NULL
            WINDOW p AS (PARTITION BY game, scope), w AS (PARTITION BY game, scope ORDER BY {col})
        ) AS ranked
        WHERE pos % {BUCKET_FILL} = 0
        """
        for board, (_, col) in BOARDS.items()
    ),
)


_V1 = (
    """
    CREATE TABLE tables (
        id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        guild_id    bigint NOT NULL,
        channel_id  bigint NOT NULL,
        game        text NOT NULL,
        status      text NOT NULL DEFAULT 'lobby'
                    CHECK (status IN ('lobby', 'playing', 'finished', 'cancelled', 'abandoned')),
        meta        jsonb NOT NULL DEFAULT '{}',
        created_at  double precision NOT NULL,
        updated_at  double precision NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX tables_active_channel ON tables (channel_id)"
    " WHERE status IN ('lobby', 'playing') AND (meta ->> 'night_id') IS NULL",
    "CREATE INDEX tables_active ON tables (id) WHERE status IN ('lobby', 'playing')",
    "CREATE INDEX tables_closed ON tables (updated_at) WHERE status IN ('cancelled', 'abandoned')",
    """
    CREATE TABLE table_actions (
        table_id  bigint NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
        idx       integer NOT NULL,
        seat      integer NOT NULL,
        action    text NOT NULL,
        PRIMARY KEY (table_id, idx)
    )
    """,
    """
    CREATE TABLE guild_settings (
        guild_id  bigint NOT NULL,
        key       text NOT NULL,
        value     text NOT NULL,
        PRIMARY KEY (guild_id, key)
    )
    """,
    """
    CREATE TABLE players (
        user_id  bigint PRIMARY KEY,
        name     text NOT NULL
    )
    """,
    """
    CREATE TABLE games (
        id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        table_id    bigint NOT NULL UNIQUE,
        guild_id    bigint,
        channel_id  bigint,
        game        text NOT NULL,
        started_at  double precision NOT NULL,
        ended_at    double precision NOT NULL,
        seed        bigint,
        rounds      integer NOT NULL,
        has_bots    boolean NOT NULL,
        rated       boolean NOT NULL,
        n_players   integer NOT NULL
    )
    """,
    """
    CREATE TABLE game_players (
        game_id  bigint NOT NULL REFERENCES games (id) ON DELETE CASCADE,
        seat     integer NOT NULL,
        user_id  bigint REFERENCES players (user_id),
        name     text NOT NULL,
        score    integer NOT NULL,
        place    integer NOT NULL,
        stats    text NOT NULL DEFAULT '{}',
        PRIMARY KEY (game_id, seat)
    )
    """,
    "CREATE INDEX game_players_versus ON game_players (user_id, game_id, place, score) WHERE user_id IS NOT NULL",
    f"""
    CREATE TABLE stats (
        game         integer NOT NULL,
        scope        bigint NOT NULL,
        user_id      bigint NOT NULL REFERENCES players (user_id),
        games        integer NOT NULL DEFAULT 0,
        wins         integer NOT NULL DEFAULT 0,
        score_sum    bigint NOT NULL DEFAULT 0,
        counters     jsonb NOT NULL DEFAULT '{{}}',
        rated_games  integer NOT NULL DEFAULT 0,
        mu           double precision,
        sigma        double precision,
        {", ".join(f'{col} text COLLATE "C" GENERATED ALWAYS AS ({sort_key(board)}) STORED'
                   for board, (_, col) in BOARDS.items())},
        PRIMARY KEY (game, scope, user_id)
    )
    """,
    *(f"CREATE INDEX stats_{name} ON stats (game, scope, {col}) WHERE {col} IS NOT NULL"
      for name, col in BOARDS.values()),
    """
    CREATE TABLE nights (
        id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        guild_id    bigint NOT NULL,
        channel_id  bigint NOT NULL,
        game        text NOT NULL,
        status      text NOT NULL,
        meta        text NOT NULL,
        created_at  double precision NOT NULL,
        updated_at  double precision NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX nights_open_channel ON nights (channel_id) WHERE status != 'ended'",
    "CREATE INDEX nights_channel ON nights (channel_id, id)",
    """
    CREATE TABLE night_players (
        night_id  bigint NOT NULL REFERENCES nights (id) ON DELETE CASCADE,
        user_id   bigint NOT NULL,
        guild_id  bigint NOT NULL,
        game      text NOT NULL,
        place     integer NOT NULL,
        points    double precision NOT NULL,
        wins      integer NOT NULL,
        games     integer NOT NULL,
        PRIMARY KEY (night_id, user_id)
    )
    """,
    "CREATE INDEX night_players_user ON night_players (user_id, game, place)",
    """
    CREATE TABLE buckets (
        game   integer NOT NULL,
        scope  bigint NOT NULL,
        board  smallint NOT NULL,
        lo     text COLLATE "C" NOT NULL,
        cnt    integer NOT NULL,
        PRIMARY KEY (game, scope, board, lo)
    )
    """,
    board_function(),
    "CREATE TRIGGER stats_boards AFTER INSERT OR DELETE OR UPDATE OF game, scope, user_id, games, wins, mu, sigma"
    " ON stats FOR EACH ROW EXECUTE FUNCTION stats_boards()",
)

#: MIGRATIONS[k] brings version k to k + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1,)
LATEST = len(MIGRATIONS)
#: the tables of the schema, parents before children (``--copy-db`` order)
TABLES = ("tables", "table_actions", "guild_settings", "players", "games", "game_players", "stats",
          "nights", "night_players")


async def user_version(conn: asyncpg.Connection) -> int:
    exists = await conn.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))


async def migrate(conn: asyncpg.Connection, target: int = LATEST) -> int:
    """Apply migrations up to *target* in one transaction under the migration
    lock; return the version."""
    if not 0 <= target <= LATEST:
        raise ValueError(f"unknown schema version {target} (latest is {LATEST})")
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
        current = await user_version(conn)
        if current > LATEST:
            raise RuntimeError(f"database schema version {current} is newer than this code ({LATEST})")
        for version in range(current, target):
            for statement in MIGRATIONS[version]:
                await conn.execute(statement)
        if target > current:
            await conn.execute("DELETE FROM schema_version")
            await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", target)
    return max(current, target)
