"""The image renderer: valid PNGs for small and extreme views, every label
drawn, no key read outside the view spec, playable cards highlighted."""
from __future__ import annotations

import io
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst
from PIL import Image, ImageChops, ImageFont

from core import registry
from app.render import base as render_base, pool as render_pool, profile as render_profile_card
from cogs.games.garbage import render as render_garbage
from cogs.games.nimmt import render as render_nimmt
from cogs.games.take6 import render as render_take6

# --------------------------------------------------------------------------
# View builders: exactly the keys of the view specs

NIMMT_KEYS = {"game", "seat", "seats", "round", "rounds", "to_move", "phase", "stacks", "hand_counts",
              "bulls", "supply", "draw_pile", "scores", "start_seat", "turn", "victims"}
NIMMT_SEAT_KEYS = NIMMT_KEYS | {"hand", "playable"}
STACK_KEYS = {"id", "label", "top", "heads"}
TURN_KEYS = {"played_stacks", "max_stacks"}
GARBAGE_KEYS = {"game", "seat", "seats", "hand_no", "to_move", "phase", "players", "stock", "discard_top",
                "discard_count", "in_hand", "can_take_discard", "jack_slots", "decks", "start_seat"}
PLAYER_KEYS = {"slots", "layout"}

LONG_NAMES = ["Ålesund Øyvind Ærlig the Magnificent", "山田太郎🎴🎲✨", "Дмитрий Иванович Менделеев",
              "Zoë\u0301 \u200d👩‍👩‍👧 family", "محمد عبد الله", "x" * 200, "\n\t "]


def _letters(i: int) -> str:
    out, n = "", i + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def nimmt_view(stacks: int = 4, seats: int = 4, hand: int | None = 10, phase: str = "play",
               played: int = 0, seed: int = 0, seat: int | None = 0, to_move: int | None = 0,
               playable_keys: type = str) -> dict:
    rnd = random.Random(seed)
    st: list[dict[str, Any]] = [{"id": i + 3, "label": _letters(i + 3), "top": rnd.randint(1, 100)} for i in range(stacks)]
    for s in st:
        s["heads"] = render_nimmt.heads(s["top"])
    v = {
        "game": "nimmt", "seat": seat, "seats": seats, "round": 1, "rounds": seats,
        "to_move": None if phase == "over" else to_move, "phase": phase, "stacks": st,
        "hand_counts": [rnd.randint(0, 60) for _ in range(seats)],
        "bulls": [rnd.randint(0, 10) for _ in range(seats)], "supply": 3, "draw_pile": 42,
        "scores": [rnd.randint(0, 300) for _ in range(seats)], "start_seat": 0,
        "turn": {"played_stacks": [s["id"] for s in st[:played]], "max_stacks": max(1, played + 1)},
        "victims": [1, 2] if phase == "steal" else [],
    }
    if hand is not None:
        cards = sorted(rnd.sample(range(1, 101), min(hand, 100)))
        v["hand"] = cards
        playable: dict = {}
        if phase == "play":
            for s in st[played:]:
                fit = [c for c in cards if 1 <= (c - s["top"]) % 100 <= 10]
                if fit:
                    playable[playable_keys(s["id"])] = fit
        v["playable"] = playable
    return v


def garbage_view(players: int = 4, slots: list[int] | None = None, face: str = "mixed", phase: str = "source",
                 seed: int = 0, seat: int | None = None) -> dict:
    rnd = random.Random(seed)
    slots = slots or [10] * players
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10"]
    ps: list[dict[str, Any]] = []
    for n in slots:
        lay: list = []
        for k in range(n):
            up = face == "up" or (face == "mixed" and rnd.random() < 0.5)
            lay.append((rnd.choice([ranks[k], ranks[k], "J"]) + rnd.choice("SHDC")) if up else None)
        ps.append({"slots": n, "layout": lay})
    return {
        "game": "garbage", "seat": seat, "seats": players, "hand_no": 1, "to_move": None if phase == "over" else 0,
        "phase": phase, "players": ps, "stock": 40, "discard_top": "QS", "discard_count": 3,
        "in_hand": "JD" if phase == "jack" else ("7H" if phase == "source" else None),
        "can_take_discard": True,
        "jack_slots": [k + 1 for k, c in enumerate(ps[0]["layout"]) if c is None] if phase == "jack" else [],
        "decks": 2, "start_seat": 0,
    }


PROFILE_NIMMT = {"name": "Ålesund Øyvind the Magnificent of Very Long Names", "game": "nimmt", "games": 12,
                 "wins": 5, "win_rate": 5 / 12, "avg_penalty_per_round": 4.75, "rounds_won": 9, "bulls_earned": 3,
                 "hands_won": None, "ordinal": 18.25, "mu": 25.0, "sigma": 2.25, "rank": 4}
PROFILE_GARBAGE = {"name": "山田", "game": "garbage", "games": 0, "wins": 0, "win_rate": 0.0,
                   "avg_penalty_per_round": None, "rounds_won": None, "bulls_earned": None, "hands_won": 0,
                   "ordinal": None, "mu": None, "sigma": None, "rank": None}


#: public events of the latest turns, as ``Table.recent`` keeps them: every kind a picture marks
NIMMT_RECENT = [
    [{"type": "played", "seat": 1, "stack": 3, "label": "D", "onto": 5, "cards": [6, 7, 8], "top": 8},
     {"type": "passed", "seat": 1}, {"type": "turn", "seat": 2}],
    [{"type": "took", "seat": 2, "stack": 4, "label": "E", "top": 50, "count": 4},
     {"type": "bull", "seat": 2, "source": "player", "victim": 0},
     {"type": "revealed", "stacks": [{"id": 7, "label": "H", "top": 12}, {"id": 8, "label": "I", "top": 13}]},
     {"type": "turn", "seat": 3}],
    [{"type": "bull", "seat": 2, "source": "supply"}, {"type": "opened", "seat": 1, "stack": 3, "label": "D", "card": 5},
     {"type": "round_start", "round": 2, "start": 1}, {"type": "turn", "seat": 1}],
]
GARBAGE_RECENT = [
    [{"type": "drew", "seat": 0, "source": "stock", "card": "7H"},
     {"type": "placed", "seat": 0, "slot": 7, "card": "7H", "uncovered": "3S"},
     {"type": "dead", "seat": 0, "card": "3S", "reason": "slot_filled"},
     {"type": "discarded", "seat": 0, "card": "3S"}, {"type": "turn", "seat": 1}],
    [{"type": "drew", "seat": 0, "source": "discard", "card": "JD"},
     {"type": "choose_jack", "seat": 0, "slots": [1, 2]}],
    [{"type": "drew", "seat": 2, "source": "stock", "card": "AS"},
     {"type": "placed", "seat": 2, "slot": 1, "card": "AS", "uncovered": "2C"},
     {"type": "hand_won", "seat": 2, "hand": 1, "slots": 9}, {"type": "hand_start", "hand": 2, "start": 0,
                                                              "slots": [10, 10, 9]}],
    [{"type": "hand_start", "hand": 2, "start": 0, "slots": [10, 10, 9]}, {"type": "turn", "seat": 0}],
]


def labels_for(keys, fmt: str = "{key}") -> dict[str, str]:
    return {k: fmt.format(key=k) for k in keys}


ALL_KEYS = set(render_nimmt.NIMMT_TABLE_LABELS) | set(render_nimmt.NIMMT_HAND_LABELS) | set(
    render_garbage.GARBAGE_TABLE_LABELS) | set(render_profile_card.PROFILE_LABELS)
LABELS = labels_for(ALL_KEYS, "{key} {{round}}")


def png(data: bytes) -> Image.Image:
    assert isinstance(data, bytes) and data[:8] == b"\x89PNG\r\n\x1a\n"
    im = Image.open(io.BytesIO(data))
    im.load()
    assert im.format == "PNG"
    assert 200 <= im.width <= 1000, im.size
    assert 100 <= im.height <= 1600, im.size
    return im


def differs(a: bytes, b: bytes) -> bool:
    ia, ib = Image.open(io.BytesIO(a)).convert("RGB"), Image.open(io.BytesIO(b)).convert("RGB")
    return ia.size != ib.size or ImageChops.difference(ia, ib).getbbox() is not None


# --------------------------------------------------------------------------
# Strict views: record every key read, so no key outside the spec is used


class Strict(dict):
    def __init__(self, data: dict, allowed: set[str], log: set[str]):
        super().__init__(data)
        self._allowed, self._log = allowed, log

    def _see(self, key):
        self._log.add(key)
        assert key in self._allowed, f"renderer read key {key!r} outside the view spec"

    def __getitem__(self, key):
        self._see(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._see(key)
        return super().get(key, default)

    def __contains__(self, key):
        self._see(key)
        return super().__contains__(key)


def strict_nimmt(v: dict, log: set) -> Strict:
    v = dict(v)
    v["stacks"] = [Strict(s, STACK_KEYS, log) for s in v["stacks"]]
    v["turn"] = Strict(v["turn"], TURN_KEYS, log)
    return Strict(v, NIMMT_SEAT_KEYS if "hand" in v else NIMMT_KEYS, log)


def strict_garbage(v: dict, log: set) -> Strict:
    v = dict(v)
    v["players"] = [Strict(p, PLAYER_KEYS, log) for p in v["players"]]
    return Strict(v, GARBAGE_KEYS, log)


# --------------------------------------------------------------------------
# Valid PNGs, small and extreme


@pytest.mark.parametrize("stacks", [0, 1, 4, 20, 21, 60])
@pytest.mark.parametrize("seats", [2, 7])
def test_nimmt_table_sizes(stacks, seats):
    v = nimmt_view(stacks=stacks, seats=seats, played=min(stacks, 2), hand=None, seat=None)
    assert set(v) == NIMMT_KEYS
    png(render_nimmt.render_nimmt_table(strict_nimmt(v, set()), LONG_NAMES[:seats], LABELS))


@pytest.mark.parametrize("phase", ["play", "steal", "open", "over"])
def test_nimmt_table_phases(phase):
    v = nimmt_view(stacks=0 if phase == "open" else 5, seats=7, phase=phase, seat=3, played=1)
    assert set(v) == NIMMT_SEAT_KEYS
    png(render_nimmt.render_nimmt_table(strict_nimmt(v, set()), LONG_NAMES, LABELS))


def test_nimmt_table_names_missing_or_short():
    v = nimmt_view(seats=5, hand=None, seat=None)
    png(render_nimmt.render_nimmt_table(v, ["Ann"], LABELS))
    png(render_nimmt.render_nimmt_table(v, [], {}))  # no labels at all: keys drawn, no crash


def test_nimmt_table_shows_every_stack_card():
    """Sixty stacks wrap into a grid that still fits the width limit."""
    v = nimmt_view(stacks=60, seats=7, hand=None, seat=None)
    im = png(render_nimmt.render_nimmt_table(v, LONG_NAMES, LABELS))
    assert im.width <= 1000


@pytest.mark.parametrize("hand", [0, 1, 10, 12, 13, 60, 100])
@pytest.mark.parametrize("keys", [str, int])
def test_nimmt_hand_sizes(hand, keys):
    v = nimmt_view(stacks=6, hand=hand, playable_keys=keys)
    assert set(v) == NIMMT_SEAT_KEYS
    png(render_nimmt.render_nimmt_hand(strict_nimmt(v, set()), LABELS))


def test_nimmt_hand_highlights_playable():
    v = nimmt_view(stacks=1, hand=10)
    v["stacks"][0]["top"] = 1
    v["hand"] = [2, 30, 40, 55, 60, 70, 80, 90, 99, 100]
    v["playable"] = {}
    plain = render_nimmt.render_nimmt_hand(v, LABELS)
    v["playable"] = {str(v["stacks"][0]["id"]): [2]}
    lit = render_nimmt.render_nimmt_hand(v, LABELS)
    v["playable"] = {v["stacks"][0]["id"]: [2]}  # int keys work the same
    lit_int = render_nimmt.render_nimmt_hand(v, LABELS)
    assert differs(plain, lit)
    assert not differs(lit, lit_int)


def test_nimmt_hand_other_card_highlighted_differs():
    v = nimmt_view(stacks=1, hand=10)
    v["stacks"][0]["top"] = 1
    v["hand"] = [2, 3, 40, 50]
    v["playable"] = {"3": [2]}
    a = render_nimmt.render_nimmt_hand(v, LABELS)
    v["playable"] = {"3": [3]}
    b = render_nimmt.render_nimmt_hand(v, LABELS)
    assert differs(a, b)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("face", ["down", "up", "mixed"])
def test_garbage_table_players(players, face):
    v = garbage_view(players=players, face=face, seat=0)
    assert set(v) == GARBAGE_KEYS
    png(render_garbage.render_garbage_table(strict_garbage(v, set()), LONG_NAMES[:players], LABELS))


@pytest.mark.parametrize("n", range(10, 0, -1))
@pytest.mark.parametrize("phase", ["source", "jack", "over"])
def test_garbage_table_slots(n, phase):
    v = garbage_view(players=6, slots=[n, 10, 9, 5, 2, 1], phase=phase)
    png(render_garbage.render_garbage_table(strict_garbage(v, set()), LONG_NAMES[:6], LABELS))


def test_garbage_table_empty_piles():
    v = garbage_view(players=2)
    v.update(stock=0, discard_top=None, discard_count=0, in_hand=None, can_take_discard=False)
    png(render_garbage.render_garbage_table(strict_garbage(v, set()), ["A", "B"], LABELS))


def test_garbage_winner_marked_when_over():
    v = garbage_view(players=2, slots=[2, 10], face="down", phase="over")
    plain = render_garbage.render_garbage_table(v, ["A", "B"], LABELS)
    v["players"][0]["layout"] = ["AS", "JH"]  # G3: complete layout
    won = render_garbage.render_garbage_table(v, ["A", "B"], LABELS)
    v["players"][0]["layout"] = ["AS", None]
    not_won = render_garbage.render_garbage_table(v, ["A", "B"], LABELS)
    assert differs(plain, won) and differs(won, not_won)


def test_garbage_odd_card_text_does_not_crash():
    v = garbage_view(players=2, face="up")
    v["players"][0]["layout"][0] = "??"
    v["discard_top"] = "10X"
    png(render_garbage.render_garbage_table(v, ["A", "B"], LABELS))


@pytest.mark.parametrize("profile", [PROFILE_NIMMT, PROFILE_GARBAGE], ids=["nimmt", "garbage"])
def test_profile(profile):
    png(render_profile_card.render_profile(profile, LABELS))


def test_profile_win_rate_drawn():
    a = render_profile_card.render_profile(dict(PROFILE_NIMMT, win_rate=0.1), LABELS)
    b = render_profile_card.render_profile(dict(PROFILE_NIMMT, win_rate=0.9), LABELS)
    assert differs(a, b)


# --------------------------------------------------------------------------
# Labels: every key exported is drawn, and no other key is read


class Recorder(dict):
    def __init__(self, data, log):
        super().__init__(data)
        self.log = log

    def get(self, key, default=None):
        self.log.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.log.add(key)
        return super().__getitem__(key)


def _calls():
    """(function name, keys constant, callable(labels)) covering every branch."""
    out = []
    names = LONG_NAMES
    for phase in ("play", "steal", "open", "over"):
        v = nimmt_view(stacks=0 if phase == "open" else 4, seats=7, phase=phase, played=1, seat=2)
        out.append(("nimmt_table", render_nimmt.NIMMT_TABLE_LABELS, lambda L, v=v: render_nimmt.render_nimmt_table(v, names, L)))
    for recent in NIMMT_RECENT:
        v = nimmt_view(stacks=6, seats=4, played=1, seat=2)
        out.append(("nimmt_table", render_nimmt.NIMMT_TABLE_LABELS,
                    lambda L, v=v, r=recent: render_nimmt.render_nimmt_table(v, names, L, r)))
    for hand in (0, 12):
        v = nimmt_view(stacks=4, hand=hand)
        out.append(("nimmt_hand", render_nimmt.NIMMT_HAND_LABELS, lambda L, v=v: render_nimmt.render_nimmt_hand(v, L)))
    for phase, takeable in (("source", True), ("source", False), ("jack", False), ("over", False)):
        v = {**garbage_view(players=3, phase=phase, seat=1), "can_take_discard": takeable}
        out.append(("garbage_table", render_garbage.GARBAGE_TABLE_LABELS,
                    lambda L, v=v: render_garbage.render_garbage_table(v, names, L)))
    for recent in GARBAGE_RECENT:
        v = garbage_view(players=3, phase="jack", seat=1)
        out.append(("garbage_table", render_garbage.GARBAGE_TABLE_LABELS,
                    lambda L, v=v, r=recent: render_garbage.render_garbage_table(v, names, L, r)))
    for p in (PROFILE_NIMMT, PROFILE_GARBAGE):
        out.append(("profile", render_profile_card.PROFILE_LABELS, lambda L, p=p: render_profile_card.render_profile(p, L)))
    return out


@pytest.mark.parametrize("name,keys", [("nimmt_table", render_nimmt.NIMMT_TABLE_LABELS),
                                       ("nimmt_hand", render_nimmt.NIMMT_HAND_LABELS),
                                       ("garbage_table", render_garbage.GARBAGE_TABLE_LABELS),
                                       ("profile", render_profile_card.PROFILE_LABELS)])
def test_label_keys_read_are_exported_and_all_used(name, keys):
    assert isinstance(keys, tuple) and all(isinstance(k, str) for k in keys)
    assert len(set(keys)) == len(keys)
    seen: set = set()
    for fname, _, call in _calls():
        if fname == name:
            call(Recorder(labels_for(keys), seen))
    if name == "profile":  # the card's game name comes as game_<registry key>, its figures as the game declares
        seen -= {f"game_{spec.key}" for spec in registry.GAMES}
        seen -= {stat.label_key for spec in registry.GAMES for stat in spec.stats}  # the game's figures
    assert seen <= set(keys), f"{name} reads labels it does not export: {seen - set(keys)}"
    assert seen == set(keys), f"{name} exports labels it never reads: {set(keys) - seen}"


def _views_for_key():
    """Each label key with a render that shows it."""
    out = []
    for fname, keys, call in _calls():
        for k in keys:
            out.append((fname, k, call))
    return out


@pytest.mark.parametrize("fname,key", sorted({(f, k) for f, k, _ in _views_for_key()}))
def test_each_label_is_drawn(fname, key):
    """Blank one label vs a visible text: some render of the function differs."""
    blank = labels_for(ALL_KEYS, "{key}")
    blank[key] = ""
    shown = dict(blank, **{key: "WW"})
    assert any(differs(call(blank), call(shown)) for f, k, call in _views_for_key() if f == fname and k == key)


def test_two_label_sets_give_different_images():
    en = labels_for(ALL_KEYS, "{key}")
    other = labels_for(ALL_KEYS, "Xx {key} xX")
    for _, _, call in _calls():
        assert differs(call(en), call(other))


def test_placeholders_filled_and_bad_templates_survive():
    assert render_base.label({"round": "Round {round}/{rounds}"}, "round", round=2, rounds=5) == "Round 2/5"
    assert render_base.label({"k": "{unknown} {0} {"}, "k", x=1) == "{unknown} {0} {"
    assert render_base.label({"k": "{x:>{y}}"}, "k", x=1) in ("{x:>{y}}",)
    assert render_base.label({}, "missing") == "missing"


# --------------------------------------------------------------------------
# Text and fonts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=hst.lists(hst.text(max_size=80), min_size=0, max_size=7),
       text=hst.text(max_size=60))
def test_any_names_and_labels_render(names, text):
    """User names and translations are arbitrary text: never a crash."""
    labels = {k: text for k in ALL_KEYS}
    png(render_nimmt.render_nimmt_table(nimmt_view(stacks=3, seats=7, played=1, seat=1), names, labels))
    png(render_garbage.render_garbage_table(garbage_view(players=6, phase="jack", seat=2), names, labels))
    png(render_nimmt.render_nimmt_hand(nimmt_view(stacks=3, hand=20), labels))
    png(render_profile_card.render_profile(dict(PROFILE_NIMMT, name="".join(names)), labels))



def test_clean_folds_what_the_font_lacks():
    render_base.set_font(None)  # Pillow's embedded font: ASCII only
    try:
        assert render_base.clean("Çağrı Ñúñez") == "Cagri Nunez"
        assert render_base.clean("Straße") == "Strasse"
        assert render_base.clean("🎲🎲 x") == "? x"
        assert render_base.clean("a\u200db\ufe0f\n") == "ab "
        assert render_base.clean("Дмитрий Объём") == "Dmitrij Obem"  # Cyrillic and Greek spelled out
        assert render_base.clean("Σωκράτης") == "Sokratis"
    finally:
        render_base.set_font(render_base.SHIPPED_FONT)


def test_shipped_font_draws_spanish_german_and_other_scripts_as_written():
    assert render_base.SHIPPED_FONT, "the bot ships a font with accents"
    for text in ("Puntuación Ñúñez", "Straße Übersicht", "Дмитрий", "Σωκράτης"):
        assert render_base.clean(text) == text
    assert render_base.clean("a\x1eb\u200d") == "ab"  # control characters are dropped


def test_fit_truncates_with_ellipsis():
    f = render_base.font(18)
    s = render_base.fit("x" * 500, f, 100)
    assert f.getlength(s) <= 100 and s.endswith(render_base.ellipsis())
    assert render_base.fit("short", f, 100) == "short"


def test_bitmap_font_fallback(monkeypatch):
    """Without FreeType, Pillow's bitmap font still gives valid images."""
    def no_freetype(size=None):
        return ImageFont.load_default_imagefont()

    monkeypatch.setattr(ImageFont, "load_default", no_freetype)
    render_base.set_font(None)
    try:
        assert not isinstance(render_base.font(20), ImageFont.FreeTypeFont)
        png(render_nimmt.render_nimmt_table(nimmt_view(stacks=5, seats=7), LONG_NAMES, LABELS))
        png(render_nimmt.render_nimmt_hand(nimmt_view(stacks=5, hand=30), LABELS))
        png(render_garbage.render_garbage_table(garbage_view(players=6, phase="jack"), LONG_NAMES, LABELS))
        png(render_profile_card.render_profile(PROFILE_NIMMT, LABELS))
    finally:
        monkeypatch.undo()
        render_base.set_font(render_base.SHIPPED_FONT)


def test_set_font_bad_path_falls_back():
    try:
        render_base.set_font("no-such-font-file.ttf")
        png(render_profile_card.render_profile(PROFILE_NIMMT, LABELS))
    finally:
        render_base.set_font(render_base.SHIPPED_FONT)


# --------------------------------------------------------------------------
# Cards


def test_heads_match_h1_and_engine():
    assert sum(render_nimmt.heads(c) for c in range(1, 101)) == 167  # H1: the deck holds 167 heads
    try:
        from core.games.nimmt.engine import HEADS
    except ImportError:  # engine not there yet
        return
    assert all(render_nimmt.heads(c) == HEADS[c] for c in range(1, 101))


def test_card_colours_follow_heads():
    bg = (0, 0, 0)
    faces = {render_nimmt.nimmt_card(c, 60, 84, bg).getpixel((30, 70)) for c in (1, 5, 10, 11, 55)}
    assert len(faces) == 5


# --------------------------------------------------------------------------
# Real engine views (when the engines are importable)


def _play(game, steps, seed):
    rnd = random.Random(seed)
    for _ in range(steps):
        if game.to_move is None:
            break
        seat = game.to_move
        game.apply(seat, rnd.choice(game.legal_actions(seat)))


@pytest.mark.parametrize("seats", [2, 7])
def test_engine_nimmt_views_render(seats):
    nimmt = pytest.importorskip("core.games.nimmt.engine")
    game = nimmt.Nimmt.new(seats=seats, seed=seats)
    for step in range(4):
        v = game.view(game.to_move if game.to_move is not None else 0)
        png(render_nimmt.render_nimmt_table(game.view(None), LONG_NAMES, LABELS))
        png(render_nimmt.render_nimmt_hand(v, LABELS))
        _play(game, 15, step)


@pytest.mark.parametrize("seats", [2, 6])
def test_engine_garbage_views_render(seats):
    garbage = pytest.importorskip("core.games.garbage.engine")
    game = garbage.Garbage.new(seats=seats, seed=seats)
    for step in range(4):
        png(render_garbage.render_garbage_table(game.view(None), LONG_NAMES, LABELS))
        _play(game, 10, step)


def test_warm_up_then_render():
    render_pool.warm_up()
    png(render_nimmt.render_nimmt_table(nimmt_view(), ["A", "B", "C", "D"], LABELS))


def test_profile_numbers_follow_the_readers_style():
    from app.i18n.catalogue import t

    def card(lang: str) -> bytes:
        return render_profile_card.render_profile(PROFILE_NIMMT, {k: t(lang, f"render.{k}") for k in render_profile_card.PROFILE_LABELS})

    comma = {k: t("en", f"render.{k}") for k in render_profile_card.PROFILE_LABELS} | {"decimal_mark": ","}
    assert render_profile_card.render_profile(PROFILE_NIMMT, comma) != card("en")  # 4,8 instead of 4.8
    spaced = {k: t("en", f"render.{k}") for k in render_profile_card.PROFILE_LABELS} | {"percent": "{value} %"}
    assert render_profile_card.render_profile(PROFILE_NIMMT, spaced) != card("en")  # 42 % instead of 42%


async def test_a_picture_a_click_waits_for_is_drawn_before_queued_table_pictures():
    import asyncio
    import threading

    done: list[str] = []
    gate = threading.Event()

    def background(name: str) -> bytes:
        gate.wait(5)
        done.append(name)
        return name.encode()

    def urgent() -> bytes:
        done.append("hand")
        return b"hand"

    tables = [asyncio.ensure_future(render_pool.draw(background, f"table{i}")) for i in range(4)]
    await asyncio.sleep(0.05)  # the first table picture is being drawn, three wait
    hand = asyncio.ensure_future(render_pool.draw(urgent, urgent=True))
    await asyncio.sleep(0.05)
    gate.set()
    assert await hand == b"hand"
    assert [await t for t in tables] == [b"table0", b"table1", b"table2", b"table3"]
    assert done == ["table0", "hand", "table1", "table2", "table3"]


def test_garbage_status_line_offers_the_discard_only_when_it_fits():
    """G1: the status line says "take the discard" only when the discard may be taken."""
    seen: set = set()
    for takeable in (True, False):
        keys: set = set()
        v = {**garbage_view(players=2, phase="source", seat=0), "can_take_discard": takeable}
        render_garbage.render_garbage_table(v, ["Ana", "Ben"], Recorder(labels_for(render_garbage.GARBAGE_TABLE_LABELS), keys))
        seen.add(("status_source" in keys, "status_draw" in keys))
        assert ("status_source" in keys) == takeable and ("status_draw" in keys) != takeable
    assert len(seen) == 2


def test_cjk_and_emoji_names_are_drawn_with_real_glyphs():
    """Chinese, Japanese, Korean and emoji come from the fallback fonts, not as "?"."""
    from PIL import Image, ImageDraw

    assert len(render_base.FALLBACK_FONTS) == 2, "the CJK and emoji fonts are shipped"
    for text in ("山田太郎", "김민준", "さくら", "Zoë 🎲", "李 Li"):
        assert render_base.clean(text) == text

    def drawn(s: str) -> bytes:
        im = Image.new("RGB", (200, 40), (0, 0, 0))
        render_base.text(ImageDraw.Draw(im), (4, 20), render_base.clean(s), render_base.font(24), (255, 255, 255),
                         anchor="lm")
        return im.tobytes()

    cjk = ImageFont.truetype(render_base.FALLBACK_FONTS[0], 24)
    for ch in ("山", "김", "さ"):
        mine = drawn(ch)
        assert mine != drawn("?") and sum(mine) > 0
        # the very glyph of the CJK font, not a box of the main font
        assert render_base.font(24).runs(ch)[0][0].getmask(ch).size == cjk.getmask(ch).size
        assert bytes(render_base.font(24).runs(ch)[0][0].getmask(ch)) == bytes(cjk.getmask(ch))
    # A table with CJK names: without the chain the names are "?" (what players saw before).
    view = nimmt_view(stacks=4, seats=3)
    names = ["山田太郎", "김민준", "🎲🎲"]
    with_chain = render_nimmt.render_nimmt_table(view, names, LABELS)
    try:
        render_base.set_font(render_base.SHIPPED_FONT, fallbacks=())
        assert render_base.clean("山田太郎") == "?"
        without = render_nimmt.render_nimmt_table(view, names, LABELS)
        as_marks = render_nimmt.render_nimmt_table(view, ["?", "?", "?"], LABELS)
    finally:
        render_base.set_font(render_base.SHIPPED_FONT)
    assert without == as_marks and with_chain != without
    assert with_chain != render_nimmt.render_nimmt_table(view, ["?", "?", "?"], LABELS)


def test_the_table_picture_names_a_computer_with_its_level_and_an_away_seat():
    """The picture names seats as the text does, shortly: 🤖 and the level for
    a computer, 💤 for a seat a computer holds while its owner is away, and a
    chosen name as drawn text (no Markdown escapes); the marks are drawn."""
    from types import SimpleNamespace

    from app.tables.manager import Seat
    from cogs.tables.game_ui import picture_names

    table = SimpleNamespace(seats=[Seat(1, "ana_*x*"), Seat(None, "CPU 2", level="hard"), Seat(3, "ben", away=True)])
    assert picture_names(table, "en") == ["ana_*x*", "🤖 CPU 2 · hard", "💤 ben"]
    assert picture_names(table, "de")[1:] == ["🤖 CPU 2 · schwer", "💤 ben"]
    assert picture_names(table, "es")[1] == "🤖 CPU 2 · difícil"
    v = nimmt_view(seats=3)
    raw = render_nimmt.render_nimmt_table(v, ["ana_*x*", "CPU 2", "ben"], LABELS)
    assert differs(render_nimmt.render_nimmt_table(v, picture_names(table, "en"), LABELS), raw)


@pytest.mark.parametrize("lang", ["en", "es", "de"])
def test_no_caption_loses_its_number_in_any_language(lang, monkeypatch):
    """With the real labels of every language, every picture draws its
    figures whole ("Nachziehstapel: 42", "Runde 3/7"): a caption too wide is
    drawn smaller, never cut before its number."""
    from app.i18n.catalogue import t
    from core.games.take6.engine import Take6

    cut: list[tuple[str, str]] = []
    fit = render_base.fit

    def watching(text, f, max_w):
        out = fit(text, f, max_w)
        if out != render_base.clean(text) and any(ch.isdigit() for ch in text):
            cut.append((text, out))
        return out

    monkeypatch.setattr(render_base, "fit", watching)
    real = {key: t(lang, f"render.{key}") for key in ALL_KEYS}
    names = ["ana", f"🤖 CPU 2 · {t(lang, 'ai.level_normal')}", "💤 ben", "dieter"]
    for _, _, call in _calls():
        call(real)
    for seats in (4, 7):
        render_nimmt.render_nimmt_table(nimmt_view(seats=seats, seat=0), (names * 2)[:seats], real)
    render_garbage.render_garbage_table({**garbage_view(players=4), "stock": 104}, names, real)
    take6 = {k: t(lang, f"take6.r_{k}") for k in render_take6.TAKE6_TABLE_LABELS}
    for seats in (4, 10):
        render_take6.render_take6_table(Take6.new(seats, 1).view(None), (names * 3)[:seats], take6)
    assert not cut, cut


@pytest.mark.parametrize("game", [spec.key for spec in registry.GAMES])
def test_profile_badge_and_game_name_are_readable(game):
    """The rank badge ("Unranked") and the game's name are drawn in the game's
    colour; whatever that colour, the text reaches WCAG AA (4.5:1) against
    what it is drawn on (11 nimmt!'s red on the badge was 2.2:1)."""
    from app.i18n.catalogue import t
    from app.render.common import SLATE, SLATE_PANEL

    labels = {k: t("en", f"render.{k}") for k in render_profile_card.PROFILE_LABELS}
    labels[f"game_{game}"] = t("en", f"{game}.title")
    im = png(render_profile_card.render_profile({**PROFILE_GARBAGE, "game": game}, labels)).convert("RGB")

    def ink(box: tuple[int, int, int, int], background: tuple[int, int, int]) -> float:
        # the text's own colour is the pixel furthest from the background (the others are its edges)
        pixels = set(im.crop(box).get_flattened_data())
        return max(render_base.contrast(p, background) for p in pixels)

    W, pad = im.width, 18
    badge = (W - pad - 150, pad + 10, W - pad - 5, pad + 30)  # inside the badge, right-aligned
    assert im.getpixel((W - pad - 3, pad + 20)) == SLATE_PANEL  # (this is the badge)
    assert ink(badge, SLATE_PANEL) >= 4.5
    assert ink((pad + 6, pad + 48, pad + 120, pad + 64), SLATE) >= 4.5  # the game's name under the player's
