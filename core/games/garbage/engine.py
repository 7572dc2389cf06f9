"""Garbage (also called Trash): engine and computer players.

Rules: RULES.md section 2, house rules G1-G4.  Most of a turn is forced; the
engine plays every forced step itself inside :meth:`Garbage.apply` and only
stops at the two real decisions:

* phase ``"source"``: take the stock (:class:`Draw`) or the discard's top
  (:class:`Discard`, G1: only when it can be placed now; never on the very
  first turn of a hand);
* phase ``"jack"``: which face-down slot a Jack goes to (:class:`Jack`).

Engine choices the rules leave open (documented here, tested in
``tests/games/garbage/test_rules.py``):

* A Jack in hand with exactly **one** face-down slot left is placed there
  automatically (there is nothing to choose; it completes the layout, G3).
* The stock is reshuffled lazily: drawing from an empty stock first turns the
  discard pile except its top into a new, seeded stock.
* The hand's final winner (a single slot filled) ends with 0 slots, so
  ``Result.scores`` = slots left per seat with the winner at 0.  The last
  hand's layouts stay on show after the end (the winner's one card too); the
  card the winning placement uncovered goes face-up onto the discard pile.
* Rule 3's "Jack when no face-down slot is left" (reason ``no_slot``) is
  implemented but cannot happen in play: G3 ends the hand as soon as the last
  slot turns face-up.

Hand-made positions for tests: :meth:`Garbage.from_position`.  Besides the
shared protocol the engine offers ``push`` (trusted fast path, no events),
``copy()`` and ``==`` (same state), like ``core.games.nimmt.engine``.

Cards are ints ``0 .. 52*decks-1`` (``deck*52 + (rank-1)*4 + suit``, suits
S, H, D, C); everything shown to the table goes through :func:`card_text`.

>>> game = Garbage.new(seats=2, seed=7)
>>> game.to_move, game.phase, game.hand_no, game.legal_actions(game.to_move)
(1, 'source', 1, [Draw()])
>>> events = game.apply(game.to_move, Draw())
>>> events[0]
{'type': 'drew', 'seat': 1, 'source': 'stock', 'card': '6H'}
>>> [(e["type"], e.get("slot"), e.get("uncovered")) for e in events[1:5]]
[('placed', 6, '5S'), ('placed', 5, '9C'), ('placed', 9, '8D'), ('placed', 8, 'QS')]
>>> events[5:]
[{'type': 'dead', 'seat': 1, 'card': 'QS', 'reason': 'dead_rank'}, {'type': 'discarded', 'seat': 1, 'card': 'QS'}, {'type': 'turn', 'seat': 0}]
>>> game.view(None)["players"][1]["layout"]
[None, None, None, None, '5S', '6H', None, '8D', '9C', None]
>>> Garbage.replay(2, 7, game.options, game.log).to_dict() == game.to_dict()
True
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Sequence, Union

from core.protocol import Event, GameError, IllegalAction, InvalidAction, Result, places_from_scores

__all__ = [
    "Garbage",
    "Draw",
    "Discard",
    "Jack",
    "Action",
    "random_player",
    "greedy_player",
    "card_text",
    "card_rank",
]

# --------------------------------------------------------------------------
# Cards: tables built once at import.

RANK_TEXT = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUIT_TEXT = "SHDC"
JACK, QUEEN, KING = 11, 12, 13
MAX_DECKS = 3
MAX_SLOTS = 10

#: rank (1..13) of every card id
RANK: tuple[int, ...] = tuple((c % 52) // 4 + 1 for c in range(52 * MAX_DECKS))
#: display text of every card id
TEXT: tuple[str, ...] = tuple(RANK_TEXT[RANK[c]] + SUIT_TEXT[c % 4] for c in range(52 * MAX_DECKS))
#: card text -> its copies' ids (one per deck), in deck order
COPIES: dict[str, tuple[int, ...]] = {}
for _c in range(52 * MAX_DECKS):
    COPIES[TEXT[_c]] = COPIES.get(TEXT[_c], ()) + (_c,)
del _c
#: BIT[k] is the bit of 1-based slot k in a face-down mask
BIT = tuple(1 << (k - 1) if k else 0 for k in range(MAX_SLOTS + 2))
#: SLOTS_OF[mask]: 1-based slots set in a face-down mask, ascending
SLOTS_OF: tuple[tuple[int, ...], ...] = tuple(
    tuple(k for k in range(1, MAX_SLOTS + 1) if m & BIT[k]) for m in range(1 << MAX_SLOTS)
)


def card_text(card: int) -> str:
    """The display text of a card id: rank A,2..10,J,Q,K then suit S,H,D,C.

    >>> card_text(0), card_text(39), card_text(51), card_text(52 + 43)
    ('AS', '10C', 'KC', 'JC')
    """
    return TEXT[card]


def card_rank(card: int) -> int:
    """Rank 1..13 of a card id (Ace 1, Jack 11, Queen 12, King 13).

    >>> card_rank(0), card_rank(40), card_rank(52 + 51)
    (1, 11, 13)
    """
    return RANK[card]


def decks_for(seats: int) -> int:
    """Decks in play: 1 for 2 players, 2 for 3-4, 3 for 5-6.

    >>> [decks_for(n) for n in range(2, 7)]
    [1, 2, 2, 3, 3]
    """
    return 1 if seats <= 2 else 2 if seats <= 4 else 3


# --------------------------------------------------------------------------
# Actions: small immutable values, str() is the log text, repr a constructor.


@dataclass(frozen=True)
class Draw:
    """Take the top card of the stock.

    >>> Draw(), str(Draw())
    (Draw(), 'stock')
    """

    def __str__(self) -> str:
        return "stock"


@dataclass(frozen=True)
class Discard:
    """Take the top card of the discard pile (G1: only when placeable now).

    >>> Discard(), str(Discard())
    (Discard(), 'discard')
    """

    def __str__(self) -> str:
        return "discard"


@dataclass(frozen=True)
class Jack:
    """Put the Jack in hand face-up on face-down slot ``slot`` (1-based).

    >>> Jack(3), str(Jack(3))
    (Jack(slot=3), 'jack 3')
    """

    slot: int

    def __str__(self) -> str:
        return f"jack {self.slot}"


Action = Union[Draw, Discard, Jack]
_DRAW = Draw()
_DISCARD = Discard()
_JACKS = tuple(Jack(k) for k in range(MAX_SLOTS + 1))

_DEAD_REASONS = ("dead_rank", "above_slots", "slot_filled", "no_slot")


def _ids_for(texts: Iterable[str | None], used: dict[str, int], decks: int) -> list[int]:
    out = []
    for t in texts:
        key = str(t).strip().upper()
        copies = COPIES.get(key)
        if copies is None:
            raise InvalidAction("invalid_syntax", f"not a card: {t!r}", text=t)
        n = used.get(key, 0)
        if n >= decks:
            raise GameError("too_many_copies", f"more than {decks} copies of {key}", card=key)
        used[key] = n + 1
        out.append(copies[n])
    return out


# --------------------------------------------------------------------------
# The game.


class Garbage:
    """One game of Garbage: a mutable container, deterministic from its seed.

    State (all plain ints and lists, see :meth:`to_dict`): per seat the slot
    count, the card in every slot and a bit mask of face-down slots; the
    stock and discard pile (top = last element); the card in hand; the phase.
    Chance (deals, reshuffles, G4's start player) comes from
    ``random.Random(f"garbage:{seed}:{n}")`` where ``n`` counts the shuffles,
    so a game replays from ``(seats, seed, options, log)``.
    """

    name: ClassVar[str] = "garbage"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 6

    seats: int
    seed: int
    options: dict[str, Any]
    log: list[tuple[int, str]]

    def __init__(self) -> None:  # use new(), from_dict() or from_position()
        self.seats = 0
        self.seed = 0
        self.options = {}
        self.log = []
        self.decks = 1
        self.slots: list[int] = []  # N per seat (0 for the game's winner)
        self.cards: list[list[int]] = []  # card id in each slot (index k-1)
        self.down: list[int] = []  # face-down mask per seat (bit k-1 = slot k)
        self.stock: list[int] = []  # top = last
        self.discard: list[int] = []  # top = last
        self.in_hand: int | None = None  # the Jack waiting for a slot (phase jack)
        self.phase = "source"
        self._to_move: int | None = 0
        self.first_turn = True
        self.hand_no = 1
        self.start_seat = 0
        self.hands_won: list[int] = []
        self.winner: int | None = None
        self.shuffles = 0

    # -- construction -------------------------------------------------------

    @classmethod
    def new(cls, seats: int, seed: int, **options: Any) -> "Garbage":
        """A fresh game: 2..6 seats, deterministic from ``seed``.

        Option ``slots`` (1..10, default 10) sets everybody's starting slots.

        >>> g = Garbage.new(seats=4, seed=1)
        >>> g.decks, g.slots, g.options, g.hand_no
        (2, [10, 10, 10, 10], {'slots': 10}, 1)
        >>> Garbage.new(seats=7, seed=1)
        Traceback (most recent call last):
        ...
        core.protocol.GameError: seats must be 2..6
        """
        if not isinstance(seats, int) or not cls.min_seats <= seats <= cls.max_seats:
            raise GameError("bad_seats", "seats must be 2..6", seats=seats)
        unknown = set(options) - {"slots"}
        if unknown:
            raise GameError("bad_option", f"unknown option(s): {sorted(unknown)}", options=sorted(unknown))
        start = options.get("slots", MAX_SLOTS)
        if not isinstance(start, int) or not 1 <= start <= MAX_SLOTS:
            raise GameError("bad_option", "slots must be 1..10", slots=start)
        g = cls()
        g.seats, g.seed, g.options = seats, seed, {"slots": start}
        g.decks = decks_for(seats)
        g.slots = [start] * seats
        g.hands_won = [0] * seats
        # G4: the first hand's start player is drawn at random (from the seed).
        g.start_seat = random.Random(f"garbage:{seed}:start").randrange(seats)
        g._deal()
        return g

    @classmethod
    def from_position(
        cls,
        layouts: Sequence[Sequence[str] | str],
        stock: Sequence[str] | str = (),
        discard: Sequence[str] | str = (),
        *,
        to_move: int = 0,
        seed: int = 0,
        hand_no: int = 1,
        start_seat: int | None = None,
        first_turn: bool = False,
        hands_won: Sequence[int] | None = None,
        decks: int | None = None,
        fill: bool = True,
    ) -> "Garbage":
        """Build a hand-made position (for tests and puzzles), phase ``source``.

        ``layouts``: per seat, slot 1 first, each card as text; a face-down
        card is written with a leading ``?`` (``"?QS"``).  A sequence of
        strings or one space-separated string.  ``stock`` lists cards in
        draw order (first is drawn first); ``discard`` bottom to top (last is
        the top).  With ``fill`` the cards of the decks not mentioned go to
        the *bottom* of the discard pile, so every card is accounted for and
        later hands can be dealt; ``fill=False`` keeps only the listed cards.

        >>> g = Garbage.from_position(["?7H 2S ?3D", "?KS ?KH"], stock="3C", fill=False)
        >>> g.view(None)["players"][0]["layout"], g.slots
        ([None, '2S', None], [3, 2])
        >>> [e["type"] for e in g.apply(0, Draw())]
        ['drew', 'placed', 'dead', 'discarded', 'turn']
        >>> g.view(0)["players"][0]["layout"], g.view(0)["discard_top"]
        ([None, '2S', '3C'], '3D')
        """
        n = len(layouts)
        if not cls.min_seats <= n <= cls.max_seats:
            raise GameError("bad_seats", "seats must be 2..6", seats=n)
        g = cls()
        g.seats, g.seed = n, seed
        g.decks = decks if decks is not None else decks_for(n)
        if not 1 <= g.decks <= MAX_DECKS:
            raise GameError("bad_option", "decks must be 1..3", decks=g.decks)
        used: dict[str, int] = {}
        for lay in layouts:
            items = lay.split() if isinstance(lay, str) else list(lay)
            if not 1 <= len(items) <= MAX_SLOTS:
                raise GameError("bad_option", "a layout has 1..10 slots", layout=items)
            hidden = [t.startswith("?") for t in items]
            ids = _ids_for((t.lstrip("?") for t in items), used, g.decks)
            mask = 0
            for k, (c, h) in enumerate(zip(ids, hidden), start=1):
                if h:
                    mask |= BIT[k]
                elif RANK[c] != k and RANK[c] != JACK:
                    raise GameError("bad_layout", f"{TEXT[c]} cannot lie face-up in slot {k}", slot=k)
            if not mask:
                raise GameError("bad_layout", "a complete layout would already have won", layout=items)
            g.slots.append(len(ids))
            g.cards.append(ids)
            g.down.append(mask)
        stock_items = stock.split() if isinstance(stock, str) else list(stock)
        discard_items = discard.split() if isinstance(discard, str) else list(discard)
        g.stock = _ids_for(stock_items, used, g.decks)[::-1]
        g.discard = _ids_for(discard_items, used, g.decks)
        if fill:
            listed = set(c for lay in g.cards for c in lay) | set(g.stock) | set(g.discard)
            g.discard[:0] = [c for c in range(52 * g.decks) if c not in listed]
        if not 0 <= to_move < n or (hands_won is not None and len(hands_won) != n):
            raise GameError("bad_option", "to_move must be a seat; hands_won one count per seat")
        g.options = {"slots": max(g.slots)}
        g.hands_won = list(hands_won) if hands_won is not None else [0] * n
        g.hand_no = hand_no
        g.start_seat = to_move if start_seat is None else start_seat
        g._to_move = to_move
        g.first_turn = first_turn
        return g

    def _rng(self) -> random.Random:
        rng = random.Random(f"garbage:{self.seed}:{self.shuffles}")
        self.shuffles += 1
        return rng

    def _deal(self) -> None:
        """Gather every card, shuffle (seeded) and deal a new hand."""
        deck = list(range(52 * self.decks))
        self._rng().shuffle(deck)
        self.cards, self.down = [], []
        pos = 0
        for n in self.slots:
            self.cards.append(deck[pos : pos + n])
            self.down.append((1 << n) - 1)
            pos += n
        self.stock = deck[pos:]
        self.discard = []
        self.in_hand = None
        self.phase = "source"
        self.first_turn = True
        self._to_move = self.start_seat

    # -- queries --------------------------------------------------------------

    @property
    def to_move(self) -> int | None:
        return self._to_move

    @property
    def over(self) -> bool:
        return self.winner is not None

    def face_down(self, seat: int) -> tuple[int, ...]:
        """1-based face-down slots of ``seat``, ascending."""
        return SLOTS_OF[self.down[seat]]

    def placeable(self, seat: int, card: int) -> bool:
        """Can ``card`` be placed in ``seat``'s layout now (G1)?

        A Jack needs a face-down slot; rank r <= N needs slot r face-down or
        holding a face-up Jack; Queens and Kings never fit.
        """
        r = RANK[card]
        down = self.down[seat]
        if r == JACK:
            return down != 0
        if r > self.slots[seat]:  # covers Q/K: N <= 10
            return False
        return bool(down & BIT[r]) or RANK[self.cards[seat][r - 1]] == JACK

    def can_take_discard(self) -> bool:
        """G1 + first-turn rule, for the player to move in phase ``source``."""
        return (
            self.phase == "source"
            and not self.first_turn
            and bool(self.discard)
            and self._to_move is not None
            and self.placeable(self._to_move, self.discard[-1])
        )

    def _refusal(self, seat: Any, action: Any) -> str | None:
        """Why ``action`` by ``seat`` is illegal now (an error code), or None."""
        if self.winner is not None:
            return "game_over"
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.seats:
            return "bad_seat"
        if seat != self._to_move:
            return "not_your_turn"
        cls = type(action)
        if cls is Draw:
            return None if self.phase == "source" else "wrong_phase"
        if cls is Discard:
            if self.phase != "source":
                return "wrong_phase"
            if self.first_turn:
                return "first_turn_stock"
            if not self.discard:
                return "discard_empty"
            if not self.placeable(seat, self.discard[-1]):
                return "discard_unplaceable"  # G1
            return None
        if cls is Jack:
            if self.phase != "jack":
                return "wrong_phase"
            k = action.slot
            if not isinstance(k, int) or not 1 <= k <= self.slots[seat]:
                return "no_such_slot"
            if not self.down[seat] & BIT[k]:
                return "not_face_down"
            return None
        return "invalid_syntax"

    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action of ``seat`` now (empty when it is not to move)."""
        if self.winner is not None or seat != self._to_move:
            return []
        if self.phase == "jack":
            return [_JACKS[k] for k in SLOTS_OF[self.down[seat]]]
        if self.can_take_discard():
            return [_DRAW, _DISCARD]
        return [_DRAW]

    def is_legal(self, seat: int, action: Any) -> bool:
        """Cheap check of one action, without generating the others."""
        return self._refusal(seat, action) is None

    def parse(self, text: str) -> Action:
        """Parse an action's text (``str(action)`` round-trips).

        Also accepted: ``draw``, ``take``, ``j 3``, ``j3``; any case.

        >>> g = Garbage.new(2, 1)
        >>> g.parse("stock"), g.parse(" Discard "), g.parse("jack 10"), g.parse("J4")
        (Draw(), Discard(), Jack(slot=10), Jack(slot=4))
        >>> g.parse("fold")
        Traceback (most recent call last):
        ...
        core.protocol.InvalidAction: cannot parse 'fold'
        """
        t = str(text).strip().lower()
        if t in ("stock", "draw"):
            return _DRAW
        if t in ("discard", "take"):
            return _DISCARD
        for prefix in ("jack", "j"):
            if t.startswith(prefix):
                rest = t[len(prefix) :].strip()
                if rest.isdigit():
                    return Jack(int(rest))
                break
        raise InvalidAction("invalid_syntax", f"cannot parse {text!r}", text=text)

    # -- mutation -------------------------------------------------------------

    def apply(self, seat: int, action: Action) -> list[Event]:
        """Validate and play ``action`` for ``seat``; return the events in order.

        Raises :class:`IllegalAction` (state unchanged) with a stable ``code``:
        ``game_over``, ``bad_seat``, ``not_your_turn``, ``wrong_phase``,
        ``first_turn_stock``, ``discard_empty``, ``discard_unplaceable`` (G1),
        ``no_such_slot``, ``not_face_down``; a non-action raises
        :class:`InvalidAction` (``invalid_syntax``).

        >>> g = Garbage.from_position(["?7H 2S ?3D", "?KS ?KH"], stock="QC", discard="4S")
        >>> g.apply(1, Draw())
        Traceback (most recent call last):
        ...
        core.protocol.IllegalAction: stock by seat 1: not_your_turn
        >>> try:
        ...     g.apply(0, Discard())
        ... except IllegalAction as e:
        ...     print(e.code, e.detail)
        discard_unplaceable {'seat': 0, 'action': 'discard'}
        """
        why = self._refusal(seat, action)
        if why is not None:
            if why == "invalid_syntax":
                raise InvalidAction(why, f"not a Garbage action: {action!r}", action=action)
            raise IllegalAction(why, f"{action} by seat {seat}: {why}", seat=seat, action=str(action))
        events: list[Event] = []
        self._push(seat, action, events)
        return events

    def push(self, seat: int, action: Action) -> None:
        """Play a *legal* action without validation and without events (fast
        path, like python-chess ``Board.push``).  Illegal input: undefined."""
        self._push(seat, action, None)

    def _push(self, seat: int, action: Action, ev: list[Event] | None) -> None:
        self.log.append((seat, str(action)))
        cls = type(action)
        if type(action) is Jack:
            card = self.in_hand
            assert card is not None
            self.in_hand = None
            self.phase = "source"
            k = action.slot
            lay = self.cards[seat]
            uncovered = lay[k - 1]
            lay[k - 1] = card
            self.down[seat] &= ~BIT[k]
            if ev is not None:
                ev.append({"type": "jack_placed", "seat": seat, "slot": k, "uncovered": TEXT[uncovered]})
            if not self._check_won(seat, ev, uncovered):  # G3
                self._resolve(seat, uncovered, ev)
            return
        if cls is Draw:
            if not self.stock:
                self._reshuffle(ev)
            card = self.stock.pop()
        else:
            card = self.discard.pop()
        self.first_turn = False
        if ev is not None:
            src = "stock" if cls is Draw else "discard"
            ev.append({"type": "drew", "seat": seat, "source": src, "card": TEXT[card]})
        self._resolve(seat, card, ev)

    def _reshuffle(self, ev: list[Event] | None) -> None:
        """Rule 4: the discard pile except its top becomes the new stock."""
        top = self.discard.pop()
        stock = self.discard
        self._rng().shuffle(stock)
        self.stock, self.discard = stock, [top]
        if ev is not None:
            ev.append({"type": "reshuffle", "count": len(stock)})

    def _resolve(self, seat: int, card: int, ev: list[Event] | None) -> None:
        """Place ``card`` and every card it uncovers until the turn ends."""
        slots = self.slots[seat]
        lay = self.cards[seat]
        while True:
            r = RANK[card]
            if r == JACK:
                down = self.down[seat]
                if not down:
                    reason = "no_slot"
                    break
                choices = SLOTS_OF[down]
                if len(choices) > 1:
                    self.in_hand = card
                    self.phase = "jack"
                    if ev is not None:
                        ev.append({"type": "choose_jack", "seat": seat, "slots": list(choices)})
                    return
                # Engine choice: one face-down slot left, nothing to choose, so
                # the Jack goes there by itself (and completes the layout, G3).
                k = choices[0]
                uncovered = lay[k - 1]
                lay[k - 1] = card
                self.down[seat] = 0
                if ev is not None:
                    ev.append({"type": "jack_placed", "seat": seat, "slot": k, "uncovered": TEXT[uncovered]})
                self._check_won(seat, ev, uncovered)
                return
            if r >= QUEEN:
                reason = "dead_rank"
                break
            if r > slots:
                reason = "above_slots"
                break
            down = self.down[seat]
            bit = BIT[r]
            if down & bit:
                uncovered = lay[r - 1]
                lay[r - 1] = card
                down &= ~bit
                self.down[seat] = down
                if ev is not None:
                    ev.append(
                        {"type": "placed", "seat": seat, "slot": r, "card": TEXT[card], "uncovered": TEXT[uncovered]}
                    )
                if not down:  # G3: the layout is complete, the hand is won mid-chain
                    self._check_won(seat, ev, uncovered)
                    return
                card = uncovered
                continue
            held = lay[r - 1]
            if RANK[held] == JACK:
                # G2: always swap; the Jack returns to hand and goes on as a Jack.
                lay[r - 1] = card
                if ev is not None:
                    ev.append({"type": "swapped", "seat": seat, "slot": r, "card": TEXT[card]})
                card = held
                continue
            reason = "slot_filled"
            break
        self.discard.append(card)
        nxt = (seat + 1) % self.seats
        self._to_move = nxt
        if ev is not None:
            text = TEXT[card]
            ev.append({"type": "dead", "seat": seat, "card": text, "reason": reason})
            ev.append({"type": "discarded", "seat": seat, "card": text})
            ev.append({"type": "turn", "seat": nxt})

    def _check_won(self, seat: int, ev: list[Event] | None, uncovered: int) -> bool:
        """G3: a layout with every slot face-up (Jacks count) wins the hand at
        once; the winner gets one slot fewer and starts the next hand.

        ``uncovered`` (the card the last placement turned up) is not played
        on: it is gathered with the others, or when the game ends it goes
        face-up on the discard pile, so every card stays accounted for."""
        if self.down[seat]:
            return False
        self.hands_won[seat] += 1
        n = self.slots[seat] - 1
        self.slots[seat] = n
        if ev is not None:
            ev.append({"type": "hand_won", "seat": seat, "hand": self.hand_no, "slots": n})
        if n == 0:  # a single slot filled: the game is won
            self.winner = seat
            self._to_move = None
            self.phase = "over"
            self.in_hand = None
            self.discard.append(uncovered)
            if ev is not None:
                res = self.result
                assert res is not None
                ev.append({"type": "game_over", "winner": seat, "scores": list(res.scores), "places": list(res.places)})
            return True
        self.hand_no += 1
        self.start_seat = seat
        self._deal()
        if ev is not None:
            ev.append({"type": "hand_start", "hand": self.hand_no, "start": seat, "slots": list(self.slots)})
            ev.append({"type": "turn", "seat": seat})
        return True

    def copy(self) -> "Garbage":
        """An independent copy (the undo snapshot)."""
        return Garbage.from_dict(self.to_dict())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Garbage):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    # -- output ---------------------------------------------------------------

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` (or the table, ``None``) may see: the same for all.

        Only face-down cards (nobody sees them, owner included) and the stock
        order are secret.  Besides the shared view spec every player entry
        carries ``hands_won``.

        >>> g = Garbage.from_position(["?AS 2H ?3S", "JD ?KH"], stock="5S", discard="KS 3C")
        >>> v = g.view(1)
        >>> v["players"], v["discard_top"], v["can_take_discard"], v["stock"]
        ([{'slots': 3, 'layout': [None, '2H', None], 'hands_won': 0}, {'slots': 2, 'layout': ['JD', None], 'hands_won': 0}], '3C', True, 1)
        """
        if seat is not None and (type(seat) is not int or not 0 <= seat < self.seats):
            raise IllegalAction("bad_seat", f"no seat {seat}", seat=seat)
        players = []
        for s in range(self.seats):
            lay = self.cards[s]
            down = self.down[s]
            players.append(
                {
                    "slots": self.slots[s],
                    "layout": [None if down & BIT[k] else TEXT[lay[k - 1]] for k in range(1, len(lay) + 1)],
                    "hands_won": self.hands_won[s],
                }
            )
        jack = self.phase == "jack"
        return {
            "game": self.name,
            "seat": seat,
            "seats": self.seats,
            "hand_no": self.hand_no,
            "to_move": self._to_move,
            "phase": self.phase,
            "players": players,
            "stock": len(self.stock),
            "discard_top": TEXT[self.discard[-1]] if self.discard else None,
            "discard_count": len(self.discard),
            "in_hand": TEXT[self.in_hand] if self.in_hand is not None else None,
            "can_take_discard": self.winner is None and self.can_take_discard(),
            "jack_slots": list(SLOTS_OF[self.down[self._to_move]]) if jack and self._to_move is not None else [],
            "decks": self.decks,
            "start_seat": self.start_seat,
        }

    def revealed(self) -> dict[str, Any]:
        """The cards no view shows (face down), for after the game is over: a
        replay shows what lay under every slot.  Never shown during play.

        >>> g = Garbage.from_position(["?AS 2H ?3S", "JD ?KH"], stock="5S", discard="KS 3C")
        >>> g.revealed()["layouts"]
        [['AS', '2H', '3S'], ['JD', 'KH']]
        """
        return {"layouts": [[TEXT[c] for c in lay] for lay in self.cards]}

    @property
    def result(self) -> Result | None:
        """Once over: scores = slots left (the winner 0), places, winner, hands."""
        if self.winner is None:
            return None
        scores = tuple(self.slots)
        return Result(
            scores=scores,
            places=places_from_scores(scores),
            winners=(self.winner,),
            rounds=self.hand_no,
            stats=tuple({"hands_won": w} for w in self.hands_won),
        )

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-serialisable data (card ids, top = last)."""
        return {
            "game": self.name,
            "version": 1,
            "seats": self.seats,
            "seed": self.seed,
            "options": dict(self.options),
            "log": [[s, a] for s, a in self.log],
            "decks": self.decks,
            "slots": list(self.slots),
            "cards": [list(lay) for lay in self.cards],
            "down": list(self.down),
            "stock": list(self.stock),
            "discard": list(self.discard),
            "in_hand": self.in_hand,
            "phase": self.phase,
            "to_move": self._to_move,
            "first_turn": self.first_turn,
            "hand_no": self.hand_no,
            "start_seat": self.start_seat,
            "hands_won": list(self.hands_won),
            "winner": self.winner,
            "shuffles": self.shuffles,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Garbage":
        """Restore a game saved by :meth:`to_dict`."""
        if data.get("game") != cls.name or data.get("version") != 1:
            raise GameError("bad_data", "not a saved Garbage game (version 1)")
        g = cls()
        g.seats = data["seats"]
        g.seed = data["seed"]
        g.options = dict(data["options"])
        g.log = [(int(s), str(a)) for s, a in data["log"]]
        g.decks = data["decks"]
        g.slots = list(data["slots"])
        g.cards = [list(lay) for lay in data["cards"]]
        g.down = list(data["down"])
        g.stock = list(data["stock"])
        g.discard = list(data["discard"])
        g.in_hand = data["in_hand"]
        g.phase = data["phase"]
        g._to_move = data["to_move"]
        g.first_turn = data["first_turn"]
        g.hand_no = data["hand_no"]
        g.start_seat = data["start_seat"]
        g.hands_won = list(data["hands_won"])
        g.winner = data["winner"]
        g.shuffles = data["shuffles"]
        return g

    @classmethod
    def replay(
        cls, seats: int, seed: int, options: dict[str, Any], log: Sequence[tuple[int, str]]
    ) -> "Garbage":
        """Rebuild a game from its seed and action log (every action checked)."""
        g = cls.new(seats, seed, **options)
        for seat, text in log:
            g.apply(seat, g.parse(text))
        return g

    def __repr__(self) -> str:
        return f"<Garbage seats={self.seats} seed={self.seed} hand={self.hand_no} to_move={self._to_move}>"


# --------------------------------------------------------------------------
# Computer players: (game, seat, rng) -> action.


def random_player(game: Garbage, seat: int, rng: random.Random) -> Action:
    """A uniformly random legal action.

    >>> g = Garbage.new(3, 5)
    >>> random_player(g, g.to_move, random.Random(0))
    Draw()
    """
    return rng.choice(game.legal_actions(seat))


def greedy_player(game: Garbage, seat: int, rng: random.Random) -> Action:
    """Takes the discard whenever it may (a sure placement beats a gamble);
    puts a Jack on the face-down slot whose rank has the fewest copies still
    unseen (face-up in layouts or on the discard's top count as seen), ties
    to the highest slot.  ``rng`` is unused: greedy play is deterministic.

    >>> g = Garbage.from_position(["?AS ?2S ?3S", "?KS ?KH"], stock="JS AH", fill=False)
    >>> g.apply(0, Draw())[-1]
    {'type': 'choose_jack', 'seat': 0, 'slots': [1, 2, 3]}
    >>> greedy_player(g, 0, random.Random(0))
    Jack(slot=3)
    """
    if game.phase == "jack":
        seen = [0] * 14
        for s in range(game.seats):
            lay = game.cards[s]
            down = game.down[s]
            for k in range(1, len(lay) + 1):
                if not down & BIT[k]:
                    seen[RANK[lay[k - 1]]] += 1
        if game.discard:
            seen[RANK[game.discard[-1]]] += 1
        best = max(game.face_down(seat), key=lambda k: (seen[k], k))
        return _JACKS[best]
    if game.can_take_discard():
        return _DISCARD
    return _DRAW
