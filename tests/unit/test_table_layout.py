"""The live table's Components V2 layout (cogs.tables.game_ui.TableMessage.layout) stays
within what Discord takes, whatever the games and the table machinery put in it: the
Discord stand-in's checks (Discord's documented limits) pass on it."""
from __future__ import annotations

import discord

from cogs.tables.game_ui import LAYOUT_TEXT, Part, TableMessage, action_rows
from tests.fakediscord import validation

V2 = 1 << 15


def texts(components: list[dict]) -> dict[int, str]:
    return {c["id"]: c["content"] for c in validation.walk(components) if c["type"] == 10}


def buttons(n: int, row: int | None = None) -> list[discord.ui.Button]:
    return [discord.ui.Button(label=f"b{row}-{i}", custom_id=f"b:{row}:{i}", row=row) for i in range(n)]


def message(summary: str, view: discord.ui.View | None = None) -> TableMessage:
    m = TableMessage(title="11 nimmt! — table #7", summary=summary, colour=discord.Colour.orange(),
                     image=b"png", view=view, heading="<@1>, it's your turn.")
    m.note("Last moves", "\n".join(f"**ana** played {n}" for n in range(400)))
    m.footer.append("Shuffle commitment (SHA-256): 68587dc4db1c…")
    return m


def test_a_long_table_gives_way_in_its_summary_and_discord_takes_it() -> None:
    components = message("ana: 10 cards\n" * 600).layout(True).to_components()
    shown = texts(components)
    assert sum(map(len, shown.values())) == LAYOUT_TEXT
    assert shown[Part.SUMMARY].endswith("…") and shown[Part.HEADING].endswith("<@1>, it's your turn.")
    assert shown[Part.NOTES].endswith("played 399")  # the newest moves are kept
    assert validation.check_message({"flags": V2, "components": components}, files={"table.png"}) == []


def test_without_the_picture_nothing_names_it() -> None:
    components = message("Stacks: A 65").layout(False).to_components()
    assert 12 not in {c["type"] for c in validation.walk(components)}
    assert validation.check_message({"flags": V2, "components": components}, files=set()) == []
    assert validation.check_message({"flags": V2, "components": message("x").layout(True).to_components()},
                                    files=set())  # a picture that is not sent is refused


def test_controls_keep_their_rows_and_the_others_fill_in() -> None:
    view = discord.ui.View(timeout=None)
    for item in [*buttons(2, 0), *buttons(4, 3), *buttons(4), *buttons(1, 4)]:
        view.add_item(item)
    rows = [[b.label for b in row.children if isinstance(b, discord.ui.Button)] for row in action_rows(view)]
    assert rows == [["b0-0", "b0-1", "bNone-0", "bNone-1", "bNone-2"], ["bNone-3"], ["b3-0", "b3-1", "b3-2", "b3-3"],
                    ["b4-0"]]
    assert action_rows(None) == []
    components = message("Stacks", view).layout(True).to_components()
    assert validation.check_message({"flags": V2, "components": components}, files={"table.png"}) == []
