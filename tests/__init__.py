"""The project's tests: ``unit/`` (no Discord stand-in, no bot process), ``e2e/`` (the
real bot against the stand-in in ``fakediscord/``) and ``games/<key>/`` (one game's
engine, players and rules); see README.md."""
import hashlib
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root (where bot.py is)."""


def table_seeds(nodeid: str | None = None) -> int | None:
    """The bot's ``TABLE_SEEDS`` for a test: a number from the test's node id (the running
    test's, from ``PYTEST_CURRENT_TEST``, unless given; None outside pytest), so every run
    of a test deals its tables the same cards, and each of its tables its own.

    >>> table_seeds("tests/e2e/test_x.py::test_y") == table_seeds("tests/e2e/test_x.py::test_y (call)")
    True
    >>> table_seeds("tests/e2e/test_x.py::test_y") != table_seeds("tests/e2e/test_x.py::test_z")
    True
    """
    current = nodeid or os.environ.get("PYTEST_CURRENT_TEST")
    if not current:
        return None
    node = current.removesuffix(" (setup)").removesuffix(" (call)").removesuffix(" (teardown)")
    return int.from_bytes(hashlib.sha256(node.encode("utf-8")).digest()[:8], "big") >> 1
