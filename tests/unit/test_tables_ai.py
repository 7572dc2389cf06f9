"""The table manager with levelled computer players (app.tables.computers): each seat
plays at its level, the timer's takeover at normal, old seats are normal,
the hard search never holds the table, hints follow the rating rules."""
from __future__ import annotations

import asyncio
import threading

import pytest

from app.tables.computers import Computers
from app.tables.manager import Seat, TableError, TableManager
from core import ai
from core.games.take6 import engine as take6
from tests import tables
from tests.tables import ANA, COMPUTERS, GAMES, HOST, until


@pytest.fixture
def store(sqlite_store):
    """The searches do not depend on the backend: the SQLite file."""
    return sqlite_store


def manager(store, *, worlds=6, budget=None, **kw):
    """A manager whose computers search (``worlds`` per move, ``budget`` seconds)."""
    return tables.manager(store, players=Computers(GAMES, worlds=worlds, budget=budget, fallback=COMPUTERS), **kw)


async def lobby(m, seats=2, **kw):
    """Two seats and no turn timer unless asked."""
    kw.setdefault("turn_time", 0)
    return await tables.lobby(m, seats=seats, **kw)


def replayed(table, upto):
    cls = GAMES[table.game]
    g = cls.new(len(table.seats), table.seed, rounds=table.options.get("rounds", len(table.seats))) \
        if table.game == "nimmt" else cls.new(len(table.seats), table.seed)
    events = []
    for seat, text in table.log[:upto]:
        events += g.apply(seat, g.parse(text))
    return g, events


def test_seats_saved_before_levels_are_normal():
    old = {"user_id": None, "name": "CPU 1", "away": False, "missed": 0}
    assert Seat.from_dict(old).level == "normal"
    hard = Seat(None, "CPU 2", level="hard")
    assert Seat.from_dict(hard.to_dict()) == hard


@pytest.mark.parametrize("game", ["nimmt", "garbage"])
async def test_every_computer_seat_plays_at_its_level(store, game):
    """Each automatic move is the one its level decides from the seat's view
    and the public events (hard: a seeded search of 6 worlds)."""
    m = manager(store)
    table = await lobby(m, game=game, seats=3, rounds=1) if game == "nimmt" else await lobby(m, game=game, seats=3)
    await m.add_computer(table, HOST, "hard")
    await m.add_computer(table, HOST, "easy")
    assert [s.level for s in table.seats[1:]] == ["hard", "easy"]
    with pytest.raises(TableError, match="bad_level"):
        await m.add_computer(table, HOST, "expert")
    await m.start(table, HOST)
    checked = {"hard": 0, "easy": 0}
    for _ in range(60):
        await until(lambda: table.status != "playing" or table.engine.to_move == 0)
        if table.status != "playing":
            break
        # the person plays the normal move
        k = ai.know(game, table.engine.view(0), m.players.history(table))
        await m.act(table, HOST, ai.decide(game, k, "normal", m.players.rng(table, 0)).action)
    for index, (seat, text) in enumerate(table.log):
        level = table.seats[seat].level if table.seats[seat].computer else None
        if level is None or checked[level] >= 8:
            continue
        g, events = replayed(table, index)
        k = ai.know(game, g.view(seat), events)
        rng = __import__("random").Random(f"{table.seed}:{index}:{seat}")
        expected = ai.decide(game, k, level, rng, sims=6)
        assert str(expected.action) == text, (level, index)
        checked[level] += 1
    assert checked["hard"] > 0 and checked["easy"] > 0
    await m.shutdown()


async def test_the_timer_takeover_plays_at_normal_level(store):
    m = manager(store, time_scale=0.001)  # 120 s turn -> 0.12 s
    table = await lobby(m, game="nimmt", seats=2, turn_time=120, rounds=1)
    await m.join(table, ANA, "Ana")
    await m.start(table, HOST)
    await until(lambda: table.version >= 2)
    await m.shutdown()
    for index, (seat, text) in enumerate(table.log[:2]):
        g, events = replayed(table, index)
        k = ai.know("nimmt", g.view(seat), events)
        rng = __import__("random").Random(f"{table.seed}:{index}:{seat}")
        assert str(ai.decide("nimmt", k, "normal", rng).action) == text


async def test_the_hard_search_runs_outside_the_lock_and_a_change_meanwhile_wins(store):
    """While a hard computer thinks, the table is free (a moderator can stop it);
    the searched move is then dropped, not applied to the changed table."""
    m = manager(store)
    table = await lobby(m, seats=2, rounds=1)
    await m.add_computer(table, HOST, "hard")
    thinking = asyncio.Event()
    release = asyncio.Event()
    think = m.players.think

    async def slow_think(t, seat, level):
        thinking.set()
        await release.wait()
        return await think(t, seat, level)

    m.players.think = slow_think
    await m.start(table, HOST)
    if table.engine.to_move == 0:  # let the person move first
        k = ai.know("nimmt", table.engine.view(0), m.players.history(table))
        await m.act(table, HOST, ai.decide("nimmt", k, "normal", m.players.rng(table, 0)).action)
    await asyncio.wait_for(thinking.wait(), 5)
    version = table.version
    await asyncio.wait_for(m.cancel(table, HOST, can_manage=True), 1)  # the lock is free: a moderator stops it
    release.set()
    await asyncio.sleep(0.1)
    assert table.status == "abandoned" and table.version == version
    await m.shutdown()


async def test_no_hint_at_a_table_without_hints(store):
    m = manager(store)
    table = await lobby(m, seats=2, rounds=1)
    await m.add_computer(table, HOST, "hard")
    await m.start(table, HOST)
    with pytest.raises(TableError, match="hints_off"):
        await m.hint(table, HOST)
    await m.shutdown()


async def test_hints_only_when_unrated_and_never_rated(store):
    m = manager(store)
    table = await lobby(m, seats=3, rounds=1)
    await m.join(table, ANA, "Ana")
    with pytest.raises(TableError, match="hints_rated"):  # two people: a rated game
        await m.set_hints(table, HOST, True)
    await m.add_computer(table, HOST, "normal")
    with pytest.raises(TableError, match="host_only"):
        await m.set_hints(table, ANA, True)
    await store.set_guild_setting(1, "rate_bot_games", True)
    with pytest.raises(TableError, match="hints_rated"):  # the server rates computer games
        await m.set_hints(table, HOST, True)
    await store.set_guild_setting(1, "rate_bot_games", False)
    await m.set_hints(table, HOST, True)
    await m.set_hints(table, HOST, False)
    assert "hints" not in table.options
    await m.set_hints(table, HOST, True)
    assert table.options["hints"] is True
    await m.start(table, HOST)
    assert table.engine.options == {"rounds": 1}  # hints are the table's, not the engine's
    await until(lambda: table.engine.to_move in (0, 1) or table.status != "playing")
    mover = table.seats[table.engine.to_move].user_id
    waiter = ANA if mover == HOST else HOST
    with pytest.raises(TableError, match="hint_not_your_turn"):
        await m.hint(table, waiter)
    decision = await m.hint(table, mover)
    assert table.engine.is_legal(table.engine.to_move, decision.action)
    await store.set_guild_setting(1, "rate_bot_games", True)  # changed meanwhile: still unrated
    while table.status == "playing":
        await until(lambda: table.status != "playing" or not table.seats[table.engine.to_move].computer)
        if table.status != "playing":
            break
        seat = table.engine.to_move
        k = ai.know("nimmt", table.engine.view(seat), m.players.history(table))
        await m.act(table, table.seats[seat].user_id, ai.decide("nimmt", k, "normal", m.players.rng(table, seat)).action)
    [game] = await store.history(HOST)
    assert (await store.game_detail(game["game_id"]))["rated"] is False
    await m.shutdown()


async def test_take6_hard_computers_search_every_choice_while_people_choose_too(store):
    """6 nimmt!: everyone chooses at once.  The person's choice lands while the
    hard computers think; their searches start again on the new table and
    every move they make is a searched one (never the normal fallback)."""
    games = {**GAMES, "take6": take6.Take6}
    legacy = {**COMPUTERS, "take6": take6.normal_player}
    players = Computers(games, worlds=6, budget=None, fallback=legacy)
    m = TableManager(store, games, legacy, seed=7, players=players, computer_delay=0.0)
    table = await lobby(m, game="take6", seats=3, options={"deals": 1})
    await m.add_computer(table, HOST, "hard")
    await m.add_computer(table, HOST, "hard")
    think, choose = players.think, players.choose
    searched, fallbacks = [], []

    async def slow_think(t, seat, level):
        await asyncio.sleep(0.03)  # long enough for the person to choose meanwhile
        action = await think(t, seat, level)
        searched.append((seat, t.version, action))
        return action

    def counted_choose(t, seat, level):
        fallbacks.append((seat, level))
        return choose(t, seat, level)

    players.think, players.choose = slow_think, counted_choose
    await m.start(table, HOST)
    while table.status == "playing":
        await until(lambda: table.status != "playing" or 0 in table.engine.to_act)
        if table.status != "playing":
            break
        await asyncio.sleep(0.01)  # the computers are thinking now
        k = ai.know("take6", table.engine.view(0), players.history(table))
        await m.act(table, HOST, ai.decide("take6", k, "normal", players.rng(table, 0)).action)
    assert table.engine.result is not None
    moves = [(seat, text) for seat, text in table.log if seat != 0]
    assert len(moves) >= 20 and fallbacks == []
    played = {(seat, str(action)) for seat, _, action in searched}
    assert set(moves) <= played
    await m.shutdown()


async def test_a_search_nobody_waits_for_stops_after_its_current_world(store, monkeypatch):
    """The table is stopped while its hard computer searches: the worker thread
    is told to stop and ends after the world it is in, instead of searching the
    rest of its worlds with nobody waiting for the move."""
    m = manager(store, worlds=5000)  # no time budget: only a stop ends the search before 5,000 worlds (~10 s)
    searching, finished = threading.Event(), threading.Event()
    searched = []
    decide = ai.decide

    def watched(*args, **kw):
        searching.set()
        try:
            d = decide(*args, **kw)
            searched.append(d.worlds)
            return d
        finally:
            finished.set()

    monkeypatch.setattr("app.tables.computers.ai.decide", watched)
    table = await lobby(m, seats=2, rounds=1)
    await m.add_computer(table, HOST, "hard")
    await m.start(table, HOST)
    if table.engine.to_move == 0:  # let the person move first
        k = ai.know("nimmt", table.engine.view(0), m.players.history(table))
        await m.act(table, HOST, decide("nimmt", k, "normal", m.players.rng(table, 0)).action)
    assert await asyncio.to_thread(searching.wait, 10)
    await m.cancel(table, HOST, can_manage=True)
    assert await asyncio.to_thread(finished.wait, 30)
    assert table.status == "abandoned"
    assert searched and 1 <= searched[0] < 5000, searched
    await m.shutdown()
