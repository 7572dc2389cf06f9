"""Skill ratings: openskill's Plackett-Luce model, one player per team.

Places become ranks (tied places tie).  Computer players take part with
the model's default rating, which is never stored, so beating computers
moves a rating only a little (and only in games the caller marks rated).
The board shows the conservative ``ordinal = mu - 3 sigma``.

>>> new = rate([(25.0, 25 / 3), (25.0, 25 / 3)], [1, 2])
>>> new[0][0] > 25.0 > new[1][0]
True
>>> ordinal(25.0, 25 / 3)
0.0
"""
from __future__ import annotations

from typing import Sequence

from openskill.models import PlackettLuce

_MODEL = PlackettLuce()
DEFAULT_MU: float = _MODEL.mu
DEFAULT_SIGMA: float = _MODEL.sigma


def ordinal(mu: float, sigma: float) -> float:
    """Conservative skill estimate shown on boards (same expression as the SQL key)."""
    return mu - 3.0 * sigma


def rate(ratings: Sequence[tuple[float, float]], places: Sequence[int]) -> list[tuple[float, float]]:
    """New ``(mu, sigma)`` per entry after one game finishing at *places*."""
    if len(ratings) < 2:
        return list(ratings)
    teams = [[_MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    out = _MODEL.rate(teams, ranks=list(places))
    return [(team[0].mu, team[0].sigma) for team in out]
