"""Languages end to end: private answers follow the clicking user's language,
public table messages the server's (or the ``/settings language``
override); slash commands are localised; ``/rules`` pages in every language."""
from __future__ import annotations

import re
from typing import Any

import pytest

from app.i18n.catalogue import t
from app.i18n.rules import rules_pages
from tests.e2e import open_table, private_answer, running_bot, title, updated
from tests.e2e.test_stats import answer, final_standings, full_game

pytestmark = pytest.mark.timeout(600)

LOCALES = ("es-ES", "es-419", "de")
LANG_OF = {"es-ES": "es", "es-419": "es", "de": "de"}


def panels(fd: Any, user: Any, table_id: int) -> list[Any]:
    """Every version of every hand panel ``user`` was shown at a table."""
    out = []
    for message in fd.ephemerals(user):
        for version in [*message.history, message]:
            embeds = version.embeds if hasattr(version, "embeds") else version.get("embeds") or []
            if embeds and f"#{table_id}" in (embeds[0].get("title") or ""):
                out.append(embeds[0])
    return out


async def test_each_player_sees_their_language_the_table_the_servers(world, tmp_path):
    """A Spanish (es-419) and a German player at a table in an English server:
    panels and refusals in their own languages, the lobby, thread and table
    message in English."""
    fd = world.fd
    sofia = world.person("sofia", locale="es-419")
    dieter = world.person("dieter", locale="de")
    pablo = world.person("pablo", locale="es-ES")  # watches
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        # A refusal before the game: each in their own language.
        t0 = await open_table(fd, sofia, world.channel, "nimmt new", seats=2, rounds=1, turn_time=0)
        assert t0.lobby.embeds[0]["title"] == t("en", "table.lobby_title", game="11 nimmt!", table=t0.table_id)
        assert [b["label"] for b in t0.lobby.buttons()] == [
            t("en", f"table.{k}") for k in ("join", "leave", "add_computer", "start", "cancel", "rules")] + [
            t("en", "ai.hints_button_off")]
        assert [s["placeholder"] for s in t0.lobby.selects()] == [t("en", "ai.add_computer")]
        r = await fd.slash(dieter, world.channel, "nimmt new", seats=2)
        assert r.ephemeral and r.message.text() == t("de", "errors.channel_busy", table=t0.table_id)
        r = await t0.click(sofia, t0.lobby, f"table.leave:{t0.table_id}")
        assert r.ephemeral and r.message.text() == t("es", "errors.host_alone")
        r = await t0.click(dieter, t0.lobby, f"table.join:{t0.table_id}")
        await updated(r)
        t0.lobby = r.message
        r = await t0.click(dieter, t0.lobby, f"table.start:{t0.table_id}")
        assert r.ephemeral and r.message.text() == t("de", "errors.host_only")
        r = await t0.click(pablo, t0.lobby, f"table.leave:{t0.table_id}")
        assert r.ephemeral and r.message.text() == t("es", "errors.not_seated")
        r = await t0.click(sofia, t0.lobby, f"table.cancel:{t0.table_id}")
        await updated(r)
        assert t("en", "table.cancelled") in r.message.text()

        # The game itself.
        async def watcher_clicks(table: Any) -> None:
            # someone not seated asks for a hand: told off in Spanish
            r = await table.click(pablo, table.table_message(), f"nimmt.hand:{table.table_id}")
            told = await private_answer(r)
            assert told.ephemeral_to == pablo.id and told.text() == t("es", "errors.not_seated")
            assert table.table_message().buttons()[0]["label"] == t("en", "nimmt.my_hand")

        game = await full_game(fd, world.channel, sofia, [dieter], langs={sofia.id: "es", dieter.id: "de"},
                               table_lang="en", while_playing=watcher_clicks)
        assert set(final_standings(game, "en")) == {"sofia", "dieter"}
        for user, lang in ((sofia, "es"), (dieter, "de")):
            seen = panels(fd, user, game.table_id)
            assert len(seen) >= 2
            for embed in seen:
                assert embed["title"] == t(lang, "nimmt.panel_title", table=game.table_id)
            hand = t(lang, "nimmt.panel_hand", count=2, cards="X").split("(")[0]
            assert any(hand in (e.get("description") or "") for e in seen), (lang, seen[0])
        # the public side stays English
        log = game.log_text()
        for lang in ("en", "es", "de"):
            said = t(lang, "table.game_started", game="11 nimmt!") in log
            over = t(lang, "nimmt.game_over", names="", count=1).split("!")[0] in log
            assert said == over == (lang == "en"), (lang, log)
        table_msg = game.table_message()
        assert title(table_msg) == t("en", "nimmt.table_title", table=game.table_id)
        # ... even when the last table message is gone after the end, the lobby is English
        assert t("en", "table.finished") in game.lobby.text()
        assert game.thread.name == t("en", "table.thread_name", game="11 nimmt!", table=game.table_id)


async def test_server_language_override(world, tmp_path):
    """``/settings language`` (Manage Server) switches the public table
    messages; ephemeral answers still follow each user; ``auto`` goes back to
    the server's language.  A German server speaks German without it."""
    fd = world.fd
    sofia = world.person("sofia", locale="es-ES")
    max_ = world.person("max", manage_guild=True)
    admin = world.person("adela", locale="es-ES", administrator=True)
    guild_de = fd.add_guild("Spieleabend", locale="de")
    chan_de = fd.add_channel(guild_de, "karten")
    fd.add_member(guild_de, sofia)
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        # refused without Manage Server, in the user's language, and nothing changes
        r = await fd.slash(sofia, world.channel, "settings language", language="de")
        assert r.ack_type == 4 and r.ephemeral
        assert r.message.text() == t("es", "errors.manage_guild_only")
        t1 = await open_table(fd, sofia, world.channel, "nimmt new", seats=2)
        assert t("en", "table.join") == t1.lobby.buttons()[0]["label"]
        r = await t1.click(sofia, t1.lobby, f"table.cancel:{t1.table_id}")
        await updated(r)

        # a manager sets German
        r = await fd.slash(max_, world.channel, "settings language", language="de")
        assert r.ephemeral
        assert r.message.text() == t("en", "admin.language_set", language="Deutsch")
        t2 = await open_table(fd, sofia, world.channel, "nimmt new", seats=2)
        assert t2.lobby.embeds[0]["title"] == t("de", "table.lobby_title", game="11 nimmt!", table=t2.table_id)
        assert t2.lobby.buttons()[0]["label"] == t("de", "table.join")
        # ... but the host's own answers stay Spanish
        r = await t2.click(sofia, t2.lobby, f"table.join:{t2.table_id}")
        assert r.ephemeral and r.message.text() == t("es", "errors.already_seated")
        r = await t2.click(max_, t2.lobby, f"table.join:{t2.table_id}")
        await updated(r)
        assert t("de", "table.lobby_seats", taken=2, seats=2) in r.message.text()
        r = await t2.click(sofia, t2.lobby, f"table.cancel:{t2.table_id}")
        await updated(r)
        assert t("de", "table.cancelled") in r.message.text()

        # a whole game under the German setting: German thread, each panel its reader's
        game = await full_game(fd, world.channel, sofia, [max_], langs={sofia.id: "es", max_.id: "en"},
                               table_lang="de")
        log = game.log_text()
        assert t("de", "table.game_started", game="11 nimmt!") in log and "Spielende!" in log
        assert "Game over" not in log and "Fin de la partida" not in log
        assert set(final_standings(game, "de")) == {"sofia", "max"}
        for user, lang in ((sofia, "es"), (max_, "en")):
            seen = panels(fd, user, game.table_id)
            assert seen and all(e["title"] == t(lang, "nimmt.panel_title", table=game.table_id) for e in seen)

        # an administrator (Spanish) sets Spanish, then auto
        r = await fd.slash(admin, world.channel, "settings language", language="es")
        assert r.message.text() == t("es", "admin.language_set", language=t("es", "admin.language_name"))
        t3 = await open_table(fd, max_, world.channel, "nimmt new", seats=2)
        assert t3.lobby.buttons()[0]["label"] == t("es", "table.join")
        await t3.click(max_, t3.lobby, f"table.cancel:{t3.table_id}")
        r = await fd.slash(admin, world.channel, "settings language", language="auto")
        assert r.message.text() == t("es", "admin.language_set", language=t("es", "admin.language_auto"))
        t4 = await open_table(fd, max_, world.channel, "nimmt new", seats=2)
        assert t4.lobby.buttons()[0]["label"] == t("en", "table.join")
        await t4.click(max_, t4.lobby, f"table.cancel:{t4.table_id}")

        # a German server (commands there come with the owner's /sync): German tables
        r = await fd.slash(fd.owner, world.channel, "sync")
        await answer(r)
        t5 = await open_table(fd, sofia, chan_de, "nimmt new", seats=2)
        assert t5.lobby.embeds[0]["title"] == t("de", "table.lobby_title", game="11 nimmt!", table=t5.table_id)
        # the English server's setting does not leak into it, nor the other way round
        t6 = await open_table(fd, max_, world.channel, "nimmt new", seats=2)
        assert t6.lobby.buttons()[0]["label"] == t("en", "table.join")


def _walk(item: dict[str, Any], path: str, out: list[tuple[str, str, dict[str, Any]]]) -> None:
    """(path, kind, item) for every command, option and choice of a payload."""
    out.append((path, "name", item))
    for option in item.get("options") or []:
        _walk(option, f"{path} {option['name']}", out)
    for choice in item.get("choices") or []:
        out.append((f"{path}={choice['value']}", "choice", choice))


async def test_commands_are_localised(world, tmp_path):
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        commands = fd.commands(world.guild)
        names = {c["name"] for c in commands}
        assert {"nimmt", "garbage", "rules", "stats", "leaderboard", "history", "settings", "sync"} <= names
        items: list[tuple[str, str, dict[str, Any]]] = []
        for command in commands:
            _walk(command, command["name"], items)
        self_named = {"English", "Español", "Deutsch"}  # language choices name themselves
        for path, kind, item in items:
            if kind == "choice" and item["name"] in self_named:
                continue
            names_l = item.get("name_localizations") or {}
            assert set(names_l) == set(LOCALES), (path, names_l)
            assert names_l["es-ES"] == names_l["es-419"], path
            if kind == "name":
                desc_l = item.get("description_localizations") or {}
                assert set(desc_l) == set(LOCALES), (path, desc_l)
                assert desc_l["es-ES"] == desc_l["es-419"] != desc_l["de"] != item["description"], path
        by_name = {c["name"]: c for c in commands}
        for locale, lang in LANG_OF.items():
            for name in ("rules", "stats", "leaderboard", "history", "settings", "sync"):
                assert by_name[name]["name_localizations"][locale] == t(lang, f"commands.{name}.name")
                assert by_name[name]["description_localizations"][locale] == t(lang, f"commands.{name}.description")
            new = next(o for o in by_name["nimmt"]["options"] if o["name"] == "new")
            assert new["name_localizations"][locale] == t(lang, "commands.nimmt_new.name")
            seats = next(o for o in new["options"] if o["name"] == "seats")
            assert seats["name_localizations"][locale] == t(lang, "commands.opt_seats.name")
            by = next(o for o in by_name["leaderboard"]["options"] if o["name"] == "by")
            assert {c["value"]: c["name_localizations"][locale] for c in by["choices"]} == {
                v: t(lang, f"commands.choice_{v}.name") for v in ("rating", "wins", "win_rate", "games")}
        assert by_name["rules"]["name_localizations"]["de"] == "regeln"
        assert by_name["rules"]["name_localizations"]["es-419"] == "reglas"


@pytest.mark.parametrize("locale", ["en-GB", "es-ES", "de"])
async def test_rules_pages_in_every_language(world, tmp_path, locale):
    """/rules answers privately in the user's language; Next/Previous walk
    every page (each within Discord's limits, which the stand-in checks), each
    other game's button switches, and /rules game:<game> starts there."""
    from core.registry import KEYS
    fd = world.fd
    lang = {"en-GB": "en", "es-ES": "es", "de": "de"}[locale]
    reader = world.person("reader", locale=locale)
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        for game in KEYS:
            others = [g for g in KEYS if g != game]
            other = others[0]
            pages = rules_pages(game, lang)
            assert len(pages) >= 2
            if lang != "en":
                assert [p[1] for p in pages] != [p[1] for p in rules_pages(game, "en")]
            r = await fd.slash(reader, world.channel, "rules", **({} if game == KEYS[0] else {"game": game}))
            assert r.ack_type == 4 and r.ephemeral
            message = r.message
            assert message.ephemeral_to == reader.id

            def check(msg: Any, index: int) -> None:
                embed = msg.embeds[0]
                assert embed["title"] == pages[index][0]
                assert embed["description"] == pages[index][1]
                assert embed["footer"]["text"] == t(lang, "rules.footer", page=index + 1, pages=len(pages))
                labels = [b["label"] for b in msg.buttons()]
                assert labels == [t(lang, "rules.previous"), t(lang, "rules.next"), *(
                    t(lang, "rules.other_game", game=t(lang, f"commands.choice_{o}.name")) for o in others)]
                prev_b, next_b, *_ = msg.buttons()
                assert prev_b["disabled"] == (index == 0)
                assert next_b["disabled"] == (index == len(pages) - 1)

            check(message, 0)
            for index in range(1, len(pages)):
                r = await fd.click_label(reader, message, t(lang, "rules.next"))
                assert r.ack_type == 7 and r.ephemeral
                message = r.message
                check(message, index)
            for index in range(len(pages) - 2, -1, -1):
                r = await fd.click_label(reader, message, t(lang, "rules.previous"))
                assert r.ack_type == 7
                check(message := r.message, index)
            other_label = t(lang, "rules.other_game", game=t(lang, f"commands.choice_{other}.name"))
            r = await fd.click_label(reader, message, other_label)
            assert r.ack_type == 7
            assert r.message.embeds[0]["title"] == rules_pages(other, lang)[0][0]
            assert re.search(r"\b1\b", r.message.embeds[0]["footer"]["text"])


async def test_rules_buttons_keep_working_after_a_restart(world, tmp_path):
    fd = world.fd
    reader = world.person("leser", locale="de")
    pages = rules_pages("nimmt", "de")
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        r = await fd.slash(reader, world.channel, "rules")
        message = r.message
        r = await fd.click_label(reader, message, t("de", "rules.next"))
        assert r.message.embeds[0]["description"] == pages[1][1]
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        r = await fd.click_label(reader, message, t("de", "rules.previous"))
        assert r.ack_type == 7
        assert r.message.embeds[0]["description"] == pages[0][1]
        assert r.message.embeds[0]["footer"]["text"] == t("de", "rules.footer", page=1, pages=len(pages))
