"""High card at the table: ``/highcard new``, the table message and its buttons.

The table message shows the trick and the tricks won; *Your cards* answers
its clicker privately with one button per card of their hand (the hand
stays secret), and a card's button plays it on the player's turn.
"""
from __future__ import annotations

from typing import Any

import discord

from app.i18n.catalogue import t
from app.tables.manager import Table, TableError
from app.text import bold
from cogs.common.ui import view_of
from cogs.tables.game_ui import BaseUI, GameCog, TableMessage, new_command, seat_label
from cogs.tables.lobby import Rules, step_away_button
from cogs.tables.router import Click, Int, TableButton
from core.protocol import Event, GameError
from tests.games.highcard import SPEC
from tests.games.highcard.engine import CARDS, Play


class HighCardUI(BaseUI):
    key = SPEC.key

    async def table_message(self, table: Table, lang: str) -> TableMessage:
        view = table.view(None)
        lines = [t(lang, "highcard.trick", cards=", ".join(f"{bold(table.seats[s].name)} {c}" for s, c in view["trick"])
                   or "-")]
        for seat, tricks in enumerate(view["tricks"]):
            marker = "▶ " if seat == view["to_move"] else ""
            lines.append(marker + t(lang, "highcard.seat_line", name=seat_label(table, seat, lang),
                                    count=view["cards"][seat], tricks=tricks))
        items: list[discord.ui.Item[Any]] = []
        if table.status == "playing" and view["to_move"] is not None:
            items.append(HandButton.make(table.id, t(lang, "highcard.hand"), style=discord.ButtonStyle.primary))
            items.append(Rules.make(table.id, t(lang, "table.rules"), emoji="📖"))
            if any(s.user_id is not None and not s.away for s in table.seats):
                items.append(step_away_button(table, lang, row=0))
        return TableMessage(title=t(lang, "highcard.table_title", table=table.id), summary="\n".join(lines),
                            colour=discord.Colour.from_rgb(*SPEC.colour), image=None,
                            view=view_of(*items) if items else None)

    def progress(self, table: Table, lang: str) -> tuple[str, list[int]]:
        """The trick being played, and each seat's tricks behind the leader (0 leads)."""
        view = table.view(None)
        tricks = view["tricks"]
        return t(lang, "highcard.progress", trick=sum(tricks) + 1), [max(tricks) - n for n in tricks]

    def narrate(self, table: Table, events: list[Event], lang: str) -> list[str]:
        lines: list[str] = []
        for e in events:
            if e["type"] == "played":
                lines.append(t(lang, "highcard.played", name=bold(table.seats[e["seat"]].name), card=e["card"]))
            elif e["type"] == "trick_won":
                lines.append(t(lang, "highcard.trick_won", name=bold(table.seats[e["seat"]].name), card=e["card"]))
            elif e["type"] == "game_over":
                for seat in sorted(range(len(e["places"])), key=lambda s: (e["places"][s], s)):
                    lines.append(t(lang, "highcard.standing", place=e["places"][seat],
                                   name=bold(table.seats[seat].name), count=e["scores"][seat]))
        return lines


class HandButton(TableButton, kind="highcard.hand"):
    """*Your cards*: the clicker's hand, privately, one button per card."""

    game = SPEC.key

    async def run(self, click: Click) -> None:
        seat = click.table.seat_of(click.user.id)
        if seat is None:
            raise TableError("not_seated")
        hand = click.table.view(seat)["hand"]
        ver = click.table.version
        cards = [PlayButton.make(click.table.id, str(card), ver=ver, card=card) for card in hand]
        await click.interaction.response.send_message(t(click.lang, "highcard.your_hand"), view=view_of(*cards),
                                                      ephemeral=True)


class PlayButton(TableButton, kind="highcard.play"):
    """A card of the clicker's hand: played on their turn."""

    game = SPEC.key
    versioned = True
    fields = {"card": Int(1, CARDS)}
    card: int

    async def run(self, click: Click) -> None:
        seat = click.table.seat_of(click.user.id)
        if seat is None:
            raise TableError("not_seated")
        if click.table.engine is None or click.table.engine.to_move != seat:
            raise GameError("not_your_turn")
        await click.manager.act(click.table, click.user.id, Play(self.card), version=self.ver)
        if not click.interaction.response.is_done():
            await click.interaction.response.edit_message(content=t(click.lang, "highcard.you_played", card=self.card),
                                                          view=None)


class HighCardCog(GameCog, name="HighCard"):
    """High card tables."""

    slash = new_command(SPEC)
    spec = SPEC
    ui_class = HighCardUI
    items = (HandButton, PlayButton)


async def setup(bot: Any) -> None:
    await bot.add_cog(HighCardCog(bot))
