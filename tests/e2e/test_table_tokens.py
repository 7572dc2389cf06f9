"""*My hand* on the table message of 11 nimmt! and 6 nimmt!: the click is answered at
once as an update of the table message, the panel follows privately, and that
click's token redraws the table message from then on (an edit Discord does not
count against the bot's global limit) instead of the bot's own channel edit."""
from __future__ import annotations

import re

import pytest

from app.i18n.catalogue import t as translate
from tests.e2e import (button, followed_panel, nimmt_turn, open_hand, panel_answer, private_answer, running_bot, select,
                       started)
from tests.e2e.test_take6 import card_buttons, summary_line

pytestmark = pytest.mark.timeout(300)


def channel_edits(fd, message, since: int) -> list:
    """The bot's own edits of ``message`` (PATCH /channels/{id}/messages/{id}) since request ``since``."""
    return [r for r in fd.requests[since:]
            if r.method == "PATCH" and re.fullmatch(rf"/channels/\d+/messages/{message.id}", r.path)]


async def test_my_hand_is_private_and_its_token_redraws_the_table(world, tmp_path):
    fd = world.fd
    ana, eve = world.person("ana"), world.person("eve")  # eve only watches
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, [ana], computers=1, rounds=1, turn_time=0)
        seat = table.seat_of(ana.id)
        await fd.wait_for(lambda: table.engine.to_move == seat
                          and "▶ ana:" in (t.table_message().text() if t.table_message() else ""), timeout=10)
        message = t.table_message()
        r = await t.click(ana, message, f"nimmt.hand:{t.table_id}")
        # answered at once as an update of the table message, which it does not change
        assert r.ack_type == 6 and r.message is message and r.latency < 3, r
        panel = await private_answer(r)
        assert panel.ephemeral_to == ana.id and panel is not message
        assert "Your hand" in panel.text() and all(str(c) in panel.text() for c in table.engine.view(seat)["hand"])
        # nobody else sees it, nor can click it
        assert panel not in fd.messages(t.thread) and panel not in fd.visible_messages(eve, t.thread)
        assert panel not in fd.ephemerals(eve)
        with pytest.raises(PermissionError):
            await fd.click(eve, panel, f"nimmt.refresh:{t.table_id}")

        # ana moves on her panel: the table message is redrawn through her My hand's token,
        # and so is the computer's move after it; the bot makes no edit of its own
        since, edits = len(fd.requests), len(message.edited_by)
        stacks = select(panel, r"nimmt.stack:\d+:.*")
        r = await t.choose(ana, panel, stacks["custom_id"], [stacks["options"][0]["value"]])
        assert r.ack_type == 7 and r.message is panel
        version = table.version
        r = await t.click(ana, panel, button(panel, r"nimmt.take:\d+:.*")["custom_id"])
        assert await panel_answer(r) is panel and "took stack" in panel.text()
        await fd.wait_for(lambda: table.version >= version + 2  # the take, then the computer's move
                          and (table.engine.to_move == seat or table.status != "playing"), timeout=10)
        counts = table.engine.view(None)["hand_counts"]
        names = [f"🤖 {s.name} (computer · {s.level})" if s.computer else s.name for s in table.seats]

        # her next turn is a new table message at the bottom that pings her; the one she
        # clicked My hand on goes, deleted through the same token
        playing = table.status == "playing"
        current = await fd.wait_for(lambda: (m := t.table_message()) is not None and (m is not message) == playing
                                    and m, timeout=10)

        def shows_saved() -> bool:  # every seat's hand as saved
            return all(re.search(rf"{re.escape(n)}: {c} cards?,", current.text()) for n, c in zip(names, counts))

        await fd.wait_for(shows_saved, timeout=10)
        computer = table.seats[1 - seat].name
        assert re.search(rf"\*\*{re.escape(computer)}\*\* (played|took stack)", t.log_text())
        if playing:
            await fd.wait_for(lambda: message.deleted, timeout=10)
            assert fd.pings(t.thread)[-1] == (current, ana.id)
            assert any(r.method == "DELETE" and r.path.endswith("/messages/@original") for r in fd.requests[since:])
        assert set(message.edited_by[edits:]) <= {"webhook"}, message.edited_by
        assert not channel_edits(fd, message, since)
        assert not any(r.method == "DELETE" and r.path.startswith("/channels/") for r in fd.requests[since:])
    fd.assert_clean()


async def test_a_panel_opened_by_my_hand_keeps_itself_current(world, tmp_path):
    """The panel is a followup of the My hand click, known by its own id: when another
    player's move makes it its owner's turn, the panel comes down below the ping as a new
    followup of that click, the one above is deleted by its id through the same token,
    and the new one works from there."""
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        mover = people[table.engine.to_move]
        waiter = people[1 - table.engine.to_move]
        r = await t.click(waiter, t.table_message(), f"nimmt.hand:{t.table_id}")
        panel = await private_answer(r)
        assert translate("en", "nimmt.panel_waiting", name=mover.name) in panel.text()
        since = len(fd.requests)
        await nimmt_turn(t, mover)
        below = await followed_panel(t, waiter)
        await fd.wait_for(lambda: select(below, r"nimmt\.(stack|steal|open):\d+:.*"), timeout=10)
        assert below.ephemeral_to == waiter.id and below in r.followups
        await fd.wait_for(lambda: fd.message(panel.id).deleted, timeout=10)
        token = r.interaction.token
        assert any(q.method == "DELETE" and q.path.endswith(f"{token}/messages/{panel.id}") for q in fd.requests[since:])
        await nimmt_turn(t, waiter, below)
        assert table.engine.to_move == table.seat_of(mover.id) or table.status != "playing"
    fd.assert_clean()


@pytest.mark.parametrize("game", ["nimmt", "take6"])
async def test_my_hand_of_someone_not_seated_is_refused_privately(world, tmp_path, game):
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    eve = world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        if game == "nimmt":
            t, table = await started(world, bot, people, rounds=1, turn_time=0)
        else:
            t, table = await started(world, bot, people, "take6 new", deals=1, turn_time=0)
        message = t.table_message()
        text, version = message.text(), table.version
        r = await t.click(eve, message, f"{game}.hand:{t.table_id}")
        assert r.ack_type == 6 and r.latency < 3, r
        told = await private_answer(r)
        assert told.ephemeral_to == eve.id and told.text() == translate("en", "errors.not_seated")
        assert told not in fd.ephemerals(people[0]) and told not in fd.messages(t.thread)
        assert table.version == version and message.text() == text
        assert not [m for m in fd.ephemerals(eve) if "Your hand" in m.text()]
    fd.assert_clean()


async def test_take6_my_hand_token_redraws_the_table(world, tmp_path):
    """6 nimmt!: a card chosen on a panel opened by My hand shows on the table message
    through that click's token; the bot makes no channel edit of the table message."""
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        tbl, table = await started(world, bot, [ana, ben], "take6 new", deals=1, turn_time=0)
        message = tbl.table_message()
        r = await tbl.click(ana, message, f"take6.hand:{tbl.table_id}")
        assert r.ack_type == 6 and r.message is message, r
        panel = await private_answer(r)
        assert panel.ephemeral_to == ana.id and card_buttons(panel)
        assert panel not in fd.visible_messages(eve, tbl.thread) and panel not in fd.visible_messages(ben, tbl.thread)
        ben_panel = await open_hand_take6(tbl, ben)
        since, edits = len(fd.requests), len(message.edited_by)
        r = await tbl.click(ana, panel, card_buttons(panel)[0]["custom_id"])
        assert r.ack_type == 7 and r.message is panel
        chosen = translate("en", "take6.summary_chosen")
        await fd.wait_for(lambda: chosen in summary_line(message, "ana"), timeout=10)
        assert tbl.table_message() is message
        assert message.edited_by[edits:] and set(message.edited_by[edits:]) == {"webhook"}, message.edited_by
        assert not channel_edits(fd, message, since)
        # ben's panel, opened by My hand (a followup), is redrawn by its id when ana chooses
        await fd.wait_for(lambda: any(r.method == "PATCH" and r.path.endswith(f"/messages/{ben_panel.id}")
                                      for r in fd.requests[since:]), timeout=10)
        assert "webhook" in ben_panel.edited_by and card_buttons(ben_panel)
        picture = ben_panel.attachments[0]["data"]
        r = await tbl.click(ben, ben_panel, card_buttons(ben_panel)[0]["custom_id"])
        # What the reveal does depends on the deal (the test's own, tests/README.md "Deals"):
        # a reveal that asks for a row (it waits for the choice: no turn timer) leaves ben's
        # picture (hand and rows) as it was, and the click is answered with the panel at
        # once (7); a reveal that placed both cards needs a new picture: the click is
        # acknowledged (6) and the panel with the new picture follows as an edit of it.
        asks_row = table.engine.view(None)["phase"] == "row"
        assert r.ack_type == (7 if asks_row else 6) and r.message is ben_panel, (asks_row, r)
        if asks_row:
            assert ben_panel.attachments[0]["data"] == picture
        else:
            await fd.wait_for(lambda: ben_panel.attachments[0]["data"] != picture, timeout=10)
        await fd.wait_for(lambda: table.engine.view(None)["turn"] > 1 or table.engine.view(None)["phase"] == "row",
                          timeout=10)
        assert not channel_edits(fd, message, since)
    fd.assert_clean()


async def open_hand_take6(tbl, user):
    return await open_hand(tbl, user, "take6")
