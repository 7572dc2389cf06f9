"""Hostile and careless input, end to end: forged components always get a
clear private answer and change nothing; per-server views answer only for
their server; profile cards have a per-user cooldown; ``/join``, ``/start``
and ``/leave`` work like the lobby's buttons."""
from __future__ import annotations

import re
import sys
import time
from typing import Any

import discord
import pytest

from app.i18n.catalogue import t
from tests.e2e import (LogWatch, button, open_hand, open_table, nimmt_turn, private_answer, running_bot, seat_players,
                       select, start_table, updated)
from tests.e2e.test_stats import Seeder, answer

pytestmark = pytest.mark.timeout(300)

HUGE = "9" * 20  # beyond SQLite's 64-bit integers


def refused(result: Any, key: str = "guard.bad_input", lang: str = "en") -> None:
    """The interaction got a private answer that says ``key``."""
    assert result.ack_type in (4, 5), result
    assert result.ephemeral, result
    message = result.followups[-1] if result.followups else result.message
    assert message.ephemeral_to == result.interaction.user.id
    assert message.text() == t(lang, key), message.text()


async def test_forged_clicks_at_a_table_are_answered_and_change_nothing(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    sofia = world.person("sofia", locale="es-ES")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        table = await open_table(fd, ana, world.channel, "nimmt new", seats=2, rounds=1, turn_time=0)
        await seat_players(table, ana, [ben])
        r = await table.click(ana, table.lobby, f"table.start:{table.table_id}")
        await updated(r)
        await table.wait_thread()
        message = await fd.wait_for(table.table_message, timeout=10)
        live = bot.tables.get(table.table_id)
        mover = [ana, ben][live.engine.to_move]
        panel = await open_hand(table, mover)
        stacks = select(panel, r"nimmt.stack:\d+:.*")
        assert stacks is not None
        tid, ver = table.table_id, live.version
        # (a stack with no Take button on the panel: when nothing fits, each stack has one)
        shown = {b["custom_id"].split(":")[3] for b in panel.buttons() if b["custom_id"].startswith("nimmt.take:")}
        absent = next(str(s) for s in range(100) if str(s) not in shown)
        before_log = list(live.engine.log)
        thread_before = [m.id for m in fd.messages(table.thread)]

        forged = [
            # select values that are not numbers, too big for the database, or missing
            dict(custom_id=stacks["custom_id"], component_type=3, values=["abc"]),
            dict(custom_id=stacks["custom_id"], component_type=3, values=[HUGE]),
            dict(custom_id=stacks["custom_id"], component_type=3, values=[]),
            dict(custom_id=f"nimmt.cards:{tid}:{ver}:0", component_type=3, values=["-5"]),
            dict(custom_id=f"nimmt.cards:{tid}:{ver}:0", component_type=3, values=["12", "x"]),
            dict(custom_id=f"nimmt.steal:{tid}:{ver}", component_type=3, values=["1", "2"]),
            dict(custom_id=stacks["custom_id"]),  # a select's id sent as a button: no values at all
            # ids in the custom_id itself
            dict(custom_id=f"nimmt.take:{tid}:{ver}:{HUGE}"),
            dict(custom_id=f"nimmt.page:{tid}:{ver}:{HUGE}"),
            dict(custom_id=f"take6.card:{tid}:1:1:0"),  # another game's button at this table
            dict(custom_id=f"table.join:{HUGE}"),
            dict(custom_id=f"table.again:{HUGE}"),
            # shapes the bot never makes, claimed on the message or not
            dict(custom_id="zz:not-ours"),
            dict(custom_id="zz:not-ours", claimed=False),
            dict(custom_id=f"nimmt.take:{tid}:{ver}:{absent}", claimed=False),  # not on this message
            # the same in the ids of the version before typed items (still routed)
            dict(custom_id=f"tsel:{tid}:ncards:{ver}:0", component_type=3, values=["-5"]),
            dict(custom_id=f"table:{tid}:ntake:{ver}:{HUGE}"),
            dict(custom_id=f"table:{tid}:npage:{ver}:p{HUGE}"),
            dict(custom_id=f"table:{tid}:nplay:{ver}:0.x"),
            dict(custom_id=f"table:{tid}:sixcard:0:d1t1i0"),
            dict(custom_id=f"table:{HUGE}:join"),
        ]
        for forge in forged:
            r = await fd.forge(mover, panel, **forge)
            refused(r)
        # the Spanish reader is told in Spanish
        r = await fd.forge(sofia, message, f"nimmt.hand:{HUGE}")
        refused(r, lang="es")
        r = await fd.forge(sofia, message, "zz:1", claimed=False)
        refused(r, lang="es")

        # nothing happened to the game, nothing was narrated ...
        assert live.engine.log == before_log and live.version == ver
        assert [m.id for m in fd.messages(table.thread)] == thread_before
        # ... and the real controls still work: the player to move plays the turn
        await nimmt_turn(table, mover)
        assert live.version > ver and len(live.engine.log) > len(before_log)



@pytest.mark.parametrize("game, command, options, clicks", [
    ("nimmt", "nimmt new", {"rounds": 1}, ["nimmt.refresh:{tid}", "nimmt.page:{tid}:{ver}:0", "rules:nimmt:en:1",
                                           "lb:nimmt:g:games:0", "table.away:{tid}:now"]),
    ("take6", "take6 new", {"deals": 1}, ["take6.refresh:{tid}"]),
])
async def test_a_forged_panel_click_on_the_public_table_message_answers_privately(world, tmp_path, game, command,
                                                                                 options, clicks):
    """A hand panel is only ever drawn onto its player's own private message: a forged
    *Refresh* (or any panel control) carrying the public table message leaves that
    message as it was and answers the clicker with a private panel of their own (so do
    the pagers of private answers: the rules, a leaderboard)."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        table = await start_table(fd, world.channel, ana, [ben], command, turn_time=0, **options)
        live = bot.tables.get(table.table_id)
        for template in clicks:
            public = table.table_message()
            shown, edits = public.text(), public.edit_count
            r = await fd.forge(ana, public, template.format(tid=table.table_id, ver=live.version))
            answer = await private_answer(r)
            assert answer.ephemeral_to == ana.id, template
            assert answer.id != public.id
            assert public.edit_count == edits and public.text() == shown, template
            assert not any(public.id == m.id for m in fd.ephemerals(ana))
            if template.startswith(game):  # a panel, which keeps working from where it is
                again = await table.click(ana, answer, f"{game}.refresh:{table.table_id}")
                assert again.ack_type in (6, 7) and again.message.id == answer.id



async def test_forged_numbers_and_options_beyond_what_the_bot_takes_are_bad_input(world, tmp_path):
    """Ids too big for the store in any component's custom_id, and slash command options
    outside what the command declares (range, choices, type, name, subcommand), get the
    private "bad input" line in the user's language; nothing runs, nothing is logged
    above INFO (no traceback)."""
    fd = world.fd
    ana, sofia = world.person("ana"), world.person("sofia", locale="es-ES")
    beyond = str(2**63)  # the first number a 64-bit signed integer cannot hold (19 digits)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        lobby = (await fd.slash(ana, world.channel, "rules")).message
        with LogWatch() as logs:
            for number in (beyond, HUGE):
                for custom_id, kind, values in (
                        (f"shuf:{number}", 2, None), (f"vrfy:{number}", 2, None), (f"rply:{number}:0:o", 2, None),
                        (f"lb:nimmt:{number}:games:0", 2, None), (f"lbme:nimmt:{number}:games", 2, None),
                        (f"hist:{number}", 3, ["1"]), (f"night:{number}:join", 2, None),
                        (f"night:{number}:level", 3, ["hard"])):
                    refused(await fd.forge(ana, lobby, custom_id, component_type=kind, values=values))
            for path, options in (
                    ("nimmt new", {"seats": 99}),  # outside its range
                    ("nimmt new", {"seats": "4"}),  # not a whole number
                    ("nimmt new", {"seats": 2**80}),  # more than Discord sends
                    ("nimmt new", {"turn_time": True}),
                    ("nimmt new", {"hearts": "many"}),  # no such option
                    ("verify", {"game": 2**60}),  # beyond Range[int, 1, 2**53]
                    ("verify", {"table": -1}),
                    ("rules", {"game": "chess"}),  # not one of the choices
                    ("versus", {"user": HUGE}),
                    ("versus", {"user": "abc"}),
                    ("nimmt bogus", {}),  # a subcommand the bot does not have
            ):
                refused(await fd.forge_slash(ana, world.channel, path, **options), "guard.bad_option")
            refused(await fd.forge_slash(sofia, world.channel, "rules", game="chess"), "guard.bad_option", lang="es")
            refused(await fd.forge_slash(ana, world.channel, "nimmt new", options=[{"name": "seats"}]),
                    "guard.bad_option")  # no value, no type
        assert [(r.name, r.getMessage()) for r in logs.records] == []
        assert not bot.tables.tables  # no table was opened
        # what Discord really sends still works
        r = await fd.slash(ana, world.channel, "nimmt new", seats=2)
        assert r.ack_type == 4 and not r.ephemeral


async def test_per_server_history_and_boards(world, tmp_path):
    fd = world.fd
    ana, ben, zed = world.person("ana"), world.person("ben"), world.person("zed")
    other = fd.add_guild("Other Night", locale="en-US")
    other_chan = fd.add_channel(other, "cards")
    fd.add_member(other, ana)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        seed = Seeder(bot.store)
        await seed.game(world.guild.id, world.channel.id, [(ana.id, "ana"), (ben.id, "ben")])
        for _ in range(2):
            await seed.game(other.id, other_chan.id, [(ben.id, "ben"), (ana.id, "ana")])
        await seed.game(other.id, other_chan.id, [(zed.id, "zed"), (ben.id, "ben")])
        here = (await bot.store.history(ana.id, guild_id=world.guild.id))[0]["game_id"]
        there = (await bot.store.history(ana.id, guild_id=other.id))[0]["game_id"]

        # /history here lists only this server's game, and says so
        r = await fd.slash(ben, world.channel, "history", user=ana)
        assert r.ephemeral and r.message.embeds[0]["title"] == t("en", "guard.history_title", name="ana")
        lines = r.message.embeds[0]["description"].splitlines()
        assert len(lines) == 1 and "place 1 of 2" in lines[0], lines
        pick = select(r.message, r"hist:\d+")
        assert [o["value"] for o in pick["options"]] == [str(here)]
        shown = await answer(await fd.select(ben, r.message, pick["custom_id"], [str(here)]))
        assert "1. ana — 0" in shown.text() and "2. ben — 2" in shown.text()

        # someone who only played elsewhere has no games here
        none = await fd.slash(ana, world.channel, "history", user=zed)
        assert none.ephemeral and none.message.text() == t("en", "guard.no_history", name="zed")

        # forged picks: another server's game, not a number, out of range
        refused(await fd.forge(ben, r.message, pick["custom_id"], component_type=3, values=[str(there)]),
                "guard.other_server")
        for bad in ("abc", HUGE, "-1"):
            refused(await fd.forge(ben, r.message, pick["custom_id"], component_type=3, values=[bad]))
        refused(await fd.forge(ben, r.message, pick["custom_id"]))  # as a button: no values

        # a forged leaderboard id naming another server's board is refused
        r = await fd.slash(ana, world.channel, "leaderboard", by="games")
        assert r.ephemeral and "this server" in r.message.embeds[0]["title"]
        assert "ana" in r.message.embeds[0]["description"]
        refused(await fd.forge(ana, r.message, f"lb:nimmt:{other.id}:games:0"), "guard.other_server")
        refused(await fd.forge(ana, r.message, f"lb:nimmt:{HUGE}:games:0"))  # no server's id: bad input
        # ... and a real board id on a select (no label) still answers with that board
        own = f"lb:nimmt:{world.guild.id}:games:0"
        page = await fd.forge(ana, r.message, own, component_type=3, values=["1"])
        assert page.ack_type == 7 and "ana" in page.message.embeds[0]["description"]
        glob = await fd.forge(ana, r.message, "lb:nimmt:g:games:0")
        assert glob.ack_type == 7 and "all servers" in glob.message.embeds[0]["title"]


async def test_profile_cards_have_a_per_user_cooldown(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    sofia = world.person("sofia", locale="es-ES")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        from cogs.stats import PROFILE_CARDS

        uses, per = PROFILE_CARDS
        seed = Seeder(bot.store)
        await seed.game(world.guild.id, world.channel.id, [(ana.id, "ana"), (ben.id, "ben")])

        def card(message: Any) -> bool:
            return any(a["filename"] == "profile.png" for a in message.attachments)

        for user, lang in ((ana, "en"), (sofia, "es")):
            for _ in range(uses):
                msg = await answer(await fd.slash(user, world.channel, "stats", user=ben))
                assert card(msg), msg.text()
            asked = time.time()
            r = await fd.slash(user, world.channel, "stats", user=ben)
            assert r.latency < 3
            msg = await answer(r)
            assert msg.ephemeral_to == user.id and not card(msg)
            head, tail = t(lang, "guard.cooldown", when="\0").split("\0")
            m = re.fullmatch(re.escape(head) + r"<t:(\d+):R>" + re.escape(tail), msg.text())
            assert m, msg.text()
            assert asked < int(m.group(1)) <= asked + per + 2
        # someone else still gets theirs
        msg = await answer(await fd.slash(ben, world.channel, "stats"))
        assert card(msg)


async def test_join_start_and_leave_as_slash_commands(world, tmp_path):
    fd = world.fd
    ana, ben, cara = world.person("ana"), world.person("ben"), world.person("cara")
    sofia = world.person("sofia", locale="es-ES")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        r = await fd.slash(ben, world.channel, "join")
        assert r.ephemeral and r.message.text() == t("en", "slash.no_table")
        table = await open_table(fd, ana, world.channel, "nimmt new", seats=4, rounds=1, turn_time=0)
        tid = table.table_id

        def players() -> str:
            return next(f["value"] for f in table.lobby.embeds[0]["fields"] if f["name"] == t("en", "table.players"))

        r = await fd.slash(ben, world.channel, "join")
        assert r.ephemeral and r.message.text() == t("en", "slash.joined", table=tid)
        await fd.wait_for(lambda: "ben" in players())
        r = await fd.slash(ben, world.channel, "join")
        assert r.ephemeral and r.message.text() == t("en", "errors.already_seated")
        r = await fd.slash(sofia, world.channel, "join")
        assert r.message.text() == t("es", "slash.joined", table=tid)
        r = await fd.slash(cara, world.channel, "join")
        await fd.wait_for(lambda: "cara" in players() and "sofia" in players())
        r = await fd.slash(cara, world.channel, "leave")
        assert r.ephemeral and r.message.text() == t("en", "slash.left", table=tid)
        await fd.wait_for(lambda: "cara" not in players())
        assert bot.tables.get(tid).seat_of(cara.id) is None
        # the lobby's buttons and the commands act on the same seats
        r = await table.click(cara, table.lobby, f"table.join:{tid}")
        await updated(r)
        assert "cara" in players()
        r = await fd.slash(cara, world.channel, "leave")
        await fd.wait_for(lambda: "cara" not in players())
        r = await fd.slash(ben, world.channel, "start")
        assert r.message.text() == t("en", "errors.host_only")
        r = await fd.slash(ana, world.channel, "start")
        assert r.ephemeral and r.message.text() == t("en", "slash.started", table=tid)
        thread = await table.wait_thread()
        await fd.wait_for(table.table_message, timeout=10)
        await fd.wait_for(lambda: not table.lobby.buttons())  # the lobby shows the running game
        assert bot.tables.get(tid).status == "playing" and len(bot.tables.get(tid).seats) == 3
        # in the game's thread the commands find the same table
        r = await fd.slash(cara, thread, "join")
        assert r.ephemeral and r.message.text() == t("en", "errors.not_in_lobby")
        r = await fd.slash(ana, thread, "start")
        assert r.message.text() == t("en", "errors.not_in_lobby")
        assert button(table.table_message(), rf"nimmt.hand:{tid}") is not None


async def test_forged_garbage_slot_is_answered(world, tmp_path):
    from tests.e2e.test_garbage import current_message, start_two

    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        table, live, people = await start_two(world, bot)
        message = await current_message(table, live)
        mover = people[live.engine.to_move]
        log, ver = list(live.log), live.version
        for arg in (HUGE, "x1", "-3"):
            refused(await fd.forge(mover, message, f"garbage.jack:{table.table_id}:{ver}:{arg}"))
        assert list(live.log) == log and live.version == ver
        # the real button still plays
        r = await table.click(mover, message, f"garbage.draw:{table.table_id}:{ver}")
        assert r.ack_type == 6 and live.version > ver


async def test_a_command_that_fails_unexpectedly_still_gets_a_private_answer(world, tmp_path, monkeypatch):
    """The last resort: a slash command whose own code fails (a bug) is answered
    privately, in the user's language, within Discord's 3 s, instead of
    Discord's "The application did not respond"; the next command works."""
    fd = world.fd
    ana, dieter = world.person("ana"), world.person("dieter", locale="de")

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        monkeypatch.setattr(sys.modules["cogs.help"], "command_lines", broken)  # the module the bot loaded
        for user, lang in ((ana, "en"), (dieter, "de")):
            r = await fd.slash(user, world.channel, "help")
            assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == user.id
            assert r.message.text() == t(lang, "errors.command_failed")
        monkeypatch.undo()
        r = await fd.slash(ana, world.channel, "help")
        assert r.message.text().startswith(t("en", "help.title"))


async def test_table_list_shows_where_to_join_and_where_the_games_are(world, tmp_path):
    """/table list answers privately with the server's lobbies (seats taken,
    a link to the lobby message) and games (their thread and players), names
    as text; a table in a channel the asker cannot see is not listed; a
    server without tables says how to open one, in the asker's words. Game
    nights are listed with their stage and a link to their sign-up."""
    fd = world.fd
    ana, ben, cara = world.person("ana"), world.person("ben"), world.person("c_a*ra")
    dora, sofia = world.person("dora"), world.person("sofia", locale="es-ES")
    games = fd.add_channel(world.guild, "games")
    secret = fd.add_channel(world.guild, "secret")
    fd.set_channel_overwrite(secret, None, deny=discord.Permissions(view_channel=True))
    for member in (dora, fd.bot_user):
        fd.set_channel_overwrite(secret, member, allow=discord.Permissions(view_channel=True))
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        r = await fd.slash(sofia, world.channel, "table list")
        assert r.ack_type == 4 and r.ephemeral
        assert r.message.embeds[0]["description"] == t("es", "table.list_none",
                                                       commands="`/nimmt nueva`, `/garbage nueva`, `/take6 nueva`")
        lobby = await open_table(fd, ana, world.channel, "nimmt new", seats=4)
        game = await open_table(fd, ben, games, "take6 new", seats=2, turn_time=0)
        await seat_players(game, ben, [cara])
        await updated(await game.click(ben, game.lobby, f"table.start:{game.table_id}"))
        thread = await game.wait_thread()
        await open_table(fd, dora, secret, "garbage new", seats=2)

        def fields(_user):
            embed = r.message.embeds[0]
            return {f["name"]: f["value"] for f in embed.get("fields", [])}

        r = await fd.slash(ana, world.channel, "table list")
        assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == ana.id
        shown = fields(ana)
        link = f"https://discord.com/channels/{world.guild.id}/{world.channel.id}/{lobby.lobby.id}"
        assert shown == {
            t("en", "table.list_lobbies"): t("en", "table.list_lobby", game="11 nimmt!", table=lobby.table_id,
                                             channel=f"<#{world.channel.id}>", taken=1, seats=4,
                                             host=f"<@{ana.id}>", link=link),
            t("en", "table.list_games"): t("en", "table.list_game", game="6 nimmt!", table=game.table_id,
                                           thread=f"<#{thread.id}>", players=r"ben, c\_a\*ra"),
        }
        assert not r.message.pinged
        r = await fd.slash(dora, thread, "table list")  # dora sees the secret channel's lobby too
        assert "Garbage" in fields(dora)[t("en", "table.list_lobbies")]
        assert fields(dora)[t("en", "table.list_lobbies")].count("\n") == 1
        # game nights: where to sign up and how far they are; a private channel's stays private
        evening, hidden = fd.add_channel(world.guild, "evening"), fd.add_channel(world.guild, "hidden")
        fd.set_channel_overwrite(hidden, None, deny=discord.Permissions(view_channel=True))
        for member in (dora, fd.bot_user):
            fd.set_channel_overwrite(hidden, member, allow=discord.Permissions(view_channel=True))
        signup = (await fd.slash(cara, evening, "night start", game="garbage", table_size=2)).message
        night_id = int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])
        await fd.click(dora, signup, f"night:{night_id}:join")
        await fd.slash(dora, hidden, "night start", game="nimmt")
        link = f"https://discord.com/channels/{world.guild.id}/{evening.id}/{signup.id}"

        def night_line(stage: str, count: int) -> str:
            return t("en", "nights.list_line", game="Garbage", channel=f"<#{evening.id}>", count=count,
                     stage=stage, link=link)

        r = await fd.slash(ana, world.channel, "table list")
        assert fields(ana)[t("en", "nights.list_title")] == night_line(t("en", "nights.list_signup"), 2)
        await fd.click(ana, signup, f"night:{night_id}:join")
        await updated(await fd.click(cara, signup, f"night:{night_id}:start"))
        r = await fd.slash(ana, world.channel, "table list")
        assert fields(ana)[t("en", "nights.list_title")] == night_line(t("en", "nights.list_playing", round=1), 3)
        r = await fd.slash(dora, world.channel, "table list")
        assert fields(dora)[t("en", "nights.list_title")].count("\n") == 1  # both nights


async def test_a_host_who_leaves_the_lobby_hands_it_to_the_next_person(world, tmp_path):
    """The host must go before the start: the next person seated hosts the
    table (the lobby says so, and only they may start it); computers never
    host, and a host alone with computers is told to cancel instead."""
    fd = world.fd
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        table = await open_table(fd, ana, world.channel, "nimmt new", seats=4, rounds=1, turn_time=0)
        tid = table.table_id
        await seat_players(table, ana, [], computers=1)
        r = await fd.slash(ana, world.channel, "leave")  # only a computer besides her
        assert r.ephemeral and r.message.text() == t("en", "errors.host_alone")
        await seat_players(table, ana, [ben, cleo])
        r = await table.click(ana, table.lobby, f"table.leave:{tid}")  # the lobby's button
        await updated(r)
        assert t("en", "table.lobby_host", host=f"<@{ben.id}>") in r.message.text() and "ana" not in r.message.text()
        assert bot.tables.get(tid).host_id == ben.id
        r = await fd.slash(ben, world.channel, "leave")  # the command, and the next one hosts
        assert r.ephemeral and r.message.text() == t("en", "slash.left_host", table=tid, host=f"<@{cleo.id}>")
        assert not r.message.pinged  # (named, not pinged)
        await fd.wait_for(lambda: t("en", "table.lobby_host", host=f"<@{cleo.id}>") in table.lobby.text())
        r = await fd.slash(ana, world.channel, "join")
        r = await fd.slash(ana, world.channel, "start")
        assert r.message.text() == t("en", "errors.host_only")  # no longer hers
        r = await fd.slash(cleo, world.channel, "start")
        assert r.message.text() == t("en", "slash.started", table=tid)
        assert [s.name for s in bot.tables.get(tid).seats] == ["CPU 1", "cleo", "ana"]
