"""Under Discord's global limit and each channel's: several tables play at once and the bot never
gets a 429 (which would stop all its requests, answers to clicks included)."""
from __future__ import annotations

import asyncio
import re
from collections import Counter
from typing import Any

import pytest

from tests.conftest import make_world
from tests.e2e import expected_pings, open_table, play_nimmt, running_bot, seat_players, updated

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


def bursts(fd: Any, limit: int = 5, within: float = 4.5) -> list[str]:
    """Channels where the bot edited more than ``limit`` messages within ``within``
    seconds (Discord allows 5 edits per 5 s in a channel; the test leaves half a second
    for the time a request takes to arrive)."""
    edits: dict[str, list[float]] = {}
    for q in fd.requests:
        m = re.fullmatch(r"/channels/(\d+)/messages/\d+", q.path)
        if m and q.method == "PATCH" and q.status < 400:
            edits.setdefault(m[1], []).append(q.time)
    out = []
    for channel, times in edits.items():
        times.sort()
        for a, b in zip(times, times[limit:]):
            if b - a < within:
                out.append(f"channel {channel}: {limit + 1} edits within {b - a:.2f} s")
                break
    return out


async def test_a_night_round_start_stays_under_each_channels_limit(world, tmp_path):
    """A night's round opens its tables at once in the night's channel: each table's
    message, its thread, that message saying the game is on, the sign-up and the
    standings.  Discord takes 5 edits per 5 s in a channel; the bot paces its edits
    there itself (discord.py only learns where a channel's bucket stands from Discord's
    answers) and earns no 429, which counts towards Discord's ban."""
    from tests.e2e.test_night import FAST, NAMES, round_tables, signed_up_night

    fd = world.fd
    people = [world.person(name) for name in NAMES[:8]]
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup, night_id = await signed_up_night(fd, world, people[0], people[1:], game="nimmt", table_size=2,
                                                 rounds=1, turn_time=60)
        r = await fd.click(people[0], signup, f"night:{night_id}:start")
        await updated(r)
        await fd.wait_for(lambda: len(round_tables(fd, world.channel, 1)) == 4, timeout=30)
        threads = await fd.wait_for(lambda: (lambda th: th if len(th) == 4 else None)(fd.threads(world.channel)),
                                    timeout=30)
        await fd.wait_for(lambda: all(any(a.get("filename") == "table.png" for m in fd.messages(th)
                                          for a in m.attachments) for th in threads), timeout=60)
        await fd.wait_for(lambda: all("The game is on" in m.text() or "is over" in m.text()
                                      for m, _ in round_tables(fd, world.channel, 1).values()), timeout=60)
        refused = [f"{q.method} {q.path}" for q in fd.requests if q.status == 429]
        assert refused == [], f"{len(refused)} requests refused with 429: {refused}"
        assert bursts(fd) == []
