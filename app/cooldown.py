"""Per-user limits on costly requests (drawing images): a sliding window.

    >>> now = [0.0]
    >>> limit = Cooldown(uses=2, per=10.0, clock=lambda: now[0])
    >>> limit.take(7), limit.take(7), limit.take(7), limit.take(8)
    (None, None, 10.0, None)
    >>> now[0] = 4.0; limit.take(7)
    6.0
    >>> now[0] = 10.0; limit.take(7)

``take`` either counts a use and returns None, or returns how many seconds
remain until the user may ask again (and counts nothing).
"""
from __future__ import annotations

import time
from collections import deque
from typing import Callable


class Cooldown:
    """At most ``uses`` per ``per`` seconds for each key (a user id)."""

    def __init__(self, uses: int, per: float, clock: Callable[[], float] = time.monotonic) -> None:
        if uses < 1 or per <= 0:
            raise ValueError("a cooldown needs uses >= 1 and per > 0")
        self.uses = uses
        self.per = per
        self.clock = clock
        self._seen: dict[int, deque[float]] = {}

    def take(self, key: int) -> float | None:
        """Count one use by ``key``; None if allowed, else seconds to wait."""
        now = self.clock()
        seen = self._seen.get(key)
        if seen is None:
            seen = self._seen[key] = deque()
        while seen and seen[0] <= now - self.per:
            seen.popleft()
        if len(seen) >= self.uses:
            return seen[0] + self.per - now
        seen.append(now)
        if len(self._seen) > 4096:  # forget users whose window has passed
            self._prune(now)
        return None

    def _prune(self, now: float) -> None:
        for key in [k for k, q in self._seen.items() if not q or q[-1] <= now - self.per]:
            del self._seen[key]
