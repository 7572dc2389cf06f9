"""Admin end to end: a channel where the bot lacks permissions, server
settings only for members with Manage Server, ``/sync`` only for the owner."""
from __future__ import annotations

import discord
import pytest

from app.i18n.catalogue import t
from tests.e2e import open_table, running_bot, updated
from tests.e2e.test_stats import answer

pytestmark = pytest.mark.timeout(300)


async def test_missing_permissions_open_no_table(world, tmp_path):
    """With Attach Files or Create Public Threads denied to the bot in the
    channel, ``/nimmt new`` says privately which permission is missing (in
    the user's language) and opens nothing; once allowed, it works."""
    fd = world.fd
    ana = world.person("ana")
    dieter = world.person("dieter", locale="de")
    chan = world.channel
    bot_member = fd.member(world.guild, fd.bot_user)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        # denied to the bot's role
        fd.set_channel_overwrite(chan, world.guild.bot_role, deny=discord.Permissions(attach_files=True))
        r = await fd.slash(ana, chan, "nimmt new", seats=2)
        assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == ana.id
        assert r.message.text() == t("en", "errors.missing_permissions", permissions="Attach Files")

        # denied to the bot member itself, on top
        fd.set_channel_overwrite(chan, bot_member, deny=discord.Permissions(create_public_threads=True))
        r = await fd.slash(dieter, chan, "nimmt new", seats=3)
        assert r.ephemeral
        assert r.message.text() == t("de", "errors.missing_permissions",
                                     permissions="Dateien anhängen, Öffentliche Threads erstellen")
        r = await fd.slash(ana, chan, "garbage new")
        assert r.ephemeral and "Attach Files, Create Public Threads" in r.message.text()

        # only the threads permission missing
        fd.set_channel_overwrite(chan, world.guild.bot_role)
        r = await fd.slash(ana, chan, "nimmt new", seats=2)
        assert r.ephemeral
        assert r.message.text() == t("en", "errors.missing_permissions", permissions="Create Public Threads")

        # nothing was opened: no public message, no table in the channel
        assert fd.messages(chan) == []
        assert fd.threads(chan) == []
        assert await bot.store.table_in_channel(chan.id) is None

        # allowed again: the table opens, publicly
        fd.set_channel_overwrite(chan, bot_member)
        table = await open_table(fd, ana, chan, "nimmt new", seats=2)
        assert fd.messages(chan)[-1].id == table.lobby.id
        # a denial only for another channel does not matter here
        other = fd.add_channel(world.guild, "quiet")
        fd.set_channel_overwrite(other, world.guild.bot_role, deny=discord.Permissions(embed_links=True))
        r = await fd.slash(ana, other, "nimmt new", seats=2)
        assert r.ephemeral and r.message.text() == t("en", "errors.missing_permissions", permissions="Embed Links")
        r = await table.click(ana, table.lobby, f"table.cancel:{table.table_id}")
        await updated(r)


async def test_settings_need_manage_server(world, tmp_path):
    """``/settings`` answers a member without Manage Server privately with a
    refusal in their language; Manage Messages is not enough; Manage Server
    or Administrator is."""
    fd = world.fd
    plain = world.person("plain", locale="es-ES")
    mod = world.person("mod", manage_messages=True)
    boss = world.person("boss", locale="de", manage_guild=True)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        for user, lang in ((plain, "es"), (mod, "en")):
            for path, options in (("settings language", {"language": "es"}),
                                  ("settings rated_computers", {"enabled": True}),
                                  ("settings rated_variants", {"enabled": True}), ("settings show", {})):
                r = await fd.slash(user, world.channel, path, **options)
                assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == user.id
                assert r.message.text() == t(lang, "errors.manage_guild_only")
        assert fd.messages(world.channel) == []
        table = await open_table(fd, mod, world.channel, "nimmt new", seats=2)
        assert table.lobby.buttons()[0]["label"] == t("en", "table.join")
        assert (await bot.store.guild_settings(world.guild.id)) == {"language": None, "rate_bot_games": False,
                                                                    "rate_variants": False}

        # /settings show: what the server has now, in the asker's language
        r = await fd.slash(boss, world.channel, "settings show")
        assert r.ephemeral and r.message.ephemeral_to == boss.id
        assert r.message.text().splitlines() == [
            t("de", "admin.show_title"),
            t("de", "admin.show_language", language=t("de", "admin.show_auto", language="English")),
            t("de", "admin.show_rated_off"), t("de", "admin.show_variants_off"),
            t("de", "admin.show_excluded_none")]
        assert "English" in r.message.text() and "nicht" in r.message.text()
        r = await fd.slash(boss, world.channel, "settings rated_computers", enabled=True)
        assert r.ephemeral and r.message.text() == t("de", "admin.rated_on")
        r = await fd.slash(boss, world.channel, "settings language", language="es")
        assert r.ephemeral and r.message.text() == t("de", "admin.language_set", language="español")
        r = await fd.slash(boss, world.channel, "settings show")
        r = await fd.slash(boss, world.channel, "settings rated_variants", enabled=True)
        assert r.ephemeral and r.message.text() == t("de", "admin.variants_rated_on")
        r = await fd.slash(boss, world.channel, "settings show")
        assert r.message.text().splitlines()[1:] == [t("de", "admin.show_language", language="español"),
                                                     t("de", "admin.show_rated_on"), t("de", "admin.show_variants_on"),
                                                     t("de", "admin.show_excluded_none")]
        # the table already open keeps its language; the next one speaks Spanish
        r = await table.click(mod, table.lobby, f"table.cancel:{table.table_id}")
        await updated(r)
        assert t("en", "table.cancelled") in r.message.text()
        table = await open_table(fd, mod, world.channel, "nimmt new", seats=2)
        assert table.lobby.buttons()[0]["label"] == t("es", "table.join")


async def test_sync_is_for_the_owner_only(world, tmp_path):
    """Discord hides /settings and /sync from members without Manage Server /
    Administrator; a non-owner administrator running /sync is refused."""
    fd = world.fd
    admin = world.person("admin", administrator=True)
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        by_name = {c["name"]: c for c in fd.commands(world.guild)}
        assert int(by_name["settings"]["default_member_permissions"]) == (discord.Permissions(manage_guild=True).value)
        assert int(by_name["sync"]["default_member_permissions"]) == (discord.Permissions(administrator=True).value)
        for name in ("rules", "stats", "leaderboard", "history", "nimmt"):
            assert by_name[name].get("default_member_permissions") is None, name
        assert fd.commands(None) == []
        r = await fd.slash(admin, world.channel, "sync")
        assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == admin.id
        assert r.message.text() == t("en", "errors.owner_only")
        assert fd.commands(None) == []  # nothing was published

        r = await fd.slash(fd.owner, world.channel, "sync")
        assert r.ack_type == 5 and r.ephemeral
        text = (await answer(r)).text()
        published = fd.commands(None)
        assert {c["name"] for c in published} >= {"nimmt", "rules", "stats", "leaderboard", "settings", "sync"}
        assert text == t("en", "admin.synced", count=len(published))


async def test_sync_whose_answer_failed_after_it_landed_answers_once(world, tmp_path):
    """The owner's /sync answers "thinking", then how many commands it published; Discord
    carries that answer out and only its answer fails (a 502 of its edge): discord.py sends
    it again, and the owner still sees one answer."""
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        since = len(fd.requests)
        fd.fail_next("*", r"/webhooks/\d+/[^/]+(/messages/@original)?$", status=502, after=True)
        r = await fd.slash(fd.owner, world.channel, "sync")
        assert r.ack_type == 5 and r.ephemeral
        await answer(r)
        # discord.py sends it again (after a second): once that is carried out too...
        await fd.wait_for(lambda: [q.status for q in fd.requests[since:] if q.path.startswith("/webhooks/")]
                          == [502, 200], timeout=15)
        told = t("en", "admin.synced", count=len(fd.commands(None)))
        # ... the owner has one answer
        assert [m.id for m in fd.ephemerals(fd.owner) if m.text() == told] == [r.message.id]
    fd.assert_clean()
