"""Garbage's moment for a game night's recap (see :class:`core.spec.Moment`)."""
from __future__ import annotations

from typing import Iterator, Sequence

from core.protocol import Event
from core.spec import Moment

KINDS = ("fastest_hand",)


def moments(events: Sequence[Event], seats: int) -> Iterator[Moment]:
    """A hand won in the fewest own draws (``drew``, ``hand_won``).

    >>> [(m.kind, m.seat, m.value) for m in moments([{"type": "drew", "seat": 0}, {"type": "hand_won", "seat": 0}], 2)]
    [('fastest_hand', 0, 1)]
    """
    draws = [0] * seats
    for e in events:
        kind = e.get("type")
        if kind == "drew":
            draws[e["seat"]] += 1
        elif kind == "hand_won":
            yield Moment("fastest_hand", e["seat"], max(1, draws[e["seat"]]), lower=True)
            draws = [0] * seats
        elif kind == "hand_start":
            draws = [0] * seats
