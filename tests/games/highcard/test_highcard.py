"""High card, the game that lives only in the tests: its engine by itself,
then the whole game through the Discord stand-in with a registry of high
card alone (play.py, in a process of its own), and the proof that it needed
no file outside this folder."""
from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT
from tests.games.highcard import SPEC
from tests.games.highcard.engine import CARDS, HAND, HighCard

SLICE = ROOT / "tests" / "games" / "highcard"


@pytest.mark.parametrize("seats", range(HighCard.min_seats, HighCard.max_seats + 1))
def test_random_games_end_with_every_card_played_once(seats):
    for seed in range(30):
        game = HighCard.new(seats, seed)
        dealt = sorted(c for seat in range(seats) for c in game.view(seat)["hand"])
        assert len(set(dealt)) == seats * HAND and all(1 <= c <= CARDS for c in dealt)
        rng = random.Random(seed)
        played = []
        while not game.over:
            seat = game.to_move
            card = SPEC.computer("random")(game, seat, rng)
            played += [e["card"] for e in game.apply(seat, card) if e["type"] == "played"]
        assert sorted(played) == dealt
        assert sum(game.result.scores) == HAND and game.result.winners
        assert HighCard.replay(seats, seed, {}, game.log).result == game.result


def test_a_seat_sees_only_its_own_hand():
    game = HighCard.new(3, 5)
    other = HighCard.new(3, 5)
    other.hands[1], other.hands[2] = other.hands[2], other.hands[1]  # re-deal what seat 0 cannot see
    assert game.view(0) == other.view(0) and "hand" not in game.view(None)


@pytest.mark.e2e
def test_high_card_is_played_to_the_end_through_the_stand_in():
    """Lobby, a computer seat, the private hand, stats, replay and /verify
    (play.py says what it checks)."""
    run = subprocess.run([sys.executable, "-m", "tests.games.highcard.play"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    assert "high card played to the end" in run.stdout


def test_high_card_needed_no_file_outside_its_slice():
    """Nothing outside tests/games/highcard names the game (docs/adding-a-game.md,
    which walks through it, aside), and everything the game is made of lives
    inside it: its engine, computer players, spec, cog and texts."""
    outside = []
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        if (not path.is_file() or any(part.startswith(".") for part in relative.parts) or path.is_relative_to(SLICE)
                or relative.as_posix() == "docs/adding-a-game.md" or "__pycache__" in relative.parts
                or path.suffix not in (".py", ".json", ".md", ".txt", ".ini", ".toml", ".cfg", "")):
            continue
        if "highcard" in path.read_text(encoding="utf-8", errors="replace").lower():
            outside.append(str(relative))
    assert not outside, f"high card is named outside its slice: {outside}"
    made_of = [SPEC.game.__module__, SPEC.computer("random").__module__, SPEC.computer("normal").__module__,
               "tests.games.highcard.cog", "tests.games.highcard.play"]  # (its cog reads a registry that holds it)
    assert all(Path(importlib.util.find_spec(module).origin).is_relative_to(SLICE) for module in made_of)
    assert SPEC.folder == SLICE and (SLICE / "locales" / "en" / "highcard.json").is_file()
