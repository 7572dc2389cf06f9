"""Computer levels and the coach, end to end: the host picks a level in the
lobby, a hard computer plays a whole game, hints answer privately at tables
that turned them on and nowhere else."""
from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.e2e import (button, ephemeral_text, open_hand, open_table, panel_answer, play_nimmt, running_bot,
                       seat_players, updated)

pytestmark = pytest.mark.timeout(600)

FAST = {"ai_budget": 0.02}  # a hard computer searches 20 ms a move here (the bot's default is 150 ms)


async def test_a_hard_computer_from_the_lobby_plays_a_whole_game(world, tmp_path):
    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=3, rounds=1, turn_time=0)
        await seat_players(t, ana, [], computers=1, level="hard")
        await seat_players(t, ana, [], computers=1, level="easy")
        lobby = t.lobby.text()
        assert "CPU 1 (computer · hard)" in lobby and "CPU 2 (computer · easy)" in lobby
        table = bot.tables.get(t.table_id)
        assert [s.level for s in table.seats[1:]] == ["hard", "easy"]
        r = await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        await updated(r)
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        # the table message says which seats are computers, and at what level
        summary = t.table_message().text()
        assert "🤖 CPU 1 (computer · hard): " in summary and "🤖 CPU 2 (computer · easy): " in summary
        await play_nimmt(fd, t, {ana: "en"})
        assert table.status == "finished" and table.engine.result is not None
        # the hard seat moved (every computer seat made moves of its own)
        assert {seat for seat, _ in table.log} == {0, 1, 2}
        assert all(a.latency is not None and a.latency < 3 for a in t.acks)


async def test_hints_only_at_unrated_tables_that_turned_them_on(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben", locale="de")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        # Without a hint-enabled table the panel has no Hint button.
        t0 = await open_table(fd, ana, world.channel, "nimmt new", seats=2, rounds=1, turn_time=0)
        await seat_players(t0, ana, [], computers=1)
        await t0.click(ana, t0.lobby, f"table.start:{t0.table_id}")
        await t0.wait_thread()
        await fd.wait_for(t0.table_message, timeout=10)
        table0 = bot.tables.get(t0.table_id)
        await fd.wait_for(lambda: table0.engine.to_move == 0, timeout=10)
        assert button(await open_hand(t0, ana), r"nimmt.hint:\d+:.*") is None

        # Two people and no computer: the game would be rated, so hints are refused.
        other = fd.add_channel(world.guild, "games-2")
        t = await open_table(fd, ana, other, "nimmt new", seats=3, rounds=1, turn_time=0)
        await seat_players(t, ana, [ben])
        hints_on = button(t.lobby, rf"table.hints:{t.table_id}:on")
        r = await t.click(ana, t.lobby, hints_on["custom_id"])
        assert "only for unrated games" in await ephemeral_text(r)
        # With a computer player the game is unrated (the server's default): the host turns them on.
        await seat_players(t, ana, [], computers=1, level="normal")
        r = await t.click(ben, t.lobby, button(t.lobby, r"table.hints:\d+:on")["custom_id"])
        assert await ephemeral_text(r) == "Das kann nur der Gastgeber."  # in the clicker's language
        r = await t.click(ana, t.lobby, button(t.lobby, r"table.hints:\d+:on")["custom_id"])
        await updated(r)
        assert "Hints are on: this game is not rated." in r.message.text()
        t.lobby = r.message
        table = bot.tables.get(t.table_id)
        r = await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        assert "Hints are on" in t.table_message().text()
        assert "🤖 CPU 1 (computer · normal): " in t.table_message().text()
        # Whoever is to move (a person) opens the hand: a Hint button, answered privately.
        await fd.wait_for(lambda: table.engine.to_move in (0, 1), timeout=10)
        mover = [ana, ben][table.engine.to_move]
        waiter = [ana, ben][1 - table.engine.to_move]
        panel = await open_hand(t, mover)
        hint = button(panel, r"nimmt.hint:\d+:.*")
        assert hint is not None
        before = table.version
        started = time.monotonic()
        r = await t.click(mover, panel, hint["custom_id"])
        text = await ephemeral_text(r)
        assert r.ack_type == 4 and r.message.ephemeral_to == mover.id
        # in the mover's language: the move, then the search's figures (or: the only move)
        words = ("simulierten Enden", "einziger Zug") if mover is ben else ("simulated endings", "only move")
        assert text.startswith("💡 ") and any(w in text for w in words), text
        assert table.version == before  # a hint changes nothing
        print(f"hint answered in {time.monotonic() - started:.3f} s: {text!r}")
        # The player waiting gets no hint (and no Hint button).
        assert button(await open_hand(t, waiter), r"nimmt.hint:\d+:.*") is None
        # The server starts rating computer games meanwhile: a coached game still changes no rating.
        boss = world.person("boss", manage_guild=True)
        r = await fd.slash(boss, world.channel, "settings rated_computers", enabled=True)
        assert r.ephemeral
        await play_nimmt(fd, t, {ana: "en", ben: "de"})
        game = await bot.store.game_detail((await bot.store.history(ana.id))[0]["game_id"])
        assert game["game"] == "nimmt" and game["has_bots"] and game["rated"] is False


async def test_garbage_hint_for_the_player_to_move_and_nobody_else(world, tmp_path):
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        t = await open_table(fd, ana, world.channel, "garbage new", seats=3, turn_time=0)
        await seat_players(t, ana, [ben], computers=1, level="hard")
        r = await t.click(ana, t.lobby, button(t.lobby, r"table.hints:\d+:on")["custom_id"])
        t.lobby = r.message
        await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        await t.wait_thread()
        table = bot.tables.get(t.table_id)
        await fd.wait_for(lambda: table.engine.to_move in (0, 1) and t.table_message() is not None
                          and button(t.table_message(), r"garbage.hint:\d+:.*") is not None, timeout=20)
        message = t.table_message()
        hint = button(message, r"garbage.hint:\d+:.*")["custom_id"]
        mover, waiter = (ana, ben) if table.engine.to_move == 0 else (ben, ana)
        # The hint is for the player to move: anyone else clicking the table's Hint is refused, privately.
        r = await t.click(waiter, message, hint)
        assert await ephemeral_text(r) == "It's not your turn."
        r = await t.click(eve, message, hint)
        assert await ephemeral_text(r) == "You're not seated at this table."
        r = await t.click(mover, message, hint)
        text = await ephemeral_text(r)
        assert r.message.ephemeral_to == mover.id
        assert text.startswith("💡 ")
        assert "Draw from the stock" in text or "discard pile" in text or "Jack on slot" in text


async def test_take6_hard_computers_and_the_coach_for_everyone_who_chooses(world, tmp_path):
    """6 nimmt!: the lobby's level menu seats two hard computers; while Ana must
    choose, her panel's Hint answers her privately with a card of her hand;
    once she has chosen (Ben has not), that Hint is refused; the hard seats
    search every choice of their own and the deal is played out."""
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        t = await open_table(fd, ana, world.channel, "take6 new", seats=4, deals=1, turn_time=0)
        await seat_players(t, ana, [ben], computers=2, level="hard")
        assert "CPU 1 (computer · hard)" in t.lobby.text() and "CPU 2 (computer · hard)" in t.lobby.text()
        r = await t.click(ana, t.lobby, button(t.lobby, r"table.hints:\d+:on")["custom_id"])
        t.lobby = r.message
        await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        table = bot.tables.get(t.table_id)
        assert "Hints are on" in t.table_message().text()
        assert t.table_message().text().count("(computer · hard): ") == 2
        searched = []
        think = bot.tables.players.think

        async def counted(tbl, seat, level):
            searched.append((tbl.engine.view(None)["turn"], seat))
            return await think(tbl, seat, level)

        bot.tables.players.think = counted
        seat = {ana.id: table.seat_of(ana.id), ben.id: table.seat_of(ben.id)}

        def pings_of(user: Any) -> list[Any]:
            return [m for m, u in fd.pings(t.thread) if u == user.id]

        # Ana answers the ping of the first turn (a panel opened before it would come down below it)
        await fd.wait_for(lambda: pings_of(ana), timeout=10)
        panel = await open_hand(t, ana, "take6")
        hint = button(panel, r"take6\.hint:\d+:\d+:\d+")
        assert hint is not None
        r = await t.click(ana, panel, hint["custom_id"])
        text = await ephemeral_text(r)
        assert r.message.ephemeral_to == ana.id
        card = int(text.split("Play ", 1)[1].split(":", 1)[0])
        assert card in table.engine.view(seat[ana.id])["hand"] and "simulated worlds" in text
        # a bystander who forges Ana's Hint onto the table message: refused, privately
        r = t.record(await fd.forge(eve, t.table_message(), hint["custom_id"]))
        assert await ephemeral_text(r) == "You're not seated at this table."
        older = await open_hand(t, ana, "take6")  # a second panel, left open
        cards = [b for b in panel.buttons() if b["custom_id"].startswith("take6.card:")]
        r = await t.click(ana, panel, cards[0]["custom_id"])
        assert r.ack_type == 7 and "Waiting for: ben" in r.message.text()
        assert button(r.message, r"take6\.hint:.*") is None  # chosen: no hint now
        r = await t.click(ana, older, button(older, r"take6\.hint:.*")["custom_id"])  # the older panel's Hint
        assert await ephemeral_text(r) == "A hint is for your own move: wait for your turn."
        # then each plays on the ping of each turn of theirs: on the panel that comes down below it
        # (it follows its player), or through My hand on it while they have none
        handled = {ana.id: len(pings_of(ana)), ben.id: 0}

        def moves(message: Any) -> list[str]:
            return [b["custom_id"] for b in message.buttons() if re.match(r"take6\.(card|row):", b["custom_id"])]

        for _ in range(200):
            await fd.wait_for(lambda: table.status != "playing" or set(seat.values()) & table.engine.to_act,
                              timeout=20)
            if table.status != "playing":
                break
            for user in (ana, ben):
                if seat[user.id] not in table.engine.to_act:
                    continue
                ping = (await fd.wait_for(lambda: pings_of(user)[handled[user.id]:], timeout=10))[-1]
                handled[user.id] = len(pings_of(user))
                if fd.ephemerals(user, t.thread):
                    panel = (await fd.wait_for(lambda: [m for m in fd.ephemerals(user, t.thread)
                                                        if m.id > ping.id and moves(m)], timeout=10))[-1]
                else:
                    panel = await open_hand(t, user, "take6")
                await panel_answer(await t.click(user, panel, moves(panel)[0]))  # (a new row: its picture drawn after)
        assert table.status == "finished" and table.engine.result is not None
        # each hard seat searched its own choice in every turn after the first
        cpus = {s for s, p in enumerate(table.seats) if p.computer}
        for turn in range(2, 11):
            assert {s for tn, s in searched if tn == turn} >= cpus, (turn, searched)
        assert all(a.latency is not None and a.latency < 3 for a in t.acks)
