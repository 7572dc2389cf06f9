"""Game nights without Discord: seating, points, standings, highlights
(``app.nights.night``), and the night host driving real tables on a real store
(``app.nights.host``): rounds, leaving, computers, a restart, the record."""
from __future__ import annotations

import asyncio
import random

import pytest

from app.i18n.catalogue import t
from app.render import night as render_night
from app.nights.host import NightHost
from app.nights.night import (
    GameEvents, Night, NightError, NightTable, Player, balance, highlights, place_points, seat_round, snake,
    spread, standings, table_sizes,
)
from app.store import open_store
from app.tables.manager import TableManager
from core.protocol import places_from_scores
from tests.tables import COMPUTERS, GAMES, until


def night_of(n: int, size: int = 4, **kw) -> Night:
    return Night(1, 1, 1, "nimmt", 1, size, players=[Player(u, f"p{u}") for u in range(1, n + 1)], **kw)


# ---------------------------------------------------------------- seating
@pytest.mark.parametrize("size", range(2, 8))
def test_table_sizes_are_even_within_limits_and_never_one(size):
    for n in range(2, 60):
        sizes = table_sizes(n, size, 2, 7)
        assert sum(sizes) == n
        assert max(sizes) - min(sizes) <= 1
        assert min(sizes) >= 2
        k = -(-n // size)  # as few tables as the size allows...
        if n // k >= 2:
            assert len(sizes) == k and max(sizes) <= size
        else:  # ...unless one would seat a lone player: then one table fewer, one seat more
            assert len(sizes) == k - 1 and max(sizes) <= size + 1


def test_table_sizes_examples_and_refusals():
    assert table_sizes(11, 4) == [4, 4, 3]
    assert table_sizes(8, 4) == [4, 4]
    assert table_sizes(3, 2) == [3]  # never a table of one: three play together
    assert table_sizes(7, 7) == [7]
    with pytest.raises(NightError) as few:
        table_sizes(1, 4)
    assert few.value.code == "too_few"


def test_round_one_balances_average_ratings():
    spreads, naive = [], []
    for trial in range(200):
        rng = random.Random(trial)
        ratings = {u: rng.gauss(10, 5) for u in range(1, 12)}
        tables = seat_round(night_of(11), ratings, 2, 7)
        assert sorted(len(t) for t in tables) == [3, 4, 4]
        seated = [u for t in tables for u in t]
        assert sorted(seated) == list(range(1, 12))  # everyone, once
        spreads.append(spread(tables, ratings))
        order = list(ratings)
        rng.shuffle(order)
        naive.append(spread([order[:4], order[4:8], order[8:]], ratings))
    spreads.sort()
    naive.sort()
    # ratings spread by 5 points (one standard deviation): the tables' averages
    # end up within about 0.2 of each other (median), within 1.5 always;
    # a random seating is 20 times worse
    assert spreads[100] < 0.3 and spreads[-1] < 1.5
    assert spreads[100] * 10 < naive[100]


def test_snake_then_balance_keeps_sizes_and_people():
    ratings = {u: float(u * u % 17) for u in range(1, 23)}
    sizes = table_sizes(22, 5)
    snaked = snake(sorted(ratings, key=lambda u: -ratings[u]), sizes)
    balanced = balance(snaked, ratings)
    assert [len(t) for t in balanced] == [len(t) for t in snaked] == sizes
    assert sorted(u for t in balanced for u in t) == sorted(ratings)
    assert spread(balanced, ratings) <= spread(snaked, ratings)


def finished(night: Night, round_no: int, tables: list[list[int]], places: list[list[int]]) -> None:
    for number, (seats, pl) in enumerate(zip(tables, places), start=1):
        night.tables.append(NightTable(100 * round_no + number, round_no, number, list(seats), "done", list(pl)))
    night.round = round_no


def test_later_rounds_seat_by_night_standings_and_skip_who_left():
    night = night_of(9)
    finished(night, 1, [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[1, 2, 3], [3, 1, 2], [2, 3, 1]])
    # standings: winners 1, 5, 9 (3 points), seconds 2, 6, 7 (2), thirds 3, 4, 8 (1)
    order = [s.user_id for s in standings(night)]
    assert order[:3] == [1, 5, 9] and set(order[3:6]) == {2, 6, 7}
    night.players.append(Player(10, "late"))  # signed up between rounds
    night.player(3).left = True
    tables = seat_round(night, {}, 2, 7)
    seated = [u for t in tables for u in t]
    assert 3 not in seated and sorted(seated) == [1, 2, 4, 5, 6, 7, 8, 9, 10]
    assert sorted(len(t) for t in tables) == [3, 3, 3]
    # the leaders meet the leaders; the latecomer (no points yet) sits at the last table
    assert set(tables[0]) == {1, 5, 9} and 10 in tables[-1]


def test_computers_fill_only_when_asked():
    night = night_of(5)
    assert all(u is not None for t in seat_round(night, {}, 2, 7) for u in t)
    night.fill = True
    tables = seat_round(night, {}, 2, 7)
    assert [len(t) for t in tables] == [4, 4]
    assert sorted(u for t in tables for u in t if u is not None) == [1, 2, 3, 4, 5]
    assert all(any(u is not None for u in t) for t in tables)  # a person at every table
    alone = night_of(1, fill=True)
    assert seat_round(alone, {}, 2, 7) == [[1, None, None, None]]
    with pytest.raises(NightError):
        seat_round(night_of(1), {}, 2, 7)


# ----------------------------------------------------------------- points
def test_points_per_place_and_ties_share():
    assert place_points([1, 2, 3, 4]) == [4, 3, 2, 1]
    assert place_points([2, 1, 2]) == [1.5, 3, 1.5]
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(2, 7)
        places = places_from_scores([rng.randint(0, 4) for _ in range(n)])
        points = place_points(places)
        assert sum(points) == n * (n + 1) / 2  # ties move no points to anyone else
        for a in range(n):
            for b in range(n):
                if places[a] < places[b]:
                    assert points[a] > points[b]
                if places[a] == places[b]:
                    assert points[a] == points[b]


def test_standings_order_and_shared_ranks():
    night = night_of(6)
    finished(night, 1, [[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [1, 2, 3]])
    finished(night, 2, [[1, 4], [2, 5], [3, 6]], [[1, 1], [2, 1], [1, 2]])
    night.tables.append(NightTable(999, 2, 4, [6, 5], "closed", None))  # a closed table gives nothing
    rows = {s.user_id: s for s in standings(night)}
    assert rows[1].points == 3 + 1.5 and rows[4].points == 3 + 1.5
    assert rows[1].wins == rows[4].wins == 2 and rows[1].rank == rows[4].rank == 1
    assert rows[5].points == 2 + 2 and rows[5].wins == 1
    assert rows[2].points == 2 + 1 and rows[3].points == 1 + 2
    ranked = standings(night)
    assert [s.points for s in ranked] == sorted((s.points for s in ranked), reverse=True)
    assert all(s.games == 2 for s in ranked)


# ------------------------------------------------------------- highlights
def test_highlights_from_events():
    a = GameEvents(1, 1, ["ann", "bo", "cy"], [
        {"type": "took", "seat": 0, "count": 4}, {"type": "bull", "seat": 0, "source": "supply"},
        {"type": "took", "seat": 2, "count": 6}, {"type": "bull", "seat": 2, "source": "player", "victim": 0},
        {"type": "bull", "seat": 2, "source": "supply"},
        {"type": "round_over", "out": 1}, {"type": "round_over", "out": 1},
    ], "nimmt")
    b = GameEvents(1, 2, ["dee", "eli"], [
        {"type": "drew", "seat": 0}, {"type": "drew", "seat": 1}, {"type": "drew", "seat": 0},
        {"type": "hand_won", "seat": 0}, {"type": "hand_start"},
        {"type": "drew", "seat": 1}, {"type": "hand_won", "seat": 1},
    ], "garbage")
    found = {h["kind"]: h for h in highlights([a, b])}
    assert found["biggest_stack"] == {"kind": "biggest_stack", "name": "cy", "value": 6, "round": 1, "table": 1}
    assert found["most_bulls"]["name"] == "cy" and found["most_bulls"]["value"] == 2  # ann's was taken
    assert found["most_rounds"]["name"] == "bo" and found["most_rounds"]["value"] == 2
    assert found["fastest_hand"]["name"] == "eli" and found["fastest_hand"]["value"] == 1
    assert highlights([GameEvents(1, 1, ["x"], [{"type": "something_new"}], "nimmt")]) == []
    assert [h["kind"] for h in highlights([a, b])] == ["biggest_stack", "most_bulls", "most_rounds", "fastest_hand"]


def test_a_six_nimmt_night_has_highlights_too():
    c = GameEvents(2, 3, ["fay", "gus"], [
        {"type": "took_row", "seat": 1, "heads": 7}, {"type": "sixth", "seat": 0, "heads": 4},
        {"type": "deal_over", "penalties": [0, 7]}, {"type": "deal_over", "penalties": [2, 2]},
        {"type": "deal_over", "penalties": [5, 1]},
    ], "take6")
    found = {h["kind"]: h for h in highlights([c])}
    assert found["heaviest_row"] == {"kind": "heaviest_row", "name": "gus", "value": 7, "round": 2, "table": 3}
    assert found["most_deals"]["name"] == "fay" and found["most_deals"]["value"] == 2  # a tie counts for both
    for lang in ("en", "es", "de"):
        assert t(lang, "nights.hl_heaviest_row", name="gus", value=7, count=7, round=2, table=3)


# ------------------------------------------------------- the host, for real
def make(store):
    # people who do not move time out at once; then a computer plays for them
    tables = TableManager(store, GAMES, COMPUTERS, computer_delay=0.0, time_scale=0.0005, seed=5)
    return tables, NightHost(store, tables)


async def new_night(host, game="nimmt", size=4, rounds=None, people=5, turn_time=1):
    night = await host.create(guild_id=1, channel_id=10, game=game, organiser_id=1, organiser_name="p1",
                              table_size=size, rounds=rounds, turn_time=turn_time, locale="en")
    for u in range(2, people + 1):
        await host.join(night, u, f"p{u}")
    return night


async def launch(host, night):
    async def announce(table, nt):
        return None

    await host.launch(night, announce)


async def test_refusals(store):
    tables, host = make(store)
    with pytest.raises(NightError, match="bad_size"):
        await host.create(guild_id=1, channel_id=10, game="garbage", organiser_id=1, organiser_name="o",
                          table_size=7, rounds=None, turn_time=0, locale="en")
    night = await new_night(host, people=1)
    with pytest.raises(NightError, match="channel_busy"):
        await new_night(host)
    with pytest.raises(NightError, match="already_joined"):
        await host.join(night, 1, "p1")
    with pytest.raises(NightError, match="not_joined"):
        await host.leave(night, 99)
    with pytest.raises(NightError, match="too_few"):
        await host.start_round(night, 1, False)
    await host.join(night, 2, "p2")
    with pytest.raises(NightError, match="not_organiser"):
        await host.start_round(night, 2, False)
    with pytest.raises(NightError, match="not_organiser"):
        await host.end(night, 2, False)
    await host.start_round(night, 2, True)  # a moderator may
    with pytest.raises(NightError, match="round_running"):
        await host.start_round(night, 1, False)
    await host.end(night, 1, False)
    with pytest.raises(NightError, match="ended"):
        await host.join(night, 3, "p3")
    await tables.shutdown()


async def test_a_short_night_with_computers_leaving_and_the_record(store):
    tables, host = make(store)
    told = []
    host.listener = lambda night, kind: told.append(kind)
    night = await new_night(host, game="garbage", size=3, rounds=2, people=4)
    await host.toggle_fill(night, 1, False)
    made = await host.start_round(night, 1, False)
    assert sorted(len(t.seats) for t in made) == [3, 3]
    assert sum(1 for t in made for s in t.seats if s.computer) == 2
    assert all(t.night_id == night.id for t in made)
    # p4 leaves; their table plays on (p4 played it) but p4 is not seated again
    await host.leave(night, 4)
    tables.start_timers()
    await launch(host, night)
    assert all(t.status != "lobby" and t.started_at for t in made)  # every table started at once
    await until(lambda: night.status == "signup")
    assert "round" in told and {nt.status for nt in night.tables} == {"done"}
    assert {s.user_id for s in standings(night)} == {1, 2, 3, 4}
    await host.join(night, 5, "p5")  # latecomers, between rounds
    await host.join(night, 6, "p6")
    made = await host.start_round(night, 1, False)
    seated = {s.user_id for t in made for s in t.seats if not s.computer}
    assert seated == {1, 2, 3, 5, 6}
    await launch(host, night)
    await until(lambda: night.status == "ended" and told[-1] == "ended")  # (ended is saved, then told)
    final = standings(night)
    winners = [s.user_id for s in final if s.rank == 1]
    for s in final:
        record = await store.night_record(s.user_id, "garbage")
        assert record == {"played": 1, "won": int(s.user_id in winners)}
    assert await store.night_record(1, "nimmt") == {"played": 0, "won": 0}
    row = await store.night_in_channel(10)
    assert row["status"] == "ended" and Night.from_record(
        row["id"], row["guild_id"], row["channel_id"], row["game"], row["status"], row["meta"]).round == 2
    events = await host.game_events(night)
    assert len(events) == 4 and all(e.events for e in events)
    await tables.shutdown()


async def test_a_table_whose_people_all_left_is_closed(store):
    tables, host = make(store)
    night = await new_night(host, people=4, size=2, turn_time=0)
    made = await host.start_round(night, 1, False)
    await launch(host, night)  # no turn timer and no computers: nobody moves
    lonely = next(nt for nt in night.tables if 1 not in nt.seats)
    for u in lonely.seats:
        await host.leave(night, u)
    await until(lambda: night.table(lonely.table_id).status == "closed")
    record = await store.table(lonely.table_id)
    assert record.status == "abandoned"  # a game was under way: no result
    # the thread says why (everyone left the night), not that the host's id stopped it
    assert record.meta.get("stop_reason") == "players_left" and record.meta.get("stopped_by") is None
    assert tables.get(lonely.table_id) is None  # a closed table leaves memory
    assert night.status == "playing"  # the organiser's table still plays
    assert len(made) == 2
    await tables.shutdown()


async def test_a_restart_settles_tables_that_ended_meanwhile(store):
    tables, host = make(store)
    night = await new_night(host, people=4, size=2, rounds=1)
    await host.start_round(night, 1, False)
    tables.closed_hooks.clear()  # the night does not hear of the ends (as if the bot stopped first)
    await launch(host, night)
    tables.start_timers()
    await until(lambda: all(tables.get(nt.table_id).status == "finished" for nt in night.tables))
    await tables.shutdown()
    assert night.status == "playing"
    # a new start on the same database: the tables restore, the night settles them
    tables2, host2 = make(store)
    await host2.restore()
    await tables2.restore()
    again = host2.nights[night.id]
    assert again.status == "playing" and again.round == 1
    async with host2.lock(again):
        assert await host2.reconcile(again)
    assert again.status == "ended" and all(nt.status == "done" for nt in again.tables)
    assert len(standings(again)) == 4
    await tables2.shutdown()


def test_a_restart_makes_the_night_follow_the_seats_its_save_missed():
    """The seat is saved before the night; ``follow_seats`` mends a night a kill
    left behind, and leaves alone what the night changed on purpose since."""
    from types import SimpleNamespace

    from app.tables.manager import Seat

    night = night_of(5)
    table = SimpleNamespace(id=7, seats=[Seat(1, "p1"), Seat(2, "p2", away=True, stepped=True),
                                         Seat(3, "p3", away=True), Seat(4, "p4", away=True, stepped=True),
                                         Seat(5, "p5"), Seat(None, "CPU 1")])
    night.player(4).stepped_at = 7  # followed already, then signed up again by hand: stays on
    night.player(5).left, night.player(5).away, night.player(5).stepped_at = True, True, 7  # back, not followed
    assert NightHost.follow_seats(night, table)
    assert [(p.left, p.away, p.stepped_at) for p in night.players] == [
        (False, False, None),  # at the table: nothing to follow
        (True, True, 7),  # stepped away, the night's save lost: off the night now
        (False, False, None),  # away after missed turns, not by choice: still on the night
        (False, False, 7),  # signed up again after stepping away: left as it is
        (False, False, None),  # pressed I'm back, the night's save lost: on the night again
    ]
    assert not NightHost.follow_seats(night, table)  # once: nothing left to mend
    night.player(2).left, night.player(2).away, night.player(2).stepped_at = True, False, None  # pressed Leave
    table.seats[1].away = table.seats[1].stepped = False  # then I'm back at the table: the night keeps them off
    assert not NightHost.follow_seats(night, table) and night.player(2).left
    assert Night.from_record(1, 1, 1, "nimmt", "playing", night.meta()).player(2).stepped_at is None
    assert Night.from_record(1, 1, 1, "nimmt", "playing", night.meta()).player(4).stepped_at == 7
    assert Seat.from_dict(Seat(2, "p2", away=True, stepped=True).to_dict()).stepped  # saved with the table
    assert "stepped" not in Seat(3, "p3", away=True).to_dict()


def test_recap_image_podium_rows_and_highlights():
    from io import BytesIO

    from PIL import Image

    def size(data):
        png = render_night.render_recap(data)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        return Image.open(BytesIO(png)).size

    rows = [(i + 1, f"player {i} " + "Ω" * i, f"{12 - i}", i % 3, 2) for i in range(12)]
    full = {"title": "Recap", "subtitle": "2 rounds", "podium": [r[:3] for r in rows[:3]],
            "header": ("#", "Player", "Points", "Wins", "Games"), "rows": rows,
            "highlights_title": "Highlights", "highlights": ["Biggest stack: x, 9 cards", "🐂 " * 80]}
    empty = {"title": "Recap", "subtitle": "0 rounds", "podium": [], "rows": [], "highlights": []}
    w, h = size(full)
    w0, h0 = size(empty)  # a night ended before any table finished still gets its picture
    assert w == w0 and h > h0 + 12 * 30


async def test_the_organiser_chooses_the_level_of_the_computers_that_fill_the_tables(store):
    """Filling computers play at the night's level, chosen by the organiser
    (or a moderator) and kept with the night; anyone else, or a level that does
    not exist, changes nothing."""
    from app.tables.computers import Computers

    tables = TableManager(store, GAMES, COMPUTERS, computer_delay=0.0, time_scale=0.0005, seed=5,
                          players=Computers(GAMES, worlds=4, fallback=COMPUTERS))
    host = NightHost(store, tables)
    night = await new_night(host, game="garbage", size=3, rounds=2, people=4)
    assert night.level == "normal"
    await host.toggle_fill(night, 1, False)
    with pytest.raises(NightError, match="not_organiser"):
        await host.set_level(night, 2, False, "hard")
    with pytest.raises(NightError, match="bad_level"):
        await host.set_level(night, 1, False, "godlike")
    assert host.shown(night).level == "normal"
    await host.set_level(night, 3, True, "easy")  # a moderator may
    await host.set_level(night, 1, False, "hard")
    row = await store.night_in_channel(10)
    assert Night.from_record(row["id"], row["guild_id"], row["channel_id"], row["game"], row["status"],
                             row["meta"]).level == "hard"  # saved: a restart keeps it
    made = await host.start_round(night, 1, False)
    computers = [s for t in made for s in t.seats if s.computer]
    assert len(computers) == 2 and {s.level for s in computers} == {"hard"}
    for table in made:
        await tables.cancel(table, table.host_id, can_manage=True)
    await tables.shutdown()
    await host.close()


async def test_rounds_that_start_by_themselves_after_a_break_also_across_a_restart(store, monkeypatch):
    """*Next round by itself*: the organiser (or a moderator) turns it on; the
    first round is still started by hand; when a round's last table finishes,
    the next round starts by itself after the break (its time saved with the
    night, so a restart meanwhile keeps the countdown); turned off, or a round
    started by hand first, no round starts by itself; the last round ends the night."""
    import app.nights.host as night_host

    monkeypatch.setattr(night_host, "BREAK_SECONDS", 1500.0)  # times the time scale 0.0005: a 0.75 s break
    tables, host = make(store)
    started = []

    def starter(h):
        async def started_by_itself(night):
            started.append((night.round, h.clock()))
            await launch(h, night)
        return started_by_itself

    host.round_started = starter(host)
    night = await new_night(host, people=4, size=2, rounds=4)
    with pytest.raises(NightError, match="not_organiser"):
        await host.toggle_auto(night, 2, False)
    assert await host.toggle_auto(night, 3, True) is True  # a moderator may
    assert night.auto and night.next_at is None  # the first round: by hand
    await host.start_round(night, 1, False)
    tables.start_timers()
    await launch(host, night)
    await until(lambda: night.status == "signup")
    assert night.round == 1 and night.next_at is not None and not started
    due = night.next_at
    assert 0.5 < due - host.clock() <= 0.75
    row = await store.night_in_channel(10)
    assert row["meta"]["next_at"] == due and row["meta"]["auto"] is True  # saved with the round's end

    # a restart before the break is over: the countdown goes on from its saved time
    await host.close()
    await tables.shutdown()
    tables, host = make(store)
    await host.restore()
    await tables.restore()
    host.round_started = starter(host)
    night = host.nights[night.id]
    assert night.auto and night.next_at == due
    tables.start_timers()
    host.start_timers()
    await until(lambda: len(started) == 1)  # (told once the round is saved)
    assert started[0][0] == 2 and started[0][1] >= due  # not before its time
    assert night.status == "playing" and night.next_at is None
    assert {nt.round for nt in night.tables} == {1, 2} and len(night.current_tables()) == 2
    await until(lambda: night.round == 2 and night.status == "signup")
    assert night.next_at is not None  # the countdown to round 3

    # turned off during the break: nothing starts by itself
    assert await host.toggle_auto(night, 1, False) is False
    assert night.next_at is None and host.shown(night).next_at is None
    await asyncio.sleep(1.0)
    assert night.round == 2 and night.status == "signup" and len(started) == 1
    # on again between rounds: the break starts now; a start by hand before it ends wins
    await host.toggle_auto(night, 1, False)
    assert night.next_at is not None
    await host.start_round(night, 1, False)
    await launch(host, night)
    assert night.round == 3 and night.next_at is None
    await asyncio.sleep(0.1)
    assert night.round == 3 and len(started) == 1  # the countdown did not start a round of its own
    # the last round: it ends the night instead of a countdown
    await until(lambda: night.round == 4 or night.status == "ended", timeout=30)
    await until(lambda: night.status == "ended", timeout=30)
    assert night.round == 4 and night.next_at is None and [r for r, _ in started] == [2, 4]
    await host.close()
    await tables.shutdown()


async def test_a_first_round_scheduled_ahead_starts_then_or_waits_for_the_organiser(store):
    """A night opened with ``starts_in``: the time is saved (a restart keeps it),
    the auto toggle leaves it alone, and at that time the round starts by
    itself; with too few signed up then, nothing starts and the organiser decides."""
    tables, host = make(store)  # time scale 0.0005: 1,000 s are 0.5 s
    started = []

    async def started_by_itself(night):
        started.append(night.round)

    host.round_started = started_by_itself
    lonely = await host.create(guild_id=1, channel_id=11, game="nimmt", organiser_id=1, organiser_name="p1",
                               table_size=4, rounds=1, turn_time=0, locale="en", starts_in=200)
    night = await host.create(guild_id=1, channel_id=10, game="nimmt", organiser_id=1, organiser_name="p1",
                              table_size=4, rounds=1, turn_time=0, locale="en", starts_in=1000)
    due = night.next_at
    assert due is not None and (await store.night_in_channel(10))["meta"]["next_at"] == due
    await host.toggle_auto(night, 1, False)
    assert night.auto and night.next_at == due  # the scheduled start stays
    await host.join(night, 2, "p2")
    await host.close()  # a restart before the time
    tables2, host2 = make(store)
    await host2.restore()
    await tables2.restore()
    host2.round_started = started_by_itself
    host2.start_timers()
    night, lonely = host2.nights[night.id], host2.nights[lonely.id]
    await until(lambda: lonely.next_at is None)  # alone at its time: not started, the organiser decides
    assert lonely.round == 0 and lonely.status == "signup" and started == []
    await until(lambda: started == [1])  # (told once the round is saved)
    assert host2.clock() >= due and night.round == 1 and night.status == "playing"
    assert sorted(s.user_id for s in tables2.get(night.tables[0].table_id).seats) == [1, 2]
    await host2.close()
    await tables2.shutdown()
    await tables.shutdown()


async def test_a_refused_save_changes_nothing_shown_and_the_same_click_works_after(tmp_path):
    """The store refuses (disk full): a sign-up, a leave, the fill and auto toggles,
    a round and the end are undone in memory too, so no message can show them; once the
    store takes writes again, the same clicks work.  (SQLite: the faults are
    injected at its commits.)"""
    from app.tables.manager import TableError
    from tests.faults import DISK_FULL, failing_commits

    store = await open_store(str(tmp_path / "refused.db"), checkpoint_interval=None)
    tables, host = make(store)
    night = await new_night(host, people=3, size=2, rounds=1)
    shown = (night.status, night.meta())
    fault = failing_commits(store)
    fault.error = DISK_FULL
    for change in (lambda: host.join(night, 9, "p9"), lambda: host.leave(night, 3),
                   lambda: host.toggle_fill(night, 1, False), lambda: host.set_level(night, 1, False, "hard"),
                   lambda: host.toggle_auto(night, 1, False), lambda: host.start_round(night, 1, False),
                   lambda: host.end(night, 1, False)):
        with pytest.raises(TableError, match="not_saved"):
            await change()
        assert (night.status, night.meta()) == shown
    assert [t for t in tables.tables.values() if t.night_id == night.id and t.status == "lobby"] == []
    fault.error = None
    await host.join(night, 9, "p9")
    await host.start_round(night, 1, False)
    await launch(host, night)
    tables.start_timers()
    # what the messages show (host.shown) comes only once the store has it
    await until(lambda: host.shown(night).status == "ended", timeout=30)
    assert {s.user_id for s in standings(host.shown(night))} == {1, 2, 3, 9}
    row = await store.night_in_channel(10)
    assert row["status"] == "ended" and row["meta"]["recap_due"]
    await tables.shutdown()
    await host.close()
    await store.close()


async def test_a_change_being_saved_is_not_shown_before_the_store_has_it(tmp_path):
    """The night changes in memory under its lock and then waits for the store;
    a message drawn in that moment (the presenter does not take the lock) draws
    :meth:`NightHost.shown`, which holds neither that change nor, once refused,
    ever shows it."""
    import sqlite3

    from app.tables.manager import TableError

    store = await open_store(str(tmp_path / "slow.db"), checkpoint_interval=None)
    tables, host = make(store)
    night = await new_night(host, people=3, size=2)
    saving, refuse = asyncio.Event(), asyncio.Event()
    save = store.save_night

    async def slow_refusal(*args):
        saving.set()
        await refuse.wait()
        raise sqlite3.OperationalError("database or disk is full")

    def signed_up(n):
        return {p.user_id for p in n.players if not p.left}

    store.save_night = slow_refusal
    joining = asyncio.create_task(host.join(night, 9, "p9"))
    await saving.wait()
    assert 9 in signed_up(night)  # the premise: in memory already, not saved yet
    assert signed_up(host.shown(night)) == {1, 2, 3}
    refuse.set()
    with pytest.raises(TableError, match="not_saved"):
        await joining
    assert signed_up(night) == signed_up(host.shown(night)) == {1, 2, 3}
    store.save_night = save
    await host.join(night, 9, "p9")
    assert signed_up(host.shown(night)) == {1, 2, 3, 9}
    await tables.shutdown()
    await host.close()
    await store.close()
