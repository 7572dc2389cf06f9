"""Numbered schema migrations for the PostgreSQL store (app.store.postgres).

``MIGRATIONS[k]`` takes a database from version *k* (the row of
``schema_version``; 0 = an empty database) to *k + 1*.  :func:`migrate`
applies every pending migration and the new version in ONE transaction that
first takes ``pg_advisory_xact_lock(MIGRATION_LOCK)``: processes that start
together wait for each other and migrate once (DDL is transactional in
PostgreSQL, so a failure leaves the old version).

An index that a migration adds to a table that may be big (``games``,
``stats``: an :class:`Index` among its statements) is not built in that
transaction, where it would hold off every recording for the build's time:
after the commit, :func:`migrate` builds it
with ``CREATE INDEX CONCURRENTLY`` (:func:`build_indexes`), and so checks
at every start that each such index of the versions reached exists and is
valid (a build that failed or was cut short, e.g. by a crash after the
version was written, leaves none or an INVALID one: it is dropped and built
again).  Nothing needs the index to be right, only fast.  A database
migrated from empty builds them in its transaction (no row, nobody
waiting).  Version 6's indexes of the boards' keys stay in its transaction:
it rewrites ``stats`` under an exclusive lock anyway, and every board is
read through them (a board without its index is a scan of ``stats``).

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

Version 2 records a group of games in one statement (``record_games``,
see the comment above ``_V2``): it locks the players instead of one lock
for every recording, writes the stats rows in one statement that moves the
bucket counts set-based (the row trigger stands aside for it), and leaves
splits of overfull buckets to ``split_buckets`` after the commit.

Version 3 adds ``record_games_v3`` (the same, with less work per game; a
miss returns the rows that changed), queues the boards' trigger only for
other writers, and gives the order-statistic index its second level, as
SQLite's: ``bucket_groups`` cuts each board's buckets into consecutive
runs of at most ``GROUP_MAX`` (``lo -> cnt`` entries, ``nb`` buckets), so
that a rank or a numbered page sums a few dozen group rows and at most
``GROUP_MAX`` bucket rows, not all ~1,900 buckets of a board of a million
entries (see the comment above ``_V3``).

Version 7 (after seasons, 4; the activity window, 5; exclusions, 6) splits
overfull buckets without scanning ``buckets`` and ``bucket_groups``: the
recording names the buckets it overfilled (``record_games_v4``) and
``split_buckets_at`` looks up only those (see the comment above
``_SPLIT_WITHOUT_SCAN``).

Version 8 indexes the seasons not closed yet by their end (``_SEASONS_DUE``).
Version 9 makes a boundary of seasons exact (``record_games_v5`` checks the
seasons its caller read; see the comment above ``_EXACT_SEASONS``).
"""
from __future__ import annotations

import logging
from typing import NamedTuple

import asyncpg

from app.store.base import BOARDS
from core.registry import MIN_GAMES

log = logging.getLogger(__name__)

#: a bucket holding more entries than this splits in two
BUCKET_MAX = 1024
#: bulk rebuilds cut boards into buckets of this size (room to grow)
BUCKET_FILL = 512
#: a group (version 3) holding more buckets than this splits in two
GROUP_MAX = 64
#: bulk rebuilds put this many buckets in a group
GROUP_FILL = 32

#: the advisory lock of migrations (any constant; "cardnite")
MIGRATION_LOCK = 0x63617264_6E697465 - (1 << 63)
#: the advisory lock held by every recording transaction (see app.store.postgres)
RECORD_LOCK = MIGRATION_LOCK + 1
#: the advisory lock (of a session) of the process building the migrations' indexes
INDEX_LOCK = MIGRATION_LOCK + 2


class Index(NamedTuple):
    """An index a migration adds to a table that may be big, built by
    :func:`build_indexes` after the migration's transaction (see above)."""

    name: str
    #: what follows the name in CREATE INDEX, e.g. ``ON games (guild_id, ended_at)``
    definition: str

    def create(self, concurrently: bool = False) -> str:
        """The statement building it (CONCURRENTLY: outside a transaction)."""
        how = "CONCURRENTLY IF NOT EXISTS " if concurrently else ""
        return f"CREATE INDEX {how}{self.name} {self.definition}"

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


def board_function(bucket_max: int | None = None, groups: bool = False) -> str:
    """The trigger function keeping every board's bucket counts exact
    (*bucket_max*: the split limit, ``BUCKET_MAX`` unless a test asks;
    *groups*: and the counts of ``bucket_groups``, version 3)."""
    limit = BUCKET_MAX if bucket_max is None else int(bucket_max)
    blocks = []
    for board, (_, col) in BOARDS.items():
        def group(row: str, lo: str, change: str, board: int = board) -> str:
            if not groups:
                return ""
            return f"""
                UPDATE bucket_groups SET {change}
                WHERE game = {row}.game AND scope = {row}.scope AND board = {board}
                  AND lo = (SELECT max(lo) FROM bucket_groups
                            WHERE game = {row}.game AND scope = {row}.scope AND board = {board} AND lo <= {lo});"""
        first_group = "" if not groups else f"""
                    INSERT INTO bucket_groups (game, scope, board, lo, cnt, nb) VALUES (NEW.game, NEW.scope, {board}, '', 1, 1)
                    ON CONFLICT (game, scope, board, lo) DO UPDATE SET cnt = bucket_groups.cnt + 1;"""
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
                WHERE game = OLD.game AND scope = OLD.scope AND board = {board} AND lo = old_lo;{group("OLD", "old_lo", "cnt = cnt - 1")}
            END IF;
            IF TG_OP <> 'DELETE' AND NEW.{col} IS NOT NULL THEN
                IF new_lo IS NULL THEN
                    INSERT INTO buckets (game, scope, board, lo, cnt) VALUES (NEW.game, NEW.scope, {board}, '', 1);{first_group}
                ELSIF b_cnt > {limit} THEN
                    SELECT {col} INTO mid FROM stats
                    WHERE game = NEW.game AND scope = NEW.scope AND {col} IS NOT NULL AND {col} >= new_lo
                    ORDER BY {col} OFFSET b_cnt / 2 LIMIT 1;
                    INSERT INTO buckets (game, scope, board, lo, cnt)
                    VALUES (NEW.game, NEW.scope, {board}, mid, b_cnt - b_cnt / 2);
                    UPDATE buckets SET cnt = b_cnt / 2
                    WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo = new_lo;{group("NEW", "new_lo", "cnt = cnt + 1, nb = nb + 1")}
                ELSE
                    UPDATE buckets SET cnt = b_cnt
                    WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo = new_lo;{group("NEW", "new_lo", "cnt = cnt + 1")}
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
#: recount the groups of buckets (version 3) from ``buckets``: GROUP_FILL buckets each
REBUILD_GROUPS: tuple[str, ...] = (
    "DELETE FROM bucket_groups",
    f"""
    INSERT INTO bucket_groups (game, scope, board, lo, cnt, nb)
    SELECT game, scope, board, min(lo), sum(cnt), count(*)
    FROM (SELECT *, (row_number() OVER (PARTITION BY game, scope, board ORDER BY lo) - 1) / {GROUP_FILL} AS g
          FROM buckets) AS b
    GROUP BY game, scope, board, g
    """,
)
#: (from version 3 on, a rebuild of the buckets rebuilds their groups too)
REBUILD_BUCKETS = REBUILD_BUCKETS + REBUILD_GROUPS


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

# Version 2: a group of games recorded by ONE statement, ``record_games``
# (app.store.postgres).  The caller read the stats rows without a lock and
# computed the new rows (ratings included) in order; the function takes the
# record lock shared and the group's players' advisory locks (user ids, in
# ascending order: deadlock-free), checks that no table of the group is
# recorded yet and that
# every stats row it read still holds the games count it read (every
# recording adds one, so an equal count is an unchanged row; 0: no row yet),
# then writes the games (ids in the group's order), the players, the results
# and the stats rows.  It returns the new game ids, or NULL when something
# changed meanwhile (the caller reads again).  The locks are held for this
# one statement and its commit only: no round trip to the client inside.
# Game ids are taken under the players' locks: of two games with a player
# in common, the lower id is rated first (a serial run in id order agrees).
#
# The stats rows are written by one statement that also moves the bucket
# counts (set-based: the old keys' buckets -1, the new keys' +1, summed per
# bucket, so a key that stays in its bucket writes nothing there, and the
# buckets written are locked in key order); the row trigger is told to stand
# aside (the transaction-local setting ``cardnight.boards = 'off'``) and
# stays for any other writer.  A bucket past :func:`bucket_max_function`'s
# limit makes record_games return ``split``; the caller then runs
# ``split_buckets``, which takes the record lock alone (so no recording
# reads bucket bounds while they change) and splits at the median key, as
# the trigger does.


def bucket_max_function(bucket_max: int | None = None) -> str:
    """``bucket_max()``: the split limit of record_games and of the trigger
    of version 2 (``BUCKET_MAX`` unless a test asks for a tiny one)."""
    limit = BUCKET_MAX if bucket_max is None else int(bucket_max)
    return f"CREATE OR REPLACE FUNCTION bucket_max() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT {limit}'"


def group_max_function(group_max: int | None = None) -> str:
    """``group_max()``: the buckets a group holds before it splits (version
    3; ``GROUP_MAX`` unless a test asks for a tiny one)."""
    limit = GROUP_MAX if group_max is None else int(group_max)
    return f"CREATE OR REPLACE FUNCTION group_max() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT {limit}'"


def _split_blocks() -> str:
    """plpgsql: split bucket (g, sc, bd, lo) of b_cnt entries at its median key."""
    out = []
    for board, (_, col) in BOARDS.items():
        out.append(f"""{'IF' if board == 0 else 'ELSIF'} bd = {board} THEN
                    SELECT {col} INTO mid FROM stats
                    WHERE game = g AND scope = sc AND {col} IS NOT NULL AND {col} >= b_lo
                    ORDER BY {col} OFFSET b_cnt / 2 LIMIT 1;""")
    return "\n                ".join(out) + "\n                END IF;"


_V2 = (
    bucket_max_function(),
    # the trigger of version 1, standing aside for record_games
    board_function().replace(
        "BEGIN\n    IF TG_OP",
        "BEGIN\n    IF current_setting('cardnight.boards', true) = 'off' THEN\n        RETURN NULL;\n    END IF;"
        "\n    IF TG_OP", 1).replace(f"b_cnt > {BUCKET_MAX} THEN", "b_cnt > bucket_max() THEN"),
    """
    CREATE FUNCTION record_games(
        lock_key bigint, lock_wait text,
        g_table bigint[], g_guild bigint[], g_channel bigint[], g_game text[], g_started float8[],
        g_ended float8[], g_seed bigint[], g_rounds integer[], g_bots boolean[], g_rated boolean[],
        g_n integer[],
        p_user bigint[], p_name text[],
        r_game integer[], r_seat integer[], r_user bigint[], r_name text[], r_score integer[],
        r_place integer[], r_stats text[],
        s_game integer[], s_scope bigint[], s_user bigint[], s_before integer[], s_games integer[],
        s_wins integer[], s_score bigint[], s_counters text[], s_rated integer[], s_mu float8[],
        s_sigma float8[], OUT ids bigint[], OUT split boolean
    ) LANGUAGE plpgsql AS $fn$
    DECLARE
        gid bigint;
        i integer;
    BEGIN
        split := false;
        PERFORM set_config('lock_timeout', lock_wait, true);
        PERFORM set_config('cardnight.boards', 'off', true);
        PERFORM pg_advisory_xact_lock_shared(lock_key);
        -- the players' locks, in id order (p_user is sorted): deadlock-free
        PERFORM pg_advisory_xact_lock(u) FROM unnest(p_user) WITH ORDINALITY AS x (u, n) ORDER BY n;
        IF EXISTS (SELECT 1 FROM games WHERE table_id = ANY(g_table)) THEN
            RETURN;
        END IF;
        IF EXISTS (SELECT 1 FROM unnest(s_game, s_scope, s_user, s_before) AS k (game, scope, user_id, games)
                   LEFT JOIN stats AS s ON s.game = k.game AND s.scope = k.scope AND s.user_id = k.user_id
                   WHERE coalesce(s.games, 0) <> k.games) THEN
            RETURN;
        END IF;
        ids := '{}';
        FOR i IN 1 .. coalesce(array_length(g_table, 1), 0) LOOP
            INSERT INTO games (table_id, guild_id, channel_id, game, started_at, ended_at, seed, rounds,
                               has_bots, rated, n_players)
            VALUES (g_table[i], g_guild[i], g_channel[i], g_game[i], g_started[i], g_ended[i], g_seed[i],
                    g_rounds[i], g_bots[i], g_rated[i], g_n[i])
            RETURNING id INTO gid;
            ids := ids || gid;
        END LOOP;
        INSERT INTO players (user_id, name)
        SELECT * FROM unnest(p_user, p_name)
        ON CONFLICT (user_id) DO UPDATE SET name = excluded.name WHERE players.name IS DISTINCT FROM excluded.name;
        INSERT INTO game_players (game_id, seat, user_id, name, score, place, stats)
        SELECT ids[x.g], x.seat, x.u, x.n, x.sc, x.pl, x.st
        FROM unnest(r_game, r_seat, r_user, r_name, r_score, r_place, r_stats) AS x (g, seat, u, n, sc, pl, st);
        WITH x AS (
                SELECT * FROM unnest(s_game, s_scope, s_user, s_before, s_games, s_wins, s_score, s_counters,
                                     s_rated, s_mu, s_sigma)
                    AS x (game, scope, user_id, before, games, wins, score_sum, counters, rated_games, mu, sigma)
            ), old AS (
                SELECT s.game, s.scope, b.board, b.k
                FROM x JOIN stats AS s ON s.game = x.game AND s.scope = x.scope AND s.user_id = x.user_id
                CROSS JOIN LATERAL (VALUES (0, s.k_rating), (1, s.k_wins), (2, s.k_rate), (3, s.k_games))
                    AS b (board, k)
                WHERE x.before > 0 AND b.k IS NOT NULL
            ), upd AS (
                UPDATE stats AS s SET games = x.games, wins = x.wins, score_sum = x.score_sum,
                                      counters = x.counters::jsonb, rated_games = x.rated_games,
                                      mu = x.mu, sigma = x.sigma
                FROM x WHERE x.before > 0 AND s.game = x.game AND s.scope = x.scope AND s.user_id = x.user_id
                RETURNING s.game, s.scope, s.k_rating, s.k_wins, s.k_rate, s.k_games
            ), ins AS (
                INSERT INTO stats (game, scope, user_id, games, wins, score_sum, counters, rated_games, mu, sigma)
                SELECT game, scope, user_id, games, wins, score_sum, counters::jsonb, rated_games, mu, sigma
                FROM x WHERE x.before = 0
                RETURNING game, scope, k_rating, k_wins, k_rate, k_games
            ), new AS (
                SELECT n.game, n.scope, b.board, b.k
                FROM (SELECT * FROM upd UNION ALL SELECT * FROM ins) AS n
                CROSS JOIN LATERAL (VALUES (0, n.k_rating), (1, n.k_wins), (2, n.k_rate), (3, n.k_games))
                    AS b (board, k)
                WHERE b.k IS NOT NULL
            ), moved AS (
                SELECT c.game, c.scope, c.board,
                       coalesce((SELECT b.lo FROM buckets AS b
                                 WHERE b.game = c.game AND b.scope = c.scope AND b.board = c.board AND b.lo <= c.k
                                 ORDER BY b.lo DESC LIMIT 1), '') AS lo,
                       c.d
                FROM (SELECT *, -1 AS d FROM old UNION ALL SELECT *, 1 FROM new) AS c
            ), done AS (
            INSERT INTO buckets AS t (game, scope, board, lo, cnt)
            SELECT game, scope, board, lo, sum(d) FROM moved
            GROUP BY game, scope, board, lo HAVING sum(d) <> 0
            ORDER BY game, scope, board, lo
            ON CONFLICT (game, scope, board, lo) DO UPDATE SET cnt = t.cnt + excluded.cnt
            RETURNING t.cnt
        )
        SELECT coalesce(max(cnt) > bucket_max(), false) INTO split FROM done;
    END
    $fn$
    """,
    # buckets past the limit split at their median key, under the record lock
    # held alone (no recording runs, so the bucket bounds they read hold)
    f"""
    CREATE FUNCTION split_buckets(lock_key bigint, lock_wait text) RETURNS integer LANGUAGE plpgsql AS $fn$
    DECLARE
        n integer := 0;
        g integer;
        sc bigint;
        bd smallint;
        b_lo text COLLATE "C";
        b_cnt integer;
        mid text COLLATE "C";
    BEGIN
        PERFORM set_config('lock_timeout', lock_wait, true);
        PERFORM pg_advisory_xact_lock(lock_key);
        LOOP  -- (a group can overfill a bucket more than twice)
            SELECT game, scope, board, lo, cnt INTO g, sc, bd, b_lo, b_cnt FROM buckets
            WHERE cnt > bucket_max() LIMIT 1;
            EXIT WHEN NOT FOUND;
            {_split_blocks()}
            INSERT INTO buckets (game, scope, board, lo, cnt) VALUES (g, sc, bd, mid, b_cnt - b_cnt / 2);
            UPDATE buckets SET cnt = b_cnt / 2 WHERE game = g AND scope = sc AND board = bd AND lo = b_lo;
            n := n + 1;
        END LOOP;
        RETURN n;
    END
    $fn$
    """,
)

# Version 3: ``record_games_v3``, record_games with less work per game
# (record_games stays, same locks and checks: a process of the old code
# records beside one of the new while they are replaced).
#
# * A miss (a row or a table changed since the caller's read) returns the
#   current rows (``missed``, JSON: the same columns as the caller's read) so
#   that the caller computes again without another read; a caller that knows
#   the rows (it wrote them last) sends them without reading at all.
# * A key's bucket is looked up once when the old and the new key lie in
#   one bucket (the usual case: the bucket holding the greater key starts at
#   or below the smaller one), not once per key.
# * A player's name is written only when it changed (an upsert of an
#   unchanged row still locked and logged it).
# * The boards' row trigger is not even queued for record_games' statement
#   (a WHEN clause instead of a test inside the trigger function).
# * bucket_groups, the second level: record_games_v3 moves a group's count
#   by the sum of its buckets' changes (a key moving between two buckets of
#   one group writes no group), after the buckets, in key order;
#   split_buckets counts the new bucket in its group and splits a group past
#   group_max() buckets at its middle bucket; the row trigger keeps the
#   counts too (it does not split groups: rebuild_boards does, or the next
#   split_buckets).  record_games (version 2's signature) becomes a call of
#   record_games_v3, so a process of the old code keeps the groups exact.


def _record_games_v3() -> str:
    """The function of version 3 (see above); its body follows record_games'."""
    return """
    CREATE FUNCTION record_games_v3(
        lock_key bigint, lock_wait text,
        g_table bigint[], g_guild bigint[], g_channel bigint[], g_game text[], g_started float8[],
        g_ended float8[], g_seed bigint[], g_rounds integer[], g_bots boolean[], g_rated boolean[],
        g_n integer[],
        p_user bigint[], p_name text[],
        r_game integer[], r_seat integer[], r_user bigint[], r_name text[], r_score integer[],
        r_place integer[], r_stats text[],
        s_game integer[], s_scope bigint[], s_user bigint[], s_before integer[], s_games integer[],
        s_wins integer[], s_score bigint[], s_counters text[], s_rated integer[], s_mu float8[],
        s_sigma float8[], k_game integer[], k_scope bigint[], k_user bigint[],
        OUT ids bigint[], OUT split boolean, OUT missed text
    ) LANGUAGE plpgsql AS $fn$
    DECLARE
        gid bigint;
        i integer;
    BEGIN
        split := false;
        PERFORM set_config('lock_timeout', lock_wait, true);
        PERFORM set_config('cardnight.boards', 'off', true);
        PERFORM pg_advisory_xact_lock_shared(lock_key);
        -- the players' locks, in id order (p_user is sorted): deadlock-free
        PERFORM pg_advisory_xact_lock(u) FROM unnest(p_user) WITH ORDINALITY AS x (u, n) ORDER BY n;
        IF EXISTS (SELECT 1 FROM games WHERE table_id = ANY(g_table))
           OR EXISTS (SELECT 1 FROM unnest(s_game, s_scope, s_user, s_before) AS k (game, scope, user_id, games)
                      LEFT JOIN stats AS s ON s.game = k.game AND s.scope = k.scope AND s.user_id = k.user_id
                      WHERE coalesce(s.games, 0) <> k.games) THEN
            -- changed meanwhile: what the caller's read would return now (k_*: every key it needs),
            -- the floats in their shortest exact text (whatever the server's default)
            PERFORM set_config('extra_float_digits', '1', true);
            SELECT coalesce(json_agg(r), '[]')::text INTO missed FROM (
                SELECT json_build_array(s.game, s.scope, s.user_id, s.games, s.wins, s.score_sum, s.counters,
                                        s.rated_games, s.mu, s.sigma, NULL) AS r
                FROM stats AS s JOIN unnest(k_game, k_scope, k_user) AS k (game, scope, user_id)
                  ON s.game = k.game AND s.scope = k.scope AND s.user_id = k.user_id
                UNION ALL
                SELECT json_build_array(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, table_id)
                FROM games WHERE table_id = ANY(g_table)
            ) AS m;
            RETURN;
        END IF;
        ids := '{}';
        FOR i IN 1 .. coalesce(array_length(g_table, 1), 0) LOOP
            INSERT INTO games (table_id, guild_id, channel_id, game, started_at, ended_at, seed, rounds,
                               has_bots, rated, n_players)
            VALUES (g_table[i], g_guild[i], g_channel[i], g_game[i], g_started[i], g_ended[i], g_seed[i],
                    g_rounds[i], g_bots[i], g_rated[i], g_n[i])
            RETURNING id INTO gid;
            ids := ids || gid;
        END LOOP;
        INSERT INTO players (user_id, name)
        SELECT x.u, x.n FROM unnest(p_user, p_name) AS x (u, n)
        WHERE NOT EXISTS (SELECT 1 FROM players AS p WHERE p.user_id = x.u AND p.name = x.n)
        ON CONFLICT (user_id) DO UPDATE SET name = excluded.name;
        INSERT INTO game_players (game_id, seat, user_id, name, score, place, stats)
        SELECT ids[x.g], x.seat, x.u, x.n, x.sc, x.pl, x.st
        FROM unnest(r_game, r_seat, r_user, r_name, r_score, r_place, r_stats) AS x (g, seat, u, n, sc, pl, st);
        WITH x AS (
                SELECT * FROM unnest(s_game, s_scope, s_user, s_before, s_games, s_wins, s_score, s_counters,
                                     s_rated, s_mu, s_sigma)
                    AS x (game, scope, user_id, before, games, wins, score_sum, counters, rated_games, mu, sigma)
            ), old AS (
                SELECT s.game, s.scope, s.user_id, b.board, b.k
                FROM x JOIN stats AS s ON s.game = x.game AND s.scope = x.scope AND s.user_id = x.user_id
                CROSS JOIN LATERAL (VALUES (0, s.k_rating), (1, s.k_wins), (2, s.k_rate), (3, s.k_games))
                    AS b (board, k)
                WHERE x.before > 0 AND b.k IS NOT NULL
            ), upd AS (
                UPDATE stats AS s SET games = x.games, wins = x.wins, score_sum = x.score_sum,
                                      counters = x.counters::jsonb, rated_games = x.rated_games,
                                      mu = x.mu, sigma = x.sigma
                FROM x WHERE x.before > 0 AND s.game = x.game AND s.scope = x.scope AND s.user_id = x.user_id
                RETURNING s.game, s.scope, s.user_id, s.k_rating, s.k_wins, s.k_rate, s.k_games
            ), ins AS (
                INSERT INTO stats (game, scope, user_id, games, wins, score_sum, counters, rated_games, mu, sigma)
                SELECT game, scope, user_id, games, wins, score_sum, counters::jsonb, rated_games, mu, sigma
                FROM x WHERE x.before = 0
                RETURNING game, scope, user_id, k_rating, k_wins, k_rate, k_games
            ), new AS (
                SELECT n.game, n.scope, n.user_id, b.board, b.k
                FROM (SELECT * FROM upd UNION ALL SELECT * FROM ins) AS n
                CROSS JOIN LATERAL (VALUES (0, n.k_rating), (1, n.k_wins), (2, n.k_rate), (3, n.k_games))
                    AS b (board, k)
                WHERE b.k IS NOT NULL
            ), pairs AS (  -- per entry: its old key, its new key, the bucket holding the greater one
                SELECT p.game, p.scope, p.board, p.ko, p.kn,
                       coalesce((SELECT b.lo FROM buckets AS b
                                 WHERE b.game = p.game AND b.scope = p.scope AND b.board = p.board
                                   AND b.lo <= greatest(p.ko, p.kn)
                                 ORDER BY b.lo DESC LIMIT 1), '') AS top
                FROM (SELECT game, scope, user_id, board, o.k AS ko, n.k AS kn
                      FROM old AS o FULL JOIN new AS n USING (game, scope, user_id, board)) AS p
            ), moved AS (  -- -1 in the old key's bucket, +1 in the new key's; none when both are 'top'
                SELECT p.game, p.scope, p.board, m.lo, m.d
                FROM pairs AS p CROSS JOIN LATERAL (
                    SELECT CASE WHEN p.kn IS NULL OR p.ko >= p.kn THEN p.top
                                ELSE coalesce((SELECT b.lo FROM buckets AS b
                                               WHERE b.game = p.game AND b.scope = p.scope AND b.board = p.board
                                                 AND b.lo <= p.ko ORDER BY b.lo DESC LIMIT 1), '') END, -1
                    WHERE p.ko IS NOT NULL
                    UNION ALL
                    SELECT CASE WHEN p.ko IS NULL OR p.kn >= p.ko THEN p.top
                                ELSE coalesce((SELECT b.lo FROM buckets AS b
                                               WHERE b.game = p.game AND b.scope = p.scope AND b.board = p.board
                                                 AND b.lo <= p.kn ORDER BY b.lo DESC LIMIT 1), '') END, 1
                    WHERE p.kn IS NOT NULL
                ) AS m (lo, d)
                WHERE p.ko IS NULL OR p.kn IS NULL OR p.top > least(p.ko, p.kn)
            ), delta AS (  -- per bucket
                SELECT game, scope, board, lo, sum(d) AS d FROM moved
                GROUP BY game, scope, board, lo HAVING sum(d) <> 0
            ), done AS (
                INSERT INTO buckets AS t (game, scope, board, lo, cnt)
                SELECT game, scope, board, lo, d FROM delta ORDER BY game, scope, board, lo
                ON CONFLICT (game, scope, board, lo) DO UPDATE SET cnt = t.cnt + excluded.cnt
                RETURNING t.cnt
            ), gdelta AS (  -- per group: a move between two buckets of one group changes none
                SELECT game, scope, board, g, sum(d) AS d FROM (
                    SELECT x.*, coalesce((SELECT gr.lo FROM bucket_groups AS gr
                                          WHERE gr.game = x.game AND gr.scope = x.scope AND gr.board = x.board
                                            AND gr.lo <= x.lo ORDER BY gr.lo DESC LIMIT 1), '') AS g
                    FROM delta AS x) AS y
                GROUP BY game, scope, board, g HAVING sum(d) <> 0
            ), gdone AS (  -- (the groups after the buckets, each in key order: deadlock-free)
                INSERT INTO bucket_groups AS t (game, scope, board, lo, cnt, nb)
                SELECT game, scope, board, g, d, 1 FROM gdelta ORDER BY game, scope, board, g
                ON CONFLICT (game, scope, board, lo) DO UPDATE SET cnt = t.cnt + excluded.cnt
            )
        SELECT coalesce(max(cnt) > bucket_max(), false) INTO split FROM done;
    END
    $fn$
    """


def _record_games_on_v3() -> str:
    """record_games (version 2's signature, for a process of the old code
    still running) as a call of record_games_v3, which keeps the groups."""
    v2 = _V2[2]
    params = v2[v2.index("CREATE FUNCTION record_games(") + len("CREATE FUNCTION record_games("):
                v2.index(") LANGUAGE plpgsql")]
    return f"""
    CREATE OR REPLACE FUNCTION record_games({params}) LANGUAGE sql AS $fn$
        SELECT r.ids, r.split FROM record_games_v3(
            lock_key, lock_wait, g_table, g_guild, g_channel, g_game, g_started, g_ended, g_seed, g_rounds,
            g_bots, g_rated, g_n, p_user, p_name, r_game, r_seat, r_user, r_name, r_score, r_place, r_stats,
            s_game, s_scope, s_user, s_before, s_games, s_wins, s_score, s_counters, s_rated, s_mu, s_sigma,
            s_game, s_scope, s_user) AS r
    $fn$
    """


_SPLIT_V3 = f"""
    CREATE OR REPLACE FUNCTION split_buckets(lock_key bigint, lock_wait text) RETURNS integer LANGUAGE plpgsql AS $fn$
    DECLARE
        n integer := 0;
        g integer;
        sc bigint;
        bd smallint;
        b_lo text COLLATE "C";
        b_cnt integer;
        mid text COLLATE "C";
        g_lo text COLLATE "C";
        g_hi text COLLATE "C";
        g_nb integer;
        up bigint;
    BEGIN
        PERFORM set_config('lock_timeout', lock_wait, true);
        PERFORM pg_advisory_xact_lock(lock_key);
        LOOP  -- (a group can overfill a bucket more than twice)
            SELECT game, scope, board, lo, cnt INTO g, sc, bd, b_lo, b_cnt FROM buckets
            WHERE cnt > bucket_max() LIMIT 1;
            EXIT WHEN NOT FOUND;
            {_split_blocks()}
            INSERT INTO buckets (game, scope, board, lo, cnt) VALUES (g, sc, bd, mid, b_cnt - b_cnt / 2);
            UPDATE buckets SET cnt = b_cnt / 2 WHERE game = g AND scope = sc AND board = bd AND lo = b_lo;
            UPDATE bucket_groups SET nb = nb + 1  -- (the new bucket lies in the old one's group: same count)
            WHERE game = g AND scope = sc AND board = bd
              AND lo = (SELECT max(lo) FROM bucket_groups WHERE game = g AND scope = sc AND board = bd AND lo <= b_lo);
            n := n + 1;
        END LOOP;
        LOOP  -- a group of more than group_max() buckets splits at its middle bucket
            SELECT game, scope, board, lo INTO g, sc, bd, g_lo FROM bucket_groups WHERE nb > group_max() LIMIT 1;
            EXIT WHEN NOT FOUND;
            SELECT min(lo) INTO g_hi FROM bucket_groups WHERE game = g AND scope = sc AND board = bd AND lo > g_lo;
            SELECT count(*) INTO g_nb FROM buckets
            WHERE game = g AND scope = sc AND board = bd AND lo >= g_lo AND (g_hi IS NULL OR lo < g_hi);
            IF g_nb > group_max() THEN
                SELECT lo INTO mid FROM buckets WHERE game = g AND scope = sc AND board = bd AND lo >= g_lo
                ORDER BY lo OFFSET g_nb / 2 LIMIT 1;
                SELECT coalesce(sum(cnt), 0) INTO up FROM buckets
                WHERE game = g AND scope = sc AND board = bd AND lo >= mid AND (g_hi IS NULL OR lo < g_hi);
                INSERT INTO bucket_groups (game, scope, board, lo, cnt, nb) VALUES (g, sc, bd, mid, up, g_nb - g_nb / 2);
                UPDATE bucket_groups SET cnt = cnt - up, nb = g_nb / 2
                WHERE game = g AND scope = sc AND board = bd AND lo = g_lo;
                n := n + 1;
            ELSE
                UPDATE bucket_groups SET nb = g_nb WHERE game = g AND scope = sc AND board = bd AND lo = g_lo;
            END IF;
        END LOOP;
        RETURN n;
    END
    $fn$
    """


_V3 = (
    """
    CREATE TABLE bucket_groups (
        game   integer NOT NULL,
        scope  bigint NOT NULL,
        board  smallint NOT NULL,
        lo     text COLLATE "C" NOT NULL,
        cnt    bigint NOT NULL,
        nb     integer NOT NULL,
        PRIMARY KEY (game, scope, board, lo)
    ) WITH (fillfactor = 50)
    """,
    *REBUILD_GROUPS[1:],
    group_max_function(),
    board_function(groups=True).replace(f"b_cnt > {BUCKET_MAX} THEN", "b_cnt > bucket_max() THEN"),
    _record_games_v3(),
    _record_games_on_v3(),
    _SPLIT_V3,
    "DROP TRIGGER stats_boards ON stats",
    "CREATE TRIGGER stats_boards AFTER INSERT OR DELETE OR UPDATE OF game, scope, user_id, games, wins, mu, sigma"
    " ON stats FOR EACH ROW WHEN (current_setting('cardnight.boards', true) IS DISTINCT FROM 'off')"
    " EXECUTE FUNCTION stats_boards()",
)

# Version 4: seasons (as SQLite's version 9, app.store.sqlite_migrations):
# a season's boards are the stats rows of scope -id.
_SEASONS = (
    """
    CREATE TABLE seasons (
        id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        guild_id   bigint NOT NULL,
        name       text NOT NULL,
        starts_at  double precision NOT NULL,
        ends_at    double precision,
        meta       text NOT NULL DEFAULT '{}',
        UNIQUE (guild_id, name)
    )
    """,
    "CREATE INDEX seasons_span ON seasons (guild_id, starts_at)",
)

# Version 5: boards of who is really playing (as SQLite's version 10), kept
# by a row trigger, since record_games writes every stats column it knows as
# computed from the rating it read (a parked one included): a rated game
# (``rated_games`` grows) sets ``rated_at`` and clears the parked rating; any
# other write of a parked row keeps it parked (off the rating board).
_ACTIVITY = (
    "ALTER TABLE stats ADD COLUMN rated_at double precision, ADD COLUMN parked_mu double precision,"
    " ADD COLUMN parked_sigma double precision",
    "UPDATE stats SET rated_at = extract(epoch FROM now()) WHERE mu IS NOT NULL",
    Index("stats_awake", "ON stats (rated_at) WHERE mu IS NOT NULL"),
    """
    CREATE FUNCTION stats_rated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.mu IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.rated_games > OLD.rated_games) THEN
            NEW.rated_at := extract(epoch FROM clock_timestamp());
            NEW.parked_mu := NULL;
            NEW.parked_sigma := NULL;
        ELSIF TG_OP = 'UPDATE' AND OLD.parked_mu IS NOT NULL AND NEW.parked_mu IS NOT NULL THEN
            NEW.mu := NULL;
            NEW.sigma := NULL;
        END IF;
        RETURN NEW;
    END $$
    """,
    "CREATE TRIGGER stats_rated BEFORE INSERT OR UPDATE OF mu, sigma, rated_games ON stats FOR EACH ROW"
    " EXECUTE FUNCTION stats_rated()",
)

def visible_key(board: int, on_board: str | None = None) -> str:
    """*board*'s sort key of a row that may be hidden from its boards (a
    member excluded from a server's boards, version 6): NULL while hidden."""
    cond = ON_BOARD[board] if on_board is None else on_board
    return sort_key(board, f"NOT hidden AND ({cond})")


# Version 6: members excluded from a server's boards (as SQLite's version
# 11).  ``stats.hidden`` is part of every generated sort key (NULL while
# hidden: the row leaves every board through the bucket trigger and
# record_games' own counting, as a parked rating leaves the rating board),
# so the keys are made again (PostgreSQL 15 cannot change a generated
# column's expression; the values of every visible row are the same, the
# buckets stay right); the bucket trigger also runs on a change of
# ``hidden``; a row inserted for an excluded member is hidden before its
# keys are computed.
_EXCLUDED = (
    """
    CREATE TABLE board_exclusions (
        guild_id  bigint NOT NULL,
        user_id   bigint NOT NULL,
        at        double precision NOT NULL,
        PRIMARY KEY (guild_id, user_id)
    )
    """,
    "CREATE INDEX board_exclusions_user ON board_exclusions (user_id)",
    "DROP TRIGGER stats_boards ON stats",
    "ALTER TABLE stats ADD COLUMN hidden boolean NOT NULL DEFAULT false, "
    + ", ".join(f"DROP COLUMN {col}" for _, col in BOARDS.values()) + ", "
    + ", ".join(f'ADD COLUMN {col} text COLLATE "C" GENERATED ALWAYS AS ({visible_key(board)}) STORED'
                for board, (_, col) in BOARDS.items()),
    *(f"CREATE INDEX stats_{name} ON stats (game, scope, {col}) WHERE {col} IS NOT NULL"
      for name, col in BOARDS.values()),
    "CREATE TRIGGER stats_boards AFTER INSERT OR DELETE OR UPDATE OF game, scope, user_id, games, wins, mu, sigma,"
    " hidden ON stats FOR EACH ROW WHEN (current_setting('cardnight.boards', true) IS DISTINCT FROM 'off')"
    " EXECUTE FUNCTION stats_boards()",
    """
    CREATE FUNCTION stats_hide() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.scope <> 0 AND EXISTS (
                SELECT 1 FROM board_exclusions
                WHERE user_id = NEW.user_id AND guild_id = CASE WHEN NEW.scope > 0 THEN NEW.scope
                    ELSE (SELECT guild_id FROM seasons WHERE id = -NEW.scope) END) THEN
            NEW.hidden := true;
        END IF;
        RETURN NEW;
    END $$
    """,
    "CREATE TRIGGER stats_hide BEFORE INSERT ON stats FOR EACH ROW EXECUTE FUNCTION stats_hide()",
)

# Version 7: a split without a scan.  split_buckets (version 3) looked for
# an overfull bucket, and then for an overfull group, by scanning every row
# of ``buckets`` and of ``bucket_groups`` (no index on the counts: one would
# make every count update a non-HOT one), twice at least, all while holding
# the record lock alone, so that every recording of every process waited for
# the scans (at a million players, ~100,000 rows each).  ``record_games_v4``
# is record_games_v3 that returns the buckets it left overfull, by key;
# ``split_buckets_at`` splits exactly those (and any half still overfull),
# then the groups holding them that went past group_max(), each found by its
# key.  record_games_v3 and split_buckets stay for a process of the old code
# running beside the new.


def _replaced(text: str, *pairs: tuple[str, str]) -> str:
    """*text* with each (old, new) of *pairs* replaced, each old found exactly once."""
    for old, new in pairs:
        if text.count(old) != 1:
            raise ValueError(f"expected one {old!r}")
        text = text.replace(old, new)
    return text


def _record_games_v4() -> str:
    """record_games_v3 returning its overfull buckets' keys instead of a flag."""
    return _replaced(
        _record_games_v3(),
        ("CREATE FUNCTION record_games_v3(", "CREATE FUNCTION record_games_v4("),
        ("OUT ids bigint[], OUT split boolean, OUT missed text",
         "OUT ids bigint[], OUT missed text, OUT split_game integer[], OUT split_scope bigint[],"
         " OUT split_board smallint[], OUT split_lo text[]"),
        ("        split := false;\n", ""),
        ("RETURNING t.cnt", "RETURNING t.game, t.scope, t.board, t.lo, t.cnt"),
        ("SELECT coalesce(max(cnt) > bucket_max(), false) INTO split FROM done;",
         "SELECT array_agg(game), array_agg(scope), array_agg(board), array_agg(lo)"
         " INTO split_game, split_scope, split_board, split_lo FROM done WHERE cnt > bucket_max();"),
    )


def _split_into_blocks() -> str:
    """plpgsql: bucket (g, sc, bd, b_lo) of b_cnt entries cut into *pieces*
    buckets of *piece* entries (the last one the rest), the new ones' bounds
    into new_los."""
    out = []
    for board, (_, col) in BOARDS.items():
        out.append(f"""{'IF' if board == 0 else 'ELSIF'} bd = {board} THEN
                WITH ins AS (
                    INSERT INTO buckets (game, scope, board, lo, cnt)
                    SELECT g, sc, bd, k, CASE WHEN pos / piece = pieces - 1 THEN b_cnt - pos ELSE piece END
                    FROM (SELECT {col} AS k, row_number() OVER (ORDER BY {col}) - 1 AS pos FROM (
                              SELECT {col} FROM stats
                              WHERE game = g AND scope = sc AND {col} IS NOT NULL AND {col} >= b_lo
                              ORDER BY {col} LIMIT b_cnt) AS e) AS x
                    WHERE pos > 0 AND pos % piece = 0 AND pos / piece < pieces
                    RETURNING lo)
                SELECT array_agg(lo) INTO new_los FROM ins;""")
    return "\n            ".join(out) + "\n            END IF;"


_SPLIT_AT = f"""
    CREATE FUNCTION split_buckets_at(lock_key bigint, lock_wait text, q_game integer[], q_scope bigint[],
                                     q_board smallint[], q_lo text[]) RETURNS integer LANGUAGE plpgsql AS $fn$
    DECLARE
        n integer := 0;
        i integer := 1;
        g integer;
        sc bigint;
        bd smallint;
        b_lo text COLLATE "C";
        b_cnt integer;
        pieces integer;
        piece integer;
        new_los text[];
        mid text COLLATE "C";
        g_lo text COLLATE "C";
        g_hi text COLLATE "C";
        g_nb integer;
        up bigint;
        r_game integer[] := '{{}}';
        r_scope bigint[] := '{{}}';
        r_board smallint[] := '{{}}';
        r_lo text[] := '{{}}';
    BEGIN
        -- another process's split got there first (read without the lock): nothing to wait for
        IF NOT EXISTS (SELECT 1 FROM buckets AS b JOIN unnest(q_game, q_scope, q_board, q_lo) AS q (g, sc, bd, lo)
                         ON b.game = q.g AND b.scope = q.sc AND b.board = q.bd AND b.lo = q.lo
                       WHERE b.cnt > bucket_max()) THEN
            RETURN 0;
        END IF;
        PERFORM set_config('lock_timeout', lock_wait, true);
        PERFORM pg_advisory_xact_lock(lock_key);
        -- each bucket given, while overfull, cut into buckets of about an eighth of
        -- bucket_max() entries (a region of the board that many keys move into splits
        -- seldom; the pieces queued again, as a limit of a test can be tiny)
        WHILE i <= coalesce(array_length(q_game, 1), 0) LOOP
            g := q_game[i]; sc := q_scope[i]; bd := q_board[i]; b_lo := q_lo[i];
            i := i + 1;
            SELECT cnt INTO b_cnt FROM buckets WHERE game = g AND scope = sc AND board = bd AND lo = b_lo;
            CONTINUE WHEN NOT FOUND OR b_cnt <= bucket_max();
            pieces := greatest(2, b_cnt / greatest(1, bucket_max() / 8));
            piece := b_cnt / pieces;
            {_split_into_blocks()}
            UPDATE buckets SET cnt = piece WHERE game = g AND scope = sc AND board = bd AND lo = b_lo;
            UPDATE bucket_groups SET nb = nb + coalesce(array_length(new_los, 1), 0)  -- (same count)
            WHERE game = g AND scope = sc AND board = bd
              AND lo = (SELECT max(lo) FROM bucket_groups WHERE game = g AND scope = sc AND board = bd AND lo <= b_lo)
            RETURNING lo INTO g_lo;
            r_game := r_game || g; r_scope := r_scope || sc; r_board := r_board || bd; r_lo := r_lo || g_lo::text;
            q_game := q_game || g; q_scope := q_scope || sc; q_board := q_board || bd; q_lo := q_lo || b_lo::text;
            FOR j IN 1 .. coalesce(array_length(new_los, 1), 0) LOOP
                q_game := q_game || g; q_scope := q_scope || sc; q_board := q_board || bd; q_lo := q_lo || new_los[j];
            END LOOP;
            n := n + 1;
        END LOOP;
        -- the groups of the buckets split, each past group_max() buckets split at its middle bucket
        -- (both halves queued again)
        i := 1;
        WHILE i <= coalesce(array_length(r_game, 1), 0) LOOP
            g := r_game[i]; sc := r_scope[i]; bd := r_board[i]; g_lo := r_lo[i];
            i := i + 1;
            CONTINUE WHEN g_lo IS NULL;
            SELECT nb INTO g_nb FROM bucket_groups WHERE game = g AND scope = sc AND board = bd AND lo = g_lo;
            CONTINUE WHEN NOT FOUND OR g_nb <= group_max();
            SELECT min(lo) INTO g_hi FROM bucket_groups WHERE game = g AND scope = sc AND board = bd AND lo > g_lo;
            SELECT count(*) INTO g_nb FROM buckets
            WHERE game = g AND scope = sc AND board = bd AND lo >= g_lo AND (g_hi IS NULL OR lo < g_hi);
            IF g_nb > group_max() THEN
                SELECT lo INTO mid FROM buckets WHERE game = g AND scope = sc AND board = bd AND lo >= g_lo
                ORDER BY lo OFFSET g_nb / 2 LIMIT 1;
                SELECT coalesce(sum(cnt), 0) INTO up FROM buckets
                WHERE game = g AND scope = sc AND board = bd AND lo >= mid AND (g_hi IS NULL OR lo < g_hi);
                INSERT INTO bucket_groups (game, scope, board, lo, cnt, nb) VALUES (g, sc, bd, mid, up, g_nb - g_nb / 2);
                UPDATE bucket_groups SET cnt = cnt - up, nb = g_nb / 2
                WHERE game = g AND scope = sc AND board = bd AND lo = g_lo;
                r_game := r_game || g || g; r_scope := r_scope || sc || sc; r_board := r_board || bd || bd;
                r_lo := r_lo || g_lo::text || mid::text;
                n := n + 1;
            ELSE
                UPDATE bucket_groups SET nb = g_nb WHERE game = g AND scope = sc AND board = bd AND lo = g_lo;
            END IF;
        END LOOP;
        RETURN n;
    END
    $fn$
    """

_SPLIT_WITHOUT_SCAN = (_record_games_v4(), _SPLIT_AT)

# Version 8: the seasons that ended and are not closed yet, by end (as
# SQLite's version 12): the look at the calendar finds them without reading
# every season.  The condition is the query's own (app.store.postgres), so a
# process of the old code, whose query is the same, uses it too; the table is
# small (a few rows a server), so the build's lock is short.
_SEASONS_DUE = (
    "CREATE INDEX seasons_due ON seasons (ends_at, id)"
    " WHERE coalesce((meta::jsonb ->> 'closed')::boolean, false) = false",
)

# Version 9: a boundary of seasons exact to the instant.  A recording reads
# the seasons holding its games' ends without a lock, before it calls the
# function that writes (app.store.postgres); a season made or ended in
# between (``/season end``, a change of mode) left a game that ended at the
# boundary in the old season, or in none.  ``record_games_v5`` is
# record_games_v4 told which seasons the caller counted each game in
# (``c_game``: the game's place in the group, ``c_season``: the season's
# id): under the record lock (shared) it finds them again and, when they
# differ, writes nothing and returns ``missed`` = 'seasons' (the caller
# reads the seasons again).  A season is made or ended under the record
# lock held alone (the store), so none changes between that check and the
# commit.  The index of a guild's games by end lets a season made or ended
# at a moment start or end just after the guild's last game recorded at or
# after it (app.store.base.after_recorded) without reading every game; it
# is built after the migration's transaction (build_indexes: recordings go
# on meanwhile).  record_games_v4 stays for a process of the old code (its
# recordings take the record lock too, but do not check the seasons).
def _record_games_v5() -> str:
    """record_games_v4 that checks the seasons the caller counted each game in."""
    holding = """SELECT x.i::integer, s.id FROM unnest(g_guild, g_ended) WITH ORDINALITY AS x (guild_id, e, i)
                 JOIN seasons AS s ON s.guild_id IN (0, coalesce(x.guild_id, 0)) AND s.starts_at <= x.e
                                  AND (s.ends_at IS NULL OR s.ends_at > x.e)"""
    return _replaced(
        _record_games_v4(),
        ("CREATE FUNCTION record_games_v4(", "CREATE FUNCTION record_games_v5("),
        ("OUT ids bigint[], OUT missed text,", "c_game integer[], c_season bigint[],\n        OUT ids bigint[], OUT missed text,"),
        ("        PERFORM pg_advisory_xact_lock(u) FROM unnest(p_user) WITH ORDINALITY AS x (u, n) ORDER BY n;\n",
         f"""        PERFORM pg_advisory_xact_lock(u) FROM unnest(p_user) WITH ORDINALITY AS x (u, n) ORDER BY n;
        -- the seasons holding each game's end are the ones the caller counted it in
        IF EXISTS (({holding} EXCEPT SELECT * FROM unnest(c_game, c_season))
                   UNION ALL (SELECT * FROM unnest(c_game, c_season) EXCEPT {holding})) THEN
            missed := 'seasons';
            RETURN;
        END IF;
"""),
    )


_EXACT_SEASONS = (
    _record_games_v5(),
    Index("games_guild_end", "ON games (guild_id, ended_at)"),
)

#: MIGRATIONS[k] brings version k to k + 1.
MIGRATIONS: tuple[tuple[str | Index, ...], ...] = (_V1, _V2, _V3, _SEASONS, _ACTIVITY, _EXCLUDED,
                                            _SPLIT_WITHOUT_SCAN, _SEASONS_DUE, _EXACT_SEASONS)
LATEST = len(MIGRATIONS)
#: the tables of the schema, parents before children (``--copy-db`` order)
TABLES = ("tables", "table_actions", "guild_settings", "players", "games", "game_players", "stats",
          "nights", "night_players", "seasons", "board_exclusions")


async def user_version(conn: asyncpg.Connection) -> int:
    exists = await conn.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))


async def migrate(conn: asyncpg.Connection, target: int = LATEST) -> int:
    """Apply migrations up to *target* in one transaction under the migration
    lock, then build their indexes on big tables (:func:`build_indexes`);
    return the version."""
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
                if not isinstance(statement, Index):
                    await conn.execute(statement)
                elif current == 0:  # its table is new in this transaction: empty, seen by nobody else
                    await conn.execute(statement.create())
        if target > current:
            await conn.execute("DELETE FROM schema_version")
            await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", target)
    reached = max(current, target)
    await build_indexes(conn, reached)
    return reached


# each index's validity (NULL: there is none of that name)
_INDEXES_VALID = """
SELECT n, (SELECT i.indisvalid FROM pg_index AS i WHERE i.indexrelid = to_regclass(n))
FROM unnest($1::text[]) AS n
"""


async def build_indexes(conn: asyncpg.Connection, version: int) -> None:
    """Make every :class:`Index` of the migrations up to *version* exist and
    be valid, each built with ``CREATE INDEX CONCURRENTLY`` (outside any
    transaction: recordings go on meanwhile; the build waits for the
    transactions writing the table when it starts, and for those older than
    it at its end).  An INVALID index (a build that failed or whose process
    died) is dropped (``DROP INDEX CONCURRENTLY``) and built again.  One
    process builds, holding ``INDEX_LOCK`` for its session (released if it
    dies); a process finding the lock taken leaves the building to it (an
    index being built is invalid until it is done: not to be dropped) and
    starts without waiting.  A build that fails (cancelled, a deadlock, a
    server's ``statement_timeout``...) is logged and the process starts
    without it (nothing needs it to be right); the version stays written and
    the next start builds it again."""
    wanted = {s.name: s for m in MIGRATIONS[:version] for s in m if isinstance(s, Index)}
    if not wanted or all(dict(await conn.fetch(_INDEXES_VALID, list(wanted))).values()):
        return
    if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", INDEX_LOCK):
        return
    try:
        for name, valid in await conn.fetch(_INDEXES_VALID, list(wanted)):
            if valid:
                continue
            try:
                if valid is not None:
                    await conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}", timeout=None)
                await conn.execute(wanted[name].create(concurrently=True), timeout=None)
            except asyncpg.PostgresError:
                log.warning("building the index %s failed; the next start builds it again", name, exc_info=True)
    finally:
        if not conn.is_closed():
            await conn.execute("SELECT pg_advisory_unlock($1)", INDEX_LOCK)
