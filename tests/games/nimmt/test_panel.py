"""The private 11 nimmt! panel stays within Discord's limits however big the
hand or the table gets (25 options per select, 5 rows of 5 buttons)."""
from __future__ import annotations

from app.tables.manager import Seat, Table
from cogs.games.nimmt.cog import NimmtUI, labels
from core.games.nimmt.engine import Nimmt, Play


def panel(ui: NimmtUI, table: Table, seat: int, lang: str, **kwargs):
    """The private panel of one seat, built from that seat's view only, with its picture."""
    from cogs.games.nimmt import render as render_nimmt

    embed, items, view = ui.panel_parts(table, seat, lang, **kwargs)
    return embed, items, render_nimmt.render_nimmt_hand(view, labels(lang, render_nimmt.NIMMT_HAND_LABELS))


def table_with(engine: Nimmt) -> Table:
    table = Table(id=5, guild_id=1, channel_id=2, game="nimmt", host_id=10, max_seats=2, options={},
                  seats=[Seat(10, "Ana"), Seat(11, "Ben")], status="playing")
    table.engine = engine
    return table


def check_limits(view) -> list[dict]:
    payload = view.to_components()
    assert len(payload) <= 5
    for row in payload:
        kinds = [c["type"] for c in row["components"]]
        assert len(kinds) <= 5 and (kinds.count(3) == 0 or kinds == [3])
        for c in row["components"]:
            assert len(c["custom_id"]) <= 100
            if c["type"] == 3:
                assert 1 <= len(c["options"]) <= 25
                assert c["max_values"] <= len(c["options"])
    return [c for row in payload for c in row["components"]]


def test_more_than_25_stacks_are_paged():
    # 30 stacks, Ana holds one card fitting stack 29 only (top 90 -> 95 fits).
    stacks = [[c] for c in range(1, 61, 2)][:29] + [[90]]
    engine = Nimmt.from_position([[95, 100], [62]], stacks, draw=[])
    ui = NimmtUI(bot=None)
    table = table_with(engine)
    embed, view, image = panel(ui, table, 0, "en")
    items = check_limits(view)
    stack_select = next(c for c in items if c["custom_id"].startswith("nimmt.stack:5"))
    assert len(stack_select["options"]) == 25
    pager = [c for c in items if c["custom_id"].startswith("nimmt.page:")]
    assert len(pager) == 2 and pager[0]["disabled"] and not pager[1]["disabled"]
    # The next page holds the other five stacks, the one that fits among them.
    embed, view, image = panel(ui, table, 0, "en", page=1)
    items = check_limits(view)
    stack_select = next(c for c in items if c["custom_id"].startswith("nimmt.stack:5"))
    assert len(stack_select["options"]) == 5
    assert any("fits" in (o.get("description") or "") for o in stack_select["options"])
    assert image[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_hand_of_more_than_25_cards_opens_a_stack_through_pages():
    hand = list(range(1, 41))  # H7: no stack on the table, 40 cards to choose from
    engine = Nimmt.from_position([hand, [99]], [], draw=[])
    assert engine.view(0)["phase"] == "open"
    ui = NimmtUI(bot=None)
    table = table_with(engine)
    seen: list[int] = []
    for page in range(2):
        embed, view, image = panel(ui, table, 0, "en", page=page)
        items = check_limits(view)
        opener = next(c for c in items if c["custom_id"].startswith("nimmt.open:5"))
        seen += [int(o["value"]) for o in opener["options"]]
    assert seen == hand
    # The whole hand is listed in the panel's text for its owner.
    assert "40" in embed.description and "Your hand (40 cards)" in embed.description


def test_bull_holder_may_pick_several_cards_and_end_the_turn():
    engine = Nimmt.from_position([[34, 35, 40, 60], [1]], [[33], [55]], bulls=[2, 0], draw=[])
    ui = NimmtUI(bot=None)
    table = table_with(engine)
    embed, view, image = panel(ui, table, 0, "en", stack=0)
    items = check_limits(view)
    cards = next(c for c in items if c["custom_id"].startswith("nimmt.cards:5"))
    assert [o["value"] for o in cards["options"]] == ["34", "35", "40"] and cards["max_values"] == 3
    assert any(c["custom_id"].startswith("nimmt.take:5") for c in items)
    engine.apply(0, engine.parse("play 0 34 35"))
    table.log.append((0, "play 0 34 35"))
    embed, view, image = panel(ui, table, 0, "en")
    items = check_limits(view)
    assert any(c["custom_id"].startswith("nimmt.pass:5") for c in items)  # end the turn early
    assert not any(c["custom_id"].startswith("nimmt.take:") for c in items)  # no take after a batch


async def test_the_hand_picture_follows_the_hand_and_is_drawn_off_the_loop():
    # Ana's picture is the same while her hand and what fits stay the same (a panel
    # redraw after someone else's move), and a new one once a card left her hand.
    import threading

    from cogs.games.nimmt import render as render_nimmt

    drawn_in: list[str] = []
    original = render_nimmt.render_nimmt_hand

    def spy(view, labels):
        drawn_in.append(threading.current_thread().name)
        return original(view, labels)

    engine = Nimmt.from_position([[5, 40, 77], [62, 63]], [[3], [30], [70]], draw=[])
    ui = NimmtUI(bot=None)
    render_nimmt.render_nimmt_hand = spy
    try:
        first = await ui.hand_image(engine.view(0), "en")
        again = await ui.hand_image(engine.view(0), "en")
        assert again == first and len(drawn_in) == 1
        assert drawn_in[0] != threading.main_thread().name  # a worker thread, not the event loop
        english = labels("en", render_nimmt.NIMMT_HAND_LABELS)
        assert first == original(engine.view(0), english)
        stack, cards = next(iter(engine.view(0)["playable"].items()))
        engine.apply(0, Play(int(stack), (cards[0],)))
        after = await ui.hand_image(engine.view(0), "en")
        assert after != first and len(drawn_in) == 2
        assert after == original(engine.view(0), english)
    finally:
        render_nimmt.render_nimmt_hand = original


def test_when_nothing_fits_each_stack_is_taken_in_one_click():
    # Ana's 50 and 77 fit neither 10 nor 30 (nor 88 + 1..10 wrapping to 98): a Take button per stack.
    engine = Nimmt.from_position([[50, 77], [62]], [[9, 10], [30], [88]], draw=[])
    ui = NimmtUI(bot=None)
    table = table_with(engine)
    embed, view, image = panel(ui, table, 0, "en")
    items = check_limits(view)
    takes = [c for c in items if c["custom_id"].startswith("nimmt.take:5")]
    stacks = {s["id"]: s for s in engine.view(0)["stacks"]}
    assert sorted(int(c["custom_id"].split(":")[3]) for c in takes) == sorted(stacks)
    assert [c["label"] for c in takes] == [f"Take {s['label']} ({s['top']})" for s in stacks.values()]
    # The panel says, as text, the hand and the stacks it could take.
    assert "50" in embed.description and "77" in embed.description
    for s in stacks.values():
        assert f"**{s['label']}** {s['top']}" in embed.description
    # Once a card fits, its play is the one click and no stack is offered to take at once.
    engine = Nimmt.from_position([[12, 77], [62]], [[9, 10], [30], [88]], draw=[])
    embed, view, image = panel(ui, table_with(engine), 0, "en")
    items = check_limits(view)
    assert not any(c["custom_id"].startswith("nimmt.take:") for c in items)
    assert any(c["custom_id"].startswith("nimmt.play:5") for c in items)
    assert "Fits now: **A** 12" in embed.description
