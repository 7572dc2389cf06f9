"""Garbage rules (RULES.md section 2, house rules G1-G4) from hand-made positions.

Positions are built with ``Garbage.from_position``: per seat the layout from
slot 1, a face-down card written ``?XX``; the stock in draw order; the
discard bottom to top.
"""
import json
import random

import pytest

from core.games.garbage.engine import (
    JACK,
    RANK,
    Discard,
    Draw,
    Garbage,
    Jack,
    card_text,
    greedy_player,
    random_player,
)
from core.protocol import GameError, IllegalAction, InvalidAction, Result


def types(events):
    return [e["type"] for e in events]


def code_of(game, seat, action):
    before = game.to_dict()
    with pytest.raises(IllegalAction) as info:
        game.apply(seat, action)
    assert game.to_dict() == before, "a refused action must leave the state unchanged"
    assert not game.is_legal(seat, action)
    return info.value.code


def all_cards(game):
    cards = [c for lay in game.cards for c in lay] + game.stock + game.discard
    if game.in_hand is not None:
        cards.append(game.in_hand)
    return sorted(cards)


# --------------------------------------------------------------------------
# Setup


@pytest.mark.parametrize("seats,decks", [(2, 1), (3, 2), (4, 2), (5, 3), (6, 3)])
def test_new_game_decks_slots_and_deal(seats, decks):
    g = Garbage.new(seats=seats, seed=3)
    assert g.decks == decks
    assert g.slots == [10] * seats
    assert all_cards(g) == list(range(52 * decks))
    v = g.view(None)
    assert v["stock"] == 52 * decks - 10 * seats
    assert v["discard_top"] is None and v["discard_count"] == 0
    assert all(p["layout"] == [None] * 10 for p in v["players"])
    assert g.hand_no == 1 and g.phase == "source" and not g.over and g.result is None


def test_g4_first_start_player_is_random_from_the_seed():
    # G4: drawn at random, but reproducible from the seed.
    starts = {Garbage.new(4, seed).to_move for seed in range(60)}
    assert starts == {0, 1, 2, 3}
    for seed in range(10):
        a, b = Garbage.new(4, seed), Garbage.new(4, seed)
        assert a.to_move == b.to_move == a.start_seat
        assert a.to_dict() == b.to_dict()


def test_bad_seats_and_options():
    for bad in (1, 7, "4"):
        with pytest.raises(GameError) as info:
            Garbage.new(bad, 1)
        assert info.value.code == "bad_seats"
    with pytest.raises(GameError) as info:
        Garbage.new(3, 1, slots=11)
    assert info.value.code == "bad_option"
    with pytest.raises(GameError) as info:
        Garbage.new(3, 1, jokers=True)
    assert info.value.code == "bad_option"
    assert Garbage.new(3, 1, slots=4).slots == [4, 4, 4]


# --------------------------------------------------------------------------
# A turn: chains


def test_chain_until_a_queen_ends_the_turn():
    g = Garbage.from_position(["?5C ?3D ?QS ?AS", "?KS ?KH"], stock="2H 9S")
    ev = g.apply(0, Draw())
    assert ev == [
        {"type": "drew", "seat": 0, "source": "stock", "card": "2H"},
        {"type": "placed", "seat": 0, "slot": 2, "card": "2H", "uncovered": "3D"},
        {"type": "placed", "seat": 0, "slot": 3, "card": "3D", "uncovered": "QS"},
        {"type": "dead", "seat": 0, "card": "QS", "reason": "dead_rank"},
        {"type": "discarded", "seat": 0, "card": "QS"},
        {"type": "turn", "seat": 1},
    ]
    v = g.view(1)
    assert v["players"][0]["layout"] == [None, "2H", "3D", None]
    assert v["discard_top"] == "QS" and v["to_move"] == 1 and v["phase"] == "source"
    assert g.log == [(0, "stock")]


def test_king_is_dead():
    g = Garbage.from_position(["?5C ?3D", "?AS ?2S"], stock="KD")
    ev = g.apply(0, Draw())
    assert ev[1] == {"type": "dead", "seat": 0, "card": "KD", "reason": "dead_rank"}
    assert g.view(None)["discard_top"] == "KD" and g.to_move == 1


def test_rank_above_slot_count_is_dead():
    # A 10 is unplayable for a player with 9 slots.
    g = Garbage.from_position(["?KD ?KH ?KS ?KC ?QD ?QH ?QS ?QC ?2H", "?AS ?2S"], stock="10H")
    ev = g.apply(0, Draw())
    assert ev[1] == {"type": "dead", "seat": 0, "card": "10H", "reason": "above_slots"}
    # ... also when uncovered mid-chain
    g = Garbage.from_position(["?5C ?7D ?3H", "?AS ?2S"], stock="2H")
    ev = g.apply(0, Draw())
    assert types(ev) == ["drew", "placed", "dead", "discarded", "turn"]
    assert ev[2]["reason"] == "above_slots" and ev[2]["card"] == "7D"


def test_rank_whose_slot_is_already_face_up_is_dead():
    g = Garbage.from_position(["AS ?2C ?3C", "?AD ?2D"], stock="AH")
    ev = g.apply(0, Draw())
    assert ev[1] == {"type": "dead", "seat": 0, "card": "AH", "reason": "slot_filled"}
    assert g.view(None)["players"][0]["layout"] == ["AS", None, None]


# --------------------------------------------------------------------------
# Jacks


def test_jack_asks_for_a_face_down_slot_then_goes_on():
    g = Garbage.from_position(["?5C 2C ?3H ?KH ?9D", "?AS ?2S"], stock="JS")
    ev = g.apply(0, Draw())
    assert ev[-1] == {"type": "choose_jack", "seat": 0, "slots": [1, 3, 4, 5]}
    v = g.view(None)
    assert v["phase"] == "jack" and v["in_hand"] == "JS" and v["jack_slots"] == [1, 3, 4, 5]
    assert v["to_move"] == 0 and not v["can_take_discard"]
    assert g.legal_actions(0) == [Jack(1), Jack(3), Jack(4), Jack(5)]
    assert g.legal_actions(1) == []
    assert code_of(g, 0, Jack(2)) == "not_face_down"
    assert code_of(g, 0, Jack(0)) == "no_such_slot"
    assert code_of(g, 0, Jack(6)) == "no_such_slot"
    assert code_of(g, 0, Draw()) == "wrong_phase"
    assert code_of(g, 0, Discard()) == "wrong_phase"
    assert code_of(g, 1, Jack(1)) == "not_your_turn"
    ev = g.apply(0, Jack(1))
    assert ev == [
        {"type": "jack_placed", "seat": 0, "slot": 1, "uncovered": "5C"},
        {"type": "placed", "seat": 0, "slot": 5, "card": "5C", "uncovered": "9D"},
        {"type": "dead", "seat": 0, "card": "9D", "reason": "above_slots"},
        {"type": "discarded", "seat": 0, "card": "9D"},
        {"type": "turn", "seat": 1},
    ]
    assert g.view(None)["players"][0]["layout"] == ["JS", "2C", None, None, "5C"]
    assert g.view(None)["in_hand"] is None and g.phase == "source"
    assert g.log == [(0, "stock"), (0, "jack 1")]


def test_jack_action_while_choosing_source_is_wrong_phase():
    g = Garbage.from_position(["?5C ?3H", "?AS ?2S"], stock="AH")
    assert code_of(g, 0, Jack(1)) == "wrong_phase"


def test_jack_with_one_face_down_slot_left_is_placed_automatically():
    # Engine choice (documented in core.games.garbage.engine): nothing to choose, so no question.
    g = Garbage.from_position(["AS ?9H 3S", "?AD ?2D"], stock="JD")
    ev = g.apply(0, Draw())
    assert types(ev)[:3] == ["drew", "jack_placed", "hand_won"]
    assert ev[1] == {"type": "jack_placed", "seat": 0, "slot": 2, "uncovered": "9H"}


def test_g2_pip_card_displaces_face_up_jack_which_moves_on():
    # G2: the 2 always takes the Jack's place; the Jack goes on as a Jack.
    g = Garbage.from_position(["?4C JH ?3C ?KS", "?AS ?2S"], stock="2D")
    ev = g.apply(0, Draw())
    assert ev == [
        {"type": "drew", "seat": 0, "source": "stock", "card": "2D"},
        {"type": "swapped", "seat": 0, "slot": 2, "card": "2D"},
        {"type": "choose_jack", "seat": 0, "slots": [1, 3, 4]},
    ]
    assert g.view(None)["players"][0]["layout"] == [None, "2D", None, None]
    assert g.view(None)["in_hand"] == "JH"
    # The Jack uncovers the 3 of its own slot: G2 again, the 3 displaces it.
    ev = g.apply(0, Jack(3))
    assert ev == [
        {"type": "jack_placed", "seat": 0, "slot": 3, "uncovered": "3C"},
        {"type": "swapped", "seat": 0, "slot": 3, "card": "3C"},
        {"type": "choose_jack", "seat": 0, "slots": [1, 4]},
    ]
    ev = g.apply(0, Jack(4))
    assert types(ev) == ["jack_placed", "dead", "discarded", "turn"]
    assert ev[1] == {"type": "dead", "seat": 0, "card": "KS", "reason": "dead_rank"}
    assert g.view(None)["players"][0]["layout"] == [None, "2D", "3C", "JH"]


def test_g2_swapped_jack_chain_can_swap_again_and_win():
    # 3 displaces the Jack on 3; the Jack (one face-down slot left) goes to
    # slot 1 by itself and completes the layout (G3).
    g = Garbage.from_position(["?AH 2S JC", "?AS ?3S"], stock="3D")
    ev = g.apply(0, Draw())
    assert types(ev)[:4] == ["drew", "swapped", "jack_placed", "hand_won"]
    assert ev[2] == {"type": "jack_placed", "seat": 0, "slot": 1, "uncovered": "AH"}


def test_jack_with_no_face_down_slot_is_dead():
    # Unreachable in play (G3 ends the hand as soon as the last slot turns
    # face-up), but the rule is implemented: drive the resolver directly.
    g = Garbage.from_position(["?AH 2S", "?AS ?2D"], stock="KS")
    g.down[0] = 0
    ev: list = []
    jack = next(c for c in g.discard if RANK[c] == JACK)
    g.discard.remove(jack)
    g._resolve(0, jack, ev)
    assert ev[0] == {"type": "dead", "seat": 0, "card": card_text(jack), "reason": "no_slot"}


# --------------------------------------------------------------------------
# Taking the discard (G1) and the first turn


def test_g1_discard_only_when_placeable():
    base = dict(layouts=["AS ?2C ?3C JD ?QH", "?AD ?2D"], stock="KS KH")
    # placeable: face-down slot of that rank, a Jack, a rank whose slot holds a face-up Jack
    for top in ("2H", "3S", "JS", "4C"):
        g = Garbage.from_position(discard=[top], **base)
        assert g.view(0)["can_take_discard"] is True
        assert g.legal_actions(0) == [Draw(), Discard()]
        ev = g.apply(0, Discard())
        assert ev[0] == {"type": "drew", "seat": 0, "source": "discard", "card": top}
    # not placeable: filled slot, above N, Queen, King
    for top in ("AH", "6S", "QS", "KD"):
        g = Garbage.from_position(discard=[top], **base)
        assert g.view(0)["can_take_discard"] is False
        assert g.legal_actions(0) == [Draw()]
        assert code_of(g, 0, Discard()) == "discard_unplaceable"


def test_discard_empty():
    g = Garbage.from_position(["?AS ?2C", "?AD ?2D"], stock="KS", fill=False)
    assert code_of(g, 0, Discard()) == "discard_empty"


def test_first_turn_of_a_hand_always_draws_from_the_stock():
    g = Garbage.from_position(["?AS ?2C", "?AD ?2D"], stock="KS", discard="2H", first_turn=True)
    assert g.legal_actions(0) == [Draw()]
    assert g.view(0)["can_take_discard"] is False
    assert code_of(g, 0, Discard()) == "first_turn_stock"
    g.apply(0, Draw())
    assert not g.first_turn
    # New games and new hands start with a first turn too.
    g = Garbage.new(2, 5)
    assert g.first_turn and g.legal_actions(g.to_move) == [Draw()]


# --------------------------------------------------------------------------
# Stock


def test_reshuffle_keeps_the_discard_top():
    g = Garbage.from_position(["?AS ?2C ?3C", "?AD ?2D"], stock=[], discard="5H 6H 7H QD", fill=False)
    ev = g.apply(0, Draw())
    assert ev[0] == {"type": "reshuffle", "count": 3}
    assert ev[1]["type"] == "drew" and ev[1]["card"] in ("5H", "6H", "7H")
    # QD stayed at the bottom of the discard pile, the dead card lies on it
    assert card_text(g.discard[0]) == "QD" and len(g.discard) == 2
    assert len(g.stock) == 2
    # the reshuffle is seeded
    h = Garbage.from_position(["?AS ?2C ?3C", "?AD ?2D"], stock=[], discard="5H 6H 7H QD", fill=False)
    h.apply(0, Draw())
    assert h.to_dict() == g.to_dict()


# --------------------------------------------------------------------------
# Winning a hand (G3) and the next hand


def test_g3_hand_won_mid_chain_shrinks_winner_and_winner_starts():
    g = Garbage.from_position(["?2H ?3S ?KD", "?AD ?2D ?3D", "?4D 2C ?3H"], stock="AC", hand_no=2)
    ev = g.apply(0, Draw())
    assert types(ev) == ["drew", "placed", "placed", "placed", "hand_won", "hand_start", "turn"]
    # AC uncovers 2H, 2H uncovers 3S, 3S uncovers KD: the layout is complete,
    # the hand is won at once, the KD is not played on.
    assert ev[3] == {"type": "placed", "seat": 0, "slot": 3, "card": "3S", "uncovered": "KD"}
    assert ev[4] == {"type": "hand_won", "seat": 0, "hand": 2, "slots": 2}
    assert ev[5] == {"type": "hand_start", "hand": 3, "start": 0, "slots": [2, 3, 3]}
    assert ev[6] == {"type": "turn", "seat": 0}
    assert g.slots == [2, 3, 3] and g.hands_won == [1, 0, 0]
    assert g.hand_no == 3 and g.to_move == 0 and g.start_seat == 0 and g.first_turn
    v = g.view(None)
    assert [p["layout"] for p in v["players"]] == [[None] * 2, [None] * 3, [None] * 3]
    assert v["discard_count"] == 0 and v["stock"] == 52 * 2 - 8
    assert all_cards(g) == list(range(104))
    assert g.legal_actions(0) == [Draw()]


def test_tens_are_unplayable_with_nine_slots():
    g = Garbage.from_position(["?KD ?KH ?KS ?KC ?QD ?QH ?QS ?QC ?2H", "?AD ?2D"], stock="10C")
    assert g.apply(0, Draw())[1]["reason"] == "above_slots"


@pytest.mark.parametrize("stock,last", [("AH", "placed"), ("JC", "jack_placed")])
def test_game_ends_when_a_single_slot_is_filled_by_an_ace_or_a_jack(stock, last):
    g = Garbage.from_position(["?KS", "?AD ?2D ?3D", "?AC ?2C ?3C ?4C ?5C", "?AH ?2H ?3H"], stock=stock,
                              hands_won=[9, 0, 0, 0])
    ev = g.apply(0, Draw())
    assert types(ev) == ["drew", last, "hand_won", "game_over"]
    assert ev[2] == {"type": "hand_won", "seat": 0, "hand": 1, "slots": 0}
    assert ev[3] == {"type": "game_over", "winner": 0, "scores": [0, 3, 5, 3], "places": [1, 2, 4, 2]}
    assert g.over and g.to_move is None and g.phase == "over"
    # ranking: fewer slots better, ties share (seats 1 and 3)
    assert g.result == Result(
        scores=(0, 3, 5, 3), places=(1, 2, 4, 2), winners=(0,), rounds=1,
        stats=({"hands_won": 10}, {"hands_won": 0}, {"hands_won": 0}, {"hands_won": 0}),
    )
    v = g.view(None)
    assert v["phase"] == "over" and v["to_move"] is None and not v["can_take_discard"]
    assert g.legal_actions(0) == [] and g.legal_actions(1) == []
    assert code_of(g, 1, Draw()) == "game_over"
    assert code_of(g, 0, Draw()) == "game_over"


# --------------------------------------------------------------------------
# Protocol details


def test_errors_seat_and_syntax():
    g = Garbage.from_position(["?AS ?2C", "?AD ?2D"], stock="KS")
    assert code_of(g, 1, Draw()) == "not_your_turn"
    for bad in (-1, 2, None, "0", True):
        assert code_of(g, bad, Draw()) == "bad_seat"
    with pytest.raises(InvalidAction) as info:
        g.apply(0, "stock")
    assert info.value.code == "invalid_syntax"
    for text in ("", "jack", "jack x", "draw 2", "pass"):
        with pytest.raises(InvalidAction) as info:
            g.parse(text)
        assert info.value.code == "invalid_syntax"
    with pytest.raises(IllegalAction) as info:
        g.view(5)
    assert info.value.code == "bad_seat"


@pytest.mark.parametrize("action", [Draw(), Discard(), Jack(1), Jack(10)])
def test_actions_round_trip_through_text_and_repr(action):
    g = Garbage.new(2, 1)
    assert g.parse(str(action)) == action
    assert eval(repr(action)) == action
    assert hash(action) == hash(g.parse(str(action)))


def test_view_shape_is_json_and_same_for_every_seat():
    g = Garbage.new(3, 11)
    for _ in range(30):
        g.apply(g.to_move, greedy_player(g, g.to_move, random.Random(0)))
    v = g.view(None)
    assert set(v) == {
        "game", "seat", "seats", "hand_no", "to_move", "phase", "players", "stock", "discard_top",
        "discard_count", "in_hand", "can_take_discard", "jack_slots", "decks", "start_seat",
    }
    assert v["game"] == "garbage" and v["decks"] == 2
    assert json.loads(json.dumps(v)) == v
    for s in range(3):
        assert {**g.view(s), "seat": None} == v


def test_from_position_rejects_impossible_layouts():
    with pytest.raises(GameError):
        Garbage.from_position(["5S ?2C", "?AD ?2D"])  # a 5 face-up in slot 1
    with pytest.raises(GameError):
        Garbage.from_position(["AS 2C", "?AD ?2D"])  # complete layouts have already won
    with pytest.raises(GameError):
        Garbage.from_position(["AS ?2C AS", "?AD ?2D"], decks=1)  # two AS in one deck


def test_players_return_legal_actions():
    for player in (random_player, greedy_player):
        g = Garbage.new(4, 2)
        rng = random.Random(1)
        for _ in range(200):
            seat = g.to_move
            a = player(g, seat, rng)
            assert g.is_legal(seat, a)
            g.apply(seat, a)


def test_greedy_takes_placeable_discard_and_puts_jack_on_scarce_rank():
    g = Garbage.from_position(["?AS ?2S ?3S", "?KS ?KH"], stock="KD", discard="2H")
    assert greedy_player(g, 0, random.Random(0)) == Discard()
    # two 2s face-up elsewhere: the 2 is the scarcest rank, the Jack covers slot 2
    g = Garbage.from_position(["?AS ?2S ?3S", "?KS 2D", "?AH 2C"], stock="JS")
    g.apply(0, Draw())
    assert greedy_player(g, 0, random.Random(0)) == Jack(2)


def test_push_is_apply_without_checks_or_events():
    a, b = Garbage.new(5, 9), Garbage.new(5, 9)
    rng = random.Random(4)
    while not a.over:
        act = random_player(a, a.to_move, rng)
        b.push(a.to_move, act)
        a.apply(a.to_move, act)
        assert a == b
    assert a.copy() == a and a.copy() is not a
