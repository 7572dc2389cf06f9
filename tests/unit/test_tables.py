"""The table manager without Discord: lobby rules, turns, timers, restarts."""
from __future__ import annotations

import asyncio

import pytest

from app.store import open_store
from app.tables.manager import MISSED_TURNS_LIMIT, TableError
from core.games.garbage import engine as garbage
from core.games.nimmt import engine as nimmt
from core.protocol import GameError
from tests.tables import ANA, BEN, HOST, lobby, manager


async def test_lobby_rules(store):
    m = manager(store)
    table = await lobby(m)
    with pytest.raises(TableError) as busy:
        await lobby(m)
    assert busy.value.code == "channel_busy"
    await m.join(table, ANA, "Ana")
    with pytest.raises(TableError, match="already_seated"):
        await m.join(table, ANA, "Ana")
    with pytest.raises(TableError, match="host_only"):
        await m.add_computer(table, ANA)
    with pytest.raises(TableError, match="host_only"):
        await m.start(table, ANA)
    await m.add_computer(table, HOST)
    with pytest.raises(TableError, match="table_full"):
        await m.join(table, BEN, "Ben")
    await m.leave(table, ANA)
    assert [s.name for s in table.seats] == ["Host", "CPU 1"]
    with pytest.raises(TableError, match="host_alone"):  # nobody to hand the table to
        await m.leave(table, HOST)
    with pytest.raises(TableError, match="cancel_denied"):
        await m.cancel(table, ANA, can_manage=False)
    await m.cancel(table, ANA, can_manage=True)  # a moderator may
    assert table.status == "cancelled"
    assert await store.active_tables() == []
    # The channel is free again.
    await lobby(m)


async def test_a_table_needs_players_and_a_person(store):
    m = manager(store)
    table = await lobby(m, seats=2)
    with pytest.raises(TableError, match="not_enough_players"):
        await m.start(table, HOST)
    with pytest.raises(TableError, match="bad_seats"):
        await m.create(guild_id=1, channel_id=11, game="garbage", host_id=HOST, host_name="H", seats=7)


async def test_a_seed_source_deals_each_table_its_own_cards_the_same_on_every_run(tmp_path):
    """``TABLE_SEEDS`` (how the e2e tests deal): two tables, two deals; a bot with the same
    source on a new database deals both again, card for card."""
    async def two_deals(path):
        store = await open_store(str(path), checkpoint_interval=None)
        try:
            m = manager(store, seed=None, seeds=99)
            deals = []
            for channel in (10, 11):
                table = await lobby(m, seats=2, channel=channel, turn_time=0)
                await m.join(table, ANA, "Ana")
                await m.start(table, HOST)
                deals.append(table.engine.to_dict())
            await m.shutdown()
            return deals
        finally:
            await store.close()

    first = await two_deals(tmp_path / "a.db")
    assert first[0] != first[1]
    assert await two_deals(tmp_path / "b.db") == first


async def test_wrong_player_wrong_turn_stale_and_illegal_change_nothing(store):
    m = manager(store)
    table = await lobby(m, seats=2, turn_time=0)
    await m.join(table, ANA, "Ana")
    await m.start(table, HOST)
    engine = table.engine
    seat = engine.to_move
    other = 1 - seat
    user = table.seats[seat].user_id
    before = engine.to_dict()
    with pytest.raises(TableError, match="not_seated"):
        await m.act(table, BEN, "take 0")
    with pytest.raises(GameError) as not_turn:
        await m.act(table, table.seats[other].user_id, "take 0")
    assert not_turn.value.code == "not_your_turn"
    with pytest.raises(TableError, match="stale"):
        await m.act(table, user, "take 0", version=table.version + 1)
    with pytest.raises(GameError) as bad:
        await m.act(table, user, "take 99")
    assert bad.value.code == "no_such_stack"
    assert engine.to_dict() == before and table.log == []
    events = await m.act(table, user, "take 0", version=0)
    assert events and table.version == 1
    assert (await store.active_tables())[0].actions == [(seat, "take 0")]


async def test_computers_play_until_a_person_is_to_move(store):
    m = manager(store)
    table = await lobby(m, seats=4, turn_time=0)
    for _ in range(3):
        await m.add_computer(table, HOST)
    await m.start(table, HOST)
    for _ in range(200):
        if table.engine.to_move == 0 or table.status != "playing":
            break
        await asyncio.sleep(0.01)
    assert table.engine.to_move == 0
    moves = table.version
    await asyncio.sleep(0.05)
    assert table.version == moves  # nobody plays for the person while the timer is off
    await m.shutdown()


async def test_turn_timer_plays_for_the_absent_and_hands_back(store):
    m = manager(store, time_scale=0.001)  # 120 s turn -> 0.12 s
    table = await lobby(m, game="garbage", seats=2, turn_time=120)
    await m.join(table, ANA, "Ana")
    await m.start(table, HOST)
    def timeouts():
        return [e for batch in m.events for e in batch if e["type"] == "timeout"]

    for _ in range(1000):
        if any(e["away"] for e in timeouts()):
            break
        await asyncio.sleep(0.01)
    away = [i for i, s in enumerate(table.seats) if s.away]
    assert away, "after three missed turns a computer holds the seat"
    seen = timeouts()
    assert seen[0]["away"] is False and any(e["away"] for e in seen)
    missed = [e for e in seen if e["seat"] == away[0]]
    assert len(missed) == MISSED_TURNS_LIMIT
    await m.back(table, table.seats[away[0]].user_id)
    assert not table.seats[away[0]].away and table.seats[away[0]].missed == 0
    with pytest.raises(TableError, match="not_away"):
        await m.back(table, table.seats[away[0]].user_id)
    await m.shutdown()


async def test_restart_restores_lobby_and_game_exactly(store, tmp_path):
    m = manager(store)
    game_table = await lobby(m, seats=2, turn_time=0)
    await m.join(game_table, ANA, "Ana")
    await m.start(game_table, HOST)
    for _ in range(6):
        seat = game_table.engine.to_move
        action = nimmt.greedy_player(game_table.engine, seat, __import__("random").Random(seat))
        await m.act(game_table, game_table.seats[seat].user_id, action)
    lobby_table = await m.create(guild_id=1, channel_id=20, game="garbage", host_id=ANA, host_name="Ana", seats=3)
    m.set_message(game_table, "thread", 555)
    await m.save_messages(game_table)
    state = game_table.engine.to_dict()
    await m.shutdown()

    again = manager(store)
    restored = {t.id: t for t in await again.restore()}
    assert set(restored) == {game_table.id, lobby_table.id}
    back = restored[game_table.id]
    assert back.engine.to_dict() == state
    assert back.messages["thread"] == 555 and back.version == game_table.version
    assert restored[lobby_table.id].status == "lobby"
    assert again.in_channel(555) is back


async def test_finished_game_is_recorded_once_and_closed(store):
    m = manager(store)
    table = await lobby(m, game="garbage", seats=2, turn_time=0)
    await m.add_computer(table, HOST)
    await m.start(table, HOST)
    rng = __import__("random").Random(3)
    deadline = asyncio.get_running_loop().time() + 120
    while table.status == "playing" and asyncio.get_running_loop().time() < deadline:
        if table.engine.to_move == 0:
            await m.act(table, HOST, garbage.greedy_player(table.engine, 0, rng))
        else:
            await asyncio.sleep(0.001)  # the computer's move is a timer task
    assert table.status == "finished"
    # Recorded at once; the table stays open in the store until its end was shown.
    assert [r.id for r in await store.active_tables()] == [table.id]
    restarted = manager(store)
    again = await restarted.restore()
    assert again[0].status == "finished" and again[0].ending[-1]["type"] == "game_over"
    await restarted.ended(again[0])
    assert await store.active_tables() == []
    history = await store.history(HOST)
    assert len(history) == 1 and history[0]["game"] == "garbage"
    profile = await store.profile(HOST, "garbage")
    assert profile["games"] == 1
    await m.shutdown()


async def test_a_timed_out_turn_that_wins_the_hand_does_not_play_the_next_hand_too(store):
    """The computer finishes Ana's timed-out turn, which completes her layout:
    she starts the next hand, and that turn is hers again, with a new timer."""
    m = manager(store, time_scale=0.001)
    table = await lobby(m, game="garbage", seats=2, turn_time=120)
    await m.join(table, ANA, "Ana")
    await m.start(table, HOST)
    m._drop_timer(table)
    # Host (seat 0) needs one more card: slot 2 is face down, the stock's top is a 2.
    table.engine = garbage.Garbage.from_position(
        ["AS ?5C 3D 4D 5D 6D 7D 8D 9D 10D", "?AH ?2H ?3H ?4H ?5H ?6H ?7H ?8H ?9H ?10H"], stock="2C KS KH")
    table.log.clear()
    table.saved = 0
    m._new_turn(table, force=True)
    m._schedule(table)
    for _ in range(500):
        if any(e["type"] == "timeout" for batch in m.events for e in batch):
            break
        await asyncio.sleep(0.005)
    events = [e for batch in m.events for e in batch]
    kinds = [e["type"] for e in events]
    assert "hand_won" in kinds and "timeout" in kinds
    after_win = kinds[kinds.index("hand_won"):kinds.index("timeout")]
    assert "drew" not in after_win  # the new hand's first turn was not played for her
    assert table.engine.to_move == 0 and table.engine.hand_no == 2
    assert table.turn_deadline is not None
    await m.shutdown()


async def test_a_restart_replays_every_saved_line_in_order_timeouts_and_back_included(store):
    """What the listener was told (engine events, timed-out turns, "I'm back",
    the start) is, after a restart with nothing told, replayed in the same
    order from the store alone; once told, nothing is replayed."""
    m = manager(store, time_scale=0.001)  # 120 s turn -> 0.12 s
    table = await lobby(m, game="garbage", seats=2, turn_time=120)
    await m.join(table, ANA, "Ana")
    await m.start(table, HOST)
    for _ in range(1000):
        if any(s.away for s in table.seats):
            break
        await asyncio.sleep(0.01)
    away = next(i for i, s in enumerate(table.seats) if s.away)
    await m.back(table, table.seats[away].user_id)
    async with table.lock:  # no timer move between the copy and the shutdown
        told = [e for batch in m.events for e in batch if e["type"] != "lobby"]
        version = table.version
        await m.shutdown()
    kinds = [e["type"] for e in told]
    assert kinds[0] == "started" and kinds[-1] == "back" and kinds.count("timeout") >= MISSED_TURNS_LIMIT

    again = manager(store)
    [back] = await again.restore()
    assert back.version == version and back.narrated == 0 and back.notes_told == 0
    assert again.replay_events(back, back.narrated) == told
    # The presenter told the thread up to the first timeout: only what follows comes back.
    first = next(i for i, e in enumerate(told) if e["type"] == "timeout")
    note = next(n for n in back.notes if n["event"]["type"] == "timeout")
    assert back.told(note["at"], note["n"])
    await again.save_messages(back)
    [later] = await manager(store).restore()
    assert manager(store).replay_events(later, later.narrated) == told[first + 1:]
    assert later.told(later.version, later.noted)
    assert manager(store).replay_events(later, later.narrated) == []
