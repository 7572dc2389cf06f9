"""An upgrade from the version before typed items: its messages (a lobby, the
table messages, the private panels still open) carry ``table:<id>:<op>...``
and ``tsel:<id>:<op>...`` custom_ids.  After a restart on today's code the
clicks on them still do what they did, through the same checks."""
from __future__ import annotations

from typing import Any

import pytest

from app.i18n.catalogue import t
from tests.e2e import button, open_hand, open_table, panel_answer, private_answer, running_bot, select, start_table

pytestmark = pytest.mark.timeout(300)

_PLAIN = {"table.join": "join", "table.leave": "leave", "table.cpu": "cpu", "table.start": "start",
          "table.cancel": "cancel", "table.rules": "rules", "table.back": "back", "table.again": "again",
          "nimmt.hand": "hand", "take6.hand": "hand", "nimmt.refresh": "nrefresh", "take6.refresh": "sixrefresh"}
_VERSIONED = {"nimmt.hint": "nhint", "nimmt.pass": "npass", "garbage.draw": "gdraw", "garbage.discard": "gdisc",
              "garbage.hint": "ghint"}


def old_id(custom_id: str) -> str:
    """How the version before typed items spelled the same control
    (``table:<id>:<op>[:<version>][:<arg>]``, ``tsel:`` for menus)."""
    kind, table, *rest = custom_id.split(":")
    if kind in _PLAIN:
        return f"table:{table}:{_PLAIN[kind]}"
    if kind in _VERSIONED:
        return f"table:{table}:{_VERSIONED[kind]}:{rest[0]}"
    old = {
        "table.level": lambda: f"tsel:{table}:cpu",
        "table.hints": lambda: f"table:{table}:hints:0:{rest[0]}",
        "nimmt.page": lambda: f"table:{table}:npage:{rest[0]}:p{rest[1]}",
        "nimmt.opage": lambda: f"table:{table}:nopage:{rest[0]}:p{rest[1]}",
        "nimmt.stack": lambda: f"tsel:{table}:nstack:{rest[0]}:p{rest[1]}",
        "nimmt.open": lambda: f"tsel:{table}:nopen:{rest[0]}:p{rest[1]}",
        "nimmt.steal": lambda: f"tsel:{table}:nsteal:{rest[0]}",
        "nimmt.cards": lambda: f"tsel:{table}:ncards:{rest[0]}:{rest[1]}",
        "nimmt.take": lambda: f"table:{table}:ntake:{rest[0]}:{rest[1]}",
        "nimmt.play": lambda: f"table:{table}:nplay:{rest[0]}:{rest[1]}.{rest[2]}",
        "garbage.jack": lambda: f"table:{table}:gjack:{rest[0]}:{rest[1]}",
        "take6.card": lambda: f"table:{table}:sixcard:0:d{rest[0]}t{rest[1]}i{rest[2]}",
        "take6.row": lambda: f"table:{table}:sixrow:0:d{rest[0]}t{rest[1]}r{rest[2]}",
    }.get(kind)
    return old() if old else custom_id  # (not a table control: e.g. the shuffle commitment)


def posted_before(message: Any) -> Any:
    """The message as the version before typed items posted it."""
    for component in message.all_components():
        if component.get("custom_id"):
            component["custom_id"] = old_id(component["custom_id"])
    assert any(c.get("custom_id", "").startswith(("table:", "tsel:")) for c in message.all_components())
    return message


async def test_controls_posted_before_typed_items_work_after_the_upgrade(world, tmp_path):
    fd = world.fd
    ana, ben, cara = world.person("ana"), world.person("ben"), world.person("cara")
    database = tmp_path / "bot.db"
    lobby_channel = fd.add_channel(world.guild, "lobby")
    garbage_channel = fd.add_channel(world.guild, "garbage")
    take6_channel = fd.add_channel(world.guild, "take6")
    async with running_bot(fd, database, world.guild, table_seed=4) as bot:
        lobby = await open_table(fd, cara, lobby_channel, "garbage new", seats=3, turn_time=0)
        nimmt = await start_table(fd, world.channel, ana, [ben], "nimmt new", turn_time=0, rounds=1)
        live = bot.tables.get(nimmt.table_id)
        mover = [ana, ben][live.engine.to_move]
        # two panels of the mover, each open on a stack where a card fits
        panels = []
        for _ in range(2):
            panel = await open_hand(nimmt, mover)
            stacks = select(panel, r"nimmt\.stack:\d+:.*")
            no_fit = t("en", "nimmt.stack_no_fit")
            fitting = [o for o in stacks["options"] if o.get("description") != no_fit]
            assert fitting, "seed 4: the first mover has a card that fits"
            panel = (await nimmt.choose(mover, panel, stacks["custom_id"], [fitting[0]["value"]])).message
            assert select(panel, r"nimmt\.cards:\d+:.*")
            panels.append(panel)
        panel, older = panels
        six = await start_table(fd, take6_channel, ana, [ben], "take6 new", turn_time=0)
        six_panel = await open_hand(six, ana, "take6")
        trash = await start_table(fd, garbage_channel, ana, [ben], "garbage new", turn_time=0)
        trash_live = bot.tables.get(trash.table_id)
        trash_mover = [ana, ben][trash_live.engine.to_move]
        trash_draw = button(trash.table_message(), rf"garbage\.draw:{trash.table_id}:\d+")["custom_id"]
        versions = {table.table_id: bot.tables.get(table.table_id).version for table in (nimmt, six, trash)}
    # What the version before had posted: the same controls under its own ids.
    for message in (lobby.lobby, panel, older, six_panel):
        posted_before(message)

    async with running_bot(fd, database, world.guild) as bot:
        # A start redraws the lobby with today's ids; a Join clicked on the old one (a
        # client that had not seen the redraw yet) still seats the clicker.
        await fd.wait_for(lambda: button(fd.message(lobby.lobby.id), rf"table\.join:{lobby.table_id}"), timeout=10)
        r = lobby.record(await fd.forge(ben, lobby.lobby, f"table:{lobby.table_id}:join"))
        assert r.ack_type == 7 and bot.tables.get(lobby.table_id).seat_of(ben.id) is not None
        assert button(r.message, rf"table\.join:{lobby.table_id}") is not None
        # The old lobby's level menu (picked before the redraw reached the host) adds a computer.
        r = await fd.forge(cara, lobby.lobby, f"tsel:{lobby.table_id}:cpu", component_type=3, values=["hard"])
        assert r.ack_type == 7 and [s.level for s in bot.tables.get(lobby.table_id).seats if s.computer] == ["hard"]

        # The open 11 nimmt! panel plays a card through its old menu.
        live = bot.tables.get(nimmt.table_id)
        before = list(live.engine.log)
        cards = select(panel, r"tsel:\d+:ncards:\d+:\d+")
        r = await nimmt.choose(mover, panel, cards["custom_id"], [cards["options"][0]["value"]])
        await panel_answer(r)
        assert live.version == versions[nimmt.table_id] + 1
        assert live.engine.log[:len(before)] == before and len(live.engine.log) == len(before) + 1
        # The other old panel now is from an earlier moment: it refreshes itself and acts no more.
        r = await nimmt.choose(mover, older, cards["custom_id"], [cards["options"][0]["value"]])
        assert t("en", "nimmt.stale_panel") in (await panel_answer(r)).text()
        assert live.version == versions[nimmt.table_id] + 1
        # The old table message's My hand (a click before its redraw) opens a panel.
        r = await fd.forge(ben, nimmt.table_message(), f"table:{nimmt.table_id}:hand")
        assert r.ack_type == 6  # (an update of the table message; the panel follows privately)
        shown = await private_answer(r)
        assert shown.ephemeral_to == ben.id and "Your hand" in shown.text()

        # The open 6 nimmt! panel chooses a card through its old button.
        six_live = bot.tables.get(six.table_id)
        card = next(b for b in six_panel.buttons() if b["custom_id"].startswith(f"table:{six.table_id}:sixcard:"))
        r = await six.click(ana, six_panel, card["custom_id"])
        await panel_answer(r)  # (after a start its picture is drawn anew: acknowledged, then edited)
        assert six_live.engine.view(None)["chosen"][six_live.seat_of(ana.id)]

        # Garbage: a Draw clicked on the table message before its redraw draws.
        trash_live = bot.tables.get(trash.table_id)
        old_draw = old_id(trash_draw)
        assert old_draw.startswith(f"table:{trash.table_id}:gdraw:")
        r = await fd.forge(trash_mover, trash.table_message(), old_draw)
        assert r.ack_type == 6 and trash_live.version > versions[trash.table_id]
        # ... and a forged old id answers as every forged id does.
        r = await fd.forge(trash_mover, trash.table_message(), f"table:{trash.table_id}:gjack:0:99")
        assert r.ephemeral and (r.followups[-1] if r.followups else r.message).text() == t("en", "guard.bad_input")
