"""Numbered schema migrations for the bot's SQLite database (app.store.sqlite).

``MIGRATIONS[k]`` takes a database from ``PRAGMA user_version`` *k* to
*k + 1*.  Each migration is a tuple of single SQL statements (not a script:
``executescript`` would commit half-way).  :func:`migrate` applies every
pending migration, and the new ``user_version``, in ONE transaction, so a
crash mid-way leaves the file at its old version.

Never edit a migration that has shipped; append a new one.

Version 1: tables that survive a restart (lobbies and games in progress,
their action logs) and per-guild settings.

Version 2: statistics.  ``games`` + ``game_players`` hold every finished
game; ``stats`` holds one row of counters and openskill rating per
(game, scope, user), scope 0 = global, otherwise the guild id.  Four
leaderboards ("boards") are read straight off ``stats``, each through one
index on a *sort key* column: a 32-character text, 16 hex digits of a
non-negative integer that grows as the board value falls, then 16 hex
digits of the user id (the tie-break).  One column per board, unique, and
ascending text order is board order:

    board 0 rating    (1e6 - (mu - 3 sigma)) * 1e9   >= 5 games and a rating
    board 1 wins      2**62 - wins                    every player
    board 2 win_rate  (1 - wins / games) * 1e15       >= 5 games
    board 3 games     2**62 - games                   every player

(the rating and win rate are rounded to 1e-9 and 1e-15 in the key only;
boards show the exact values).  Why this shape: SQLite 3.40 uses a bound
taken from a subquery as an index range on a single column only (a row
value (k, user_id) would scan whole runs of ties), and an index on a
*generated* column is not covering (every entry would be a table lookup),
so the keys are plain columns, written by the store's upsert together with
the counters; two triggers repair them after any other kind of write.

The order-statistic index has two levels per board, kept exact by triggers
inside the writing transaction:

* ``buckets``: the board cut into consecutive key ranges; the row
  ``lo -> cnt`` counts the entries with key >= ``lo`` and below the next
  bucket's ``lo``.  A bucket past ``BUCKET_MAX`` entries splits at its
  median key (an OFFSET over the covering index).
* ``bucket_groups``: consecutive buckets; every group bound is a bucket
  bound, ``cnt`` counts its entries and ``n`` its buckets.  A group past
  ``GROUP_MAX`` buckets splits at its middle bucket's bound.

Every board starts with a sentinel bucket and group at ``lo = ''``.  So

    rank(key)   = 1 + SUM(cnt of groups before key's group)
                    + SUM(cnt of that group's buckets before key's bucket)
                    + COUNT(entries of key's bucket below key)
    page at pos = the last group whose running total <= pos, then the last
                  of its buckets whose running total <= pos, then an index
                  seek from that bucket's bound with OFFSET < BUCKET_MAX

For a board of N entries that is ~N / 40,000 group rows, <= 64 bucket rows
and < 1024 index entries, instead of O(N).  :data:`REBUILD_BUCKETS`
recomputes both levels from ``stats`` (repair, bulk loads).

Version 3: the same index, cheaper to keep per recorded game: one split
trigger per table instead of one per board, and no counter statement for
a key that stays in its bucket (see :func:`_board_triggers`).

Version 4: per-game counters in one JSON column ``stats.counters`` (see
``_V4``): a new game declares its counters in ``core.registry`` and needs no
migration.
"""
from __future__ import annotations

import re

import aiosqlite

# the board numbers and game codes are the same in every backend
from app.store.base import BOARDS as BOARDS, GAME_CODES as GAME_CODES  # (re-exported)
from core.registry import MIN_GAMES
#: a bucket holding more entries than this splits in two.
BUCKET_MAX = 1024
#: bulk rebuilds cut boards into buckets of this size (room to grow).
BUCKET_FILL = 512
#: a group of consecutive buckets holding more buckets than this splits.
GROUP_MAX = 64
#: bulk rebuilds put this many buckets in a group.
GROUP_FILL = 32

#: the integer part of each board's key (grows as the value falls) and the
#: board's display value, as SQL over a ``stats`` row.
KEY_EXPR: dict[int, str] = {
    0: "CAST(round((1e6 - (mu - 3.0 * sigma)) * 1e9) AS INTEGER)",
    1: "4611686018427387904 - wins",
    2: "CAST(round((1.0 - CAST(wins AS REAL) / games) * 1e15) AS INTEGER)",
    3: "4611686018427387904 - games",
}
VALUE_EXPR: dict[int, str] = {
    0: "mu - 3.0 * sigma",
    1: "wins",
    2: "CAST(wins AS REAL) / games",
    3: "games",
}
#: the condition for being on each indexed board
ON_BOARD: dict[int, str] = {
    0: f"games >= {MIN_GAMES} AND mu IS NOT NULL",
    1: "1",
    2: f"games >= {MIN_GAMES}",
    3: "1",
}


def sort_key(board: int, on_board: str | None = None, **columns: str) -> str:
    """SQL of *board*'s sort key (NULL when off the board).

    ``columns`` replaces the column names games, wins, mu, sigma, user_id
    by other SQL (e.g. the values after an upsert).

    >>> sort_key(1)
    "CASE WHEN 1 THEN printf('%016X%016X', 4611686018427387904 - wins, user_id) END"
    >>> sort_key(1, wins="NEW.wins", user_id="NEW.user_id")
    "CASE WHEN 1 THEN printf('%016X%016X', 4611686018427387904 - NEW.wins, NEW.user_id) END"
    """
    cond = ON_BOARD[board] if on_board is None else on_board
    sql = f"CASE WHEN {cond} THEN printf('%016X%016X', {KEY_EXPR[board]}, user_id) END"
    if columns:
        sql = re.sub(r"\b(games|wins|mu|sigma|user_id)\b", lambda m: columns.get(m[1], m[1]), sql)
    return sql


def visible_key(board: int, on_board: str | None = None, hidden: str = "hidden", **columns: str) -> str:
    """*board*'s sort key of a row that may be hidden from its boards (a
    member excluded from a server's boards, version 11): NULL while *hidden*.

    >>> visible_key(1, hidden="0")
    "CASE WHEN NOT 0 AND (1) THEN printf('%016X%016X', 4611686018427387904 - wins, user_id) END"
    """
    cond = ON_BOARD[board] if on_board is None else on_board
    return sort_key(board, f"NOT {hidden} AND ({cond})", **columns)



_V1 = (
    """
    CREATE TABLE tables (
        id          INTEGER PRIMARY KEY,
        guild_id    INTEGER NOT NULL,
        channel_id  INTEGER NOT NULL,
        game        TEXT NOT NULL,
        status      TEXT NOT NULL DEFAULT 'lobby'
                    CHECK (status IN ('lobby', 'playing', 'finished', 'cancelled')),
        meta        TEXT NOT NULL DEFAULT '{}',
        created_at  REAL NOT NULL,
        updated_at  REAL NOT NULL
    )
    """,
    "CREATE INDEX tables_active_channel ON tables (channel_id) WHERE status IN ('lobby', 'playing')",
    """
    CREATE TABLE table_actions (
        table_id  INTEGER NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
        idx       INTEGER NOT NULL,
        seat      INTEGER NOT NULL,
        action    TEXT NOT NULL,
        PRIMARY KEY (table_id, idx)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE guild_settings (
        guild_id  INTEGER NOT NULL,
        key       TEXT NOT NULL,
        value     TEXT NOT NULL,
        PRIMARY KEY (guild_id, key)
    ) WITHOUT ROWID
    """,
)


def _bump(table: str, board: int, col: str, row: str, op: str) -> str:
    """Add *op* 1 to the count of the *table* bucket holding ``row.col`` (no-op if NULL)."""
    return f"""
            UPDATE {table} SET cnt = cnt {op} 1
            WHERE game = {row}.game AND scope = {row}.scope AND board = {board} AND lo = (
                SELECT lo FROM {table}
                WHERE game = {row}.game AND scope = {row}.scope AND board = {board} AND lo <= {row}.{col}
                ORDER BY lo DESC LIMIT 1);"""


def _moves(table: str, board: int, col: str) -> str:
    """SQL truth value: an update of ``stats`` moves board *board*'s entry
    out of its *table* row (bucket or group).  The entry stays in its row
    when game and scope are unchanged, both keys are on the board and no
    row bound lies in ``(min(OLD, NEW), max(OLD, NEW)]`` (one index probe)."""
    return f"""(
                OLD.game IS NOT NEW.game OR OLD.scope IS NOT NEW.scope
                OR OLD.{col} IS NULL OR NEW.{col} IS NULL
                OR EXISTS (SELECT 1 FROM {table}
                           WHERE game = NEW.game AND scope = NEW.scope AND board = {board}
                             AND lo > min(OLD.{col}, NEW.{col}) AND lo <= max(OLD.{col}, NEW.{col})))"""


def _bump_if(table: str, board: int, col: str, row: str, op: str, cond: str) -> str:
    """:func:`_bump`, done only where *cond* holds."""
    return _bump(table, board, col, row, op).replace(
        "ORDER BY lo DESC LIMIT 1);", f"ORDER BY lo DESC LIMIT 1)\n                AND {cond};")


def _board_triggers_v2(board: int, col: str) -> tuple[str, ...]:
    """Migration 2's triggers of board *board* (never edit: databases exist
    at that version; :func:`_board_triggers` has the current ones).

    A group is counted before its bucket: a bucket split may split the group,
    which then sums bucket counts that already include the new entry.
    """
    return (
        f"""
        CREATE TRIGGER stats_ins_{board} AFTER INSERT ON stats
        WHEN NEW.{col} IS NOT NULL BEGIN
            {_bump('bucket_groups', board, col, 'NEW', '+')}
            {_bump('buckets', board, col, 'NEW', '+')}
        END
        """,
        f"""
        CREATE TRIGGER stats_upd_{board} AFTER UPDATE OF {col} ON stats
        WHEN OLD.{col} IS NOT NEW.{col} BEGIN
            {_bump('bucket_groups', board, col, 'OLD', '-')}
            {_bump('buckets', board, col, 'OLD', '-')}
            {_bump('bucket_groups', board, col, 'NEW', '+')}
            {_bump('buckets', board, col, 'NEW', '+')}
        END
        """,
        # a bucket past BUCKET_MAX splits at its median key; its group (the
        # new bound lies inside the same group) counts one more bucket
        f"""
        CREATE TRIGGER buckets_split_{board} AFTER UPDATE OF cnt ON buckets
        WHEN NEW.board = {board} AND NEW.cnt > {BUCKET_MAX} BEGIN
            INSERT INTO buckets (game, scope, board, lo, cnt)
                SELECT NEW.game, NEW.scope, {board}, {col}, NEW.cnt - NEW.cnt / 2
                FROM stats
                WHERE game = NEW.game AND scope = NEW.scope AND {col} IS NOT NULL AND {col} >= NEW.lo
                ORDER BY {col} LIMIT 1 OFFSET NEW.cnt / 2;
            UPDATE buckets SET cnt = NEW.cnt / 2
                WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo = NEW.lo;
            UPDATE bucket_groups SET n = n + 1
                WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo = (
                    SELECT lo FROM bucket_groups
                    WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo <= NEW.lo
                    ORDER BY lo DESC LIMIT 1);
        END
        """,
        # a group past GROUP_MAX buckets splits at its middle bucket's bound
        f"""
        CREATE TRIGGER groups_split_{board} AFTER UPDATE OF n ON bucket_groups
        WHEN NEW.board = {board} AND NEW.n > {GROUP_MAX} BEGIN
            INSERT INTO bucket_groups (game, scope, board, lo, cnt, n)
                SELECT NEW.game, NEW.scope, {board}, mid.lo,
                       (SELECT TOTAL(cnt) FROM buckets
                        WHERE game = NEW.game AND scope = NEW.scope AND board = {board}
                          AND lo >= mid.lo AND lo < coalesce((
                              SELECT lo FROM bucket_groups
                              WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo > NEW.lo
                              ORDER BY lo LIMIT 1), '~')),
                       NEW.n - NEW.n / 2
                FROM (SELECT lo FROM buckets
                      WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo >= NEW.lo
                      ORDER BY lo LIMIT 1 OFFSET NEW.n / 2) AS mid;
            UPDATE bucket_groups
                SET n = NEW.n / 2,
                    cnt = NEW.cnt - (SELECT cnt FROM bucket_groups
                                     WHERE game = NEW.game AND scope = NEW.scope AND board = {board}
                                       AND lo > NEW.lo ORDER BY lo LIMIT 1)
                WHERE game = NEW.game AND scope = NEW.scope AND board = {board} AND lo = NEW.lo;
        END
        """,
    )


def _board_triggers() -> tuple[str, ...]:
    """The triggers that keep every board's buckets and groups exact (the
    current ones, created by migration 3; limits read at call time).

    A group is counted before its bucket: a bucket split may split the group,
    which then sums bucket counts that already include the new entry.

    Compared with migration 2 (:func:`_board_triggers_v2`), per recorded
    game (8 stats rows, ~26 moved keys):

    * each table has ONE split trigger instead of one per board: SQLite
      runs every trigger on a table for every row whose UPDATE OF column
      changes (the WHEN is checked inside the trigger program), so four
      ``buckets_split_<board>`` cost four calls per counter update;
    * ``stats_upd_<board>`` does nothing when the key stays in its bucket
      (the usual case on small servers, where one bucket holds the board)
      and leaves the group row alone when it stays in its group.
    """
    out: list[str] = []
    for board, (_, col) in BOARDS.items():
        out += [
            f"""
            CREATE TRIGGER stats_ins_{board} AFTER INSERT ON stats
            WHEN NEW.{col} IS NOT NULL BEGIN
                {_bump('bucket_groups', board, col, 'NEW', '+')}
                {_bump('buckets', board, col, 'NEW', '+')}
            END
            """,
            # nothing to do while the key stays in its bucket (it then
            # stays in its group too); the group rows are left alone while
            # it stays in its group (group bounds are bucket bounds, and a
            # decrement never splits, so that test gives the same answer
            # before and after the bucket decrement)
            f"""
            CREATE TRIGGER stats_upd_{board} AFTER UPDATE OF {col} ON stats
            WHEN OLD.{col} IS NOT NEW.{col} AND {_moves('buckets', board, col)} BEGIN
                {_bump_if('bucket_groups', board, col, 'OLD', '-', _moves('bucket_groups', board, col))}
                {_bump('buckets', board, col, 'OLD', '-')}
                {_bump_if('bucket_groups', board, col, 'NEW', '+', _moves('bucket_groups', board, col))}
                {_bump('buckets', board, col, 'NEW', '+')}
            END
            """,
        ]
    # a bucket past BUCKET_MAX splits at its median key (one INSERT per
    # board, all but NEW.board's skipped by their constant condition); its
    # group (the new bound lies inside the same group) counts one more bucket
    inserts = "".join(f"""
            INSERT INTO buckets (game, scope, board, lo, cnt)
                SELECT NEW.game, NEW.scope, {board}, {col}, NEW.cnt - NEW.cnt / 2
                FROM stats
                WHERE NEW.board = {board}
                  AND game = NEW.game AND scope = NEW.scope AND {col} IS NOT NULL AND {col} >= NEW.lo
                ORDER BY {col} LIMIT 1 OFFSET NEW.cnt / 2;""" for board, (_, col) in BOARDS.items())
    out.append(f"""
        CREATE TRIGGER buckets_split AFTER UPDATE OF cnt ON buckets
        WHEN NEW.cnt > {BUCKET_MAX} BEGIN{inserts}
            UPDATE buckets SET cnt = NEW.cnt / 2
                WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board AND lo = NEW.lo;
            UPDATE bucket_groups SET n = n + 1
                WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board AND lo = (
                    SELECT lo FROM bucket_groups
                    WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board AND lo <= NEW.lo
                    ORDER BY lo DESC LIMIT 1);
        END
        """)
    # a group past GROUP_MAX buckets splits at its middle bucket's bound
    out.append(f"""
        CREATE TRIGGER groups_split AFTER UPDATE OF n ON bucket_groups
        WHEN NEW.n > {GROUP_MAX} BEGIN
            INSERT INTO bucket_groups (game, scope, board, lo, cnt, n)
                SELECT NEW.game, NEW.scope, NEW.board, mid.lo,
                       (SELECT TOTAL(cnt) FROM buckets
                        WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board
                          AND lo >= mid.lo AND lo < coalesce((
                              SELECT lo FROM bucket_groups
                              WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board AND lo > NEW.lo
                              ORDER BY lo LIMIT 1), '~')),
                       NEW.n - NEW.n / 2
                FROM (SELECT lo FROM buckets
                      WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board AND lo >= NEW.lo
                      ORDER BY lo LIMIT 1 OFFSET NEW.n / 2) AS mid;
            UPDATE bucket_groups
                SET n = NEW.n / 2,
                    cnt = NEW.cnt - (SELECT cnt FROM bucket_groups
                                     WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board
                                       AND lo > NEW.lo ORDER BY lo LIMIT 1)
                WHERE game = NEW.game AND scope = NEW.scope AND board = NEW.board AND lo = NEW.lo;
        END
        """)
    return tuple(out)


#: the board triggers (bulk loaders drop and recreate them) and their names
BOARD_TRIGGERS: tuple[str, ...] = _board_triggers()
BOARD_TRIGGER_NAMES: tuple[str, ...] = tuple(
    f"{kind}_{board}" for board in BOARDS for kind in ("stats_ins", "stats_upd")
) + ("buckets_split", "groups_split")
#: as created by migration 2 (never edit: databases exist at that version)
_BOARD_TRIGGERS_V2: tuple[str, ...] = tuple(
    stmt for board, (_, col) in BOARDS.items() for stmt in _board_triggers_v2(board, col)
)
_BOARD_TRIGGER_NAMES_V2: tuple[str, ...] = tuple(
    f"{kind}_{board}" for board in BOARDS
    for kind in ("stats_ins", "stats_upd", "buckets_split", "groups_split")
)

_SET_KEYS = ", ".join(f"{col} = {sort_key(board)}" for board, (_, col) in BOARDS.items())
_NEW = {c: f"NEW.{c}" for c in ("games", "wins", "mu", "sigma", "user_id")}
_KEYS_STALE = " OR ".join(f"NEW.{col} IS NOT {sort_key(board, **_NEW)}" for board, (_, col) in BOARDS.items())

_V2 = (
    """
    CREATE TABLE players (
        user_id  INTEGER PRIMARY KEY,
        name     TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE games (
        id          INTEGER PRIMARY KEY,
        table_id    INTEGER NOT NULL UNIQUE,
        guild_id    INTEGER,
        channel_id  INTEGER,
        game        TEXT NOT NULL,
        started_at  REAL NOT NULL,
        ended_at    REAL NOT NULL,
        seed        INTEGER,
        rounds      INTEGER NOT NULL,
        has_bots    INTEGER NOT NULL,
        rated       INTEGER NOT NULL,
        n_players   INTEGER NOT NULL
    )
    """,
    """
    CREATE TABLE game_players (
        game_id  INTEGER NOT NULL REFERENCES games (id) ON DELETE CASCADE,
        seat     INTEGER NOT NULL,
        user_id  INTEGER REFERENCES players (user_id),
        name     TEXT NOT NULL,
        score    INTEGER NOT NULL,
        place    INTEGER NOT NULL,
        stats    TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (game_id, seat)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX game_players_user ON game_players (user_id, game_id) WHERE user_id IS NOT NULL",
    # The latest name seen wins; also makes sure the player row exists for
    # the foreign keys of game_players and stats.
    """
    CREATE TRIGGER game_players_name BEFORE INSERT ON game_players
    WHEN NEW.user_id IS NOT NULL BEGIN
        INSERT INTO players (user_id, name) VALUES (NEW.user_id, NEW.name)
            ON CONFLICT (user_id) DO UPDATE SET name = excluded.name
            WHERE name IS NOT excluded.name;
    END
    """,
    """
    CREATE TABLE stats (
        game          INTEGER NOT NULL,
        scope         INTEGER NOT NULL,
        user_id       INTEGER NOT NULL REFERENCES players (user_id),
        games         INTEGER NOT NULL DEFAULT 0,
        wins          INTEGER NOT NULL DEFAULT 0,
        score_sum     INTEGER NOT NULL DEFAULT 0,
        rounds        INTEGER NOT NULL DEFAULT 0,
        rounds_won    INTEGER NOT NULL DEFAULT 0,
        bulls_earned  INTEGER NOT NULL DEFAULT 0,
        hands_won     INTEGER NOT NULL DEFAULT 0,
        rated_games   INTEGER NOT NULL DEFAULT 0,
        mu            REAL,
        sigma         REAL,
        k_rating      TEXT,
        k_wins        TEXT,
        k_rate        TEXT,
        k_games       TEXT,
        PRIMARY KEY (game, scope, user_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX stats_rating ON stats (game, scope, k_rating) WHERE k_rating IS NOT NULL",
    "CREATE INDEX stats_wins ON stats (game, scope, k_wins)",
    "CREATE INDEX stats_rate ON stats (game, scope, k_rate) WHERE k_rate IS NOT NULL",
    "CREATE INDEX stats_games ON stats (game, scope, k_games)",
    # The sort keys are plain columns (an index on a generated column is not
    # covering in SQLite 3.40).  The store's upsert writes them with the
    # counters; these triggers repair them after any other write.
    f"""
    CREATE TRIGGER stats_keys_ins AFTER INSERT ON stats WHEN {_KEYS_STALE} BEGIN
        UPDATE stats SET {_SET_KEYS}
        WHERE game = NEW.game AND scope = NEW.scope AND user_id = NEW.user_id;
    END
    """,
    f"""
    CREATE TRIGGER stats_keys_upd AFTER UPDATE OF games, wins, mu, sigma ON stats WHEN {_KEYS_STALE} BEGIN
        UPDATE stats SET {_SET_KEYS}
        WHERE game = NEW.game AND scope = NEW.scope AND user_id = NEW.user_id;
    END
    """,
    """
    CREATE TABLE buckets (
        game   INTEGER NOT NULL,
        scope  INTEGER NOT NULL,
        board  INTEGER NOT NULL,
        lo     TEXT NOT NULL,
        cnt    INTEGER NOT NULL,
        PRIMARY KEY (game, scope, board, lo)
    ) WITHOUT ROWID
    """,
    # groups of consecutive buckets: every group bound is a bucket bound;
    # cnt = entries, n = buckets in the group
    """
    CREATE TABLE bucket_groups (
        game   INTEGER NOT NULL,
        scope  INTEGER NOT NULL,
        board  INTEGER NOT NULL,
        lo     TEXT NOT NULL,
        cnt    INTEGER NOT NULL,
        n      INTEGER NOT NULL,
        PRIMARY KEY (game, scope, board, lo)
    ) WITHOUT ROWID
    """,
    # Every (game, scope) gets its sentinel bucket and group per board
    # before its first stats row is counted.
    """
    CREATE TRIGGER stats_sentinels BEFORE INSERT ON stats BEGIN
        INSERT OR IGNORE INTO buckets (game, scope, board, lo, cnt) VALUES
            (NEW.game, NEW.scope, 0, '', 0), (NEW.game, NEW.scope, 1, '', 0),
            (NEW.game, NEW.scope, 2, '', 0), (NEW.game, NEW.scope, 3, '', 0);
        INSERT OR IGNORE INTO bucket_groups (game, scope, board, lo, cnt, n) VALUES
            (NEW.game, NEW.scope, 0, '', 0, 1), (NEW.game, NEW.scope, 1, '', 0, 1),
            (NEW.game, NEW.scope, 2, '', 0, 1), (NEW.game, NEW.scope, 3, '', 0, 1);
    END
    """,
    *_BOARD_TRIGGERS_V2,
)

# Version 3: cheaper board counters per recorded game (see _board_triggers):
# every board trigger is replaced.
_V3 = (
    *(f"DROP TRIGGER {name}" for name in _BOARD_TRIGGER_NAMES_V2),
    *BOARD_TRIGGERS,
)

# Version 4: per-game counters without a migration per game.  The engine's
# Result.stats of every seat are summed key by key into one JSON object per
# stats row (``counters``); the four counter columns of version 2 are folded
# into it (only what a row holds: a zero column was never that game's) and
# stay behind, unused.
_V4 = (
    "ALTER TABLE stats ADD COLUMN counters TEXT NOT NULL DEFAULT '{}'",
    """
    UPDATE stats SET counters = json_patch('{}', json_object(
        'penalty_rounds', NULLIF(rounds, 0), 'rounds_won', NULLIF(rounds_won, 0),
        'bulls_earned', NULLIF(bulls_earned, 0), 'hands_won', NULLIF(hands_won, 0)))
    WHERE rounds OR rounds_won OR bulls_earned OR hands_won
    """,
)

# Version 5: tables closed as 'abandoned' (stopped by a moderator, or nobody acted for a
# day) and ONE active table per channel, enforced by a unique partial index.
# SQLite cannot change a CHECK in place, so ``tables`` (and ``table_actions``,
# whose foreign key would otherwise cascade the DROP) are rebuilt; the
# RENAME rewrites the foreign key to the new ``tables``.  Channels that
# already hold two active tables (the race this closes) keep the running game,
# else the newest lobby; the others are closed as abandoned.
_TABLES_ABANDONED = (
    """
    CREATE TABLE tables_v (
        id          INTEGER PRIMARY KEY,
        guild_id    INTEGER NOT NULL,
        channel_id  INTEGER NOT NULL,
        game        TEXT NOT NULL,
        status      TEXT NOT NULL DEFAULT 'lobby'
                    CHECK (status IN ('lobby', 'playing', 'finished', 'cancelled', 'abandoned')),
        meta        TEXT NOT NULL DEFAULT '{}',
        created_at  REAL NOT NULL,
        updated_at  REAL NOT NULL
    )
    """,
    """
    INSERT INTO tables_v (id, guild_id, channel_id, game, status, meta, created_at, updated_at)
    SELECT id, guild_id, channel_id, game, status, meta, created_at, updated_at FROM tables
    """,
    """
    CREATE TABLE table_actions_v (
        table_id  INTEGER NOT NULL REFERENCES tables_v (id) ON DELETE CASCADE,
        idx       INTEGER NOT NULL,
        seat      INTEGER NOT NULL,
        action    TEXT NOT NULL,
        PRIMARY KEY (table_id, idx)
    ) WITHOUT ROWID
    """,
    "INSERT INTO table_actions_v (table_id, idx, seat, action) SELECT table_id, idx, seat, action FROM table_actions",
    "DROP TABLE table_actions",
    "DROP TABLE tables",
    "ALTER TABLE tables_v RENAME TO tables",
    "ALTER TABLE table_actions_v RENAME TO table_actions",
    """
    UPDATE tables SET status = 'abandoned'
    WHERE status IN ('lobby', 'playing') AND id NOT IN (
        SELECT id FROM (
            SELECT id, ROW_NUMBER() OVER (
                PARTITION BY channel_id ORDER BY status = 'playing' DESC, id DESC) AS n
            FROM tables WHERE status IN ('lobby', 'playing'))
        WHERE n = 1)
    """,
    "CREATE UNIQUE INDEX tables_active_channel ON tables (channel_id)"
    " WHERE status IN ('lobby', 'playing') AND json_extract(meta, '$.night_id') IS NULL",
)

# Version 6: head-to-head records (``Store.versus``).  The index of a
# player's results also carries place and score, so two players' shared
# games are read from the index alone: one range of the player with fewer
# games, one seek into the other's range per game (no table row is read).
# It replaces ``game_players_user`` (same leading columns, so /history keeps
# its plan): one index per result row to write, as before.
_VERSUS = (
    "CREATE INDEX game_players_versus ON game_players (user_id, game_id, place, score)"
    " WHERE user_id IS NOT NULL",
    "DROP INDEX game_players_user",
)

# Version 7: game nights (app/nights.py).  A night's whole state is one JSON
# ``meta`` (players, tables per round, message ids), saved as it changes; at
# most one night is open per channel.  ``night_players`` holds the final
# standings once the night ended (nights played / won in /stats).
_NIGHTS = (
    """
    CREATE TABLE nights (
        id          INTEGER PRIMARY KEY,
        guild_id    INTEGER NOT NULL,
        channel_id  INTEGER NOT NULL,
        game        TEXT NOT NULL,
        status      TEXT NOT NULL,
        meta        TEXT NOT NULL,
        created_at  REAL NOT NULL,
        updated_at  REAL NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX nights_open_channel ON nights (channel_id) WHERE status != 'ended'",
    "CREATE INDEX nights_channel ON nights (channel_id, id)",
    """
    CREATE TABLE night_players (
        night_id  INTEGER NOT NULL REFERENCES nights (id) ON DELETE CASCADE,
        user_id   INTEGER NOT NULL,
        guild_id  INTEGER NOT NULL,
        game      TEXT NOT NULL,
        place     INTEGER NOT NULL,
        points    REAL NOT NULL,
        wins      INTEGER NOT NULL,
        games     INTEGER NOT NULL,
        PRIMARY KEY (night_id, user_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX night_players_user ON night_players (user_id, game, place)",
)

# Version 8: tables closed before the thread was told (a stop, a cancel, an
# idle close whose note is still untold) are looked for at every start among
# the recent ones: an index of the closed tables by time, so a start never
# reads the whole history of tables.
_TABLES_CLOSED = (
    "CREATE INDEX tables_closed ON tables (updated_at) WHERE status IN ('cancelled', 'abandoned')",
)

# Version 9: seasons.  A season is a span of time of one guild (guild_id 0:
# the global season of the cross-server boards), from ``starts_at`` to
# ``ends_at`` (NULL: open until ended by hand); a game counts in every season
# of its guild and of the global calendar whose span holds its end (spans of
# one guild never overlap: the half-open ``[starts_at, ends_at)``, so a game
# at the boundary counts once).  Its boards are ``stats`` rows of scope
# ``-id`` (the guild scopes are positive, the global one 0), so a season's
# boards are the same indexes and bucket counters as the all-time ones.
_SEASONS = (
    """
    CREATE TABLE seasons (
        id         INTEGER PRIMARY KEY,
        guild_id   INTEGER NOT NULL,
        name       TEXT NOT NULL,
        starts_at  REAL NOT NULL,
        ends_at    REAL,
        meta       TEXT NOT NULL DEFAULT '{}',
        UNIQUE (guild_id, name)
    )
    """,
    "CREATE INDEX seasons_span ON seasons (guild_id, starts_at)",
)

# Version 10: boards of who is really playing.  ``rated_at``: when the row's
# rating last changed (a rated game); a rating board lists a row only while
# it has a rated game within the activity window (app.store.base.ACTIVE_DAYS,
# a server may set its own): past it the store *parks* the rating
# (``parked_mu``/``parked_sigma`` keep it, ``mu``/``sigma`` become NULL, so
# the row leaves the rating board through the key and bucket triggers that
# are there already); the next rated game starts from the parked rating and
# puts the row back.  Rows rated before this version count from now.
_ACTIVITY = (
    "ALTER TABLE stats ADD COLUMN rated_at REAL",
    "ALTER TABLE stats ADD COLUMN parked_mu REAL",
    "ALTER TABLE stats ADD COLUMN parked_sigma REAL",
    "UPDATE stats SET rated_at = CAST(strftime('%s', 'now') AS REAL) WHERE mu IS NOT NULL",
    "CREATE INDEX stats_awake ON stats (rated_at) WHERE mu IS NOT NULL",
)

# Version 11: members excluded from a server's boards (``/boards exclude``).
# ``board_exclusions`` names them; ``stats.hidden`` marks their rows of that
# server's scope and its seasons' scopes.  A hidden row keeps every counter
# and rating (its games still count) but its four sort keys are NULL, so it
# leaves every board through the key and bucket triggers that are there
# already (as a parked rating leaves the rating board): the sort-key
# triggers are made again with ``hidden`` in their keys, and a row inserted
# for an excluded member (a new season, a first game of another kind) is
# hidden at once.
_VISIBLE_KEYS = ", ".join(f"{col} = {visible_key(board)}" for board, (_, col) in BOARDS.items())
_VISIBLE_STALE = " OR ".join(f"NEW.{col} IS NOT {visible_key(board, hidden='NEW.hidden', **_NEW)}"
                             for board, (_, col) in BOARDS.items())
#: the guild whose boards a stats scope belongs to (0: the cross-server
#: boards and the global seasons), over NEW
_SCOPE_GUILD = "CASE WHEN NEW.scope > 0 THEN NEW.scope ELSE (SELECT guild_id FROM seasons WHERE id = -NEW.scope) END"
_EXCLUDED = (
    """
    CREATE TABLE board_exclusions (
        guild_id  INTEGER NOT NULL,
        user_id   INTEGER NOT NULL,
        at        REAL NOT NULL,
        PRIMARY KEY (guild_id, user_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX board_exclusions_user ON board_exclusions (user_id)",
    "ALTER TABLE stats ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0",
    "DROP TRIGGER stats_keys_ins",
    "DROP TRIGGER stats_keys_upd",
    f"""
    CREATE TRIGGER stats_keys_ins AFTER INSERT ON stats WHEN {_VISIBLE_STALE} BEGIN
        UPDATE stats SET {_VISIBLE_KEYS}
        WHERE game = NEW.game AND scope = NEW.scope AND user_id = NEW.user_id;
    END
    """,
    f"""
    CREATE TRIGGER stats_keys_upd AFTER UPDATE OF games, wins, mu, sigma, hidden ON stats
    WHEN {_VISIBLE_STALE} BEGIN
        UPDATE stats SET {_VISIBLE_KEYS}
        WHERE game = NEW.game AND scope = NEW.scope AND user_id = NEW.user_id;
    END
    """,
    f"""
    CREATE TRIGGER stats_hide AFTER INSERT ON stats
    WHEN NEW.scope <> 0 AND EXISTS (SELECT 1 FROM board_exclusions
                                    WHERE user_id = NEW.user_id AND guild_id = {_SCOPE_GUILD}) BEGIN
        UPDATE stats SET hidden = 1
        WHERE game = NEW.game AND scope = NEW.scope AND user_id = NEW.user_id;
    END
    """,
)

# Version 12: the seasons that ended and are not closed yet (their final
# standings untold), looked for at every look at the calendar
# (``Store.seasons_ended``), through an index of those alone by end: nearly
# every season has ended (a server has one running and one made ahead), so an
# index of every season's end would still be read whole; the closed ones
# leave this one.  The condition is the query's own term, word for word (a
# partial index serves a query whose WHERE holds the index's).
_SEASONS_DUE = (
    "CREATE INDEX seasons_due ON seasons (ends_at, id) WHERE coalesce(json_extract(meta, '$.closed'), 0) = 0",
)

# Version 13: a guild's games by their end, so that a season made or ended
# at a moment finds the last game of its guild recorded already at or after
# that moment (app.store.base.after_recorded) without reading every game.
_GAMES_BY_END = (
    "CREATE INDEX games_guild_end ON games (guild_id, ended_at)",
)

#: MIGRATIONS[k] brings user_version k to k + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2, _V3, _V4, _TABLES_ABANDONED, _VERSUS, _NIGHTS, _TABLES_CLOSED,
                                           _SEASONS, _ACTIVITY, _EXCLUDED, _SEASONS_DUE, _GAMES_BY_END)
LATEST = len(MIGRATIONS)

#: rebuild every board's buckets from ``stats`` (run with the board triggers
#: dropped, inside one transaction): sentinels with the first chunk, then a
#: bucket every BUCKET_FILL entries.
REBUILD_BUCKETS: tuple[str, ...] = (
    "DELETE FROM buckets",
    "DELETE FROM bucket_groups",
    """
    INSERT INTO buckets (game, scope, board, lo, cnt)
    SELECT DISTINCT game, scope, b.value, '', 0
    FROM stats, json_each('[0, 1, 2, 3]') AS b
    """,
    """
    INSERT INTO bucket_groups (game, scope, board, lo, cnt, n)
    SELECT game, scope, board, '', 0, 1 FROM buckets
    """,
    *(
        f"""
        INSERT INTO buckets (game, scope, board, lo, cnt)
        SELECT game, scope, {board}, CASE WHEN pos = 0 THEN '' ELSE k END, MIN({BUCKET_FILL}, total - pos)
        FROM (
            SELECT game, scope, {col} AS k,
                   ROW_NUMBER() OVER w - 1 AS pos, COUNT(*) OVER p AS total
            FROM stats WHERE {col} IS NOT NULL
            WINDOW p AS (PARTITION BY game, scope), w AS (PARTITION BY game, scope ORDER BY {col})
        )
        WHERE pos % {BUCKET_FILL} = 0
        ON CONFLICT DO UPDATE SET cnt = excluded.cnt
        """
        for board, (_, col) in BOARDS.items()
    ),
    f"""
    INSERT INTO bucket_groups (game, scope, board, lo, cnt, n)
    SELECT game, scope, board, lo, total, n
    FROM (
        SELECT game, scope, board, lo, i, SUM(cnt) OVER g AS total, COUNT(*) OVER g AS n
        FROM (
            SELECT game, scope, board, lo, cnt,
                   ROW_NUMBER() OVER (PARTITION BY game, scope, board ORDER BY lo) - 1 AS i
            FROM buckets
        )
        WINDOW g AS (PARTITION BY game, scope, board, i / {GROUP_FILL})
    )
    WHERE i % {GROUP_FILL} = 0
    ON CONFLICT DO UPDATE SET cnt = excluded.cnt, n = excluded.n
    """,
)

async def user_version(db: aiosqlite.Connection) -> int:
    rows = await db.execute_fetchall("PRAGMA user_version")
    return int(list(rows)[0][0])


async def migrate(db: aiosqlite.Connection, target: int = LATEST) -> int:
    """Apply migrations up to *target* in one transaction; return the version.

    *db* must be in autocommit mode (``isolation_level=None``).
    """
    if not 0 <= target <= LATEST:
        raise ValueError(f"unknown schema version {target} (latest is {LATEST})")
    await db.execute("BEGIN IMMEDIATE")
    try:
        current = await user_version(db)
        if current > LATEST:
            raise RuntimeError(f"database schema version {current} is newer than this code ({LATEST})")
        for version in range(current, target):
            for statement in MIGRATIONS[version]:
                await db.execute(statement)
        if target > current:
            # PRAGMA takes no bound parameters; target is a checked int.
            await db.execute(f"PRAGMA user_version = {int(target)}")
        await db.execute("COMMIT")
    except BaseException:
        await db.execute("ROLLBACK")
        raise
    return max(current, target)
