"""11 nimmt! (Wolfgang Kramer, Amigo) for 2 to 7 players.

Rules: ``RULES.md`` section 1, house rules H1-H7 (quoted where implemented).

One mutable container (:class:`Nimmt`) and small immutable actions
(:class:`Play`, :class:`Take`, :class:`Pass`, :class:`Steal`, :class:`Open`)
that round-trip through text::

    >>> game = Nimmt.new(seats=4, seed=123)
    >>> game.round, game.rounds, game.phase
    (1, 4, 'play')
    >>> seat = game.to_move
    >>> action = game.legal_actions(seat)[0]
    >>> game.parse(str(action)) == action
    True
    >>> events = game.apply(seat, action)
    >>> Nimmt.replay(4, 123, game.options, game.log) == game
    True

Representation (python-chess style):

* A hand is an ``int`` bitmask, bit ``c`` set for card ``c``.  The cards of a
  hand that fit on top ``t`` are ``hand & WINDOW[t]``.
* A stack is a list of cards, bottom first (top last); stacks live in two
  parallel lists (ids, cards) in creation order.
* **Stack ids** come from one counter per *game*: they start at 0, grow by
  one with each new stack and are never reused, not even in a later round.  A
  stale click on a stack that has been taken is rejected with
  ``no_such_stack``.  The label shown to players is :func:`stack_label` of
  the id.
* All chance comes from ``random.Random(f"{seed}:{round}")`` at the deal of
  each round (shuffle, and in round 1 the start seat), so no generator state
  lives in the game and ``replay`` / ``to_dict`` reproduce it exactly.

``legal_actions`` for a bull holder is *representative*, not exhaustive: per
playable stack it lists every single-card batch and the batch of all fitting
cards.  Listing every subset of every stack would explode (up to 1023
batches per stack).  ``is_legal`` / ``apply`` accept **any** non-empty subset
of the cards that fit, and :func:`random_player` samples among all subsets.

Checked and unchecked mutation: ``apply`` validates (raising
``IllegalAction`` with a stable ``code`` and leaving the state untouched) and
returns public events; ``push`` trusts its input and makes no events (for
simulations and the benchmark).  ``to_move`` and ``over`` are plain
attributes (read in hot loops); do not assign them.

Phases: "play" (play batches / take / pass), "steal" (H5: the taker chooses
a victim among tied players), "open" (H7: no stack on the table), "over".

House rule readings worth knowing:

* H3 tie: the tied seats are tried in seat order starting *after* the
  previous round's start player, who therefore comes last among the tied.
* H5: "most bull cards" counts the *other* players only.
* ``view()["turn"]["max_stacks"]`` is ``max(1, bulls)``: a player without
  bulls plays one card on one stack.

Test helper: :meth:`Nimmt.from_position` builds any hand-made position.

Error codes (``IllegalAction.code``): game_over, not_your_turn, bad_seat,
no_such_stack, card_not_in_hand, does_not_fit, one_card_only,
too_many_stacks, stack_already_played, must_choose_victim, not_a_victim,
nothing_to_pass, take_after_play, must_open, cannot_open, empty_batch,
duplicate_card, invalid_action (not an action object); ``Nimmt.new``:
bad_seats, bad_rounds, bad_option.  ``parse``: ``InvalidAction`` with
invalid_syntax.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import islice, repeat, starmap
from math import floor
from operator import add, getitem
from typing import Any, ClassVar, Iterable, Sequence, Union

from core.protocol import Event, IllegalAction, InvalidAction, Result, places_from_scores

__all__ = [
    "HEADS", "WINDOW", "BULLS", "HAND_SIZE", "heads", "fits", "stack_label", "stack_id_from_label",
    "cards_of", "mask_of", "Play", "Take", "Pass", "Steal", "Open", "Action", "Nimmt",
    "random_player", "greedy_player",
]

# --------------------------------------------------------------------------
# Tables, built once at import.


def ox_heads(card: int) -> int:
    """Ox heads of any card of the 6 nimmt! scheme (S1); 11 nimmt!'s H1 is it on 1..100.
    The ONLY place of this rule (6 nimmt! builds its 1..104 table from it).

    >>> [ox_heads(c) for c in (55, 22, 30, 15, 7, 104)]
    [7, 5, 3, 2, 1, 1]
    """
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


#: ``HEADS[c]``: ox heads of card ``c`` (H1); index 0 is unused (0).
HEADS: tuple[int, ...] = (0,) + tuple(ox_heads(c) for c in range(1, 101))
assert sum(HEADS) == 167

#: ``WINDOW[t]``: bitmask of the cards that fit on top ``t`` (1 <= (c-t) mod 100 <= 10).
WINDOW: tuple[int, ...] = tuple(
    sum(1 << c for c in range(1, 101) if 1 <= (c - t) % 100 <= 10) for t in range(101)
)
_ALL = sum(1 << c for c in range(1, 101))
#: ``_BIT[c]``: ``1 << c`` (a hand of the cards ``cs`` is ``sum(map(_BIT.__getitem__, cs))``).
_BIT: tuple[int, ...] = tuple(1 << c for c in range(101))
_LEVELS = sorted(set(HEADS[1:]))  # 1, 2, 3, 5, 7
#: ``(step, mask)`` pairs: ``mask`` holds the cards with at least ``k`` ox heads,
#: ``step`` is ``k`` minus the previous level, so the heads of a hand are
#: ``sum(step * (hand & mask).bit_count())`` (see ``hand_heads``).
_HEADS_STEPS: tuple[tuple[int, int], ...] = tuple(
    (k - prev, sum(1 << c for c in range(1, 101) if HEADS[c] >= k))
    for prev, k in zip([0] + _LEVELS, _LEVELS)
)
BULLS = 10       # bull cards in the box
HAND_SIZE = 10   # cards dealt to each player
_LABELS: list[str] = []  # stack_label cache for small ids, filled below


def heads(card: int) -> int:
    """Ox heads of one card (H1).

    >>> heads(55), heads(33), heads(40), heads(15), heads(7)
    (7, 5, 3, 2, 1)
    """
    return HEADS[card]


def fits(card: int, top: int) -> bool:
    """True if ``card`` may be laid on a stack whose top is ``top``.

    >>> fits(97, 96), fits(6, 96), fits(7, 96), fits(5, 98), fits(64, 54), fits(65, 54)
    (True, True, False, True, True, False)
    """
    return 1 <= (card - top) % 100 <= 10


def stack_label(stack_id: int) -> str:
    """Letters shown for a stack id: 0 -> "A", 25 -> "Z", 26 -> "AA", ...

    >>> [stack_label(i) for i in (0, 1, 25, 26, 27, 701, 702)]
    ['A', 'B', 'Z', 'AA', 'AB', 'ZZ', 'AAA']
    """
    if 0 <= stack_id < len(_LABELS):
        return _LABELS[stack_id]
    if stack_id < 0:
        raise ValueError(f"negative stack id {stack_id}")
    n = stack_id + 1
    out = ""
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


_LABELS.extend(stack_label(i) for i in range(4096))


def stack_id_from_label(label: str) -> int:
    """Inverse of :func:`stack_label`.

    >>> stack_id_from_label("A"), stack_id_from_label("z"), stack_id_from_label("AA")
    (0, 25, 26)
    """
    if not label or not label.isascii() or not label.isalpha():
        raise ValueError(f"not a stack label: {label!r}")
    n = 0
    for ch in label.upper():
        n = n * 26 + (ord(ch) - 64)
    return n - 1


#: ``_BYTE_CARDS[i][b]``: the cards of byte ``i`` (cards 8i..8i+7) of a bitmask whose value is ``b``.
_BYTE_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(8 * i + j for j in range(8) if b >> j & 1) for b in range(256)) for i in range(13)
)


def cards_of(mask: int) -> list[int]:
    """Cards of a bitmask, ascending.

    >>> cards_of((1 << 3) | (1 << 100) | (1 << 55))
    [3, 55, 100]
    >>> cards_of(mask_of(range(90, 101))) == list(range(90, 101))
    True
    """
    if mask.bit_count() > 6 and mask.bit_length() <= 104:
        # many cards (a full hand): one table look-up per byte
        out: list[int] = []
        for cards in map(getitem, _BYTE_CARDS, mask.to_bytes(13, "little")):
            if cards:
                out += cards
        return out
    out = []
    append = out.append
    while mask:
        low = mask & -mask
        append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(cards: Iterable[int]) -> int:
    """Bitmask of some cards.

    >>> mask_of([1, 3]) == 0b1010
    True
    """
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def hand_heads(mask: int) -> int:
    """Ox heads of the cards of a bitmask (H1), without a loop over the cards.

    >>> hand_heads(mask_of([55, 33, 40, 15, 7])) == heads(55) + heads(33) + heads(40) + heads(15) + heads(7)
    True
    """
    total = 0
    for step, cards in _HEADS_STEPS:
        total += step * (mask & cards).bit_count()
    return total


# --------------------------------------------------------------------------
# Actions: small immutable values; repr is a constructor call, str() the log text.


@dataclass(frozen=True, slots=True, init=False)
class Play:
    """Lay a batch of cards on one stack: ``play <stack> <c1> <c2> ...``.

    The cards are kept sorted ascending (the engine lays them in the order
    counted from the stack's top), so equal batches compare equal.

    >>> Play(3, (40, 35))
    Play(stack=3, cards=(35, 40))
    >>> str(Play(3, (40, 35))), Play(3, [7]) == Play(3, (7,))
    ('play 3 35 40', True)
    """

    stack: int
    cards: tuple[int, ...]

    def __init__(self, stack: int, cards: Sequence[int]) -> None:
        _set_stack(self, stack)
        if type(cards) is not tuple or len(cards) > 1:
            cards = tuple(sorted(cards))
        _set_cards(self, cards)

    def __str__(self) -> str:
        cards = self.cards
        if len(cards) == 1:
            return "play %d %d" % (self.stack, cards[0])
        return "play %d %s" % (self.stack, " ".join(map(str, cards)))


_set_stack = Play.__dict__["stack"].__set__   # slot setters: bypass the frozen __setattr__
_set_cards = Play.__dict__["cards"].__set__
_new = object.__new__
_SINGLE_PLAYS: dict[int, "Play"] = {}         # (stack << 7 | card) -> Play(stack, (card,))


def _single_play(stack: int, card: int) -> "Play":
    """``Play(stack, (card,))``, shared (actions are immutable): the random
    player makes one for most of its moves."""
    key = stack << 7 | card
    play = _SINGLE_PLAYS.get(key)
    if play is None:
        play = _new(Play)
        _set_stack(play, stack)
        _set_cards(play, (card,))
        if stack < 4096:
            _SINGLE_PLAYS[key] = play
    return play


@dataclass(frozen=True, slots=True, init=False)
class Take:
    """Take a whole stack into the hand: ``take <stack>``.

    >>> str(Take(2)), Take(2)
    ('take 2', Take(stack=2))
    """

    stack: int

    def __init__(self, stack: int) -> None:
        _set_take_stack(self, stack)

    def __str__(self) -> str:
        return "take %d" % self.stack


_set_take_stack = Take.__dict__["stack"].__set__


@dataclass(frozen=True, slots=True)
class Pass:
    """End the turn after at least one batch (bull holders only): ``pass``.

    >>> str(Pass()), Pass()
    ('pass', Pass())
    """

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Steal:
    """H5: choose which tied player loses a bull card: ``steal <seat>``.

    >>> str(Steal(1)), Steal(1)
    ('steal 1', Steal(victim=1))
    """

    victim: int

    def __str__(self) -> str:
        return "steal %d" % self.victim


@dataclass(frozen=True, slots=True)
class Open:
    """H7: with no stack on the table, lay one card as a new stack: ``open <card>``.

    >>> str(Open(42)), Open(42)
    ('open 42', Open(card=42))
    """

    card: int

    def __str__(self) -> str:
        return "open %d" % self.card


Action = Union[Play, Take, Pass, Steal, Open]
_PASS = Pass()

PLAY, STEAL, OPEN, OVER = "play", "steal", "open", "over"


def _err(code: str, message: str = "", **detail: Any) -> IllegalAction:
    return IllegalAction(code, message or code, **detail)


# --------------------------------------------------------------------------
# The game.


class Nimmt:
    """State of one game of 11 nimmt!; see the module docstring."""

    name: ClassVar[str] = "nimmt"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 7

    __slots__ = (
        "seats", "seed", "rounds", "round", "_log", "_pending", "_hands", "_sids", "_stacks", "_draw",
        "_next_id", "_bulls", "_supply", "_scores", "to_move", "over", "_phase", "_played",
        "_victims", "_start", "_rounds_won", "_earned",
    )

    seats: int
    seed: int
    rounds: int
    round: int
    #: seat to move, None once the game is over (plain attributes: read in hot loops)
    to_move: int | None
    over: bool
    _next_id: int  # id of the next stack opened
    _scores: list[int]  # per seat: penalty so far (the bulls of the rounds played)
    _rounds_won: list[int]
    _earned: list[int]  # per seat: bulls earned (stolen or taken from the supply)
    _start: int  # the round's start seat
    _played: list[int]  # ids of the stacks played this turn
    _victims: list[int]  # seats a steal may take from (phase "steal")

    # -- construction -----------------------------------------------------

    def __init__(self) -> None:  # use Nimmt.new / from_dict / from_position
        self._log: list[tuple[int, str]] = []
        self._pending: list[tuple[int, Action]] = []  # actions not yet turned into log text

    @classmethod
    def new(cls, seats: int, seed: int, rounds: int | None = None, **options: Any) -> "Nimmt":
        """Start a game; deals round 1.  ``rounds`` defaults to ``seats``.

        >>> Nimmt.new(seats=3, seed=1, rounds=2).options
        {'rounds': 2}
        >>> Nimmt.new(seats=8, seed=1)
        Traceback (most recent call last):
        ...
        core.protocol.IllegalAction: 11 nimmt! needs 2 to 7 players, not 8
        """
        if options:
            raise _err("bad_option", f"unknown options {sorted(options)}", options=sorted(options))
        if type(seats) is not int or not cls.min_seats <= seats <= cls.max_seats:
            raise _err("bad_seats", f"11 nimmt! needs 2 to 7 players, not {seats}", seats=seats)
        if rounds is None:
            rounds = seats
        if type(rounds) is not int or not 1 <= rounds <= seats:
            raise _err("bad_rounds", f"rounds must be 1..{seats}, not {rounds}", rounds=rounds)
        g = cls()
        g.seats = seats
        g.seed = seed
        g.rounds = rounds
        g.round = 1
        g._next_id = 0
        g._scores = [0] * seats
        g._rounds_won = [0] * seats
        g._earned = [0] * seats
        g.over = False
        g._deal(None)
        return g

    @classmethod
    def from_position(
        cls,
        hands: Sequence[Iterable[int]],
        stacks: Sequence[Sequence[int]] | dict[int, Sequence[int]],
        *,
        bulls: Sequence[int] | None = None,
        supply: int | None = None,
        draw: Sequence[int] | None = None,
        to_move: int = 0,
        seed: int = 0,
        round: int = 1,
        rounds: int | None = None,
        scores: Sequence[int] | None = None,
        start_seat: int | None = None,
        played: Sequence[int] = (),
        next_id: int | None = None,
        victims: Sequence[int] = (),
    ) -> "Nimmt":
        """Build a hand-made position (tests, puzzles, tutorials).

        * ``hands``: the cards of each seat (any order).
        * ``stacks``: each stack's cards **bottom first, top last**; a list gets
          ids 0, 1, ...; a dict maps id -> cards.
        * ``bulls``: bull cards per seat (default none); ``supply`` defaults to
          ``10 - sum(bulls)``.
        * ``draw``: the draw pile **top first**; default: every card not in a
          hand or stack, shuffled from ``seed``.  An explicit ``draw`` may leave
          cards out of the game; nothing else checks that 100 cards exist.
        * ``played``: ids of stacks already played this turn by ``to_move``.
        * ``victims``: seats ``to_move`` must choose one from to steal a bull
          (the phase is then "steal", H5).
        * With no stack on the table the phase is "open" (H7).

        >>> g = Nimmt.from_position([[34, 40], [1]], [[20, 33]], bulls=[1, 0], draw=[])
        >>> g.view(0)["playable"]
        {0: [34, 40]}
        """
        hands = [list(h) for h in hands]
        seats = len(hands)
        g = cls()
        g.seats = seats
        g.seed = seed
        g.rounds = seats if rounds is None else rounds
        g.round = round
        g._hands = [mask_of(h) for h in hands]
        if isinstance(stacks, dict):
            items = [(int(k), list(v)) for k, v in stacks.items()]
        else:
            items = [(i, list(v)) for i, v in enumerate(stacks)]
        if any(not cards for _, cards in items):
            raise ValueError("a stack needs at least one card")
        g._sids = [i for i, _ in items]
        g._stacks = [cards for _, cards in items]
        used: list[int] = [c for h in hands for c in h] + [c for _, cards in items for c in cards]
        if draw is None:
            rest = sorted(set(range(1, 101)) - set(used))
            random.Random(f"{seed}:position").shuffle(rest)
            g._draw = rest
        else:
            g._draw = list(reversed(draw))
        used += g._draw
        if len(used) != len(set(used)) or any(not 1 <= c <= 100 for c in used):
            raise ValueError("cards must be distinct and in 1..100")
        g._bulls = list(bulls) if bulls is not None else [0] * seats
        g._supply = BULLS - sum(g._bulls) if supply is None else supply
        g._next_id = max(g._sids, default=-1) + 1 if next_id is None else next_id
        g._scores = list(scores) if scores is not None else [0] * seats
        g._rounds_won = [0] * seats
        g._earned = [0] * seats
        g.to_move = to_move
        g.over = False
        g._start = to_move if start_seat is None else start_seat
        g._played = list(played)
        g._victims = list(victims)
        g._phase = STEAL if victims else PLAY if g._sids else OPEN
        return g

    def _deal(self, ev: list[Event] | None) -> None:
        """Deal round ``self.round``; all chance from Random(f"{seed}:{round}")."""
        n = self.seats
        rng = random.Random(f"{self.seed}:{self.round}")
        # shuffle by sorting on random keys (several times faster than rng.shuffle)
        keys = list(starmap(rng.random, repeat((), 101)))  # keys[c] for card c (keys[0] unused)
        deck = sorted(range(1, 101), key=keys.__getitem__)
        bits = map(_BIT.__getitem__, deck)   # seat p gets deck[p * HAND_SIZE:(p + 1) * HAND_SIZE]
        self._hands = [sum(islice(bits, HAND_SIZE)) for _ in range(n)]
        draw = deck[n * HAND_SIZE:]          # top of the pile is the last element
        sid = self._next_id
        self._next_id = sid + 1
        self._sids = [sid]
        self._stacks = [[draw.pop()]]
        self._draw = draw
        self._bulls = [0] * n               # H2: every bull card back to the supply
        self._supply = BULLS
        self._played = []
        self._victims = []
        self._phase = PLAY
        if self.round == 1:
            start = rng.randrange(n)        # H3: first start player drawn at random
        else:
            # H3: most cumulative penalty; on a tie the tied seat that comes first
            # in seat order *after* the previous start player (who comes last).
            prev = self._start
            scores = self._scores
            top = max(scores)
            start = next(p % n for p in range(prev + 1, prev + n + 1) if scores[p % n] == top)
        self._start = start
        self.to_move = start
        if ev is not None:
            ev.append({"type": "round_start", "round": self.round, "start": start})
            ev.append({"type": "turn", "seat": start})

    # -- protocol properties ------------------------------------------------

    @property
    def log(self) -> list[tuple[int, str]]:
        """The action log: ``(seat, action text)`` pairs, oldest first.

        Texts are made lazily (``str(action)`` is kept out of the hot path).
        """
        if self._pending:
            self._log.extend([(s, str(a)) for s, a in self._pending])
            self._pending.clear()
        return self._log

    @property
    def options(self) -> dict[str, Any]:
        return {"rounds": self.rounds}

    @property
    def phase(self) -> str:
        """"play", "steal" (H5 choice), "open" (H7) or "over"."""
        return self._phase

    @property
    def scores(self) -> Sequence[int]:
        """Every seat's penalty so far (the bulls of the rounds played); read only."""
        return self._scores

    @property
    def result(self) -> Result | None:
        if self._phase is not OVER:
            return None
        scores = tuple(self._scores)
        places = places_from_scores(scores)
        return Result(
            scores=scores,
            places=places,
            winners=tuple(p for p in range(self.seats) if places[p] == 1),
            rounds=self.rounds,
            stats=tuple(
                {"rounds_won": self._rounds_won[p], "bulls_earned": self._earned[p],
                 "penalty_rounds": self.rounds}
                for p in range(self.seats)
            ),
        )

    # -- legality -----------------------------------------------------------

    def _check(self, seat: int, action: Any) -> str | None:
        """Error code for ``action`` by ``seat``, or None when legal.  Never mutates."""
        if type(seat) is not int or not 0 <= seat < self.seats:
            return "bad_seat"
        phase = self._phase
        if phase is OVER:
            return "game_over"
        if seat != self.to_move:
            return "not_your_turn"
        t = type(action)
        if phase is STEAL:
            if t is not Steal:
                return "must_choose_victim"
            return None if action.victim in self._victims else "not_a_victim"
        if phase is OPEN:
            if t is not Open:
                return "must_open"
            c = action.card
            if type(c) is not int or not 1 <= c <= 100 or not self._hands[seat] >> c & 1:
                return "card_not_in_hand"
            return None
        # phase play
        if t is Play:
            r = self._check_play(seat, action)
            return r if r.__class__ is str else None
        if t is Take:
            if self._played:
                return "take_after_play"
            return None if action.stack in self._sids else "no_such_stack"
        if t is Pass:
            return None if self._played else "nothing_to_pass"
        if t is Open:
            return "cannot_open"
        if t is Steal:
            return "not_a_victim"
        return "invalid_action"

    def _check_play(self, seat: int, action: Play) -> int | str:
        """Index of the stack for a legal Play by the seat to move in phase
        "play", else the error code."""
        sid = action.stack
        try:
            idx = self._sids.index(sid)
        except ValueError:
            return "no_such_stack"
        cards = action.cards
        played = self._played
        if len(cards) == 1 and (not played or (len(played) < self._bulls[seat] and sid not in played)):
            # the common case (one card on a stack this turn may still play), checked quickly
            c = cards[0]
            if c.__class__ is int and c > 0 and (self._hands[seat] & WINDOW[self._stacks[idx][-1]]) >> c & 1:
                return idx
            if c.__class__ is not int or not 1 <= c <= 100 or not self._hands[seat] >> c & 1:
                return "card_not_in_hand"
            return "does_not_fit"
        if sid in played:
            return "stack_already_played"
        b = self._bulls[seat]
        if not cards:
            return "empty_batch"
        if len(played) >= (b or 1):
            return "too_many_stacks"
        if len(cards) > 1:
            if not b:
                return "one_card_only"
            if len(set(cards)) != len(cards):
                return "duplicate_card"
        hand = self._hands[seat]
        mask = 0
        for c in cards:
            if c.__class__ is not int or c < 1 or not hand >> c & 1:   # (hand: cards 1..100)
                return "card_not_in_hand"
            mask |= 1 << c
        if mask & ~WINDOW[self._stacks[idx][-1]]:
            return "does_not_fit"
        return idx

    def is_legal(self, seat: int, action: Any) -> bool:
        """Cheap check of one action (no generation of all actions).

        >>> g = Nimmt.from_position([[34, 40, 50], [1]], [[33]], bulls=[1, 0], draw=[])
        >>> g.is_legal(0, Play(0, (40, 34))), g.is_legal(0, Play(0, (50,))), g.is_legal(1, Take(0))
        (True, False, False)
        """
        return self._check(seat, action) is None

    def legal_actions(self, seat: int) -> list[Action]:
        """Legal actions of ``seat`` (empty when it is not that seat's turn).

        Representative for bull holders: per stack every single card plus the
        batch of all fitting cards (see the module docstring); exhaustive
        otherwise.

        >>> g = Nimmt.from_position([[34, 40, 50], [1]], [[33]], bulls=[1, 0], draw=[])
        >>> g.legal_actions(0)
        [Play(stack=0, cards=(34,)), Play(stack=0, cards=(40,)), Play(stack=0, cards=(34, 40)), Take(stack=0)]
        """
        if self._phase is OVER or seat != self.to_move:
            return []
        phase = self._phase
        if phase is STEAL:
            return [Steal(v) for v in self._victims]
        hand = self._hands[seat]
        if phase is OPEN:
            return [Open(c) for c in cards_of(hand)]
        out: list[Action] = []
        played = self._played
        b = self._bulls[seat]
        for sid, st in zip(self._sids, self._stacks):
            if sid in played:
                continue
            fit = cards_of(hand & WINDOW[st[-1]])
            out.extend(Play(sid, (c,)) for c in fit)
            if b and len(fit) > 1:
                out.append(Play(sid, tuple(fit)))
        if played:
            out.append(_PASS)
        else:
            out.extend(Take(sid) for sid in self._sids)
        return out

    # -- text -----------------------------------------------------------------

    def parse(self, text: str) -> Action:
        """Parse log text; stacks may be given by id or by label.

        >>> g = Nimmt.new(2, 0)
        >>> g.parse("play 3 40 35"), g.parse("PLAY b 12"), g.parse("take AA"), g.parse(" pass ")
        (Play(stack=3, cards=(35, 40)), Play(stack=1, cards=(12,)), Take(stack=26), Pass())
        >>> g.parse("steal 2"), g.parse("open 17")
        (Steal(victim=2), Open(card=17))
        >>> g.parse("play")
        Traceback (most recent call last):
        ...
        core.protocol.InvalidAction: cannot parse 'play'
        """
        if not isinstance(text, str):
            raise InvalidAction("invalid_syntax", f"cannot parse {text!r}", text=text)
        words = text.split()
        try:
            verb = words[0].lower()
            args = words[1:]
            if verb == "pass" and not args:
                return _PASS
            if verb == "play" and len(args) >= 2:
                return Play(_stack_arg(args[0]), tuple(int(a) for a in args[1:]))
            if verb == "take" and len(args) == 1:
                return Take(_stack_arg(args[0]))
            if verb == "steal" and len(args) == 1:
                return Steal(int(args[0]))
            if verb == "open" and len(args) == 1:
                return Open(int(args[0]))
        except (IndexError, ValueError):
            pass
        raise InvalidAction("invalid_syntax", f"cannot parse {text!r}", text=text)

    # -- mutation ---------------------------------------------------------------

    def apply(self, seat: int, action: Action) -> list[Event]:
        """Validate and apply; returns public events.  Raises IllegalAction
        (with a stable ``code``) and leaves the state unchanged on a bad action.

        The check (``_check_play`` / ``_check``) never mutates, and the change
        is the one ``push`` makes (``_play`` / ``_other``): there is one rule
        body, checked or not.
        """
        if action.__class__ is Play and seat.__class__ is int and seat == self.to_move and self._phase is PLAY:
            # the hot path: a play by the seat to move; the check also finds the stack
            idx = self._check_play(seat, action)
            if isinstance(idx, str):
                raise IllegalAction(idx, f"{idx}: {action!s} by seat {seat}", seat=seat, action=str(action))
            ev: list[Event] = []
            self._pending.append((seat, action))
            self._play(seat, action, ev, idx)
            return ev
        code = self._check(seat, action)
        if code is not None:
            raise IllegalAction(code, f"{code}: {action!s} by seat {seat}", seat=seat, action=str(action))
        ev = []
        self._pending.append((seat, action))
        if action.__class__ is Play:
            self._play(seat, action, ev, self._sids.index(action.stack))
        else:
            self._other(seat, action, ev)
        return ev

    def push(self, seat: int, action: Action) -> None:
        """Apply a legal action *without* validation and without events (fast path,
        like python-chess ``Board.push``).  Garbage in, garbage state out."""
        self._pending.append((seat, action))
        if action.__class__ is Play:
            self._play(seat, action, None, self._sids.index(action.stack))
        else:
            self._other(seat, action, None)

    def _other(self, seat: int, action: Action, ev: list[Event] | None) -> None:
        if type(action) is Take:
            self._take(seat, action.stack, ev)
        elif type(action) is Pass:
            if ev is not None:
                ev.append({"type": "passed", "seat": seat})
            self._next_turn(ev)
        elif type(action) is Steal:
            self._steal(seat, action.victim, ev)
        elif type(action) is Open:
            self._open(seat, action.card, ev)

    def _play(self, seat: int, action: Play, ev: list[Event] | None, idx: int) -> None:
        """Lay a legal batch on the stack at ``idx``: the one body of a play,
        used by ``apply`` (after its check) and ``push``."""
        sid = action.stack
        cards = action.cards
        st = self._stacks[idx]
        top = st[-1]
        if len(cards) == 1:                    # the common case, kept short
            c = cards[0]
            st.append(c)
            hand = self._hands[seat] ^ 1 << c
        else:
            # laid in ascending order counted from the top, highest ends on top;
            # the cards are sorted, so only a batch on both sides of the top
            # (wrapping past 100) needs reordering
            if cards[0] < top < cards[-1]:
                cards = tuple(sorted(cards, key=lambda c: (c - top) % 100))
            mask = 0
            for c in cards:
                mask |= 1 << c
            st.extend(cards)
            hand = self._hands[seat] ^ mask
        self._hands[seat] = hand
        if ev is not None:
            ev.append({"type": "played", "seat": seat, "stack": sid,
                       "label": _LABELS[sid] if sid < 4096 else stack_label(sid),
                       "onto": top, "cards": list(cards), "top": cards[-1]})
        if hand:
            b = self._bulls[seat]
            if b > 1:
                # (with one bull or none a turn is one batch: ``played`` stays empty)
                played = self._played
                played.append(sid)
                if len(played) < b:
                    # H4: the player may go on while an unplayed stack still takes a card
                    for sid2, st2 in zip(self._sids, self._stacks):
                        if hand & WINDOW[st2[-1]] and sid2 not in played:
                            return
                self._played = []
            p = seat + 1
            if p == self.seats:
                p = 0
            self.to_move = p
            if ev is not None:
                ev.append({"type": "turn", "seat": p})
        else:
            self._end_round(seat, ev)  # (it also clears ``_played``)

    def _next_turn(self, ev: list[Event] | None) -> None:
        self._played = []
        p = (self.to_move or 0) + 1
        if p == self.seats:
            p = 0
        self.to_move = p
        self._phase = PLAY if self._sids else OPEN  # H7
        if ev is not None:
            ev.append({"type": "turn", "seat": p})

    def _take(self, seat: int, sid: int, ev: list[Event] | None) -> None:
        idx = self._sids.index(sid)
        del self._sids[idx]
        st = self._stacks.pop(idx)
        m = 0
        for c in st:
            m |= 1 << c
        self._hands[seat] |= m
        if ev is not None:
            ev.append({"type": "took", "seat": seat, "stack": sid, "label": _LABELS[sid] if sid < 4096 else stack_label(sid),
                       "top": st[-1], "count": len(st)})
        if len(st) >= 3:
            if self._supply:
                self._supply -= 1
                self._bulls[seat] += 1
                self._earned[seat] += 1
                if ev is not None:
                    ev.append({"type": "bull", "seat": seat, "source": "supply"})
            else:
                # H5: from the other player(s) with most bulls; tie -> taker chooses
                bulls = self._bulls
                most = max(b for p, b in enumerate(bulls) if p != seat)
                if not most:
                    if ev is not None:
                        ev.append({"type": "no_bull", "seat": seat})
                else:
                    victims = [p for p, b in enumerate(bulls) if p != seat and b == most]
                    if len(victims) > 1:
                        self._phase = STEAL
                        self._victims = victims
                        return
                    self._steal(seat, victims[0], ev)
                    return
        self._reveal(ev)
        # the turn ends (inlined _next_turn)
        self._played = []
        assert self.to_move is not None  # the seat that played
        p = self.to_move + 1
        if p == self.seats:
            p = 0
        self.to_move = p
        self._phase = PLAY if self._sids else OPEN  # H7
        if ev is not None:
            ev.append({"type": "turn", "seat": p})

    def _steal(self, seat: int, victim: int, ev: list[Event] | None) -> None:
        self._bulls[victim] -= 1
        self._bulls[seat] += 1
        self._earned[seat] += 1
        self._victims = []
        if ev is not None:
            ev.append({"type": "bull", "seat": seat, "source": "player", "victim": victim})
        self._reveal(ev)
        self._next_turn(ev)

    def _reveal(self, ev: list[Event] | None) -> None:
        # H6: two new stacks from the draw pile, fewer if fewer remain
        draw = self._draw
        if len(draw) >= 2:                  # the common case, unrolled
            sid = self._next_id
            self._next_id = sid + 2
            a = draw.pop()
            b = draw.pop()
            self._sids += (sid, sid + 1)
            self._stacks += ([a], [b])
            if ev is not None:
                ev.append({"type": "revealed", "stacks": [
                    {"id": sid, "label": _LABELS[sid] if sid < 4095 else stack_label(sid), "top": a},
                    {"id": sid + 1, "label": _LABELS[sid + 1] if sid < 4095 else stack_label(sid + 1), "top": b}]})
            return
        new = []
        for _ in range(2 if len(draw) >= 2 else len(draw)):
            sid = self._next_id
            self._next_id = sid + 1
            card = draw.pop()
            self._sids.append(sid)
            self._stacks.append([card])
            new.append({"id": sid, "label": _LABELS[sid] if sid < 4096 else stack_label(sid), "top": card})
        if ev is not None:  # also when empty: "the draw pile is exhausted" (H6/H7)
            ev.append({"type": "revealed", "stacks": new})

    def _open(self, seat: int, card: int, ev: list[Event] | None) -> None:
        # H7: no stack on the table; one card of the hand becomes a new stack
        sid = self._next_id
        self._next_id = sid + 1
        self._sids.append(sid)
        self._stacks.append([card])
        hand = self._hands[seat] ^ (1 << card)
        self._hands[seat] = hand
        if ev is not None:
            ev.append({"type": "opened", "seat": seat, "stack": sid, "label": _LABELS[sid] if sid < 4096 else stack_label(sid), "card": card})
        if not hand:
            self._end_round(seat, ev)
        else:
            self._next_turn(ev)

    def _end_round(self, out: int, ev: list[Event] | None) -> None:
        # The round ends the moment a hand is empty; the others score the ox
        # heads in their hands (H1); bull cards score nothing.
        hands = self._hands
        penalties = list(map(hand_heads, hands))
        penalties[out] = 0
        scores = self._scores
        scores[:] = map(add, scores, penalties)
        self._rounds_won[out] += 1
        if ev is not None:
            ev.append({"type": "round_over", "round": self.round, "out": out,
                       "hands": [cards_of(h) for h in hands], "penalties": penalties,
                       "scores": list(scores)})
        if self.round >= self.rounds:
            self._phase = OVER
            self.over = True
            self.to_move = None
            self._played = []
            self._victims = []
            if ev is not None:  # as in self.result
                places = places_from_scores(scores)
                ev.append({"type": "game_over", "scores": list(scores), "places": list(places),
                           "winners": [p for p in range(self.seats) if places[p] == 1]})
            return
        self.round += 1
        self._deal(ev)

    # -- views ------------------------------------------------------------------

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may see (``None``: the public table view).

        Stacks show their top only; other hands only as counts.

        >>> g = Nimmt.from_position([[34, 40, 50], [1, 99]], [[20, 33]], bulls=[1, 0], draw=[7, 8])
        >>> v = g.view(0)
        >>> v["stacks"], v["hand"], v["hand_counts"], v["playable"]
        ([{'id': 0, 'label': 'A', 'top': 33, 'heads': 5}], [34, 40, 50], [3, 2], {0: [34, 40]})
        >>> "hand" in g.view(None), g.view(1)["playable"]
        (False, {})
        """
        if seat is not None and (type(seat) is not int or not 0 <= seat < self.seats):
            raise _err("bad_seat", f"no seat {seat}", seat=seat)
        phase = self._phase
        to_move = self.to_move
        v: dict[str, Any] = {
            "game": "nimmt",
            "seat": seat,
            "seats": self.seats,
            "round": self.round,
            "rounds": self.rounds,
            "to_move": to_move,
            "phase": phase,
            "stacks": [{"id": sid, "label": _LABELS[sid] if sid < 4096 else stack_label(sid), "top": st[-1], "heads": HEADS[st[-1]]}
                       for sid, st in zip(self._sids, self._stacks)],
            "hand_counts": [h.bit_count() for h in self._hands],
            "bulls": list(self._bulls),
            "supply": self._supply,
            "draw_pile": len(self._draw),
            "scores": list(self._scores),
            "start_seat": self._start,
            "turn": {"played_stacks": list(self._played),
                     "max_stacks": 0 if to_move is None else max(1, self._bulls[to_move]),
                     # what the player to move may do now, so no screen re-derives a rule
                     "can_take": phase is PLAY and not self._played,  # B: only instead of playing
                     "can_pass": phase is PLAY and bool(self._played),  # H4: end after a batch
                     "several_cards": to_move is not None and self._bulls[to_move] > 0},
            "victims": list(self._victims) if phase is STEAL else [],
        }
        if seat is not None:
            hand = self._hands[seat]
            v["hand"] = cards_of(hand)
            playable: dict[int, list[int]] = {}
            if phase is PLAY and seat == to_move:
                played = self._played
                for sid, st in zip(self._sids, self._stacks):
                    if sid not in played:
                        fit = hand & WINDOW[st[-1]]
                        if fit:
                            playable[sid] = cards_of(fit)
            v["playable"] = playable
        return v

    # -- serialisation ---------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable full state (hidden cards included: server side only)."""
        return {
            "game": "nimmt",
            "version": 1,
            "seats": self.seats,
            "seed": self.seed,
            "options": self.options,
            "round": self.round,
            "phase": self._phase,
            "to_move": self.to_move,
            "start_seat": self._start,
            "hands": [cards_of(h) for h in self._hands],
            "stacks": [{"id": sid, "cards": list(st)} for sid, st in zip(self._sids, self._stacks)],
            "draw": self._draw[::-1],  # top first
            "next_id": self._next_id,
            "bulls": list(self._bulls),
            "supply": self._supply,
            "scores": list(self._scores),
            "played": list(self._played),
            "victims": list(self._victims),
            "rounds_won": list(self._rounds_won),
            "bulls_earned": list(self._earned),
            "log": [[s, a] for s, a in self.log],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Nimmt":
        """Restore from :meth:`to_dict` (exact round trip)."""
        if data.get("game") != "nimmt" or data.get("version") != 1:
            raise ValueError("not an 11 nimmt! state (version 1)")
        g = cls()
        g.seats = data["seats"]
        g.seed = data["seed"]
        g.rounds = data["options"]["rounds"]
        g.round = data["round"]
        g._phase = {PLAY: PLAY, STEAL: STEAL, OPEN: OPEN, OVER: OVER}[data["phase"]]
        g.to_move = data["to_move"]
        g.over = g._phase is OVER
        g._start = data["start_seat"]
        g._hands = [mask_of(h) for h in data["hands"]]
        g._sids = [s["id"] for s in data["stacks"]]
        g._stacks = [list(s["cards"]) for s in data["stacks"]]
        g._draw = list(data["draw"])[::-1]
        g._next_id = data["next_id"]
        g._bulls = list(data["bulls"])
        g._supply = data["supply"]
        g._scores = list(data["scores"])
        g._played = list(data["played"])
        g._victims = list(data["victims"])
        g._rounds_won = list(data["rounds_won"])
        g._earned = list(data["bulls_earned"])
        g._log = [(s, a) for s, a in data["log"]]
        return g

    def fork(self) -> "Nimmt":
        """A quick independent copy without the log (a computer player's world to play out)."""
        c = Nimmt.__new__(Nimmt)
        c._log = []
        c._pending = []
        c.seats, c.seed, c.rounds, c.round = self.seats, self.seed, self.rounds, self.round
        c._hands = list(self._hands)
        c._sids = list(self._sids)
        c._stacks = [list(st) for st in self._stacks]
        c._draw = list(self._draw)
        c._next_id, c._bulls, c._supply = self._next_id, list(self._bulls), self._supply
        c._scores, c.to_move, c.over, c._phase = list(self._scores), self.to_move, self.over, self._phase
        c._played, c._victims, c._start = list(self._played), list(self._victims), self._start
        c._rounds_won, c._earned = list(self._rounds_won), list(self._earned)
        return c

    def copy(self) -> "Nimmt":
        return Nimmt.from_dict(self.to_dict())

    @classmethod
    def replay(cls, seats: int, seed: int, options: dict[str, Any], log: Sequence[tuple[int, str]]) -> "Nimmt":
        """Rebuild a game from seed, options and action log (validating every step)."""
        g = cls.new(seats, seed, **options)
        for seat, text in log:
            g.apply(seat, g.parse(text))
        return g

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Nimmt):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (f"<Nimmt seats={self.seats} seed={self.seed} round={self.round}/{self.rounds} "
                f"phase={self._phase} to_move={self.to_move}>")


def _stack_arg(word: str) -> int:
    if word.isdigit():
        return int(word)
    return stack_id_from_label(word)


# --------------------------------------------------------------------------
# Computer players.  They only look at what view(seat) shows (tops, own hand,
# counts), never at buried cards or other hands.

#: Chance that random_player takes a stack although it could play (keeps
#: voluntary takes in random playouts without making rounds endless).
RANDOM_TAKE = 0.05
#: Chance that random_player ends a bull turn early (Pass) when it could go on.
RANDOM_PASS = 0.3


def random_player(game: Nimmt, seat: int, rng: random.Random) -> Action:
    """A random legal action, sampling among *all* batches (random non-empty
    subset of the fitting cards), not only those ``legal_actions`` lists.

    >>> g = Nimmt.new(4, 7)
    >>> rng = random.Random(1)
    >>> while not g.over:
    ...     _ = g.apply(g.to_move, random_player(g, g.to_move, rng))
    >>> g.result.rounds
    4
    """
    # (int(x) for x >= 0 is floor(x); math.floor is the quicker call)
    phase = game._phase
    if phase is PLAY:
        sids = game._sids
        played = game._played
        if played:
            if rng.random() < RANDOM_PASS:
                return _PASS
        elif rng.random() < RANDOM_TAKE:
            return Take(sids[floor(rng.random() * len(sids))])
        hand = game._hands[seat]
        stacks = game._stacks
        w = WINDOW
        # A uniformly random playable stack: try one stack at random, else pick
        # among all playable ones (together exactly uniform, and mostly cheap).
        i = floor(rng.random() * len(stacks))
        fit = hand & w[stacks[i][-1]]
        if not fit or (played and sids[i] in played):
            opts = []                      # indexes of the stacks a card fits on
            i = 0
            for st in stacks:
                if hand & w[st[-1]]:
                    opts.append(i)
                i += 1
            if played:
                opts = [i for i in opts if sids[i] not in played]
            elif not opts:
                return Take(sids[floor(rng.random() * len(sids))])
            i = opts[floor(rng.random() * len(opts))] if len(opts) > 1 else opts[0]
            fit = hand & w[stacks[i][-1]]
        if game._bulls[seat]:
            sub = fit & rng.getrandbits(101)
            while not sub:
                sub = fit & rng.getrandbits(101)
            if sub & (sub - 1):            # several cards
                cards = []
                while sub:
                    low = sub & -sub
                    cards.append(low.bit_length() - 1)
                    sub ^= low
                play = _new(Play)          # cards are built sorted: skip Play.__init__
                _set_stack(play, sids[i])
                _set_cards(play, tuple(cards))
                return play
            card = sub.bit_length() - 1
        else:
            k = floor(rng.random() * fit.bit_count())
            while k:
                fit &= fit - 1             # drop the lowest card
                k -= 1
            card = (fit & -fit).bit_length() - 1
        single = _SINGLE_PLAYS.get(sids[i] << 7 | card)
        return single if single is not None else _single_play(sids[i], card)
    if phase is STEAL:
        v = game._victims
        return Steal(v[floor(rng.random() * len(v))])
    if phase is OPEN:
        cards = cards_of(game._hands[seat])
        return Open(cards[floor(rng.random() * len(cards))])
    raise _err("game_over", "the game is over")


def greedy_player(game: Nimmt, seat: int, rng: random.Random) -> Action:
    """A simple greedy player.

    * Play: on the stack where it dumps the most ox heads (with bulls: all
      fitting cards at once; without: the heaviest fitting card, the highest
      on ties), and goes on as long as it can (never passes early).
    * Forced take: the stack whose visible top carries the fewest ox heads
      (stack sizes are hidden; ties: the oldest stack).
    * H5 steal: the tied victim with the fewest cards in hand (closest to
      going out); ties: the first in seat order.
    * H7 open: the card with the most ox heads (highest on ties).

    >>> g = Nimmt.from_position([[34, 40, 50], [1]], [[33]], bulls=[1, 0], draw=[])
    >>> greedy_player(g, 0, random.Random(0))
    Play(stack=0, cards=(34, 40))
    """
    phase = game._phase
    h = HEADS
    if phase is PLAY:
        hand = game._hands[seat]
        played = game._played
        bulls = game._bulls[seat]
        best = None
        best_key: tuple[int, int] | None = None
        for sid, st in zip(game._sids, game._stacks):
            if sid in played:
                continue
            fit = hand & WINDOW[st[-1]]
            if not fit:
                continue
            cards = cards_of(fit)
            if bulls:
                key = (sum(h[c] for c in cards), len(cards))
                batch = tuple(cards)
            else:
                c = max(cards, key=lambda c: (h[c], c))
                key = (h[c], c)
                batch = (c,)
            if best_key is None or key > best_key:
                best_key, best = key, Play(sid, batch)
        if best is not None:
            return best
        if played:
            return _PASS
        sids = game._sids
        i = min(range(len(sids)), key=lambda i: h[game._stacks[i][-1]])
        return Take(sids[i])
    if phase is STEAL:
        counts = game._hands
        return Steal(min(game._victims, key=lambda v: (counts[v].bit_count(), v)))
    if phase is OPEN:
        cards = cards_of(game._hands[seat])
        return Open(max(cards, key=lambda c: (h[c], c)))
    raise _err("game_over", "the game is over")
