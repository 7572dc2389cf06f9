"""Computer players for 6 nimmt! at three levels, and the coach's figures.

Fair play: a player decides from :class:`Knowledge`, built by :func:`know`
from the seat's own ``view(seat)`` and the deal's public events (the four
cards that opened the rows, every card revealed, every row taken).  Nothing
else is read: another seat's choice is a secret until the reveal (the view
says only *that* it has chosen).  Every card that leaves a hand is revealed,
so the cards this seat has not seen this deal are the *pool*: the other
hands (a seat that has chosen holds one card more, its hidden choice) and
the cards not dealt.  The search samples them afresh for every world.

Levels:

* **easy**: the normal rule with a deliberate random card (or row) 30% of
  the time (a beginner can win).
* **normal**: the card that looks cheapest now (a close fit on a short row;
  a low card when a take is cheap), and the row with the fewest ox heads when
  a row must be taken (S2's rule, so the turn timer's takeover, S3, plays
  exactly this level).
* **hard**: determinized Monte Carlo.  Each iteration samples one world
  consistent with the knowledge; every candidate (a card of the hand, or a
  row) is played in that world while the others choose by the normal rule,
  and the deal is played out with the normal rule for every seat (common
  random numbers: all candidates meet the same worlds; sequential halving
  drops the worse half at 1/8, 1/4 and 1/2 of the worlds).  The playout
  stops :data:`HORIZON` turns after the candidate's: further on, the normal
  rule is a poor guess of what people play, and the longer playouts scored
  worse (bench/ai.py).  A world scores the penalty taken against the
  others' mean; in a world where the game ends, half of that and half the
  share of finishing first (ties split).  It
  stops after ``sims`` worlds or ``budget`` seconds, whichever comes first;
  with ``sims`` alone the result depends only on the seeded ``rng`` (tests).

>>> from core.games.take6.engine import Take6
>>> g = Take6.new(4, 11)
>>> k = know(g.view(2), [])
>>> d = decide(k, "hard", random.Random(1), sims=8)
>>> g.is_legal(2, d.action), d.worlds
(True, 8)
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Sequence

from core.games.take6.engine import CARDS, ROW_MAX, ROWS, Action, Choose, PickRow, fewest_heads_row, heads, normal_card
from core.protocol import Event
from core.search import LEVELS, Decision, Figure, halving, levelled

__all__ = ["Knowledge", "Decision", "Figure", "know", "decide", "LEVELS", "EASY_MISTAKES"]

EASY_MISTAKES = 0.3  # share of the easy level's moves that are random
SPREAD = 40.0  # penalty points against the others' mean that map onto the whole 0..1 of a world's value
HORIZON = 2  # turns played out after the candidate's own (the normal rule's guesses blur beyond)
ENDING_WEIGHT = 0.5  # in a world that ends the game: weight of finishing first against the penalty margin


@dataclass
class Knowledge:
    """Everything one seat may know: its view plus the deal's public history."""

    seat: int
    seats: int
    phase: str  # "choose" or "row"
    deal: int
    deals: int | None  # a fixed number of deals (then no point limit)
    limit: int | None
    hand: list[int]  # own cards, ascending
    rows: list[list[int]]
    counts: list[int]  # cards in each hand
    chosen: list[bool]  # who has chosen this turn (not what)
    pending: list[tuple[int, int]]  # (seat, card) revealed and still to place, the row choice's first
    scores: list[int]  # totals before this deal
    penalties: list[int]  # ox heads each seat took this deal so far
    pool: list[int] = field(default_factory=list)  # cards this seat has not seen this deal, ascending

    def copy(self) -> "Knowledge":
        return Knowledge(self.seat, self.seats, self.phase, self.deal, self.deals, self.limit, list(self.hand),
                         [list(r) for r in self.rows], list(self.counts), list(self.chosen), list(self.pending),
                         list(self.scores), list(self.penalties), list(self.pool))

    @property
    def last_deal(self) -> bool:
        """The game surely ends with this deal (a fixed number of deals, this the last)."""
        return self.deals is not None and self.deal >= self.deals


def know(view: dict[str, Any], history: Sequence[Event]) -> Knowledge:
    """What ``view["seat"]`` knows: its view and the public events so far.

    Only the current deal counts (each is dealt afresh); a history whose
    last deal is an earlier one is ignored (then the pool is every card not
    in sight, and the others' penalties of the deal are taken as 0).

    >>> from core.games.take6.engine import Take6
    >>> g = Take6.new(2, seed=3)
    >>> events = g.apply(0, Choose(g.hands[0][0])) + g.apply(1, Choose(g.hands[1][-1]))
    >>> k = know(g.view(0), events)
    >>> len(k.hand), len(k.pool), k.counts[1] + 104 - 2 * 10 - 4  # the other hand and the cards not dealt
    (9, 89, 89)
    """
    seat = view["seat"]
    seats = view["seats"]
    # The game's first deal has no deal_start (it is dealt before any move):
    # then the whole history is this deal's.
    start: int | None = -1 if view["deal"] == 1 else None
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("type") == "deal_start":
            start = i if history[i].get("deal") == view["deal"] else None
            break
    seen: set[int] = set()
    penalties = [0] * seats
    if start is not None:
        if start >= 0:
            seen.update(history[start]["rows"])
        for e in history[start + 1:]:
            kind = e.get("type")
            if kind == "reveal":
                seen.update(c for _, c in e["cards"])
            elif kind in ("took_row", "sixth"):
                seen.update(e["cards"])  # (the first deal's opening cards, too)
                penalties[e["seat"]] += e["heads"]
    penalties[seat] = view["my_pile_heads"]
    hand = sorted(view["hand"])
    rows = [list(r) for r in view["rows"]]
    pending = [(int(s), int(c)) for s, c in view["pending"]]
    seen.update(hand)
    for r in rows:
        seen.update(r)
    seen.update(c for _, c in pending)
    if view.get("my_choice") is not None:
        seen.add(view["my_choice"])
    return Knowledge(
        seat=seat, seats=seats, phase=view["phase"], deal=view["deal"], deals=view["deals"], limit=view["limit"],
        hand=hand, rows=rows, counts=list(view["hand_counts"]), chosen=list(view["chosen"]), pending=pending,
        scores=list(view["scores"]), penalties=penalties,
        pool=[c for c in range(1, int(view.get("cards", CARDS)) + 1) if c not in seen])


# ------------------------------------------------------------------ the rules, quick
# A simulated deal is a few lists: rows, hands, the deal's penalties.


def _place(rows: list[list[int]], card: int, seat: int, pens: list[int], row_choice: int | None = None) -> None:
    """One revealed card placed (S2's row, when it needs one: ``row_choice``, else the fewest heads)."""
    best = -1
    top = 0
    for r, row in enumerate(rows):
        last = row[-1]
        if top < last < card:
            best, top = r, last
    if best < 0:
        best = fewest_heads_row(rows) if row_choice is None else row_choice
    elif len(rows[best]) < ROW_MAX:
        rows[best].append(card)
        return
    pens[seat] += heads(rows[best])
    rows[best] = [card]


def _turn(rows: list[list[int]], hands: list[list[int]], pens: list[int], first: tuple[int, int] | None) -> None:
    """One turn: every seat chooses by the normal rule (``first``: one seat's card fixed), then the placing."""
    chosen = []
    for s, hand in enumerate(hands):
        if first is not None and first[0] == s:
            card = first[1]
        else:
            card = normal_card(hand, rows)
        hand.remove(card)
        chosen.append((card, s))
    chosen.sort()
    for card, s in chosen:
        _place(rows, card, s, pens)


def world(k: Knowledge, rng: random.Random) -> list[list[int]]:
    """The hands of one world consistent with ``k``: the pool dealt at random
    to the other seats (a seat that has chosen gets one card more, its
    choice, which it then makes by the normal rule)."""
    pool = list(k.pool)
    rng.shuffle(pool)
    hands: list[list[int]] = []
    pos = 0
    choosing = k.phase == "choose"
    for p in range(k.seats):
        if p == k.seat:
            hands.append(list(k.hand))
            continue
        n = k.counts[p] + (1 if choosing and k.chosen[p] else 0)
        hands.append(pool[pos:pos + n])
        pos += n
    return hands


def _play_out(k: Knowledge, hands: list[list[int]], action: Action) -> list[int]:
    """The rest of the deal in one world with ``action`` for this seat: the deal's penalties."""
    rows = [list(r) for r in k.rows]
    pens = list(k.penalties)
    seat = k.seat
    if isinstance(action, PickRow):
        (_, card), rest = k.pending[0], k.pending[1:]
        _place(rows, card, seat, pens, action.row)
        for s, c in rest:
            _place(rows, c, s, pens)
    else:
        _turn(rows, hands, pens, (seat, action.card))
    for _ in range(HORIZON):
        if not hands[seat]:
            break
        _turn(rows, hands, pens, None)
    return pens


# ------------------------------------------------------------------ levels


def _options(k: Knowledge) -> list[Action]:
    if k.phase == "row":
        return [PickRow(r) for r in range(ROWS)]
    return [Choose(c) for c in k.hand]


def _normal(k: Knowledge) -> Action:
    if k.phase == "row":
        return PickRow(fewest_heads_row(k.rows))
    return Choose(normal_card(k.hand, k.rows))


def decide(k: Knowledge, level: str, rng: random.Random, *, sims: int | None = None,
           budget: float | None = None, stop: Any = None) -> Decision[Action]:
    """The move of ``k.seat`` at ``level`` (easy / normal / hard; see
    :func:`core.search.levelled` and :func:`core.search.halving`): easy and normal
    both start from the normal rule (the cheapest-looking card, the fewest-heads row)."""
    if k.phase == "row":
        if not k.pending or k.pending[0][0] != k.seat:
            raise ValueError("not this seat's row choice")
    elif k.phase != "choose" or k.chosen[k.seat] or not k.hand:
        raise ValueError("this seat has nothing to choose")
    return levelled(level, rng, lambda: _options(k), lambda: _normal(k), lambda: _normal(k),
                    lambda options, budget: _search(k, list(options), rng, sims, budget, stop),
                    mistakes=EASY_MISTAKES, sims=sims, budget=budget)


def _share(points: list[int], seat: int) -> float:
    """1 when ``seat`` has the fewest points, split among the tied; else 0."""
    mine = points[seat]
    low = min(points)
    return 1.0 / points.count(low) if mine == low else 0.0


def _search(k: Knowledge, options: list[Action], rng: random.Random, sims: int | None,
            budget: float | None, stop: Any = None) -> Decision[Action]:
    """:func:`core.search.halving` over worlds of this deal: a candidate is played in a
    sampled world, the others choosing by the normal rule, for :data:`HORIZON` turns more.
    A world scores the penalty against the others' mean; one where the game ends, half
    that and half the share of finishing first (ties split).  ``first`` is the share of
    the fewest points of the deal (last deal: of the game)."""
    seat = k.seat
    before = k.penalties[seat]
    others = [p for p in range(k.seats) if p != seat]

    def score(hands: list[list[int]], action: Action) -> tuple[float, float, float]:
        pens = _play_out(k, [list(h) for h in hands], action)
        totals = [k.scores[p] + pens[p] for p in range(k.seats)]
        ended = k.last_deal or (k.limit is not None and max(totals) >= k.limit)
        game = _share(totals, seat)
        first = game if k.last_deal else _share(pens, seat)
        gained = sum(pens[p] for p in others) / len(others) - pens[seat]
        dense = 0.5 + max(-0.5, min(0.5, gained / SPREAD))
        if ended:
            ahead = min(totals[p] for p in others) - totals[seat]
            v = game + 0.002 * max(-20, min(20, ahead))
            return ENDING_WEIGHT * v + (1 - ENDING_WEIGHT) * dense, first, pens[seat] - before
        return dense, first, pens[seat] - before

    return halving(options, lambda r: world(k, r), score, rng, sims, budget, stop)
