"""Computer players for Garbage at three levels, and the coach's figures.

Fair play: a player decides from :class:`Knowledge`, built by :func:`know`
from ``view(seat)`` and the public events of the hand (every card drawn,
placed, uncovered and discarded is shown face up).  Remembering them, a seat
knows the whole discard pile and, after a reshuffle, which cards the stock
holds; the cards never shown (face-down slots, and the stock before its first
reshuffle) are the *pool*, sampled afresh for every simulated world.

Levels (the real choices are only stock or discard, G1, and a Jack's slot):

* **easy**: a random choice 40% of the time, else today's greedy rule.
* **normal**: takes the discard whenever it may; a Jack goes to the
  face-down slot whose rank has the fewest copies still to come (every copy
  face up in a layout or in the discard pile, which it remembers, is gone).
* **hard**: for each choice, the share of simulated endings of the hand
  (worlds sampled from the pool, everybody then playing the normal rule) in
  which this seat completes its layout first; the best share wins.

>>> from core.games.garbage.engine import Garbage
>>> g = Garbage.new(2, 3)
>>> k = know(g.view(g.to_move), [])
>>> decide(k, "hard", random.Random(0), sims=8).action
Draw()
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from math import floor
from typing import Any, Sequence

from core.games.garbage.engine import (
    BIT, RANK, SLOTS_OF, Action, Discard, Draw, Garbage, Jack, COPIES, greedy_player,
)
from core.protocol import Event

__all__ = ["Knowledge", "Decision", "Figure", "know", "decide", "LEVELS", "EASY_MISTAKES"]

LEVELS = ("easy", "normal", "hard")
EASY_MISTAKES = 0.4
DEFAULT_BUDGET = 0.15
MAX_WORLDS = 400
SURE = 2.5  # standard errors a search result must clear to overrule the normal rule
PLAYOUT_LIMIT = 3000  # pushes: a simulated hand that runs longer counts as nobody's win
_DRAW = Draw()
_DISCARD = Discard()


@dataclass
class Knowledge:
    seat: int
    seats: int
    decks: int
    slots: list[int]
    layouts: list[list[str | None]]  # face-up text or None (face down), slot 1 first
    hands_won: list[int]
    hand_no: int
    start_seat: int
    to_move: int | None
    phase: str
    in_hand: str | None
    can_take_discard: bool
    discard: list[str]  # the remembered pile, bottom to top
    discard_count: int
    stock: int
    stock_known: list[str] | None  # the stock's cards (any order) after a reshuffle
    pool: list[str] = field(default_factory=list)  # cards never seen

    def copy(self) -> "Knowledge":
        return Knowledge(
            self.seat, self.seats, self.decks, list(self.slots), [list(layout) for layout in self.layouts],
            list(self.hands_won), self.hand_no, self.start_seat, self.to_move, self.phase, self.in_hand,
            self.can_take_discard, list(self.discard), self.discard_count, self.stock,
            None if self.stock_known is None else list(self.stock_known), list(self.pool))


@dataclass(frozen=True)
class Figure:
    action: Action
    worlds: int
    first: float  # share of worlds in which the seat completes its layout first


@dataclass(frozen=True)
class Decision:
    action: Action
    worlds: int = 0
    figures: tuple[Figure, ...] = ()


def _remove(items: list[str], text: str) -> None:
    try:
        items.remove(text)
    except ValueError:
        pass


def know(view: dict[str, Any], history: Sequence[Event]) -> Knowledge:
    """What ``view["seat"]`` knows from its view and the public events.

    >>> from core.games.garbage.engine import Garbage
    >>> g = Garbage.from_position(["?7H 2S ?3D", "?KS ?KH"], stock="QC 5S", fill=False)
    >>> events = g.apply(0, Draw())
    >>> k = know(g.view(1), events)
    >>> k.discard, k.stock, len(k.pool)  # (fill=False: cards left out of the game count as unseen)
    (['QC'], 1, 50)
    """
    start = 0
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("type") == "hand_start":
            start = i + 1
            break
    pile: list[str] = []
    stock_known: list[str] | None = None
    for e in history[start:]:
        kind = e.get("type")
        if kind == "discarded":
            pile.append(e["card"])
        elif kind == "drew":
            if e["source"] == "discard":
                if pile:
                    pile.pop()
            elif stock_known is not None:
                _remove(stock_known, e["card"])
        elif kind == "reshuffle":
            stock_known = pile[:-1]
            pile = pile[-1:]
    count = view["discard_count"]
    top = view["discard_top"]
    if count == 0:
        pile = []
    elif not pile or pile[-1] != top or len(pile) > count:
        pile = [top]  # not announced in the history we were given: only the top is known
    players = view["players"]
    if stock_known is not None and len(stock_known) != view["stock"]:
        stock_known = None
    decks = view["decks"]
    left: dict[str, int] = {text: decks for text in COPIES}
    taken: list[str] = []
    for p in players:
        taken += [c for c in p["layout"] if c is not None]
    taken += pile
    if stock_known is not None:
        taken += stock_known
    if view["in_hand"] is not None:
        taken.append(view["in_hand"])
    for text in taken:
        left[text] = max(0, left[text] - 1)
    pool = [text for text in COPIES for _ in range(left[text])]
    return Knowledge(
        seat=view["seat"], seats=view["seats"], decks=decks, slots=[p["slots"] for p in players],
        layouts=[list(p["layout"]) for p in players], hands_won=[p["hands_won"] for p in players],
        hand_no=view["hand_no"], start_seat=view["start_seat"], to_move=view["to_move"], phase=view["phase"],
        in_hand=view["in_hand"], can_take_discard=view["can_take_discard"], discard=pile,
        discard_count=count, stock=view["stock"], stock_known=stock_known, pool=pool)


def world(k: Knowledge, rng: random.Random | None) -> Garbage:
    """One game consistent with ``k`` (the pool shuffled by ``rng``; in
    order with ``rng=None``)."""
    pool = list(k.pool)
    if rng is not None:
        rng.shuffle(pool)
    used: dict[str, int] = {}

    def cid(text: str) -> int:
        n = used.get(text, 0)
        used[text] = n + 1
        return COPIES[text][n]

    g = Garbage()
    g.seats, g.decks = k.seats, k.decks
    g.seed = rng.getrandbits(32) if rng is not None else 0
    g.options = {"slots": max(k.slots)}
    pos = 0
    for p in range(k.seats):
        lay: list[int] = []
        down = 0
        for slot, text in enumerate(k.layouts[p], start=1):
            if text is None:
                down |= BIT[slot]
                lay.append(cid(pool[pos]))
                pos += 1
            else:
                lay.append(cid(text))
        g.slots.append(k.slots[p])
        g.cards.append(lay)
        g.down.append(down)
    hidden_discard = max(0, k.discard_count - len(k.discard))
    g.discard = [cid(t) for t in pool[pos:pos + hidden_discard]] + [cid(t) for t in k.discard]
    pos += hidden_discard
    if k.stock_known is not None:
        stock = list(k.stock_known)
        if rng is not None:
            rng.shuffle(stock)
    else:
        stock = pool[pos:pos + k.stock]
        pos += k.stock
    g.stock = [cid(t) for t in stock]
    g.in_hand = cid(k.in_hand) if k.in_hand is not None else None
    g.phase = k.phase
    g._to_move = k.to_move
    g.first_turn = k.phase == "source" and not k.can_take_discard and bool(k.discard) and \
        g.placeable(k.to_move, g.discard[-1]) if k.to_move is not None else False
    g.hand_no = k.hand_no
    g.start_seat = k.start_seat
    g.hands_won = list(k.hands_won)
    return g


def normal_move(g: Garbage, seat: int) -> Action:
    """The normal rule on a game (a sampled world): the discard when allowed;
    a Jack on the face-down slot whose rank has the most copies gone (face up
    in a layout or in the discard pile), the highest slot on ties.

    >>> g = Garbage.from_position(["?AS ?2S ?3S", "?KS 2H"], stock="JS AH", discard="2D", fill=False)
    >>> _ = g.apply(0, Draw())
    >>> normal_move(g, 0)
    Jack(slot=2)
    """
    if g.phase == "jack":
        gone = [0] * 14
        for s in range(g.seats):
            lay = g.cards[s]
            down = g.down[s]
            for i, c in enumerate(lay):
                if not down >> i & 1:
                    gone[RANK[c]] += 1
        for c in g.discard:
            gone[RANK[c]] += 1
        best = max(SLOTS_OF[g.down[seat]], key=lambda slot: (gone[slot], slot))
        return Jack(best)
    if g.can_take_discard():
        return _DISCARD
    return _DRAW


def _playout(g: Garbage, hand: int, before: list[int]) -> int | None:
    """Play the hand to its end with the normal rule; the hand's winner
    (``before``: the hands won when the hand was still on)."""
    push = g.push
    steps = 0
    while g.winner is None and g.hand_no == hand and steps < PLAYOUT_LIMIT:
        s = g._to_move
        assert s is not None  # the hand is still on
        push(s, normal_move(g, s))
        steps += 1
    for s in range(g.seats):
        if g.hands_won[s] != before[s]:
            return s
    return None


def _legal(k: Knowledge) -> list[Action]:
    if k.phase == "jack":
        return [Jack(slot) for slot, text in enumerate(k.layouts[k.seat], start=1) if text is None]
    if k.can_take_discard:
        return [_DRAW, _DISCARD]
    return [_DRAW]


def decide(k: Knowledge, level: str, rng: random.Random, *, sims: int | None = None,
           budget: float | None = None, stop: Any = None) -> Decision:
    """The move of ``k.seat`` at ``level``; see the module docstring.
    ``stop`` (a ``threading.Event``, optional): once set, the search ends after the world it is in."""
    if k.to_move != k.seat:
        raise ValueError("not this seat's turn")
    options = _legal(k)
    if level == "easy":
        if rng.random() < EASY_MISTAKES:
            return Decision(options[floor(rng.random() * len(options))])
        return Decision(greedy_player(world(k, None), k.seat, rng))
    if level == "normal":
        return Decision(normal_move(world(k, None), k.seat))
    if level != "hard":
        raise ValueError(f"unknown level {level!r}")
    if len(options) == 1:
        return Decision(options[0])
    if sims is None and budget is None:
        budget = DEFAULT_BUDGET
    seat = k.seat
    n = len(options)
    base = options.index(normal_move(world(k, None), seat))
    wins = [0.0] * n
    diff = [0.0] * n  # paired against the normal choice: sum and sum of squares
    diff2 = [0.0] * n
    deadline = time.perf_counter() + (budget or 0.0)
    worlds = 0
    limit = sims if sims is not None else MAX_WORLDS
    while worlds < limit:
        if budget is not None and worlds >= 4 and time.perf_counter() > deadline:
            break
        if stop is not None and worlds >= 1 and stop.is_set():
            break  # nobody waits for this move any more
        wr = random.Random(rng.getrandbits(64))
        state = wr.getstate()
        won = [0] * n
        for i, action in enumerate(options):
            wr.setstate(state)  # every choice meets the same world
            g = world(k, wr)
            g.push(seat, action)
            if _playout(g, k.hand_no, k.hands_won) == seat:
                won[i] = 1
        for i in range(n):
            wins[i] += won[i]
            d = won[i] - won[base]
            diff[i] += d
            diff2[i] += d * d
        worlds += 1
    # The normal choice stands unless another one wins clearly more often
    # (by SURE standard errors of the paired difference): a noisy estimate
    # must not replace a sound rule.
    best = base
    best_gain = 0.0
    for i in range(n):
        mean = diff[i] / worlds
        var = max(0.0, diff2[i] / worlds - mean * mean)
        if mean > best_gain and mean > SURE * (var / worlds) ** 0.5:
            best, best_gain = i, mean
    order = [best] + sorted((i for i in range(n) if i != best), key=lambda i: (-wins[i], i))
    figures = tuple(Figure(options[i], worlds, wins[i] / worlds) for i in order)
    return Decision(options[best], worlds, figures)
