"""Numbered schema migrations for the bot's SQLite database.

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
leaderboards ("boards") are read straight off ``stats`` through one index
each, on a *sort key* column that is the negated board value (so ascending
index order is board order) with ``user_id`` as the tie-break:

    board 0 rating    k_rating = -(mu - 3 sigma)   players with >= 5 games and a rating
    board 1 wins      k_wins   = -wins             every player
    board 2 win_rate  k_rate   = -(wins / games)   players with >= 5 games
    board 3 games     k_games  = -games            every player

``buckets`` is an order-statistic index over each board: the board is cut
into consecutive key ranges, a bucket row ``(lo_k, lo_u) -> cnt`` counts the
entries whose key ``(k, user_id)`` is >= its lower bound and below the next
bucket's.  Every board starts with a sentinel bucket at ``(-inf, 0)``.
Triggers keep the counts exact inside the writing transaction, and split a
bucket that grows past ``BUCKET_MAX`` entries at its median key.  So

    rank(key)    = 1 + SUM(cnt of buckets before key's bucket)
                     + COUNT(entries in key's bucket ahead of key)
    page at pos  = the last bucket whose running total <= pos, then an index
                   seek from its lower bound with OFFSET < BUCKET_MAX

each costing a scan of ~N / BUCKET_MAX * 2 bucket rows plus < BUCKET_MAX
index entries, instead of O(N).
"""
from __future__ import annotations

import aiosqlite

#: games with fewer than this many games are left off the rating and win-rate
#: boards (the indexed boards; other thresholds use a slower plain query).
MIN_GAMES = 5
#: a bucket holding more entries than this splits in two.
BUCKET_MAX = 1024
#: bulk rebuilds cut boards into buckets of this size (room to grow).
BUCKET_FILL = 512

#: board number -> (name, sort-key column, condition for being on the board)
BOARDS: dict[int, tuple[str, str]] = {
    0: ("rating", "k_rating"),
    1: ("wins", "k_wins"),
    2: ("win_rate", "k_rate"),
    3: ("games", "k_games"),
}
#: numeric codes of the games in ``stats`` / ``buckets`` (kept small: they
#: are the first column of every board index).
GAME_CODES = {"nimmt": 0, "garbage": 1}

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


def _board_triggers(board: int, col: str) -> tuple[str, ...]:
    """The three triggers that keep board *board*'s buckets exact."""
    find = (
        "SELECT lo_k, lo_u FROM buckets WHERE game = {r}.game AND scope = {r}.scope"
        f" AND board = {board} AND (lo_k, lo_u) <= ({{r}}.{col}, {{r}}.user_id)"
        " ORDER BY lo_k DESC, lo_u DESC LIMIT 1"
    )
    bump = (
        "UPDATE buckets SET cnt = cnt {op} 1"
        f" WHERE game = {{r}}.game AND scope = {{r}}.scope AND board = {board}"
        f" AND {{r}}.{col} IS NOT NULL AND (lo_k, lo_u) = ({find});"
    )
    return (
        f"""
        CREATE TRIGGER stats_ins_{board} AFTER INSERT ON stats
        WHEN NEW.{col} IS NOT NULL BEGIN
            {bump.format(op='+', r='NEW')}
        END
        """,
        f"""
        CREATE TRIGGER stats_upd_{board} AFTER UPDATE ON stats
        WHEN OLD.{col} IS NOT NEW.{col} BEGIN
            {bump.format(op='-', r='OLD')}
            {bump.format(op='+', r='NEW')}
        END
        """,
        f"""
        CREATE TRIGGER buckets_split_{board} AFTER UPDATE OF cnt ON buckets
        WHEN NEW.board = {board} AND NEW.cnt > {BUCKET_MAX} BEGIN
            INSERT INTO buckets (game, scope, board, lo_k, lo_u, cnt)
                SELECT NEW.game, NEW.scope, {board}, {col}, user_id, NEW.cnt - NEW.cnt / 2
                FROM stats
                WHERE game = NEW.game AND scope = NEW.scope AND {col} IS NOT NULL
                  AND ({col}, user_id) >= (NEW.lo_k, NEW.lo_u)
                ORDER BY {col}, user_id LIMIT 1 OFFSET NEW.cnt / 2;
            UPDATE buckets SET cnt = NEW.cnt / 2
                WHERE game = NEW.game AND scope = NEW.scope AND board = {board}
                  AND lo_k = NEW.lo_k AND lo_u = NEW.lo_u;
        END
        """,
    )


#: the board triggers, by name (bulk loaders drop and recreate them).
BOARD_TRIGGERS: tuple[str, ...] = tuple(
    stmt for board, (_, col) in BOARDS.items() for stmt in _board_triggers(board, col)
)
BOARD_TRIGGER_NAMES: tuple[str, ...] = tuple(
    f"{kind}_{board}" for board in BOARDS for kind in ("stats_ins", "stats_upd", "buckets_split")
)

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
    f"""
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
        k_rating REAL GENERATED ALWAYS AS
            (CASE WHEN games >= {MIN_GAMES} AND mu IS NOT NULL THEN -(mu - 3.0 * sigma) END) VIRTUAL,
        k_wins   INTEGER GENERATED ALWAYS AS (-wins) VIRTUAL,
        k_rate   REAL GENERATED ALWAYS AS
            (CASE WHEN games >= {MIN_GAMES} THEN -(CAST(wins AS REAL) / games) END) VIRTUAL,
        k_games  INTEGER GENERATED ALWAYS AS (-games) VIRTUAL,
        PRIMARY KEY (game, scope, user_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX stats_rating ON stats (game, scope, k_rating, user_id) WHERE k_rating IS NOT NULL",
    "CREATE INDEX stats_wins ON stats (game, scope, k_wins, user_id)",
    "CREATE INDEX stats_rate ON stats (game, scope, k_rate, user_id) WHERE k_rate IS NOT NULL",
    "CREATE INDEX stats_games ON stats (game, scope, k_games, user_id)",
    """
    CREATE TABLE buckets (
        game   INTEGER NOT NULL,
        scope  INTEGER NOT NULL,
        board  INTEGER NOT NULL,
        lo_k   REAL NOT NULL,
        lo_u   INTEGER NOT NULL,
        cnt    INTEGER NOT NULL,
        PRIMARY KEY (game, scope, board, lo_k, lo_u)
    ) WITHOUT ROWID
    """,
    # Every (game, scope) gets its four sentinel buckets before its first
    # stats row is counted (BEFORE INSERT runs ahead of the AFTER triggers).
    """
    CREATE TRIGGER stats_sentinels BEFORE INSERT ON stats BEGIN
        INSERT OR IGNORE INTO buckets (game, scope, board, lo_k, lo_u, cnt) VALUES
            (NEW.game, NEW.scope, 0, -9e999, 0, 0), (NEW.game, NEW.scope, 1, -9e999, 0, 0),
            (NEW.game, NEW.scope, 2, -9e999, 0, 0), (NEW.game, NEW.scope, 3, -9e999, 0, 0);
    END
    """,
    *BOARD_TRIGGERS,
)

#: MIGRATIONS[k] brings user_version k to k + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2)
LATEST = len(MIGRATIONS)

#: rebuild every board's buckets from ``stats`` (run with the board triggers
#: dropped, inside one transaction): sentinels with the first chunk, then a
#: bucket every BUCKET_FILL entries.
REBUILD_BUCKETS: tuple[str, ...] = (
    "DELETE FROM buckets",
    """
    INSERT INTO buckets (game, scope, board, lo_k, lo_u, cnt)
    SELECT DISTINCT game, scope, b.value, -9e999, 0, 0
    FROM stats, json_each('[0, 1, 2, 3]') AS b
    """,
    *(
        f"""
        INSERT INTO buckets (game, scope, board, lo_k, lo_u, cnt)
        SELECT game, scope, {board},
               CASE WHEN pos = 0 THEN -9e999 ELSE k END,
               CASE WHEN pos = 0 THEN 0 ELSE user_id END,
               MIN({BUCKET_FILL}, total - pos)
        FROM (
            SELECT game, scope, {col} AS k, user_id,
                   ROW_NUMBER() OVER w - 1 AS pos, COUNT(*) OVER p AS total
            FROM stats WHERE {col} IS NOT NULL
            WINDOW p AS (PARTITION BY game, scope),
                   w AS (PARTITION BY game, scope ORDER BY {col}, user_id)
        )
        WHERE pos % {BUCKET_FILL} = 0
        ON CONFLICT DO UPDATE SET cnt = excluded.cnt
        """
        for board, (_, col) in BOARDS.items()
    ),
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
