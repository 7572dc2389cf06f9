"""A game night end to end: ``/night start``, sign-up by voice channel and by
Join, two rounds of three 11 nimmt! tables each (4, 4, 3), the standings
message after every table, a restart of the bot in the middle of round 2,
the recap, and ``/stats`` showing the night.  Players only type slash
commands and click; the games are played out by the turn timer (people who
do not move get a computer), so the night runs in seconds.  A last test
SIGKILLs the bot (in a subprocess) in the middle of a round."""
from __future__ import annotations

import re
import sqlite3
from typing import Any

import discord
import pytest

from app.i18n.catalogue import t
from app.nights.night import place_points
from core.protocol import to_act
from tests.e2e import HeldClock, Table as Seen, button, running_bot, updated
from tests.e2e.processes import BotProcess, table_row

pytestmark = pytest.mark.timeout(240)

NAMES = ["ana", "ben", "cleo", "dan", "eve", "finn", "gus", "hana", "ivo", "jo", "kim"]
GAME = "11 nimmt!"
FAST = dict(computer_delay=0.01, time_scale=0.02, table_seed=7)


def text_of(result: Any) -> str:
    message = result.message if result.ack_type == 4 else (result.followups[-1] if result.followups else result.message)
    assert message.ephemeral, message
    return message.text()


def standings_message(fd: Any, channel: Any, game: str = GAME) -> Any | None:
    title = t("en", "nights.standings_title", game=game)
    for message in fd.messages(channel):
        if any(e.get("title") == title for e in message.embeds):
            return message
    return None


def standings_rows(message: Any) -> list[tuple[int, str, str, int, int]]:
    """(rank, name, points, wins, games) as the message shows them."""
    rows = []
    for line in message.embeds[0]["description"].splitlines():
        m = re.fullmatch(r"\*\*(\d+)\.\*\* (\S+) — ([\d.]+) points? · wins: (\d+) · games: (\d+)(?: \(left\))?", line)
        if m:
            rows.append((int(m[1]), m[2], m[3], int(m[4]), int(m[5])))
    return rows


def round_tables(fd: Any, channel: Any, round_no: int) -> dict[int, tuple[Any, list[int]]]:
    """Table number -> (its message in the channel, the people pinged there)."""
    out = {}
    for message in fd.messages(channel):
        m = re.match(rf"Game night, round {round_no}, table (\d+): ", message.content or "")
        if m:
            out[int(m[1])] = (message, message.mentions)
    return out


def table_id_of(message: Any) -> int:
    number = re.search(r"table #(\d+)", message.text())
    assert number, message.text()
    return int(number[1])


async def signed_up_night(fd: Any, world: Any, organiser: Any, people: list[Any], **options: Any) -> tuple[Any, int]:
    """``/night start`` by ``organiser`` in the world's channel, everyone in
    ``people`` joins: the sign-up message and the night's id."""
    signup = (await fd.slash(organiser, world.channel, "night start", **options)).message
    join = re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])
    assert join, signup.buttons()
    night_id = int(join[1])
    for user in people:
        await updated(await fd.click(user, signup, f"night:{night_id}:join"))
    return signup, night_id


async def play_round(fd: Any, world: Any, round_no: int, users: dict[int, Any]) -> None:
    """Wait for the round's three tables to end; after each one, the
    standings message counts that table's game for each of its players."""
    channel = world.channel
    tables = await fd.wait_for(lambda: (lambda r: r if len(r) == 3 else None)(round_tables(fd, channel, round_no)),
                               timeout=20)
    finished = t("en", "table.finished")
    done: set[int] = set()
    while len(done) < 3:
        await fd.wait_for(lambda: any(finished in m.text() and n not in done for n, (m, _) in tables.items()),
                          timeout=60)
        for number, (message, people) in tables.items():
            if number in done or finished not in message.text():
                continue
            done.add(number)

            def counted() -> bool:
                msg = standings_message(fd, channel)
                rows = {row[1]: row for row in standings_rows(msg)} if msg is not None else {}
                return all(rows.get(users[u].name, (0, "", "", 0, 0))[4] == round_no for u in people)

            await fd.wait_for(counted, timeout=20)


async def test_a_game_night_of_eleven(world, tmp_path):
    fd = world.fd
    people = [world.person(name) for name in NAMES]
    ana = people[0]
    users = {u.id: u for u in people}
    voice = fd.add_channel(world.guild, "Lounge", type=2)
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild, **FAST) as bot:
        for person in people[:6]:  # the organiser and five friends are in voice
            fd.join_voice(person, voice)
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=4, rounds=2, turn_time=60)
        assert r.ack_type == 4 and not r.ephemeral
        signup = r.message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        assert t("en", "nights.title", game=GAME) in signup.text()

        # refusals are private and clear
        again = await fd.slash(people[1], world.channel, "night start", game="nimmt")
        assert again.ephemeral and t("en", "nights.error_channel_busy") in again.message.text()
        r = await fd.click(ana, signup, f"night:{night_id}:join")
        assert t("en", "nights.error_already_joined") in text_of(r)
        r = await fd.click(people[1], signup, f"night:{night_id}:start")
        assert t("en", "nights.error_not_organiser") in text_of(r)
        r = await fd.click(people[1], signup, f"night:{night_id}:voice")
        assert t("en", "nights.error_not_organiser") in text_of(r)
        r = await fd.click(ana, signup, f"night:{night_id}:start")  # only the organiser is signed up
        assert t("en", "nights.error_too_few", min=2) in text_of(r)

        r = await fd.click(ana, signup, f"night:{night_id}:voice")
        await updated(r)
        assert t("en", "nights.signed_up", count=6) in r.message.text()
        for person in people[6:]:
            r = await fd.click(person, signup, f"night:{night_id}:join")
            await updated(r)
        assert t("en", "nights.signed_up", count=11) in signup.text()
        for person in people:
            assert person.name in signup.text()

        r = await fd.click(ana, signup, f"night:{night_id}:start")
        await updated(r)
        assert t("en", "nights.status_playing", round=1) in signup.text()
        r = await fd.click(ana, signup, f"night:{night_id}:start")
        assert t("en", "nights.error_round_running") in text_of(r)

        tables1 = await fd.wait_for(lambda: (lambda x: x if len(x) == 3 else None)(
            round_tables(fd, world.channel, 1)), timeout=20)
        sizes = sorted(len(p) for _, p in tables1.values())
        assert sizes == [3, 4, 4]
        seated = [u for _, p in tables1.values() for u in p]
        assert sorted(seated) == sorted(users)  # everyone once, nobody twice
        await fd.wait_for(lambda: len(fd.threads(world.channel)) >= 3, timeout=20)  # every table in its thread
        await play_round(fd, world, 1, users)
        after1 = standings_rows(await fd.wait_for(lambda: standings_message(fd, world.channel), timeout=10))
        assert len(after1) == 11 and all(row[4] == 1 for row in after1)
        assert t("en", "nights.points_rule") in standings_message(fd, world.channel).text()
        # points per place: the winners of a table of 4 got 4 (or a shared share of the places)
        ids = {u.name: u.id for u in people}
        for number, (message, pinged) in tables1.items():
            record = await bot.store.table_result(table_id_of(message))
            points = place_points([row["place"] for row in record])
            shown = {row[1]: float(row[2]) for row in after1}
            for row, pts in zip(record, points):
                assert shown[users[row["user_id"]].name] == pts
        await fd.wait_for(lambda: t("en", "nights.status_between", round=1) in signup.text(), timeout=10)

        # round 2 seats by the night standings: the leaders meet the leaders
        r = await fd.click(ana, signup, f"night:{night_id}:start")
        await updated(r)
        tables2 = await fd.wait_for(lambda: (lambda x: x if len(x) == 3 else None)(
            round_tables(fd, world.channel, 2)), timeout=20)
        order = [ids[row[1]] for row in after1]
        by_number = [sorted(tables2[n][1]) for n in sorted(tables2)]
        assert by_number == [sorted(order[:4]), sorted(order[4:8]), sorted(order[8:])]
        # let the round get going, then stop the bot in the middle of it
        await fd.wait_for(lambda: sum(1 for th in fd.threads(world.channel)) >= 6, timeout=20)
        await fd.wait_for(lambda: any(bot.tables.get(table_id_of(m)) is not None
                                      and bot.tables.get(table_id_of(m)).version > 5 for m, _ in tables2.values()),
                          timeout=20)
        ended_before = [n for n, (m, _) in tables2.items() if t("en", "table.finished") in m.text()]
    assert len(ended_before) < 3

    async with running_bot(fd, db, world.guild, **FAST) as bot:
        await play_round(fd, world, 2, users)
        recap = await fd.wait_for(lambda: next((m for m in fd.messages(world.channel)
                                                if any(a.get("filename") == "night.png" for a in m.attachments)),
                                               None), timeout=30)
        assert t("en", "nights.recap_title", game=GAME) in recap.text()
        assert recap.attachments[0]["data"][:8] == b"\x89PNG\r\n\x1a\n"
        final = standings_rows(standings_message(fd, world.channel))
        assert len(final) == 11 and all(row[4] == 2 for row in final)
        assert t("en", "nights.status_ended") in standings_message(fd, world.channel).text()
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text(), timeout=10)
        assert not signup.buttons()  # the night is over: no more buttons
        assert t("en", "nights.recap_winner", name=final[0][1], count=1) in recap.text()
        # over and its recap out, the night is let go of in memory; a client that still
        # shows the old sign-up buttons is told it is over, and nothing changes
        await fd.wait_for(lambda: night_id not in bot.nights.nights and night_id not in bot.parts.night.presenters,
                          timeout=10)
        r = await fd.forge(people[5], signup, f"night:{night_id}:join")
        assert r.ephemeral and t("en", "nights.error_ended") in r.message.text()
        assert night_row(db, night_id)[0] == "ended"

        # /night standings and /stats show the night
        r = await fd.slash(people[5], world.channel, "night standings")
        assert r.ephemeral and final[0][1] in r.message.text()
        winner = users[ids[final[0][1]]]
        r = await fd.slash(winner, world.channel, "stats")
        await r.settled(timeout=10)
        shown = (r.followups[0] if r.followups else r.message).text()
        assert t("en", "nights.stats_line", played=1, won=1) in shown
        last = users[ids[final[-1][1]]]
        if final[-1][0] != 1:
            r = await fd.slash(last, world.channel, "stats")
            await r.settled(timeout=10)
            assert t("en", "nights.stats_line", played=1, won=0) in (r.followups[0] if r.followups else r.message).text()
        # the night's games count as ordinary games
        history = await bot.store.history(winner.id)
        assert len(history) == 2


async def test_a_shared_first_place_names_every_winner_of_the_night(world, tmp_path):
    """Four people, two tables of two, one round: the two table winners end
    equal (2 points, 1 win, 1 game) and share the first place, the two others
    the third; the recap names both winners, and one point is "1 point"."""
    fd = world.fd
    people = [world.person(name) for name in NAMES[:4]]
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup, night_id = await signed_up_night(fd, world, people[0], people[1:], game="nimmt", table_size=2,
                                                 rounds=1, turn_time=1)
        await updated(await fd.click(people[0], signup, f"night:{night_id}:start"))
        recap = await fd.wait_for(lambda: (recaps(fd, world.channel) or [None])[0], timeout=60)
        final = standings_rows(standings_message(fd, world.channel))
        assert sorted((rank, points) for rank, _, points, _, _ in final) == [(1, "2"), (1, "2"), (3, "1"), (3, "1")]
        lines = recap.embeds[0]["description"].splitlines()
        winners = [name for rank, name, *_ in final if rank == 1]
        assert lines[0] == t("en", "nights.recap_winner", name=", ".join(winners), count=2)
        assert lines[0].startswith("🏆 Winners of the night: ")
        losers = [name for rank, name, *_ in final if rank == 3]
        for name in losers:
            assert f"**3.** {name} — 1 point · wins: 0 · games: 1" in lines


async def test_a_garbage_night_late_arrivals_leaving_languages_and_a_moderator_ending_it(world, tmp_path):
    fd = world.fd
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo")
    sol = world.person("sol", locale="es-ES")
    mia = world.person("mia", permissions=discord.Permissions(manage_events=True))
    dora = world.person("@everyone *dora*")  # a name is text: never a ping, never formatting
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        # the games on offer are the bot's own
        night_cmd = next(c for c in fd.commands(world.guild) if c["name"] == "night")
        start_opts = next(o for o in night_cmd["options"] if o["name"] == "start")["options"]
        offered = {c["value"] for c in next(o for o in start_opts if o["name"] == "game")["choices"]}
        assert offered == set(bot.tables.games)

        r = await fd.slash(sol, world.channel, "night standings")
        assert r.ephemeral and t("es", "nights.error_no_night") in r.message.text()
        r = await fd.slash(ana, world.channel, "night start", game="garbage", table_size=7)
        assert r.ephemeral and t("en", "nights.error_bad_size", min=2, max=6) in r.message.text()
        r = await fd.slash(ana, world.channel, "night start", game="garbage", table_size=3, turn_time=1)
        signup = r.message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        assert t("en", "nights.title", game="Garbage") in signup.text()
        r = await fd.click(ana, signup, f"night:{night_id}:voice")  # not in a voice channel
        assert t("en", "nights.error_no_voice") in text_of(r)
        for person in (ben, cleo, sol):
            await updated(await fd.click(person, signup, f"night:{night_id}:join"))
        r = await fd.click(sol, signup, f"night:{night_id}:join")
        assert t("es", "nights.error_already_joined") in text_of(r)  # each in their own language
        r = await fd.click(sol, signup, f"night:{night_id}:fill")
        assert t("es", "nights.error_not_organiser") in text_of(r)
        r = await fd.click(dora, signup, f"night:{night_id}:leave")
        assert t("en", "nights.error_not_joined") in text_of(r)
        def level_menus():  # (the sign-up's other menu takes people off the night)
            return [m for m in signup.selects() if m["custom_id"].endswith(":level")]

        assert not level_menus()  # no level to choose while no computers fill
        r = await fd.click(ana, signup, f"night:{night_id}:fill")
        def level_line(level):
            return t("en", "nights.fill_on_level", size=3, level=t("en", f"ai.level_{level}"))

        assert level_line("normal") in signup.text()
        (menu,) = level_menus()
        assert menu["custom_id"] == f"night:{night_id}:level" and menu["values"] == ["easy", "normal", "hard"]
        assert [o["value"] for o in menu["options"] if o.get("default")] == ["normal"]
        r = await fd.select(sol, signup, f"night:{night_id}:level", ["easy"])
        assert r.ephemeral and t("es", "nights.error_not_organiser") in text_of(r)
        r = await fd.select(ana, signup, f"night:{night_id}:level", ["hard"])
        await updated(r)
        assert level_line("hard") in signup.text()
        assert [o["value"] for o in level_menus()[0]["options"] if o.get("default")] == ["hard"]

        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        tables1 = await fd.wait_for(lambda: (lambda x: x if len(x) == 2 else None)(
            round_tables(fd, world.channel, 1)), timeout=20)
        for message, pinged in tables1.values():  # 2 people and a computer at each table
            assert len(pinged) == 2 and message.text().count(t("en", "table.computer_name", name="CPU 1")) == 1
        night_tables = [t_ for t_ in bot.tables.tables.values() if t_.night_id == night_id]
        assert [s.level for t_ in night_tables for s in t_.seats if s.computer] == ["hard", "hard"]
        # between the rounds: ben leaves, dora arrives late
        await updated(await fd.click(ben, signup, f"night:{night_id}:leave"))
        await updated(await fd.click(dora, signup, f"night:{night_id}:join"))
        field = signup.embeds[0]["fields"][0]["value"]
        assert "ben" not in field and "@\u200beveryone \\*dora\\*" in field
        await fd.wait_for(lambda: t("en", "nights.status_between", round=1) in signup.text(), timeout=60)
        rows = await fd.wait_for(lambda: (lambda r: r if len(r) == 4 else None)(
            standings_rows(standings_message(fd, world.channel, "Garbage"))), timeout=10)
        assert sorted(row[1] for row in rows) == ["ana", "ben", "cleo", "sol"]  # ben's game counts
        assert t("en", "nights.left_mark") in next(line for line in standings_message(
            fd, world.channel, "Garbage").embeds[0]["description"].splitlines() if "ben" in line)

        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        tables2 = await fd.wait_for(lambda: (lambda x: x if len(x) == 2 else None)(
            round_tables(fd, world.channel, 2)), timeout=20)
        seated = sorted(u for _, p in tables2.values() for u in p)
        assert seated == sorted([ana.id, cleo.id, sol.id, dora.id])  # ben is not seated again

        r = await fd.click(mia, signup, f"night:{night_id}:end")  # Manage Events may end it
        await updated(r)
        assert not signup.buttons()
        recap = await fd.wait_for(lambda: next((m for m in fd.messages(world.channel)
                                                if any(a.get("filename") == "night.png" for a in m.attachments)),
                                               None), timeout=30)
        assert t("en", "nights.recap_title", game="Garbage") in recap.text()
        assert t("en", "nights.highlights") in recap.text()

        r = await fd.slash(sol, world.channel, "night standings")
        assert r.ephemeral and t("es", "nights.standings_title", game=t("es", "garbage.title")) in r.message.text()
        assert t("es", "nights.status_ended") in r.message.text()
        again = await fd.slash(sol, world.channel, "night start", game="nimmt")  # the channel is free again
        assert again.ack_type == 4 and not again.ephemeral


class FastBotProcess(BotProcess):
    """The bot in a subprocess (so it can be SIGKILLed), with quick timers."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "COMPUTER_DELAY": "0.01", "TIME_SCALE": "0.02"}


async def test_a_night_survives_a_kill_mid_round(world, tmp_path):
    fd = world.fd
    people = [world.person(name) for name in NAMES[:5]]
    bot = FastBotProcess(fd, world.guild, tmp_path / "kill.db", tmp_path / "kill.log")
    try:
        await bot.start()
        r = await fd.slash(people[0], world.channel, "night start", game="nimmt", table_size=2, rounds=1,
                           turn_time=1)
        signup = r.message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        for person in people[1:]:
            await updated(await fd.click(person, signup, f"night:{night_id}:join"))
        await updated(await fd.click(people[0], signup, f"night:{night_id}:start"))
        tables = await fd.wait_for(lambda: (lambda x: x if len(x) == 2 else None)(
            round_tables(fd, world.channel, 1)), timeout=20)
        assert sorted(len(p) for _, p in tables.values()) == [2, 3]
        ids = [table_id_of(m) for m, _ in tables.values()]
        # SIGKILL once both games are under way and neither is over
        await fd.wait_for(lambda: all(table_row(bot.database, i)[2] >= 3 for i in ids), timeout=20)
        assert all(table_row(bot.database, i)[0] == "playing" for i in ids)
        await bot.kill()
        await bot.start()
        recap = await fd.wait_for(lambda: next((m for m in fd.messages(world.channel)
                                                if any(a.get("filename") == "night.png" for a in m.attachments)),
                                               None), timeout=60)
        assert t("en", "nights.recap_title", game=GAME) in recap.text()
        boards = [m for m in fd.messages(world.channel)
                  if any(e.get("title") == t("en", "nights.standings_title", game=GAME) for e in m.embeds)]
        assert len(boards) == 1  # the same standings message, kept up to date across the kill
        rows = standings_rows(boards[0])
        assert sorted(row[1] for row in rows) == sorted(p.name for p in people)
        assert all(row[4] == 1 for row in rows)
        con = sqlite3.connect(f"file:{bot.database}?mode=ro", uri=True)
        try:
            games = con.execute(f"SELECT table_id, count(*) FROM games WHERE table_id IN ({ids[0]}, {ids[1]}) "
                                "GROUP BY table_id").fetchall()
            recorded = con.execute("SELECT user_id, place FROM night_players WHERE night_id = ?",
                                   (night_id,)).fetchall()
        finally:
            con.close()
        assert sorted(n for _, n in games) == [1, 1]  # each game recorded once
        assert sorted(u for u, _ in recorded) == sorted(p.id for p in people)
        await bot.stop()
    finally:
        bot.finalize()


def recaps(fd: Any, channel: Any) -> list[Any]:
    return [m for m in fd.messages(channel) if any(a.get("filename") == "night.png" for a in m.attachments)]


def night_row(database: Any, night_id: int) -> tuple[str, dict[str, Any]]:
    import json

    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)
    try:
        status, meta = con.execute("SELECT status, meta FROM nights WHERE id = ?", (night_id,)).fetchone()
        return status, json.loads(meta)
    finally:
        con.close()


async def test_a_kill_after_the_night_ended_before_its_recap_still_posts_it_once(world, tmp_path):
    """The night's end is saved, the bot dies before the recap is posted (Discord
    failed its first tries, discord.py waits to retry): after the restart the
    recap is posted, once, and another restart does not post it again."""
    fd = world.fd
    people = [world.person(name) for name in NAMES[:2]]
    bot = FastBotProcess(fd, world.guild, tmp_path / "recap.db", tmp_path / "recap.log")
    try:
        await bot.start()
        r = await fd.slash(people[0], world.channel, "night start", game="nimmt", table_size=2, rounds=1,
                           turn_time=1)
        signup = r.message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        await updated(await fd.click(people[1], signup, f"night:{night_id}:join"))
        await updated(await fd.click(people[0], signup, f"night:{night_id}:start"))
        await fd.wait_for(lambda: round_tables(fd, world.channel, 1), timeout=20)
        await fd.wait_for(lambda: standings_message(fd, world.channel), timeout=20)
        # From now on the next message the bot posts in the channel is the recap:
        # Discord fails it twice (discord.py retries after 1 s, then 3 s).
        fd.fail_next("POST", rf"/channels/{world.channel.id}/messages$", status=500, times=2)
        await fd.wait_for(lambda: night_row(bot.database, night_id)[0] == "ended", timeout=60, interval=0.01)
        assert not recaps(fd, world.channel)
        await bot.kill()
        assert not recaps(fd, world.channel), "posted before the kill: the test missed its moment"
        await bot.start()
        recap = await fd.wait_for(lambda: (recaps(fd, world.channel) or [None])[0], timeout=30)
        assert t("en", "nights.recap_title", game=GAME) in recap.text()
        await fd.wait_for(lambda: night_row(bot.database, night_id)[1]["messages"].get("recap") == recap.id,
                          timeout=10)
        await bot.restart()
        again = await fd.slash(people[1], world.channel, "night start", game="nimmt")  # the channel is free
        assert again.ack_type == 4 and not again.ephemeral
        assert len(recaps(fd, world.channel)) == 1
        await bot.stop()
    finally:
        bot.finalize()


async def test_the_next_round_starts_by_itself_after_the_break(world, tmp_path):
    """The organiser turns on *Next round by itself* (nobody else may); once
    the first round's table finishes, the sign-up and the standings say when
    the next round starts, and it starts with nobody clicking: its table is
    announced, plays, and the last round ends the night."""
    fd = world.fd
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo", locale="de")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:  # the break: 60 s x 0.02
        # The night's clock stands still until the test has seen the countdown (a break of
        # 1.2 s is over before a busy machine has shown it).
        clock = HeldClock()
        bot.nights.clock = clock
        clock.hold()
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=2, rounds=2, turn_time=1)
        signup = r.message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        await fd.click(ben, signup, f"night:{night_id}:join")
        auto = f"night:{night_id}:auto"
        r = await fd.click(cleo, signup, auto)
        assert t("de", "nights.error_not_organiser") in text_of(r)
        assert t("en", "nights.auto_off") in signup.text()
        r = await fd.click(ana, signup, auto)
        assert t("en", "nights.auto_on", seconds=60) in (await updated(r)).text()
        assert next(b for b in signup.buttons() if b["custom_id"] == auto)["style"] == discord.ButtonStyle.success.value
        r = await fd.click(ana, signup, f"night:{night_id}:start")
        await updated(r)  # the last click of this test: from here on the night runs itself
        # round 1 ends: the countdown shows on the sign-up and in the standings
        next_line = re.escape(t("en", "nights.status_next", round=1, next=2, when="WHEN")).replace("WHEN", r"<t:\d+:R>")
        await fd.wait_for(lambda: re.search(next_line, signup.text()), timeout=60)
        await fd.wait_for(lambda: (m := standings_message(fd, world.channel)) and re.search(next_line, m.text()),
                          timeout=20)
        assert not round_tables(fd, world.channel, 2)
        clock.let_go()
        # round 2 starts by itself: its table is announced with its players pinged
        tables = await fd.wait_for(lambda: round_tables(fd, world.channel, 2), timeout=30)
        assert sorted(tables[1][1]) == sorted([ana.id, ben.id])
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text(), timeout=60)
        rows = standings_rows(standings_message(fd, world.channel))
        assert sorted(row[4] for row in rows) == [2, 2]  # both played both rounds


async def test_a_deleted_sign_up_message_comes_back(world, tmp_path):
    """Someone deletes the night's sign-up message (its buttons are the only
    way to control the night): /night start in the channel posts it again,
    for the same night, and so does the night's next change (a round ending)."""
    fd = world.fd
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=2, rounds=2, turn_time=1)
        first = r.message
        night_id = int(re.match(r"night:(\d+):join", first.buttons()[0]["custom_id"])[1])
        await fd.click(ben, first, f"night:{night_id}:join")
        fd.delete_message(first)
        # /night start again: the same night's sign-up, posted again (no second night)
        r = await fd.slash(cleo, world.channel, "night start", game="garbage")
        again = r.message
        assert not r.ephemeral and again is not first
        assert again.buttons()[0]["custom_id"] == f"night:{night_id}:join" and "ben" in again.text()
        assert len(bot.nights.nights) == 1
        r = await fd.click(ana, again, f"night:{night_id}:start")
        await updated(r)
        assert t("en", "nights.status_playing", round=1) in again.text()
        # deleted again while round 1 starts: the night's next change posts it again by itself
        fd.delete_message(again)

        def reposted():
            return next((m for m in fd.messages(world.channel) if m not in (first, again) and any(
                b["custom_id"] == f"night:{night_id}:end" for b in m.buttons())), None)

        third = await fd.wait_for(reposted, timeout=60)
        # ... and keeps it up to date: the end of round 1 shows there
        await fd.wait_for(lambda: t("en", "nights.status_between", round=1) in third.text(), timeout=60)
        assert reposted() is third  # posted once
        row = await bot.store.night_in_channel(world.channel.id)
        assert row["meta"]["messages"]["signup"] == third.id  # saved: a restart edits this one
        r = await fd.click(ana, third, f"night:{night_id}:end")  # and the night is under control again
        await updated(r)
        assert t("en", "nights.status_ended") in third.text()


async def test_a_night_scheduled_ahead_starts_its_first_round_by_itself(world, tmp_path):
    """`/night start starts_in:<minutes>`: the sign-up says when the first
    round starts (as a time every client shows in its own zone); people sign
    up meanwhile; at that time the round starts with nobody clicking."""
    fd = world.fd
    ana, ben, dieter = world.person("ana"), world.person("ben"), world.person("dieter")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):  # a minute: 1.2 s here
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=3, rounds=1, turn_time=1,
                           starts_in=1)
        signup = r.message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        first = re.escape(t("en", "nights.status_first", when="WHEN", relative="REL")).replace(
            "WHEN", r"<t:\d+:F>").replace("REL", r"<t:\d+:R>")
        assert re.search(first, signup.text())
        for person in (ben, dieter):
            await fd.click(person, signup, f"night:{night_id}:join")
        tables = await fd.wait_for(lambda: round_tables(fd, world.channel, 1), timeout=30)
        assert sorted(tables[1][1]) == sorted([ana.id, ben.id, dieter.id])
        # the sign-up follows (it is redrawn a moment after the tables are announced)
        await fd.wait_for(lambda: t("en", "nights.status_playing", round=1) in signup.text() or t(
            "en", "nights.status_ended") in signup.text(), timeout=10)
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text(), timeout=60)


async def test_the_organiser_takes_someone_who_is_not_there_off_the_night(world, tmp_path):
    """Someone signed up and went home without *Leave*: the organiser (or a
    moderator) picks them in the sign-up's menu; they are not seated in the
    next round, the sign-up no longer lists them, and they may join again.
    Nobody else may; the organiser is not in the menu."""
    fd = world.fd
    ana, ben, cleo, dan = (world.person(name) for name in ("ana", "ben", "cleo", "dan"))
    mod = world.person("mod", manage_messages=True)
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup, night_id = await signed_up_night(fd, world, ana, [ben, cleo, dan], game="nimmt", table_size=4,
                                                 rounds=1, turn_time=1)
        menu = next(c for c in signup.all_components() if c.get("custom_id") == f"night:{night_id}:remove")
        assert [o["label"] for o in menu["options"]] == ["ben", "cleo", "dan"]
        value = {o["label"]: o["value"] for o in menu["options"]}
        r = await fd.select(ben, signup, menu["custom_id"], [value["dan"]])
        assert text_of(r) == t("en", "nights.error_not_organiser")
        r = await fd.select(ana, signup, menu["custom_id"], [value["dan"]])
        await updated(r)
        assert "dan" not in signup.embeds[0]["fields"][0]["value"]
        r = await fd.forge(mod, signup, menu["custom_id"], component_type=3, values=[value["dan"]])
        assert text_of(r) == t("en", "nights.error_gone")  # (an older menu: dan is off already)
        r = await fd.select(mod, signup, menu["custom_id"], [value["cleo"]])  # a moderator may too
        await updated(r)
        r = await fd.click(cleo, signup, f"night:{night_id}:join")  # taken off is not banned
        await updated(r)
        assert "cleo" in signup.embeds[0]["fields"][0]["value"]
        r = await fd.click(ana, signup, f"night:{night_id}:start")
        tables = await fd.wait_for(lambda: round_tables(fd, world.channel, 1), timeout=20)
        assert sorted(tables[1][1]) == sorted([ana.id, ben.id, cleo.id])  # dan is not seated
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text(), timeout=60)  # (the one round)
        assert [row[1] for row in standings_rows(standings_message(fd, world.channel))
                if row[1] == "dan"] == []  # dan played no game of the night


async def test_a_night_of_more_sign_ups_than_a_menu_holds_offers_discords_member_picker(world, tmp_path):
    """26 signed up besides the organiser: past a menu's 25 options the sign-up
    offers Discord's member picker instead, so the earliest sign-ups can be
    taken off too; someone picked who is not signed up is told so; once 25
    are left the menu names them all again."""
    fd = world.fd
    ana = world.person("ana")
    people = [world.person(f"p{n:02d}") for n in range(26)]
    outsider = world.person("zed")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup, night_id = await signed_up_night(fd, world, ana, people, game="nimmt", rounds=1)
        picker = next(c for c in signup.all_components() if c.get("custom_id") == f"night:{night_id}:remove_user")
        assert picker["type"] == 5 and f"night:{night_id}:remove" not in [c.get("custom_id")
                                                                         for c in signup.all_components()]
        r = await fd.select(people[3], signup, picker["custom_id"], [people[0]])
        assert text_of(r) == t("en", "nights.error_not_organiser")
        r = await fd.select(ana, signup, picker["custom_id"], [outsider])
        assert text_of(r) == t("en", "nights.error_gone")
        r = await fd.select(ana, signup, picker["custom_id"], [people[0]])  # the earliest sign-up
        await updated(r)
        assert "p00" not in signed_up(signup) and "p25" in signed_up(signup)
        menu = next(c for c in signup.all_components() if c.get("custom_id") == f"night:{night_id}:remove")
        assert [o["label"] for o in menu["options"]] == [p.name for p in people[1:]]


def signed_up(signup: Any) -> str:
    return signup.embeds[0]["fields"][0]["value"]


async def night_table(fd: Any, world: Any, round_no: int) -> Seen:
    """The one table of the round, once its game is shown in its thread (the newest)."""
    tables = await fd.wait_for(lambda: round_tables(fd, world.channel, round_no), timeout=20)
    assert len(tables) == 1
    threads = await fd.wait_for(lambda: (lambda th: th if len(th) >= round_no else None)(fd.threads(world.channel)),
                                timeout=20)  # (one thread a round)
    seen = Seen(fd, world.channel, None, table_id_of(next(iter(tables.values()))[0]), threads[-1])
    await fd.wait_for(seen.table_message, timeout=20)
    return seen


async def test_leave_in_a_night_game_takes_you_off_the_night_and_im_back_signs_you_up_again(world, tmp_path):
    """ben must go: /leave in his table's thread hands his seat to a computer
    and takes him off the night (he is told so, the sign-up no longer lists
    him, the next round does not seat him, and the game he left still counts
    for him). He then presses *Leave* on the sign-up as well: *I'm back*
    gives him his seat for the rest of the game but no more of the night.
    cleo steps away too and clicks *I'm back*: she is told she is signed up
    again and is seated next round. Three missed turns (dan, who
    never moves) hand a seat to the computer but keep its owner on the night."""
    fd = world.fd
    ana, ben, cleo, dan = (world.person(name) for name in ("ana", "ben", "cleo", "dan"))
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup, night_id = await signed_up_night(fd, world, ana, [ben, cleo, dan], game="nimmt", table_size=4,
                                                 rounds=2, turn_time=60)
        await fd.click(ana, signup, f"night:{night_id}:start")
        seen = await night_table(fd, world, 1)
        table_id, thread = seen.table_id, seen.thread
        r = await fd.slash(ben, thread, "leave")
        assert r.ephemeral and r.message.text() == "\n".join([
            t("en", "slash.stepped_away", table=table_id, back=t("en", "table.im_back")),
            t("en", "nights.away_off", back=t("en", "table.im_back"), join=t("en", "nights.join"))])
        await fd.wait_for(lambda: "ben" not in signed_up(signup), timeout=10)
        r = await fd.click(ben, signup, f"night:{night_id}:leave")  # he means it: off for good
        await updated(r)
        assert "ben" not in signed_up(signup)
        r = await fd.click(ben, signup, f"night:{night_id}:leave")
        assert text_of(r) == t("en", "nights.error_not_joined")
        r = await fd.slash(cleo, thread, "leave")
        assert t("en", "nights.away_off", back=t("en", "table.im_back"), join=t("en", "nights.join")) \
            in r.message.text()
        await fd.wait_for(lambda: "cleo" not in signed_up(signup), timeout=10)
        message = await fd.wait_for(lambda: (lambda m: m if m is not None and button(
            m, rf"table.back:{table_id}") else None)(seen.table_message()), timeout=10)
        r = await fd.click(cleo, message, f"table.back:{table_id}")
        answer = (r.followups[-1] if r.followups else r.message).text()
        assert answer == "\n".join([t("en", "table.welcome_back"), t("en", "nights.back_on")])
        await fd.wait_for(lambda: "cleo" in signed_up(signup), timeout=10)
        # (cleo's turn taken back may have posted a new table message at the bottom: the current one)
        message = await fd.wait_for(lambda: (lambda m: m if m is not None and button(
            m, rf"table.back:{table_id}") else None)(seen.table_message()), timeout=10)
        r = await fd.click(ben, message, f"table.back:{table_id}")  # back for this game only
        assert (r.followups[-1] if r.followups else r.message).text() == t("en", "table.welcome_back")
        assert "ben" not in signed_up(signup)
        # the game plays out by the turn timer: dan (and ana, cleo) miss their turns
        await fd.wait_for(lambda: t("en", "nights.status_between", round=1) in signup.text(), timeout=90)
        assert "Time ran out for dan" in seen.log_text()
        rows = {row[1]: row for row in standings_rows(standings_message(fd, world.channel))}
        assert sorted(rows) == ["ana", "ben", "cleo", "dan"] and rows["ben"][4] == 1  # ben's game counts
        await fd.click(ana, signup, f"night:{night_id}:start")
        tables = await fd.wait_for(lambda: round_tables(fd, world.channel, 2), timeout=20)
        assert [sorted(people) for _, people in tables.values()] == [sorted([ana.id, cleo.id, dan.id])]
        await fd.click(ana, signup, f"night:{night_id}:end")
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text(), timeout=30)


async def test_a_step_away_the_night_could_not_save_says_so_and_a_restart_follows_it(world, tmp_path):
    """The seat went to the computer (saved), but the database refused the
    night's change: the answer says the night may still seat them, and the
    night, in memory and saved, still has them. That is what a kill between
    the two saves leaves too: after a restart the night follows the seat and
    takes them off. The same for *I'm back* the night could not save: after a
    restart they are signed up again."""
    from tests.faults import DISK_FULL, failing_commits

    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    database = tmp_path / "bot.db"
    async with running_bot(fd, database, world.guild, **FAST) as bot:
        signup, night_id = await signed_up_night(fd, world, ana, [ben], game="nimmt", table_size=4, rounds=1,
                                                 turn_time=0)
        await fd.click(ana, signup, f"night:{night_id}:start")
        seen = await night_table(fd, world, 1)
        table_id, thread = seen.table_id, seen.thread
        table = await fd.wait_for(lambda: (lambda tb: tb if tb is not None and tb.engine is not None else None)(
            bot.tables.get(table_id)), timeout=10)
        # whoever is not to move steps away: no computer move saves anything meanwhile
        who = next(u for u in (ana, ben) if table.seat_of(u.id) not in to_act(table.engine))
        disk = failing_commits(bot.store)
        disk.only, disk.error = r"UPDATE nights\b", DISK_FULL  # the seat's change is saved, the night's is refused
        r = await fd.slash(who, thread, "leave")
        disk.error = None
        assert disk.refused >= 1  # the night's
        assert r.ephemeral and r.message.text() == "\n".join([
            t("en", "slash.stepped_away", table=table_id, back=t("en", "table.im_back")),
            t("en", "nights.away_not_saved", leave=t("en", "nights.leave"))])
        assert table.seats[table.seat_of(who.id)].away
        assert who.name in signed_up(signup)
        night = bot.nights.nights[night_id]
        assert not night.player(who.id).left
        assert not saved_player(database, night_id, who.id)["left"]
    async with running_bot(fd, database, world.guild, **FAST) as bot:  # the state a kill between the saves leaves
        await fd.wait_for(lambda: who.name not in signed_up(signup), timeout=10)
        assert saved_player(database, night_id, who.id)["left"]
        message = await fd.wait_for(lambda: (lambda m: m if m is not None and button(
            m, rf"table.back:{table_id}") else None)(seen.table_message()), timeout=10)
        disk = failing_commits(bot.store)
        disk.only, disk.error = r"UPDATE nights\b", DISK_FULL  # the seat comes back, the night's change is refused
        r = await fd.click(who, message, f"table.back:{table_id}")
        disk.error = None
        assert (r.followups[-1] if r.followups else r.message).text() == "\n".join([
            t("en", "table.welcome_back"), t("en", "nights.back_not_saved", join=t("en", "nights.join"))])
        assert who.name not in signed_up(signup) and saved_player(database, night_id, who.id)["left"]
    async with running_bot(fd, database, world.guild, **FAST) as bot:
        await fd.wait_for(lambda: who.name in signed_up(signup), timeout=10)
        assert not saved_player(database, night_id, who.id)["left"]
        assert not bot.tables.get(table_id).seats[table.seat_of(who.id)].away


def saved_player(database: Any, night_id: int, user_id: int) -> dict[str, Any]:
    """A player of the night as the database holds them."""
    return next(p for p in night_row(database, night_id)[1]["players"] if p["user_id"] == user_id)
