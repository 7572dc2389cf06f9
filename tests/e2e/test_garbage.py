"""Garbage played end to end: slash commands and clicks against the Discord
stand-in, the real discord.py client running the real bot.

The people at the table play a fixed, visible strategy (take the discard
when the bot offers it, else draw; a Jack goes to the highest slot offered)
and the computers are the engine's greedy players, so a table seed
(``table_seed``) fixes the whole game.  The seeds below were chosen so that
across the games every situation of the issue happens at least once: a
person placing a Jack through a slot button, a G2 swap, a stock reshuffle,
a hand won in the middle of a chain, the final one-slot hand.
"""
from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from tests.e2e import button, check_newest, check_pings, check_record, description, open_table, running_bot, said, seat_players, updated

pytestmark = pytest.mark.timeout(600)

GAME_BUTTON = r"garbage\.(draw|discard|jack):\d+:\d+(:\d+)?"


# --------------------------------------------------------------------------- what players see


def game_buttons(message: Any) -> list[dict[str, Any]]:
    return [b for b in message.buttons() if re.fullmatch(GAME_BUTTON, b.get("custom_id") or "")]


def button_version(custom_id: str) -> int:
    return int(custom_id.split(":")[2])


def summary(message: Any) -> str:
    return description(message)


def mover_name(message: Any) -> str | None:
    """The player the table marks with ▶."""
    for line in summary(message).splitlines():
        if line.startswith("▶ "):
            return line[2:].rsplit(":", 1)[0]
    return None


def pings(fd: Any, t: Any, user: Any) -> int:
    """Pings ``user`` received in the thread (a live table that pinged is deleted once the
    next one comes: still a ping received)."""
    return sum(1 for _, u in fd.pings(t.thread) if u == user.id)


def shown(card: str | None) -> str:
    """A card as the table writes it: '10H' -> '10♥'."""
    return "-" if card is None else card[:-1] + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[card[-1]]


def fits(view: dict[str, Any], seat: int, card: str) -> bool:
    """RULES.md 2, G1, from what the table shows: can ``seat`` place ``card`` now?"""
    rank = {"A": 1, "J": 11, "Q": 12, "K": 13}.get(card[:-1]) or int(card[:-1])
    player = view["players"][seat]
    if rank == 11:
        return None in player["layout"]
    if rank > player["slots"]:  # Queens and Kings included
        return False
    there = player["layout"][rank - 1]
    return there is None or there.startswith("J")


def seat_text(seat: Any) -> str:
    """A seat as the table's text names it: a computer says so, and its level."""
    return f"🤖 {seat.name} (computer · {seat.level})" if seat.computer else seat.name


def check_table_message(message: Any, table: Any) -> None:
    """The table message is the whole game: image and summary agree with the engine."""
    assert any(a.get("filename") == "table.png" and a["data"][:8] == b"\x89PNG\r\n\x1a\n"
               for a in message.attachments), message.attachments
    assert [item["media"]["url"] for c in message.all_components() if c["type"] == 12
            for item in c["items"]] == ["attachment://table.png"]  # shown in the layout
    view = table.engine.view(None)
    text = summary(message)
    assert f"Hand {view['hand_no']} · stock {view['stock']} · discard {shown(view['discard_top'])}" in text, text
    for seat, player in enumerate(view["players"]):
        up = sum(1 for c in player["layout"] if c is not None)
        marker = "▶ " if seat == view["to_move"] else ""
        # At the end the winner's filled single slot is shown (the engine counts 0 slots left).
        slots = player["slots"] if view["phase"] != "over" else max(1, player["slots"])
        line = f"{marker}{seat_text(table.seats[seat])}: {up}/{slots} face up"
        assert line in text.splitlines(), (line, text)


# --------------------------------------------------------------------------- playing


async def play_garbage(t: Any, bot: Any, people: list[Any], *, take_discard: bool = True) -> dict[str, int]:
    """Every person plays when the table shows their buttons, until the game ends.

    Returns counts of what the people did through the buttons."""
    fd = t.fd
    table = bot.tables.get(t.table_id)
    by_name = {u.name: u for u in people}
    done = {"draw": 0, "discard": 0, "jack": 0, "offered": 0}
    last = -1  # version of the last click
    last_ping = {u.id: 0 for u in people}

    def ready() -> Any:
        if table.status == "finished":
            return "over"
        message = t.table_message()
        if message is None:
            return None
        buttons = game_buttons(message)
        if not buttons or button_version(buttons[0]["custom_id"]) <= last:
            return None
        return message

    for _ in range(5000):
        message = await fd.wait_for(ready, timeout=30)
        if message == "over":
            return done
        # Nothing moves while a person is to move: the message is the current state.
        engine = table.engine
        ver = button_version(game_buttons(message)[0]["custom_id"])
        assert ver == table.version
        name = mover_name(message)
        user = by_name[name]
        assert table.seat_of(user.id) == engine.to_move
        check_table_message(message, table)
        draw = button(message, rf"garbage.draw:{t.table_id}:{ver}")
        take = button(message, rf"garbage.discard:{t.table_id}:{ver}")
        jacks = [b for b in game_buttons(message) if b["custom_id"].startswith("garbage.jack:")]
        if engine.phase == "jack":
            assert not draw and not take
            assert [int(b["custom_id"].rsplit(":", 1)[1]) for b in jacks] == list(
                engine.face_down(engine.to_move))
            assert "Card in hand: J" in summary(message)
            choice = jacks[-1]
            done["jack"] += 1
        else:
            # The turn starts with a ping.
            await fd.wait_for(lambda: pings(fd, t, user) > last_ping[user.id], timeout=10)
            last_ping[user.id] = pings(fd, t, user)
            # The ping is the message with the buttons: 0 messages between them.
            assert fd.pings(t.thread)[-1] == (message, user.id)
            check_newest(fd, t.thread)
            assert draw and not jacks
            # G1: the discard is offered exactly when it can be placed (and never on a hand's
            # first turn, when the discard pile is still empty).
            view = engine.view(None)
            top = view["discard_top"]
            assert bool(take) == (top is not None and fits(view, engine.to_move, top)), (top, view)
            if take:
                done["offered"] += 1
                assert take["label"] == f"Take the discard ({shown(top)})"
            if take and take_discard:
                choice = take
                done["discard"] += 1
            else:
                choice = draw
                done["draw"] += 1
        check_newest(fd, t.thread)  # as the person acts too (a Jack's slot: the same turn)
        r = await t.click(user, message, choice["custom_id"])
        assert r.ack_type == 6 and not r.followups, r
        assert table.version > ver  # the click was applied before it was acknowledged
        last = ver
    raise AssertionError("the game did not end")


# --------------------------------------------------------------------------- reading the thread

WIN = re.compile(r"\*\*(?P<name>.+?)\*\* completed the layout and wins hand (?P<hand>\d+)! "
                 r"Next hand they play with (?P<count>\d+) slots?\.")
DEALT = re.compile(r"Hand (?P<hand>\d+) is dealt\. \*\*(?P<name>.+?)\*\* starts\.")
STEP = re.compile(r"slot \d+ uncovered |the Jack went to slot \d+, uncovering ")


def check_hands(lines: list[str], table: Any) -> None:
    """Each hand's end names the winner and their new slot count, the next
    hand is dealt and the winner starts (pinged when a person); the last
    hand is played with one slot by the game's winner."""
    slots = {seat.name: 10 for seat in table.seats}
    hand = 1
    for i, line in enumerate(lines):
        m = WIN.fullmatch(line)
        if not m:
            continue
        name = m["name"]
        assert int(m["hand"]) == hand
        slots[name] -= 1
        assert int(m["count"]) == slots[name], (line, slots)
        hand += 1
        dealt = DEALT.fullmatch(lines[i + 1])
        assert dealt and int(dealt["hand"]) == hand and dealt["name"] == name, lines[i:i + 2]
        # the winner's first move is the new hand's first (a person's turn is pinged by the
        # live table, which is not part of the record: check_pings)
        assert lines[i + 2].startswith(f"**{name}**: drew ") or lines[i + 2].startswith(f"**{name}**: took "), \
            lines[i:i + 3]
    engine = table.engine
    result = engine.result
    winner = table.seats[result.winners[0]].name
    assert slots[winner] == 1  # the final hand was a one-slot hand
    assert engine.hand_no == hand
    assert lines.count(f"Game over! **{winner}** filled their last slot and wins the game.") == 1
    # Everybody else keeps the count they reached.
    for seat, person in enumerate(table.seats):
        expected = 0 if seat == result.winners[0] else slots[person.name]
        assert result.scores[seat] == expected


def won_mid_chain(lines: list[str]) -> list[str]:
    """Turns whose chain of at least two placements ended with the hand won."""
    found = []
    for i, line in enumerate(lines[1:], start=1):
        m = WIN.fullmatch(line) or (line.startswith("Game over! ") and line)
        if not m:
            continue
        prev = lines[i - 1]
        if len(STEP.findall(prev)) >= 2 and "turn over" not in prev:
            found.append(prev)
    return found


# --------------------------------------------------------------------------- whole games


@pytest.mark.parametrize("seats,seed,take_discard,situations", [
    (2, 1121, False, {"jack", "swap", "mid_chain", "reshuffle"}),
    (4, 794, True, {"jack", "swap", "mid_chain", "discard"}),
    (6, 1482, True, {"jack", "swap", "mid_chain", "discard"}),
], ids=["2-seats-1-deck", "4-seats-2-decks", "6-seats-3-decks"])
async def test_full_game(fast_world, tmp_path, seats, seed, take_discard, situations):
    world = fast_world
    fd = world.fd
    people = [world.person(name) for name in ("ana", "ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=seed) as bot:
        t = await open_table(fd, people[0], world.channel, "garbage new", seats=seats, turn_time=0)
        await seat_players(t, people[0], people[1:], computers=seats - 2)
        r = await t.click(people[0], t.lobby, f"table.start:{t.table_id}")
        await updated(r)
        await t.wait_thread()
        table = bot.tables.get(t.table_id)
        assert table.engine.decks == {2: 1, 4: 2, 6: 3}[seats]
        done = await play_garbage(t, bot, people, take_discard=take_discard)

        # The end: standings in the thread and on the lobby message, stats recorded.
        result = table.engine.result
        assert result is not None and table.status == "finished"
        await fd.wait_for(lambda: "The game is over" in t.lobby.text(), timeout=10)
        order = sorted(range(seats), key=lambda s: (result.places[s], s))
        for s in order:
            assert f"{result.places[s]}. {seat_text(table.seats[s])} — {result.scores[s]}" in t.lobby.text()
        standings = [f"{result.places[s]}. **{table.seats[s].name}** — {result.scores[s]} "
                     f"slot{'' if result.scores[s] == 1 else 's'} left" for s in order]
        await fd.wait_for(lambda: "\n".join(standings) in t.log_text(), timeout=10)
        # The last table message: no buttons, nobody to move, the winner's slot filled.
        final = await fd.wait_for(lambda: (m := t.table_message()) and mover_name(m) is None and m, timeout=10)
        assert not final.buttons()
        check_table_message(final, table)
        assert f"{seat_text(table.seats[result.winners[0]])}: 1/1 face up" in summary(final).splitlines()
        lines = t.log_text().splitlines()
        check_hands(lines, table)
        for person in people:
            history = await bot.store.history(person.id)
            assert len(history) == 1 and history[0]["game"] == "garbage"
            seat = table.seat_of(person.id)
            assert history[0]["place"] == result.places[seat] and history[0]["score"] == result.scores[seat]

        # The situations this seed was chosen for.
        names = [p.name for p in people]
        seen = set()
        if done["jack"] and any(line.startswith(f"**{n}**: the Jack went to slot") for n in names for line in lines):
            seen.add("jack")  # a person put a Jack on a slot of their choice through a button
        if any("took the Jack's place in slot" in line for line in lines):
            seen.add("swap")  # G2
        if won_mid_chain(lines):
            seen.add("mid_chain")
        if any(line.startswith("The stock ran out: the discard pile was shuffled into a new stock of")
               for line in lines):
            seen.add("reshuffle")
        if done["discard"] and any(line.startswith(f"**{n}**: took ") for n in names for line in lines):
            seen.add("discard")
        assert situations <= seen, (situations - seen, done)
        # Every interaction was acknowledged once, within 3 seconds (the stand-in checks it too).
        assert all(a.latency is not None and a.latency < 3 for a in t.acks)
        # Exactly one ping per turn that needs a person, while it is still theirs.
        check_pings(fd, t, table, {}, "garbage")
        check_record(t, bot, table)
        # The thread is a record: one message per hand (two for a long one) and the live table.
        left = fd.messages(t.thread)
        hands = table.engine.hand_no
        clicks = done["draw"] + done["discard"] + done["jack"]  # the people's, all on the ping itself
        print(f"Garbage {seats} seats: {len(table.log)} moves in {hands} hands, {len(left)} messages left in "
              f"the thread, {len(fd.pings(t.thread))} pings, {clicks / len(fd.pings(t.thread)):.2f} clicks per "
              f"pinged turn, 0 messages between ping and controls")
        assert len(left) <= 3 * hands + 2, [m.content[:40] for m in left]
        # at the bottom, the last table message and the last round's record with the standings
        live = t.table_message()
        assert all(not m.attachments for m in left if m.id > live.id)
        assert "Game over!" in "\n".join(m.content for m in left if m.id > live.id or m in left[-2:])


# --------------------------------------------------------------------------- bad inputs

NOT_YOUR_TURN = "It's not your turn."
NOT_SEATED = "You're not seated at this table."
STALE = "That button is from an earlier moment of the game. Look at the current table."


async def start_two(world: Any, bot: Any, seed_people: tuple[str, ...] = ("ana", "ben")) -> tuple[Any, Any, list]:
    fd = world.fd
    people = [world.person(name) for name in seed_people]
    t = await open_table(fd, people[0], world.channel, "garbage new", seats=2, turn_time=0)
    await seat_players(t, people[0], people[1:])
    r = await t.click(people[0], t.lobby, f"table.start:{t.table_id}")
    await updated(r)
    await t.wait_thread()
    return t, bot.tables.get(t.table_id), people


async def current_message(t: Any, table: Any) -> Any:
    """The table message once it shows the buttons of the current moment."""
    def ready() -> Any:
        message = t.table_message()
        buttons = game_buttons(message) if message else []
        return message if buttons and button_version(buttons[0]["custom_id"]) == table.version else None
    return await t.fd.wait_for(ready, timeout=15)


async def refused(t: Any, user: Any, message: Any, custom_id: str, text: str, table: Any) -> None:
    """A press that is answered privately and changes nothing at the table."""
    fd = t.fd
    log, edits = list(table.log), message.edit_count
    posted = len(fd.messages(t.thread, include_deleted=True))  # (an earlier table message may be going)
    r = await t.click(user, message, custom_id)
    assert r.ack_type == 4 and r.ephemeral and r.message.content == text, (r.ack_type, r.message.content)
    assert r.message.ephemeral_to == user.id
    assert table.log == log and message.edit_count == edits
    assert len(fd.messages(t.thread, include_deleted=True)) == posted


def delay_next_table_edit(t: Any, message: Any, seconds: float) -> None:
    """Discord answers the next edit of the table message with a 429: the
    bot waits and retries, and meanwhile everybody still sees the old buttons.
    (A move clicked on the table message redraws it through the click's token,
    ``@original``; a computer's move or a restart by the bot's own edit.)"""
    t.fd.fail_next("PATCH", rf"/channels/{t.thread.id}/messages/{message.id}$", status=429, retry_after=seconds)
    t.fd.fail_next("PATCH", r"/webhooks/\d+/[^/]+/messages/@original$", status=429, retry_after=seconds)


async def test_a_move_is_shown_through_the_click_that_made_it(world, tmp_path):
    """Seed 3: ana starts against a computer; her draw ends in a Jack to place.

    A move clicked on the table message is acknowledged at once as an update of
    that message, and the redrawn table goes through the click's own token (an
    edit of its ``@original``), which Discord does not count against the bot's
    global limit: the bot makes no edit of its own for it.  The computer's moves
    after ana's are drawn through her latest click's token too; her next turn's
    ping is a new table message at the bottom of the thread, telling the
    computer's turn and carrying her buttons, and the one before is deleted
    through her click's token: the bot edits and deletes nothing by its own
    requests."""
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        ana = world.person("ana")
        t = await open_table(fd, ana, world.channel, "garbage new", seats=2, turn_time=0)
        await t.click(ana, t.lobby, f"table.cpu:{t.table_id}")
        await updated(await t.click(ana, t.lobby, f"table.start:{t.table_id}"))
        await t.wait_thread()
        table = bot.tables.get(t.table_id)
        message = await current_message(t, table)
        assert mover_name(message) == "ana"

        def own_edits() -> int:
            return sum(1 for q in fd.requests if q.method in ("PATCH", "DELETE")
                       and q.path.startswith(f"/channels/{t.thread.id}/"))

        def by_token(method: str = "PATCH") -> int:
            return sum(1 for q in fd.requests
                       if q.method == method and re.fullmatch(r"/webhooks/\d+/[^/]+/messages/@original", q.path))

        edits, tokens = own_edits(), by_token()
        r = await t.click(ana, message, f"garbage.draw:{t.table_id}:{table.version}")
        assert r.ack_type == 6 and r.latency is not None and r.latency < 3
        assert table.engine.phase == "jack"
        message = await current_message(t, table)  # the Jack buttons: the table shows the draw
        check_table_message(message, table)
        assert by_token() == tokens + 1 and own_edits() == edits
        # ana places the Jack; her turn ends somewhere in the chain, then the computer plays
        jack = [b for b in game_buttons(message) if b["custom_id"].startswith("garbage.jack:")][-1]
        r = await t.click(ana, message, jack["custom_id"])
        assert r.ack_type == 6
        await fd.wait_for(lambda: any(seat == 1 for seat, _ in table.log) and table.engine.to_move == 0, timeout=15)
        # ana's next turn: a new table message pings her, telling the computer's turn
        await fd.wait_for(lambda: pings(fd, t, ana) == 2, timeout=10)
        ping = fd.pings(t.thread)[-1][0]
        await fd.wait_for(lambda: message.deleted, timeout=10)
        assert "**CPU 1**: " in ping.text()
        assert t.table_message() is ping and fd.messages(t.thread)[-1] is ping
        check_table_message(ping, table)
        assert game_buttons(ping) and said(ping.snapshot()).splitlines()[-1].startswith(f"<@{ana.id}>, it's your turn.")
        assert ping.pinged == [ana.id]
        assert by_token() >= tokens + 2 and by_token("DELETE") == 1  # ana's Jack; the old table, deleted
        assert own_edits() == edits, "the table message was edited or deleted by the bot's own request"
        assert all(a.latency is not None and a.latency < 3 for a in t.acks)


async def test_the_table_picture_shows_the_chain_just_played(world, tmp_path):
    """Seed 3: ana's draw ends in a Jack to place.  The picture the bot posts
    then is drawn from the table's view plus the public events of that move
    (the chain card by card), and differs from the same view without them."""
    from app.i18n.catalogue import t as tr
    from cogs.games.garbage import render as render_garbage
    from tests.e2e import shows_the_last_move

    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        ana = world.person("ana")
        t = await open_table(fd, ana, world.channel, "garbage new", seats=2, turn_time=0)
        await t.click(ana, t.lobby, f"table.cpu:{t.table_id}")
        await updated(await t.click(ana, t.lobby, f"table.start:{t.table_id}"))
        await t.wait_thread()
        table = bot.tables.get(t.table_id)
        message = await current_message(t, table)
        await t.click(ana, message, f"garbage.draw:{t.table_id}:{table.version}")
        assert table.engine.phase == "jack"
        assert any(e["type"] == "drew" for e in table.recent)
        labels = {k: tr(table.locale, f"render.{k}") for k in render_garbage.GARBAGE_TABLE_LABELS}
        posted = await shows_the_last_move(t, table, render_garbage.render_garbage_table, labels)
        assert posted.width == render_garbage.W and table.engine.phase == "jack"

async def test_bad_inputs_out_of_turn_unseated_stale_double_click(world, tmp_path):
    """Seed 6: ben (the second seat) starts (G4) and his first draw ends his turn."""
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=6) as bot:
        t, table, (ana, ben) = await start_two(world, bot)
        carl = world.person("carl")
        message = await current_message(t, table)
        assert mover_name(message) == "ben" and table.engine.to_move == 1
        ver = table.version
        draw = f"garbage.draw:{t.table_id}:{ver}"
        assert button(message, draw) and not button(message, rf"garbage.discard:{t.table_id}:\d+")  # first turn: stock only
        # A seated player out of turn, and a passer-by: private answers, nothing changes.
        await refused(t, ana, message, draw, NOT_YOUR_TURN, table)
        await refused(t, carl, message, draw, NOT_SEATED, table)
        # ben clicks Draw twice in a hurry: one draw.  The table message lags behind.
        delay_next_table_edit(t, message, 5)
        first, second = await asyncio.gather(t.click(ben, message, draw), t.click(ben, message, draw))
        assert sorted([first.ack_type, second.ack_type]) == [4, 6], (first.ack_type, second.ack_type)
        answer = first if first.ack_type == 4 else second
        # (the second click waited for the first one's save: its button is from before the draw)
        assert answer.ephemeral and answer.message.content in (NOT_YOUR_TURN, STALE)
        assert table.log == [(1, "stock")] and table.engine.to_move == 0
        # ana is pinged by a new table message at the bottom (a new message: no edit to wait
        # for), and ben's is deleted; a client that still showed ben's Draw presses it: stale,
        # nothing changes.
        await fd.wait_for(lambda: pings(fd, t, ana) == 1, timeout=10)
        fd.clear_failures()
        old, message = message, await current_message(t, table)
        assert fd.pings(t.thread)[-1] == (message, ana.id)
        await fd.wait_for(lambda: old.deleted, timeout=10)
        r = await fd.forge(ana, message, draw)
        assert r.ack_type == 4 and r.ephemeral and r.message.content == STALE
        assert mover_name(message) == "ana"
        check_table_message(message, table)
        r = await t.click(ana, message, f"garbage.draw:{t.table_id}:{table.version}")
        assert r.ack_type == 6
        assert [seat for seat, _ in table.log] == [1, 0]
        log = await fd.wait_for(lambda: (text := t.log_text()).count("**ana**: drew") == 1 and text, timeout=10)
        assert log.count("**ben**: drew") == 1
        assert all(a.latency is not None and a.latency < 3 for a in t.acks)


async def test_bad_inputs_at_a_jack_choice(world, tmp_path):
    """Seed 3: ana starts and her first draw ends in a Jack to place."""
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        t, table, (ana, ben) = await start_two(world, bot)
        message = await current_message(t, table)
        assert mover_name(message) == "ana"
        draw = f"garbage.draw:{t.table_id}:{table.version}"
        # Double click, while the table message lags: one draw; ana is still to move (the Jack), so
        # the second press is stale.
        delay_next_table_edit(t, message, 5)
        first, second = await asyncio.gather(t.click(ana, message, draw), t.click(ana, message, draw))
        assert sorted([first.ack_type, second.ack_type]) == [4, 6]
        answer = first if first.ack_type == 4 else second
        assert answer.ephemeral and answer.message.content == STALE
        assert table.log == [(0, "stock")] and table.engine.phase == "jack"
        assert button(message, draw), "the table message was redrawn too early for this test"
        await refused(t, ana, message, draw, STALE, table)
        # The Jack choice: one button per face-down slot, only for ana.
        message = await current_message(t, table)
        assert any(q.method == "PATCH" and q.status == 429 for q in fd.requests)
        check_table_message(message, table)
        assert "Card in hand: J" in summary(message)
        jacks = [b for b in game_buttons(message) if b["custom_id"].startswith("garbage.jack:")]
        slots = [int(b["custom_id"].rsplit(":", 1)[1]) for b in jacks]
        assert slots == list(table.engine.face_down(0)) and len(slots) > 1
        assert [b["label"] for b in jacks] == [f"Jack to slot {k}" for k in slots]
        assert not button(message, rf"garbage.draw:{t.table_id}:\d+")
        await refused(t, ben, message, jacks[0]["custom_id"], NOT_YOUR_TURN, table)
        await refused(t, world.person("carl"), message, jacks[0]["custom_id"], NOT_SEATED, table)
        # ana double-clicks one slot: the Jack goes there once.
        slot = slots[-1]
        first, second = await asyncio.gather(t.click(ana, message, jacks[-1]["custom_id"]),
                                             t.click(ana, message, jacks[-1]["custom_id"]))
        assert sorted([first.ack_type, second.ack_type]) == [4, 6]
        answer = first if first.ack_type == 4 else second
        assert answer.ephemeral and answer.message.content in (NOT_YOUR_TURN, STALE)
        assert table.log == [(0, "stock"), (0, f"jack {slot}")]
        await fd.wait_for(lambda: f"**ana**: the Jack went to slot {slot}, uncovering" in t.log_text(), timeout=10)
        assert t.log_text().count("the Jack went to slot") == 1
        assert all(a.latency is not None and a.latency < 3 for a in t.acks)


async def test_step_away_from_the_garbage_table_message(world, tmp_path):
    """Garbage is played from the table message, so *Step away* is there:
    it hands the clicker's own seat to the computer (someone not seated is
    refused and nothing changes); the message then also offers *I'm back*."""
    from app.i18n.catalogue import t as tr

    async with running_bot(world.fd, tmp_path / "bot.db", world.guild) as bot:
        t, table, (ana, ben) = await start_two(world, bot)
        eve = world.person("eve")
        message = await current_message(t, table)
        away = button(message, rf"table.away:{t.table_id}:ask")
        assert away is not None and away["label"] == tr("en", "table.step_away")
        await refused(t, eve, message, away["custom_id"], tr("en", "errors.not_seated"), table)
        r = await t.click(ben, message, away["custom_id"])  # beside Draw: it asks first, privately
        assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == ben.id
        assert r.message.text() == tr("en", "table.step_away_ask", back=tr("en", "table.im_back"))
        assert not table.seats[table.seat_of(ben.id)].away
        sure = r.message
        r = await world.fd.forge(eve, message, f"table.away:{t.table_id}:now")  # a forged "yes": not her seat
        assert r.ephemeral and r.message.text() == tr("en", "errors.not_seated")
        r = await t.click(ben, sure, f"table.away:{t.table_id}:now")
        await updated(r)
        assert sure.text() == tr("en", "slash.stepped_away", table=t.table_id, back=tr("en", "table.im_back"))
        assert table.seats[table.seat_of(ben.id)].away and not table.seats[table.seat_of(ana.id)].away
        message = await world.fd.wait_for(lambda: (lambda m: m if m is not None and button(
            m, rf"table.back:{t.table_id}") else None)(t.table_message()), timeout=15)
        assert button(message, rf"table.away:{t.table_id}:ask") is not None  # (for ana)
        r = await t.click(ben, message, f"table.back:{t.table_id}")
        assert (r.followups[-1] if r.followups else r.message).text() == tr("en", "table.welcome_back")
