"""11 nimmt! at the table: ``/nimmt new``, the public table message and the
private hand panel.

Everything shown comes from ``Nimmt.view(seat)`` (a player's own panel) or
``Nimmt.view(None)`` (the table); the rules live in ``core.games.nimmt.engine``.
"""
from __future__ import annotations

from collections import OrderedDict
from types import ModuleType
from typing import Any, ClassVar

import discord

from app.render import pool as render_pool
from cogs.games.nimmt import render as render_nimmt
from app.i18n.catalogue import t
from app.text import bold, label, plain
from app.tables.manager import Table, TableError
from cogs.coach import hint_text
from cogs.common.ui import view_of
from cogs.tables.game_ui import BaseUI, GameCog, new_command, TableMessage, picture_names, seat_label
from cogs.tables.lobby import hand_controls, seat_control
from cogs.tables.panel import HandPanels, Panel, Picture, playing_seat
from cogs.tables.router import Click, Field, Int, TableButton, TableItem, TableSelect, legacy_page
from core.games.nimmt import SPEC
from core.games.nimmt.engine import HEADS, Open, Pass, Play, Steal, Take, stack_label
from core.protocol import Event


def move_text(lang: str, action: Any, names: list[str]) -> str:
    """A move in words, for the coach.

    >>> from core.games.nimmt.engine import Play
    >>> from core.games.nimmt.players import Decision, Figure
    >>> from cogs.coach import hint_text
    >>> d = Decision(Play(1, (56,)), 200, (Figure(Play(1, (56,)), 200, 0.41, 2.5, 1.0),))
    >>> hint_text("en", "nimmt", d, lambda a: move_text("en", a, ["Ana", "Ben"]), last_round=True)
    '💡 Play 56 on B: in 200 simulated endings of the game you finish first 41% of the time and take 2.5 penalty points on average.'
    """
    kind = type(action).__name__
    if kind == "Play":
        return t(lang, "ai.move_play", cards=", ".join(map(str, action.cards)), label=stack_label(action.stack))
    if kind == "Take":
        return t(lang, "ai.move_take", label=stack_label(action.stack))
    if kind == "Pass":
        return t(lang, "ai.move_pass")
    if kind == "Steal":
        return t(lang, "ai.move_steal", name=plain(names[action.victim]))
    return t(lang, "ai.move_open", card=action.card)

PAGE = 25  # options per select menu (Discord's limit)
HAND_IMAGES = 512  # hand pictures kept (~15 KB each): most panel redraws show a hand that did not change
QUICK_PLAYS = 10  # one-click buttons (card on stack) when no more pairs than this fit
QUICK_TAKES = 10  # one-click Take buttons (one per stack) when nothing fits and no more stacks than this lie


def cards_text(cards: list[int]) -> str:
    """Cards in words.

    >>> cards_text([56, 59, 64])
    '56, 59, 64'
    """
    return ", ".join(str(c) for c in cards)


def labels(lang: str, keys: tuple[str, ...]) -> dict[str, str]:
    return {key: t(lang, f"render.{key}") for key in keys}


class NimmtUI(BaseUI):
    key = "nimmt"

    def __init__(self, bot: Any) -> None:
        super().__init__(bot)
        self.panels = HandPanels(self.panel)
        self._hand_images: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()

    def lobby_lines(self, table: Table, lang: str) -> list[str]:
        rounds = table.options.get("rounds")  # (hints on: said by the shared lobby)
        if rounds is None:
            return [t(lang, "table.lobby_rounds_auto")]
        return [t(lang, "table.lobby_rounds", rounds=rounds)]

    # ------------------------------------------------------------ table message
    def names(self, table: Table) -> list[str]:
        return [seat.name for seat in table.seats]

    async def table_message(self, table: Table, lang: str) -> TableMessage:
        view = table.view(None)
        image = await render_pool.draw(render_nimmt.render_nimmt_table, view, picture_names(table, lang),
                                       labels(lang, render_nimmt.NIMMT_TABLE_LABELS), list(table.recent))
        return TableMessage(title=t(lang, "nimmt.table_title", table=table.id), summary=self.summary(table, view, lang),
                            colour=discord.Colour.orange(), image=image, view=hand_controls(table, lang, Hand.make(
                                table.id, t(lang, "nimmt.my_hand"), style=discord.ButtonStyle.primary, emoji="🃏")))

    def progress(self, table: Table, lang: str) -> tuple[str, list[int]]:
        """How far the game is, and each seat's score so far (lower leads): a night's standings show it."""
        view = table.view(None)
        return t(lang, "nimmt.progress", round=view["round"], rounds=view["rounds"]), list(view["scores"])

    def summary(self, table: Table, view: dict[str, Any], lang: str) -> str:
        """The table as text: for screen readers and notifications."""
        lines = [t(lang, "nimmt.summary_round", round=view["round"], rounds=view["rounds"],
                   draw=view["draw_pile"], supply=view["supply"])]
        stacks = " · ".join(f"**{s['label']}** {s['top']} ({s['heads']}🐮)" for s in view["stacks"])
        lines.append(t(lang, "nimmt.summary_stacks", stacks=stacks or "-"))
        for seat in range(len(table.seats)):
            marker = "▶ " if seat == view["to_move"] else ""
            lines.append(marker + t(lang, "nimmt.summary_player", name=seat_label(table, seat, lang),
                                    cards=t(lang, "talk.cards", count=view["hand_counts"][seat]),
                                    bulls=t(lang, "talk.bulls", count=view["bulls"][seat]),
                                    score=t(lang, "talk.points", count=view["scores"][seat])))
        if view["to_move"] is not None and table.turn_deadline and not table.seats[view["to_move"]].automatic:
            lines.append(t(lang, "table.deadline", when=f"<t:{int(table.turn_deadline)}:R>"))
        if table.options.get("hints"):
            lines.append(t(lang, "ai.hints_on"))
        text = "\n".join(lines)
        return text[:4000]

    # --------------------------------------------------------------- narration
    def narrate(self, table: Table, events: list[Event], lang: str) -> list[str]:
        def name(seat: int) -> str:
            return bold(table.seats[seat].name)

        lines: list[str] = []
        for e in events:
            kind = e["type"]
            if kind == "played":
                lines.append(t(lang, "nimmt.played", name=name(e["seat"]), cards=cards_text(e["cards"]),
                               label=e["label"], onto=e["onto"]))
            elif kind == "passed":
                lines.append(t(lang, "nimmt.passed", name=name(e["seat"])))
            elif kind == "took":
                lines.append(t(lang, "nimmt.took", name=name(e["seat"]), label=e["label"], top=e["top"],
                               count=e["count"]))
            elif kind == "bull":
                if e.get("source") == "player":
                    lines.append(t(lang, "nimmt.bull_from", name=name(e["seat"]), victim=name(e["victim"])))
                else:
                    lines.append(t(lang, "nimmt.bull_supply", name=name(e["seat"])))
            elif kind == "no_bull":
                lines.append(t(lang, "nimmt.no_bull", name=name(e["seat"])))
            elif kind == "revealed":
                if e["stacks"]:
                    stacks = ", ".join(f"**{s['label']}** {s['top']}" for s in e["stacks"])
                    lines.append(t(lang, "nimmt.revealed", stacks=stacks))
                else:
                    lines.append(t(lang, "nimmt.revealed_none"))
            elif kind == "opened":
                lines.append(t(lang, "nimmt.opened", name=name(e["seat"]), label=e["label"], card=e["card"]))
            elif kind == "round_start":
                lines.append(t(lang, "nimmt.round_start", round=e["round"], name=name(e["start"])))
            elif kind == "round_over":
                lines.append(t(lang, "nimmt.round_over", round=e["round"], name=name(e["out"])))
                for seat, hand in enumerate(e["hands"]):
                    lines.append(t(lang, "nimmt.round_hand", name=name(seat),
                                   cards=cards_text(hand) or "-", count=e["penalties"][seat],
                                   total=e["scores"][seat]))
            elif kind == "game_over":
                winners = ", ".join(name(s) for s in e["winners"])
                lines.append(t(lang, "nimmt.game_over", names=winners, count=len(e["winners"])))
                order = sorted(range(len(e["scores"])), key=lambda s: (e["places"][s], s))
                for seat in order:
                    lines.append(t(lang, "table.standing", place=e["places"][seat], name=name(seat),
                                   score=e["scores"][seat]))
        return lines

    # ------------------------------------------------------------- hand panel
    def panel(self, table: Table, seat: int, lang: str, *, note: str | None = None, stack: int | None = None,
              page: int = 0) -> Panel:
        """The private panel of one seat (:class:`~cogs.tables.panel.HandPanels` shows it),
        built from that seat's view only; ``stack`` and ``page``: what the player was
        looking at.  Its picture is the one drawn last time when nothing it shows changed."""
        embed, items, view = self.panel_parts(table, seat, lang, stack=stack, page=page, note=note)
        key = self._hand_key(view, lang)
        return Panel(embed, items, Picture(self._hand_cached(key), lambda: self._draw_hand(view, lang, key)))

    async def hand_image(self, view: dict[str, Any], lang: str) -> bytes:
        """The picture of a seat's hand, drawn in the click pictures' process (never on the
        event loop) before queued table pictures, or the same picture as last
        time when nothing it shows changed."""
        key = self._hand_key(view, lang)
        return self._hand_cached(key) or await self._draw_hand(view, lang, key)

    async def _draw_hand(self, view: dict[str, Any], lang: str, key: tuple[Any, ...]) -> bytes:
        image = await render_pool.draw(render_nimmt.render_nimmt_hand, view, labels(lang, render_nimmt.NIMMT_HAND_LABELS),
                                  urgent=True)
        self._hand_images[key] = image
        while len(self._hand_images) > HAND_IMAGES:
            self._hand_images.popitem(last=False)
        return image

    @staticmethod
    def _hand_key(view: dict[str, Any], lang: str) -> tuple[Any, ...]:
        playable = view["playable"] or {}
        return (lang, tuple(view["hand"]), tuple(sorted((str(k), tuple(v)) for k, v in playable.items())),
                tuple((s["id"], s["label"]) for s in view["stacks"]) if playable else ())

    def _hand_cached(self, key: tuple[Any, ...]) -> bytes | None:
        """The picture of this hand if it was drawn lately (nothing it shows changed)."""
        image = self._hand_images.get(key)
        if image is not None:
            self._hand_images.move_to_end(key)
        return image

    def panel_parts(self, table: Table, seat: int, lang: str, *, stack: int | None = None, page: int = 0,
                    note: str | None = None) -> tuple[discord.Embed, discord.ui.View, dict[str, Any]]:
        """The panel's text and controls, and the seat's view its picture is drawn from."""
        engine = table.engine
        assert engine is not None
        view = engine.view(seat)
        hand = view["hand"]
        embed = discord.Embed(title=t(lang, "nimmt.panel_title", table=table.id), colour=discord.Colour.orange())
        from core.games.nimmt.engine import HEADS

        hand_text = " · ".join(f"{c}" + ("" if HEADS[c] == 1 else f"({HEADS[c]}🐮)") for c in hand)
        # the panel stands alone: the hand, the stacks and what fits, as text too
        stacks = " · ".join(f"**{s['label']}** {s['top']} ({s['heads']}🐮)" for s in view["stacks"])
        lines = [t(lang, "nimmt.panel_hand", count=len(hand), cards=hand_text or "-"),
                 t(lang, "nimmt.summary_stacks", stacks=stacks or "-"),
                 t(lang, "nimmt.panel_bulls", count=view["bulls"][seat])]
        labels_of = {str(s["id"]): s["label"] for s in view["stacks"]}
        fits = " · ".join(f"**{labels_of.get(str(sid), sid)}** {cards_text(cards)}"
                          for sid, cards in (view.get("playable") or {}).items() if cards)
        if fits and view["to_move"] == seat:
            lines.insert(2, t(lang, "nimmt.panel_fits", fits=fits))
        if note:
            lines.insert(0, note)
        items: list[discord.ui.Item] = []
        ver = table.version
        if table.status != "playing" or view["to_move"] is None:
            lines.append(t(lang, "nimmt.panel_over"))
        elif view["to_move"] != seat:
            lines.append(t(lang, "nimmt.panel_waiting", name=plain(table.seats[view["to_move"]].name)))
        elif view["phase"] == "steal":
            lines.append(t(lang, "nimmt.panel_steal"))
            options = [discord.SelectOption(label=label(table.seats[v].name), value=str(v),
                                            description=t(lang, "nimmt.bull_count", count=view["bulls"][v]))
                       for v in view["victims"]]
            items.append(StealSelect.make(table.id, t(lang, "nimmt.choose_victim"), options, ver=ver))
        elif view["phase"] == "open":
            lines.append(t(lang, "nimmt.panel_open"))
            pages = max(1, -(-len(hand) // PAGE))
            page = min(max(page, 0), pages - 1)
            options = [discord.SelectOption(label=str(c), value=str(c)) for c in hand[page * PAGE:(page + 1) * PAGE]]
            items.append(OpenSelect.make(table.id, t(lang, "nimmt.choose_open"), options, ver=ver, page=page))
            items.extend(self._pager(table, OpenPage, page, pages, lang))
        else:
            items.extend(self._play_controls(table, view, lang, stack, page, lines))
        items.append(Refresh.make(table.id, t(lang, "nimmt.refresh"), emoji="🔄", row=4))
        if table.options.get("hints") and table.status == "playing" and view["to_move"] == seat:
            items.append(HintButton.make(table.id, t(lang, "ai.hint"), emoji="💡", ver=ver, row=4))
        control = seat_control(table, seat, lang, row=4)
        if control is not None:
            items.append(control)
        embed.description = "\n".join(lines)[:4000]
        return embed, view_of(*items), view

    def _pager(self, table: Table, kind: type["Page"], page: int, pages: int, lang: str) -> list[discord.ui.Item]:
        if pages <= 1:
            return []
        # (a disabled end keeps an id of its own: the page it would show if it could)
        return [
            kind.make(table.id, t(lang, "nimmt.page_prev"), ver=table.version, page=max(page - 1, 0),
                      disabled=page == 0, row=3),
            kind.make(table.id, t(lang, "nimmt.page_next"), ver=table.version, page=min(page + 1, pages - 1),
                      disabled=page >= pages - 1, row=3),
        ]

    def _play_controls(self, table: Table, view: dict[str, Any], lang: str, stack: int | None, page: int,
                       lines: list[str]) -> list[discord.ui.Item]:
        ver = table.version
        turn = view["turn"]
        played = set(turn["played_stacks"])
        several = turn["several_cards"]
        playable = {int(k): v for k, v in view["playable"].items()}
        stacks = [s for s in view["stacks"] if s["id"] not in played]
        by_id = {s["id"]: s for s in view["stacks"]}
        # The common case in one click: a button per card that fits a stack, when they all fit.
        pairs = [(s["id"], card) for s in stacks for card in playable.get(s["id"], [])]
        quick = stack is None and 0 < len(pairs) <= QUICK_PLAYS
        items: list[discord.ui.Item] = []
        if played:
            lines.append(t(lang, "nimmt.panel_more", done=len(played), max=view["turn"]["max_stacks"]))
        elif playable and several:
            lines.append(t(lang, "nimmt.panel_turn", count=turn["max_stacks"]))
        elif playable:
            lines.append(t(lang, "talk.panel_turn_one_card"))
        else:
            lines.append(t(lang, "nimmt.panel_must_take"))
        if quick:
            lines.append(t(lang, "talk.panel_quick"))
        pages = max(1, -(-len(stacks) // PAGE))
        page = min(max(page, 0), pages - 1)
        options = []
        for s in stacks[page * PAGE:(page + 1) * PAGE]:
            fit = playable.get(s["id"], [])
            desc = t(lang, "nimmt.stack_fits", count=len(fit)) if fit else t(lang, "nimmt.stack_no_fit")
            options.append(discord.SelectOption(
                label=t(lang, "nimmt.stack_option", label=s["label"], top=s["top"], heads=s["heads"]),
                value=str(s["id"]), description=desc, default=s["id"] == stack))
        if options:
            items.append(StackSelect.make(table.id, t(lang, "nimmt.choose_stack"), options, ver=ver, page=page,
                                          row=0))
        if stack is None and not playable and turn["can_take"] and len(stacks) <= QUICK_TAKES:
            # Nothing fits: taking a stack is one click too, a button per stack.
            for n, s in enumerate(stacks):
                items.append(TakeButton.make(table.id, t(lang, "nimmt.take_quick", label=s["label"], top=s["top"],
                                                         heads=s["heads"]), ver=ver, stack=s["id"],
                                             style=discord.ButtonStyle.danger, row=1 + n // 5))
        if quick:
            index = {card: i for i, card in enumerate(view["hand"])}
            for n, (sid, card) in enumerate(pairs):
                # The button names the card by its place in the hand (never the card itself);
                # the version pins the hand, so the place stays that card.
                items.append(PlayButton.make(
                    table.id, t(lang, "talk.quick_play", card=card, label=by_id[sid]["label"]), ver=ver,
                    stack=sid, place=index[card], style=discord.ButtonStyle.primary, row=1 + n // 5))
        if stack is not None and stack in by_id and stack not in played:
            label = by_id[stack]["label"]
            fit = playable.get(stack, [])
            if fit:
                card_options = [discord.SelectOption(label=str(c), value=str(c)) for c in fit]
                placeholder = t(lang, "nimmt.choose_cards" if several else "nimmt.choose_card", label=label)
                items.append(CardsSelect.make(table.id, placeholder, card_options, ver=ver, stack=stack,
                                              max_values=len(fit) if several else 1, row=1))
            if turn["can_take"]:
                items.append(TakeButton.make(table.id, t(lang, "nimmt.take", label=label), ver=ver,
                                             stack=stack, style=discord.ButtonStyle.danger, row=2))
        if turn["can_pass"]:
            items.append(PassButton.make(table.id, t(lang, "nimmt.end_turn"), ver=ver,
                                         style=discord.ButtonStyle.success, row=3 if quick else 2))
        items.extend(self._pager(table, Page, page, pages, lang))
        return items

    def changed(self, table: Table) -> None:
        """The table moved: its open panels redraw themselves."""
        self.panels.changed(table)

    async def stale_panel(self, click: Click) -> None:
        """A panel from an earlier moment refreshes itself instead of acting."""
        seat = playing_seat(click.table, click.interaction)
        await self.panels.show(click.interaction, click.table, seat, note=t(click.lang, "nimmt.stale_panel"))

    async def hint(self, click: Click) -> None:
        """The coach (unrated tables with hints on): a private answer of its own."""
        table = click.table
        seat = playing_seat(table, click.interaction)
        decision = await click.manager.hint(table, click.user.id)
        view = table.view(seat)
        names = self.names(table)
        text = hint_text(click.lang, "nimmt", decision, lambda action: move_text(click.lang, action, names),
                         last_round=view["round"] >= view["rounds"])
        await click.interaction.response.send_message(text, ephemeral=True)

    async def act(self, click: Click, ver: int | None, action: Any) -> None:
        """A move from the panel: saved, then the panel shows what it did."""
        table = click.table
        seat = playing_seat(table, click.interaction)
        try:
            events = await click.manager.act(table, click.user.id, action, version=ver)
        except TableError as error:
            if error.code != "stale":
                raise
            return await self.stale_panel(click)
        note = "\n".join(self.narrate(table, [e for e in events if e["type"] in
                                              ("played", "took", "bull", "no_bull", "opened", "passed")], click.lang))
        await self.panels.show(click.interaction, table, seat, note=note or None)


# --------------------------------------------------------------------- items
# The table message's My hand and the private panel's controls.  A panel's
# items carry the table's version: one from an earlier moment refreshes the
# panel instead of acting.  A card is never in an id: the quick play names
# its place in the (version-pinned) hand; the menus' values are checked.
STACK = Int(0, 999)
PLACE = Int(0, len(HEADS) - 2)  # a place in a hand
CARD = Int(1, len(HEADS) - 1)


class _PanelItem(TableItem):
    game = "nimmt"
    ver: int

    async def stale(self, click: Click) -> None:
        await click.ui.stale_panel(click)


class Hand(_PanelItem, TableButton, kind="nimmt.hand"):
    """*My hand* on the table message: the clicker's private panel."""

    legacy = "hand"

    async def run(self, click: Click) -> None:
        ui: NimmtUI = click.ui
        # Acknowledged at once as an update of the table message (showing nothing): the
        # panel follows privately, and this click's token redraws the table from now on.
        await click.presenter.defer_on_table(click.table, click.interaction)
        await ui.panels.show(click.interaction, click.table, playing_seat(click.table, click.interaction), new=True)


class Refresh(_PanelItem, TableButton, kind="nimmt.refresh"):
    legacy = "nrefresh"

    async def run(self, click: Click) -> None:
        ui: NimmtUI = click.ui
        await ui.panels.show(click.interaction, click.table, playing_seat(click.table, click.interaction))


class HintButton(_PanelItem, TableButton, kind="nimmt.hint"):
    legacy = "nhint"
    versioned = True

    async def run(self, click: Click) -> None:
        await click.ui.hint(click)


class _Paged(_PanelItem):
    """A control of the panel that keeps the page of its menu (versioned)."""

    versioned = True
    fields: ClassVar[dict[str, Field]] = {"page": Int(0, 999)}
    page: int

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        return {"page": legacy_page(arg)}


class Page(_Paged, TableButton, kind="nimmt.page"):
    """The stack menu's other page."""

    legacy = "npage"

    async def run(self, click: Click) -> None:
        ui: NimmtUI = click.ui
        await ui.panels.show(click.interaction, click.table, playing_seat(click.table, click.interaction),
                             page=self.page)


class OpenPage(Page, kind="nimmt.opage"):
    """The menu of cards that may open a stack, another page."""

    legacy = "nopage"


class StackSelect(_Paged, TableSelect, kind="nimmt.stack"):
    """Which stack to play on (the panel then shows what fits it)."""

    legacy = "nstack"
    value = STACK

    async def run(self, click: Click) -> None:
        ui: NimmtUI = click.ui
        await ui.panels.show(click.interaction, click.table, playing_seat(click.table, click.interaction),
                             stack=self.choice, page=self.page)


class PlayButton(_PanelItem, TableButton, kind="nimmt.play"):
    """One click: the card at ``place`` in the hand onto ``stack``."""

    legacy = "nplay"
    versioned = True
    fields = {"stack": STACK, "place": PLACE}
    stack: int
    place: int

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        stack, _, place = (arg or "").partition(".")
        return {"stack": STACK.read(stack), "place": PLACE.read(place)}

    async def run(self, click: Click) -> None:
        hand = click.table.view(playing_seat(click.table, click.interaction))["hand"]
        if self.place >= len(hand):
            raise TableError("stale")
        await click.ui.act(click, self.ver, Play(self.stack, (hand[self.place],)))


class CardsSelect(_PanelItem, TableSelect, kind="nimmt.cards"):
    """The cards that fit ``stack`` (several at once with bull cards)."""

    legacy = "ncards"
    versioned = True
    fields = {"stack": STACK}
    value = CARD
    choices = 25
    stack: int

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        return {"stack": STACK.read(arg or "0")}

    async def run(self, click: Click) -> None:
        await click.ui.act(click, self.ver, Play(self.stack, tuple(self.values)))


class TakeButton(_PanelItem, TableButton, kind="nimmt.take"):
    legacy = "ntake"
    versioned = True
    fields = {"stack": STACK}
    stack: int

    @classmethod
    def from_legacy(cls, ver: int | None, arg: str | None) -> dict[str, Any]:
        return {"stack": STACK.read(arg or "0")}

    async def run(self, click: Click) -> None:
        await click.ui.act(click, self.ver, Take(self.stack))


class PassButton(_PanelItem, TableButton, kind="nimmt.pass"):
    """*End turn* (a bull-card turn may stop early)."""

    legacy = "npass"
    versioned = True

    async def run(self, click: Click) -> None:
        await click.ui.act(click, self.ver, Pass())


class StealSelect(_PanelItem, TableSelect, kind="nimmt.steal"):
    """Whom to take a bull card from on a tie."""

    legacy = "nsteal"
    versioned = True
    value = Int(0, 99)

    async def run(self, click: Click) -> None:
        await click.ui.act(click, self.ver, Steal(self.choice))


class OpenSelect(_Paged, TableSelect, kind="nimmt.open"):
    """Which card opens a stack when none is left."""

    legacy = "nopen"
    value = CARD

    async def run(self, click: Click) -> None:
        await click.ui.act(click, self.ver, Open(self.choice))


ITEMS = (Hand, Refresh, HintButton, Page, OpenPage, StackSelect, PlayButton, CardsSelect, TakeButton, PassButton,
         StealSelect, OpenSelect)


class NimmtCog(GameCog, name="Nimmt"):
    """11 nimmt! tables."""

    slash = new_command(SPEC)
    spec = SPEC
    pictures: ClassVar[ModuleType | None] = render_nimmt
    ui_class = NimmtUI
    items = ITEMS


async def setup(bot: Any) -> None:
    await bot.add_cog(NimmtCog(bot))
