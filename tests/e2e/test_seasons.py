"""Seasons end to end: an admin chooses how seasons go and where their final
standings are posted, starts and ends one by hand, names a champion role;
players browse a season's board next to the all-time one, and after its end
still (``/leaderboard season:``); what the bot cannot do with a role it says
instead of failing.  Games are written to the store as they end (the
recording path is the store's, tested on both backends in tests/unit)."""
from __future__ import annotations

import re
import time
from typing import Any

import discord
import pytest

from app.i18n.catalogue import t
from app.seasons import period
from app.store import GameRecord, PlayerResult
from app.text import plain
from tests.e2e import description, footer, running_bot
from tests.e2e.test_stats import answer, board_rows

SYNTH = 910_000_000_000_000_000  # synthetic user ids, far from the stand-in's


class Games:
    """Finished games written as they end now (in finishing order, first wins)."""

    def __init__(self, store: Any, guild_id: int, channel_id: int) -> None:
        self.store, self.guild_id, self.channel_id = store, guild_id, channel_id
        self.table_id = 20_000_000

    async def play(self, *players: tuple[int, str]) -> None:
        self.table_id += 1
        now = time.time()
        results = [PlayerResult(user_id=uid, name=name, seat=i, score=2 * i, place=i + 1,
                                stats={"penalty_rounds": 1, "rounds_won": int(i == 0), "bulls_earned": 1})
                   for i, (uid, name) in enumerate(players)]
        assert await self.store.record_game(GameRecord(
            table_id=self.table_id, guild_id=self.guild_id, channel_id=self.channel_id, game="nimmt",
            started_at=now - 30, ended_at=now, seed=1, rounds=1, has_bots=False, rated=True,
            players=results)) is not None


def _season(name: str | None) -> dict[str, str]:
    """The season option of /leaderboard, when one is named."""
    return {} if name is None else {"season": name}


def text_of(result: Any) -> str:
    return (result.followups[-1] if result.followups else result.message).text()


async def test_a_season_by_hand_from_start_to_champion(world, tmp_path):
    fd = world.fd
    guild = world.guild
    admin = world.person("ada", manage_guild=True)
    ben, cleo = world.person("ben"), world.person("cleo")
    results = fd.add_channel(guild, "results")
    champion = fd.add_role(guild, "Champion")  # above the bot's own role, as a new role is
    async with running_bot(fd, tmp_path / "bot.db", guild) as bot:
        games = Games(bot.store, guild.id, world.channel.id)
        await games.play((ben.id, "ben"), (cleo.id, "cleo"))  # before any season: all-time only

        # -- only a manager sets seasons up; every refusal is private
        r = await fd.slash(ben, world.channel, "season mode", mode="manual")
        assert r.ephemeral and r.message.text() == t("en", "errors.manage_guild_only")
        r = await fd.slash(admin, world.channel, "season start", name="Spring cup")
        await r.settled(timeout=10)
        assert r.ephemeral and t("en", "seasons.not_manual", mode="off", command="/season mode") in text_of(r)
        r = await fd.slash(admin, world.channel, "season end")
        await r.settled(timeout=10)
        assert text_of(r) == t("en", "seasons.none_running")

        r = await fd.slash(admin, world.channel, "season mode", mode="manual", channel=results)
        await r.settled(timeout=10)
        assert r.ephemeral
        assert t("en", "seasons.mode_manual", start="/season start", end="/season end") in text_of(r)
        assert t("en", "seasons.channel_is", channel=f"<#{results.id}>") in text_of(r)

        # -- the champion role: saved, and what the bot lacks is said now
        r = await fd.slash(admin, world.channel, "season role", game="nimmt", role=champion)
        assert r.ephemeral
        said = text_of(r)
        assert t("en", "seasons.role_set", game="11 nimmt!", role=f"<@&{champion.id}>") in said
        assert t("en", "seasons.why_manage_roles") in said

        r = await fd.slash(admin, world.channel, "season start", name="   ")
        assert r.ephemeral and text_of(r) == t("en", "seasons.name_empty")
        r = await fd.slash(admin, world.channel, "season start", name="Spring cup")
        await r.settled(timeout=10)
        assert r.ephemeral and text_of(r) == t("en", "seasons.started", name="Spring cup")
        r = await fd.slash(admin, world.channel, "season start", name="Another")
        await r.settled(timeout=10)
        assert t("en", "seasons.already_running", name="Spring cup", command="/season end") in text_of(r)

        for _ in range(2):
            await games.play((cleo.id, "cleo"), (ben.id, "ben"))
        await games.play((ben.id, "ben"), (cleo.id, "cleo"), (SYNTH, "zed"))

        # -- the season's board beside the all-time one
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins", season="Spring cup")
        assert r.ephemeral
        title = r.message.embeds[0]["title"]
        assert title == t("en", "stats.board_title", game="11 nimmt!", scope="season Spring cup", by="wins")
        assert [row[:4] for row in board_rows(r.message)] == [(1, "cleo", "2", 3), (2, "ben", "1", 3),
                                                              (3, "zed", "0", 1)]
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert [row[:4] for row in board_rows(r.message)] == [(1, "ben", "2", 4), (1, "cleo", "2", 4),
                                                              (3, "zed", "0", 1)]  # all-time: a shared first
        r = await fd.slash(ben, world.channel, "leaderboard", by="games", season="spring CUP")  # any case
        assert [row[:2] for row in board_rows(r.message)] == [(1, "ben"), (1, "cleo"), (3, "zed")]
        # the season's pages keep their season (the buttons name it)
        assert all(re.fullmatch(r"lb:nimmt:s\d+:games:\d+", b["custom_id"]) for b in r.message.buttons())
        r = await fd.slash(ben, world.channel, "leaderboard", season="Summer")
        assert r.ephemeral and r.message.text() == t("en", "seasons.no_such_season", name="Summer")
        choices = await fd.autocomplete(ben, world.channel, "leaderboard", "season", season="spr")
        assert [c["name"] for c in choices] == ["Spring cup"]

        # -- the end: final standings in the channel, and the role's problem said there
        r = await fd.slash(admin, world.channel, "season end")
        await r.settled(timeout=10)
        assert text_of(r) == t("en", "seasons.ended", name="Spring cup")
        final = await fd.wait_for(lambda: next((m for m in fd.messages(results) if m.embeds), None), timeout=10)
        embed = final.embeds[0]
        assert embed["title"] == t("en", "seasons.final_title", name="Spring cup")
        nimmt = next(f for f in embed["fields"] if f["name"] == "11 nimmt!")
        assert nimmt["value"].splitlines()[0] == t("en", "seasons.final_line", rank=1, name="cleo", value="2",
                                                   by="wins")
        roles = next(f for f in embed["fields"] if f["name"] == t("en", "seasons.roles_title"))
        assert roles["value"] == t("en", "seasons.role_not_given", game="11 nimmt!",
                                   why=t("en", "seasons.why_manage_roles"))
        assert fd.role_changes == []

        # a game after the end is not the season's; its board stays browsable
        await games.play((ben.id, "ben"), (cleo.id, "cleo"))
        r = await fd.slash(cleo, world.channel, "leaderboard", by="wins", season="Spring cup")
        assert [row[:4] for row in board_rows(r.message)][0] == (1, "cleo", "2", 3)
        assert t("en", "stats.your_rank", rank=1) in footer(r.message)

        # -- the next season, with Manage Roles but the role above the bot's
        fd.set_role_permissions(guild.bot_role, guild.bot_role.permissions | 1 << 28)  # Manage Roles
        r = await fd.slash(admin, world.channel, "season role", game="nimmt", role=champion)
        why = t("en", "seasons.why_role_above", role=f"<@&{champion.id}>", top=f"<@&{guild.bot_role.id}>")
        assert why in text_of(r)
        r = await fd.slash(admin, world.channel, "season start", name="Summer cup")
        await r.settled(timeout=10)
        await games.play((ben.id, "ben"), (cleo.id, "cleo"))
        guild.bot_role.position, champion.position = champion.position + 1, 1  # the admin drags the bot's role up
        fd.set_role_permissions(guild.bot_role, guild.bot_role.permissions)
        fd.set_role_permissions(champion, champion.permissions)
        r = await fd.slash(admin, world.channel, "season role", game="nimmt", role=champion)
        assert t("en", "seasons.role_set", game="11 nimmt!", role=f"<@&{champion.id}>") == text_of(r)
        r = await fd.slash(admin, world.channel, "season end")
        await r.settled(timeout=10)
        await fd.wait_for(lambda: ("PUT", guild.id, ben.id, champion.id) in fd.role_changes, timeout=10)
        assert champion.id in guild.members[ben.id].roles and champion.id not in guild.members[cleo.id].roles
        final = await fd.wait_for(lambda: (lambda posted: posted[1] if len(posted) == 2 else None)(
            [m for m in fd.messages(results) if m.embeds]), timeout=10)
        roles = next(f for f in final.embeds[0]["fields"] if f["name"] == t("en", "seasons.roles_title"))
        assert roles["value"] == t("en", "seasons.role_given", game="11 nimmt!", role=f"<@&{champion.id}>",
                                   names=f"<@{ben.id}>")
        assert not final.mentions  # named, never pinged


async def test_calendar_seasons_and_the_global_one(world, tmp_path):
    """Monthly seasons are there as soon as the mode is chosen, named after
    the month (UTC); the global calendar's season is on the boards of all
    servers; a season of this server is not another server's."""
    fd = world.fd
    admin = world.person("ada", manage_guild=True)
    ben = world.person("ben", locale="de")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        r = await fd.slash(admin, world.channel, "season mode", mode="monthly")
        await r.settled(timeout=10)
        assert t("en", "seasons.mode_monthly") in text_of(r)
        assert t("en", "seasons.no_channel", command="/season mode") in text_of(r)
        month, _, _ = period("monthly", time.time())
        quarter, _, _ = period("quarterly", time.time())
        games = Games(bot.store, world.guild.id, world.channel.id)
        await games.play((ben.id, "ben"), (admin.id, "ada"))
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins", season=month)
        assert r.message.embeds[0]["title"] == t("de", "stats.board_title", game="11 nimmt!",
                                                 scope=t("de", "seasons.board_scope", name=plain(month)),
                                                 by=t("de", "stats.by_wins"))
        assert [row[1] for row in re.findall(r"(\d+)\. (\w+)", description(r.message))] == ["ben", "ada"]
        choices = await fd.autocomplete(ben, world.channel, "leaderboard", "season", season="")
        names = [c["name"] for c in choices]
        assert month in names and t("de", "seasons.global_season", name=quarter) in names
        r = await fd.slash(ben, world.channel, "leaderboard", by="games", scope="global", season=quarter)
        assert "ben" in description(r.message)
        r = await fd.slash(ben, world.channel, "leaderboard", scope="global", season=month)  # not a global one
        assert r.message.text() == t("de", "seasons.no_such_season", name=plain(month))
        # a forged button of another server's season
        other = await bot.store.create_season(world.guild.id + 1, "theirs", 0.0)
        board = r.message
        forged = await fd.forge(ben, board, f"lb:nimmt:s{other}:wins:0")
        assert forged.ephemeral and forged.message.text() == t("de", "guard.other_server")


async def test_an_admin_switches_the_boards_and_posts_one_every_week(world, tmp_path):
    """Manage Server turns this server's boards off (the boards of all servers
    stay), to its seasons only, back on; and has a board posted in a channel
    now and every week.  Players are told privately why a board is not there."""
    fd = world.fd
    admin = world.person("ada", manage_guild=True)
    ben, cleo = world.person("ben"), world.person("cleo")
    posts = fd.add_channel(world.guild, "boards")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        games = Games(bot.store, world.guild.id, world.channel.id)
        await games.play((ben.id, "ben"), (cleo.id, "cleo"))
        r = await fd.slash(ben, world.channel, "boards visibility", shown="off")
        assert r.ephemeral and r.message.text() == t("en", "errors.manage_guild_only")

        r = await fd.slash(admin, world.channel, "boards visibility", shown="off")
        assert r.ephemeral and r.message.text() == t("en", "seasons.boards_off")
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert r.ephemeral and r.message.text() == t("en", "seasons.boards_are_off")
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins", scope="global")
        assert [row[1] for row in board_rows(r.message)] == ["ben", "cleo"]  # all servers: still there
        r = await fd.slash(ben, world.channel, "stats", game="nimmt")  # the profile says why no board here
        here = (await answer(r)).text().split(t("en", "stats.this_server"))[1]
        assert t("en", "seasons.boards_are_off") in here
        r = await fd.slash(admin, world.channel, "boards schedule", every="weekly", channel=posts, by="wins")
        said = (await answer(r)).text().splitlines()
        assert said[-1] == t("en", "seasons.schedule_boards_off", command="/boards visibility")

        r = await fd.slash(admin, world.channel, "boards visibility", shown="season")
        assert r.message.text() == t("en", "seasons.boards_season")
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert r.message.text() == t("en", "seasons.boards_are_season_only", option="season")
        r = await fd.slash(cleo, world.channel, "stats", game="nimmt")
        here = (await answer(r)).text().split(t("en", "stats.this_server"))[1]
        assert t("en", "seasons.boards_are_season_only", option="season") in here
        r = await fd.slash(admin, world.channel, "boards schedule", every="weekly", channel=posts, by="wins")
        said = (await answer(r)).text().splitlines()
        assert said[-1] == t("en", "seasons.schedule_no_season", command="/season mode")
        r = await fd.slash(admin, world.channel, "boards schedule", every="off")  # (nothing was posted)
        assert (await answer(r)).text() == t("en", "seasons.schedule_off")
        r = await fd.slash(admin, world.channel, "season mode", mode="manual")
        await r.settled(timeout=10)
        r = await fd.slash(admin, world.channel, "season start", name="Cup")
        await r.settled(timeout=10)
        await games.play((cleo.id, "cleo"), (ben.id, "ben"))
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins", season="Cup")
        assert [row[:3] for row in board_rows(r.message)] == [(1, "cleo", "1"), (2, "ben", "0")]

        r = await fd.slash(admin, world.channel, "boards visibility", shown="all")
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert [row[:3] for row in board_rows(r.message)] == [(1, "ben", "1"), (1, "cleo", "1")]

        r = await fd.slash(admin, world.channel, "boards schedule", every="weekly")
        assert r.ephemeral and r.message.text() == t("en", "seasons.schedule_needs_channel")
        # a channel the bot cannot post in: saved, and what it lacks there said at once
        locked = fd.add_channel(world.guild, "locked")
        fd.set_channel_overwrite(locked, world.guild.bot_role,
                                 deny=discord.Permissions(send_messages=True, embed_links=True))
        why = t("en", "seasons.why_channel", channel=f"<#{locked.id}>", permissions="Send Messages, Embed Links")
        r = await fd.slash(admin, world.channel, "boards schedule", every="weekly", channel=locked, by="wins")
        assert r.ephemeral and (await answer(r)).text().splitlines()[-1] == why
        r = await fd.slash(admin, world.channel, "season mode", mode="manual", channel=locked)
        await r.settled(timeout=10)
        assert text_of(r).splitlines()[-1] == why
        assert not fd.messages(locked)
        r = await fd.slash(admin, world.channel, "boards schedule", every="weekly", channel=posts, by="wins")
        assert r.ephemeral
        assert (await answer(r)).text() == t("en", "seasons.schedule_weekly", game="11 nimmt!", by="wins",
                                             channel=f"<#{posts.id}>")
        posted = await fd.wait_for(lambda: next((m for m in fd.messages(posts) if m.embeds), None), timeout=10)
        assert posted.embeds[0]["title"] == t("en", "stats.board_title", game="11 nimmt!", scope="this server",
                                              by="wins")
        assert posted.embeds[0]["description"].splitlines() == [
            t("en", "seasons.final_line", rank=1, name="ben", value="1", by="wins"),
            t("en", "seasons.final_line", rank=1, name="cleo", value="1", by="wins")]
        plan = (await bot.store.guild_settings(world.guild.id))["board_post"]
        assert plan["every"] == "weekly" and plan["last"] is not None  # the next one in a week
        r = await fd.slash(admin, world.channel, "boards schedule", every="off")
        assert (await answer(r)).text() == t("en", "seasons.schedule_off")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_monthly_quarterly_and_back_within_a_month_keeps_a_season_running(world, tmp_path, request, backend):
    """An admin tries quarterly seasons and goes back to monthly within one
    month: each change ends the running season (its final standings posted)
    and starts one of the new cadence at once, named in the answer; back on
    monthly, the month's first season has ended, so the running one is a new
    season under a new name, and a game finished right after each change
    counts on the running season's board, on no other."""
    fd = world.fd
    admin = world.person("ada", manage_guild=True)
    ben, cleo = world.person("ben"), world.person("cleo")
    results = fd.add_channel(world.guild, "results")
    on = {"database_url": request.getfixturevalue("pg_dsn")} if backend == "postgresql" else {}
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **on) as bot:
        assert bot.store.backend == backend
        games = Games(bot.store, world.guild.id, world.channel.id)
        month, _, _ = period("monthly", time.time())
        quarter, _, _ = period("quarterly", time.time())
        again = f"{month} (2)"
        played = (((ben.id, "ben"), (cleo.id, "cleo")), ((cleo.id, "cleo"), (ben.id, "ben")),
                  ((cleo.id, "cleo"), (ben.id, "ben")))
        for (mode, name), players in zip((("monthly", month), ("quarterly", quarter), ("monthly", again)), played):
            r = await fd.slash(admin, world.channel, "season mode", mode=mode, channel=results)
            await r.settled(timeout=10)
            assert t("en", "seasons.started", name=plain(name)) in text_of(r), text_of(r)
            await games.play(*players)
        assert t("en", "seasons.ended_now", name=plain(quarter)) in text_of(r)
        for name, winner in ((month, "ben"), (quarter, "cleo"), (again, "cleo")):
            r = await fd.slash(ben, world.channel, "leaderboard", by="wins", season=name)
            loser = "cleo" if winner == "ben" else "ben"
            assert [row[:4] for row in board_rows(r.message)] == [(1, winner, "1", 1), (2, loser, "0", 1)], name
        choices = await fd.autocomplete(ben, world.channel, "leaderboard", "season", season=month)
        assert sorted(c["name"] for c in choices) == [month, again]
        final = await fd.wait_for(lambda: (lambda posted: posted if len(posted) == 2 else None)(
            [m for m in fd.messages(results) if m.embeds]), timeout=10)
        assert [m.embeds[0]["title"] for m in final] == [t("en", "seasons.final_title", name=plain(name))
                                                          for name in (month, quarter)]


async def test_a_calendar_season_rolls_over_at_midnight_with_every_game_once(world, tmp_path):
    """Monthly seasons: a game that ends the last instant of a month counts in
    that month, one that ends at midnight in the next (made ahead, so it is
    there before the bot looks); at its look after midnight the bot closes the
    month (its final standings posted) and the next month runs on; a restart
    between changes nothing."""
    fd = world.fd
    admin = world.person("ada", manage_guild=True)
    ben, cleo = world.person("ben"), world.person("cleo")
    results = fd.add_channel(world.guild, "results")
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild) as bot:
        r = await fd.slash(admin, world.channel, "season mode", mode="monthly", channel=results)
        await r.settled(timeout=10)
        month, _, midnight = period("monthly", time.time())
        following, _, _ = period("monthly", midnight)
        games = Games(bot.store, world.guild.id, world.channel.id)
        for ended, players in ((midnight - 0.001, ((ben.id, "ben"), (cleo.id, "cleo"))),
                               (midnight, ((cleo.id, "cleo"), (ben.id, "ben")))):
            games.table_id += 1
            assert await bot.store.record_game(GameRecord(
                table_id=games.table_id, guild_id=world.guild.id, channel_id=world.channel.id, game="nimmt",
                started_at=ended - 600, ended_at=ended, seed=1, rounds=1, has_bots=False, rated=True,
                players=[PlayerResult(u, n, i, i, i + 1) for i, (u, n) in enumerate(players)])) is not None
    async with running_bot(fd, db, world.guild) as bot:  # a restart at the boundary
        bot.get_cog("Seasons").clock = lambda: midnight + 1.0  # past midnight
        r = await fd.slash(admin, world.channel, "season mode", mode="monthly")  # (the same: a look now)
        await r.settled(timeout=10)
        final = await fd.wait_for(lambda: next((m for m in fd.messages(results) if m.embeds), None), timeout=10)
        assert final.embeds[0]["title"] == t("en", "seasons.final_title", name=plain(month))
        nimmt = next(f for f in final.embeds[0]["fields"] if f["name"] == "11 nimmt!")
        assert nimmt["value"].splitlines() == [
            t("en", "seasons.final_line", rank=1, name="ben", value="1", by="wins"),
            t("en", "seasons.final_line", rank=2, name="cleo", value="0", by="wins")]
        for name, winner in ((month, "ben"), (following, "cleo")):
            r = await fd.slash(ben, world.channel, "leaderboard", by="wins", season=name)
            assert [row[:4] for row in board_rows(r.message)][0] == (1, winner, "1", 1), name
        r = await fd.slash(admin, world.channel, "season mode", mode="monthly")  # a second look: posted once
        await r.settled(timeout=10)
        assert len([m for m in fd.messages(results) if m.embeds]) == 1


async def test_a_rating_leaves_the_servers_board_after_its_window_and_the_profile_says_so(world, tmp_path):
    """A rating stays on the board while its owner plays rated games; a
    server's admin sets its window (/boards activity); past it the rating
    leaves this server's rating boards, its season's too (the boards of all
    servers, their season too, keep their own 30 days) and /stats says since
    when and why, and that the rating is kept."""
    fd = world.fd
    admin = world.person("ada", manage_guild=True)
    ben, cleo = world.person("ben"), world.person("cleo")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        r = await fd.slash(admin, world.channel, "season mode", mode="manual")
        await r.settled(timeout=10)
        r = await fd.slash(admin, world.channel, "season start", name="Cup")
        await r.settled(timeout=10)
        assert text_of(r) == t("en", "seasons.started", name="Cup")
        quarter, _, _ = period("quarterly", time.time())
        games = Games(bot.store, world.guild.id, world.channel.id)
        for _ in range(5):
            await games.play((ben.id, "ben"), (cleo.id, "cleo"))
        r = await fd.slash(ben, world.channel, "stats", game="nimmt")
        text = (await answer(r)).text()
        assert "On the rating board until <t:" in text and "a rating stays 30 days after its last rated game" in text
        r = await fd.slash(ben, world.channel, "boards activity", days=1)
        assert r.ephemeral and r.message.text() == t("en", "errors.manage_guild_only")
        bot.get_cog("Seasons").clock = lambda: time.time() + 2 * 86400  # two days on
        r = await fd.slash(admin, world.channel, "boards activity", days=1)
        assert (await answer(r)).text() == t("en", "seasons.activity_set", count=1)
        for season in (None, "Cup"):  # this server's boards: the all-time one and its season's
            r = await fd.slash(ben, world.channel, "leaderboard", by="rating", **_season(season))
            assert r.message.embeds[0]["description"] == t("en", "stats.board_empty"), season
        for season in (None, quarter):  # the boards of all servers keep them
            r = await fd.slash(ben, world.channel, "leaderboard", by="rating", scope="global",
                                **_season(season))
            assert [row[1] for row in board_rows(r.message)] == ["ben", "cleo"], season
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins", season="Cup")  # (the rating boards only)
        assert [row[1] for row in board_rows(r.message)] == ["ben", "cleo"]
        r = await fd.slash(ben, world.channel, "stats", game="nimmt")
        text = (await answer(r)).text()
        everywhere, here = text.split(t("en", "stats.this_server"))
        assert "On the rating board until" in everywhere
        assert "Off the rating board since <t:" in here and "no rated game for 1 day." in here
        assert "The rating is kept" in here and "Rating: " in here
        await games.play((cleo.id, "cleo"), (ben.id, "ben"))  # a rated game: back on the boards
        for season in (None, "Cup"):
            r = await fd.slash(ben, world.channel, "leaderboard", by="rating", **_season(season))
            assert sorted(row[1] for row in board_rows(r.message)) == ["ben", "cleo"], season
        # no channel was chosen for the final standings: the end says so, it does not promise them
        r = await fd.slash(admin, world.channel, "season end")
        await r.settled(timeout=10)
        assert text_of(r) == t("en", "seasons.ended_unposted", name="Cup", command="/season mode")


async def test_an_admin_excludes_a_member_from_the_servers_boards_and_brings_them_back(world, tmp_path):
    """Manage Server takes a member off every board of this server (the
    others close up, shared places right; the boards of all servers keep
    them), lists who is excluded in /settings show, and puts them back where
    every result puts them, the games played meanwhile included.  Their own
    /stats tells them privately; bad input is answered privately."""
    fd = world.fd
    admin = world.person("ada", manage_guild=True)
    ben, cleo, dan = world.person("ben"), world.person("cleo"), world.person("dan")
    stranger = fd.add_user("eve")  # not in this server
    robot = fd.add_user("robo", bot=True)
    fd.add_member(world.guild, robot)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        games = Games(bot.store, world.guild.id, world.channel.id)
        await games.play((ben.id, "ben"), (cleo.id, "cleo"), (dan.id, "dan"))
        await games.play((cleo.id, "cleo"), (dan.id, "dan"))
        await games.play((cleo.id, "cleo"), (ben.id, "ben"))
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert [row[:3] for row in board_rows(r.message)] == [(1, "cleo", "2"), (2, "ben", "1"), (3, "dan", "0")]

        r = await fd.slash(ben, world.channel, "boards exclude", member=cleo)
        assert r.ephemeral and r.message.text() == t("en", "errors.manage_guild_only")
        r = await fd.slash(admin, world.channel, "boards exclude", member=robot)
        assert r.ephemeral and r.message.text() == t("en", "seasons.exclude_bot", member=f"<@{robot.id}>")
        r = await fd.slash(admin, world.channel, "boards exclude", member=stranger)
        assert r.ephemeral and r.message.text() == t("en", "seasons.exclude_not_member", member=f"<@{stranger.id}>")
        r = await fd.slash(admin, world.channel, "settings show")
        assert t("en", "admin.show_excluded_none") in description(r.message).splitlines()

        r = await fd.slash(admin, world.channel, "boards exclude", member=cleo)
        assert r.ephemeral and r.message.text() == t("en", "seasons.excluded", member=f"<@{cleo.id}>",
                                                     command="/boards include")
        r = await fd.slash(admin, world.channel, "boards exclude", member=cleo)
        assert r.ephemeral and r.message.text() == t("en", "seasons.exclude_twice", member=f"<@{cleo.id}>")
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert [row[:3] for row in board_rows(r.message)] == [(1, "ben", "1"), (2, "dan", "0")]
        r = await fd.slash(ben, world.channel, "leaderboard", by="games")
        assert [row[:3] for row in board_rows(r.message)] == [(1, "ben", "2"), (1, "dan", "2")]  # shared
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins", scope="global")
        assert [row[1] for row in board_rows(r.message)] == ["cleo", "ben", "dan"]  # all servers: still there
        r = await fd.slash(admin, world.channel, "settings show")
        assert t("en", "admin.show_excluded", members=f"<@{cleo.id}>") in description(r.message).splitlines()

        r = await fd.slash(cleo, world.channel, "stats", game="nimmt")
        mine = await answer(r)
        assert mine.ephemeral
        assert t("en", "stats.excluded_here") in mine.text().split(t("en", "stats.this_server"))[1]
        r = await fd.slash(ben, world.channel, "stats", game="nimmt", user=cleo)
        theirs = (await answer(r)).text()
        assert t("en", "stats.this_server") not in theirs and t("en", "stats.excluded_here") not in theirs

        await games.play((cleo.id, "cleo"), (dan.id, "dan"))  # played while excluded: it counts
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert [row[1] for row in board_rows(r.message)] == ["ben", "dan"]

        r = await fd.slash(ben, world.channel, "boards include", member=cleo)
        assert r.ephemeral and r.message.text() == t("en", "errors.manage_guild_only")
        r = await fd.slash(admin, world.channel, "boards include", member=dan)
        assert r.ephemeral and r.message.text() == t("en", "seasons.include_not_excluded", member=f"<@{dan.id}>")
        r = await fd.slash(admin, world.channel, "boards include", member=cleo)
        assert r.ephemeral and r.message.text() == t("en", "seasons.included", member=f"<@{cleo.id}>")
        r = await fd.slash(ben, world.channel, "leaderboard", by="wins")
        assert [row[:4] for row in board_rows(r.message)] == [(1, "cleo", "3", 4), (2, "ben", "1", 2),
                                                              (3, "dan", "0", 3)]
        r = await fd.slash(cleo, world.channel, "stats", game="nimmt")
        assert t("en", "stats.excluded_here") not in (await answer(r)).text()
