"""``/help`` end to end: a private answer in the user's language that names
every command as their Discord client shows it, and only the commands
Discord offers them."""
from __future__ import annotations

import pytest

from app.i18n.catalogue import t
from tests.e2e import running_bot
from tests.e2e.test_stats import Seeder, answer

pytestmark = pytest.mark.timeout(300)

LOCALE = {"en": None, "es": "es-ES", "de": "de"}


def published_names(command: dict, locale: str | None) -> list[str]:
    """Every runnable command path under ``command`` as the client names it in ``locale``."""
    def name(item: dict) -> str:
        return (item.get("name_localizations") or {}).get(locale) or item["name"] if locale else item["name"]

    subs = [o for o in command.get("options") or [] if o.get("type") in (1, 2)]
    if not subs:
        return [name(command)]
    return [f"{name(command)} {rest}" for sub in subs for rest in published_names(sub, locale)]


async def test_help_lists_what_each_user_can_run_in_their_language(world, tmp_path):
    fd = world.fd
    ana, dieter = world.person("ana"), world.person("dieter", locale="de")
    sofia = world.person("sofia", locale="es-ES")
    boss = world.person("boss", administrator=True)
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        published = {c["name"]: c for c in fd.commands(world.guild)}
        assert "help" in published
        for user, lang in ((ana, "en"), (sofia, "es"), (dieter, "de"), (boss, "en")):
            r = await fd.slash(user, world.channel, "help")
            assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == user.id
            text = r.message.text()
            assert text.startswith(t(lang, "help.title"))
            for word in (t(lang, "table.join"), t(lang, "table.start"), t(lang, "nimmt.my_hand"),
                         t(lang, "table.step_away"), t(lang, "table.im_back")):
                assert f"**{word}**" in text, (lang, word)
            lines = [line for line in text.splitlines() if line.startswith("`/")]
            shown = {line[2:].split("` — ")[0].split(" [")[0].split(" <")[0] for line in lines}
            hidden = {"settings", "season", "boards", "sync"} if user is not boss else {"sync"}  # /sync: the owner's alone
            for top, command in published.items():
                for path in published_names(command, LOCALE[lang]):
                    assert (path in shown) == (top not in hidden), (lang, path, sorted(shown))
            assert len(lines) == len(shown)  # one line per command
        # the words and options of a line are the client's, in each language
        r = await fd.slash(ana, world.channel, "help")
        lines = [line for line in r.message.text().splitlines() if line.startswith("`/")]
        # the games' commands first: opening a table is what a newcomer looks for
        assert [line.split(" ")[0] for line in lines[:3]] == ["`/nimmt", "`/garbage", "`/take6"]
        assert lines[0] == "`/nimmt new [seats] [rounds] [turn_time]` — Open an 11 nimmt! table in this channel"
        assert "`/versus <user> [game]`" in r.message.text() and "`/rules [game]`" in r.message.text()
        r = await fd.slash(dieter, world.channel, "help")
        de = r.message.text()
        assert f"`/nimmt neu [{t('de', 'commands.opt_seats.name')}]" in de
        assert "Alle Regeln, mit den Hausregeln: `/regeln`." in de
        assert "`/verlassen` im Thread lässt den Computer deinen Platz spielen, bis du **Bin wieder da** klickst" in de
        r = await fd.slash(boss, world.channel, "help")
        assert "`/settings language <language>`" in r.message.text() and "`/sync`" not in r.message.text()


async def test_in_a_dm_help_and_history_cover_every_server(world, tmp_path):
    """Once the commands are published everywhere (/sync), a DM with the bot
    offers the commands Discord allows there: /help lists just those and
    says the table commands are in servers; /history there lists the games
    of every server, and a game's detail opens."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    other = fd.add_guild("Elsewhere")
    fd.add_member(other, ana)
    fd.add_member(other, ben)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        seed = Seeder(bot.store)
        await seed.game(world.guild.id, world.channel.id, [(ana.id, "ana"), (ben.id, "ben")])
        await seed.game(other.id, 1, [(ben.id, "ben"), (ana.id, "ana")])
        r = await fd.slash(fd.owner, world.channel, "sync")
        await answer(r)
        published = {c["name"]: c for c in fd.commands(None)}
        in_dms = {name for name, c in published.items() if c.get("dm_permission") is not False}
        assert {"help", "history", "stats", "rules"} <= in_dms and not {"nimmt", "table", "settings", "season", "boards"} & in_dms
        dm = fd.dm_channel(ana)
        with pytest.raises(LookupError):  # Discord does not offer a server's commands in a DM
            await fd.slash(ana, dm, "nimmt new")

        r = await fd.slash(ana, dm, "help")
        assert r.ack_type == 4
        text = r.message.text()
        shown = {line[2:].split("` — ")[0].split(" [")[0].split(" <")[0]
                 for line in text.splitlines() if line.startswith("`/")}
        # (Discord offers /sync in every DM; it is the owner's alone, and only the owner's help lists it)
        assert shown == {path for name in in_dms - {"sync"} for path in published_names(published[name], None)}
        assert text.endswith(t("en", "help.in_dm"))
        r = await fd.slash(fd.owner, fd.dm_channel(fd.owner), "help")
        assert "`/sync` — " in r.message.text() and "`/history" in r.message.text()

        r = await fd.slash(ana, dm, "history")
        assert r.ack_type == 4
        embed = r.message.embeds[0]
        assert embed["title"] == t("en", "stats.history_title", name="ana")  # not "in this server"
        assert len(embed["description"].splitlines()) == 2  # both servers' games
        pick = next(c for c in r.message.all_components() if c.get("custom_id", "").startswith("hist:"))
        r = await fd.select(ana, r.message, pick["custom_id"], [pick["options"][0]["value"]])
        detail = await answer(r)
        assert "ana" in detail.text() and "ben" in detail.text()

        # "this server" in a DM: there is none; the board of all servers, and it says so
        r = await fd.slash(ana, dm, "leaderboard", scope="server", by="games")
        assert r.ack_type == 4 and r.ephemeral
        embed = r.message.embeds[0]
        assert embed["title"] == t("en", "stats.board_title", game=t("en", "nimmt.title"),
                                   scope=t("en", "stats.global"), by=t("en", "stats.by_games"))
        assert embed["description"].startswith(t("en", "stats.dm_all_servers", command="/leaderboard"))
        assert "ana — 2" in embed["description"] and "ben — 2" in embed["description"]  # both servers' games
        r = await fd.slash(ana, dm, "leaderboard", scope="global", by="games")  # asked for: no note
        assert not r.message.embeds[0]["description"].startswith(t("en", "stats.dm_all_servers", command="/leaderboard"))
