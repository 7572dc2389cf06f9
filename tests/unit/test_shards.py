"""Shard clusters without Discord: which process owns a server, and that a
process resumes only the tables, and game nights, of its own servers."""
from __future__ import annotations

import pytest

from app.config import Config, shard_of
from app.nights.host import NightHost
from app.store import open_store
from app.tables.manager import TableManager
from tests.tables import COMPUTERS, GAMES

HOST, ANA = 1001, 1002


def guild_on(shard: int, count: int, n: int = 0) -> int:
    """A server id whose timestamp (id >> 22) lands on ``shard``."""
    return ((1_000_000 + shard + n * count) << 22) | (1 << 17) | 7


def test_shard_of_guild_is_discords_formula():
    # Discord's documented example: guild 81384788765712384 on shard 0 of 1, and the formula
    assert shard_of(81384788765712384, 1) == 0
    assert shard_of(81384788765712384, 4) == (81384788765712384 >> 22) % 4
    for shard in range(4):
        assert shard_of(guild_on(shard, 4), 4) == shard
        assert shard_of(guild_on(shard, 4, n=5), 4) == shard
    # the low 22 bits (worker, process, counter) never move a server to another shard
    assert shard_of(guild_on(2, 4) | ((1 << 22) - 1), 4) == 2


def test_config_from_env_shards():
    plain = Config.from_env({"DISCORD_TOKEN": "x"}, dotenv=None)
    assert not plain.sharded and plain.runs_shard_zero
    assert all(plain.owns_guild(guild_on(s, 4)) for s in range(4))

    first = Config.from_env({"DISCORD_TOKEN": "x", "SHARD_COUNT": "4", "SHARD_IDS": "0, 1"}, dotenv=None)
    second = Config.from_env({"DISCORD_TOKEN": "x", "SHARD_COUNT": "4", "SHARD_IDS": "2,3"}, dotenv=None)
    assert first.shard_count == 4 and first.shard_ids == (0, 1) and second.shard_ids == (2, 3)
    assert first.runs_shard_zero and not second.runs_shard_zero
    for shard in range(4):
        gid = guild_on(shard, 4)
        assert first.owns_guild(gid) == (shard in (0, 1))
        assert second.owns_guild(gid) == (shard in (2, 3))  # every server has exactly one owner

    # Discord's global limit is one per token: the processes share the pace by their shards
    from bot import CardBot

    odd = Config.from_env({"DISCORD_TOKEN": "x", "SHARD_COUNT": "4", "SHARD_IDS": "3",
                           "REQUESTS_PER_SECOND": "40"}, dotenv=None)
    paces = [CardBot(c).budget.rate for c in (first, second, odd, plain)]
    assert paces == [19.0, 19.0, 10.0, 38.0]

    whole = Config.from_env({"DISCORD_TOKEN": "x", "SHARD_COUNT": "3"}, dotenv=None)
    assert whole.shard_ids is None and whole.runs_shard_zero and whole.owns_guild(guild_on(2, 3))

    for bad in ({"SHARD_IDS": "0"}, {"SHARD_COUNT": "2", "SHARD_IDS": "2"}, {"SHARD_COUNT": "0"},
                {"SHARD_COUNT": "2", "SHARD_IDS": "1,1"}, {"SHARD_COUNT": "two"}):
        with pytest.raises(ValueError):
            Config.from_env({"DISCORD_TOKEN": "x", **bad}, dotenv=None)


async def test_restore_takes_only_the_servers_of_its_shards(tmp_path):
    path = str(tmp_path / "shared.db")
    store = await open_store(path, checkpoint_interval=None)
    m = TableManager(store, GAMES, COMPUTERS, computer_delay=0.0, seed=7)
    tables = {}
    for shard in range(4):
        gid = guild_on(shard, 4)
        table = await m.create(guild_id=gid, channel_id=100 + shard, game="nimmt", host_id=HOST,
                               host_name="Host", seats=2)
        await m.join(table, ANA, "Ana")
        if shard % 2:
            await m.start(table, HOST)  # a game in progress, replayed on restore
        tables[shard] = table
    night = await NightHost(store, m).create(guild_id=guild_on(3, 4), channel_id=900, game="nimmt",
                                             organiser_id=HOST, organiser_name="Host", table_size=None,
                                             rounds=None, turn_time=0, locale="en")
    await m.shutdown()
    await store.close()

    restored = {}
    for name, ids in (("first", "0,1"), ("second", "2,3")):
        config = Config.from_env({"DISCORD_TOKEN": "x", "SHARD_COUNT": "4", "SHARD_IDS": ids}, dotenv=None)
        # both processes open the same file at once
        restored[name] = (await open_store(path, checkpoint_interval=None), config)
    owned = {}
    for name, (s, config) in restored.items():
        again = TableManager(s, GAMES, COMPUTERS, computer_delay=0.0, seed=7)
        got = await again.restore(owns=config.owns_guild)
        nights = await NightHost(s, again).restore(owns=config.owns_guild)
        owned[name] = ({t.id: t.status for t in got}, [n.id for n in nights])
        await again.shutdown()
    assert owned["first"][0] == {tables[0].id: "lobby", tables[1].id: "playing"}
    assert owned["second"][0] == {tables[2].id: "lobby", tables[3].id: "playing"}
    assert owned["first"][1] == [] and owned["second"][1] == [night.id]
    for s, _ in restored.values():
        await s.close()
