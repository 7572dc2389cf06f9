"""The game registry is the one place that lists the games: shared modules
name none of them, and every registered game is complete (engine, computer
players, cog, rules pages, catalogue, stats)."""
from __future__ import annotations

import random
import re

import pytest

from app.i18n.catalogue import LOCALES, has, t
from app.i18n.rules import rules_pages
from cogs.games.installed import COGS
from core import registry
from core.protocol import to_act

from tests import ROOT
#: modules every game shares; a game's own modules (its engine, cog, renderer,
#: catalogue, pictures) are not listed
SHARED = ["bot.py", "app/tables/manager.py", "app/store/__init__.py", "app/store/base.py", "app/store/sqlite.py",
          "app/store/sqlite_migrations.py", "app/store/postgres.py", "app/store/pg_migrations.py",
          "app/i18n/catalogue.py", "cogs/common/translator.py",
          "app/i18n/rules.py", "app/config.py", "app/ratings.py", "app/render/base.py", "app/render/common.py",
          "app/render/pool.py", "app/render/profile.py",
          "cogs/tables/__init__.py", "cogs/tables/lobby.py", "cogs/tables/presenter.py",
          "cogs/tables/router.py", "cogs/tables/game_ui.py", "cogs/common/ui.py", "app/tables/computers.py", "cogs/stats.py", "cogs/rules.py", "cogs/admin.py",
          "cogs/coach.py", "cogs/night.py", "cogs/after.py", "cogs/guard.py", "app/nights/host.py", "app/budget.py",
          "app/cooldown.py", "app/text.py"]


def game_words() -> list[str]:
    words = set()
    for spec in registry.GAMES:
        words.add(spec.key)
        words.add(t("en", spec.title_key).rstrip("!"))
        words.add(spec.engine().__name__)
    return sorted(words)


def test_words_cover_every_game():
    assert {"nimmt", "garbage", "take6", "6 nimmt", "11 nimmt", "Garbage", "Take6"} <= set(game_words())


@pytest.mark.parametrize("path", SHARED)
def test_shared_modules_name_no_game(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    found = [w for w in game_words() if re.search(rf"(?<![\w.]){re.escape(w)}(?!\w)", text, re.I)]
    assert not found, f"{path} names {found}: read core.registry instead"


def test_one_min_games():
    from app import store
    from app.store import pg_migrations, sqlite_migrations

    assert sqlite_migrations.MIN_GAMES is registry.MIN_GAMES and store.MIN_GAMES is registry.MIN_GAMES
    assert pg_migrations.MIN_GAMES is registry.MIN_GAMES
    for path in ROOT.glob("*/**/*.py"):
        if path.relative_to(ROOT).parts[0] in ("app", "cogs", "core") and path.name != "registry.py":
            assert not re.search(r"^MIN_GAMES\s*=", path.read_text(encoding="utf-8"), re.M), path


@pytest.mark.parametrize("spec", registry.GAMES, ids=lambda s: s.key)
def test_every_game_is_complete(spec):
    cls = spec.engine()
    assert (cls.min_seats, cls.max_seats) == (spec.min_seats, spec.max_seats)
    assert spec.min_seats <= spec.default_seats <= spec.max_seats
    assert [cog.spec for cog in COGS] == list(registry.GAMES)  # every game has its cog, in order
    for lang in LOCALES:
        assert rules_pages(spec.key, lang)
        assert has(spec.title_key, lang) and has(f"commands.choice_{spec.key}.name", lang)
        for stat in spec.stats:
            assert has(stat.label, lang), stat
        if spec.stats_line:
            t(lang, spec.stats_line, **{s.param: 1 for s in spec.stats})
    # every computer level plays a whole game from a seed, through to_act
    for level in spec.computers:
        game = cls.new(spec.min_seats, 3)
        player = spec.computer(level)
        rng = random.Random(1)
        for _ in range(20000):
            if game.over:
                break
            seat = min(to_act(game))
            game.apply(seat, player(game, seat, rng))
        assert game.over and game.result is not None
        counters = game.result.stats[0]
        for stat in spec.stats:  # the engine reports what the spec declares
            assert (stat.per if stat.kind == "average" else stat.key) in counters


def test_codes_are_stable():
    assert {s.key: s.code for s in registry.GAMES} == {"nimmt": 0, "garbage": 1, "take6": 2}
