"""Garbage property tests: random full games with invariants at every step.

Kept under a few seconds each: hypothesis draws seats, seed, the starting
slot count (short games with few slots, some full 10-slot games) and the
players; every game is bounded (no endless game in random play).
"""
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.games.garbage.engine import (JACK, QUEEN, RANK, SLOTS_OF, Action, Discard, Draw, Garbage, Jack, greedy_player,
                                       random_player)
from core.protocol import IllegalAction, places_from_scores

# A generous bound: a full 6-seat 10-slot game takes ~1000 decisions.
MAX_DECISIONS = 20_000
UNIVERSE: list[Action] = [Draw(), Discard(), *(Jack(k) for k in range(0, 12))]
END_EVENTS = {"turn", "choose_jack", "game_over"}

games = st.tuples(
    st.integers(2, 6),  # seats
    st.integers(0, 2**32),  # seed
    st.integers(1, 10),  # starting slots
    st.sampled_from(["random", "greedy", "mixed"]),
)
PLAYERS = {"random": random_player, "greedy": greedy_player}


def check_invariants(g: Garbage) -> None:
    # Every card of every deck is accounted for, exactly once.
    cards = [c for lay in g.cards for c in lay] + g.stock + g.discard
    if g.in_hand is not None:
        cards.append(g.in_hand)
    assert sorted(cards) == list(range(52 * g.decks))
    # Layouts never hold a wrong face-up card: slot k holds rank k or a Jack.
    for s in range(g.seats):
        n = g.slots[s]
        if g.over and s == g.winner:
            n = 1  # the last hand's layout stays on show; the winner's count is 0
        assert len(g.cards[s]) == n
        assert 0 <= g.down[s] < (1 << n)
        for k in range(1, n + 1):
            if not g.down[s] >> (k - 1) & 1:
                assert RANK[g.cards[s][k - 1]] in (k, JACK)
        if not g.over:
            assert g.down[s], "a complete layout has already won the hand (G3)"
    assert sum(g.hands_won) == g.hand_no - (0 if g.over else 1)
    if g.over:
        assert g.phase == "over" and g.to_move is None and g.in_hand is None
        assert g.winner is not None and g.slots[g.winner] == 0
    elif g.phase == "jack":
        assert g.in_hand is not None and RANK[g.in_hand] == JACK
        assert g.to_move is not None
        assert len(SLOTS_OF[g.down[g.to_move]]) >= 2  # one slot left: placed automatically
    else:
        assert g.phase == "source" and g.in_hand is None
        assert g.first_turn == (len(g.discard) == 0)  # the first turn's dead card opens the discard


def check_view_hides(g: Garbage, rng: random.Random) -> None:
    """Re-deal everything nobody may see (face-down cards, stock order): same view."""
    before = g.view(None)
    assert json.loads(json.dumps(before)) == before
    for s in range(g.seats):
        assert g.view(s) == {**before, "seat": s}
    h = g.copy()
    hidden = [c for s in range(h.seats) for k in SLOTS_OF[h.down[s]] for c in (h.cards[s][k - 1],)] + h.stock
    rng.shuffle(hidden)
    it = iter(hidden)
    for s in range(h.seats):
        for k in SLOTS_OF[h.down[s]]:
            h.cards[s][k - 1] = next(it)
    h.stock = list(it)
    assert h.view(None) == before
    for s in range(h.seats):
        assert h.view(s) == g.view(s)


def check_actions(g: Garbage, rng: random.Random) -> None:
    """is_legal agrees with legal_actions; every legal action applies on a
    copy; a sampled illegal one raises and leaves the state unchanged."""
    for s in range(g.seats):
        legal = g.legal_actions(s)
        for a in UNIVERSE:
            assert g.is_legal(s, a) == (a in legal), (s, a, legal)
    seat = g.to_move
    assert seat is not None
    legal = g.legal_actions(seat)
    assert legal
    for a in legal:
        c = g.copy()
        ev = c.apply(seat, a)
        assert ev and ev[-1]["type"] in END_EVENTS
        assert json.loads(json.dumps(ev)) == ev
    illegal = [(seat, a) for a in UNIVERSE if a not in legal]
    illegal += [((seat + 1) % g.seats, rng.choice(UNIVERSE)), (g.seats, Draw())]
    s, a = rng.choice(illegal)
    before = g.to_dict()
    try:
        g.apply(s, a)
    except IllegalAction as e:
        assert e.code in {
            "not_your_turn", "bad_seat", "wrong_phase", "discard_unplaceable", "first_turn_stock",
            "discard_empty", "not_face_down", "no_such_slot",
        }
    else:
        raise AssertionError(f"{a} by {s} should be illegal")
    assert g.to_dict() == before


def play(seats, seed, slots, kind, deep=True):
    g = Garbage.new(seats=seats, seed=seed, slots=slots)
    rng = random.Random(seed)
    check_rng = random.Random(~seed)
    players = [PLAYERS[kind] if kind != "mixed" else (random_player, greedy_player)[s % 2] for s in range(seats)]
    decisions = 0
    dead_reasons = set()
    while not g.over:
        assert decisions < MAX_DECISIONS, "game does not end"
        check_invariants(g)
        if deep:
            check_actions(g, check_rng)
            if decisions % 7 == 0:
                check_view_hides(g, check_rng)
        seat = g.to_move
        ev = g.apply(seat, players[seat](g, seat, rng))
        assert ev[-1]["type"] in END_EVENTS
        dead_reasons.update(e["reason"] for e in ev if e["type"] == "dead")
        decisions += 1
    check_invariants(g)
    assert "no_slot" not in dead_reasons  # G3 ends the hand before a Jack could be stranded
    return g, decisions


def check_final(g: Garbage) -> None:
    r = g.result
    assert r is not None and g.winner is not None
    assert r.scores == tuple(g.slots) and r.scores[g.winner] == 0
    assert r.winners == (g.winner,) and r.places == places_from_scores(r.scores)
    assert r.rounds == g.hand_no == sum(s["hands_won"] for s in r.stats)
    assert r.stats[g.winner]["hands_won"] == g.options["slots"]
    assert g.legal_actions(g.winner) == []
    assert Garbage.replay(g.seats, g.seed, g.options, g.log) == g
    d = json.loads(json.dumps(g.to_dict()))
    assert Garbage.from_dict(d) == g


@pytest.mark.parametrize("seats", range(2, 7))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), slots=st.integers(1, 10), kind=st.sampled_from(["random", "greedy", "mixed"]))
def test_random_games_keep_every_invariant(seats, seed, slots, kind):
    g, _ = play(seats, seed, slots, kind)
    check_final(g)


@pytest.mark.parametrize("seats", range(2, 7))
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["random", "greedy", "mixed"]))
def test_full_games_end_and_replay(seats, seed, kind):
    g, decisions = play(seats, seed, 10, kind, deep=False)
    assert decisions < MAX_DECISIONS
    check_final(g)


@settings(max_examples=40, deadline=None)
@given(games, st.integers(0, 600))
def test_mid_game_round_trips_and_replays(params, stop):
    seats, seed, slots, kind = params
    g = Garbage.new(seats=seats, seed=seed, slots=slots)
    rng = random.Random(seed)
    for _ in range(stop):
        if g.over:
            break
        g.apply(g.to_move, (random_player if kind == "random" else greedy_player)(g, g.to_move, rng))
    d = json.loads(json.dumps(g.to_dict()))
    h = Garbage.from_dict(d)
    assert h == g and h.view(None) == g.view(None)
    assert Garbage.replay(seats, seed, g.options, g.log) == g
    assert all(g.parse(text) is not None and str(g.parse(text)) == text for _, text in g.log)
    # the restored game plays on identically
    r1, r2 = random.Random(1), random.Random(1)
    for _ in range(50):
        if g.over:
            break
        a = random_player(g, g.to_move, r1)
        assert random_player(h, h.to_move, r2) == a
        assert g.apply(g.to_move, a) == h.apply(h.to_move, a)
    assert h == g


@pytest.mark.parametrize("seats", range(2, 7))
@pytest.mark.parametrize("seed", [0, 1])
def test_full_size_games_deep_checks(seats, seed):
    # hypothesis likes small layouts: make sure full 10-slot games get the deep checks too
    g, _ = play(seats, seed, 10, "mixed")
    check_final(g)


def test_queens_and_kings_never_lie_in_a_layout_face_up():
    g, _ = play(4, 12345, 10, "mixed", deep=False)
    for s in range(g.seats):
        for k in range(1, g.slots[s] + 1):
            if not g.down[s] >> (k - 1) & 1:
                assert RANK[g.cards[s][k - 1]] < QUEEN


@pytest.mark.parametrize("seats", range(2, 7))
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), kind=st.sampled_from(["random", "greedy", "mixed"]))
def test_the_short_variant_keeps_every_invariant_and_replays(seats, seed, kind):
    """The registry's short Garbage (fewer starting slots) through the deep checks of a
    whole game (card conservation, hidden layouts, replay), its computers playing it."""
    from core.games.garbage import SPEC

    variant = SPEC.variant("short")
    assert variant is not None and variant.options["slots"] < 10
    g, _ = play(seats, seed, variant.options["slots"], kind)
    assert g.options == {"slots": variant.options["slots"]}
    check_final(g)
