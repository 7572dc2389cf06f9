"""Every game's pictures stay legible on a phone: shown 360 px wide, no text
drawn in them is under 8 px tall; the pictures mark the last move.

The states are real: games played by random legal moves from a seed, the
public events kept as the table keeps them (``Table.remember``), pictures
drawn with the real labels of each language and names that are long,
Cyrillic, Japanese or emoji.  The height of a text is its font's pixel size
(em height), as :func:`app.render.base.recording` lists every text drawn.
"""
from __future__ import annotations

import io
import random
from typing import Any, Callable

import pytest
from PIL import Image

from app.i18n.catalogue import t
from app.render import base as rb
from app.render.common import PHONE_TEXT, PHONE_WIDTH
from app.tables.manager import Table
from cogs.games.garbage import render as render_garbage
from cogs.games.nimmt import render as render_nimmt
from cogs.games.take6 import render as render_take6
from core import registry
from core.games.take6.engine import ROW_LABELS, ROW_MAX, row_for
from core.protocol import Event, to_act

NAMES = ["Bartholomew Fitzgerald-Worthington III", "山田太郎の長い名前です", "Zoë 🎲🎲🎲 the Dice Queen", "Ana",
         "Дмитрий Иванович Менделеев", "Ben", "Çağrı Ñúñez", "Eve", "李小龙", "Olivia Oliveira de Souza"]
LANGS = ("en", "es", "de")


def played(game: str, seats: int, seed: int, until: Callable[[list[Event]], bool], steps: int = 600
           ) -> tuple[Any, list[Event]]:
    """A game played by random legal moves until a move's events satisfy
    ``until`` (or it ends), and the public events the table keeps of it."""
    engine = registry.spec(game).engine().new(seats, seed)
    table = Table(id=1, guild_id=1, channel_id=1, game=game, host_id=1, max_seats=seats, options={})
    rnd = random.Random(seed)
    for _ in range(steps):
        if engine.over:
            break
        seat = rnd.choice(sorted(to_act(engine)))
        events = engine.apply(seat, rnd.choice(engine.legal_actions(seat)))
        table.remember(events)
        if until(events):
            break
    return engine, table.recent


def has(*kinds: str) -> Callable[[list[Event]], bool]:
    return lambda events: any(e["type"] in kinds for e in events)


def smallest_on_phone(draw: Callable[[], bytes]) -> tuple[float, str, Image.Image]:
    """The smallest text of the picture ``draw`` makes, in pixels once the
    picture is shown :data:`PHONE_WIDTH` wide, and that text."""
    with rb.recording() as drawn:
        data = draw()
    im = Image.open(io.BytesIO(data))
    assert drawn, "no text drawn"
    size, text = min(drawn)
    return size * PHONE_WIDTH / im.width, text, im


def labels(game: str, lang: str, keys: tuple[str, ...]) -> dict[str, str]:
    prefix = "take6.r_" if game == "take6" else "render."
    return {key: t(lang, prefix + key) for key in keys}


def _states() -> list[tuple[str, Callable[[str], bytes]]]:
    out: list[tuple[str, Callable[[str], bytes]]] = []
    for seats in (2, 7):
        for what, until in (("take", has("took")), ("batch", lambda ev: any(
                e["type"] == "played" and len(e["cards"]) > 1 for e in ev)), ("round", has("round_start"))):
            engine, recent = played("nimmt", seats, seats, until)

            def nimmt_table(lang: str, e: Any = engine, r: list[Event] = recent, n: int = seats) -> bytes:
                return render_nimmt.render_nimmt_table(e.view(None), NAMES[:n], labels(
                    "nimmt", lang, render_nimmt.NIMMT_TABLE_LABELS), r)

            def nimmt_hand(lang: str, e: Any = engine, s: int = engine.to_move if engine.to_move is not None else 0
                           ) -> bytes:
                return render_nimmt.render_nimmt_hand(e.view(s), labels("nimmt", lang, render_nimmt.NIMMT_HAND_LABELS))

            out.append((f"nimmt table {seats} seats, {what}", nimmt_table))
            out.append((f"nimmt hand {seats} seats, {what}", nimmt_hand))
    for seats in (2, 10):
        for what, until in (("reveal", has("reveal")), ("row choice", has("row_choice")), ("deal", has("deal_start"))):
            engine, recent = played("take6", seats, seats, until)

            def take6_table(lang: str, e: Any = engine, r: list[Event] = recent, n: int = seats) -> bytes:
                return render_take6.render_take6_table(e.view(None), NAMES[:n], labels(
                    "take6", lang, render_take6.TAKE6_TABLE_LABELS), r)

            def take6_panel(lang: str, e: Any = engine, s: int = min(to_act(engine), default=0)) -> bytes:
                return render_take6.render_take6_hand(e.view(s), labels("take6", lang, render_take6.TAKE6_HAND_LABELS))

            out.append((f"take6 table {seats} seats, {what}", take6_table))
            out.append((f"take6 panel {seats} seats, {what}", take6_panel))
    for seats in (2, 6):
        for what, until in (("chain", lambda ev: sum(e["type"] == "placed" for e in ev) >= 3),
                            ("jack", has("choose_jack")), ("hand", has("hand_won"))):
            engine, recent = played("garbage", seats, seats, until)

            def garbage_table(lang: str, e: Any = engine, r: list[Event] = recent, n: int = seats) -> bytes:
                return render_garbage.render_garbage_table(e.view(None), NAMES[:n], labels(
                    "garbage", lang, render_garbage.GARBAGE_TABLE_LABELS), r)

            out.append((f"garbage table {seats} seats, {what}", garbage_table))
    return out


STATES = _states()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name,draw", STATES, ids=[name for name, _ in STATES])
def test_no_text_under_8_px_on_a_phone(name: str, draw: Callable[[str], bytes], lang: str) -> None:
    height, text, im = smallest_on_phone(lambda: draw(lang))
    assert height >= PHONE_TEXT, f"{name} ({lang}, {im.width} px wide): {text!r} is {height:.1f} px on a phone"
    assert im.width <= 2 * PHONE_WIDTH


def _cut_name(text: str) -> bool:
    """``text`` ends with a player's name cut short (names are long on purpose)."""
    body = text[:-len(rb.ellipsis())]
    return any(body.endswith(name[:k]) and (len(body) == k or body[-k - 1] == " ")
               for name in map(rb.clean, NAMES) for k in range(1, len(name)))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name,draw", STATES, ids=[name for name, _ in STATES])
def test_nothing_but_a_long_name_is_cut(name: str, draw: Callable[[str], bytes], lang: str) -> None:
    """What a picture says of the table and the last move (the bull supply's count, where a
    revealed card went or that it picks a row, a chain's discard) is never cut short in any
    language; only a long name may be, at its end."""
    game = name.split()[0]
    whole = {rb.clean(t(lang, f"{prefix}{key}")) for prefix, keys in (
        ("render.", render_nimmt.NIMMT_TABLE_LABELS + render_garbage.GARBAGE_TABLE_LABELS),
        ("take6.r_", render_take6.TAKE6_TABLE_LABELS)) for key in keys}  # ("choosing…" is whole)
    with rb.recording() as drawn:
        draw(lang)
    cut = [text for _, text in drawn if text.endswith(rb.ellipsis()) and text not in whole and not _cut_name(text)]
    assert not cut, f"{name} ({lang}, {game}): cut short: {cut}"


def test_the_hand_picture_keeps_its_width() -> None:
    """From one turn to the next the panel's picture does not change width."""
    widths = set()
    for hand in (1, 3, 8, 12, 30, 60):
        view = {"hand": list(range(1, hand + 1)), "playable": {}, "stacks": []}
        widths.add(Image.open(io.BytesIO(render_nimmt.render_nimmt_hand(view, {}))).width)
    assert widths == {render_nimmt.HAND_W}


def test_the_take6_panel_shows_the_rows_beside_the_hand_and_where_each_card_goes() -> None:
    """The panel's picture stands alone: every card of the four rows and of the seat's
    hand, each hand card with where it would go now; its width does not change."""
    engine, _ = played("take6", 4, 3, has("reveal"))
    seat = min(to_act(engine))
    view = engine.view(seat)
    marked = {"hand": "HAND", "to_row": "to {row}", "takes_row": "takes {row}", "picks_row": "picks"}
    texts = _texts(lambda: render_take6.render_take6_hand(view, marked))
    rows = [text for r, row in enumerate(view["rows"])
            for text in (ROW_LABELS[r], *map(str, row), "6", str(view["row_heads"][r]))]
    hand = [str(c) for c in view["hand"]]
    assert texts[:texts.index("HAND")] == rows
    after = texts[texts.index("HAND") + 1:]
    numbers = [x for x in after if x.isdigit()]
    assert numbers == hand
    wheres = [x for x in after if not x.isdigit()]
    expected = []
    for card in view["hand"]:
        row = row_for(card, view["rows"])
        expected.append("picks" if row < 0 else f"takes {ROW_LABELS[row]}" if len(view["rows"][row]) >= ROW_MAX
                        else f"to {ROW_LABELS[row]}")
    assert wheres == expected
    widths = {Image.open(io.BytesIO(render_take6.render_take6_hand({**view, "hand": view["hand"][:n]}, marked))).width
              for n in (0, 1, 6, 10)}
    assert widths == {render_take6.W}


def _texts(draw: Callable[[], bytes]) -> list[str]:
    with rb.recording() as drawn:
        draw()
    return [text for _, text in drawn]


def test_the_nimmt_picture_says_who_played_what_where() -> None:
    engine, recent = played("nimmt", 4, 11, has("played"))
    move = next(e for e in recent if e["type"] == "played")
    texts = _texts(lambda: render_nimmt.render_nimmt_table(engine.view(None), NAMES[:4], labels(
        "nimmt", "en", render_nimmt.NIMMT_TABLE_LABELS), recent))
    name = rb.clean(NAMES[move["seat"]])
    assert any(text.startswith(name[:8]) for text in texts), texts  # the caption and the stack's tag
    cards = ", ".join(str(c) for c in move["cards"])
    assert f"{cards} on {move['label']}" in " ".join(texts)
    without = _texts(lambda: render_nimmt.render_nimmt_table(engine.view(None), NAMES[:4], labels(
        "nimmt", "en", render_nimmt.NIMMT_TABLE_LABELS)))
    assert f"{cards} on {move['label']}" not in " ".join(without)


def test_the_take6_picture_shows_the_reveal_in_the_order_placed() -> None:
    engine, recent = played("take6", 5, 3, has("reveal"))
    reveal = next(e for e in recent if e["type"] == "reveal")
    texts = _texts(lambda: render_take6.render_take6_table(engine.view(None), ["P1", "P2", "P3", "P4", "P5"], labels(
        "take6", "en", render_take6.TAKE6_TABLE_LABELS), recent))
    shown = [text for text in texts if text in {str(c) for _, c in reveal["cards"]}]
    order = [str(c) for _, c in reveal["cards"]]
    chips = shown[-len(order):]  # the reveal's cards come after the rows'
    assert chips == order
    names = [text for text in texts if text in {"P1", "P2", "P3", "P4", "P5"}]
    assert names[:len(order)] == [f"P{s + 1}" for s, _ in reveal["cards"]]


def test_the_garbage_picture_shows_the_chain() -> None:
    engine, recent = played("garbage", 3, 5, lambda ev: sum(e["type"] == "placed" for e in ev) >= 2)
    slots = [e["slot"] for e in recent[max(i for i, e in enumerate(recent) if e["type"] == "drew"):]
             if e["type"] == "placed"]
    texts = _texts(lambda: render_garbage.render_garbage_table(engine.view(None), ["Ana", "Ben", "Cy"], labels(
        "garbage", "en", render_garbage.GARBAGE_TABLE_LABELS), recent))
    assert [f"→ {s}" for s in slots] == [text for text in texts if text.startswith("→")][:len(slots)]


def test_a_new_round_or_deal_is_announced() -> None:
    for game, kind, keys, draw, key in (
            ("nimmt", "round_start", render_nimmt.NIMMT_TABLE_LABELS, render_nimmt.render_nimmt_table, ("round_start",)),
            ("take6", "deal_start", render_take6.TAKE6_TABLE_LABELS, render_take6.render_take6_table, ("deal_start",)),
            ("garbage", "hand_start", render_garbage.GARBAGE_TABLE_LABELS, render_garbage.render_garbage_table,
             ("hand_won", "hand_start"))):

        def later(ev: list[Event], k: str = kind) -> bool:
            return any(e["type"] == k and next((e[n] for n in ("round", "deal", "hand") if n in e), 1) > 1 for e in ev)

        engine, recent = played(game, 3, 2, later)
        marked = {**{k: "" for k in keys}, **{k: "NEW ROUND" for k in key}}
        texts = _texts(lambda: draw(engine.view(None), NAMES[:3], marked, recent))
        assert "NEW ROUND" in texts, game


def test_a_new_hand_marks_no_slot_of_the_hand_before() -> None:
    """Once a Garbage hand is won the layouts are dealt afresh: the banner and the chain that
    won it are shown, and no slot of the new layouts is framed as if that chain had filled it."""
    def won(ev: list[Event]) -> bool:
        return any(e["type"] == "hand_start" and e["hand"] > 1 for e in ev)

    engine, recent = played("garbage", 3, 2, won)
    start = next(i for i, e in enumerate(recent) if e["type"] == "hand_won")
    draw = render_garbage.render_garbage_table
    labelled = labels("garbage", "en", render_garbage.GARBAGE_TABLE_LABELS)
    with_chain = Image.open(io.BytesIO(draw(engine.view(None), NAMES[:3], labelled, recent)))
    without = Image.open(io.BytesIO(draw(engine.view(None), NAMES[:3], labelled, recent[start:])))
    texts = _texts(lambda: draw(engine.view(None), NAMES[:3], labelled, recent))
    assert any(text.startswith("→") for text in texts)  # the chain that won is shown
    assert with_chain.height > without.height
    panels = 2 * (render_garbage._PANEL_H + 14)  # the players' layouts, at the bottom of both
    assert (with_chain.crop((0, with_chain.height - panels, with_chain.width, with_chain.height)).tobytes()
            == without.crop((0, without.height - panels, without.width, without.height)).tobytes())


SHORT = ["Ana", "Ben", "Cy", "Di"]


def test_the_nimmt_picture_shows_a_take_its_bull_card_and_the_new_stacks() -> None:
    """A take at a glance: who took which stack and how many cards, the bull card it earned,
    and the stacks revealed in its place, each tagged new."""
    def big_take(ev: list[Event]) -> bool:
        return any(e["type"] == "took" and e["count"] >= 3 for e in ev) and any(
            e["type"] == "revealed" and e["stacks"] for e in ev) and not has("round_start")(ev)

    engine, recent = played("nimmt", 4, 5, big_take)
    took = next(e for e in reversed(recent) if e["type"] == "took")
    revealed = next(e for e in reversed(recent) if e["type"] == "revealed")
    texts = _texts(lambda: render_nimmt.render_nimmt_table(engine.view(None), SHORT, labels(
        "nimmt", "en", render_nimmt.NIMMT_TABLE_LABELS), recent))
    caption = " ".join(texts)
    assert f"{SHORT[took['seat']]}:" in texts
    assert f"took stack {took['label']} (cards: {took['count']})" in caption
    assert "a bull card" in caption
    assert "new stacks: " + ", ".join(f"{st['label']} {st['top']}" for st in revealed["stacks"]) in caption
    assert texts.count("new") == len(revealed["stacks"])


def test_the_nimmt_picture_shows_a_bull_batch_on_every_stack_it_played() -> None:
    """A bull card's batch over several stacks: every stack played is tagged with the
    player's name, and the caption says which cards went on which stack, in order."""
    seen: list[Event] = []

    def two_stacks(ev: list[Event]) -> bool:
        seen.extend(ev)
        acts, after = render_nimmt.last_turn(seen)
        return sum(e["type"] == "played" for e in acts) >= 2 and not any(
            e["type"] in ("round_start", "took") for e in after)

    engine, recent = played("nimmt", 4, 7, two_stacks, steps=2000)
    acts, _ = render_nimmt.last_turn(recent)
    batches = [e for e in acts if e["type"] == "played"]
    assert len(batches) >= 2
    texts = _texts(lambda: render_nimmt.render_nimmt_table(engine.view(None), SHORT, labels(
        "nimmt", "en", render_nimmt.NIMMT_TABLE_LABELS), recent))
    who = SHORT[batches[0]["seat"]]
    assert " · ".join(f"{', '.join(map(str, e['cards']))} on {e['label']}" for e in batches) in " ".join(texts)
    # a tag under each stack played, and the player's own row
    assert texts.count(who) == len({e["stack"] for e in batches}) + 1


def test_the_take6_picture_shows_a_row_taken() -> None:
    """A sixth card or a low card that takes a row: its chip says which row it took."""
    engine, recent = played("take6", 5, 4, has("sixth", "took_row"))
    reveal = next(i for i in range(len(recent) - 1, -1, -1) if recent[i]["type"] == "reveal")
    taken = [e for e in recent[reveal:] if e["type"] in ("sixth", "took_row")]
    texts = _texts(lambda: render_take6.render_take6_table(engine.view(None), SHORT + ["Eve"], labels(
        "take6", "en", render_take6.TAKE6_TABLE_LABELS), recent))
    assert [f"took {ROW_LABELS[e['row']]}" for e in taken] == [text for text in texts if text.startswith("took ")]


def test_a_new_deals_picture_says_the_reveal_shown_is_the_deal_befores() -> None:
    """Under a new deal's rows, the reveal strip (whose '→ D' and 'took C' were rows of the
    deal before) says it is that deal's last turn; before the deal ends it is the reveal."""
    def second(ev: list[Event]) -> bool:
        return any(e["type"] == "deal_start" and e["deal"] == 2 for e in ev)

    engine, recent = played("take6", 3, 2, second)
    draw = render_take6.render_take6_table
    for lang in LANGS:
        marked = labels("take6", lang, render_take6.TAKE6_TABLE_LABELS)
        texts = _texts(lambda: draw(engine.view(None), SHORT[:3], marked, recent))
        assert t(lang, "take6.r_revealed_last", deal=1) in texts and t(lang, "take6.r_revealed") not in texts
    reveal = max(i for i, e in enumerate(recent) if e["type"] == "reveal")
    texts = _texts(lambda: draw(engine.view(None), SHORT[:3], labels("take6", "en", render_take6.TAKE6_TABLE_LABELS),
                                recent[:reveal + 1]))
    assert "Revealed, in the order placed" in texts


def test_a_new_rounds_caption_says_the_move_ended_the_round_before() -> None:
    """Under the banner of a new 11 nimmt! round, the caption of the move that ended the round
    before (its stacks went with that round) says so."""
    def second(ev: list[Event]) -> bool:
        return any(e["type"] == "round_start" and e["round"] == 2 for e in ev)

    engine, recent = played("nimmt", 3, 3, second, steps=3000)
    for lang in LANGS:
        texts = _texts(lambda: render_nimmt.render_nimmt_table(engine.view(None), SHORT[:3], labels(
            "nimmt", lang, render_nimmt.NIMMT_TABLE_LABELS), recent))
        assert t(lang, "render.last_round_over", round=1) in " ".join(texts), texts
