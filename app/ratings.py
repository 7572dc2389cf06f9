"""Skill ratings: openskill's Plackett-Luce model, one player per team.

Places become ranks (tied places tie).  Computer players take part with
the model's default rating, which is never stored, so beating computers
moves a rating only a little (and only in games the caller marks rated).
The board shows the conservative ``ordinal = mu - 3 sigma``.

:func:`rate` is openskill 6's ``PlackettLuce().rate`` (default parameters,
one-player teams) written out flat: the library builds several objects per
player (each with a uuid4) and deep-copies them, which cost ~50 us per game
and scope on the recording path; this costs a few.  tests/unit/test_store.py
checks it against openskill on random games.

>>> new = rate([(25.0, 25 / 3), (25.0, 25 / 3)], [1, 2])
>>> new[0][0] > 25.0 > new[1][0]
True
>>> ordinal(25.0, 25 / 3)
0.0
"""
from __future__ import annotations

import math
from typing import Sequence

# openskill.models.PlackettLuce defaults
DEFAULT_MU: float = 25.0
DEFAULT_SIGMA: float = 25.0 / 3.0
BETA: float = 25.0 / 6.0
TAU: float = 25.0 / 300.0
KAPPA: float = 0.0001


def ordinal(mu: float, sigma: float) -> float:
    """Conservative skill estimate shown on boards (same expression as the SQL key)."""
    return mu - 3.0 * sigma


def rate(ratings: Sequence[tuple[float, float]], places: Sequence[int]) -> list[tuple[float, float]]:
    """New ``(mu, sigma)`` per entry after one game finishing at *places* (1 = first)."""
    n = len(ratings)
    if n < 2:
        return list(ratings)
    mus = [mu for mu, _ in ratings]
    var = [sigma * sigma + TAU * TAU for _, sigma in ratings]  # sigma corrected by tau, squared
    c = math.sqrt(sum(var) + n * BETA * BETA)
    e = [math.exp(mu / c) for mu in mus]
    # sum_q[q]: sum of e over everyone placed at q's place or worse; a[q]: ties at q's place
    sum_q = [sum(e[i] for i in range(n) if places[i] >= places[q]) for q in range(n)]
    a = [sum(1 for s in range(n) if places[s] == places[q]) for q in range(n)]
    out = []
    for i in range(n):
        omega = delta = 0.0
        for q in range(n):
            if places[q] <= places[i]:
                p = e[i] / sum_q[q]
                delta += p * (1.0 - p) / a[q]
                omega += ((1.0 - p) if q == i else -p) / a[q]
        omega *= var[i] / c
        delta *= var[i] / (c * c) * (math.sqrt(var[i]) / c)  # gamma = sigma / c
        out.append((mus[i] + omega, math.sqrt(var[i]) * math.sqrt(max(1.0 - delta, KAPPA))))
    return out


def idle_sigma(sigma: float, days: float) -> float:
    """A rating's uncertainty after *days* without a rated game, as shown on a
    profile: the variance grows by ``TAU**2`` a day (the dynamics OpenSkill
    adds before each game, here per idle day), at most back to
    ``DEFAULT_SIGMA``.  About +0.2 to a settled sigma of 2 after 30 days,
    +0.6 after a year.

    >>> round(idle_sigma(2.0, 30), 2), round(idle_sigma(2.0, 365), 2), idle_sigma(8.0, 10_000) == DEFAULT_SIGMA
    (2.05, 2.56, True)
    """
    return min(DEFAULT_SIGMA, (sigma * sigma + max(0.0, days) * TAU * TAU) ** 0.5)

