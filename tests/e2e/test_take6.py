"""6 nimmt! played end to end: slash commands and clicks against the Discord
stand-in, the real discord.py client running the real bot.  Everyone chooses
at once; the table shows who has chosen, never what."""
from __future__ import annotations

import re

import pytest

from app.i18n.catalogue import t
from cogs.games.take6 import render as render_take6
from tests.e2e import button, check_record, description, live_engine, open_hand, panel_answer, running_bot, started
from tests.e2e.table_state import per_table_state

pytestmark = pytest.mark.timeout(300)


def summary_line(message, name: str) -> str:
    text = description(message)
    return next(line for line in text.splitlines() if re.match(rf"(▶ )?{name}: ", line))


async def open_panel(tbl, user):
    return await open_hand(tbl, user, "take6")


def card_buttons(panel):
    return [b for b in panel.buttons() if re.fullmatch(r"take6\.card:\d+:\d+:\d+:\d+", b["custom_id"])]


def row_buttons(panel):
    return [b for b in panel.buttons() if re.fullmatch(r"take6\.row:\d+:\d+:\d+:\d", b["custom_id"])]


async def test_full_game_three_seats_with_a_computer(world, tmp_path):
    """Two people and a computer play a one-deal game by clicking their cards;
    the table shows who has chosen but not what; a card below every row asks
    its player for a row (S2); the end lands in /stats and /history."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    # seed 0: playing their lowest cards, a person's card is below every row in turn 3
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=0) as bot:
        tbl, table = await started(world, bot, [ana, ben], "take6 new", computers=1, deals=1, turn_time=0)
        assert "Deals: 1" in tbl.lobby.text()
        engine = live_engine(table)
        seat = {ana.id: table.seat_of(ana.id), ben.id: table.seat_of(ben.id)}
        pinged = await fd.wait_for(lambda: any(ana.id in m.mentions and ben.id in m.mentions
                                               for m in fd.messages(tbl.thread)), timeout=10)
        assert pinged  # a simultaneous turn pings everyone who chooses

        # -- one simultaneous turn, looked at closely: Ana chooses, Ben has not yet
        panel = await open_panel(tbl, ana)
        second = await open_panel(tbl, ana)  # an older panel, left open
        hand = engine.view(seat[ana.id])["hand"]
        # the panel stands alone: its picture is the four rows with her hand, as her view draws them
        [picture] = panel.attachments
        assert picture["filename"] == "hand.png" and panel.embeds[0]["image"]["url"] == "attachment://hand.png"
        assert picture["data"] == render_take6.render_take6_hand(engine.view(seat[ana.id]), {
            k: t("en", f"take6.r_{k}") for k in render_take6.TAKE6_HAND_LABELS})
        cards = card_buttons(panel)
        # one button per card; its id names a place in the hand (d<deal>t<turn>i<index>), never the card
        assert [b["label"].split(" ")[0] for b in cards] == [str(c) for c in hand]
        r = await tbl.click(ana, panel, cards[0]["custom_id"])
        assert r.ack_type == 7 and f"You chose the {hand[0]}" in r.message.text()
        assert not card_buttons(r.message)  # chosen: no second choice
        r = await tbl.click(ana, second, card_buttons(second)[1]["custom_id"])  # the other panel's next card
        assert r.ack_type == 7 and "Waiting for: ben" in r.message.text()
        assert hand[1] in engine.view(seat[ana.id])["hand"]  # nothing changed
        chosen_text = t("en", "take6.summary_chosen")
        await fd.wait_for(lambda: chosen_text in summary_line(tbl.table_message(), "ana"), timeout=10)
        line = summary_line(tbl.table_message(), "ana")
        assert str(hand[0]) not in line.replace("9 in hand", "")  # who has chosen, not what
        assert t("en", "take6.summary_choosing") in summary_line(tbl.table_message(), "ben")
        ben_panel = await open_panel(tbl, ben)
        shown = [int(b["label"].split(" ")[0]) for b in card_buttons(ben_panel)]
        assert shown == engine.view(seat[ben.id])["hand"] and hand[0] not in shown
        hand_line = next(x for x in ben_panel.text().splitlines() if x.startswith("Your hand ("))
        assert hand[0] not in [int(n) for n in re.findall(r"\b\d+\b", hand_line.split(":", 1)[1])]

        # -- then everyone plays their lowest card whenever asked, until the end
        row_asked = False
        for _ in range(200):
            if table.status != "playing":
                break
            acted = False
            for user in (ana, ben):
                s = seat[user.id]
                if s not in engine.to_act:
                    continue
                panel = await open_panel(tbl, user)
                rows = row_buttons(panel)
                if rows:
                    row_asked = True
                    assert "is lower than every row" in panel.text()
                    # the live table (its last moves) says so too, once its redraw has landed
                    await fd.wait_for(lambda: "picks the row to take" in tbl.log_text()
                                      or "picks the row" in tbl.table_message().text(), timeout=10)
                    r = await tbl.click(user, panel, rows[1]["custom_id"])
                    await panel_answer(r)  # (the rows changed: its picture is drawn anew, the click acknowledged first)
                    await fd.wait_for(lambda: f"**{user.name}** takes row B" in tbl.log_text(), timeout=10)
                else:
                    r = await tbl.click(user, panel, card_buttons(panel)[0]["custom_id"])
                    await panel_answer(r)  # (the last card chosen reveals: new rows, a new picture)
                acted = True
            if not acted:
                await fd.wait_for(lambda: table.status != "playing" or any(
                    seat[u.id] in engine.to_act for u in (ana, ben)), timeout=10)
        assert table.status == "finished" and row_asked
        await fd.wait_for(lambda: t("en", "table.finished") in fd.message(tbl.lobby.id).text(), timeout=10)
        # every player's latest panel says the game is over (it kept itself current to the end)
        for user in (ana, ben):
            latest = [m for m in fd.ephemerals(user) if button(m, r"take6\.refresh:\d+")][-1]
            await fd.wait_for(lambda: t("en", "take6.panel_over") in latest.text(), timeout=5)
        log = tbl.log_text()
        assert "🔔 Revealed:" in log and "Deal 1 is over." in log and "Game over!" in log
        result = engine.result
        for s, person in enumerate(table.seats):
            name = person.name if person.user_id else f"{person.name}"
            assert f"{result.places[s]}. **{name}** — {result.scores[s]}" in log
        check_record(tbl, bot, table)
        # The thread is a record: one message per deal (two for a long one) and the live table.
        left = fd.messages(tbl.thread)
        print(f"6 nimmt! 2 people + 1 computer: {len(table.log)} moves, {len(left)} messages left in the "
              f"thread, {len(fd.pings(tbl.thread))} pings")
        assert len(left) <= 3 * table.engine.view(None)["deal"] + 2, [m.content[:40] for m in left]
        # at the bottom, the last table message and the last round's record with the standings
        live = tbl.table_message()
        assert all(not m.attachments for m in left if m.id > live.id)
        assert "Game over!" in "\n".join(m.content for m in left if m.id > live.id or m in left[-2:])
        # every interaction was answered once, within Discord's 3 seconds
        assert all(a.latency is not None and a.latency < 3 for a in tbl.acks)
        # once it is over and told, the bot keeps nothing of the table (open panels included)
        await fd.wait_for(lambda: not any(per_table_state(bot).values()), timeout=10)

        # -- the end is recorded: /stats shows the declared figures, /history the game
        r = await fd.slash(ana, world.channel, "stats", game="take6")
        await r.settled(timeout=10)
        msg = r.followups[0] if r.followups else r.message
        won = int(result.places[seat[ana.id]] == 1)
        deals_won = result.stats[seat[ana.id]]["deals_won"]
        rows = result.stats[seat[ana.id]]["rows_taken"]
        text = msg.text()
        assert t("en", "stats.title", name="ana", game="6 nimmt!") in text
        assert t("en", "stats.games", games=1, wins=won, rate=f"{100 * won}%") in text
        assert t("en", "take6.stats_line", avg=f"{result.scores[seat[ana.id]]:.1f}", deals=deals_won,
                 rows=rows) in text, text
        assert any(a["filename"] == "profile.png" for a in msg.attachments)
        history = await bot.store.history(ben.id)
        assert history and history[0]["game"] == "take6"
        r = await fd.slash(ana, world.channel, "leaderboard", game="take6", by="wins")
        await r.settled(timeout=10)
        board = (r.followups[0] if r.followups else r.message).text()
        assert "ana" in board and "ben" in board


async def test_timeout_chooses_for_who_has_not_and_three_misses_hand_the_seat_over(world, tmp_path):
    """S3: when the timer runs out, the computer chooses for every seat that
    has not chosen and the table says so; the third miss in a row hands the
    seat to a computer until its owner is back."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    # TIME_SCALE 0.05: the table's 120-second turn timer runs out after 6 s, long enough
    # for ana to see her turn, open her hand and choose on a busy machine.
    async with running_bot(fd, tmp_path / "bot.db", world.guild, time_scale=0.05) as bot:
        tbl, table = await started(world, bot, [ana, ben], "take6 new", deals=2, turn_time=120)
        assert "Time runs out" in tbl.table_message().text()
        engine = live_engine(table)
        ana_seat, ben_seat = table.seat_of(ana.id), table.seat_of(ben.id)
        for _ in range(60):  # until the deal's record tells it
            if "ben missed three turns in a row" in "\n".join(tbl.record_lines()) or table.status != "playing":
                break
            if ana_seat in engine.to_act:
                panel = await open_panel(tbl, ana)
                buttons = row_buttons(panel) or card_buttons(panel)
                if buttons:
                    await tbl.click(ana, panel, buttons[0]["custom_id"])
            else:
                await fd.wait_for(lambda: ana_seat in engine.to_act or "missed three" in tbl.log_text(), timeout=30)
        log = "\n".join(tbl.record_lines())
        assert log.count("Time ran out for ben") == 2 and "ben missed three turns in a row" in log
        assert "Time ran out for ana" not in log
        # the time-out is told before the reveal it causes
        first = log.index("Time ran out for ben")
        assert log.find("🔔 Revealed:", first) > first
        assert table.seats[ben_seat].away and not table.seats[ana_seat].away
        await fd.wait_for(lambda: button(tbl.table_message(), rf"table.back:{tbl.table_id}"), timeout=10)
        assert "ben (💤 away: a computer plays for now): " in tbl.table_message().text()
        assert "ana (💤" not in tbl.table_message().text()
        r = await tbl.click(ben, tbl.table_message(), f"table.back:{tbl.table_id}")
        assert "Welcome back" in (r.followups[-1] if r.followups else r.message).text()
        assert not table.seats[ben_seat].away


async def test_a_row_choice_that_times_out_takes_the_fewest_heads_row(world, tmp_path):
    """S2: the player whose card is below every row lets the timer run out:
    the row with the fewest ox heads is taken for them."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    # seed 1: both playing their lowest card, one of them is below every row in turn 1
    async with running_bot(fd, tmp_path / "bot.db", world.guild, time_scale=0.02, table_seed=1) as bot:
        tbl, table = await started(world, bot, [ana, ben], "take6 new", deals=1, turn_time=120)
        engine = live_engine(table)
        for _ in range(60):
            if engine.phase.value == "row" or table.status != "playing":
                break
            for user in (ana, ben):  # both play their lowest card at once
                if table.seat_of(user.id) in engine.to_act and engine.phase.value == "choose":
                    panel = await open_panel(tbl, user)
                    if card_buttons(panel):
                        await tbl.click(user, panel, card_buttons(panel)[0]["custom_id"])
            await fd.wait_for(lambda: engine.phase.value == "row" or all(
                table.seat_of(u.id) in engine.to_act for u in (ana, ben)), timeout=10)
        assert engine.phase.value == "row"
        chooser = table.seats[engine.to_move].name
        view = engine.view(None)
        heads = view["row_heads"]
        best = min(range(4), key=lambda r: (heads[r], len(view["rows"][r]), r))
        label = "ABCD"[best]
        await fd.wait_for(lambda: f"**{chooser}** takes row {label}" in tbl.log_text(), timeout=10)
        assert f"Time ran out for {chooser}" in tbl.log_text()


async def test_a_player_who_must_go_hands_the_seat_to_a_computer_with_leave(world, tmp_path):
    """Without a turn timer a game would wait forever for someone who left.
    /leave in the game's thread hands the seat to a computer at once: it
    chooses for them from then on, the thread and the table say so; the
    others play on; /leave again, or /leave by someone not seated, changes
    nothing; *I'm back* gives the seat back; the game counts for everyone."""
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        tbl, table = await started(world, bot, [ana, ben], "take6 new", deals=1, turn_time=0)
        engine = live_engine(table)
        ana_seat, ben_seat = table.seat_of(ana.id), table.seat_of(ben.id)
        assert button(await open_panel(tbl, ben), rf"table.away:{tbl.table_id}:ask")  # (its button: /leave's twin)
        r = await fd.slash(eve, tbl.thread, "leave")
        assert r.ephemeral and r.message.text() == t("en", "errors.not_seated")
        r = await fd.slash(ben, tbl.thread, "leave")
        assert r.ack_type == 4 and r.ephemeral
        assert r.message.text() == t("en", "slash.stepped_away", table=tbl.table_id, back=t("en", "table.im_back"))
        assert table.seats[ben_seat].away
        await fd.wait_for(lambda: t("en", "table.stepped_away", name="ben", back=t("en", "table.im_back"))
                          in tbl.log_text(), timeout=10)
        # the computer chose for ben at once; the table says who holds the seat
        await fd.wait_for(lambda: ben_seat not in engine.to_act, timeout=10)
        await fd.wait_for(lambda: button(tbl.table_message(), rf"table.back:{tbl.table_id}"), timeout=10)
        assert t("en", "table.seat_away", name="ben") + ": " in tbl.table_message().text()
        r = await fd.slash(ben, tbl.thread, "leave")
        assert r.message.text() == t("en", "errors.already_away") and table.seats[ben_seat].away
        turns = 0
        while table.status == "playing" and turns < 3:  # ana plays three turns; ben's seat chooses by itself
            await fd.wait_for(lambda: ana_seat in engine.to_act or table.status != "playing", timeout=10)
            panel = await open_panel(tbl, ana)
            buttons = row_buttons(panel) or card_buttons(panel)
            await tbl.click(ana, panel, buttons[0]["custom_id"])
            turns += 1
        r = await tbl.click(ben, tbl.table_message(), f"table.back:{tbl.table_id}")
        assert "Welcome back" in (r.followups[-1] if r.followups else r.message).text()
        await fd.wait_for(lambda: "ben is back" in tbl.log_text(), timeout=10)
        for _ in range(40):  # both play the deal out
            if table.status != "playing":
                break
            for user, seat in ((ana, ana_seat), (ben, ben_seat)):
                if seat in engine.to_act and table.status == "playing":
                    panel = await open_panel(tbl, user)
                    buttons = row_buttons(panel) or card_buttons(panel)
                    if buttons:
                        await tbl.click(user, panel, buttons[0]["custom_id"])
            await fd.wait_for(lambda: table.status != "playing" or ana_seat in engine.to_act
                              or ben_seat in engine.to_act, timeout=10)
        assert table.status == "finished"
        await fd.wait_for(lambda: bot.tables.get(tbl.table_id) is None or table.recorded, timeout=10)
        r = await fd.slash(ben, world.channel, "history")  # the game counts for the one who stepped away too
        assert len(r.message.embeds[0]["description"].splitlines()) == 1


async def test_the_live_table_picture_shows_the_reveal(world, tmp_path):
    """Once both have chosen, the live table's picture is drawn with the reveal: each card, its
    player and where it went, in the order placed (the public events of the latest turns)."""
    from tests.e2e import shows_the_last_move

    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        tbl, table = await started(world, bot, [ana, ben], "take6 new", deals=1, turn_time=0)
        for user in (ana, ben):
            panel = await open_panel(tbl, user)
            await panel_answer(await tbl.click(user, panel, card_buttons(panel)[0]["custom_id"]))
        await fd.wait_for(lambda: any(e["type"] == "reveal" for e in table.recent), timeout=10)
        await shows_the_last_move(tbl, table, render_take6.render_take6_table,
                                  {k: t(table.locale, f"take6.r_{k}") for k in render_take6.TAKE6_TABLE_LABELS})
