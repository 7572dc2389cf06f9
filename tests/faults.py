"""Database faults for tests, injected where SQLite reports them.

* :class:`FailingCommits` wraps the store's writing ``sqlite3`` connection:
  while ``error`` is set, every ``COMMIT`` fails with that SQLite message
  ("database or disk is full", "disk I/O error", "attempt to write a
  readonly database"), after the statements ran, as a full disk or a
  failing device does in WAL mode: the transaction is still open and must be
  rolled back by the store.  ``only``: just the commits of transactions
  with a statement that pattern finds (one kind of change, whatever else the
  bot saves meanwhile).
* :func:`held_lock` is another connection to the same file holding
  ``BEGIN EXCLUSIVE``: the bot's writes wait ``busy_timeout`` and get
  "database is locked", as with another process (a backup, a sqlite3 shell).
"""
from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path
from typing import Any, Iterator

DISK_FULL = "database or disk is full"
IO_ERROR = "disk I/O error"
READ_ONLY = "attempt to write a readonly database"


class FailingCommits:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.error: str | None = None
        self.refused = 0  # commits that failed
        self.spare = 0  # commits still let through while error is set
        #: a pattern: only the commits of a transaction with a statement it finds fail (e.g.
        #: ``r"UPDATE nights\b"``: a night's change, not a table's saved beside it, whenever)
        self.only: str | None = None
        self._statements: list[str] = []

    def execute(self, sql: str, *args: Any) -> Any:
        word = sql.strip().upper()
        if word.startswith("BEGIN"):
            self._statements = []
        elif self.error is not None and word == "COMMIT" and self._targeted():
            if self.spare > 0:
                self.spare -= 1
            else:
                self.refused += 1
                raise sqlite3.OperationalError(self.error)
        self._statements.append(sql)
        return self._conn.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self._statements.append(sql)
        return self._conn.executemany(sql, *args)

    def _targeted(self) -> bool:
        return self.only is None or any(re.search(self.only, sql) for sql in self._statements)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def failing_commits(store: Any) -> FailingCommits:
    """Put a :class:`FailingCommits` between the store and its write connection."""
    current = store._w._connection
    if isinstance(current, FailingCommits):
        return current
    wrapper = FailingCommits(current)
    store._w._connection = wrapper
    return wrapper


@contextlib.contextmanager
def held_lock(database: Path) -> Iterator[sqlite3.Connection]:
    """Another connection holds the database's write lock until the block ends."""
    other = sqlite3.connect(str(database), timeout=5, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        yield other
    finally:
        with contextlib.suppress(sqlite3.Error):
            other.execute("ROLLBACK")
        other.close()
