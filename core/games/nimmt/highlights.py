"""11 nimmt!'s moments for a game night's recap (see :class:`core.spec.Moment`)."""
from __future__ import annotations

from typing import Iterator, Sequence

from core.protocol import Event
from core.spec import Moment

KINDS = ("biggest_stack", "most_bulls", "most_rounds")


def moments(events: Sequence[Event], seats: int) -> Iterator[Moment]:
    """The most cards taken with one stack (``took``), the most bull cards
    held at the end (``bull``), the most rounds won, if more than one
    (``round_over``).

    >>> [m.kind for m in moments([{"type": "took", "seat": 1, "count": 5}], 2)]
    ['biggest_stack']
    """
    bulls = [0] * seats
    rounds = [0] * seats
    for e in events:
        kind = e.get("type")
        if kind == "took":
            yield Moment("biggest_stack", e["seat"], int(e.get("count", 0)))
        elif kind == "bull":
            bulls[e["seat"]] += 1
            if e.get("source") == "player" and e.get("victim") is not None:
                bulls[e["victim"]] -= 1
        elif kind == "round_over" and e.get("out") is not None:
            rounds[e["out"]] += 1
    for seat, count in enumerate(bulls):
        if count > 0:
            yield Moment("most_bulls", seat, count)
    for seat, count in enumerate(rounds):
        if count > 1:
            yield Moment("most_rounds", seat, count)
