"""Moves leave no reference cycles of the bot's: what a move made is freed as soon
as it is dropped, not kept until a full pass of the cyclic collector (which
pauses every table's clicks; app/lean.py).

The moves are played through clicks as players do; then ``gc.collect()`` with
``gc.DEBUG_SAVEALL`` keeps whatever only the cyclic collector could free.  None
of it may be an object of the bot's own classes (``core``, ``app``, ``cogs``),
nor a view, an interaction or a sent picture's stream (the cycles discord.py
makes with them are broken by ``cogs/common/adapter.py``).  The Discord stand-in runs in
the same process; its own garbage (aiohttp's header parsing) is not the bot's.
"""
from __future__ import annotations

import asyncio
import gc
import io
import re
from collections import Counter
from typing import Any

import discord
import pytest

from tests.e2e import nimmt_turn, open_hand, open_table, running_bot, seat_players, updated

pytestmark = pytest.mark.timeout(300)

OURS = ("core", "app", "cogs", "bot")
THEIRS = (discord.ui.View, discord.ui.Item, discord.Interaction, discord.InteractionResponse, discord.File,
          io.BytesIO)


def cyclic_garbage_of_ours(garbage: list[Any]) -> Counter:
    found: Counter = Counter()
    for obj in garbage:
        kind = type(obj)
        if kind.__module__.split(".")[0] in OURS or isinstance(obj, THEIRS):
            found[f"{kind.__module__}.{kind.__qualname__}"] += 1
    return found


async def collected(action: Any) -> list[Any]:
    """Run ``action`` with the automatic collector off; what a collection then finds."""
    gc.collect()
    gc.garbage.clear()
    gc.disable()
    try:
        await action()
        await asyncio.sleep(0.3)  # the computers' moves and the redraws after the last click
    finally:
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        gc.set_debug(0)
        found = list(gc.garbage)
        gc.garbage.clear()
        gc.enable()
    return found


async def test_moves_lobbies_and_lookups_leave_no_cycles_of_ours(world, tmp_path):
    fd = world.fd
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:

        async def start(command: str) -> Any:
            channel = fd.add_channel(world.guild, command.split()[0])
            t = await open_table(fd, ana, channel, command, seats=3, turn_time=0)
            await seat_players(t, ana, [ben], computers=1)
            await updated(await t.click(ana, t.lobby, f"table.start:{t.table_id}"))
            await t.wait_thread()
            await fd.wait_for(t.table_message, timeout=10)
            return t

        def person_to_move(t: Any) -> Any:
            table = bot.tables.get(t.table_id)
            seat = table.seats[table.engine.to_move]
            return next((u for u in (ana, ben) if u.id == seat.user_id), None)

        nimmt, garbage, take6 = await start("nimmt new"), await start("garbage new"), await start("take6 new")

        async def play() -> None:
            for _ in range(4):  # 11 nimmt!: whole turns through My hand
                user = await fd.wait_for(lambda: person_to_move(nimmt), timeout=10)
                await nimmt_turn(nimmt, user)
            for _ in range(4):  # Garbage: a button on the table message
                table = bot.tables.get(garbage.table_id)
                user = await fd.wait_for(lambda: person_to_move(garbage), timeout=10)
                ver = table.version
                pattern = rf"garbage\.(draw|discard|jack):{garbage.table_id}:{ver}(:\d+)?"
                message = await fd.wait_for(lambda: any(re.fullmatch(pattern, b["custom_id"]) for b in (
                    garbage.table_message().buttons())) and garbage.table_message(), timeout=10)
                choice = [b["custom_id"] for b in message.buttons() if re.fullmatch(pattern, b["custom_id"])][-1]
                assert (await garbage.click(user, message, choice)).ack_type == 6
                await fd.wait_for(lambda: table.version > ver, timeout=10)
            table = bot.tables.get(take6.table_id)
            for user in (ana, ben):  # 6 nimmt!: everyone picks a card on their panel
                panel = await open_hand(take6, user, "take6")
                card = next(b["custom_id"] for b in panel.buttons()
                            if re.fullmatch(r"take6\.card:.*", b.get("custom_id") or ""))
                assert (await take6.click(user, panel, card)).ack_type == 7
            lobbies = fd.add_channel(world.guild, "lobbies")
            for _ in range(2):
                t = await open_table(fd, cleo, lobbies, "garbage new", seats=3)
                await updated(await t.click(cleo, t.lobby, f"table.cancel:{t.table_id}"))
            for command, options in (("leaderboard", {"by": "games"}), ("stats", {"user": ana})):
                r = await fd.slash(cleo, world.channel, command, **options)
                await r.settled(timeout=10)
                assert r.ack_type in (4, 5)

        found = cyclic_garbage_of_ours(await collected(play))
        assert not found, f"left for the cyclic collector: {dict(found)}"


def view_timeouts() -> list[asyncio.Task]:
    """discord.py's timeout tasks of views it stored (each holds its view)."""
    return [task for task in asyncio.all_tasks() if "timeout_task_impl" in repr(task.get_coro())]


async def test_private_panels_and_answers_are_not_held_for_fifteen_minutes(world, tmp_path):
    """discord.py gives every ephemeral answer or followup with buttons a 15-minute
    timeout task that holds its view (on a busy evening, every panel and rules page
    opened in the last quarter of an hour).  The bot's buttons are found by their
    custom_ids, so nothing is held: and the buttons of those messages still work."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3):
        t = await open_table(fd, ana, world.channel, "nimmt new", seats=3, turn_time=0)
        await seat_players(t, ana, [ben], computers=1)
        await updated(await t.click(ana, t.lobby, f"table.start:{t.table_id}"))
        await t.wait_thread()
        await fd.wait_for(t.table_message, timeout=10)
        panels = [await open_hand(t, user) for user in (ana, ben)]
        rules = await t.click(ben, t.table_message(), f"table.rules:{t.table_id}")
        assert rules.ack_type == 4 and rules.ephemeral and rules.message.buttons()
        assert all(panel.buttons() for panel in panels)
        await asyncio.sleep(0.2)
        assert not view_timeouts(), view_timeouts()
        # the private messages' buttons still answer: the rules' next page, a panel's refresh
        page = next(b["custom_id"] for b in rules.message.buttons() if not b.get("disabled"))
        assert (await t.click(ben, rules.message, page)).ack_type == 7
        assert (await t.click(ana, panels[0], f"nimmt.refresh:{t.table_id}")).ack_type in (6, 7)
        assert not view_timeouts()
