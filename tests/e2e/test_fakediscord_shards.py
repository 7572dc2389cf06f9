"""The stand-in shards as Discord does: ``GET /gateway/bot`` recommends a
shard count, IDENTIFY names a shard, and a server's events go only to the
session of shard ``(guild_id >> 22) % shard_count`` (DMs to shard 0)."""
from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import discord
from discord.ext import commands

from tests.fakediscord import FakeDiscord, NoAcknowledgement


class ShardBot(commands.AutoShardedBot):
    """Runs some shards; /where answers which process and shard got the click."""

    def __init__(self, name: str, shard_ids: list[int], shard_count: int) -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        intents.guild_messages = True
        super().__init__(command_prefix="!", intents=intents, shard_ids=shard_ids, shard_count=shard_count)
        self.name = name
        self.deleted: list[int] = []

        @self.tree.command(name="where", description="Which process answers")
        async def where(interaction: discord.Interaction) -> None:
            assert interaction.guild is not None
            await interaction.response.send_message(f"{self.name} shard {interaction.guild.shard_id}")

    async def before_identify_hook(self, shard_id, *, initial=False):  # the stand-in allows them all at once
        return None

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        self.deleted.append(payload.message_id)


@contextlib.asynccontextmanager
async def running(fd: FakeDiscord, *bots: ShardBot):
    tasks = [asyncio.create_task(bot.start(fd.token)) for bot in bots]
    try:
        yield
    finally:
        for bot in bots:
            await bot.close()
        for task in tasks:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def test_gateway_bot_recommends_shards_and_concurrency():
    async with FakeDiscord(shard_count=4, max_concurrency=2) as fd:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{fd.api_base}/gateway/bot", headers={"Authorization": f"Bot {fd.token}"}) as r:
                data = await r.json()
        assert data["shards"] == 4
        assert data["session_start_limit"]["max_concurrency"] == 2
        assert data["session_start_limit"]["remaining"] > 0
        guilds = [fd.add_guild(f"g{i}", shard=i % 4) for i in range(8)]
        assert [fd.shard_of(g) for g in guilds] == [i % 4 for i in range(8)]
        assert [(g.id >> 22) % 4 for g in guilds] == [i % 4 for i in range(8)]
        ids = [g.id for g in guilds]
        assert ids == sorted(ids) and len(set(ids)) == 8
        assert fd.add_user("after").id > ids[-1]  # later snowflakes stay newer


async def test_events_of_a_server_reach_only_its_shard():
    fd = FakeDiscord(shard_count=2)
    await fd.start()
    try:
        g0, g1 = fd.add_guild("zero", shard=0), fd.add_guild("one", shard=1)
        c0, c1 = fd.add_channel(g0, "games"), fd.add_channel(g1, "games")
        ana = fd.add_user("ana")
        fd.add_member(g0, ana)
        fd.add_member(g1, ana)
        a, b = ShardBot("A", [0], 2), ShardBot("B", [1], 2)
        with fd.patched():
            async with running(fd, a, b):
                await fd.wait_shards([0, 1], timeout=15)
                await asyncio.wait_for(asyncio.gather(a.wait_until_ready(), b.wait_until_ready()), 15)
                assert sorted(map(tuple, fd.identified_shards)) == [(0, 2), (1, 2)]
                assert [g.id for g in a.guilds] == [g0.id] and [g.id for g in b.guilds] == [g1.id]
                await a.tree.sync()
                await fd.wait_commands()

                r = await fd.slash(ana, c1, "where")
                assert r.message.content == "B shard 1"
                r = await fd.slash(ana, c0, "where")
                assert r.message.content == "A shard 0"

                fd.delete_message(r.message)  # a message of server 0: only A hears of it
                await fd.wait_for(lambda: r.message.id in a.deleted)
                late = fd.add_guild("late", shard=1)  # joined while connected: GUILD_CREATE on shard 1 only
                await fd.wait_for(lambda: b.get_guild(late.id) is not None)
                assert a.get_guild(late.id) is None and b.deleted == []

                await b.close()  # shard 1 is gone: its server's clicks reach nobody
                await fd.wait_for(lambda: 1 not in fd.ready_shards())
                try:
                    await fd.slash(ana, c1, "where")
                except NoAcknowledgement as error:
                    assert "shard" in str(error)
                else:
                    raise AssertionError("a click of shard 1 was answered by the process of shard 0")
                r = await fd.slash(ana, c0, "where")
                assert r.message.content == "A shard 0"
    finally:
        await fd.stop()
    fd.assert_clean()
