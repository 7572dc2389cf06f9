"""6 nimmt! at the table: ``/take6 new``, the public table message and the
private hand panel.

Everyone chooses at once (``Take6.to_act`` is a set of seats).  The table
message shows the rows and who has chosen (never what); each player's panel
has one button per card of their hand and, when their card is lower than
every row (S2), one button per row.  Everything shown comes from
``Take6.view(seat)`` or ``view(None)``; the rules live in ``core.games.take6.engine``.

Custom ids never hold a card: a card button carries the deal, the turn and
the card's place in the sorted hand (``take6.card:<table>:<deal>:<turn>:<index>``),
a row button ``take6.row:<table>:<deal>:<turn>:<row>``; a button of another
deal or turn is a panel from an earlier moment, which refreshes itself
instead of acting.  (Before typed items the same lived in the op's argument,
``d<deal>t<turn>i<index>``; :data:`_ARG` reads those ids.)
"""
from __future__ import annotations

import re
from collections import OrderedDict
from types import ModuleType
from typing import Any, ClassVar

import discord

from app.i18n.catalogue import has, t
from app.render import pool as render_pool
from cogs.games.take6 import render as render_take6
from cogs.games.take6.render import TAKE6_HAND_LABELS, TAKE6_TABLE_LABELS
from app.tables.manager import Table
from app.text import plain
from cogs.coach import hint_text
from cogs.common.ui import reply, view_of
from cogs.tables.game_ui import BaseUI, GameCog, new_command, TableMessage, picture_names, seat_label
from cogs.guard import BadInput, number
from cogs.tables.lobby import hand_controls, seat_control
from cogs.tables.panel import HandPanels, Panel, Picture, playing_seat
from cogs.tables.router import Click, Field, Int, TableButton
from core.protocol import Event, GameError
from core.games.take6 import SPEC
from core.games.take6.engine import HAND, HEADS, ROW_LABELS, ROW_MAX, ROWS, Choose, PickRow, row_for

KEY = "take6"
_ARG = re.compile(r"d(?P<deal>\d+)t(?P<turn>\d+)(?P<kind>[ir])(?P<n>\d+)")
HAND_IMAGES = 256  # panel pictures kept (~40 KB each): most panel redraws show rows and a hand that did not change


def move_text(lang: str, action: Any) -> str:
    """A move in words, for the coach.

    >>> from core.games.take6.players import Decision, Figure
    >>> d = Decision(Choose(34), 240, (Figure(Choose(34), 240, 0.5, 1.25, 0.6), Figure(Choose(7), 120, 0.3, 3.0, 0.5)))
    >>> print(hint_text("en", "take6", d, lambda a: move_text("en", a)))
    💡 Play 34: in 240 simulated worlds you take 1.2 penalty points on average over this turn and the next two.
    Next best, Play 7: 3.0 points.
    >>> move_text("de", PickRow(2))
    'Nimm Reihe C'
    """
    if isinstance(action, PickRow):
        return t(lang, "ai.move_row", label=ROW_LABELS[action.row])
    return t(lang, "ai.move_choose", card=action.card)


def card_text(card: int) -> str:
    """A card with its ox heads when it has more than one.

    >>> card_text(7), card_text(55)
    ('7', '55 (7🐮)')
    """
    return str(card) if HEADS[card] == 1 else f"{card} ({HEADS[card]}🐮)"


def cards_text(cards: list[int]) -> str:
    return ", ".join(str(c) for c in cards)


class Take6UI(BaseUI):
    key = KEY

    def __init__(self, bot: Any) -> None:
        super().__init__(bot)
        self.panels = HandPanels(self.panel)
        self._hand_images: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()

    def lobby_lines(self, table: Table, lang: str) -> list[str]:
        deals = table.options.get("deals")
        if deals:
            return [t(lang, "take6.lobby_deals", count=deals)]
        return [t(lang, "take6.lobby_limit", limit=table.options.get("limit", 66))]

    def name(self, table: Table, seat: int) -> str:
        return f"**{plain(table.seats[seat].name)}**"

    # ------------------------------------------------------------ table message
    async def table_message(self, table: Table, lang: str) -> TableMessage:
        view = table.view(None)
        labels = {k: t(lang, f"take6.r_{k}") for k in TAKE6_TABLE_LABELS}
        names = picture_names(table, lang)
        image = await render_pool.draw(render_take6.render_take6_table, view, names, labels,
                                       list(table.recent))  # the table pictures' process
        return TableMessage(title=t(lang, "take6.table_title", table=table.id), summary=self.summary(table, view, lang),
                            colour=discord.Colour.orange(), image=image, view=hand_controls(table, lang, Hand.make(
                                table.id, t(lang, "take6.my_hand"), style=discord.ButtonStyle.primary, emoji="🃏")))

    def progress(self, table: Table, lang: str) -> tuple[str, list[int]]:
        """How far the game is, and each seat's score so far (lower leads): a night's standings show it."""
        view = table.view(None)
        return t(lang, "take6.progress", deal=view["deal"]), list(view["scores"])

    def summary(self, table: Table, view: dict[str, Any], lang: str) -> str:
        """The table as text (screen readers, notifications): rows, and who has chosen, never what."""
        lines = [t(lang, "take6.summary_deal", deal=view["deal"], turn=view["turn"])]
        for r, cards in enumerate(view["rows"]):
            lines.append(t(lang, "take6.summary_row", row=ROW_LABELS[r], cards=" · ".join(map(str, cards)),
                           heads=view["row_heads"][r]))
        acting = set(view["to_act"])
        for seat in range(view["seats"]):
            chosen = t(lang, "take6.summary_chosen" if view["chosen"][seat] else "take6.summary_choosing")
            marker = "▶ " if seat in acting else ""
            lines.append(marker + t(lang, "take6.summary_player", name=seat_label(table, seat, lang),
                                    cards=view["hand_counts"][seat], chosen=chosen,
                pile=view["pile_sizes"][seat], score=view["scores"][seat], count=view["scores"][seat]))
        if view["phase"] == "row" and view["to_move"] is not None:
            lines.append(t(lang, "take6.summary_row_choice", name=plain(
                table.seats[view["to_move"]].name), card=view["pending"][0][1]))
        if acting and table.turn_deadline and any(not table.seats[s].automatic for s in acting):
            lines.append(t(lang, "table.deadline", when=f"<t:{int(table.turn_deadline)}:R>"))
        if table.options.get("hints"):
            lines.append(t(lang, "ai.hints_on"))
        return "\n".join(lines)[:4000]

    # --------------------------------------------------------------- narration
    def narrate(self, table: Table, events: list[Event], lang: str) -> list[str]:
        """The reveal card by card: what was shown, where each card went, who took what."""
        def name(seat: int) -> str:
            return self.name(table, seat)

        lines: list[str] = []
        for e in events:
            kind = e["type"]
            if kind == "deal_start":
                rows = ", ".join(f"**{ROW_LABELS[r]}** {c}" for r, c in enumerate(e["rows"]))
                lines.append(t(lang, "take6.deal_start", deal=e["deal"], rows=rows))
            elif kind == "reveal":
                lines.append(t(lang, "take6.reveal", cards=", ".join(f"{name(s)} {c}" for s, c in e["cards"])))
            elif kind == "placed":
                lines.append(t(lang, "take6.placed", name=name(e["seat"]), card=e["card"], row=ROW_LABELS[e["row"]]))
            elif kind == "sixth":
                lines.append(t(lang, "take6.sixth", name=name(e["seat"]), card=e["card"], row=ROW_LABELS[e["row"]],
                               cards=cards_text(e["cards"]), count=e["heads"]))
            elif kind == "row_choice":
                lines.append(t(lang, "take6.row_choice", name=name(e["seat"]), card=e["card"]))
            elif kind == "took_row":
                lines.append(t(lang, "take6.took_row", name=name(e["seat"]), card=e["card"],
                               row=ROW_LABELS[e["row"]], cards=cards_text(e["cards"]), count=e["heads"]))
            elif kind == "deal_over":
                lines.append(t(lang, "take6.deal_over", deal=e["deal"]))
                for seat, penalty in enumerate(e["penalties"]):
                    lines.append(t(lang, "take6.deal_line", name=name(seat), count=penalty, total=e["scores"][seat]))
            elif kind == "game_over":
                winners = ", ".join(name(s) for s in e["winners"])
                lines.append(t(lang, "take6.game_over", names=winners, count=len(e["winners"])))
                for seat in sorted(range(len(e["scores"])), key=lambda s: (e["places"][s], s)):
                    lines.append(t(lang, "table.standing", place=e["places"][seat], name=name(seat),
                                   score=e["scores"][seat]))
        return lines

    # ------------------------------------------------------------- hand panel
    def panel(self, table: Table, seat: int, lang: str, *, note: str | None = None) -> Panel:
        """The private panel of one seat (:class:`~cogs.tables.panel.HandPanels` shows it),
        from that seat's view only: text, buttons, and the picture of the rows with the
        hand (:func:`~cogs.games.take6.render.render_take6_hand`), so a card is chosen
        without looking up at the table."""
        engine = table.engine
        assert engine is not None
        view = engine.view(seat)
        hand = view["hand"]
        embed = discord.Embed(title=t(lang, "take6.panel_title", table=table.id), colour=discord.Colour.orange())
        rows = view["rows"]

        def goes(card: int) -> str:  # where the card would go if it were laid now
            row = row_for(card, rows)
            if row < 0:
                return t(lang, "take6.panel_low", card=card_text(card))
            key = "take6.panel_sixth" if len(rows[row]) >= ROW_MAX else "take6.panel_goes"
            return t(lang, key, card=card_text(card), row=ROW_LABELS[row])

        # the panel stands alone: the hand beside the rows, as on the table
        lines = [t(lang, "take6.panel_hand", count=len(hand), cards=" · ".join(goes(c) for c in hand) or "-")]
        lines += [t(lang, "take6.summary_row", row=ROW_LABELS[r], cards=" · ".join(map(str, cards)),
                    heads=view["row_heads"][r]) for r, cards in enumerate(rows)]
        lines.append(t(lang, "take6.panel_pile", count=view["my_pile_heads"]))
        if note:
            lines.insert(0, note)
        items: list[discord.ui.Item] = []
        when = dict(deal=view["deal"], turn=view["turn"])
        if table.status != "playing" or view["phase"] == "over":
            lines.append(t(lang, "take6.panel_over"))
        elif view["phase"] == "choose" and seat in view["to_act"]:
            lines.append(t(lang, "take6.panel_choose"))
            for index, card in enumerate(hand):  # one click per card; the id names its place, not the card
                heads = HEADS[card]
                style = discord.ButtonStyle.danger if heads >= 5 else (
                    discord.ButtonStyle.primary if heads > 1 else discord.ButtonStyle.secondary)
                items.append(CardButton.make(table.id, card_text(card), index=index, style=style,
                                             row=index // 5, **when))
        elif view["phase"] == "choose":
            waiting = ", ".join(plain(table.seats[s].name) for s in view["to_act"])
            lines.append(t(lang, "take6.panel_chosen", card=view["my_choice"], names=waiting or "-"))
        elif view["to_move"] == seat:
            lines.append(t(lang, "take6.panel_row", card=view["pending"][0][1]))
            for r, cards in enumerate(view["rows"]):
                items.append(RowButton.make(
                    table.id, t(lang, "take6.row_button", row=ROW_LABELS[r], count=view["row_heads"][r]),
                    row_index=r, style=discord.ButtonStyle.danger, row=2, **when))
        else:
            lines.append(t(lang, "take6.panel_row_wait", name=plain(
                table.seats[view["to_move"]].name), card=view["pending"][0][1]))
        items.append(Refresh.make(table.id, t(lang, "take6.refresh"), emoji="🔄", row=4))
        if table.options.get("hints") and table.status == "playing" and seat in view["to_act"] and (
                view["phase"] == "choose" or view["to_move"] == seat):  # the coach, for a move of one's own
            items.append(HintButton.make(table.id, t(lang, "ai.hint"), emoji="💡", row=4, **when))
        control = seat_control(table, seat, lang, row=4)
        if control is not None:
            items.append(control)
        embed.description = "\n".join(lines)[:4000]
        # the picture: this turn's cards (a card chosen still shows until the reveal, so
        # choosing leaves the picture as it was and the click is answered at once)
        mine = sorted([*hand, view["my_choice"]]) if view.get("my_choice") is not None else list(hand)
        shown = {"hand": mine, "rows": rows, "row_heads": view["row_heads"]}
        key = (lang, tuple(mine), tuple(map(tuple, rows)))
        return Panel(embed, view_of(*items), Picture(self._hand_cached(key), lambda: self._draw_hand(shown, lang, key)))

    async def _draw_hand(self, view: dict[str, Any], lang: str, key: tuple[Any, ...]) -> bytes:
        """The panel's picture, drawn off the event loop before queued table pictures."""
        labels = {k: t(lang, f"take6.r_{k}") for k in TAKE6_HAND_LABELS}
        image = await render_pool.draw(render_take6.render_take6_hand, view, labels, urgent=True)
        self._hand_images[key] = image
        while len(self._hand_images) > HAND_IMAGES:
            self._hand_images.popitem(last=False)
        return image

    def _hand_cached(self, key: tuple[Any, ...]) -> bytes | None:
        """The panel's picture if it was drawn lately (nothing it shows changed)."""
        image = self._hand_images.get(key)
        if image is not None:
            self._hand_images.move_to_end(key)
        return image

    def changed(self, table: Table) -> None:
        """The table moved: its open panels redraw themselves (a reveal may ask for a row)."""
        self.panels.changed(table)

    async def hint(self, click: Click, deal: int, turn: int) -> None:
        """The coach (unrated tables with hints on): a private answer of its own,
        for the caller's choice or row; a panel of another moment refreshes itself."""
        table = click.table
        seat = playing_seat(table, click.interaction)
        view = table.view(seat)
        if deal != view["deal"] or turn != view["turn"]:
            return await self.panels.show(click.interaction, table, seat, note=t(click.lang, "take6.stale_panel"))
        decision = await click.manager.hint(table, click.user.id)
        text = hint_text(click.lang, KEY, decision, lambda action: move_text(click.lang, action))
        await click.interaction.response.send_message(text, ephemeral=True)

    async def choose(self, click: Click, deal: int, turn: int, is_card: bool, n: int) -> None:
        """A card (``is_card``: the ``n``-th of the hand) or a row (S2) chosen in the
        panel of deal ``deal``, turn ``turn``; a panel of another moment refreshes itself."""
        interaction, table = click.interaction, click.table
        seat = playing_seat(table, interaction)
        lang = click.lang
        engine = table.engine
        assert engine is not None
        view = engine.view(seat)
        if deal != view["deal"] or turn != view["turn"]:
            return await self.panels.show(interaction, table, seat, note=t(lang, "take6.stale_panel"))
        if is_card:
            if n >= len(view["hand"]) or seat not in view["to_act"] or view["phase"] != "choose":
                return await self.panels.show(interaction, table, seat, note=t(lang, "take6.stale_panel"))
            card = view["hand"][n]
            action: Any = Choose(card)
            note = t(lang, "take6.chose_note", card=card)
        else:
            action = PickRow(n)
            note = None
        try:
            events = await click.manager.act(table, interaction.user.id, action)
        except GameError as error:
            key = f"take6.err_{error.code}"
            if has(key):
                return await reply(interaction, t(lang, key))
            raise
        if note is None:
            note = "\n".join(self.narrate(table, [e for e in events if e["type"] == "took_row"], lang)) or None
        await self.panels.show(interaction, table, seat, note=note)


# --------------------------------------------------------------------- items
# The panel's buttons name the deal and the turn they were drawn for, and a
# card by its place in the sorted hand (never the card): the others choose
# meanwhile, so the table's version is no test of a panel here.
WHEN: dict[str, Field] = {"deal": Int(0, 9999), "turn": Int(0, 99)}


class _PanelItem(TableButton):
    game = KEY


class Hand(_PanelItem, kind="take6.hand"):
    """*My hand* on the table message: the clicker's private panel."""

    legacy = "hand"

    async def run(self, click: Click) -> None:
        ui: Take6UI = click.ui
        # Acknowledged at once as an update of the table message (showing nothing): the
        # panel follows privately, and this click's token redraws the table from now on.
        await click.presenter.defer_on_table(click.table, click.interaction)
        await ui.panels.show(click.interaction, click.table, playing_seat(click.table, click.interaction), new=True)


class Refresh(_PanelItem, kind="take6.refresh"):
    legacy = "sixrefresh"

    async def run(self, click: Click) -> None:
        ui: Take6UI = click.ui
        await ui.panels.show(click.interaction, click.table, playing_seat(click.table, click.interaction))


def _legacy_when(arg: str | None, kind: str) -> tuple[int, int, int]:
    match = _ARG.fullmatch(arg or "")
    if match is None or match["kind"] != kind:
        raise BadInput(arg)
    return number(match["deal"]), number(match["turn"]), number(match["n"])


class CardButton(_PanelItem, kind="take6.card"):
    """The card at ``index`` of the hand, for this deal and turn."""

    legacy = "sixcard"
    fields = {**WHEN, "index": Int(0, HAND - 1)}
    deal: int
    turn: int
    index: int

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        deal, turn, index = _legacy_when(arg, "i")
        return {"deal": deal, "turn": turn, "index": index}

    async def run(self, click: Click) -> None:
        await click.ui.choose(click, self.deal, self.turn, True, self.index)


class RowButton(_PanelItem, kind="take6.row"):
    """The row taken by a card lower than every row (S2)."""

    legacy = "sixrow"
    fields = {**WHEN, "row_index": Int(0, ROWS - 1)}
    deal: int
    turn: int
    row_index: int

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        deal, turn, row = _legacy_when(arg, "r")
        return {"deal": deal, "turn": turn, "row_index": row}

    async def run(self, click: Click) -> None:
        await click.ui.choose(click, self.deal, self.turn, False, self.row_index)


class HintButton(_PanelItem, kind="take6.hint"):
    """The coach's suggestion for this deal and turn (hints on)."""

    fields = WHEN
    deal: int
    turn: int

    async def run(self, click: Click) -> None:
        await click.ui.hint(click, self.deal, self.turn)


ITEMS = (Hand, Refresh, CardButton, RowButton, HintButton)


class Take6Cog(GameCog, name="Take6"):
    """6 nimmt! tables."""

    slash = new_command(SPEC)
    spec = SPEC
    pictures: ClassVar[ModuleType | None] = render_take6
    ui_class = Take6UI
    items = ITEMS

    def table_options(self, seats: int, options: dict[str, Any]) -> dict[str, Any]:
        """A number of deals replaces the point limit."""
        if options.get("deals") is not None:
            options.pop("limit", None)
        return super().table_options(seats, options)


async def setup(bot: Any) -> None:
    await bot.add_cog(Take6Cog(bot))
