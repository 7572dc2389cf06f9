"""11 nimmt! played end to end: slash commands and clicks against the
Discord stand-in, the real discord.py client running the real bot."""
from __future__ import annotations

import re

import pytest

from app.i18n.catalogue import t as t_
from tests.e2e.table_state import per_table_state
from tests.e2e import (button, check_pings, check_record, ephemeral_text, followed_panel, nimmt_turn, open_hand,
                       open_table, panel_answer, play_nimmt, private_answer, running_bot, seat_players, select,
                       started, updated)

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize("humans,computers,rounds", [(2, 0, 2), (2, 2, 1), (3, 4, 1), (3, 1, 4)],
                         ids=["2-seats", "4-seats", "7-seats", "3-people-4-rounds"])
async def test_full_game(world, tmp_path, humans, computers, rounds):
    fd = world.fd
    people = [world.person(name) for name in ["ana", "ben", "cleo"][:humans]]
    seats = humans + computers
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, people[0], world.channel, "nimmt new", seats=seats, rounds=rounds, turn_time=0)
        await seat_players(t, people[0], people[1:], computers)
        r = await t.click(people[0], t.lobby, f"table.start:{t.table_id}")
        await updated(r)
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        table = bot.tables.get(t.table_id)
        await play_nimmt(fd, t, {u: "en" for u in people})
        # The standings in the thread are the engine's.
        result = table.engine.result
        assert result is not None and table.status == "finished"
        log = t.log_text()
        assert "Game over!" in log
        for seat, person in enumerate(table.seats):
            assert f"{result.places[seat]}. **{person.name}** — {result.scores[seat]}" in log
        # Every interaction was acknowledged once, within 3 seconds.
        assert all(a.latency is not None and a.latency < 3 for a in t.acks)
        # No hand reached anyone but its owner: every panel was ephemeral to its clicker.
        for user in people:
            for m in fd.ephemerals(user):
                assert m.ephemeral_to == user.id
        history = await bot.store.history(people[0].id)
        assert history and history[0]["game"] == "nimmt"
        # Exactly one ping per turn that needs a person, while it is still theirs.
        check_pings(fd, t, table, bot.tables.engine_options(table), "nimmt")
        check_record(t, bot, table)
        # The thread is a record: the live table and one message per round (two for a long
        # one), not a message per move; 3 people and a computer over 4 rounds: at most 15.
        left = fd.messages(t.thread)
        print(f"11 nimmt! {humans} people + {computers} computers, {rounds} rounds: {len(table.log)} moves, "
              f"{len(left)} messages left in the thread, {len(fd.pings(t.thread))} pings")
        assert len(left) <= 15 and len(left) <= 3 * rounds + 2, [m.content[:40] for m in left]
        # at the bottom, the last table message and the last round's record with the standings
        live = t.table_message()
        assert all(not m.attachments for m in left if m.id > live.id)
        assert "Game over!" in "\n".join(m.content for m in left if m.id > live.id or m in left[-2:])
        # Once it is over and told, the bot keeps nothing of the table (open panels included).
        await fd.wait_for(lambda: not any(per_table_state(bot).values()), timeout=10)


async def test_lobby_refusals_are_private_and_change_nothing(world, tmp_path):
    fd = world.fd
    ana, ben, mod = world.person("ana"), world.person("ben"), world.person("mod", manage_messages=True)
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=2)
        again = await fd.slash(ben, world.channel, "nimmt new")
        assert again.ephemeral and "already a table in this channel" in again.message.text()
        r = await t.click(ana, t.lobby, f"table.join:{t.table_id}")
        assert "already seated" in await ephemeral_text(r)
        r = await t.click(ben, t.lobby, f"table.start:{t.table_id}")
        assert "Only the host" in await ephemeral_text(r)
        r = await t.click(ben, t.lobby, f"table.cancel:{t.table_id}")
        assert "Only the host or someone with Manage Messages" in await ephemeral_text(r)
        r = await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        assert "At least 2 players" in await ephemeral_text(r)
        await seat_players(t, ana, [ben])
        r = await t.click(mod, t.lobby, f"table.join:{t.table_id}")
        assert "This table is full" in await ephemeral_text(r)
        assert "ana" in t.lobby.text() and "ben" in t.lobby.text() and "mod" not in t.lobby.text()
        r = await t.click(mod, t.lobby, f"table.cancel:{t.table_id}")  # a moderator may
        await updated(r)
        assert "cancelled" in r.message.text()
        r = await t.click(ben, fd.message(t.lobby.id), f"table.join:{t.table_id}") if fd.message(t.lobby.id).buttons() else None
        assert r is None  # the lobby lost its buttons
        assert not fd.threads(world.channel)


async def test_the_host_takes_a_seat_out_of_the_lobby(world, tmp_path):
    """A computer added by mistake, or someone who joined and is not there:
    the host picks the seat in the lobby's menu and it is gone; nobody else
    may; the host's own seat is not offered (a forged one is refused); a
    removed computer's name is given to the next one; the game starts with
    the seats that are left."""
    fd = world.fd
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=5)
        assert not select(t.lobby, r"table\.remove:.*")  # only the host is seated: nothing to take out
        await seat_players(t, ana, [ben, cleo], computers=1)
        await seat_players(t, ana, [], computers=1, level="hard")
        menu = select(t.lobby, rf"table\.remove:{t.table_id}")
        labels = [o["label"] for o in menu["options"]]
        assert labels == ["ben", "cleo", "CPU 1 (computer · normal)", "CPU 2 (computer · hard)"]  # never the host
        values = {o["label"]: o["value"] for o in menu["options"]}
        r = await t.choose(ben, t.lobby, menu["custom_id"], [values["cleo"]])
        assert "Only the host" in await ephemeral_text(r)
        for forged, key in ((f"u{ana.id}", "errors.host_cannot_leave"), ("c9", "errors.seat_gone"),
                            ("x1", "guard.bad_input"), ("u" + "9" * 21, "guard.bad_input")):
            r = await fd.forge(ana, t.lobby, menu["custom_id"], component_type=3, values=[forged])
            assert r.ephemeral and r.message.text() == t_("en", key), forged
        assert len(bot.tables.get(t.table_id).seats) == 5
        r = await t.choose(ana, t.lobby, menu["custom_id"], [values["CPU 1 (computer · normal)"]])
        assert r.ack_type == 7 and "CPU 1" not in r.message.text() and "CPU 2" in r.message.text()
        r = await t.choose(ana, r.message, menu["custom_id"], [values["cleo"]])
        assert r.ack_type == 7 and "cleo" not in r.message.text()
        t.lobby = r.message
        # a second moderator's menu that still showed cleo (the stand-in's message is always the newest)
        r = await fd.forge(ana, t.lobby, menu["custom_id"], component_type=3, values=[values["cleo"]])
        assert r.ephemeral and r.message.text() == t_("en", "errors.seat_gone")
        await seat_players(t, ana, [], computers=1)  # the free name again
        assert [s.name for s in bot.tables.get(t.table_id).seats] == ["ana", "ben", "CPU 2", "CPU 1"]
        r = await t.click(cleo, t.lobby, f"table.join:{t.table_id}")  # taken out is not banned
        await updated(r)
        r = await t.click(ana, r.message, f"table.start:{t.table_id}")
        await updated(r)
        table = bot.tables.get(t.table_id)
        assert table.status == "playing" and [s.name for s in table.seats] == ["ana", "ben", "CPU 2", "CPU 1", "cleo"]


async def test_bad_clicks_during_a_game(world, tmp_path):
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, [ana, ben], rounds=1, turn_time=0)
        # Someone who is not seated.
        r = await t.click(eve, t.table_message(), f"nimmt.hand:{t.table_id}")
        assert r.ack_type == 6 and "not seated" in await ephemeral_text(r)
        assert (await private_answer(r)).ephemeral_to == eve.id
        mover = [ana, ben][table.engine.to_move]
        waiter = [ana, ben][1 - table.engine.to_move]
        # The player who waits sees their hand, and no controls.
        shown = await open_hand(t, waiter)
        assert "Waiting for" in shown.text()
        assert not shown.selects()
        # The panel shows exactly the hand of its owner (the engine's view of that seat).
        seat = table.seat_of(waiter.id)
        for card in table.engine.view(seat)["hand"]:
            assert str(card) in shown.text()
        # The mover picks a stack: only the cards that fit it are offered.
        older = await open_hand(t, mover)
        panel = await open_hand(t, mover)
        stacks = select(panel, r"nimmt.stack:\d+:.*")
        first = stacks["options"][0]["value"]
        older = (await t.choose(mover, older, stacks["custom_id"], [first])).message
        panel = (await t.choose(mover, panel, stacks["custom_id"], [first])).message
        view = table.engine.view(table.seat_of(mover.id))
        cards = select(panel, r"nimmt.cards:\d+:.*")
        offered = sorted(int(o["value"]) for o in cards["options"]) if cards else []
        assert offered == sorted(view["playable"].get(int(first), []))
        # Custom ids carry no card: the item, the table id, the version, and a stack id or page.
        for message in [panel, t.table_message()]:
            for item in message.buttons() + message.selects():
                parts = item["custom_id"].split(":")
                assert parts[0] in ("nimmt.hand", "nimmt.refresh", "table.rules", "shuf", "nimmt.stack",
                                    "nimmt.cards", "nimmt.take", "table.away", "table.watch") and len(parts) <= 4
                # (shuf: the commitment; table.watch: follow the game without a seat)
                assert int(parts[1]) == t.table_id
                if parts[0] == "table.away":  # (no version: stepping away is never stale)
                    assert parts[2:] == ["ask"]
                elif len(parts) > 2:
                    assert int(parts[2]) == table.version
                if parts[0] == "nimmt.stack":
                    assert re.fullmatch(r"\d+", parts[3])  # the menu's page
                elif len(parts) > 3:
                    assert parts[3] == first  # the stack chosen
        # Take the stack; the older panel is now stale: its button refreshes it and changes nothing.
        take = button(panel, r"nimmt.take:\d+:.*")
        before = table.version
        r = await t.click(mover, panel, take["custom_id"])
        await panel_answer(r)
        assert table.version == before + 1
        r = await t.click(mover, older, take["custom_id"])
        assert "moved on" in (await panel_answer(r)).text() and table.version == before + 1
        # The waiting player's old panel is stale too, and it is now their turn: it refreshes.
        r = await t.click(waiter, fd.ephemerals(waiter)[-1], f"nimmt.refresh:{t.table_id}")
        assert select(await panel_answer(r), r"nimmt\.(stack|steal|open):\d+:.*")


async def test_deleted_messages_and_discord_errors_do_not_lose_the_game(world, tmp_path):
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        panels = {}
        for user in people:  # both players keep their hand panel open
            panels[user.id] = await open_hand(t, user)

        def shows_mover() -> bool:
            current = t.table_message()
            seat = table.engine.to_move
            return current is not None and (seat is None or f"▶ {table.seats[seat].name}:" in current.text())

        # Someone deletes the table message: the next move posts a new one.
        old = t.table_message()
        fd.delete_message(old)
        mover = people[table.engine.to_move]
        version = table.version
        await nimmt_turn(t, mover, panels[mover.id])
        assert table.version > version
        await fd.wait_for(lambda: t.table_message() is not None and t.table_message().id != old.id, timeout=10)
        await fd.wait_for(shows_mover, timeout=10)

        # Discord fails the next table message (503; a turn that pings is a new message): it is posted
        # again, and the mover's panel comes down below it.
        # (posted by the bot, or through a click's token while one lives; armed once the mover's
        # panel is down: the failure is the table's, not that of the panel following its player)
        mover = people[table.engine.to_move]
        below = await followed_panel(t, mover)
        fd.fail_next("POST", rf"(/channels/{t.thread.id}/messages|/webhooks/\d+/[^/]+)$", status=503, times=1)
        await nimmt_turn(t, mover, below)
        # (the 503 comes when the bot posts; the table may show the mover by an edit before that)
        await fd.wait_for(lambda: any(req.status == 503 for req in fd.requests), timeout=10)
        await fd.wait_for(shows_mover, timeout=10)

        # The thread is deleted: the table reopens in a new thread, pings the
        # player to move, and the game goes on there.
        old_thread = t.thread
        mover = people[table.engine.to_move]
        fd.delete_channel(old_thread)
        await fd.wait_for(lambda: len(fd.threads(world.channel)) == 1 and fd.threads(world.channel)[0].id != old_thread.id, timeout=10)
        t.thread = fd.threads(world.channel)[0]
        await fd.wait_for(t.table_message, timeout=30)
        await fd.wait_for(lambda: any(mover.id in m.mentions for m in fd.messages(t.thread)), timeout=30)
        assert "continues in a new thread" in "\n".join(m.content for m in fd.messages(world.channel))
        for _ in range(200):
            if table.status != "playing":
                break
            await fd.wait_for(t.table_message, timeout=10)
            await nimmt_turn(t, people[table.engine.to_move])
        assert table.status == "finished"
        await fd.wait_for(lambda: "Game over!" in t.log_text(), timeout=10)


async def test_turn_timer_plays_for_an_absent_player_until_they_are_back(world, tmp_path):
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    # TIME_SCALE 0.01: the table's 120-second turn timer runs out after 1.2 s.
    async with running_bot(fd, tmp_path / "bot.db", world.guild, time_scale=0.01) as bot:
        t, table = await started(world, bot, [ana, ben], rounds=2, turn_time=120)
        assert "Time runs out" in t.table_message().text()
        ana_seat = table.seat_of(ana.id)
        # Ben plays whenever it is his turn; Ana never does.
        for _ in range(400):
            if "missed three turns in a row" in t.log_text() or table.status != "playing":
                break
            if table.engine.to_move == table.seat_of(ben.id):
                await nimmt_turn(t, ben)
            else:
                await fd.wait_for(lambda: table.engine.to_move != ana_seat or "missed three" in t.log_text(),
                                  timeout=10)
        assert "ana missed three turns in a row" in t.log_text()
        assert table.seats[ana_seat].away
        await fd.wait_for(lambda: button(t.table_message(), rf"table.back:{t.table_id}"), timeout=10)
        # the table message says whose seat a computer holds
        assert "ana (💤 away: a computer plays for now): " in t.table_message().text()
        assert "ben (💤" not in t.table_message().text()
        r = await t.click(eve, t.table_message(), f"table.back:{t.table_id}")
        assert "not seated" in await ephemeral_text(r)
        r = await t.click(ben, t.table_message(), f"table.back:{t.table_id}")
        assert "playing already" in await ephemeral_text(r)
        r = await t.click(ana, t.table_message(), f"table.back:{t.table_id}")
        assert "Welcome back" in await ephemeral_text(r)
        assert not table.seats[ana_seat].away and table.status == "playing"
        await fd.wait_for(lambda: "ana is back" in t.log_text(), timeout=10)
        await fd.wait_for(lambda: "ana (💤" not in t.table_message().text(), timeout=10)
        # Nobody plays any more: the timers finish the game, and the thread's record tells it all.
        await fd.wait_for(lambda: "Game over!" in "\n".join(t.record_lines()), timeout=60)
        log = "\n".join(t.record_lines())
        assert log.count("Time ran out for ana") >= 2 and "ana missed three turns in a row" in log
        assert log.count("ana is back") == 1


async def test_a_lost_answer_does_not_lose_the_move(world, tmp_path):
    """Discord fails the answer to a click (5xx twice): the move is saved and
    shown on the table, and the player's panel catches up by itself."""
    from tests.fakediscord import NoAcknowledgement

    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        mover = people[table.engine.to_move]
        panel = await open_hand(t, mover)
        stacks = select(panel, r"nimmt.stack:\d+:.*")
        panel = (await t.choose(mover, panel, stacks["custom_id"], [stacks["options"][0]["value"]])).message
        take = button(panel, r"nimmt.take:\d+:.*")
        version = table.version
        fd.fail_next("POST", r"/interactions/\d+/[^/]+/callback", status=503, times=2)
        with pytest.raises(NoAcknowledgement):
            await fd.click(mover, panel, take["custom_id"])
        # discord.py's third try comes after the 3-second window and is refused.
        await fd.wait_for(lambda: sum(1 for q in fd.requests if q.path.endswith("/callback") and q.status == 503) == 2
                          and any(q.path.endswith("/callback") and q.status == 404 for q in fd.requests), timeout=15)
        fd.take_violations()  # the stand-in notes the missing answer; that was the point
        assert table.version == version + 1  # the move happened and was saved
        saved = [r for r in await bot.store.active_tables() if r.id == t.table_id][0]
        assert len(saved.actions) == table.version
        # The table shows it; the next player is pinged; the old panel answers with the new state.
        nxt = people[table.engine.to_move]
        await fd.wait_for(lambda: "took stack" in t.log_text(), timeout=10)
        await fd.wait_for(lambda: fd.messages(t.thread)[-1].mentions == [nxt.id]
                          or any(nxt.id in m.mentions for m in fd.messages(t.thread)[-2:]), timeout=10)
        # The player's panel catches up by itself: the take is done, the other player is to move.
        await fd.wait_for(lambda: "Waiting for" in panel.text(), timeout=10)
        assert not button(panel, r"nimmt.take:\d+:.*") and table.version == version + 1


async def test_without_attach_files_the_table_goes_on_as_text(world, tmp_path):
    import discord

    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, people[0], world.channel, "nimmt new", seats=2, rounds=1, turn_time=0)
        await seat_players(t, people[0], people[1:])
        # A moderator takes Attach Files away from the bot after the lobby opened.
        fd.set_channel_overwrite(world.channel, world.guild.bot_role, deny=discord.Permissions(attach_files=True))
        r = await t.click(people[0], t.lobby, f"table.start:{t.table_id}")
        await updated(r)
        await t.wait_thread()
        table = bot.tables.get(t.table_id)
        current = await fd.wait_for(t.table_message, timeout=10)
        assert not current.attachments and "Stacks:" in current.text()
        for _ in range(2):  # the players can still open their hands and play
            version = table.version
            await nimmt_turn(t, people[table.engine.to_move])
            assert table.version > version


async def test_rules_at_the_table_and_play_again(world, tmp_path):
    fd = world.fd
    ana, ben, eve = world.person("ana"), world.person("ben", locale="de"), world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=3, rounds=1, turn_time=0)
        # The rules are one click away, privately, in the clicker's language.
        r = await t.click(ben, t.lobby, f"table.rules:{t.table_id}")
        assert r.ephemeral and "Ein Spiel von Wolfgang Kramer" in r.message.text()
        await seat_players(t, ana, [ben], computers=1)
        r = await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        r = await t.click(eve, t.table_message(), f"table.rules:{t.table_id}")
        rules = await private_answer(r)
        assert rules.ephemeral_to == eve.id and "A game by Wolfgang Kramer" in rules.text()
        await play_nimmt(fd, t, {ana: "en", ben: "de"})
        # The finished lobby offers a rematch to those who played.
        lobby = fd.message(t.lobby.id)
        again = button(lobby, rf"table.again:{t.table_id}")
        assert again is not None
        r = await t.click(eve, lobby, again["custom_id"])
        assert "not seated" in await ephemeral_text(r)
        r = await t.click(ben, lobby, again["custom_id"])
        assert r.ack_type == 4 and not r.ephemeral
        new_lobby = r.message
        assert str(ana.id) in new_lobby.content and ana.id in new_lobby.mentions  # invited with a ping
        new_id = int(re.match(r"table.join:(\d+)", new_lobby.buttons()[0]["custom_id"]).group(1))
        new = bot.tables.get(new_id)
        assert new.host_id == ben.id and new.max_seats == 3 and new.options["rounds"] == 1
        assert [s.computer for s in new.seats] == [False, True]
        r = await t.click(ana, new_lobby, f"table.join:{new_id}")
        await updated(r)
        assert len(new.seats) == 3
        # One table per channel still holds: another rematch click is refused.
        r = await t.click(ana, lobby, again["custom_id"])
        assert "already a table in this channel" in await ephemeral_text(r)


async def test_play_again_after_a_restart(world, tmp_path):
    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=2, rounds=1, turn_time=0)
        await seat_players(t, ana, [], computers=1)
        await t.click(ana, t.lobby, f"table.start:{t.table_id}")
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        await play_nimmt(fd, t, {ana: "en"})
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        lobby = fd.message(t.lobby.id)
        r = await t.click(ana, lobby, f"table.again:{t.table_id}")
        assert r.ack_type == 4 and "11 nimmt!" in r.message.text()
        new_id = int(re.match(r"table.join:(\d+)", r.message.buttons()[0]["custom_id"]).group(1))
        assert new_id != t.table_id and [s.computer for s in bot.tables.get(new_id).seats] == [False, True]


async def test_an_open_panel_shows_your_turn_by_itself(world, tmp_path):
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        mover = people[table.engine.to_move]
        waiter = people[1 - table.engine.to_move]
        panel = await open_hand(t, waiter)
        assert "Waiting for" in panel.text() and not panel.selects()
        await nimmt_turn(t, mover)
        # Without a click, the waiting player's panel comes down right below the ping of their
        # turn, offering it; the one above is gone (one live panel).
        below = await followed_panel(t, waiter)
        await fd.wait_for(lambda: select(below, r"nimmt\.(stack|steal|open):\d+:.*"), timeout=10)
        assert "Waiting for" not in below.text()
        assert below.ephemeral_to == waiter.id
        await fd.wait_for(lambda: fd.message(panel.id).deleted, timeout=10)
        await nimmt_turn(t, waiter, below)  # and it works
        assert table.engine.to_move == table.seat_of(mover.id) or table.status != "playing"


async def test_my_hand_on_the_table_message_being_replaced_answers_privately(world, tmp_path):
    """A person's turn posts a fresh live table and deletes the old one; a player who
    clicks My hand on the old one before it is gone gets the hand privately, as a
    plain reply (the race the harness's ``open_hand`` allows for)."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, [ana, ben], rounds=2, turn_time=0)
        presenter = bot.parts.tables.presenter
        await fd.wait_for(lambda: all(task is None or task.done() for show in [presenter.shows.get(t.table_id)]
                                      if show is not None for task in (show.sender, show.updater)), timeout=15)
        first = t.table_message()
        # (a click's token that cannot delete it hands the deletion to the bot's own, which waits;
        # the token stays free for the clicker's panel)
        fd.fail_next("DELETE", r"/webhooks/\d+/[^/]+/messages/@original$", status=404, json={"code": 10015})
        # Discord is slow to carry out the deletion: until ana has clicked, however slow the machine
        deletion = fd.hold("DELETE", rf"/channels/\d+/messages/{first.id}$")
        by_seat = {table.seat_of(u.id): u for u in (ana, ben)}
        for _ in range(200):
            if t.table_message() is not first:
                break
            await nimmt_turn(t, by_seat[table.engine.to_move])
            await fd.wait_for(lambda: t.table_message() is not first or table.engine.to_move in by_seat, timeout=10)
        assert t.table_message() is not first
        await fd.wait_for(lambda: deletion.caught, timeout=15)  # the bot's own deletion, under way
        assert not first.deleted
        r = await t.click(ana, first, f"nimmt.hand:{t.table_id}")
        assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == ana.id, r
        assert any(a["filename"] == "hand.png" for a in r.message.attachments), r.message.attachments
        deletion.release()
        await fd.wait_for(lambda: first.deleted, timeout=15)


async def test_step_away_and_back_from_the_hand_panel(world, tmp_path):
    """The hand panel is a player's own way out of a game and back in:
    *Step away* asks first (it sits beside the moves), then hands the seat to
    the computer (the answer and the thread say so); the next panel offers
    *I'm back* instead, which gives it back; an old panel's *Step away* once
    away changes nothing."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, [ana, ben], turn_time=0)
        seat = table.seat_of(ben.id)
        panel = await open_hand(t, ben)
        away = button(panel, rf"table.away:{t.table_id}:ask")
        assert away is not None and away["label"] == t_("en", "table.step_away")
        assert button(panel, rf"table.back:{t.table_id}") is None
        r = await t.click(ben, panel, away["custom_id"])  # a click beside the moves asks first
        assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == ben.id
        assert r.message.text() == t_("en", "table.step_away_ask", back=t_("en", "table.im_back"))
        assert not table.seats[seat].away
        sure = r.message
        r = await t.click(ben, sure, button(sure, rf"table.away:{t.table_id}:now")["custom_id"])
        await updated(r)
        assert not sure.buttons()
        assert sure.text() == t_("en", "slash.stepped_away", table=t.table_id, back=t_("en", "table.im_back"))
        assert table.seats[seat].away
        await fd.wait_for(lambda: t_("en", "table.stepped_away", name="ben", back=t_("en", "table.im_back"))
                          in t.log_text(), timeout=10)
        r = await t.click(ben, panel, away["custom_id"])  # the old panel's button
        assert r.ephemeral and r.message.text() == t_("en", "errors.already_away")
        panel = await open_hand(t, ben)
        back = button(panel, rf"table.back:{t.table_id}")
        assert back is not None and button(panel, rf"table.away:{t.table_id}:ask") is None
        r = await t.click(ben, panel, back["custom_id"])
        assert (r.followups[-1] if r.followups else r.message).text() == t_("en", "table.welcome_back")
        assert not table.seats[seat].away
        panel = await open_hand(t, ana)  # ana's own panel: her own way out, nobody else's
        assert button(panel, rf"table.away:{t.table_id}:ask") is not None


async def test_the_live_table_reads_top_to_bottom(world, tmp_path):
    """The live table is one Components V2 block in the game's colour: the game and whose
    turn (the ping, in text), the picture, the table and the last moves as real text, the
    controls in it; no content, no embed. Without Attach Files the same block, no picture."""
    import discord

    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, [ana, ben], computers=1, rounds=1, turn_time=0)
        live = await fd.wait_for(lambda: (lambda m: m if m is not None and fd.pings(t.thread) else None)(
            t.table_message()), timeout=10)
        assert live.flags & (1 << 15) and live.content == "" and live.embeds == []
        [box] = live.components
        assert box["type"] == 17 and box["accent_color"] == discord.Colour.orange().value
        kinds = [c["type"] for c in box["components"]]
        assert kinds[:4] == [10, 12, 10, 10] and set(kinds[4:]) <= {1, 10}, kinds  # texts, picture, rows
        heading, gallery, summary, moves = box["components"][:4]
        mover = table.seats[table.engine.to_move]
        assert heading["content"].splitlines() == [f"### {t_('en', 'nimmt.table_title', table=t.table_id)}",
                                                   f"<@{mover.user_id}>, it's your turn."]
        assert [(p.id, u) for p, u in fd.pings(t.thread)] == [(live.id, mover.user_id)]  # the text's mention pinged
        assert [item["media"]["url"] for item in gallery["items"]] == ["attachment://table.png"]
        assert "Stacks:" in summary["content"] and all(name in summary["content"] for name in ("ana", "ben"))
        assert moves["content"].startswith(f"**{t_('en', 'table.last_moves')}**\n")
        assert button(live, rf"nimmt\.hand:{t.table_id}") in [b for c in box["components"] if c["type"] == 1
                                                             for b in live.buttons() if b["raw"] in c["components"]]

        # Attach Files taken away: the next live table is the same block without the picture
        fd.set_channel_overwrite(world.channel, world.guild.bot_role, deny=discord.Permissions(attach_files=True))
        await nimmt_turn(t, fd.users[mover.user_id])
        after = await fd.wait_for(lambda: (lambda m: m if m is not None and m.id != live.id
                                           and not m.attachments else None)(t.table_message()), timeout=15)
        assert [c["type"] for c in after.components[0]["components"]][:2] == [10, 10]
        assert "Stacks:" in after.text() and after.buttons()


async def test_the_live_table_picture_marks_the_last_move(world, tmp_path):
    """After a person's move, the picture that pings the other is drawn with the move marked
    (the public events of the latest turns), not the bare table; after a restart too."""
    from cogs.games.nimmt import render as render_nimmt
    from cogs.games.nimmt.cog import labels
    from tests.e2e import shows_the_last_move

    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, [ana, ben], rounds=1, turn_time=0)
        first = await fd.wait_for(lambda: fd.pings(t.thread), timeout=10)
        mover = ana if first[-1][1] == ana.id else ben
        await nimmt_turn(t, mover)
        await fd.wait_for(lambda: len(fd.pings(t.thread)) > len(first), timeout=10)
        assert any(e["type"] in ("played", "took") and e["seat"] == table.seat_of(mover.id) for e in table.recent)
        await shows_the_last_move(t, table, render_nimmt.render_nimmt_table,
                                  labels(table.locale, render_nimmt.NIMMT_TABLE_LABELS))
    # after a restart (nothing of the recent events is saved) the live table still marks her move
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        table = await bot.tables.restored(t.table_id)
        await fd.wait_for(lambda: any(e["type"] in ("played", "took") and e["seat"] == table.seat_of(mover.id)
                                      for e in table.recent), timeout=15)
        await shows_the_last_move(t, table, render_nimmt.render_nimmt_table,
                                  labels(table.locale, render_nimmt.NIMMT_TABLE_LABELS))
