"""Property tests of the 11 nimmt! engine over random games played to the end.

Games are played by a mix of ``random_player``, ``greedy_player`` and a
"taker" (random, but takes a stack voluntarily a quarter of the time, which
empties the supply and the draw pile: H5 steals and H7 openings) from
hypothesis-chosen seeds; invariants are asserted along the way.  Games with a
taker can run very long, so they are cut after ``TAKER_STEPS`` actions.
"""
import json
import random

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from core.games.nimmt.engine import (
    BULLS, Nimmt, Open, Pass, Play, Steal, Take, greedy_player, random_player,
)
from core.protocol import IllegalAction

MAX_STEPS = 5000           # a safety net: games without a taker end far earlier
TAKER_STEPS = 1500
TAKERS = (6, 1, 1, ["taker"] * 7)  # reaches H5 steal and H7 open phases (asserted below)
FAST = settings(max_examples=60, deadline=None)

games = st.tuples(
    st.integers(2, 7),                                        # seats
    st.integers(0, 2**32 - 1),                                # game seed
    st.integers(0, 2**16),                                    # players' seed
    st.lists(st.sampled_from(["random", "greedy", "taker"]), min_size=7, max_size=7),
)


def taker_player(game, seat, rng):
    v = game.view(seat)
    if v["phase"] == "play" and not v["turn"]["played_stacks"] and rng.random() < 0.35:
        return Take(rng.choice(v["stacks"])["id"])
    return random_player(game, seat, rng)


PLAYERS = {"random": random_player, "greedy": greedy_player, "taker": taker_player}


def players(kinds):
    return [PLAYERS[k] for k in kinds]


def play(game, kinds, rng, each=None):
    """Play ``game`` to the end (or TAKER_STEPS actions if a taker plays);
    calls ``each(game)`` before every action.  Returns True if it ended."""
    who = players(kinds[:game.seats])
    limit = TAKER_STEPS if "taker" in kinds[:game.seats] else MAX_STEPS
    for _ in range(limit):
        if game.over:
            return True
        if each is not None:
            each(game)
        seat = game.to_move
        events = game.apply(seat, who[seat](game, seat, rng))
        json.dumps(events)
    assert limit == TAKER_STEPS, "game did not end"
    return game.over


def accounted(game):
    d = game.to_dict()
    cards = [c for h in d["hands"] for c in h] + [c for s in d["stacks"] for c in s["cards"]] + d["draw"]
    assert sorted(cards) == list(range(1, 101)), "100 number cards, each exactly once"
    assert d["supply"] + sum(d["bulls"]) == BULLS and min(d["bulls"]) >= 0 and d["supply"] >= 0
    v = game.view(None)
    assert sum(v["hand_counts"]) + v["draw_pile"] + len(v["stacks"]) <= 100


@FAST
@given(games)
@example(TAKERS)
def test_cards_and_bulls_always_accounted_for(g):
    seats, seed, pseed, kinds = g
    game = Nimmt.new(seats, seed)
    if not play(game, kinds, random.Random(pseed), accounted):
        return
    accounted(game)
    r = game.result
    assert r is not None and r.rounds == seats and len(r.scores) == seats
    assert sum(s["rounds_won"] for s in r.stats) == seats
    assert 1 in r.places and all(r.places[p] == 1 for p in r.winners)


def test_takers_reach_every_phase():
    seen = set()
    game = Nimmt.new(TAKERS[0], TAKERS[1])
    play(game, TAKERS[3], random.Random(TAKERS[2]), lambda g: seen.add(g.phase))
    assert seen == {"play", "steal", "open"}


def random_action(game, rng):
    """Any action at all, legal or not (usually not)."""
    d = game.to_dict()
    sid = rng.randrange(d["next_id"] + 2)
    card = lambda: rng.randrange(0, 102)  # noqa: E731
    kind = rng.randrange(5)
    if kind == 0:
        hand = d["hands"][d["to_move"]]
        pool = hand + [card()] if hand else [card()]
        k = rng.randrange(0, 4)
        return Play(sid, tuple(rng.choice(pool) for _ in range(k)))
    return [Take(sid), Pass(), Steal(rng.randrange(-1, game.seats + 1)), Open(card())][kind - 1]


@settings(max_examples=25, deadline=None)  # every third position of each game is checked: 25 games reach every phase
@given(games)
@example(TAKERS)
def test_legal_actions_apply_and_illegal_ones_leave_state_unchanged(g):
    seats, seed, pseed, kinds = g
    rng = random.Random(pseed)
    game = Nimmt.new(seats, seed)
    step = [0]

    def check(game):
        step[0] += 1
        if step[0] % 3:
            return
        seat = game.to_move
        event(f"phase {game.phase}")
        legal = game.legal_actions(seat)
        assert legal
        for other in range(seats):
            if other != seat:
                assert game.legal_actions(other) == []
        for a in rng.sample(legal, min(3, len(legal))):
            assert game.is_legal(seat, a)
            copy = game.copy()
            copy.apply(seat, a)
            assert game.parse(str(a)) == a
        before = game.to_dict()
        for _ in range(4):
            p = rng.randrange(-1, seats + 1)
            a = random_action(game, rng)
            if game.is_legal(p, a):
                if type(a) is not Play or len(a.cards) == 1:
                    assert a in game.legal_actions(p)
                game.copy().apply(p, a)
            else:
                assert a not in game.legal_actions(p)
                try:
                    game.apply(p, a)
                except IllegalAction as e:
                    assert e.code and e.code != "illegal"
                else:
                    raise AssertionError(f"{a} by {p} should be illegal")
                assert game.to_dict() == before
        # a bull holder may lay any non-empty subset of the fitting cards
        v = game.view(seat)
        if game.phase == "play" and v["bulls"][seat]:
            for sid, cards in v["playable"].items():
                sub = tuple(c for c in cards if rng.random() < 0.5) or (cards[0],)
                assert game.is_legal(seat, Play(sid, sub))

    event("ended" if play(game, kinds, rng, check) else "cut")
    for a in (Pass(), Take(0)):
        assert not game.is_legal(0, a)


@FAST
@given(games, st.integers(0, 600))
@example(TAKERS, 600)
def test_replay_and_round_trips(g, stop):
    seats, seed, pseed, kinds = g
    rng = random.Random(pseed)
    rounds = 1 + pseed % seats
    game = Nimmt.new(seats, seed, rounds=rounds)
    who = players(kinds)
    n = 0
    while not game.over and n < min(stop, TAKER_STEPS // 2):
        seat = game.to_move
        game.apply(seat, who[seat](game, seat, rng))
        n += 1
    data = game.to_dict()
    assert json.loads(json.dumps(data)) == data
    restored = Nimmt.from_dict(json.loads(json.dumps(data)))
    assert restored.to_dict() == data and restored == game
    assert Nimmt.replay(seats, seed, game.options, game.log) == game
    for p in [None, *range(seats)]:
        assert restored.view(p) == game.view(p)
    # both go on identically (same actions, same events), also through the fast path
    fast = game.copy()
    rng2 = random.Random(pseed + 1)
    state = rng2.getstate()
    a_rng, b_rng = random.Random(), random.Random()
    a_rng.setstate(state)
    b_rng.setstate(state)
    while not game.over and n < TAKER_STEPS:
        n += 1
        seat = game.to_move
        a = who[seat](game, seat, a_rng)
        assert who[seat](restored, seat, b_rng) == a
        assert game.apply(seat, a) == restored.apply(seat, a)
        fast.push(seat, a)
    assert restored == game and fast == game
    assert game.result == restored.result
    if game.over:
        assert game.result.rounds == rounds


def redeal_hidden(game, seat, rng):
    """Copy of ``game`` with everything ``seat`` cannot see re-dealt: the other
    hands, the buried stack cards and the draw pile (sizes kept)."""
    d = game.to_dict()
    others = [p for p in range(game.seats) if p != seat]
    pool = [c for p in others for c in d["hands"][p]]
    pool += [c for s in d["stacks"] for c in s["cards"][:-1]] + d["draw"]
    rng.shuffle(pool)
    it = iter(pool)
    for p in others:
        d["hands"][p] = sorted(next(it) for _ in d["hands"][p])
    for s in d["stacks"]:
        s["cards"] = [next(it) for _ in s["cards"][:-1]] + s["cards"][-1:]
    d["draw"] = [next(it) for _ in d["draw"]]
    return Nimmt.from_dict(d)


@FAST
@given(games)
@example(TAKERS)
def test_view_does_not_depend_on_hidden_cards(g):
    seats, seed, pseed, kinds = g
    rng = random.Random(pseed)
    game = Nimmt.new(seats, seed)
    step = [0]

    def check(game):
        step[0] += 1
        if step[0] % 5:
            return
        seat = rng.randrange(seats)
        other = redeal_hidden(game, seat, rng)
        assert other.view(seat) == game.view(seat)
        assert other.view(None) == game.view(None)
        accounted(other)

    play(game, kinds, rng, check)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 7))
def test_events_only_show_public_cards(seed, seats):
    """Every card an event names was public at that moment: a top, a card
    laid or opened, a revealed draw card, or (round end) the hands."""
    game = Nimmt.new(seats, seed)
    rng = random.Random(seed)
    while not game.over:
        seat = game.to_move
        tops = {s["top"] for s in game.view(None)["stacks"]}
        action = random_player(game, seat, rng)
        for e in game.apply(seat, action):
            t = e["type"]
            if t == "played":
                assert e["onto"] in tops and sorted(e["cards"]) == list(action.cards)
            elif t == "took":
                assert e["top"] in tops
            elif t == "opened":
                assert e["card"] == action.card
            elif t in ("round_over", "game_over", "revealed"):
                pass
            else:
                assert set(e) <= {"type", "seat", "source", "victim", "round", "start"}
        assert isinstance(action, (Play, Take, Pass, Steal, Open))
