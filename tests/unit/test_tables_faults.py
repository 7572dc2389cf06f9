"""The table manager when the database fails: nothing is applied that was
not saved, automatic moves wait for the database, creation is atomic, and
closed tables leave memory."""
from __future__ import annotations

import asyncio
import random
import sqlite3

import aiosqlite
import pytest

from app.store import open_store
from app.store.sqlite_migrations import migrate
from app.tables import manager as tables_module
from app.tables.manager import SLOW_SAVE, TableError, when_slow
from core.games.garbage import engine as garbage
from tests import tables
from tests.faults import DISK_FULL, IO_ERROR, READ_ONLY, failing_commits, held_lock
from tests.tables import ANA, BEN, COMPUTERS, HOST, MOD, manager


@pytest.fixture
def store(sqlite_store):
    """These faults are SQLite's (a full disk, a held file lock): the store is the SQLite file."""
    return sqlite_store


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def lobby(m, host=HOST, **kw):
    """A lobby without a turn timer unless asked, its host named after the id."""
    kw.setdefault("turn_time", 0)
    return await tables.lobby(m, host=host, host_name=f"u{host}", **kw)


def snapshot(table):
    return (table.status, [s.to_dict() for s in table.seats], list(table.log), table.seed, table.turn_seat,
            table.turn_deadline, table.engine.to_dict() if table.engine else None)


async def stored(store, table_id):
    record = await store.table(table_id)
    return record.status, record.meta["seats"], record.actions


def person_move(table):
    seat = table.engine.to_move
    return table.seats[seat].user_id, COMPUTERS[table.game](table.engine, seat, random.Random(seat))


@pytest.mark.parametrize("fault", [DISK_FULL, IO_ERROR, READ_ONLY])
async def test_a_refused_save_changes_nothing_and_the_same_action_works_after(store, fault):
    m = manager(store)
    table = await lobby(m)
    disk = failing_commits(store)

    async def refused(call):
        before, saved = snapshot(table), await stored(store, table.id)
        disk.error = fault
        with pytest.raises(TableError) as error:
            await call()
        disk.error = None
        assert error.value.code == "not_saved"
        assert snapshot(table) == before and await stored(store, table.id) == saved
        await call()  # the database is back: the same action goes through
        assert snapshot(table) != before

    await refused(lambda: m.join(table, ANA, "Ana"))
    await refused(lambda: m.join(table, BEN, "Ben"))
    await refused(lambda: m.leave(table, BEN))
    await refused(lambda: m.add_computer(table, HOST))
    # Start refused: still a lobby, not half-started, and it can be started.
    await refused(lambda: m.start(table, HOST))
    assert table.status == "playing" and table.engine is not None
    for _ in range(4):
        user, action = person_move(table)
        if user is None:
            break
        await refused(lambda: m.act(table, user, action, version=table.version))
    # What the store holds is what the live table shows: a restart agrees.
    await m.shutdown()
    again = manager(store)
    back = {t.id: t for t in await again.restore()}[table.id]
    assert back.engine.to_dict() == table.engine.to_dict() and back.log == table.log
    assert [s.to_dict() for s in back.seats] == [s.to_dict() for s in table.seats]


async def test_a_failed_commit_does_not_leave_a_transaction_open(store):
    disk = failing_commits(store)
    disk.error = DISK_FULL
    with pytest.raises(sqlite3.OperationalError):
        await store.create_table(1, 10, "nimmt", {"x": 1})
    disk.error = None
    table_id = await store.create_table(1, 10, "nimmt", {"x": 2})
    assert [r.id for r in await store.active_tables()] == [table_id]


async def test_cancel_refused_keeps_the_table_open(store):
    m = manager(store)
    table = await lobby(m)
    disk = failing_commits(store)
    disk.error = DISK_FULL
    with pytest.raises(TableError, match="not_saved"):
        await m.cancel(table, HOST, can_manage=False)
    assert table.status == "lobby" and m.in_channel(10) is table
    disk.error = None
    await m.cancel(table, HOST, can_manage=False)
    assert m.in_channel(10) is None and await store.active_tables() == []


async def test_computer_moves_wait_for_the_database_and_then_go_on(store, monkeypatch):
    monkeypatch.setattr(tables_module, "RETRY_FIRST", 0.02)
    monkeypatch.setattr(tables_module, "RETRY_MAX", 0.1)
    m = manager(store)
    table = await lobby(m, seats=3)
    await m.add_computer(table, HOST)
    await m.add_computer(table, HOST)
    disk = failing_commits(store)
    await m.start(table, HOST)
    for _ in range(300):
        if table.engine.to_move == 0:
            break
        await asyncio.sleep(0.01)
    # The person moves; the first computer's move then meets a full disk.
    user, action = person_move(table)
    disk.error = DISK_FULL
    with pytest.raises(TableError, match="not_saved"):
        await m.act(table, user, action)
    disk.error = None
    await m.act(table, user, action)
    disk.error = DISK_FULL
    version = table.version
    for _ in range(100):
        if disk.refused >= 3:
            break
        await asyncio.sleep(0.01)
    assert disk.refused >= 3 and table.version == version  # tried again and again, nothing applied
    assert (await store.table(table.id)).actions == table.log
    disk.error = None  # the disk has room again: the computers play on by themselves
    for _ in range(300):
        if table.engine.to_move == 0:
            break
        await asyncio.sleep(0.01)
    assert table.version > version and table.engine.to_move == 0
    assert (await store.table(table.id)).actions == table.log
    await m.shutdown()


async def test_a_lock_held_elsewhere_refuses_in_time_and_a_slow_save_calls_the_hook(store, tmp_path):
    m = manager(store)
    table = await lobby(m)
    await m.join(table, ANA, "Ana")
    calls = []

    async def hook():
        calls.append("slow")

    token = SLOW_SAVE.set(None)
    when_slow(hook)
    try:
        with held_lock(tmp_path / "bot.db"):
            before = snapshot(table)
            with pytest.raises(TableError, match="not_saved"):
                await m.start(table, HOST)
            assert snapshot(table) == before and calls == ["slow"]
        # Held only a little longer than the hook's delay: deferred, then saved.
        lock = held_lock(tmp_path / "bot.db")
        lock.__enter__()

        async def release_hook():
            calls.append("slow")
            lock.__exit__(None, None, None)

        when_slow(release_hook)
        await m.start(table, HOST)
        assert calls == ["slow", "slow"] and table.status == "playing"
        assert (await store.table(table.id)).status == "playing"
    finally:
        SLOW_SAVE.reset(token)
    await m.shutdown()


async def test_one_table_per_channel_when_many_ask_at_once(store_target):
    store = await open_store(store_target, checkpoint_interval=None)
    m = manager(store)
    results = await asyncio.gather(*(lobby(m, host=HOST + i) for i in range(6)), return_exceptions=True)
    made = [r for r in results if not isinstance(r, Exception)]
    refused = [r for r in results if isinstance(r, TableError)]
    assert len(made) == 1 and len(refused) == 5 and all(r.code == "channel_busy" for r in refused)
    assert [r.id for r in await store.active_tables()] == [made[0].id]
    # A second process on the same database (its own manager and memory): the unique index refuses.
    other = await open_store(store_target, checkpoint_interval=None)
    try:
        with pytest.raises(TableError) as busy:
            await lobby(manager(other), host=BEN)
        assert busy.value.code == "channel_busy" and busy.value.params["table"] == made[0].id
    finally:
        await other.close()
        await store.close()


async def test_a_row_locked_elsewhere_on_postgresql_refuses_in_time(pg_dsn):
    """PostgreSQL's lock_timeout plays SQLite's busy timeout: a click whose
    save meets the table's row locked by another transaction is told "not
    saved" (the slow-save hook ran first), nothing changed; it works after."""
    import asyncpg

    store = await open_store(pg_dsn)
    m = manager(store)
    other = await asyncpg.connect(pg_dsn)
    calls = []

    async def hook():
        calls.append("slow")

    token = SLOW_SAVE.set(None)
    when_slow(hook)
    try:
        table = await lobby(m)
        await m.join(table, ANA, "Ana")
        held = other.transaction()
        await held.start()
        await other.execute("SELECT 1 FROM tables WHERE id = $1 FOR UPDATE", table.id)
        before = snapshot(table)
        with pytest.raises(TableError, match="not_saved"):  # after LOCK_TIMEOUT_MS, not forever
            await m.start(table, HOST)
        assert snapshot(table) == before and calls == ["slow"]
        assert (await store.table(table.id)).status == "lobby"
        await held.rollback()
        await m.start(table, HOST)
        assert (await store.table(table.id)).status == "playing"
    finally:
        SLOW_SAVE.reset(token)
        await m.shutdown()
        await other.close()
        await store.close()


async def test_open_lobbies_per_person_are_capped(store):
    m = manager(store)
    opened = [await lobby(m, channel=20 + i) for i in range(tables_module.MAX_OPEN_LOBBIES)]
    with pytest.raises(TableError) as capped:
        await lobby(m, channel=99)
    assert capped.value.code == "lobby_limit" and capped.value.params["count"] == tables_module.MAX_OPEN_LOBBIES
    await lobby(m, channel=98, host=ANA)  # someone else may
    await m.cancel(opened[0], HOST, can_manage=False)
    await lobby(m, channel=99)  # one closed: room for a new one


async def test_the_lobby_cap_holds_across_the_processes_of_one_database(store_target):
    """A shard cluster: two processes (two managers, each with its own store
    connection) share the database; a host's lobbies in both count."""
    stores = [await open_store(store_target, checkpoint_interval=None) for _ in range(2)]
    first, second = manager(stores[0]), manager(stores[1])
    try:
        limit = tables_module.MAX_OPEN_LOBBIES
        for i in range(limit - 1):
            await lobby(first, channel=30 + i)
        last = await lobby(second, channel=40)  # the host's last free lobby, in the other process
        for m in (first, second):
            with pytest.raises(TableError) as capped:
                await lobby(m, channel=50)
            assert capped.value.code == "lobby_limit"
        await second.cancel(last, HOST, can_manage=False)
        await lobby(first, channel=50)  # closed in one process: room in the other
    finally:
        for m in (first, second):
            await m.shutdown()
        for one in stores:
            await one.close()


async def test_open_and_cancel_cycles_do_not_grow_memory(store):
    m = manager(store)
    for i in range(200):
        table = await lobby(m, channel=10 + i % 3)
        await m.cancel(table, HOST, can_manage=False)
    assert m.tables == {}


async def test_a_finished_game_leaves_memory_once_its_end_was_shown(store):
    m = manager(store)
    table = await lobby(m, game="garbage", seats=2)
    await m.add_computer(table, HOST)
    await m.start(table, HOST)
    rng = random.Random(3)
    while table.status == "playing":
        if table.engine.to_move == 0:
            await m.act(table, HOST, garbage.greedy_player(table.engine, 0, rng))
        else:
            await asyncio.sleep(0.001)
    assert m.get(table.id) is table  # until the end is shown
    await m.ended(table)
    assert m.tables == {} and await store.active_tables() == []
    assert (await store.table(table.id)).status == "finished"
    await m.shutdown()


async def test_a_moderator_stops_a_running_game_as_abandoned(store):
    m = manager(store)
    table = await lobby(m, seats=2)
    await m.join(table, ANA, "Ana")
    await m.start(table, HOST)
    user, action = person_move(table)
    await m.act(table, user, action)
    with pytest.raises(TableError, match="stop_denied"):
        await m.cancel(table, HOST, can_manage=False)  # the host, once the game runs: no
    await m.cancel(table, MOD, can_manage=True, name="Mod")
    assert table.status == "abandoned" and table.stopped_by == "Mod"
    assert m.events[-1] == [{"type": "abandoned", "by": "Mod"}]
    record = await store.table(table.id)
    assert record.status == "abandoned" and record.meta["stopped_by"] == "Mod"
    assert await store.history(HOST) == [] and m.tables == {}
    await lobby(m)  # the channel is free
    await m.shutdown()


async def test_idle_tables_close_themselves_also_after_a_restart(store):
    clock = Clock()
    m = manager(store, clock=clock, idle_limit=3600)
    playing = await lobby(m, seats=2)
    await m.join(playing, ANA, "Ana")
    await m.start(playing, HOST)
    waiting = await lobby(m, channel=11, host=BEN)
    clock.now += 1800
    user, action = person_move(playing)
    await m.act(playing, user, action)  # someone played: its hour starts again
    clock.now += 1900
    assert [t.id for t in await m.close_idle()] == [waiting.id]
    assert waiting.status == "cancelled" and waiting.idle
    await m.shutdown()
    # Stopped here; started again two hours later.
    clock.now += 7200
    again = manager(store, clock=clock, idle_limit=3600)
    await again.restore()
    again.start_timers()  # looks for idle tables at once
    for _ in range(100):
        if not again.tables:
            break
        await asyncio.sleep(0.01)
    assert again.tables == {}
    assert (await store.table(playing.id)).status == "abandoned"
    assert again.events == [[{"type": "idle", "hours": 1}]]
    assert await store.history(HOST) == []
    await again.shutdown()


async def test_migration_keeps_one_active_table_per_channel(tmp_path):
    path = tmp_path / "old.db"
    db = await aiosqlite.connect(path, isolation_level=None)
    await migrate(db, 3)
    rows = [(10, "lobby"), (10, "playing"), (10, "lobby"), (11, "lobby"), (11, "lobby"), (12, "finished")]
    for channel, status in rows:
        await db.execute("INSERT INTO tables (guild_id, channel_id, game, status, meta, created_at, updated_at) "
                         "VALUES (1, ?, 'nimmt', ?, '{}', 0, 0)", (channel, status))
    await db.execute("INSERT INTO table_actions VALUES (2, 0, 0, 'take 0')")
    await db.close()
    store = await open_store(str(path), checkpoint_interval=None)
    try:
        active = {r.id: (r.channel_id, r.status, r.actions) for r in await store.active_tables()}
        assert active == {2: (10, "playing", [(0, "take 0")]), 5: (11, "lobby", [])}
        assert [(await store.table(i)).status for i in (1, 3, 4, 6)] == ["abandoned"] * 3 + ["finished"]
        with pytest.raises(Exception):
            await store.create_table(1, 11, "nimmt", {})
    finally:
        await store.close()


async def test_waiting_behind_a_save_that_waits_for_the_database_also_calls_the_hook(store, tmp_path):
    m = manager(store)
    table = await lobby(m)
    calls = []

    async def ben_joins():
        async def hook():
            calls.append("ben")
        when_slow(hook)
        await m.join(table, BEN, "Ben")

    with held_lock(tmp_path / "bot.db"):
        first = asyncio.create_task(m.join(table, ANA, "Ana"))  # holds the table while the store waits
        await asyncio.sleep(0.05)
        second = asyncio.create_task(ben_joins())
        results = await asyncio.gather(first, second, return_exceptions=True)
    # ben was waiting for the table, not for the store, when his deadline came: told in time all the same.
    assert calls == ["ben"]
    assert all(isinstance(r, TableError) and r.code == "not_saved" for r in results)
    assert [s.name for s in table.seats] == ["u1001"]


async def test_a_result_the_store_refused_is_recorded_once_it_takes_it(store, monkeypatch):
    monkeypatch.setattr(tables_module, "RETRY_FIRST", 0.02)
    m = manager(store)
    table = await lobby(m, seats=2, rounds=1)
    await m.join(table, ANA, "Ana")
    await m.start(table, HOST)
    disk = failing_commits(store)
    while table.status == "playing":
        user, action = person_move(table)
        trial = table.engine.copy()
        trial.apply(trial.to_move, action)
        if trial.over:  # the last move is saved; recording its result meets a full disk
            disk.error, disk.spare = DISK_FULL, 1
        await m.act(table, user, action)
    assert table.status == "finished" and not table.recorded and disk.refused >= 1
    await m.ended(table)  # the end was shown, but the result is not in: the table stays open
    assert [r.id for r in await store.active_tables()] == [table.id] and await store.history(HOST) == []
    await asyncio.sleep(0.1)
    disk.error = None
    for _ in range(200):
        if not await store.active_tables():
            break
        await asyncio.sleep(0.01)
    assert await store.active_tables() == [] and m.tables == {}
    assert len(await store.history(HOST)) == 1 and len(await store.history(ANA)) == 1
    await m.shutdown()
