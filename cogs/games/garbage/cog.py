"""Garbage (Trash) at the table: ``/garbage new`` and the table's buttons.

Nothing in Garbage is secret but face-down cards, which nobody sees, so the
public table message carries the whole game and the buttons of the player
to move.  The engine plays every forced step; the table narrates the chain.
"""
from __future__ import annotations

import logging
from types import ModuleType
from typing import Any, ClassVar

import discord

from app.render import pool as render_pool
from cogs.games.garbage import render as render_garbage
from app.i18n.catalogue import t
from app.text import bold
from app.tables.manager import Table, TableError
from cogs.coach import hint_text
from cogs.common.ui import view_of
from cogs.tables.game_ui import BaseUI, GameCog, new_command, TableMessage, picture_names, seat_label
from cogs.tables.lobby import Back, Rules, step_away_button
from cogs.tables.router import Click, Int, TableButton
from core.games.garbage import SPEC
from core.games.garbage.engine import MAX_SLOTS, Discard, Draw, Jack
from core.protocol import Event, GameError

log = logging.getLogger(__name__)

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def move_text(lang: str, action: Any, discard_top: str | None) -> str:
    """A move in words, for the coach."""
    kind = type(action).__name__
    if kind == "Draw":
        return t(lang, "ai.move_draw")
    if kind == "Discard":
        return t(lang, "ai.move_discard", card=card_name(lang, discard_top) if discard_top else "-")
    return t(lang, "ai.move_jack", slot=action.slot)


def card_name(lang: str, card: str) -> str:
    """A card for the log: '7♥', 'J♠' — rank letters translated ('Q' is 'D' for Dame in German)."""
    rank, suit = card[:-1], card[-1]
    if rank in ("A", "J", "Q", "K"):
        rank = t(lang, f"garbage.rank_{rank}")
    return f"{rank}{SUITS.get(suit, suit)}"


class GarbageUI(BaseUI):
    key = "garbage"

    def replay_seat(self, seen: dict[str, Any], table: dict[str, Any], revealed: dict[str, Any] | None,
                    seat: int, name: str, lang: str) -> list[str]:
        """The seat's hand, if any, and its layout: face-down cards as ``[card]``
        (what ``revealed`` shows), empty slots as ▢."""
        lines = super().replay_seat(seen, table, revealed, seat, name, lang)
        players = table.get("players")
        if isinstance(players, list) and seat < len(players) and "layout" in players[seat]:
            under = ((revealed or {}).get("layouts") or [[]] * len(players))[seat]
            cards = " ".join(c if c else (f"[{under[k]}]" if k < len(under) else "▢")
                             for k, c in enumerate(players[seat]["layout"])) or "-"
            lines.append(t(lang, "after.replay_layout", name=name, cards=cards))
        return lines

    async def table_message(self, table: Table, lang: str) -> TableMessage:
        view = table.view(None)
        # The buttons carry the version of the moment this view shows: the game may move on
        # while the image is drawn, and a button must never act on a later state than its label.
        version = table.version
        if view["phase"] == "over":
            # The game's winner filled their single slot; the engine counts 0 slots left, but the
            # table shows the filled slot (not an empty layout and "1/0 face up").
            for player in view["players"]:
                player["slots"] = max(player["slots"], len(player["layout"]))
        names = picture_names(table, lang)
        labels = {k: t(lang, f"render.{k}") for k in render_garbage.GARBAGE_TABLE_LABELS}
        image = await render_pool.draw(render_garbage.render_garbage_table, view, names, labels, list(table.recent))
        return TableMessage(title=t(lang, "garbage.table_title", table=table.id), summary=self.summary(table, view, lang),
                            colour=discord.Colour.dark_green(), image=image, view=self.buttons(table, view, lang, version))

    def progress(self, table: Table, lang: str) -> tuple[str, list[int]]:
        """How far the game is, and each seat's score so far (lower leads): a night's standings show it."""
        view = table.view(None)
        return t(lang, "garbage.progress", hand=view["hand_no"]), [p["slots"] for p in view["players"]]

    def summary(self, table: Table, view: dict[str, Any], lang: str) -> str:
        lines = [t(lang, "garbage.summary_hand", hand=view["hand_no"], stock=view["stock"],
                   discard=card_name(lang, view["discard_top"]) if view["discard_top"] else "-")]
        for seat, player in enumerate(view["players"]):
            up = sum(1 for c in player["layout"] if c is not None)
            marker = "▶ " if seat == view["to_move"] else ""
            lines.append(marker + t(lang, "garbage.summary_player", name=seat_label(table, seat, lang),
                                    slots=player["slots"], up=up))
        if view["in_hand"]:
            lines.append(t(lang, "garbage.in_hand", card=card_name(lang, view["in_hand"])))
        if view["to_move"] is not None and table.turn_deadline and not table.seats[view["to_move"]].automatic:
            lines.append(t(lang, "table.deadline", when=f"<t:{int(table.turn_deadline)}:R>"))
        if table.options.get("hints"):
            lines.append(t(lang, "ai.hints_on"))
        return "\n".join(lines)[:4000]

    def buttons(self, table: Table, view: dict[str, Any], lang: str,
                version: int | None = None) -> discord.ui.View | None:
        if table.status != "playing" or view["to_move"] is None:
            return None
        ver = table.version if version is None else version
        items: list[discord.ui.Item] = []
        seat = view["to_move"]
        automatic = table.seats[seat].automatic
        if not automatic and view["phase"] == "source":
            items.append(DrawButton.make(table.id, t(lang, "garbage.draw"), ver=ver,
                                         style=discord.ButtonStyle.primary, row=0))
            if view["can_take_discard"] and view["discard_top"]:
                items.append(DiscardButton.make(
                    table.id, t(lang, "garbage.take_discard", card=card_name(lang, view["discard_top"])),
                    ver=ver, style=discord.ButtonStyle.success, row=0))
        elif not automatic and view["phase"] == "jack":
            for i, slot in enumerate(view["jack_slots"][:10]):
                items.append(JackButton.make(table.id, t(lang, "garbage.jack_slot", slot=slot), ver=ver,
                                             slot=slot, row=1 + i // 5))
        items.append(Rules.make(table.id, t(lang, "table.rules"), emoji="📖", row=3))
        if table.options.get("hints") and not automatic:  # the coach, for the player to move
            items.append(HintButton.make(table.id, t(lang, "ai.hint"), emoji="💡", ver=ver, row=3))
        if any(s.away for s in table.seats):
            items.append(Back.make(table.id, t(lang, "table.im_back"), row=3))
        if any(s.user_id is not None and not s.away for s in table.seats):  # (a table everyone plays from)
            items.append(step_away_button(table, lang, row=3))
        return view_of(*items)

    def narrate(self, table: Table, events: list[Event], lang: str) -> list[str]:
        """One line per move: a drawn card's chain, ended by the discard or by a Jack to
        place (the player's next move places it and goes on, a line of its own).  The
        lines follow from the events alone, however they come in batches: a move told as
        it is made and a hand replayed in one batch after a restart read the same."""
        lines: list[str] = []
        chain: list[str] = []
        actor: int | None = None

        def name(seat: int) -> str:
            return bold(table.seats[seat].name)

        def flush() -> None:
            nonlocal chain, actor
            if chain and actor is not None:
                lines.append(f"{name(actor)}: " + " → ".join(chain))
            chain, actor = [], None

        for e in events:
            kind = e["type"]
            if kind == "drew":
                flush()
                actor = e["seat"]
                key = "garbage.drew_stock" if e["source"] == "stock" else "garbage.drew_discard"
                chain.append(t(lang, key, card=card_name(lang, e["card"])))
            elif kind == "placed":
                chain.append(t(lang, "garbage.placed", slot=e["slot"], card=card_name(lang, e["uncovered"])))
            elif kind == "jack_placed":
                actor = e["seat"] if actor is None else actor
                chain.append(t(lang, "garbage.jack_placed", slot=e["slot"], card=card_name(lang, e["uncovered"])))
            elif kind == "swapped":
                chain.append(t(lang, "garbage.swapped", slot=e["slot"], card=card_name(lang, e["card"])))
            elif kind == "choose_jack":
                chain.append(t(lang, "garbage.choose_jack"))
                flush()  # the move ends here; the Jack's placing is the next move
            elif kind == "dead":
                chain.append(t(lang, f"garbage.dead_{e['reason']}", card=card_name(lang, e["card"])))
            elif kind == "discarded":
                chain.append(t(lang, "garbage.turn_over"))
                flush()
            elif kind == "reshuffle":
                flush()
                lines.append(t(lang, "garbage.reshuffle", count=e["count"]))
            elif kind == "hand_won":
                flush()
                if e["slots"] == 0:
                    continue  # the last hand: there is no next hand; game_over announces the win
                lines.append(t(lang, "garbage.hand_won", name=name(e["seat"]), hand=e["hand"], count=e["slots"]))
            elif kind == "hand_start":
                flush()
                lines.append(t(lang, "garbage.hand_start", hand=e["hand"], name=name(e["start"])))
            elif kind == "game_over":
                flush()
                lines.append(t(lang, "garbage.game_over", name=name(e["winner"])))
                order = sorted(range(len(e["places"])), key=lambda s: (e["places"][s], s))
                for seat in order:
                    lines.append(t(lang, "garbage.standing", place=e["places"][seat], name=name(seat),
                                   count=e["scores"][seat]))
        flush()
        return lines


# --------------------------------------------------------------------- items
# The buttons of the player to move, on the public table message.  Each
# carries the version its label shows: a click on an earlier state is stale.
class _MoveItem(TableButton):
    game = "garbage"
    versioned = True
    ver: int

    def mover(self, click: Click) -> None:
        """Only the player to move acts here."""
        seat = click.table.seat_of(click.user.id)
        if seat is None:
            raise TableError("not_seated")
        engine = click.table.engine
        if engine is None or engine.to_move != seat:
            raise GameError("not_your_turn")

    async def move(self, click: Click, action: Any) -> None:
        self.mover(click)
        # The click is answered at once (unless a slow save did) as an update of the table
        # message; the redrawn table follows through this click's token.
        waiting = click.presenter.expect_answer(click.table, click.interaction)
        try:
            await click.manager.act(click.table, click.user.id, action, version=self.ver)
            if not click.interaction.response.is_done():
                await click.interaction.response.defer()
        finally:
            if waiting:
                click.presenter.answered(click.table, click.interaction)


class DrawButton(_MoveItem, kind="garbage.draw"):
    legacy = "gdraw"

    async def run(self, click: Click) -> None:
        await self.move(click, Draw())


class DiscardButton(_MoveItem, kind="garbage.discard"):
    """Take the discard's top card."""

    legacy = "gdisc"

    async def run(self, click: Click) -> None:
        await self.move(click, Discard())


class JackButton(_MoveItem, kind="garbage.jack"):
    """Where a Jack goes."""

    legacy = "gjack"
    fields = {"slot": Int(0, MAX_SLOTS)}
    slot: int

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        return {"slot": cls.fields["slot"].read(arg or "0")}

    async def run(self, click: Click) -> None:
        await self.move(click, Jack(self.slot))


class HintButton(_MoveItem, kind="garbage.hint"):
    """The coach (unrated tables with hints on), for the player to move: answered privately."""

    legacy = "ghint"

    async def run(self, click: Click) -> None:
        self.mover(click)
        table = click.table
        decision = await click.manager.hint(table, click.user.id)
        top = table.view(None)["discard_top"]
        text = hint_text(click.lang, "garbage", decision, lambda action: move_text(click.lang, action, top))
        await click.interaction.response.send_message(text, ephemeral=True)


ITEMS = (DrawButton, DiscardButton, JackButton, HintButton)


class GarbageCog(GameCog, name="Garbage"):
    """Garbage tables."""

    slash = new_command(SPEC)
    spec = SPEC
    pictures: ClassVar[ModuleType | None] = render_garbage
    ui_class = GarbageUI
    items = ITEMS


async def setup(bot: Any) -> None:
    await bot.add_cog(GarbageCog(bot))
