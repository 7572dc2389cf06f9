"""6 nimmt!'s moments for a game night's recap (see :class:`core.spec.Moment`)."""
from __future__ import annotations

from typing import Iterator, Sequence

from core.protocol import Event
from core.spec import Moment

KINDS = ("heaviest_row", "most_deals")


def moments(events: Sequence[Event], seats: int) -> Iterator[Moment]:
    """The most ox heads taken with one row (``took_row``, ``sixth``), the most
    deals won in one game, if more than one (``deal_over``: the fewest
    penalty points of the deal).

    >>> events = [{"type": "sixth", "seat": 1, "heads": 9}, {"type": "deal_over", "penalties": [3, 9]}]
    >>> [(m.kind, m.seat, m.value) for m in moments(events, 2)]
    [('heaviest_row', 1, 9)]
    """
    won = [0] * seats
    for e in events:
        kind = e.get("type")
        if kind in ("took_row", "sixth"):
            yield Moment("heaviest_row", e["seat"], int(e.get("heads", 0)))
        elif kind == "deal_over":
            low = min(e["penalties"])
            for seat, penalty in enumerate(e["penalties"]):
                won[seat] += penalty == low
    for seat, count in enumerate(won):
        if count > 1:
            yield Moment("most_deals", seat, count)
