"""Rules of 11 nimmt! (RULES.md section 1, house rules H1-H7) as a player sees them.

Positions are built by hand with ``Nimmt.from_position`` (documented in
core/games/nimmt/engine.py): ``hands`` per seat, ``stacks`` bottom first / top last (ids
0, 1, ... in list order), ``bulls`` per seat, ``draw`` top first.
"""
import json
import random

import pytest

from core.games.nimmt.engine import (
    HEADS, WINDOW, Nimmt, Open, Pass, Play, Steal, Take, cards_of, fits, greedy_player, heads,
    random_player, stack_label,
)
from core.protocol import GameError, IllegalAction, InvalidAction

pos = Nimmt.from_position


def code_of(game, seat, action):
    """Error code of an illegal action; asserts the state did not change."""
    before = game.to_dict()
    with pytest.raises(IllegalAction) as info:
        game.apply(seat, action)
    assert game.to_dict() == before
    assert not game.is_legal(seat, action)
    return info.value.code


def types(events):
    return [e["type"] for e in events]


# -- H1: ox heads -------------------------------------------------------------


def test_h1_heads_table():
    assert len(HEADS) == 101 and HEADS[0] == 0
    assert sum(HEADS) == 167
    assert heads(55) == 7
    assert [heads(c) for c in (11, 22, 33, 44, 66, 77, 88, 99)] == [5] * 8
    assert [heads(c) for c in range(10, 101, 10)] == [3] * 10
    assert [heads(c) for c in (5, 15, 25, 35, 45, 65, 75, 85, 95)] == [2] * 9
    assert [heads(c) for c in (1, 2, 12, 54, 56, 98, 100 - 1 - 2)] == [1] * 7
    assert sum(1 for c in range(1, 101) if HEADS[c] == 1) == 72


# -- the window ---------------------------------------------------------------


def test_window_plain():
    assert [c for c in range(1, 101) if fits(c, 54)] == list(range(55, 65))
    assert not fits(54, 54) and not fits(65, 54) and not fits(53, 54)


def test_window_wraps_around_100():
    assert [c for c in range(1, 101) if fits(c, 96)] == [1, 2, 3, 4, 5, 6, 97, 98, 99, 100]
    assert fits(5, 98)                      # 99, 100, 1, 2, 3, 4, 5: difference 7
    assert [c for c in range(1, 101) if fits(c, 100)] == list(range(1, 11))
    assert not fits(12, 1) and fits(11, 1)


def test_window_masks_agree_with_fits():
    for t in range(1, 101):
        assert cards_of(WINDOW[t]) == [c for c in range(1, 101) if fits(c, t)]


def test_play_on_wrapped_window():
    g = pos([[5, 50], [1, 2]], [[90, 98]], draw=[])
    assert g.view(0)["playable"] == {0: [5]}
    ev = g.apply(0, Play(0, (5,)))
    assert ev[0] == {"type": "played", "seat": 0, "stack": 0, "label": "A", "onto": 98,
                     "cards": [5], "top": 5}
    assert code_of(pos([[50, 7], [1]], [[96]], draw=[]), 0, Play(0, (7,))) == "does_not_fit"


def test_stack_labels():
    assert [stack_label(i) for i in (0, 1, 25, 26, 51, 52)] == ["A", "B", "Z", "AA", "AZ", "BA"]


# -- setup ----------------------------------------------------------------------


@pytest.mark.parametrize("seats", range(2, 8))
def test_deal(seats):
    g = Nimmt.new(seats, seed=99)
    v = g.view(None)
    assert g.rounds == seats and g.options == {"rounds": seats} and g.round == 1
    assert v["hand_counts"] == [10] * seats
    assert len(v["stacks"]) == 1 and v["draw_pile"] == 100 - 10 * seats - 1
    assert v["bulls"] == [0] * seats and v["supply"] == 10          # H2
    assert v["to_move"] == v["start_seat"] == g.to_move
    assert g.phase == "play"


def test_deal_is_seeded_and_start_seat_random():
    assert Nimmt.new(4, 5).to_dict() == Nimmt.new(4, 5).to_dict()
    assert Nimmt.new(4, 5).view(0)["hand"] != Nimmt.new(4, 6).view(0)["hand"]
    # H3: first start player drawn at random from the seed
    assert {Nimmt.new(4, s).to_move for s in range(40)} == {0, 1, 2, 3}


@pytest.mark.parametrize("seats", [1, 8, 0, "4"])
def test_bad_number_of_seats(seats):
    with pytest.raises(IllegalAction) as info:
        Nimmt.new(seats, 1)
    assert info.value.code == "bad_seats"
    with pytest.raises(ValueError):
        Nimmt.new(seats, 1)


def test_fewer_rounds_may_be_chosen():
    assert Nimmt.new(5, 1, rounds=2).rounds == 2
    for bad in (0, 6):
        with pytest.raises(IllegalAction):
            Nimmt.new(5, 1, rounds=bad)


# -- playing cards --------------------------------------------------------------


def test_without_bulls_exactly_one_card_and_turn_ends():
    g = pos([[34, 35, 70], [1, 2], [3, 4]], [[33]], draw=[])
    assert code_of(g, 0, Play(0, (34, 35))) == "one_card_only"
    ev = g.apply(0, Play(0, (35,)))
    assert types(ev) == ["played", "turn"] and ev[-1]["seat"] == 1
    assert g.to_move == 1 and g.view(None)["stacks"][0]["top"] == 35


def test_with_bulls_batches_on_several_stacks_cyclic_order():
    # b = 2 bulls: two stacks, several cards each, in any order in the action
    g = pos([[3, 97, 100, 12, 15, 50], [1, 2]], [[95], [10]], bulls=[2, 0], draw=[])
    ev = g.apply(0, Play(0, (3, 100, 97)))
    assert ev == [{"type": "played", "seat": 0, "stack": 0, "label": "A", "onto": 95,
                   "cards": [97, 100, 3], "top": 3}]                    # ascending from the top
    assert g.to_move == 0 and g.view(0)["turn"] == {"played_stacks": [0], "max_stacks": 2, "can_take": False,
                                                    "can_pass": True, "several_cards": True}
    assert g.view(0)["playable"] == {1: [12, 15]}
    ev = g.apply(0, Play(1, (15, 12)))
    assert ev[0]["cards"] == [12, 15] and ev[0]["top"] == 15
    assert types(ev) == ["played", "turn"] and g.to_move == 1          # b stacks used: turn over
    assert [s["top"] for s in g.view(None)["stacks"]] == [3, 15]
    assert g.view(0)["hand"] == [50]


def test_batch_window_counts_from_the_top_before_the_batch():
    # on 33 any of 34..43, even though 40 would no longer "fit" 43 after 43 is laid
    g = pos([[34, 40, 43, 44, 80], [1]], [[33]], bulls=[1, 0], draw=[])
    assert g.is_legal(0, Play(0, (43, 34, 40)))
    assert code_of(g, 0, Play(0, (43, 44))) == "does_not_fit"
    ev = g.apply(0, Play(0, (43, 34, 40)))
    assert ev[0]["cards"] == [34, 40, 43]


def test_any_subset_of_fitting_cards_is_legal_for_a_bull_holder():
    g = pos([[34, 36, 38, 40, 90], [1]], [[33]], bulls=[1, 0], draw=[])
    fit = [34, 36, 38, 40]
    for m in range(1, 16):
        assert g.is_legal(0, Play(0, tuple(c for i, c in enumerate(fit) if m >> i & 1)))
    la = g.legal_actions(0)
    assert Play(0, (34, 36, 38, 40)) in la and Play(0, (36,)) in la and Take(0) in la


def test_h4_each_stack_once_per_turn():
    g = pos([[34, 36, 38, 12], [1]], [[33], [10]], bulls=[2, 0], draw=[])
    g.apply(0, Play(0, (34,)))
    assert g.to_move == 0
    assert code_of(g, 0, Play(0, (36,))) == "stack_already_played"
    assert Play(0, (36,)) not in g.legal_actions(0)


def test_h4_no_more_stacks_than_bulls():
    # (a position mid-turn: seat 0 holds 1 bull and has already played stack 0)
    g = pos([[12, 36], [1]], [[34], [10]], bulls=[1, 0], played=[0], draw=[])
    assert code_of(g, 0, Play(1, (12,))) == "too_many_stacks"


def test_turn_ends_by_itself_when_nothing_fits_an_unplayed_stack():
    g = pos([[34, 36, 80], [1]], [[33], [10]], bulls=[3, 0], draw=[])
    ev = g.apply(0, Play(0, (34,)))
    assert types(ev) == ["played", "turn"] and g.to_move == 1


def test_pass_ends_a_bull_turn_only_after_a_batch():
    g = pos([[34, 12, 80], [1]], [[33], [10]], bulls=[2, 0], draw=[])
    assert code_of(g, 0, Pass()) == "nothing_to_pass"
    g.apply(0, Play(0, (34,)))
    assert Pass() in g.legal_actions(0)
    assert g.apply(0, Pass()) == [{"type": "passed", "seat": 0}, {"type": "turn", "seat": 1}]
    assert g.view(0)["hand"] == [12, 80]


def test_wrong_cards():
    g = pos([[34, 36], [35]], [[33]], bulls=[1, 0], draw=[])
    assert code_of(g, 0, Play(0, (35,))) == "card_not_in_hand"
    assert code_of(g, 0, Play(0, (0,))) == "card_not_in_hand"
    assert code_of(g, 0, Play(0, (101,))) == "card_not_in_hand"
    assert code_of(g, 0, Play(0, ())) == "empty_batch"
    assert code_of(g, 0, Play(0, (34, 34))) == "duplicate_card"
    assert code_of(g, 0, Play(7, (34,))) == "no_such_stack"
    assert code_of(g, 1, Play(0, (35,))) == "not_your_turn"
    assert code_of(g, 2, Play(0, (34,))) == "bad_seat"
    assert code_of(g, 0, Open(34)) == "cannot_open"
    assert code_of(g, 0, Steal(1)) == "not_a_victim"


# -- taking a stack ----------------------------------------------------------------


def test_take_is_allowed_when_a_card_fits():
    g = pos([[34, 60], [1, 2]], [[20, 33]], draw=[70, 71, 72])
    assert g.is_legal(0, Take(0))
    ev = g.apply(0, Take(0))
    assert ev[0] == {"type": "took", "seat": 0, "stack": 0, "label": "A", "top": 33, "count": 2}
    assert types(ev) == ["took", "revealed", "turn"]                  # 2 cards: no bull
    assert ev[1]["stacks"] == [{"id": 1, "label": "B", "top": 70}, {"id": 2, "label": "C", "top": 71}]
    assert g.view(0)["hand"] == [20, 33, 34, 60] and g.view(None)["bulls"] == [0, 0]
    assert g.view(None)["draw_pile"] == 1


def test_take_is_forced_when_nothing_fits():
    g = pos([[80, 90], [1]], [[33], [10]], draw=[])
    assert g.legal_actions(0) == [Take(0), Take(1)]
    assert g.view(0)["playable"] == {}


def test_no_take_after_a_batch():
    g = pos([[34, 12, 80], [1]], [[33], [10]], bulls=[2, 0], draw=[])
    g.apply(0, Play(0, (34,)))
    assert code_of(g, 0, Take(1)) == "take_after_play"


def test_stale_stack_id_after_take():
    g = pos([[80], [81]], [[33], [10]], draw=[50, 51])
    g.apply(0, Take(0))
    assert code_of(g, 1, Take(0)) == "no_such_stack"
    assert code_of(g, 1, Play(0, (81,))) == "no_such_stack"
    assert [s["id"] for s in g.view(None)["stacks"]] == [1, 2, 3]      # ids never reused


def test_bull_only_for_three_or_more_cards():
    g = pos([[80], [81], [82]], [[1, 2], [10, 11, 12]], draw=[50, 51, 52, 53])
    assert "bull" not in types(g.apply(0, Take(0)))
    ev = g.apply(1, Take(1))
    assert {"type": "bull", "seat": 1, "source": "supply"} in ev
    assert g.view(None)["bulls"] == [0, 1, 0] and g.view(None)["supply"] == 9


def test_h5_bull_from_the_single_other_player_with_most():
    g = pos([[80], [81], [82]], [[10, 11, 12]], bulls=[3, 4, 3], supply=0, draw=[50, 51])
    ev = g.apply(0, Take(0))
    assert {"type": "bull", "seat": 0, "source": "player", "victim": 1} in ev
    assert g.view(None)["bulls"] == [4, 3, 3] and g.phase == "play" and g.to_move == 1


def test_h5_tie_the_taker_chooses():
    g = pos([[80], [81], [82], [83]], [[10, 11, 12]], bulls=[5, 2, 1, 2], supply=0, draw=[50, 51])
    ev = g.apply(0, Take(0))                   # the taker's own 5 bulls do not count
    assert types(ev) == ["took"]
    v = g.view(None)
    assert v["phase"] == "steal" and v["victims"] == [1, 3] and v["to_move"] == 0
    assert g.legal_actions(0) == [Steal(1), Steal(3)]
    assert code_of(g, 0, Play(1, (80,))) == "must_choose_victim"
    assert code_of(g, 0, Take(1)) == "must_choose_victim"
    assert code_of(g, 0, Steal(2)) == "not_a_victim"
    assert code_of(g, 0, Steal(0)) == "not_a_victim"
    assert code_of(g, 1, Steal(3)) == "not_your_turn"
    ev = g.apply(0, Steal(3))
    assert types(ev) == ["bull", "revealed", "turn"]
    assert ev[0] == {"type": "bull", "seat": 0, "source": "player", "victim": 3}
    assert g.view(None)["bulls"] == [6, 2, 1, 1] and g.view(None)["victims"] == []


def test_h5_nobody_else_holds_a_bull():
    g = pos([[80], [81]], [[10, 11, 12]], bulls=[10, 0], supply=0, draw=[50, 51])
    ev = g.apply(0, Take(0))
    assert types(ev) == ["took", "no_bull", "revealed", "turn"]
    assert {"type": "no_bull", "seat": 0} in ev
    assert g.view(None)["bulls"] == [10, 0]


def test_h6_fewer_new_stacks_when_draw_pile_runs_low():
    g = pos([[80], [81]], [[33], [10]], draw=[50])
    ev = g.apply(0, Take(0))
    assert ev[1] == {"type": "revealed", "stacks": [{"id": 2, "label": "C", "top": 50}]}
    assert g.view(None)["draw_pile"] == 0
    ev = g.apply(1, Take(1))
    assert types(ev) == ["took", "revealed", "turn"] and ev[1]["stacks"] == []   # none left
    assert [s["top"] for s in g.view(None)["stacks"]] == [50]


def test_h7_no_stack_left_next_player_opens():
    g = pos([[80, 81], [5, 55], [7]], [[33]], draw=[])
    g.apply(0, Take(0))
    v = g.view(1)
    assert v["stacks"] == [] and v["phase"] == "open" and v["to_move"] == 1
    assert g.legal_actions(1) == [Open(5), Open(55)]
    assert code_of(g, 1, Take(0)) == "must_open"
    assert code_of(g, 1, Play(0, (5,))) == "must_open"
    assert code_of(g, 1, Open(7)) == "card_not_in_hand"
    ev = g.apply(1, Open(55))
    assert ev == [{"type": "opened", "seat": 1, "stack": 1, "label": "B", "card": 55},
                  {"type": "turn", "seat": 2}]
    assert g.phase == "play" and g.view(None)["stacks"][0]["top"] == 55


def test_h7_opening_the_last_card_ends_the_round():
    g = pos([[80, 81], [5], [7, 8]], [[33]], draw=[], rounds=2)
    g.apply(0, Take(0))
    ev = g.apply(1, Open(5))
    assert "round_over" in types(ev) and ev[types(ev).index("round_over")]["out"] == 1


# -- end of a round, scoring ------------------------------------------------------------


def test_round_ends_the_moment_a_hand_empties():
    # seat 0 holds 3 bulls and could still play on stack B, but its hand is empty
    g = pos([[34, 35], [55, 10, 1], [22, 30]], [[33], [20]], bulls=[3, 1, 0], rounds=3,
            scores=[4, 0, 0], start_seat=0)
    ev = g.apply(0, Play(0, (34, 35)))
    assert types(ev)[:2] == ["played", "round_over"]
    over = ev[1]
    assert over["out"] == 0 and over["round"] == 1
    assert over["hands"] == [[], [1, 10, 55], [22, 30]]          # intended reveal
    assert over["penalties"] == [0, 7 + 3 + 1, 5 + 3]             # ox heads, not card count
    assert over["scores"] == [4, 11, 8]
    assert g.view(None)["scores"] == [4, 11, 8]


def test_bull_cards_score_nothing():
    g = pos([[34], [1, 2]], [[33]], bulls=[0, 10], supply=0, rounds=2)
    ev = g.apply(0, Play(0, (34,)))
    assert ev[1]["penalties"] == [0, 2]


def test_h2_and_h3_next_round():
    g = pos([[34], [1], [2], [3]], [[33]], bulls=[2, 3, 1, 4], supply=0, rounds=4,
            scores=[5, 9, 0, 9], start_seat=2)
    ev = g.apply(0, Play(0, (34,)))
    # seat 1 and 3 tie on 10 points; after start seat 2 comes 3 first (H3)
    assert ev[1]["scores"] == [5, 10, 1, 10]
    assert types(ev)[2:] == ["round_start", "turn"]
    assert ev[2] == {"type": "round_start", "round": 2, "start": 3}
    v = g.view(3)
    assert v["round"] == 2 and v["to_move"] == 3 and v["start_seat"] == 3
    assert v["bulls"] == [0, 0, 0, 0] and v["supply"] == 10          # H2
    assert v["hand_counts"] == [10] * 4 and len(v["stacks"]) == 1 and v["draw_pile"] == 59
    assert v["stacks"][0]["id"] == 1                                 # ids go on across rounds


def test_h3_previous_start_player_comes_last_on_a_tie():
    g = pos([[34], [1], [2]], [[33]], rounds=3, scores=[11, 10, 3], start_seat=0)
    g.apply(0, Play(0, (34,)))             # 0 and 1 tie on 11: after 0 comes 1
    assert g.view(None)["scores"] == [11, 11, 4] and g.to_move == 1
    g = pos([[1], [34], [2]], [[33]], to_move=1, rounds=3, scores=[10, 11, 3], start_seat=1)
    g.apply(1, Play(0, (34,)))             # 0 and 1 tie on 11; start was 1, so 2, 0, 1: seat 0
    assert g.view(None)["scores"] == [11, 11, 4] and g.to_move == 0


def test_game_over_after_the_rounds_with_shared_win():
    g = pos([[34], [1], [10]], [[33]], rounds=2, round=2, scores=[6, 5, 3])
    ev = g.apply(0, Play(0, (34,)))
    assert types(ev) == ["played", "round_over", "game_over"]
    assert ev[-1] == {"type": "game_over", "scores": [6, 6, 6], "places": [1, 1, 1], "winners": [0, 1, 2]}
    assert g.over and g.to_move is None and g.phase == "over"
    r = g.result
    assert r.scores == (6, 6, 6) and r.winners == (0, 1, 2) and r.rounds == 2
    assert code_of(g, 0, Take(0)) == "game_over"
    assert g.legal_actions(0) == [] and g.view(None)["phase"] == "over"


def test_full_game_lasts_seats_rounds_and_result_stats():
    for seats in (2, 5):
        g = Nimmt.new(seats, seed=3)
        rng = random.Random(3)
        rounds_seen = {1}
        outs = []
        while not g.over:
            ev = g.apply(g.to_move, greedy_player(g, g.to_move, rng))
            rounds_seen.add(g.round)
            outs += [e["out"] for e in ev if e["type"] == "round_over"]
        r = g.result
        assert len(outs) == seats and rounds_seen == set(range(1, seats + 1)) and r.rounds == seats
        assert [s["rounds_won"] for s in r.stats] == [outs.count(p) for p in range(seats)]
        assert all(s["penalty_rounds"] == seats for s in r.stats)
        assert min(r.places) == 1 and r.winners == tuple(p for p in range(seats) if r.places[p] == 1)
        assert r.scores == tuple(g.view(None)["scores"])


def test_bulls_earned_counts_supply_and_theft():
    g = pos([[80], [81], [34]], [[10, 11, 12], [20, 21, 22], [33]], supply=1, rounds=1, draw=[])
    g.apply(0, Take(0))                    # from the supply
    g.apply(1, Take(1))                    # stolen from seat 0 (H5)
    assert g.view(None)["bulls"] == [0, 1, 0]
    g.apply(2, Play(2, (34,)))             # seat 2 goes out; the game (1 round) is over
    stats = g.result.stats
    assert [s["bulls_earned"] for s in stats] == [1, 1, 0]
    assert [s["rounds_won"] for s in stats] == [0, 0, 1]
    assert [s["penalty_rounds"] for s in stats] == [1, 1, 1]


# -- text, views -------------------------------------------------------------------------


def test_parse_round_trip_and_errors():
    g = Nimmt.new(3, 1)
    for a in (Play(2, (40, 35)), Play(0, (1,)), Take(12), Pass(), Steal(2), Open(100)):
        assert g.parse(str(a)) == a and eval(repr(a)) == a
    assert str(Play(2, (40, 35))) == "play 2 35 40"
    assert g.parse("play C 40") == Play(2, (40,))
    for bad in ("", "play", "play 1", "take", "take 1 2", "fold", "play x1 3", "steal a", "pass 1", "open"):
        with pytest.raises(InvalidAction) as info:
            g.parse(bad)
        assert info.value.code == "invalid_syntax" and isinstance(info.value, GameError)


def test_actions_are_values():
    assert Play(1, (3, 2)) == Play(1, (2, 3)) and hash(Play(1, (3, 2))) == hash(Play(1, [2, 3]))
    assert len({Take(1), Take(1), Steal(1), Open(1)}) == 3
    with pytest.raises(AttributeError):
        Take(1).stack = 2


def test_view_shows_tops_only_and_own_hand():
    g = pos([[34, 36, 90], [1, 2], [3]], [[10, 20, 33], [70]], bulls=[1, 0, 0], draw=[5, 6])
    pub = g.view(None)
    assert pub["stacks"] == [{"id": 0, "label": "A", "top": 33, "heads": 5},
                             {"id": 1, "label": "B", "top": 70, "heads": 3}]
    assert "hand" not in pub and "playable" not in pub
    assert pub["hand_counts"] == [3, 2, 1] and pub["draw_pile"] == 2
    me = g.view(0)
    assert me["hand"] == [34, 36, 90] and me["playable"] == {0: [34, 36]}
    assert me["turn"] == {"played_stacks": [], "max_stacks": 1, "can_take": True, "can_pass": False,
                          "several_cards": True}
    assert g.view(1)["hand"] == [1, 2] and g.view(1)["playable"] == {}
    assert json.loads(json.dumps(pub)) == pub
    for v in (pub, me):
        assert set(v) >= {"game", "seat", "seats", "round", "rounds", "to_move", "phase", "stacks",
                          "hand_counts", "bulls", "supply", "draw_pile", "scores", "start_seat",
                          "turn", "victims"}
    with pytest.raises(IllegalAction):
        g.view(3)


def test_legal_actions_empty_when_not_your_turn():
    g = Nimmt.new(4, 8)
    others = [p for p in range(4) if p != g.to_move]
    assert all(g.legal_actions(p) == [] for p in others)
    assert g.legal_actions(g.to_move)


def test_computer_players_play_legal_actions():
    g = pos([[34, 40, 50, 11], [1, 2]], [[33], [5]], bulls=[2, 0], draw=[])
    a = greedy_player(g, 0, random.Random(0))
    assert a == Play(1, (11,)) and g.is_legal(0, a)                 # 11 carries 5 heads
    rng = random.Random(0)
    for _ in range(50):
        assert g.is_legal(0, random_player(g, 0, rng))
    # forced take: the greedy player takes the stack with the lightest visible top
    g = pos([[80, 90], [1]], [[55], [12]], draw=[])
    assert greedy_player(g, 0, rng) == Take(1)
    g = pos([[80], [81, 82, 83], [84], [85, 86]], [[10, 11, 12]], bulls=[0, 2, 0, 2], supply=0, draw=[])
    g.apply(0, Take(0))
    assert greedy_player(g, 0, rng) == Steal(3)                    # fewer cards in hand


def test_legal_action_count_of_a_known_position():
    # perft-style: 3 singles + the all-fitting batch on A, 1 single on B, 2 takes
    g = pos([[34, 36, 38, 12, 80], [1]], [[33], [10]], bulls=[2, 0], draw=[])
    assert len(g.legal_actions(0)) == 7
    g.apply(0, Play(0, (36, 38)))
    assert g.legal_actions(0) == [Play(1, (12,)), Pass()]


def test_not_an_action():
    g = Nimmt.new(2, 1)
    assert code_of(g, g.to_move, "take 0") == "invalid_action"


def test_push_trusts_and_makes_no_events():
    g = pos([[34, 60], [1, 2]], [[33]], draw=[])
    assert g.push(0, Play(0, (34,))) is None
    assert g.to_move == 1 and g.log == [(0, "play 0 34")]


def test_restored_game_keeps_the_phase_and_log():
    g = pos([[80], [81], [82], [83]], [[10, 11, 12]], bulls=[5, 2, 1, 2], supply=0, draw=[50, 51])
    g.apply(0, Take(0))
    h = Nimmt.from_dict(json.loads(json.dumps(g.to_dict())))
    assert h.phase == "steal" and h.view(0) == g.view(0) and h.log == [(0, "take 0")]
    assert h.apply(0, Steal(1)) == g.apply(0, Steal(1))
