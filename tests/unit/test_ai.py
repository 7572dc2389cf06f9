"""Computer players of every game: every level plays legal moves, decides only from what
its seat may know (re-deal test), and a seeded search is reproducible."""
from __future__ import annotations

import random
import threading

import pytest

from core import ai, search
from core.games.garbage import players as garbage_ai
from core.games.nimmt import players as nimmt_ai
from core.games.take6 import players as take6_ai
from core.games.garbage.engine import Garbage, TEXT
from core.games.garbage.engine import random_player as garbage_random
from core.games.nimmt.engine import HEADS, Nimmt, cards_of
from core.games.nimmt.engine import random_player as nimmt_random
from core.games.take6.engine import HEADS as HEADS6, PickRow, Take6
from core.games.take6.engine import random_player as take6_random


def random_states(cls, player, seats, seed, count, every=3):
    """(game, history) at many moments of random games (the game is a copy)."""
    rng = random.Random(seed)
    out = []
    game_seed = seed
    while len(out) < count:
        g = cls.new(seats, game_seed)
        game_seed += 1
        history = []
        step = 0
        while not g.over and len(out) < count:
            seat = g.to_move
            if step % every == 0:
                out.append((cls.from_dict(g.to_dict()), list(history)))
            history += g.apply(seat, player(g, seat, rng))
            step += 1
    return out


# ------------------------------------------------------------------ legality


@pytest.mark.parametrize("seats", [2, 4, 7])
def test_nimmt_every_level_plays_legal_moves(seats):
    states = random_states(Nimmt, nimmt_random, seats, seed=100 + seats, count=400)
    phases = set()
    for i, (g, history) in enumerate(states):
        seat = g.to_move
        phases.add(g.phase)
        k = ai.know("nimmt", g.view(seat), history)
        for level in ("easy", "normal") + (("hard",) if i % 10 == 0 else ()):
            d = ai.decide("nimmt", k, level, random.Random(i), sims=3)
            assert g.is_legal(seat, d.action), (level, d.action, g.view(seat))
    assert {"play"} <= phases


def test_nimmt_levels_play_whole_games_against_each_other():
    """Full games with every level at the table end with a result."""
    for seed in range(3):
        g = Nimmt.new(3, seed, rounds=1)
        history = []
        levels = ["easy", "normal", "hard"]
        while not g.over:
            seat = g.to_move
            k = ai.know("nimmt", g.view(seat), history)
            action = ai.decide("nimmt", k, levels[seat], random.Random(seed), sims=4).action
            history += g.apply(seat, action)
        assert g.result is not None and len(g.result.scores) == 3


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_garbage_every_level_plays_legal_moves(seats):
    states = random_states(Garbage, garbage_random, seats, seed=200 + seats, count=400, every=2)
    phases = set()
    for i, (g, history) in enumerate(states):
        seat = g.to_move
        phases.add(g.phase)
        k = ai.know("garbage", g.view(seat), history)
        for level in ("easy", "normal") + (("hard",) if i % 10 == 0 else ()):
            d = ai.decide("garbage", k, level, random.Random(i), sims=3)
            assert g.is_legal(seat, d.action), (level, d.action)
    assert phases == {"source", "jack"}


# ----------------------------------------------------------- what it knows


def test_nimmt_memory_matches_the_real_game():
    """Remembering the public events, a seat knows every stack's cards and
    every card that went into another hand; its pool is exactly the rest."""
    for g, history in random_states(Nimmt, nimmt_random, 4, seed=7, count=300):
        seat = g.to_move
        k = nimmt_ai.know(g.view(seat), history)
        real = g.to_dict()
        assert {sid: cards for sid, cards in k.stacks} == {s["id"]: s["cards"] for s in real["stacks"]}
        hidden = set(real["draw"])
        for p, hand in enumerate(real["hands"]):
            known = set(cards_of(k.known[p]))
            assert known <= set(hand)
            if p != seat:
                hidden |= set(hand) - known
        assert set(k.pool) == hidden


def test_garbage_memory_matches_the_real_game():
    for g, history in random_states(Garbage, garbage_random, 3, seed=9, count=300, every=2):
        k = garbage_ai.know(g.view(g.to_move), history)
        real = g.to_dict()
        assert k.discard == [TEXT[c] for c in real["discard"]]
        hidden = [TEXT[real["cards"][p][i]] for p in range(g.seats) for i in range(len(real["cards"][p]))
                  if real["down"][p] >> i & 1]
        if k.stock_known is None:
            hidden += [TEXT[c] for c in real["stock"]]
        else:
            assert sorted(k.stock_known) == sorted(TEXT[c] for c in real["stock"])
        assert sorted(k.pool) == sorted(hidden)


# ------------------------------------------------------------------ fair play


def _seen_cards(g: Nimmt, seat: int, history) -> set[int]:
    """Every card this seat has seen this round (its hand, the tops, every
    card named by a public event), computed apart from the players' memory."""
    start = max((i + 1 for i, e in enumerate(history) if e["type"] == "round_start"), default=0)
    seen = set(g.view(seat)["hand"]) | {s["top"] for s in g.view(seat)["stacks"]}
    for e in history[start:]:
        seen |= set(e.get("cards", [])) | {e[k] for k in ("onto", "top", "card") if k in e}
        seen |= {s["top"] for s in e.get("stacks", [])}
    return seen


def _redeal_nimmt(g: Nimmt, seat: int, history, rng: random.Random) -> Nimmt:
    """The same game with every card hidden from ``seat`` dealt anew: the
    other hands' unseen cards and the draw pile are shuffled together and put
    back in the same numbers."""
    real = g.to_dict()
    seen = _seen_cards(g, seat, history)
    hidden = [c for p, hand in enumerate(real["hands"]) if p != seat for c in hand if c not in seen]
    hidden += real["draw"]
    assert not set(real["draw"]) & seen
    shuffled = list(hidden)
    rng.shuffle(shuffled)
    new = iter(shuffled)
    hands = [[c if (p == seat or c in seen) else next(new) for c in hand] for p, hand in enumerate(real["hands"])]
    real["hands"] = [sorted(h) for h in hands]
    real["draw"] = [next(new) for _ in real["draw"]]
    return Nimmt.from_dict(real)


def test_nimmt_decisions_do_not_depend_on_hidden_cards():
    """Re-deal every card the seat has not seen (keeping what it saw): its view
    is the same and so is every level's decision for a fixed search seed."""
    rng = random.Random(5)
    changed = 0
    for i, (g, history) in enumerate(random_states(Nimmt, nimmt_random, 4, seed=31, count=60, every=4)):
        seat = g.to_move
        other = _redeal_nimmt(g, seat, history, rng)
        if other.to_dict()["hands"] != g.to_dict()["hands"]:
            changed += 1
        assert other.view(seat) == g.view(seat)
        for level in ai.LEVELS:
            mine = ai.decide("nimmt", ai.know("nimmt", g.view(seat), history), level, random.Random(i), sims=12)
            theirs = ai.decide("nimmt", ai.know("nimmt", other.view(seat), history), level, random.Random(i),
                               sims=12)
            assert mine == theirs, (level, i)
    assert changed > 50  # the re-deal really moved hidden cards


def _redeal_garbage(g: Garbage, rng: random.Random) -> Garbage:
    """Face-down cards (nobody sees them) and, before a reshuffle, the stock
    shuffled together; after a reshuffle the stock's order only."""
    real = g.to_dict()
    spots = [(p, i) for p in range(g.seats) for i in range(len(real["cards"][p])) if real["down"][p] >> i & 1]
    hidden = [real["cards"][p][i] for p, i in spots]
    reshuffled = real["shuffles"] > g.hand_no  # a deal per hand (plus one) and one per reshuffle
    if not reshuffled:
        hidden += real["stock"]
    rng.shuffle(hidden)
    for (p, i), c in zip(spots, hidden):
        real["cards"][p][i] = c
    if reshuffled:
        rng.shuffle(real["stock"])
    else:
        real["stock"] = hidden[len(spots):]
    return Garbage.from_dict(real)


def test_garbage_decisions_do_not_depend_on_hidden_cards():
    rng = random.Random(6)
    for i, (g, history) in enumerate(random_states(Garbage, garbage_random, 2, seed=41, count=80, every=3)):
        seat = g.to_move
        other = _redeal_garbage(g, rng)
        assert other.view(seat) == g.view(seat)
        for level in ai.LEVELS:
            mine = ai.decide("garbage", ai.know("garbage", g.view(seat), history), level, random.Random(i), sims=10)
            theirs = ai.decide("garbage", ai.know("garbage", other.view(seat), history), level, random.Random(i),
                               sims=10)
            assert mine == theirs, (level, i)


# ---------------------------------------------------------------- determinism


def test_seeded_search_is_reproducible_and_budgeted_search_stops():
    g = Nimmt.new(4, 3)
    history = []
    rng = random.Random(0)
    for _ in range(9):
        history += g.apply(g.to_move, nimmt_random(g, g.to_move, rng))
    k = ai.know("nimmt", g.view(g.to_move), history)
    first = ai.decide("nimmt", k, "hard", random.Random(42), sims=30)
    again = ai.decide("nimmt", k.copy(), "hard", random.Random(42), sims=30)
    assert first == again and first.worlds == 30
    assert first.figures[0].action == first.action
    budgeted = ai.decide("nimmt", k, "hard", random.Random(42), budget=0.01)
    assert 4 <= budgeted.worlds < 400


@pytest.mark.parametrize("game", ["nimmt", "garbage", "take6"])
def test_a_stopped_search_ends_after_one_world_with_a_legal_move(game):
    """A search whose caller gave up (its stop set) ends after its current
    world; unset, the same search looks at every world it was given."""
    if game == "take6":
        states = take6_states(4, seed=11, count=40)
    else:
        cls, player = (Nimmt, nimmt_random) if game == "nimmt" else (Garbage, garbage_random)
        states = [(g, h, g.to_move) for g, h in random_states(cls, player, 3, seed=5, count=60)]
    # a position with a choice to search (with one legal move there is no search: 0 worlds)
    g, history, seat = next((g, h, s) for g, h, s in states
                            if ai.decide(game, ai.know(game, g.view(s), h), "hard", random.Random(0), sims=2).worlds)
    k = ai.know(game, g.view(seat), history)
    stop = threading.Event()
    assert ai.decide(game, k, "hard", random.Random(3), sims=20, stop=stop).worlds == 20
    stop.set()
    stopped = ai.decide(game, k, "hard", random.Random(3), sims=20, stop=stop)
    assert stopped.worlds == 1 and g.is_legal(seat, stopped.action)


def test_hard_takes_the_small_stack_that_ends_the_game_first():
    """Last round, one card each: the hard level plays it out (a card that fits
    wins the round outright) rather than taking a stack."""
    g = Nimmt.from_position([[55], [12, 13]], [[50]], draw=[1, 2, 3], rounds=1, scores=[0, 0])
    k = ai.know("nimmt", g.view(0), [])
    d = ai.decide("nimmt", k, "hard", random.Random(1), sims=5)
    assert str(d.action) == "play 0 55"
    assert d.figures[0].first == 1.0 and d.figures[0].penalty == 0
    assert HEADS[55] == 7


# ------------------------------------------------------------------ 6 nimmt!
# Everyone chooses at once: a state is (game, history, seat) for a seat that
# must act now (a choice, or S2's row); the others may have chosen already.


def take6_states(seats, seed, count, every=2):
    rng = random.Random(seed)
    out = []
    game_seed = seed
    while len(out) < count:
        g = Take6.new(seats, game_seed)
        game_seed += 1
        history = []
        step = 0
        while not g.over and len(out) < count:
            acting = sorted(g.to_act)
            seat = acting[rng.randrange(len(acting))]
            if step % every == 0:
                out.append((Take6.from_dict(g.to_dict()), list(history), seat))
            history += g.apply(seat, take6_random(g, seat, rng))
            step += 1
    return out


@pytest.mark.parametrize("seats", [2, 5, 10])
def test_take6_every_level_plays_legal_moves(seats):
    states = take6_states(seats, seed=300 + seats, count=300)
    phases = set()
    for i, (g, history, seat) in enumerate(states):
        phases.add(g.phase.value)
        k = ai.know("take6", g.view(seat), history)
        for level in ("easy", "normal") + (("hard",) if i % 5 == 0 or g.phase.value == "row" else ()):
            d = ai.decide("take6", k, level, random.Random(i), sims=3)
            assert g.is_legal(seat, d.action), (level, d.action, g.view(seat))
    assert phases == {"choose", "row"}


def test_take6_levels_play_whole_games_against_each_other():
    """Everyone at once, every level at the table: the games end with a result,
    and a seat that chose later saw only *that* the others had chosen."""
    for seed in range(3):
        g = Take6.new(3, seed, deals=1)
        history = []
        levels = ["easy", "normal", "hard"]
        while not g.over:
            for seat in sorted(g.to_act):
                k = ai.know("take6", g.view(seat), history)
                history += g.apply(seat, ai.decide("take6", k, levels[seat], random.Random(seed), sims=4).action)
        assert g.result is not None and len(g.result.scores) == 3


def test_take6_knowledge_counts_every_unseen_card_once():
    """The pool is exactly the cards the seat has not seen this deal: the other
    hands, their hidden choices and the cards not dealt."""
    for g, history, seat in take6_states(4, seed=7, count=80, every=3):
        k = take6_ai.know(g.view(seat), history)
        real = g.to_dict()
        others = [c for p, h in enumerate(real["hands"]) if p != seat for c in h]
        if real["phase"] == "choose":
            others += [c for p, c in enumerate(real["chosen"]) if p != seat and c is not None]
        in_sight = {c for r in real["rows"] for c in r} | set(real["hands"][seat]) | {c for c, _ in real["queue"]}
        in_sight |= {c for p in real["piles"] for c in p}
        undealt = set(range(1, 105)) - in_sight - set(others) - {c for c in real["chosen"] if c is not None}
        assert set(others) <= set(k.pool)
        assert set(k.pool) == set(others) | undealt, g.view(seat)


def _redeal_take6(g: Take6, seat: int, rng: random.Random) -> Take6:
    """Every card ``seat`` has not seen (the other hands, their hidden choices,
    the cards not dealt) dealt afresh; the same counts and who-has-chosen."""
    real = g.to_dict()
    choosing = real["phase"] == "choose"
    seen = {c for r in real["rows"] for c in r} | set(real["hands"][seat]) | {c for c, _ in real["queue"]}
    seen |= {c for p in real["piles"] for c in p}
    if real["chosen"][seat] is not None:
        seen.add(real["chosen"][seat])
    if not choosing:
        seen |= {c for c in real["chosen"] if c is not None}
    hidden = [c for c in range(1, 105) if c not in seen]
    rng.shuffle(hidden)
    new = iter(hidden)
    for p in range(g.seats):
        if p == seat:
            continue
        real["hands"][p] = sorted(next(new) for _ in real["hands"][p])
        if choosing and real["chosen"][p] is not None:
            real["chosen"][p] = next(new)
    return Take6.from_dict(real)


def test_take6_decisions_do_not_depend_on_hidden_cards():
    """Re-deal what the seat has not seen (even the others' hidden choices): its
    view is the same and so is every level's decision for a fixed search seed."""
    rng = random.Random(8)
    changed = 0
    for i, (g, history, seat) in enumerate(take6_states(4, seed=51, count=60, every=3)):
        other = _redeal_take6(g, seat, rng)
        if other.to_dict()["hands"] != g.to_dict()["hands"]:
            changed += 1
        assert other.view(seat) == g.view(seat)
        for level in ai.LEVELS:
            mine = ai.decide("take6", ai.know("take6", g.view(seat), history), level, random.Random(i), sims=12)
            theirs = ai.decide("take6", ai.know("take6", other.view(seat), history), level, random.Random(i),
                               sims=12)
            assert mine == theirs, (level, i)
    assert changed > 50  # the re-deal really moved hidden cards


def test_take6_seeded_search_is_reproducible_and_budgeted_search_stops():
    g = Take6.new(5, 9)
    k = ai.know("take6", g.view(1), [])
    first = ai.decide("take6", k, "hard", random.Random(42), sims=40)
    again = ai.decide("take6", k.copy(), "hard", random.Random(42), sims=40)
    assert first == again and first.worlds == 40
    assert first.figures[0].action == first.action and len(first.figures) == 10
    budgeted = ai.decide("take6", k, "hard", random.Random(42), budget=0.01)
    assert 4 <= budgeted.worlds < search.MAX_WORLDS


def test_take6_hard_takes_the_dearer_row_that_saves_its_next_card():
    """S2, a row to take: the fewest heads (the normal level's row) would leave
    a full row that the seat's last card must then take; the hard level looks
    a turn ahead and takes that full row now, for fewer heads in all."""
    rows = [[60, 61, 62, 63, 64], [5], [70], [80]]  # 7 heads, 2, 3, 3
    hands = [[65], [100]]
    g = Take6.from_dict({**Take6.new(2, 1).to_dict(), "turn": 9, "hands": hands, "rows": rows,
                         "chosen": [2, 90], "queue": [[2, 0], [90, 1]], "phase": "row", "piles": [[], []]})
    assert g.to_move == 0 and HEADS6[5] == 2
    k = ai.know("take6", g.view(0), [])
    assert ai.decide("take6", k, "normal", random.Random(1)).action == PickRow(1)
    d = ai.decide("take6", k, "hard", random.Random(1), sims=20)
    assert d.action == PickRow(0)
    assert d.figures[0].penalty == 7 and d.figures[1].penalty == 9
