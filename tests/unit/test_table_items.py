"""The typed items of a table: every custom_id the bot can make fits Discord's
100 characters and is claimed by exactly one template, its own (discord.py
runs every item whose template matches); fields read back typed, and a field
out of its bounds is refused; every op of the ids before typed items has
today's item to route to."""
from __future__ import annotations

import doctest

import discord
import pytest

import cogs.tables  # noqa: F401  (the lobby's items)
from cogs.games.garbage import cog as garbage
from cogs.games.nimmt import cog as nimmt
from cogs.games.take6 import cog as take6
from cogs.guard import INT64_MAX, BadInput
from cogs.tables import lobby, router

ITEMS = [*lobby.ITEMS, *nimmt.ITEMS, *garbage.ITEMS, *take6.ITEMS]
TEMPLATES = [cls.__discord_ui_compiled_template__ for cls in (*ITEMS, router.LegacyButton, router.LegacySelect)]


def widest(cls: type[router.TableItem]) -> str:
    """The longest id of this item: every number at its largest."""
    fields = {name: field.high if isinstance(field, router.Int) else
              max(field.words, key=len) if isinstance(field, router.Word) else ("u", INT64_MAX)
              for name, field in cls.fields.items()}
    return cls.custom_id_for(INT64_MAX, INT64_MAX if cls.versioned else None, **fields)


@pytest.mark.parametrize("cls", ITEMS, ids=lambda cls: cls.kind)
def test_every_id_fits_and_belongs_to_its_own_item_only(cls):
    custom_id = widest(cls)
    assert len(custom_id) <= 100, custom_id
    assert [p.pattern for p in TEMPLATES if p.fullmatch(custom_id)] == [cls.__discord_ui_compiled_template__.pattern]


def test_kinds_are_unique():
    kinds = [cls.kind for cls in ITEMS]
    assert len(kinds) == len(set(kinds))


def test_fields_read_back_typed_and_out_of_bounds_is_refused():
    item = nimmt.PlayButton.make(12, "56 on B", ver=40, stack=1, place=3)
    assert item.custom_id == "nimmt.play:12:40:1:3"
    item.read()
    assert (item.table_id, item.ver, item.stack, item.place) == (12, 40, 1, 3)
    for forged in ("nimmt.play:12:40:1:100", f"nimmt.play:{'9' * 20}:40:1:3", "nimmt.play:12:40:1000:3"):
        with pytest.raises(BadInput):
            nimmt.PlayButton(discord.ui.Button(custom_id=forged)).read()
    with pytest.raises(ValueError):  # the bot never makes an id out of bounds
        nimmt.PlayButton.make(12, "x", ver=40, stack=1, place=100)
    with pytest.raises(BadInput):
        lobby.Hints(discord.ui.Button(custom_id="table.hints:12:maybe")).read()


def test_every_op_of_the_ids_before_typed_items_routes_to_an_item_of_today():
    buttons = ("join leave cpu hints start cancel rules again back hand nrefresh nhint npage nopage nplay ntake "
               "npass gdraw gdisc gjack ghint sixcard sixrow sixrefresh").split()
    selects = "cpu nstack ncards nsteal nopen".split()
    assert set(router._LEGACY) == {("button", op) for op in buttons} | {("select", op) for op in selects}
    for (component, op), by_game in router._LEGACY.items():
        for cls in by_game.values():
            assert cls.component == component


def test_router_doctests():
    failed, _ = doctest.testmod(router, optionflags=doctest.ELLIPSIS)
    assert failed == 0
