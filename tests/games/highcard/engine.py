"""High card: the engine of a game that lives only in the tests.

Cards 1..40 are shuffled from the seed; each seat is dealt ``HAND`` of them.
Seats play one card each, in turn, the trick's winner leading the next;
the highest card wins the trick.  Once every hand is empty, the most tricks
win (tied seats share a place).  Hands are secret: a seat's view shows its
own hand, the others' as counts.

    >>> g = HighCard.new(2, 7)
    >>> while not g.over:
    ...     _ = g.apply(g.to_move, highest_player(g, g.to_move, random.Random(0)))
    >>> sum(g.view(None)["tricks"]), g.result.winners != ()
    (3, True)
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from core.protocol import Event, EventType, IllegalAction, InvalidAction, Result, places_from_scores, turn_event

CARDS = 40
HAND = 3


@dataclass(frozen=True)
class Play:
    """Play one card of the hand; as text, its number."""

    card: int

    def __str__(self) -> str:
        return str(self.card)


class HighCard:
    name: ClassVar[str] = "highcard"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 4

    def __init__(self, seats: int, seed: int) -> None:
        self.seats, self.seed = seats, seed
        deck = list(range(1, CARDS + 1))
        random.Random(seed).shuffle(deck)
        self.hands = [sorted(deck[s * HAND:(s + 1) * HAND]) for s in range(seats)]
        self.trick: list[tuple[int, int]] = []  # (seat, card), in the order played
        self.tricks = [0] * seats
        self.leader = 0
        self.log: list[tuple[int, str]] = []

    @classmethod
    def new(cls, seats: int, seed: int, **options: Any) -> HighCard:
        if type(seats) is not int or not cls.min_seats <= seats <= cls.max_seats:
            raise InvalidAction("bad_seats", f"seats must be {cls.min_seats}..{cls.max_seats}")
        return cls(seats, seed)

    @property
    def over(self) -> bool:
        return not any(self.hands) and not self.trick

    @property
    def to_move(self) -> int | None:
        return None if self.over else (self.leader + len(self.trick)) % self.seats

    def legal_actions(self, seat: int) -> list[Play]:
        return [Play(c) for c in self.hands[seat]] if seat == self.to_move else []

    def is_legal(self, seat: int, action: Any) -> bool:
        return isinstance(action, Play) and seat == self.to_move and action.card in self.hands[seat]

    def parse(self, text: str) -> Play:
        if not str(text).isdigit():
            raise InvalidAction("invalid_syntax", f"not a card: {text!r}")
        return Play(int(text))

    def apply(self, seat: int, action: Any) -> list[Event]:
        if not self.is_legal(seat, action):
            raise IllegalAction("not_your_turn" if seat != self.to_move else "illegal", card=getattr(action, "card", None))
        self.hands[seat].remove(action.card)
        self.trick.append((seat, action.card))
        self.log.append((seat, str(action)))
        events: list[Event] = [{"type": "played", "seat": seat, "card": action.card}]
        if len(self.trick) == self.seats:
            winner, card = max(self.trick, key=lambda sc: sc[1])
            self.tricks[winner] += 1
            self.leader, self.trick = winner, []
            events.append({"type": "trick_won", "seat": winner, "card": card})
        if self.over:
            result = self.result
            assert result is not None
            events.append({"type": EventType.GAME_OVER.value, "scores": list(result.scores),
                           "places": list(result.places), "winners": list(result.winners)})
        else:
            events.append(turn_event([self.to_move or 0]))
        return events

    def view(self, seat: int | None) -> dict[str, Any]:
        view: dict[str, Any] = {"to_move": self.to_move, "trick": [list(p) for p in self.trick],
                                "tricks": list(self.tricks), "cards": [len(h) for h in self.hands]}
        if seat is not None:
            view["hand"] = list(self.hands[seat])
        return view

    @property
    def result(self) -> Result | None:
        if not self.over:
            return None
        places = places_from_scores(self.tricks, lower_is_better=False)
        return Result(scores=tuple(self.tricks), places=places,
                      winners=tuple(s for s, p in enumerate(places) if p == 1), rounds=1,
                      stats=tuple({"tricks_won": n} for n in self.tricks))

    def to_dict(self) -> dict[str, Any]:
        return {"seats": self.seats, "seed": self.seed, "log": [list(e) for e in self.log]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HighCard:
        return cls.replay(data["seats"], data["seed"], {}, [tuple(e) for e in data["log"]])

    def copy(self) -> HighCard:
        return self.from_dict(self.to_dict())

    @classmethod
    def replay(cls, seats: int, seed: int, options: dict[str, Any], log: Sequence[tuple[int, str]]) -> HighCard:
        game = cls.new(seats, seed, **options)
        for seat, text in log:
            game.apply(int(seat), game.parse(str(text)))
        return game


def random_player(game: HighCard, seat: int, rng: random.Random) -> Play:
    """Any card of the hand."""
    return rng.choice(game.legal_actions(seat))


def highest_player(game: HighCard, seat: int, rng: random.Random) -> Play:
    """The highest card of the hand."""
    return max(game.legal_actions(seat), key=lambda p: p.card)
