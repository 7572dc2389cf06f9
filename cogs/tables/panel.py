"""A player's private hand panel, the same for every game: the game draws it
(:class:`Panel`: its text, controls and picture, from that seat's view only);
:class:`HandPanels` answers clicks with it and keeps every open panel current.

- A panel is only ever written onto an ephemeral message of its owner
  (:func:`~cogs.common.ui.on_own_private_message`): a click from anywhere
  else (a forged one on a public table message) gets a fresh private panel.
- One answer or redraw of a player's panel at a time (a lock per panel): a
  redraw that was under way never lands after, and wipes, a fresh answer.
- A panel keeps itself current while its interaction token lives
  (:data:`PANEL_LIFETIME`): each change of its table redraws it, once per
  burst of changes (:data:`PANEL_DEBOUNCE`), through the token's webhook
  (the panel's message, ``@original`` or the followup *My hand* sent); at the
  end of the game it shows the game is over, once, and is let go.
- A picture not drawn yet is drawn off the loop while the click is
  acknowledged in time (:data:`ANSWER_WITHIN`).
- A panel follows its player down the thread (:meth:`HandPanels.follow`):
  when the live table pings them, a fresh panel is sent through the same
  token as a new ephemeral followup, right below the ping (the move is one
  click), and the one before it is deleted.  Without a live token (none
  opened, too old, or the bot restarted) the ping's *My hand* opens one.
- A new panel sent as a followup (no nonce) is sent once: one whose answer was
  lost may have landed, unknown; the panel before it is deleted all the same
  and it is forgotten (:meth:`HandPanels._follow`, :meth:`HandPanels._lost`).
"""
from __future__ import annotations

import asyncio
import io
import logging
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

import aiohttp
import discord
from discord.utils import MISSING

from app.tables.manager import Table, TableError
from cogs.common.adapter import ORIGINAL, answer_id, id_of, let_go, quietly, sent_once
from cogs.common.ui import UNCERTAIN, on_own_private_message, user_lang

log = logging.getLogger(__name__)

PANEL_LIFETIME = 14 * 60  # seconds a panel keeps itself current (an interaction token lasts 15 minutes)
PANEL_DEBOUNCE = 0.3  # seconds a redraw waits: a computer's moves come in bursts, drawn once
ANSWER_WITHIN = 2.0  # seconds after a click: a new panel not drawn by then is deferred (Discord allows 3)
PICTURE = "hand.png"
REPLACED = 1024  # panels replaced below a ping whose clicks are answered anew (the latest ones)

Key = tuple[int, int]  # (table id, user id): one panel per player and table


@dataclass
class Picture:
    """A panel's picture: ``ready`` when it was drawn lately (nothing it shows
    changed), else ``draw`` draws it off the event loop."""

    ready: bytes | None
    draw: Callable[[], Awaitable[bytes]]

    async def drawn(self) -> bytes:
        return self.ready if self.ready is not None else await self.draw()


@dataclass
class Panel:
    """A seat's private panel as its game draws it."""

    embed: discord.Embed
    view: discord.ui.View
    picture: Picture | None = None  # shown as the embed's image (``attachment://hand.png``)


#: A game's panel of a seat: ``(table, seat, lang, *, note=None, **looking) -> Panel``,
#: ``looking`` what the player was looking at (e.g. a stack and a page: the keywords
#: the game's own clicks pass to :meth:`HandPanels.show`), kept across redraws;
#: ``note`` a line on top.
DrawPanel = Callable[..., Panel]


@dataclass
class _Open:
    """What redrawing an open panel needs: its interaction's webhook (the token),
    not the whole interaction with its message and member payloads."""

    webhook: discord.Webhook
    opened: float  # time.monotonic()
    lang: str
    version: int  # the table's version the panel shows
    looking: dict[str, Any] = field(default_factory=dict)
    #: the panel's message when it is a followup (opened by *My hand*, whose click answered
    #: as an update of the table message); None: the interaction's ``@original`` (its answer,
    #: the clicked panel, or the "thinking..." message the panel filled)
    message: int | None = None
    shown: int | None = None  # the panel's message id, when known (a click on it, or a followup)
    where: int | None = None  # the channel (the game's thread) its token sends to


def playing_seat(table: Table, interaction: discord.Interaction) -> int:
    """The clicker's seat at this running table (a panel is theirs only while they play)."""
    seat = table.seat_of(interaction.user.id)
    if seat is None:
        raise TableError("not_seated")
    if table.status != "playing":
        raise TableError("not_playing")
    return seat


def _elsewhere(table: Table, panel: _Open) -> bool:
    """Whether the panel was opened where the game no longer is (its thread deleted:
    Discord refuses what its token would send there)."""
    return panel.where is not None and panel.where != (table.thread_id or table.channel_id)


def _file(picture: bytes) -> discord.File:
    return discord.File(io.BytesIO(picture), filename=PICTURE)


class HandPanels:
    """Every open private panel of one game (its UI owns one, built with the
    function that draws a seat's panel)."""

    def __init__(self, draw: DrawPanel) -> None:
        self.draw = draw
        self.answer_within = ANSWER_WITHIN
        self.open: dict[Key, _Open] = {}
        self._refreshers: dict[Key, asyncio.Task[None]] = {}
        self._following: set[asyncio.Task[None]] = set()  # panels being sent below a ping
        #: messages of panels a fresh one replaced below a ping (deleted), the latest few
        self._replaced: OrderedDict[int, None] = OrderedDict()
        #: one lock per panel, kept while someone holds or waits for it
        self._locks: weakref.WeakValueDictionary[Key, asyncio.Lock] = weakref.WeakValueDictionary()

    def _lock(self, key: Key) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def show(self, interaction: discord.Interaction, table: Table, seat: int, *, new: bool = False,
                   note: str | None = None, **looking: Any) -> None:
        """Answer a click with the seat's panel: a new private message (``new``, e.g.
        *My hand*, or a click that is not on the clicker's own private message), else
        the clicked panel redrawn.  A new one whose click was acknowledged "thinking"
        fills that message (its ``@original``); one sent as a followup (the click
        acknowledged as an update of the table message) is sent once; its answer lost,
        see :meth:`_lost`."""
        lang = user_lang(interaction)
        key = (table.id, interaction.user.id)
        new = new or not on_own_private_message(interaction)
        async with self._lock(key):
            # A click on a panel that came down below a ping meanwhile (deleted) is answered
            # anew, and the panel that came down goes: one live panel.
            replaced = interaction.message is not None and interaction.message.id in self._replaced
            new = new or replaced
            before = self.open.get(key)
            version = table.version
            panel = self.draw(table, seat, lang, note=note, **looking)
            picture = await self._picture(interaction, panel.picture, new)
            embed, view = panel.embed, panel.view
            # (MISSING: discord.py sends no file, and keeps the message's attachments)
            file, attachments = MISSING, MISSING
            if picture is not None:
                embed.set_image(url=f"attachment://{PICTURE}")
                file = _file(picture)
                attachments = [file]
            message: int | None = None
            shown = interaction.message.id if interaction.message is not None and not new else None
            if interaction.response.is_done():
                if new and interaction.response.type == discord.InteractionResponseType.deferred_channel_message:
                    # "thinking..." (a picture drawn slowly: :meth:`_picture`): the panel fills it, an
                    # edit of its @original (sent again after a 5xx, it changes nothing; kept current there)
                    shown = await id_of(interaction.edit_original_response(embed=embed, view=view,
                                                                           attachments=attachments))
                elif new:
                    try:
                        with sent_once():  # (a followup: not sent again after a 5xx, see _follow)
                            sent = await id_of(interaction.followup.send(embed=embed, view=view, file=file,
                                                                         ephemeral=True, wait=True))
                    except UNCERTAIN:
                        return await self._lost(key, view, before)
                    shown = sent
                    if interaction.response.type == discord.InteractionResponseType.deferred_message_update:
                        message = sent  # (the click's @original is the table message)
                else:
                    await quietly(interaction.edit_original_response(embed=embed, view=view, attachments=attachments))
            elif new:
                shown = await answer_id(interaction.response.send_message(embed=embed, view=view, file=file,
                                                                          ephemeral=True))
            else:
                await quietly(interaction.response.edit_message(embed=embed, view=view, attachments=attachments))
            # It keeps itself current while its interaction token lives (and the game goes on:
            # the end was told to every panel open then, this one shows it already).
            if table.status == "playing":
                self.open[key] = _Open(interaction.followup, time.monotonic(), lang, version, looking, message, shown,
                                       interaction.channel_id)
            if replaced and before is not None:
                await self._replace(key, before)

    async def _picture(self, interaction: discord.Interaction, picture: Picture | None, new: bool) -> bytes | None:
        """The panel's picture; while one is drawn anew, the click is acknowledged in time."""
        if picture is None or picture.ready is not None:
            return None if picture is None else picture.ready
        drawing = asyncio.ensure_future(picture.draw())
        if not new and not interaction.response.is_done():
            # A click on the panel whose picture must be drawn anew (a move, already
            # saved) is acknowledged at once; the panel follows as an edit of it.
            await interaction.response.defer()
        age = (discord.utils.utcnow() - interaction.created_at).total_seconds()
        await asyncio.wait({drawing}, timeout=max(0.2, self.answer_within - max(0.0, age)))
        if not drawing.done() and not interaction.response.is_done():
            # the machine is busy: say "thinking" in time, then answer
            await interaction.response.defer(ephemeral=True, thinking=True)
        return await drawing

    def follow(self, table: Table, users: Sequence[int]) -> None:
        """The live table just pinged ``users``: each whose panel at this table is open
        through a token that still lives gets it afresh below the ping (:meth:`_follow`)."""
        now = time.monotonic()
        for user in users:
            key = (table.id, user)
            panel = self.open.get(key)
            if panel is None:
                continue
            if now - panel.opened > PANEL_LIFETIME:
                del self.open[key]  # too old to send with: the ping's My hand opens a new one
                continue
            if _elsewhere(table, panel):
                continue  # (its token sends to where it was opened: the game moved to a new thread since)
            task = asyncio.get_running_loop().create_task(self._follow(table, key, panel.lang, table.messages.get("table")))
            self._following.add(task)
            task.add_done_callback(self._following.discard)

    def tokens(self, table: Table) -> list[tuple[discord.Webhook, float]]:
        """The living tokens of this table's open panels in its thread (or channel), each
        with the time.monotonic() it is too old from: a public followup through one lands
        there, outside the bot's global limit (the presenter posts the live table so)."""
        where = table.thread_id or table.channel_id
        return [(panel.webhook, panel.opened + PANEL_LIFETIME) for (table_id, _), panel in self.open.items()
                if table_id == table.id and panel.where == where]

    async def _follow(self, table: Table, key: Key, lang: str, ping: int | None) -> None:
        """Send the seat's panel afresh through its token (a new ephemeral message, at the
        bottom of the thread, below the ``ping`` message), then delete the one it replaces
        through the same token.  Nothing is sent when the player opened a panel below the
        ping meanwhile (it is theirs to use) or has left the seat; a click answered on the
        panel above meanwhile (its token is fresher) is followed with.

        A followup has no nonce, so it is sent once (:func:`sent_once`: discord.py would
        send it again after a 5xx that came after it landed: two panels).  When its answer
        is lost (a 5xx, a dropped connection) it may have landed or not, and the bot cannot
        find out: an ephemeral message is in no channel's history and comes in no gateway
        event, and its token reaches it only by its id.  So the player is never left with
        two panels, nor with one the bot keeps current behind one it does not know: the
        panel above is deleted all the same and the panel is forgotten (nothing redraws or
        follows through that token).  Landed, the new panel is right below the ping and
        shows the turn the ping is about; a click on it is answered on it, re-checked
        against the game as it is then, and makes it the player's open panel again (the
        bot learns its id from the click: it is kept current and follows from there).
        Not landed, the ping's *My hand* opens a fresh one."""
        seat = table.seat_of(key[1])
        if seat is None or table.status != "playing":
            return
        version = table.version
        drawn = self.draw(table, seat, lang)
        file = MISSING
        if drawn.picture is not None:  # (drawn before the panel is held: a click on it is answered meanwhile)
            drawn.embed.set_image(url=f"attachment://{PICTURE}")
            file = _file(await drawn.picture.drawn())
        async with self._lock(key):
            panel = self.open.get(key)  # (a click may have been answered on it meanwhile: a fresher token)
            if panel is None or table.status != "playing" or panel.where != (table.thread_id or table.channel_id) or (
                    panel.shown is not None and ping is not None and panel.shown > ping):
                # let go of, the thread is gone, or a panel was opened below the ping meanwhile
                # (My hand on it): theirs to use
                let_go(drawn.view)
                return
            try:
                with sent_once():  # (not sent again by discord.py after a 5xx: it may have landed)
                    sent = await id_of(panel.webhook.send(embed=drawn.embed, view=drawn.view, file=file,
                                                          ephemeral=True, wait=True))
            except UNCERTAIN:
                return await self._lost(key, drawn.view, panel)
            except (discord.HTTPException, RuntimeError):
                # Expired, refused or shutting down (not posted): the ping's My hand opens a panel.
                log.debug("panel %s could not follow its player", key, exc_info=True)
                let_go(drawn.view)
                if self.open.get(key) is panel:
                    del self.open[key]
                return
            self.open[key] = _Open(panel.webhook, panel.opened, panel.lang, version, {}, sent, sent, panel.where)
            await self._replace(key, panel)  # one live panel: the one above goes
        if table.version != version:
            self.changed(table)  # the game moved on while it was drawn: the new panel shows it

    async def _lost(self, key: Key, view: discord.ui.View, before: _Open | None) -> None:
        """A new panel's followup whose answer was lost (a 5xx, a dropped connection): it
        may have landed, unknown to the bot (see :meth:`_follow`).  The player's open panel
        before it (``before``) is deleted all the same and forgotten: one panel at most, and
        none kept current behind one the bot does not know.  Called in the ``except``."""
        log.info("panel %s: its followup may have landed; forgotten", key, exc_info=True)
        let_go(view)
        if before is not None:
            if self.open.get(key) is before:
                del self.open[key]
            await self._replace(key, before)

    async def _replace(self, key: Key, panel: _Open) -> None:
        """A panel another one replaced is deleted through its own token (a click on it that
        was on its way is answered anew: :meth:`show`; one left behind answers as stale)."""
        if panel.shown is not None:
            self._replaced[panel.shown] = None
            while len(self._replaced) > REPLACED:
                self._replaced.popitem(last=False)
        try:
            await panel.webhook.delete_message(panel.message or ORIGINAL)
        except (discord.HTTPException, aiohttp.ClientError, OSError, RuntimeError):
            log.debug("panel %s: the one it replaced could not be deleted", key, exc_info=True)

    def changed(self, table: Table) -> None:
        """The table moved: redraw every open panel at it (the mover's own too, unless its
        click's answer shows the new state already), so a turn shows up without a click;
        at the end each shows the game is over, once."""
        now = time.monotonic()
        for key, panel in list(self.open.items()):
            if key[0] != table.id:
                continue
            if now - panel.opened > PANEL_LIFETIME or (table.status != "playing" and panel.version == table.version) \
                    or _elsewhere(table, panel):
                del self.open[key]  # too old, shown its last, or in a thread that is gone
                continue
            task = self._refreshers.get(key)
            if task is None or task.done():
                task = self._refreshers[key] = asyncio.get_running_loop().create_task(self._refresh(table, key))
                task.add_done_callback(self._forget_refresher(key))

    def _forget_refresher(self, key: Key) -> Callable[[asyncio.Task[None]], None]:
        """A done callback: a finished redraw's task is let go of."""
        def forget(done: asyncio.Task[None]) -> None:
            if self._refreshers.get(key) is done:
                del self._refreshers[key]
        return forget

    async def _refresh(self, table: Table, key: Key) -> None:
        await asyncio.sleep(PANEL_DEBOUNCE)  # a computer's moves come in bursts: draw once
        async with self._lock(key):
            while True:
                panel = self.open.get(key)
                seat = table.seat_of(key[1])
                if panel is None or seat is None or panel.version == table.version or _elsewhere(table, panel):
                    if panel is not None and (seat is None or table.status != "playing" or _elsewhere(table, panel)):
                        del self.open[key]  # nothing will change on it any more
                    return
                version = table.version
                over = table.status != "playing"
                drawn = self.draw(table, seat, panel.lang, **panel.looking)
                attachments = MISSING
                if drawn.picture is not None:
                    drawn.embed.set_image(url=f"attachment://{PICTURE}")
                    attachments = [_file(await drawn.picture.drawn())]
                try:
                    await quietly(panel.webhook.edit_message(panel.message or ORIGINAL, embed=drawn.embed,
                                                             view=drawn.view, attachments=attachments))
                    panel.version = version
                except (discord.HTTPException, aiohttp.ClientError, OSError, RuntimeError):
                    # Expired, dismissed, Discord trouble or shutting down: the player
                    # still has My hand and Refresh.
                    log.debug("panel %s could not be redrawn", key, exc_info=True)
                    over = True
                if over:  # nothing will change any more (or it cannot be shown): let go of it
                    if self.open.get(key) is panel:
                        del self.open[key]
                    return
