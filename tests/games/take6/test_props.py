"""6 nimmt! engine: rules (RULES.md 3, S1-S4) and properties over random games."""
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.protocol import IllegalAction, to_act
from core.games.take6.engine import (
    CARDS, HEADS, Choose, Phase, PickRow, Take6, fewest_heads_row, heads, normal_player, random_player,
)

FAST = settings(max_examples=40, deadline=None)
#: (seats, seed, players' seed, player, deals, variant): the tactical variant (only the cards
#: 1 to 10 x players + 4) passes every property the standard game does
games = st.tuples(st.integers(2, 10), st.integers(0, 2**32 - 1), st.integers(0, 2**16),
                  st.sampled_from(["random", "normal"]), st.sampled_from([None, 1, 2]),
                  st.sampled_from([None, "tactical"]))
PLAYERS = {"random": random_player, "normal": normal_player}


def ints(value):
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, dict):
        return [i for v in value.values() for i in ints(v)]
    if isinstance(value, (list, tuple)):
        return [i for v in value for i in ints(v)]
    return []


def cards_in_play(g: Take6) -> list[int]:
    cards = [c for h in g.hands for c in h] + [c for r in g.rows for c in r] + [c for p in g.piles for c in p]
    if g.phase is Phase.CHOOSE:
        cards += [c for c in g.chosen if c is not None]
    else:
        cards += [c for c, _ in g.queue]  # revealed, not placed yet
    return cards


def play(seats, seed, pseed, kind, deals, check=None, variant=None):
    g = Take6.new(seats, seed, deals=deals, variant=variant)
    rng = random.Random(pseed)
    player = PLAYERS[kind]
    steps = 0
    while not g.over:
        seat = rng.choice(sorted(to_act(g)))
        if check:
            check(g)
        g.apply(seat, player(g, seat, rng))
        steps += 1
        assert steps < 20000
    return g


def test_heads_s1():
    assert sum(HEADS) == 171 and HEADS[55] == 7 and HEADS[44] == 5 and HEADS[30] == 3 and HEADS[25] == 2
    assert HEADS[104] == 1 and len(HEADS) == CARDS + 1


def test_a_deal_deals_ten_each_and_four_rows():
    g = Take6.new(4, 3)
    assert [len(h) for h in g.hands] == [10] * 4 and all(h == sorted(h) for h in g.hands)
    assert [len(r) for r in g.rows] == [1] * 4
    assert g.to_act == frozenset(range(4)) and g.to_move is None


def rigged(rows, hands, **options):
    """A game in a chosen position (through its own serialised form)."""
    g = Take6.new(len(hands), 1, **options)
    data = g.to_dict()
    data.update(rows=rows, hands=hands, chosen=[None] * len(hands))
    return Take6.from_dict(data)


def test_choices_stay_secret_until_the_last_one_then_place_lowest_first():
    g = rigged([[10], [20], [30], [40]], [[12, 90], [11, 91], [41, 92]])
    ev = g.apply(0, Choose(12))
    assert ev == [{"type": "chose", "seat": 0}]
    for seat in (1, 2, None):
        v = g.view(seat)
        assert v["chosen"] == [True, False, False]
        assert 12 not in ints(v)  # the chosen card is nowhere in another seat's view
    assert g.view(0)["my_choice"] == 12 and g.view(1)["my_choice"] is None
    with pytest.raises(IllegalAction):
        g.apply(0, Choose(90))  # already chose
    g.apply(1, Choose(11))
    ev = g.apply(2, Choose(41))
    reveal = next(e for e in ev if e["type"] == "reveal")
    assert reveal["cards"] == [[1, 11], [0, 12], [2, 41]]
    assert g.rows == [[10, 11, 12], [20], [30], [40, 41]]
    assert ev[-1] == {"type": "turn", "seats": [0, 1, 2]}


def test_sixth_card_takes_the_row():
    g = rigged([[1, 2, 3, 4, 5], [20], [30], [40]], [[6, 90], [21, 91]])
    g.apply(0, Choose(6))
    ev = g.apply(1, Choose(21))
    sixth = next(e for e in ev if e["type"] == "sixth")
    assert sixth["seat"] == 0 and sixth["cards"] == [1, 2, 3, 4, 5] and sixth["heads"] == 1 + 1 + 1 + 1 + 2
    assert g.rows[0] == [6] and g.piles[0] == [1, 2, 3, 4, 5]


def test_low_card_asks_its_player_for_a_row_before_the_next_card_s2():
    g = rigged([[10], [20, 25], [30], [40]], [[5, 90], [6, 91], [50, 92]])
    g.apply(0, Choose(5))
    g.apply(2, Choose(50))
    ev = g.apply(1, Choose(6))
    assert ev[-1] == {"type": "turn", "seat": 0} and g.phase is Phase.ROW
    assert g.to_act == frozenset({0}) and g.to_move == 0
    assert g.view(2)["pending"] == [[0, 5], [1, 6], [2, 50]]  # revealed: public
    with pytest.raises(IllegalAction):
        g.apply(1, PickRow(0))
    ev = g.apply(0, PickRow(1))
    took = ev[0]
    assert took["type"] == "took_row" and took["cards"] == [20, 25] and took["heads"] == 5
    assert g.rows == [[10], [5, 6], [30], [40, 50]] and g.phase is Phase.CHOOSE


def test_timeout_row_is_fewest_heads_then_fewer_cards_then_earlier():
    assert fewest_heads_row([[55], [10], [1, 2, 3], [4, 6, 7]]) == 1  # 3 heads vs 3 cards of 1
    assert fewest_heads_row([[3, 4], [1], [2], [55]]) == 1
    g = rigged([[10], [20], [30, 31], [40]], [[5, 90], [95, 91]])
    g.apply(0, Choose(5))
    g.apply(1, Choose(95))
    assert normal_player(g, 0, random.Random(0)) == PickRow(0)


def test_game_ends_after_the_deal_reaching_the_limit_s4():
    g = play(4, 11, 3, "random", None)
    r = g.result
    assert max(r.scores) >= 66
    # the deal before did not reach it: totals grow by at most the deal's penalties
    assert r.rounds == g.deal and r.places == tuple(1 + sum(o < s for o in r.scores) for s in r.scores)


def test_fixed_number_of_deals():
    g = play(3, 5, 1, "normal", 2)
    assert g.deal == 2 and g.result.rounds == 2
    assert sum(s["deals_won"] for s in g.result.stats) >= 2


@FAST
@given(games)
def test_cards_are_conserved_and_penalties_are_the_taken_heads(params):
    seats, seed, pseed, kind, deals, variant = params

    def check(g):
        cards = cards_in_play(g)
        assert len(cards) == len(set(cards)) == 10 * seats + 4 and all(1 <= c <= CARDS for c in cards)
        if variant == "tactical":  # every card of the deck is in play: none is unknown
            assert sorted(cards) == list(range(1, 10 * seats + 5))
        assert all(1 <= len(r) <= 5 for r in g.rows)

    g = play(seats, seed, pseed, kind, deals, check, variant)
    assert len(g.result.scores) == seats


@FAST
@given(games)
def test_replay_and_serialise_round_trip(params):
    seats, seed, pseed, kind, deals, variant = params
    g = play(seats, seed, pseed, kind, deals, variant=variant)
    assert g.options.get("variant") == variant
    again = Take6.replay(seats, seed, g.options, g.log)
    assert again.to_dict() == g.to_dict()
    # every prefix survives a JSON round trip and goes on identically
    cut = len(g.log) // 2
    half = Take6.replay(seats, seed, g.options, g.log[:cut])
    restored = Take6.from_dict(json.loads(json.dumps(half.to_dict())))
    for seat, text in g.log[cut:]:
        assert restored.apply(seat, restored.parse(text)) == half.apply(seat, half.parse(text))
    assert restored.to_dict() == g.to_dict()


def rehide(g: Take6, seat, rng):
    """The same game with every card ``seat`` may not see dealt anew: other
    hands, other seats' pending choices and the undealt cards shuffled."""
    data = g.to_dict()
    used = set(cards_in_play(g))
    hidden_seats = [s for s in range(g.seats) if s != seat]
    pool = [c for s in hidden_seats for c in data["hands"][s]]
    if g.phase is Phase.CHOOSE:
        pool += [data["chosen"][s] for s in hidden_seats if data["chosen"][s] is not None]
    pool += [c for c in range(1, g.cards + 1) if c not in used]
    rng.shuffle(pool)
    for s in hidden_seats:
        n = len(data["hands"][s])
        data["hands"][s], pool = sorted(pool[:n]), pool[n:]
        if g.phase is Phase.CHOOSE and data["chosen"][s] is not None:
            data["chosen"][s], pool = pool[0], pool[1:]
    return Take6.from_dict(data)


@FAST
@given(games)
def test_views_do_not_change_when_hidden_cards_are_dealt_anew(params):
    seats, seed, pseed, kind, deals, variant = params
    rng = random.Random(seed)

    def check(g):
        if rng.random() < 0.3:
            seat = rng.randrange(seats)
            other = rehide(g, seat, rng)
            assert other.view(seat) == g.view(seat)
            assert other.view(None) == g.view(None)
            if seat in g.to_act:  # the computer decides from the view alone
                assert normal_player(other, seat, random.Random(1)) == normal_player(g, seat, random.Random(1))

    play(seats, seed, pseed, kind, 1 if deals is None else deals, check, variant)


def test_same_seed_same_game_other_seed_other_deal():
    a, b, c = Take6.new(5, 99), Take6.new(5, 99), Take6.new(5, 100)
    assert a.to_dict() == b.to_dict() and a.hands != c.hands


def test_normal_player_beats_random_player_on_average():
    totals = {"normal": 0, "random": 0}
    for seed in range(30):
        g = Take6.new(2, seed, deals=1)
        rng = random.Random(seed)
        players = [normal_player, random_player] if seed % 2 else [random_player, normal_player]
        while not g.over:
            seat = min(g.to_act)
            g.apply(seat, players[seat](g, seat, rng))
        for seat, fn in enumerate(players):
            totals["normal" if fn is normal_player else "random"] += g.scores[seat]
    assert totals["normal"] < totals["random"]


def test_heads_helper():
    assert heads([]) == 0 and heads([55, 55 - 44]) == 12


def test_the_tactical_variant_deals_exactly_the_cards_in_play_and_computers_know_the_rest():
    """Only 1 to 10 x players + 4: after the deal, the cards a seat does not see are exactly
    the other hands, which its computer player's knowledge holds as its pool."""
    from core.games.take6.players import know

    g = Take6.new(4, 9, variant="tactical")
    assert sorted([c for h in g.hands for c in h] + [r[0] for r in g.rows]) == list(range(1, 45))
    k = know(g.view(0), [])
    assert sorted(k.pool) == sorted(c for h in g.hands[1:] for c in h)
    g.apply(0, normal_player(g, 0, random.Random(1)))  # the computer plays it
    with pytest.raises(Exception):
        Take6.new(4, 9, variant="nonsense")
