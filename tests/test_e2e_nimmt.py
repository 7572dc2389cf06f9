"""11 nimmt! played end to end: slash commands and clicks against the
Discord stand-in, the real discord.py client running the real bot."""
from __future__ import annotations

import re

import pytest

from tests.e2e import button, open_table, running_bot, seat_players, select

pytestmark = pytest.mark.timeout(600)


async def nimmt_turn(t, user) -> None:
    """One whole turn, as a player does it: open the hand, pick, play."""
    table_msg = t.table_message()
    r = await t.click(user, table_msg, f"table:{t.table_id}:hand")
    assert r.ack_type == 4 and r.ephemeral
    panel = r.message
    assert panel.ephemeral_to == user.id
    for _ in range(40):
        steal = select(panel, r"tsel:\d+:nsteal:.*")
        opener = select(panel, r"tsel:\d+:nopen:.*")
        cards = select(panel, r"tsel:\d+:ncards:.*")
        stacks = select(panel, r"tsel:\d+:nstack:.*")
        end = button(panel, r"table:\d+:npass:.*")
        take = button(panel, r"table:\d+:ntake:.*")
        if steal:
            r = await t.choose(user, panel, steal["custom_id"], [steal["options"][0]["value"]])
        elif opener:
            r = await t.choose(user, panel, opener["custom_id"], [opener["options"][0]["value"]])
        elif cards:
            values = [o["value"] for o in cards["options"]][: cards["max_values"]]
            r = await t.choose(user, panel, cards["custom_id"], values)
        elif stacks and any("fit" in (o.get("description") or "") and "none" not in o["description"]
                            for o in stacks["options"]) and not take:
            option = next(o for o in stacks["options"] if "none" not in (o.get("description") or ""))
            r = await t.choose(user, panel, stacks["custom_id"], [option["value"]])
        elif end:
            r = await t.click(user, panel, end["custom_id"])
        elif take:
            r = await t.click(user, panel, take["custom_id"])
        elif stacks:
            r = await t.choose(user, panel, stacks["custom_id"], [stacks["options"][0]["value"]])
        else:
            return  # no controls: the turn is over
        assert r.ack_type == 7, r
        panel = r.message


async def play_to_the_end(t, people: list, fd) -> None:
    """Each person plays when pinged, until the lobby message shows the end."""
    pinged = {u.id: 0 for u in people}
    for _ in range(3000):
        if "The game is over" in t.lobby.text():
            return
        msgs = fd.messages(t.thread)
        mover = None
        for user in people:
            count = sum(1 for m in msgs if user.id in m.mentions)
            if count > pinged[user.id]:
                pinged[user.id] = count
                mover = user
        if mover is None:
            await fd.wait_for(lambda: "The game is over" in t.lobby.text() or any(
                sum(1 for m in fd.messages(t.thread) if u.id in m.mentions) > pinged[u.id] for u in people),
                timeout=30)
            continue
        await nimmt_turn(t, mover)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("humans,computers,rounds", [(2, 0, 2), (2, 2, 1), (3, 4, 1)],
                         ids=["2-seats", "4-seats", "7-seats"])
async def test_full_game(world, tmp_path, humans, computers, rounds):
    fd = world.fd
    people = [world.person(name) for name in ["ana", "ben", "cleo"][:humans]]
    seats = humans + computers
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, people[0], world.channel, "nimmt new", seats=seats, rounds=rounds, turn_time=0)
        await seat_players(t, people[0], people[1:], computers)
        r = await t.click(people[0], t.lobby, f"table:{t.table_id}:start")
        assert r.ack_type == 7
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        await play_to_the_end(t, people, fd)
        # The standings in the thread are the engine's.
        table = bot.tables.get(t.table_id)
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
