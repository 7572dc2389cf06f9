"""The rules loader (app/i18n/rules.py) and the pure parts of cogs/rules.py.

End-to-end tests against a Discord stand-in live elsewhere; here we check the
page building, the custom_id template and that a click (also after a
restart, i.e. through ``from_custom_id``) edits the message in place.
"""
from __future__ import annotations

import re
from types import SimpleNamespace
from unittest.mock import AsyncMock

import discord
import pytest

from app.i18n.catalogue import LOCALES, t
from app.i18n.rules import GAMES, PAGE_LIMIT, _pack, _split_long, parse, rules_pages
from cogs import rules as cog

# --------------------------------------------------------------------------
# loader


def test_parse_needs_a_game_tag():
    with pytest.raises(ValueError, match="game"):
        parse("## Untagged\n### Section\ntext\n")


def test_parse_strips_comments_and_keeps_headings_after_blank_lines():
    doc = "## G\n<!-- game: g -->\n<!-- note\nfor editors -->\nIntro\n### A\none\n\n\n\n### B\ntwo\n"
    ((title, pages),) = parse(doc).values()
    assert title == "G"
    assert pages == ("Intro\n\n### A\none\n\n### B\ntwo",)


def test_long_sections_are_split_between_paragraphs():
    paragraph = "word " * 300  # 1500 characters
    blocks = ["### Huge\n" + "\n\n".join([paragraph.strip()] * 5)]
    pages = _pack(blocks)
    assert len(pages) >= 2
    assert all(len(p) <= PAGE_LIMIT for p in pages)
    assert "".join(pages).count("word") == 1500


def test_split_long_never_exceeds_the_limit():
    text = "\n".join("x" * n for n in (5, 50, 500, 5000))
    assert all(len(piece) <= 1000 for piece in _split_long(text, 1000))


@pytest.mark.parametrize("lang", LOCALES)
def test_every_section_appears_once_in_order(lang):
    for game in GAMES:
        text = "\n\n".join(body for _, body in rules_pages(game, lang))
        headings = re.findall(r"(?m)^### (.+)$", text)
        assert len(headings) == len(set(headings)) >= 7


def test_window_examples_are_shown():
    text = "\n".join(body for _, body in rules_pages("nimmt", "en"))
    for example in ("55 to 64", "97 to 100 and 1 to 6", "99, 100, 1, 2, 3, 4, 5", "34 to 43", "167"):
        assert example in text


# --------------------------------------------------------------------------
# cog: custom ids, pages, buttons


def test_custom_id_round_trip_and_template():
    for game in GAMES:
        for lang in LOCALES:
            cid = cog.custom_id(game, lang, 12)
            assert len(cid) <= 100
            assert cog.parse_custom_id(cid) == (game, lang, 12)
            assert re.fullmatch(cog.RulesButton.__discord_ui_compiled_template__, cid)
    for bad in ("rules:nimmt:fr:0", "rules:nimmt:en:-1", "rules:nimmt:en:", "xrules:nimmt:en:0", "rules:nimmt:en:0x"):
        assert cog.parse_custom_id(bad) is None


@pytest.mark.parametrize("lang", LOCALES)
@pytest.mark.parametrize("game", GAMES)
def test_every_page_builds_with_unique_custom_ids(game, lang):
    pages = rules_pages(game, lang)
    for page in range(len(pages)):
        embed, view = cog.build_page(game, lang, page)
        assert embed.title == pages[page][0] and embed.description == pages[page][1]
        assert len(embed) <= 6000
        assert embed.footer.text == t(lang, "rules.footer", page=page + 1, pages=len(pages))
        ids = [item.custom_id for item in view.children]
        assert len(ids) == len(set(ids)), ids
        assert view.timeout is None
        assert all(isinstance(item, cog.RulesButton) for item in view.children)
        buttons = {item.custom_id: item.item for item in view.children}
        assert all(len(b.label or "") <= 80 for b in buttons.values())
        prev_, next_, *others = view.children
        assert prev_.item.disabled == (page == 0)
        assert next_.item.disabled == (page == len(pages) - 1)
        # one button to the first page of every other game
        assert sorted(o.game for o in others) == sorted(g for g in GAMES if g != game)
        assert all(o.page == 0 and o.lang == lang for o in others)


def test_out_of_range_page_is_clamped():
    last = len(rules_pages("garbage", "de")) - 1
    embed, _ = cog.build_page("garbage", "de", 999)
    assert embed.description == rules_pages("garbage", "de")[last][1]


def _interaction(locale="de"):
    response = SimpleNamespace(
        edit_message=AsyncMock(), send_message=AsyncMock(), is_done=lambda: False,
    )
    # (a click on the user's own private rules message, which a page replaces)
    message = SimpleNamespace(flags=discord.MessageFlags(ephemeral=True), interaction_metadata=None)
    return SimpleNamespace(locale=discord.Locale(locale), response=response, followup=SimpleNamespace(send=AsyncMock()),
                           message=message, user=SimpleNamespace(id=1))


async def test_click_after_restart_edits_in_place():
    """A click on an old message is rebuilt from its custom_id alone."""
    match = cog.RulesButton.__discord_ui_compiled_template__.fullmatch("rules:nimmt:es:1")
    old_button = discord.ui.Button(label="Siguiente", custom_id="rules:nimmt:es:1")
    item = await cog.RulesButton.from_custom_id(_interaction(), old_button, match)
    interaction = _interaction()
    await item.callback(interaction)
    interaction.response.edit_message.assert_awaited_once()
    kwargs = interaction.response.edit_message.await_args.kwargs
    assert kwargs["embed"].description == rules_pages("nimmt", "es")[1][1]
    assert kwargs["embed"].footer.text.startswith("Página 2 de")
    interaction.response.send_message.assert_not_awaited()


async def test_click_failure_tells_the_user(monkeypatch):
    def boom(*args):
        raise OSError("rules file gone")

    monkeypatch.setattr(cog, "build_page", boom)
    item = cog.RulesButton(discord.ui.Button(custom_id="rules:garbage:de:0"))
    interaction = _interaction()
    await item.callback(interaction)
    interaction.response.send_message.assert_awaited_once()
    args, kwargs = interaction.response.send_message.await_args
    assert kwargs["ephemeral"] is True and "/regeln" in args[0]


async def test_slash_command_answers_ephemerally_in_the_users_language():
    bot = SimpleNamespace(add_dynamic_items=lambda *a: None, remove_dynamic_items=lambda *a: None)
    rules_cog = cog.Rules(bot)
    interaction = _interaction("es-419")
    await rules_cog.rules.callback(rules_cog, interaction, None)
    kwargs = interaction.response.send_message.await_args.kwargs
    assert kwargs["ephemeral"] is True
    assert kwargs["embed"].title == "11 nimmt!"
    assert kwargs["embed"].description == rules_pages("nimmt", "es")[0][1]
    choice = discord.app_commands.Choice(name="Garbage", value="garbage")
    interaction = _interaction("en-GB")
    await rules_cog.rules.callback(rules_cog, interaction, choice)
    assert interaction.response.send_message.await_args.kwargs["embed"].title == "Garbage (also called Trash)"


async def test_cog_registers_and_removes_the_dynamic_item():
    from discord.ext import commands

    bot = commands.Bot(command_prefix="!", intents=discord.Intents.none())
    await bot.load_extension("cogs.rules")
    # load_extension executes the module afresh: compare by name and template.
    store = bot._connection._view_store._dynamic_items
    assert [(c.__name__, p.pattern) for p, c in store.items()] == [("RulesButton", cog.CUSTOM_ID_TEMPLATE)]
    await bot.unload_extension("cogs.rules")
    assert not store
    await bot.close()
