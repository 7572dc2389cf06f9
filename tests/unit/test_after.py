"""The shuffle check and the replay work for every registered game through
the engine protocol alone (the end-to-end tests play 11 nimmt! and Garbage
through Discord; this covers every game, 6 nimmt!'s simultaneous turns too)."""
from __future__ import annotations

import hashlib
import random

import pytest

from app.after import replay
from app.after import verify
from core import registry
from core.protocol import to_act


def played(spec, seats: int, seed: int) -> list[tuple[int, str]]:
    """A whole game of computer players; its action log."""
    game = spec.engine().new(seats, seed)
    player = spec.computer()
    rng = random.Random(seed)
    while not game.over:
        seat = min(to_act(game))
        game.apply(seat, player(game, seat, rng))
    return list(game.log)


@pytest.mark.parametrize("spec", registry.GAMES, ids=lambda s: s.key)
def test_check_and_replay_for_every_game(spec):
    cls, seats, seed = spec.engine(), spec.min_seats + 1, 12345
    log = played(spec, seats, seed)
    final = cls.replay(seats, seed, {}, log)
    result = final.result
    shuffle = verify.commit(spec.key, 7, seed, {})
    assert len(shuffle["nonce"]) == 32 and shuffle["nonce"] != verify.commit(spec.key, 7, seed, {})["nonce"]
    text = f"cardnight-shuffle-v1|{spec.key}|7|{seed}|{shuffle['nonce']}"
    assert shuffle["sha256"] == hashlib.sha256(text.encode()).hexdigest()

    def check(**changes):
        args = dict(game=spec.key, table_id=7, seats=seats, seed=seed, nonce=shuffle["nonce"],
                    published=shuffle["sha256"], options={}, log=log, scores=result.scores, places=result.places)
        args.update(changes)
        return verify.check(cls, **args)

    good = check()
    assert good.ok and good.hash_ok and good.replay_ok and good.result_ok and good.moves == len(log)
    assert check(seed=seed + 1).problem in ("hash_mismatch", "illegal_move", "not_over", "extra_moves")
    assert not check(seed=seed + 1).hash_ok
    assert check(table_id=8).problem == "hash_mismatch"  # a commitment belongs to one table
    assert check(log=log[:-1]).problem == "not_over"
    assert check(log=[*log, log[-1]]).problem == "extra_moves"
    assert check(log=[(log[0][0], "nonsense")] + log[1:]) == verify.Verdict(True, False, False, len(log),
                                                                           "illegal_move", 1)
    assert check(scores=[s + 1 for s in result.scores]).problem == "result_differs"
    assert check(nonce=None).problem == "no_commitment"

    # Replay: each step is the game after that many moves, every seat's own view included.
    game = cls.new(seats, seed)
    for step in range(0, len(log) + 1, max(1, len(log) // 25)):
        while len(game.log) < step:
            seat, action = log[len(game.log)]
            game.apply(seat, game.parse(action))
        frame = replay.build(cls, seats=seats, seed=seed, options={}, log=log, step=step)
        assert frame.step == step and frame.moves == len(log)
        assert frame.table == game.view(None)
        assert frame.hands == [game.view(s) for s in range(seats)]
        assert (frame.seat, frame.action) == ((log[step - 1][0], log[step - 1][1]) if step else (None, None))
    assert replay.build(cls, seats=seats, seed=seed, options={}, log=log, step=10**6).step == len(log)
    starts = replay.round_starts(cls, seats=seats, seed=seed, options={}, log=log, deal_event=spec.deal_event)
    assert starts[0] == 0 and starts == sorted(set(starts)) and starts[-1] < len(log)
    rounds = result.rounds if result.rounds else 1
    assert len(starts) == rounds, (starts, rounds)
