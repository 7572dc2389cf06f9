"""Under Discord's global limit: several tables play at once and the bot never
gets a 429 (which would stop all its requests, answers to clicks included)."""
from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from tests.conftest import make_world
from tests.e2e import expected_pings, open_table, play_nimmt, running_bot, seat_players

pytestmark = pytest.mark.timeout(300)

GLOBAL = (25, 1.0)  # a small global limit of the bot token: 25 counted requests a second


async def test_busy_tables_stay_under_the_global_limit(tmp_path):
    async with make_world(global_rate=GLOBAL) as world:
        fd = world.fd
        people = [world.person(name) for name in ("ana", "ben", "cleo")]
        channels = [world.channel] + [fd.add_channel(world.guild, f"games-{i}") for i in (2, 3)]
        # 12 a second, 10 at once: never more than 22 in any second of the stand-in's window
        async with running_bot(fd, tmp_path / "bot.db", world.guild,
                               requests_per_second=12) as bot:
            tables = []
            for person, channel in zip(people, channels):
                t = await open_table(fd, person, channel, "nimmt new", seats=3, rounds=1, turn_time=0)
                await seat_players(t, person, [], computers=2)
                tables.append(t)
            # everyone starts at once: threads, narration, pings and three table pictures
            results = await asyncio.gather(*(t.click(p, t.lobby, f"table.start:{t.table_id}")
                                             for t, p in zip(tables, people)))
            assert all(r.ack_type == 7 for r in results)
            for t in tables:
                await t.wait_thread()
                await fd.wait_for(t.table_message, timeout=30)
            held = [bot.tables.get(t.table_id) for t in tables]
            await asyncio.gather(*(play_nimmt(fd, t, {p: "en"}) for t, p in zip(tables, people)))
            for t, table, person in zip(tables, held, people):
                assert table.status == "finished"
                # (the standings on the lobby message and the thread's last lines go out apart)
                await fd.wait_for(lambda: "Game over!" in t.log_text(), timeout=30)
                # every click answered in time, and each turn pinged once, in its thread
                assert all(a.latency is not None and a.latency < 3 for a in t.acks)
                pings = [u for m, u in fd.pings() if m.channel_id == t.thread.id]
                assert Counter(pings) == expected_pings(table, bot.tables.engine_options(table))
                assert set(pings) == {person.id}
            counted = [q for q in fd.requests if q.status == 429]
            assert counted == [], f"{len(counted)} requests refused with 429"
