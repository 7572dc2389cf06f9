"""Computer players for 11 nimmt! at three levels, and the coach's figures.

Fair play: a player decides from :class:`Knowledge`, built by :func:`know`
from the seat's own ``view(seat)`` and the game's public events (every card
laid face up and where it went; every stack taken).  Nothing else is read.
Remembering the public history tells exactly which cards each stack holds,
so which cards went into a hand that took a stack; the cards never shown
(the other hands' dealt cards and the draw pile) are the *pool*, and the
search samples them afresh for every simulated world.

Levels:

* **easy**: today's greedy rule on the visible tops only, with a deliberate
  random move 30% of the time (a beginner can win).
* **normal**: remembers the table.  Dumps as many cards as it can (with bull
  cards the whole fitting batch on each stack), the heaviest card without
  bulls; when it must take, the stack with the fewest cards (then the fewest
  ox heads).
* **hard**: determinized Monte Carlo.  Each iteration samples one world
  consistent with the knowledge; every candidate move is played in that
  world and the round is played out with the normal rule for every seat
  (common random numbers: all candidates see the same worlds).  A candidate
  is scored by the round's result for the game: in the last round the share
  of finishing first (ties split), earlier the penalty against the others'
  mean.  It stops after ``sims`` worlds or ``budget`` seconds, whichever
  comes first; with ``sims`` alone the result depends only on the seeded
  ``rng`` (tests).

>>> from core.games.nimmt.engine import Nimmt
>>> g = Nimmt.new(4, 11)
>>> k = know(g.view(g.to_move), [])
>>> d = decide(k, "hard", random.Random(1), sims=8)
>>> g.is_legal(g.to_move, d.action), d.worlds
(True, 8)
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Sequence

from core.games.nimmt.engine import (
    HEADS, WINDOW, Action, Nimmt, Open, Pass, Play, Steal, Take, hand_heads, cards_of, greedy_player,
    mask_of,
)
from core.protocol import Event
from core.search import LEVELS, Decision, Figure, halving, levelled

__all__ = ["Knowledge", "Decision", "Figure", "know", "decide", "LEVELS", "EASY_MISTAKES"]

EASY_MISTAKES = 0.3  # share of the easy level's moves that are random
_ALL = mask_of(range(1, 101))
_PASS = Pass()


@dataclass
class Knowledge:
    """Everything one seat may know: its view plus the remembered history."""

    seat: int
    seats: int
    round: int
    rounds: int
    to_move: int | None
    phase: str
    hand: int  # own cards (bitmask)
    stacks: list[tuple[int, list[int]]]  # (id, cards bottom first) in table order
    known: list[int]  # per seat: cards known to be in that hand (own seat: the hand)
    counts: list[int]  # cards in each hand
    bulls: list[int]
    supply: int
    draw: int  # size of the draw pile
    scores: list[int]
    start_seat: int
    played: list[int]
    victims: list[int]
    next_id: int
    pool: list[int] = field(default_factory=list)  # cards this seat has not seen, ascending

    def copy(self) -> "Knowledge":
        return Knowledge(
            self.seat, self.seats, self.round, self.rounds, self.to_move, self.phase, self.hand,
            [(sid, list(cards)) for sid, cards in self.stacks], list(self.known), list(self.counts),
            list(self.bulls), self.supply, self.draw, list(self.scores), self.start_seat, list(self.played),
            list(self.victims), self.next_id, list(self.pool))


def know(view: dict[str, Any], history: Sequence[Event]) -> Knowledge:
    """What ``view["seat"]`` knows: its view and the public events so far.

    ``history`` is the game's public event list (any prefix of rounds may be
    missing; only the current round counts: each round is dealt afresh).  A
    stack whose first card was never announced (the deal's first stack) is
    known from the ``onto`` of the first card laid on it, or from its top.

    >>> from core.games.nimmt.engine import Nimmt
    >>> g = Nimmt.from_position([[24, 30, 50], [1, 99, 2]], [[20]], bulls=[1, 0], draw=[7, 8])
    >>> events = g.apply(0, Play(0, [24, 30])) + g.apply(1, Take(0))
    >>> k = know(g.view(0), events)
    >>> cards_of(k.known[1]), k.stacks
    ([20, 24, 30], [(1, [7]), (2, [8])])
    """
    seat = view["seat"]
    seats = view["seats"]
    start = 0
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("type") == "round_start":
            start = i + 1
            break
    stacks: dict[int, list[int]] = {}
    known = [0] * seats
    top_id = -1
    for e in history[start:]:
        kind = e.get("type")
        if kind == "played":
            sid = e["stack"]
            cards = e["cards"]
            st = stacks.get(sid)
            if st is None:
                st = stacks[sid] = [e["onto"]]
            st.extend(cards)
            known[e["seat"]] &= ~mask_of(cards)
            top_id = max(top_id, sid)
        elif kind == "took":
            sid = e["stack"]
            st = stacks.pop(sid, None) or [e["top"]]
            known[e["seat"]] |= mask_of(st)
            top_id = max(top_id, sid)
        elif kind == "revealed":
            for s in e["stacks"]:
                stacks[s["id"]] = [s["top"]]
                top_id = max(top_id, s["id"])
        elif kind == "opened":
            stacks[e["stack"]] = [e["card"]]
            known[e["seat"]] &= ~(1 << e["card"])
            top_id = max(top_id, e["stack"])
    table: list[tuple[int, list[int]]] = []
    for s in view["stacks"]:
        st = stacks.get(s["id"])
        if st is None or st[-1] != s["top"]:
            st = [s["top"]]  # not announced in the history we were given
        table.append((s["id"], st))
        top_id = max(top_id, s["id"])
    hand = mask_of(view["hand"])
    on_table = 0
    for _, st in table:
        on_table |= mask_of(st)
    counts = list(view["hand_counts"])
    for p in range(seats):
        known[p] &= ~(hand | on_table)
        if p == seat:
            known[p] = hand
        elif known[p].bit_count() > counts[p]:  # an incomplete history: trust the count
            known[p] = 0
    seen = hand | on_table
    for p in range(seats):
        seen |= known[p]
    return Knowledge(
        seat=seat, seats=seats, round=view["round"], rounds=view["rounds"], to_move=view["to_move"],
        phase=view["phase"], hand=hand, stacks=table, known=known, counts=counts, bulls=list(view["bulls"]),
        supply=view["supply"], draw=view["draw_pile"], scores=list(view["scores"]),
        start_seat=view["start_seat"], played=list(view["turn"]["played_stacks"]),
        victims=list(view["victims"]), next_id=top_id + 1, pool=cards_of(_ALL & ~seen))


def world(k: Knowledge, rng: random.Random | None, *, this_round: bool = False) -> Nimmt:
    """One game consistent with ``k``: the pool dealt at random (``rng``) to
    the unknown part of each other hand and the draw pile.  With ``rng=None``
    the pool is dealt in order (enough to list the legal actions).  With
    ``this_round`` the game ends with this round (no later deal: the
    search plays only this round out)."""
    pool = list(k.pool)
    if rng is not None:
        rng.shuffle(pool)
    hands: list[list[int]] = []
    pos = 0
    for p in range(k.seats):
        cards = cards_of(k.known[p])
        if p != k.seat:
            extra = max(0, k.counts[p] - len(cards))
            cards += pool[pos:pos + extra]
            pos += extra
        hands.append(cards)
    draw = pool[pos:pos + k.draw]
    g = Nimmt.from_position(
        hands, {sid: cards for sid, cards in k.stacks}, bulls=k.bulls, supply=k.supply, draw=draw,
        to_move=k.to_move if k.to_move is not None else 0, seed=rng.getrandbits(32) if rng else 0,
        round=k.round, rounds=k.round if this_round else k.rounds, scores=k.scores, start_seat=k.start_seat, played=k.played,
        next_id=k.next_id, victims=k.victims if k.phase == "steal" else ())
    return g


# ------------------------------------------------------------------ policies
# They read a game's internals; in a decision that game is always a world
# sampled from the knowledge (never the real one).


def normal_move(g: Nimmt, seat: int) -> Action:
    """The normal rule, on a game whose stacks are known (a sampled world).

    >>> g = Nimmt.from_position([[34, 40, 55], [1]], [[33], [50, 52, 53]], bulls=[1, 0], draw=[])
    >>> normal_move(g, 0)
    Play(stack=0, cards=(34, 40))
    >>> normal_move(Nimmt.from_position([[99], [1]], [[20, 21, 22], [5, 55]], draw=[]), 0)
    Take(stack=1)
    """
    phase = g._phase
    if phase == "play":
        hand = g._hands[seat]
        played = g._played
        bulls = g._bulls[seat]
        best_sid = -1
        best_fit = 0
        best_key = -1
        for sid, st in zip(g._sids, g._stacks):
            fit = hand & WINDOW[st[-1]]
            if not fit or (played and sid in played):
                continue
            if bulls:
                key = fit.bit_count() * 64 + (hand_heads(fit) if fit & (fit - 1) else HEADS[fit.bit_length() - 1])
            else:
                c = _heaviest(fit)
                key = HEADS[c] * 128 + c
                fit = 1 << c
            if key > best_key:
                best_key, best_sid, best_fit = key, sid, fit
        if best_sid >= 0:
            return Play(best_sid, cards_of(best_fit))
        if played:
            return _PASS
        best_sid = -1
        best_key = 1 << 30
        for sid, st in zip(g._sids, g._stacks):
            key = len(st) << 12 | sum(map(HEADS.__getitem__, st)) << 8 if len(st) > 1 else 1 << 12 | HEADS[st[0]] << 8
            if key < best_key:
                best_key, best_sid = key, sid
        return Take(best_sid)
    if phase == "steal":
        hands = g._hands
        return Steal(min(g._victims, key=lambda v: (hands[v].bit_count(), v)))
    if phase == "open":
        return Open(_heaviest(g._hands[seat]))
    raise ValueError("the game is over")


def _heaviest(mask: int) -> int:
    """The card with the most ox heads in a mask (the highest on ties)."""
    best = 0
    key = -1
    while mask:
        low = mask & -mask
        c = low.bit_length() - 1
        mask ^= low
        k = HEADS[c] * 128 + c
        if k > key:
            key, best = k, c
    return best


def _playout(g: Nimmt) -> None:
    """Play the current round to its end with the normal rule for everybody."""
    r = g.round
    push = g.push
    while not g.over and g.round == r:
        s = g.to_move
        assert s is not None  # not over
        push(s, normal_move(g, s))


def _candidates(g: Nimmt, seat: int) -> list[Action]:
    out: list[Action] = []
    seen = set()
    for a in g.legal_actions(seat):
        if a not in seen:
            seen.add(a)
            out.append(a)
    return out


# ------------------------------------------------------------------ levels


def decide(k: Knowledge, level: str, rng: random.Random, *, sims: int | None = None,
           budget: float | None = None, stop: Any = None) -> Decision[Action]:
    """The move of ``k.seat`` at ``level`` (easy / normal / hard; see
    :func:`core.search.levelled` and :func:`core.search.halving`): easy, the greedy
    rule on the visible tops; normal, :func:`normal_move`."""
    if k.to_move != k.seat:
        raise ValueError("not this seat's turn")
    base = world(k, None)
    return levelled(level, rng, lambda: _candidates(base, k.seat), lambda: greedy_player(base, k.seat, rng),
                    lambda: normal_move(base, k.seat),
                    lambda options, budget: _search(k, list(options), rng, sims, budget, stop),
                    mistakes=EASY_MISTAKES, sims=sims, budget=budget)


def _search(k: Knowledge, options: list[Action], rng: random.Random, sims: int | None,
            budget: float | None, stop: Any = None) -> Decision[Action]:
    """:func:`core.search.halving` over worlds of this round: a candidate is played in a
    sampled world and the round played out with the normal rule for everybody.  In the
    last round it scores the share of finishing first (ties split) and, a little, the
    margin; earlier, the penalty against the others' mean."""
    seat = k.seat
    last = k.round >= k.rounds
    before = k.scores[seat]
    others_seats = [p for p in range(k.seats) if p != seat]

    def score(sample: Nimmt, action: Action) -> tuple[float, float, float]:
        g = sample.fork()  # every candidate meets the same world
        g.push(seat, action)
        _playout(g)
        scores = g.scores
        mine = scores[seat]
        others = [scores[p] for p in others_seats]
        best_other = min(others)
        share = 0.0 if mine > best_other else 1.0 / (1 + others.count(mine))
        pen = mine - before
        if last:
            return share + 0.002 * max(-20, min(20, best_other - mine)), share, pen
        gained = sum(scores[p] - k.scores[p] for p in others_seats)
        return gained / len(others_seats) - pen, share, pen

    return halving(options, lambda r: world(k, r, this_round=True), score, rng, sims, budget, stop)
