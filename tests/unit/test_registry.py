"""The game registry is the one place that lists the games: shared modules
name none of them, and every registered game is complete (engine, computer
players, cog, rules pages, catalogue, stats)."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from app.i18n.catalogue import LOCALES, has, t
from app.i18n.rules import rules_pages
from cogs.games import installed
from core import registry
from core.protocol import to_act

from tests import ROOT
#: where each game lives: everything under these folders belongs to one game
GAME_FOLDERS = ("core/games", "cogs/games", "data/games", "tests/games")


def game_words() -> list[str]:
    words = set()
    for spec in registry.GAMES:
        words.add(spec.key)
        words.add(t("en", spec.title_key).rstrip("!"))
        words.add(spec.engine().__name__)
    return sorted(words)


def shared_files() -> list[Path]:
    """Every module and catalogue of the bot outside the games' folders
    (found by globbing: a new shared file is checked without being listed)."""
    found = [ROOT / "bot.py"]
    for top in ("app", "cogs", "core", "data"):
        found += [p for p in (ROOT / top).rglob("*") if p.suffix in (".py", ".json")
                  and not str(p.relative_to(ROOT)).startswith(GAME_FOLDERS)]
    return sorted(found)


def test_words_cover_every_game():
    assert {"nimmt", "garbage", "take6", "6 nimmt", "11 nimmt", "Garbage", "Take6"} <= set(game_words())


def test_shared_files_are_found_by_globbing():
    names = {str(p.relative_to(ROOT)) for p in shared_files()}
    assert {"bot.py", "app/tables/manager.py", "cogs/after.py", "core/registry.py", "data/locales/en/commands.json",
            "app/nights/night.py", "app/render/cards.py"} <= names
    assert not any(name.startswith(GAME_FOLDERS) for name in names)


def test_shared_code_names_no_game():
    """No module outside the games' folders names a game (its key, title,
    engine class or module): shared code reads core.registry.  Catalogues:
    their keys in every language and their English texts (the others follow
    English; "nimmt" is a German word)."""
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, game_words())) + r")(?![A-Za-z0-9_])", re.I)
    found = []
    for path in shared_files():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            data = json.loads(text)
            text = "\n".join(data) if path.parent.name != "en" else json.dumps(data, ensure_ascii=False)
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in pattern.finditer(text)]
    assert not found, "shared files name a game (read core.registry instead):\n" + "\n".join(found)


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
    assert [cog.spec for cog in installed.cogs()] == list(registry.GAMES)  # every game has its cog, in order
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
    # saved tables and stats keep their games' codes; a new game takes a new one
    assert {"nimmt": 0, "garbage": 1, "take6": 2}.items() <= {s.key: s.code for s in registry.GAMES}.items()


@pytest.mark.parametrize("cog", installed.cogs(), ids=lambda c: c.spec.key)
def test_the_new_command_is_built_from_the_spec(cog):
    """Seat limits come from the engine, options and their ranges from the
    spec: ``/<game> new`` says nothing of its own."""
    spec = cog.spec
    new = cog.slash.get_command("new")
    params = {p.name: p for p in new.parameters}
    assert list(params) == ["seats", *(o.name for o in spec.options), "turn_time",
                            *(["variant"] if spec.variants else [])]
    if spec.variants:  # exactly the variants the game declares, none required
        assert [c.value for c in params["variant"].choices] == [v.name for v in spec.variants]
        assert not params["variant"].required
    seats = params["seats"]
    assert (seats.min_value, seats.max_value, seats.default) == (spec.min_seats, spec.max_seats, spec.default_seats)
    for option in spec.options:
        p = params[option.name]
        assert (p.min_value, p.max_value, p.required) == (option.minimum, option.maximum, False)
        assert p.locale_name.extras["key"] == f"commands.opt_{option.name}.name"
    assert cog.slash.name == t("en", f"commands.{spec.key}.name")
