"""6 nimmt! (RULES.md section 3, house rules S1-S4): everyone chooses at once.

A turn: every seat in ``to_act`` chooses one card of its hand in secret
(:class:`Choose`); when the last one has chosen, the cards are revealed and
placed from the lowest to the highest.  A card lower than the last card of
every row stops the placing: its player picks the row to take
(:class:`PickRow`, S2) before the next card is placed.  Ten turns make a deal;
the game ends after the deal in which someone reaches the point limit (66,
S4), or after a fixed number of deals.

    >>> game = Take6.new(3, seed=5)
    >>> sorted(game.to_act), game.phase.value, len(game.view(0)["hand"])
    ([0, 1, 2], 'choose', 10)
    >>> rng = random.Random(2)
    >>> while not game.over:
    ...     seat = min(game.to_act)
    ...     _ = game.apply(seat, normal_player(game, seat, rng))
    >>> Take6.replay(3, 5, game.options, game.log).to_dict() == game.to_dict()
    True

The engine is deterministic from ``(seats, seed, options)``: deal ``d`` is
shuffled by ``random.Random(f"{seed}:{d}")``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Sequence

from core.games.nimmt.engine import ox_heads
from core.protocol import Event, IllegalAction, InvalidAction, Result, places_from_scores, turn_event

CARDS = 104
HAND = 10
ROWS = 4
ROW_MAX = 5  # the sixth card takes the row
DEFAULT_LIMIT = 66  # S4
ROW_LABELS = ("A", "B", "C", "D")
#: the original rules' tactical variant: only the cards 1 to 10 x players + 4, so every card in play is known
TACTICAL = "tactical"
VARIANTS = (TACTICAL,)



#: HEADS[c]: ox heads of card c (S1); index 0 unused
# S1: H1's ox heads, over 1..104 (one rule for both games)
HEADS: tuple[int, ...] = (0,) + tuple(ox_heads(c) for c in range(1, CARDS + 1))
assert sum(HEADS) == 171  # S1


def heads(cards: Sequence[int]) -> int:
    """Ox heads of some cards.

    >>> heads([55, 10, 11, 3])
    16
    """
    return sum(map(HEADS.__getitem__, cards))


class Phase(str, Enum):
    CHOOSE = "choose"  # every seat in to_act picks a card
    ROW = "row"  # a card below every row: its player picks the row to take (S2)
    OVER = "over"


@dataclass(frozen=True)
class Choose:
    card: int

    def __str__(self) -> str:
        return f"c{self.card}"


@dataclass(frozen=True)
class PickRow:
    row: int  # 0..3

    def __str__(self) -> str:
        return f"r{self.row}"


Action = Choose | PickRow


def _err(code: str, **detail: Any) -> IllegalAction:
    return IllegalAction(code, code, **detail)


class Take6:
    """A game of 6 nimmt! under the shared protocol (simultaneous turns)."""

    name: ClassVar[str] = "take6"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 10

    def __init__(self) -> None:
        self.seats = 0
        self.seed = 0
        self.limit: int | None = DEFAULT_LIMIT
        self.deals: int | None = None
        self.variant: str | None = None  # None: the standard game (all 104 cards)
        self.cards = CARDS  # the deck: 1..cards
        self.log: list[tuple[int, str]] = []
        self.deal = 0
        self.turn = 0  # 1..10 within the deal
        self.hands: list[list[int]] = []
        self.rows: list[list[int]] = []
        self.piles: list[list[int]] = []  # this deal's penalty piles
        self.scores: list[int] = []
        self.chosen: list[int | None] = []
        self.queue: list[tuple[int, int]] = []  # revealed (card, seat) still to place, ascending
        self.phase = Phase.CHOOSE
        self.deals_won: list[int] = []
        self.rows_taken: list[int] = []

    # -- creation -------------------------------------------------------------
    @classmethod
    def new(cls, seats: int, seed: int, limit: int | None = None, deals: int | None = None,
            variant: str | None = None, **options: Any) -> "Take6":
        """Options: ``limit`` (points that end the game, default 66, S4) or
        ``deals`` (a fixed number of deals; then there is no limit);
        ``variant`` ``"tactical"``: the deck is only 1 to 10 x players + 4.

        >>> g = Take6.new(3, seed=1, variant="tactical")
        >>> g.cards, sorted([c for h in g.hands for c in h] + [r[0] for r in g.rows]) == list(range(1, 35))
        (34, True)
        """
        if options:
            raise InvalidAction("bad_option", f"unknown options {sorted(options)}")
        if type(seats) is not int or not cls.min_seats <= seats <= cls.max_seats:
            raise InvalidAction("bad_seats", "6 nimmt! takes 2 to 10 players")
        if variant is not None and variant not in VARIANTS:
            raise InvalidAction("bad_option", f"unknown variant {variant!r}")
        g = cls()
        g.seats, g.seed = seats, int(seed)
        g.variant = variant
        g.cards = HAND * seats + ROWS if variant == TACTICAL else CARDS
        if deals is not None:
            g.deals, g.limit = int(deals), None
            if g.deals < 1:
                raise InvalidAction("bad_option", "deals must be at least 1")
        else:
            g.limit = int(limit) if limit is not None else DEFAULT_LIMIT
            if g.limit < 1:
                raise InvalidAction("bad_option", "limit must be at least 1")
        g.scores = [0] * seats
        g.deals_won = [0] * seats
        g.rows_taken = [0] * seats
        g._start_deal([])
        return g

    @property
    def options(self) -> dict[str, Any]:
        chosen: dict[str, Any] = {"deals": self.deals} if self.deals is not None else {"limit": self.limit}
        if self.variant is not None:
            chosen["variant"] = self.variant
        return chosen

    def _start_deal(self, ev: list[Event]) -> None:
        self.deal += 1
        self.turn = 1
        deck = list(range(1, self.cards + 1))
        random.Random(f"{self.seed}:{self.deal}").shuffle(deck)
        self.hands = [sorted(deck[i * HAND:(i + 1) * HAND]) for i in range(self.seats)]
        rest = deck[self.seats * HAND:]
        self.rows = [[rest[i]] for i in range(ROWS)]
        self.piles = [[] for _ in range(self.seats)]
        self.chosen = [None] * self.seats
        self.queue = []
        self.phase = Phase.CHOOSE
        ev.append({"type": "deal_start", "deal": self.deal, "rows": [r[0] for r in self.rows]})
        ev.append(turn_event(range(self.seats)))

    # -- protocol -------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def to_act(self) -> frozenset[int]:
        if self.phase is Phase.CHOOSE:
            return frozenset(s for s in range(self.seats) if self.chosen[s] is None)
        if self.phase is Phase.ROW:
            return frozenset((self.queue[0][1],))
        return frozenset()

    @property
    def to_move(self) -> int | None:
        """The seat that must act alone (a row choice, S2), else None."""
        return self.queue[0][1] if self.phase is Phase.ROW else None

    def legal_actions(self, seat: int) -> list[Action]:
        if seat not in self.to_act:
            return []
        if self.phase is Phase.ROW:
            return [PickRow(r) for r in range(ROWS)]
        return [Choose(c) for c in self.hands[seat]]

    def _check(self, seat: int, action: Any) -> str | None:
        if type(seat) is not int or not 0 <= seat < self.seats:
            return "bad_seat"
        if self.phase is Phase.OVER:
            return "game_over"
        if seat not in self.to_act:
            return "not_your_turn" if self.phase is Phase.ROW else "already_chosen"
        if self.phase is Phase.CHOOSE:
            if not isinstance(action, Choose):
                return "choose_a_card"
            if action.card not in self.hands[seat]:
                return "not_in_hand"
        else:
            if not isinstance(action, PickRow):
                return "pick_a_row"
            if not 0 <= action.row < ROWS:
                return "no_such_row"
        return None

    def is_legal(self, seat: int, action: Any) -> bool:
        return self._check(seat, action) is None

    def parse(self, text: str) -> Action:
        """An action from its text.

        >>> Take6().parse("c17"), Take6().parse("r2")
        (Choose(card=17), PickRow(row=2))
        """
        text = str(text).strip()
        try:
            if text[:1] == "c":
                return Choose(int(text[1:]))
            if text[:1] == "r":
                return PickRow(int(text[1:]))
        except ValueError:
            pass
        raise InvalidAction("invalid_syntax", f"not a 6 nimmt! action: {text!r}")

    def apply(self, seat: int, action: Any) -> list[Event]:
        if isinstance(action, str):
            action = self.parse(action)
        code = self._check(seat, action)
        if code is not None:
            raise _err(code, seat=seat, action=str(action))
        self.log.append((seat, str(action)))
        ev: list[Event] = []
        if isinstance(action, Choose):
            self.hands[seat].remove(action.card)
            self.chosen[seat] = action.card
            ev.append({"type": "chose", "seat": seat})
            if all(c is not None for c in self.chosen):
                self.queue = sorted((c, s) for s, c in enumerate(self.chosen) if c is not None)
                ev.append({"type": "reveal", "cards": [[s, c] for c, s in self.queue]})
                self._place(ev)
        else:
            card, _ = self.queue.pop(0)
            self._take(seat, action.row, card, ev, chosen=True)
            self._place(ev)
        return ev

    # -- rules ----------------------------------------------------------------
    def _take(self, seat: int, row: int, card: int, ev: list[Event], *, chosen: bool) -> None:
        taken = self.rows[row]
        self.piles[seat].extend(taken)
        self.rows_taken[seat] += 1
        self.rows[row] = [card]
        ev.append({"type": "took_row" if chosen else "sixth", "seat": seat, "card": card, "row": row,
                   "cards": list(taken), "heads": heads(taken)})

    def _place(self, ev: list[Event]) -> None:
        """Place revealed cards lowest first until one needs a row choice (S2)."""
        while self.queue:
            card, seat = self.queue[0]
            best = -1
            for r, cards in enumerate(self.rows):
                if cards[-1] < card and (best < 0 or cards[-1] > self.rows[best][-1]):
                    best = r
            if best < 0:
                self.phase = Phase.ROW
                ev.append({"type": "row_choice", "seat": seat, "card": card})
                ev.append(turn_event([seat]))
                return
            self.queue.pop(0)
            if len(self.rows[best]) >= ROW_MAX:
                self._take(seat, best, card, ev, chosen=False)
            else:
                self.rows[best].append(card)
                ev.append({"type": "placed", "seat": seat, "card": card, "row": best})
        self.chosen = [None] * self.seats
        if self.turn < HAND:
            self.turn += 1
            self.phase = Phase.CHOOSE
            ev.append(turn_event(range(self.seats)))
            return
        penalties = [heads(p) for p in self.piles]
        for s in range(self.seats):
            self.scores[s] += penalties[s]
        low = min(penalties)
        for s in range(self.seats):
            if penalties[s] == low:
                self.deals_won[s] += 1
        ev.append({"type": "deal_over", "deal": self.deal, "penalties": penalties, "scores": list(self.scores)})
        if (self.deals is not None and self.deal >= self.deals) or (
                self.limit is not None and max(self.scores) >= self.limit):
            self.phase = Phase.OVER
            result = self.result
            assert result is not None
            ev.append({"type": "game_over", "scores": list(result.scores), "places": list(result.places),
                       "winners": list(result.winners)})
            return
        self._start_deal(ev)

    @property
    def result(self) -> Result | None:
        if self.phase is not Phase.OVER:
            return None
        scores = tuple(self.scores)
        places = places_from_scores(scores)
        return Result(
            scores=scores, places=places, winners=tuple(s for s in range(self.seats) if places[s] == 1),
            rounds=self.deal,
            stats=tuple({"deals": self.deal, "deals_won": self.deals_won[s], "rows_taken": self.rows_taken[s]}
                        for s in range(self.seats)),
        )

    # -- views ----------------------------------------------------------------
    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` (None: the table) may see.  Another seat's choice
        shows only as ``chosen`` True until the reveal."""
        revealing = self.phase is Phase.ROW
        v: dict[str, Any] = {
            "game": "take6",
            "seat": seat,
            "seats": self.seats,
            "phase": self.phase.value,
            "deal": self.deal,
            "deals": self.deals,
            "limit": self.limit,
            "variant": self.variant,
            "cards": self.cards,  # the deck is 1..cards
            "turn": self.turn,
            "rows": [list(r) for r in self.rows],
            "row_heads": [heads(r) for r in self.rows],
            "hand_counts": [len(h) for h in self.hands],
            "chosen": [c is not None for c in self.chosen],
            "pile_sizes": [len(p) for p in self.piles],
            "scores": list(self.scores),
            "to_act": sorted(self.to_act),
            "to_move": self.to_move,
            # The cards of this turn still to be placed, public once revealed (S2 waits on the first).
            "pending": [[s, c] for c, s in self.queue] if revealing else [],
        }
        if seat is not None:
            v["hand"] = list(self.hands[seat])
            v["my_choice"] = self.chosen[seat]
            v["my_pile_heads"] = heads(self.piles[seat])
        return v

    # -- persistence ------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": self.seats, "seed": self.seed, "limit": self.limit, "deals": self.deals,
            **({"variant": self.variant, "cards": self.cards} if self.variant is not None else {}),
            "log": [list(e) for e in self.log], "deal": self.deal, "turn": self.turn,
            "hands": [list(h) for h in self.hands], "rows": [list(r) for r in self.rows],
            "piles": [list(p) for p in self.piles], "scores": list(self.scores),
            "chosen": list(self.chosen), "queue": [list(q) for q in self.queue], "phase": self.phase.value,
            "deals_won": list(self.deals_won), "rows_taken": list(self.rows_taken),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Take6":
        g = cls()
        g.seats, g.seed, g.limit, g.deals = data["seats"], data["seed"], data["limit"], data["deals"]
        g.variant, g.cards = data.get("variant"), int(data.get("cards", CARDS))
        g.log = [(int(s), str(a)) for s, a in data["log"]]
        g.deal, g.turn = data["deal"], data["turn"]
        g.hands = [list(h) for h in data["hands"]]
        g.rows = [list(r) for r in data["rows"]]
        g.piles = [list(p) for p in data["piles"]]
        g.scores = list(data["scores"])
        g.chosen = list(data["chosen"])
        g.queue = [(int(c), int(s)) for c, s in data["queue"]]
        g.phase = Phase(data["phase"])
        g.deals_won, g.rows_taken = list(data["deals_won"]), list(data["rows_taken"])
        return g

    def copy(self) -> "Take6":
        """An independent copy (the table changes a copy and keeps it once saved)."""
        return Take6.from_dict(self.to_dict())

    @classmethod
    def replay(cls, seats: int, seed: int, options: dict[str, Any], log: Sequence[tuple[int, str]]) -> "Take6":
        g = cls.new(seats, seed, **options)
        for seat, text in log:
            g.apply(int(seat), g.parse(text))
        return g

    def __repr__(self) -> str:
        return f"<Take6 seats={self.seats} deal={self.deal} turn={self.turn} phase={self.phase.value}>"


# --------------------------------------------------------------------------
# Computer players: they decide from view(seat) only (rows, own hand, counts).

def fewest_heads_row(rows: Sequence[Sequence[int]]) -> int:
    """S2's timeout row: fewest ox heads, then fewer cards, then the earlier row.

    >>> fewest_heads_row([[10], [3, 4], [1], [55]]), fewest_heads_row([[10], [3, 4], [1, 2], [55]])
    (2, 1)
    """
    return min(range(len(rows)), key=lambda r: (heads(rows[r]), len(rows[r]), r))


def random_player(game: Take6, seat: int, rng: random.Random) -> Action:
    view = game.view(seat)
    if view["phase"] == Phase.ROW.value:
        return PickRow(rng.randrange(ROWS))
    return Choose(rng.choice(view["hand"]))


def row_for(card: int, rows: Sequence[Sequence[int]]) -> int:
    """The row ``card`` goes to if it is laid now (S1: the highest end below
    it), -1 when it is lower than every row (S2: its player takes a row).

    >>> row_for(30, [[10], [25], [40], [5]]), row_for(3, [[10], [25], [40], [5]])
    (1, -1)
    """
    best = -1
    for r, cards in enumerate(rows):
        if cards[-1] < card and (best < 0 or cards[-1] > rows[best][-1]):
            best = r
    return best


def card_cost(card: int, rows: Sequence[Sequence[int]]) -> tuple[float, int]:
    """Heuristic cost of playing ``card`` now, ignoring the others' cards."""
    best = row_for(card, rows)
    if best < 0:
        return heads(rows[fewest_heads_row(rows)]) + 0.5, card
    row = rows[best]
    if len(row) >= ROW_MAX:
        return heads(row) + 0.1, card
    gap = card - row[-1]
    risk = (len(row) + 1) / ROW_MAX * min(gap, 20) / 20  # more likely undercut as the row fills
    return risk * 2 + HEADS[card] * 0.05, gap


def normal_player(game: Take6, seat: int, rng: random.Random) -> Action:
    """The "normal" level: the card that looks cheapest now (a close fit on a
    short row; a low card when a take is cheap), the S2 row when a row must be
    taken (so a timed-out row choice equals the house rule)."""
    view = game.view(seat)
    rows = view["rows"]
    if view["phase"] == Phase.ROW.value:
        return PickRow(fewest_heads_row(rows))
    return Choose(normal_card(view["hand"], rows))


def normal_card(hand: Sequence[int], rows: Sequence[Sequence[int]]) -> int:
    """The normal level's card: ``min(hand, key=lambda c: card_cost(c, rows))``,
    with each row looked at once (the hard level's playouts call it for every
    seat and turn of every simulated deal).

    >>> rows = [[3, 4], [20], [41, 42, 43, 44, 45], [90]]
    >>> hand = [1, 5, 21, 46, 55, 91, 104]
    >>> normal_card(hand, rows) == min(hand, key=lambda c: card_cost(c, rows))
    True
    """
    lasts = [row[-1] for row in rows]
    below = -1.0  # the cost of a card lower than every row, once needed
    best_cost = best_tie = 0.0
    best = 0
    for card in hand:
        target = -1
        top = 0
        for r, last in enumerate(lasts):
            if top < last < card:
                target, top = r, last
        if target < 0:
            if below < 0:  # (the fewest-heads row's heads)
                below = min(map(heads, rows)) + 0.5
            cost, tie = below, card
        else:
            size = len(rows[target])
            if size >= ROW_MAX:
                cost, tie = heads(rows[target]) + 0.1, card
            else:
                gap = card - top
                cost, tie = (size + 1) / ROW_MAX * min(gap, 20) / 20 * 2 + HEADS[card] * 0.05, gap
        if not best or cost < best_cost or (cost == best_cost and tie < best_tie):
            best, best_cost, best_tie = card, cost, tie
    return best
