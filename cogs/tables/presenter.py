"""Presenting a table: the thread as a record, the live table at its bottom,
one ping per turn, the standings at the end, and resuming after a start.

The thread reads as a record, not a chat log: the narration of a round (or
deal) is gathered and posted as that round's record once it ends (in order,
once: each message named by a nonce from its first line's serial), and the
*live table* is always the newest message.  It shows the picture, whose turn
it is, the last few moves and the controls; when a person must act it is
posted anew at the bottom and pings them (the ping carries the controls),
and the live table before it is deleted (through the token of a click on it
while one lives: Discord does not count that against the bot's global
limit).  A change that needs no ping (a computer's move, the same turn going
on) edits the live table in place.
"""
from __future__ import annotations

import asyncio
import contextvars
import io
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

import discord

from app import budget
from app.i18n.catalogue import t
from app.tables.manager import Table, TableManager, starts_turn
from app.text import plain
from core import registry
from core.protocol import Event, to_act
from cogs.common.adapter import ORIGINAL, id_of, quietly, sent_once
from cogs.common.ui import NO_PINGS, TRANSIENT, UNCERTAIN, owed, view_of
from cogs.tables.game_ui import TABLE_PICTURE, GameUI, TableExtra, TableMessage, variant_line
from cogs.tables.lobby import Lobby, PlayAgain, Watch, pinging

log = logging.getLogger(__name__)

RETRY_DELAY = 0.5  # seconds before a message Discord failed is tried again, doubling with each failure...
RETRY_MAX = 30.0  # ... up to this: what the bot owes is tried until it lands (and again after a restart)
ANSWER_LIFETIME = 14 * 60  # seconds an interaction token may edit its message (Discord: 15 minutes)
ANSWER_WAIT = 3.0  # seconds a redraw waits for the acknowledgement of the click that caused it


@dataclass(slots=True)
class _Item:
    """One thing the thread is told: a narration line, or the ping of a turn.

    The last item of a change carries ``upto``, the table's version (log
    entries), and ``notes``, how many notes the table had made
    (:meth:`Table.note`): once it is posted, everything up to there was told.
    The other items carry 0, so a change cut short is told again after a
    restart rather than lost.  ``line`` numbers the narration lines of the
    table (a ping: the lines before it), the same after a restart: it names
    the message to Discord (:func:`owed`), so what was posted is not posted again."""

    text: str | None = None
    ping: tuple[int, ...] | None = None  # the seats pinged (``text`` is None)
    turn: int = 0  # which turn of this table's show the ping is for
    upto: int = 0
    notes: int = 0
    line: int = 0
    #: a round or deal ended here: the lines before it are that round's record
    boundary: bool = False


@dataclass(frozen=True, slots=True)
class _Token:
    """A click's token that edits the live table, and which of the token's messages that is:
    one value, replaced whole, so a redraw drawn for one token edits that token's message
    (a token's ``@original`` is the message its click was on: a player's panel, when the
    live table is a followup the token posted)."""

    webhook: discord.Webhook  # the click's followup webhook
    message: int  # the live table it edits
    #: which message of the token that is: ``@original`` (the clicked message), or the id of
    #: the live table it posted itself as a followup (:meth:`Presenter._post_by_token`)
    target: int
    where: int | None  # the channel of that click (where its followups land)
    until: float  # time.monotonic() when the token is too old


@dataclass(slots=True)
class _Show:
    """What is being shown of one table: narration goes out in order; the table message is redrawn
    apart from it, coalescing changes, so a rate-limited edit never holds
    back a ping."""

    lines: list[_Item] = field(default_factory=list)
    #: the lines of the round going on, not posted yet (the live table shows the last few)
    record: list[_Item] = field(default_factory=list)
    recording: bool = False  # a round's record is being posted (the live table waits to go below it)
    ping: _Item | None = None  # the turn's ping, carried by the next live table posted
    next_line: int = 0  # the serial of the next narration line (:attr:`_Item.line`)
    turn: int = 0  # counts the turns this show saw start
    pinged: int = -1  # the last turn pinged (a turn is pinged once)
    need_thread: bool = False
    opening: bool = False  # the sender is opening the table's thread now
    threads_lost: int = 0  # how many of the table's threads were deleted while it was shown
    repost: bool = False
    table_dirty: bool = False
    sender: asyncio.Task[None] | None = None
    updater: asyncio.Task[None] | None = None
    #: the token of the latest click on the table message itself (or of the click whose token
    #: posted it): it edits that message for 15 minutes, outside Discord's global limit
    answer: _Token | None = None
    answering: asyncio.Future[None] | None = None  # such clicks are being acknowledged now
    expecting: int = 0  # how many
    #: the change that ended the game reached the presenter: it is saved and recorded
    #: (``table.status`` turns "finished" before the result is recorded and told)
    ended: bool = False
    #: a live table posted through a token may have landed unsaved (a kill, a lost answer):
    #: looked for in the thread before the table is shown again (:meth:`Presenter._adopt`)
    adopt: bool = False
    adopt_ping: bool = False  # ... and that post pinged (its answer was lost: ``ping`` was not saved)

    @property
    def threadless(self) -> bool:
        """The table's thread is owed (deleted, or not opened yet) or being opened: the live
        table waits for it (drawn now, it would go to the channel)."""
        return self.need_thread or self.opening


SHOWN_WATCHERS = 5  # watchers named on a table message; past that, a count
LAST_MOVES = 5  # lines of the round going on that the live table shows
#: messages of the thread looked through for a live table posted through a token whose id
#: was not saved (:meth:`Presenter._adopt`): the records of a round and the live table
ADOPT_LOOKBACK = 10
#: ``table.messages`` key: the version of a live table being posted through a token (a
#: followup carries no nonce), saved before the post and dropped once its id is saved
POSTING = "followup"
#: ``table.messages`` key: the live table a new one replaced, saved with the new one's id until it
#: is deleted: a kill between the two does not leave it in the thread (:meth:`Presenter.resume`)
STALE = "replaced"
#: ``table.messages`` key: the table's thread that was deleted, saved until the one that replaces
#: it is: the new thread opens from a message saying the game continues there, named by the
#: thread it replaces (:meth:`Presenter._open_thread`), after a restart too
MOVED = "moved"
#: Discord's error code: a thread was opened from this message already
THREAD_EXISTS = 160004
NO_NOTES = 1 << 62  # ``notes_told`` of a replay without the table's notes
#: what an edit into the live table's Components V2 layout clears: a live table an
#: earlier version posted has content and an embed, which a V2 message cannot keep
#: (discord.py's typing offers neither beside a LayoutView; the edit sends them empty)
LEGACY_CLEARED: dict[str, Any] = {"content": None, "embed": None}


def show_watchers(table: Table, message: TableMessage, lang: str) -> None:
    """Who is watching, on the table message (names escaped, a count past
    :data:`SHOWN_WATCHERS`), and *Watch* while the game runs."""
    if table.watchers:
        names = [plain(w.name) for w in table.watchers[:SHOWN_WATCHERS]]
        more = len(table.watchers) - len(names)
        if more > 0:
            names.append(t(lang, "table.watching_more", count=more))
        message.note(t(lang, "table.watching", count=len(table.watchers)), ", ".join(names))
    if table.status != "playing":
        return
    if message.view is None:
        message.view = discord.ui.View(timeout=None)
    if len(message.view.children) < 25:
        message.view.add_item(Watch.make(table.id, t(lang, "table.watch"), emoji="👀"))


def _chunk_items(items: Sequence[_Item], limit: int = 1900) -> list[list[_Item]]:
    """Narration items grouped into messages under Discord's 2,000 characters.

    >>> [len(m) for m in _chunk_items([_Item("a" * 1000), _Item("b" * 1000), _Item("c")])]
    [1, 2]
    """
    out: list[list[_Item]] = []
    current: list[_Item] = []
    size = 0
    for item in items:
        n = len((item.text or "")[:limit])
        if current and size + 1 + n > limit:
            out.append(current)
            current, size = [item], n
        else:
            size = size + 1 + n if current else n
            current.append(item)
    if current:
        out.append(current)
    return out


def backoff(failures: int) -> float:
    """Seconds to wait after ``failures`` failed tries of the same message (discord.py
    has tried each of them again after 1, 3, 5 and 7 s on a 500, 502 or 504 already).

    >>> [backoff(n) for n in (1, 2, 3, 7, 50)]
    [0.5, 1.0, 2.0, 30.0, 30.0]
    """
    return min(RETRY_MAX, RETRY_DELAY * 2 ** min(failures - 1, 16))


async def until_it_lands(what: str, attempt: Callable[[], Awaitable[Any]]) -> bool:
    """``attempt`` (a message the players are owed: posted or edited) again and again
    after Discord errors, waiting longer each time (:func:`backoff`), until it lands
    (True) or its message or channel is gone (False)."""
    failures = 0
    while True:
        try:
            await attempt()
            return True
        except discord.NotFound:
            log.info("%s is gone; not shown", what)
            return False
        except TRANSIENT as error:
            failures += 1
            log.warning("%s failed (%r), try %d", what, error, failures)
            await asyncio.sleep(backoff(failures))


def _forget(show: Any, name: str) -> Any:
    """A done callback: a table's show lets go of its finished task (~0.5 KB a table kept otherwise)."""
    def done(task: asyncio.Task[Any]) -> None:
        if getattr(show, name) is task:
            setattr(show, name, None)
    return done



class _Replay:
    """A table's log replayed once for a resume (:meth:`Presenter.resume`): the
    engine's events of each move from the oldest index asked for."""

    __slots__ = ("manager", "table", "first", "moves")

    def __init__(self, manager: TableManager, table: Table) -> None:
        self.manager, self.table = manager, table
        self.first: int | None = None
        self.moves: list[list[Event]] = []

    def since(self, start: int) -> list[list[Event]]:
        """The events of each move from ``start`` on (replayed again only for an older ``start``)."""
        if self.first is None or start < self.first:
            self.first, self.moves = start, self.manager.move_events(self.table, start)
        return self.moves[start - self.first:]

    def events(self, start: int) -> list[Event]:
        """The events of the moves from ``start`` on, in order, without the table's notes."""
        return [event for move in self.since(start) for event in move]


class Presenter:
    """Shows the running tables: narration and pings in their threads, the table
    message, the lobby message once a game runs, the standings at the end.  It
    draws lobby messages through ``lobby``; ``uis`` and ``extras`` are shared
    with the cog, which fills them as the other cogs load."""

    def __init__(self, bot: Any, manager: TableManager, lobby: Lobby, uis: dict[str, GameUI],
                 extras: list[TableExtra]) -> None:
        self.bot = bot
        self.manager = manager
        self.lobby = lobby
        self.uis = uis
        self.extras = extras
        self.shows: dict[int, _Show] = {}
        self._deleting: set[int] = set()  # ids of messages the bot itself is deleting
        self._edits: set[asyncio.Task[None]] = set()

    async def stop_presenting(self, drain: float = 0.0) -> None:
        """Stop posting (at shutdown): what is being posted or redrawn may finish for
        ``drain`` seconds (a deploy's stop lets the moves it acknowledged show); what
        was saved and not shown yet is shown again after a start."""
        tasks = [task for p in self.shows.values() for task in (p.sender, p.updater) if task]
        tasks += self._edits
        if tasks and drain > 0:
            await asyncio.wait(tasks, timeout=drain)
            tasks = [task for p in self.shows.values() for task in (p.sender, p.updater) if task]
            tasks += self._edits
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.shows.clear()

    # ------------------------------------------------------------ presenting
    def on_table_change(self, table: Table, events: list[Event]) -> None:
        """Listener of the manager: narrate now, present in the background."""
        if table.status == "lobby":
            return  # lobby changes are shown by the interaction that made them
        table.remember(events)  # what the next picture marks
        show = self._show_of(table)
        kinds = {e.get("type") for e in events}
        if "started" in kinds and not table.thread_id:  # (told again after a restart: the thread is there)
            show.need_thread = True
        if kinds & {"abandoned", "idle", "cancelled"} and not self.lobby.redraws_itself(table):
            self._edit_lobby_later(table)
        acting = to_act(table.engine) if table.engine is not None else frozenset()
        new_turn = "started" in kinds or any(starts_turn(table.game, e) for e in events) or any(
            e.get("type") == "back" and e.get("seat") in acting
            for e in events)  # a seat taken back on its own turn: that turn is its owner's now
        if registry.spec(table.game).deal_event in kinds:
            show.repost = True  # a fresh table message each round (old messages edit slowly)
        deal = registry.spec(table.game).deal_event
        cut = next((i for i, e in enumerate(events) if e.get("type") == deal), None)
        if cut is None:
            self._lines(show, self.narrate(table, events))
        else:  # the round before ends here: its record can be written
            self._lines(show, self.narrate(table, events[:cut]))
            show.lines.append(_Item(boundary=True, upto=table.version, notes=table.noted, line=show.next_line))
            self._lines(show, self.narrate(table, events[cut:]))
        if new_turn:
            show.turn += 1
            self._queue_ping(table, show)
        if show.lines:  # posted, it marks this change told
            show.lines[-1].upto, show.lines[-1].notes = table.version, table.noted
        if table.status == "finished":
            show.ended = True
        if table.status in ("playing", "finished") or (table.status == "abandoned" and table.messages.get("table")):
            show.table_dirty = True  # (a stopped game's table message is drawn once more, without buttons)
        self._wake(table, show)
        changed = getattr(self.uis[table.game], "changed", None)
        if changed is not None:
            changed(table)  # e.g. private panels that keep themselves current

    @staticmethod
    def _lines(show: _Show, lines: list[str]) -> None:
        for line in lines:
            show.lines.append(_Item(text=line, line=show.next_line))
            show.next_line += 1

    def _queue_ping(self, table: Table, show: _Show) -> None:
        """Ping the players to act, once for this turn (checked again when it is sent): the
        live table is posted anew at the bottom of the thread and carries the ping."""
        seats = self._ping_seats(table)
        if seats and show.pinged != show.turn and not (show.ping is not None and show.ping.turn == show.turn):
            show.ping = _Item(ping=seats, turn=show.turn, upto=table.version)
            show.repost = True
            show.table_dirty = True

    def _show_of(self, table: Table) -> _Show:
        """The table's show; a new one numbers lines on from what the thread was told."""
        show = self.shows.get(table.id)
        if show is None:
            show = self.shows[table.id] = _Show(next_line=table.lines_told)
        return show

    def _ping_seats(self, table: Table) -> tuple[int, ...]:
        """The seats whose turn needs their human now (several when everyone chooses at once)."""
        engine = table.engine
        if engine is None or table.status != "playing":
            return ()
        return tuple(seat for seat in sorted(to_act(engine)) if not table.seats[seat].automatic)

    def _wake(self, table: Table, show: _Show) -> None:
        loop = asyncio.get_running_loop()
        if show.sender is None or show.sender.done():
            # (a context of its own: the click's deferral hook stays with the click)
            show.sender = loop.create_task(self._sender(table, show), context=contextvars.Context())
            show.sender.add_done_callback(_forget(show, "sender"))
        if (show.table_dirty and (show.answering is not None or self._answer(table, show))
                and not show.threadless and (show.updater is None or show.updater.done())):
            # A redraw through a click's token waits for no narration and no budget.
            show.updater = loop.create_task(self._updater(table, show), context=contextvars.Context())
            show.updater.add_done_callback(_forget(show, "updater"))

    # ------------------------------------------------- answers on the table message
    def expect_answer(self, table: Table, interaction: discord.Interaction) -> bool:
        """Before a move clicked on the table message itself: the redraw it causes waits
        for :meth:`answered` and then goes through this click's token (an edit of its
        ``@original``, which Discord does not count against the bot's global limit)."""
        message = interaction.message
        if message is None or not message.id or message.id != table.messages.get("table"):
            return False
        show = self._show_of(table)
        if show.answering is None:
            show.answering = asyncio.get_running_loop().create_future()
        show.expecting += 1
        return True

    def answered(self, table: Table, interaction: discord.Interaction) -> None:
        """The click of :meth:`expect_answer` is acknowledged (or failed): when it was
        acknowledged as an update of the table message, its token redraws the table."""
        show = self.shows.get(table.id)
        if show is None:
            return
        show.expecting = max(0, show.expecting - 1)
        kind = interaction.response.type
        updated = interaction.message is not None and kind in (
            discord.InteractionResponseType.deferred_message_update, discord.InteractionResponseType.message_update)
        if updated:
            self._keep(show, interaction)
        if updated or not show.expecting:  # (a refused double click does not hold the redraw back)
            waiting, show.answering = show.answering, None
            if waiting is not None and not waiting.done():
                waiting.set_result(None)

    async def defer_on_table(self, table: Table | None, interaction: discord.Interaction) -> None:
        """A click on a running table's message that answers privately: acknowledged at once
        as a deferred update of the table message (which shows nothing); its token redraws
        the table from now on, for every later change (moves made on private panels, the
        computers') while it lives.  The private answer follows as an ephemeral followup
        (:func:`cogs.common.ui.reply` sends one once the response is done)."""
        message = interaction.message
        if (table is None or table.status != "playing" or interaction.response.is_done() or message is None
                or not message.id or message.id != table.messages.get("table")):
            return
        await interaction.response.defer()
        show = self._show_of(table)
        self._keep(show, interaction)
        if show.table_dirty:
            self._wake(table, show)

    @staticmethod
    def _keep(show: _Show, interaction: discord.Interaction) -> None:
        assert interaction.message is not None  # (a click on the table message)
        show.answer = _Token(interaction.followup, interaction.message.id, ORIGINAL, interaction.channel_id,
                             time.monotonic() + ANSWER_LIFETIME)

    def _poster(self, table: Table, show: _Show | None) -> tuple[discord.Webhook, float] | None:
        """The freshest living token of a click at this table in its thread (on the live
        table, or on a player's private panel there), with the time.monotonic() it is too
        old from: a public followup through it lands in the thread, outside the bot's
        global limit.  None when no token lives (none yet, too old, after a restart)."""
        now = time.monotonic()
        where = table.thread_id or table.channel_id
        best: tuple[discord.Webhook, float] | None = None
        answer = show.answer if show is not None else None
        if answer is not None and now < answer.until and answer.where == where:
            best = (answer.webhook, answer.until)
        tokens = getattr(self.uis[table.game], "tokens", None)
        for webhook, until in tokens(table) if tokens is not None else ():
            if until > now and (best is None or until > best[1]):
                best = (webhook, until)
        return best

    @staticmethod
    def _answer(table: Table, show: _Show) -> _Token | None:
        """A click's token that may still edit the current table message, or None."""
        answer = show.answer
        if answer is None:
            return None
        if time.monotonic() >= answer.until or answer.message != table.messages.get("table"):
            show.answer = None
            return None
        return answer

    def resume(self, table: Table) -> None:
        """After a start: tell what was saved but not yet told (in order, once),
        ping the turn if its ping was not sent, and show the table again."""
        missed: list[Event] = []
        replay = _Replay(self.manager, table)
        if table.narrated < table.version or table.notes or table.status == "playing":
            try:
                # one replay of the log for the record and the ping both, from the older of the two
                ping = table.messages.get("ping")
                replay.since(min(max(0, table.narrated - 1), table.version if ping is None else ping))
                missed = self._untold(table, replay)
            except Exception:
                log.exception("table %s: the moves since the last narration could not be replayed", table.id)
        if table.status == "finished":  # the game ended; its end was not shown yet
            self.on_table_change(table, missed or table.ending)
            return
        if table.status in ("cancelled", "abandoned"):  # closed before the thread and lobby said so
            if missed:
                self.on_table_change(table, missed)
            return
        if table.status == "lobby":
            # a join, leave or computer saved just before the stop may never have been
            # shown (its click went unanswered): the lobby message shows the seats as saved
            # (a night's table has no lobby of its own: the night starts it at once)
            if table.night_id is None:
                self._edit_lobby_later(table)
            return
        if table.status != "playing":
            return
        show = self._show_of(table)
        if missed:
            self.on_table_change(table, missed)
        stale = table.messages.pop(STALE, None)
        if stale and stale != table.messages.get("table"):  # replaced just before a stop, not deleted
            task = asyncio.get_running_loop().create_task(self._delete_old(table, stale, None))
            self._edits.add(task)
            task.add_done_callback(self._edits.discard)
        pinged = table.messages.get("ping")
        if table.messages.get(MOVED):
            pinged = None  # its ping went with the deleted thread: the new one pings
        if POSTING in table.messages:
            # a live table was being posted through a token: whether it (and its ping) landed is
            # looked for in the thread first (:meth:`_adopt`)
            show.adopt = True
            pinged = None if pinged == table.messages[POSTING] else pinged
        if pinged is not None and not any(
                starts_turn(table.game, e) or e.get("type") in ("started", "back")
                for e in replay.events(min(pinged, table.version))):
            show.pinged = show.turn  # this turn's ping went out before the stop
            show.ping = None
        # the live table is the newest message again (a round's record posted after it: anew)
        self.redraw(table, repost=table.messages.get("record", 0) > table.messages.get("table", 0), ping=True)

    def _untold(self, table: Table, replay: "_Replay") -> list[Event]:
        """The events the thread's record does not hold yet: the round going on from its
        start, and anything after the last record.  (A record is marked told up to the
        move that ended its round; that move's events from the new deal on are the next
        round's.)"""
        start = table.narrated
        if start <= 0:
            return self.manager.replay_events(table, start, moves=replay.since(start))
        moves = replay.since(start - 1)
        events = self.manager.replay_events(table, start, moves=moves[1:])
        head = moves[0] if moves else []  # the events of the move that ended the last recorded round
        deal = registry.spec(table.game).deal_event
        cut = next((i for i, e in enumerate(head) if e.get("type") == deal), None)
        return events if cut is None else head[cut:] + events

    async def _sender(self, table: Table, show: _Show) -> None:
        budget.background()  # narration takes turns with redraws; pings go first
        if show.need_thread and not self.bot.is_ready():
            # restored tables are resumed before the bot is connected; opening a
            # thread needs the server in the cache
            await self.bot.wait_until_ready()
        failures = 0
        while True:
            try:
                if show.need_thread:
                    show.need_thread, show.opening = False, True
                    try:
                        await self._open_thread(table)
                    finally:
                        show.opening = False
                items, show.lines = show.lines, []
                closed = table.status != "playing"
                unsent: list[_Item] = []
                if items or (closed and show.record):
                    if table.status not in ("cancelled", "abandoned") or table.thread_id:
                        unsent = await self._send(table, show, items, closed=closed)
                    else:  # (a lobby closed before its thread existed has nowhere to say it: told)
                        if self._told(table, [*show.record, *items]):
                            await self.manager.save_messages(table)
                        show.record = []
                if unsent:
                    failures += 1
                    show.lines[:0] = unsent  # in order, nothing lost, nothing twice
                    await asyncio.sleep(backoff(failures))
                else:
                    failures = 0
            except TRANSIENT as error:  # opening the thread failed
                failures += 1
                log.warning("table %s: no thread yet (%r), try %d", table.id, error, failures)
                show.need_thread = True
                await asyncio.sleep(backoff(failures))
            except Exception:
                log.exception("narrating table %s failed", table.id)
            if show.table_dirty and not show.threadless and (show.updater is None or show.updater.done()):
                show.updater = asyncio.get_running_loop().create_task(self._updater(table, show))
                show.updater.add_done_callback(_forget(show, "updater"))
            if not show.lines and not show.need_thread:
                break
        if (table.status not in ("lobby", "playing", "finished") and self.shows.get(table.id) is show
                and (show.updater is None or show.updater.done())):
            self.shows.pop(table.id, None)  # closed early: nothing more to show

    def _edit_lobby_later(self, table: Table) -> None:
        """Show the lobby message as the table is now: stopped or closed itself
        (a Cancel click on the lobby redraws it through its own answer), or,
        after a restart, a lobby whose last change was saved but perhaps never shown."""
        lobby = table.messages.get("lobby")
        if not lobby:
            return

        async def edit(table: Table) -> None:
            if table.status != "finished":  # (the end shows the standings instead)
                await self.where(table, thread=False).get_partial_message(lobby).edit(
                    embed=self.lobby.lobby_embed(table), view=self.lobby.lobby_view(table))

        task = asyncio.get_running_loop().create_task(self._until_it_lands(table, "the lobby message", edit))
        self._edits.add(task)
        task.add_done_callback(self._edits.discard)

    def redraw(self, table: Table, *, new_thread: bool = False, repost: bool = True, ping: bool = True) -> None:
        """Show the table again (its message or thread was deleted, or the bot restarted).

        ``ping``: ping the player to move unless this turn was pinged already."""
        if table.status != "playing":
            return
        show = self._show_of(table)
        if new_thread:
            show.need_thread = True
            show.threads_lost += 1
            show.pinged = -1  # the ping went with the deleted thread: ping in the new one
        elif not table.thread_id:  # e.g. a stop between Start and the thread: open it now
            show.need_thread = True
        show.repost = show.repost or repost
        show.table_dirty = True
        if ping:
            self._queue_ping(table, show)
        self._wake(table, show)

    async def thread_deleted(self, thread_id: int) -> None:
        """A thread was deleted: a game playing in it goes on in a new one."""
        await self.manager.loaded()  # (right after a start: every table restored)
        for table in list(self.manager.tables.values()):
            if table.thread_id == thread_id and table.status == "playing":
                log.info("thread of table %s was deleted; opening a new one", table.id)
                show = self.shows.get(table.id)
                if show is not None:  # a click's token there sends nowhere now
                    show.answer = None
                self.manager.set_message(table, "thread", None)
                self.manager.set_message(table, MOVED, thread_id)
                self.redraw(table, new_thread=True)
                # (saved: after a kill too, the new thread opens from the message its first try posted)
                await self.manager.save_messages(table)

    async def message_deleted(self, message_id: int) -> None:
        """A message was deleted: a running table's message is posted again."""
        if message_id in self._deleting:
            return  # the bot's own deletion of a replaced table message
        await self.manager.loaded()
        for table in list(self.manager.tables.values()):
            if table.messages.get("table") == message_id and table.status == "playing":
                log.info("table message of table %s was deleted; posting it again", table.id)
                self.manager.set_message(table, "table", None)
                self.redraw(table)

    async def _updater(self, table: Table, show: _Show) -> None:
        budget.background(tables=True)  # redraws yield to clicks and pings (2 s at most), take turns with narration
        spend = getattr(self.bot, "budget", None)
        failures = 0
        while show.table_dirty:
            if show.answering is not None:
                # the click that moved is being acknowledged: its token may redraw the table
                try:
                    await asyncio.wait_for(asyncio.shield(show.answering), ANSWER_WAIT)
                except asyncio.TimeoutError:
                    pass
            if show.adopt:
                try:
                    await self._adopt(table, show)
                except TRANSIENT as error:
                    failures += 1
                    log.warning("table %s: looking for its live table failed (%r), try %d", table.id, error, failures)
                    await asyncio.sleep(backoff(failures))
                    continue
            sender = show.sender
            if show.repost and sender is not None and not sender.done() and (
                    show.recording or any(item.boundary for item in show.lines)):
                await asyncio.wait({sender})  # a round's record first: the live table goes below it
            ping, seats = self._due_ping(table, show)
            answer = None if show.repost else self._answer(table, show)
            if spend is not None and answer is None and not seats and not (show.repost and self._poster(table, show)):
                # The picture is drawn only once its request may go: while the bot's
                # requests are spent, moves made meanwhile join this one redraw (a turn
                # that began meanwhile too: its ping goes with it).
                await spend.prepay()
                ping, seats = self._due_ping(table, show)
                answer = None if show.repost else self._answer(table, show)
            if show.threadless:
                return  # the thread was deleted meanwhile: the sender opens a new one, then draws the table there
            show.table_dirty = False
            repost, show.repost = show.repost, False
            try:
                if ping is not None and seats:
                    before = table.messages.get("ping")
                    lost = show.threads_lost
                    self.manager.set_message(table, "ping", table.version)  # (saved with the new message's id)
                    try:
                        with budget.foreground():  # a turn's ping goes with the clicks
                            await self._update_table_message(table, repost=True, ping=seats)
                    except BaseException:
                        self.manager.set_message(table, "ping", before)
                        raise
                    if show.threads_lost == lost:
                        show.pinged = ping.turn
                        if show.ping is ping:
                            show.ping = None
                        self._pinged(table, seats)
                    # (else the ping went with a thread deleted meanwhile: it goes again in the new one)
                else:
                    await self._update_table_message(table, repost=repost, answer=answer)
                failures = 0
            except TRANSIENT as error:
                # Discord failed (5xx, dropped connection...): the game is saved and
                # goes on; draw the table again, later and later until it lands.
                failures += 1
                log.warning("table %s message update failed (%r), try %d", table.id, error, failures)
                show.table_dirty = True
                show.repost = show.repost or repost or bool(seats)
                await asyncio.sleep(backoff(failures))
            except Exception:
                log.exception("updating the table message of table %s failed", table.id)
        if table.status == "finished" and not show.ended:
            # The last move is saved but still being recorded: its change comes to
            # on_table_change next, which redraws the table and then shows the end (the
            # standings' Replay and Verify need the recorded game).
            return
        if table.status == "finished" and self.shows.get(table.id) is show:
            sender = show.sender
            if sender is not None and not sender.done():
                # the thread tells the end before the lobby shows it (while Discord takes it)
                await asyncio.wait({sender}, timeout=RETRY_MAX * 2)
            try:
                await self._finish(table)
            except Exception:
                log.exception("closing table %s failed", table.id)
        if table.status not in ("lobby", "playing") and not show.lines:
            self.shows.pop(table.id, None)

    def narrate(self, table: Table, events: list[Event]) -> list[str]:
        lang = table.locale
        lines: list[str] = []
        ui_events: list[Event] = []
        for event in events:
            kind = event.get("type")
            if kind == "timeout":
                key = "table.timeout_away" if event["away"] else "table.timeout"
                lines.extend(self.uis[table.game].narrate(table, ui_events, lang))
                ui_events = []
                lines.append(t(lang, key, name=self.lobby.seat_name(table, event["seat"])))
            elif kind == "back":
                lines.append(t(lang, "table.back", name=self.lobby.seat_name(table, event["seat"])))
            elif kind == "away":
                lines.append(t(lang, "table.stepped_away", name=self.lobby.seat_name(table, event["seat"]),
                               back=t(lang, "table.im_back")))
            elif kind == "cancelled":
                lines.append(t(lang, "table.cancelled"))
            elif kind in ("abandoned", "idle"):
                line = self.lobby.closed_line(table)
                if line:
                    lines.append(line)
            elif kind == "started":
                lines.append(t(lang, "table.game_started", game=t(lang, f"{table.game}.title")))
                # the extras' start (the shuffle's commitment) right below it, as when the start is
                # told alone: also when a restart replays the round from its start in one batch
                for extra in self.extras:
                    lines.extend(extra.narrate(table, [event], lang))
            elif kind == "watchers":
                pass  # someone started or stopped watching: only the table message shows it
            else:
                ui_events.append(event)
        lines.extend(self.uis[table.game].narrate(table, ui_events, lang))
        rest = [event for event in events if event.get("type") != "started"]
        for extra in self.extras:
            lines.extend(extra.narrate(table, rest, lang))
        return lines

    def ping_line(self, table: Table, seats: Sequence[int]) -> str:
        mentions = " ".join(f"<@{table.seats[seat].user_id}>" for seat in seats)
        if len(seats) > 1:  # a simultaneous turn: everyone chooses at once
            line = t(table.locale, "simultaneous.several_turn", mentions=mentions)
        else:
            line = t(table.locale, "table.your_turn", mention=mentions)
        if table.turn_deadline:
            line += " " + t(table.locale, "table.deadline", when=f"<t:{int(table.turn_deadline)}:R>")
        return line

    def where(self, table: Table, thread: bool = True) -> discord.PartialMessageable:
        """The table's thread (or its channel), without needing the cache."""
        if thread and table.thread_id:
            return self.bot.get_partial_messageable(table.thread_id, guild_id=table.guild_id,
                                                    type=discord.ChannelType.public_thread)
        return self.bot.get_partial_messageable(table.channel_id, guild_id=table.guild_id,
                                                type=discord.ChannelType.text)

    async def _post(self, table: Table, text: str, mentions: discord.AllowedMentions,
                    nonce: str | None) -> discord.Message:
        def drawn() -> str | int:  # None: a nonce of its own, as discord.py draws one
            return nonce if nonce is not None else secrets.randbits(64)

        try:
            return await self.where(table).send(text, allowed_mentions=mentions, nonce=drawn())
        except discord.NotFound:
            # The thread was deleted: open a new one and go on there.
            await self._open_thread(table, gone=table.thread_id)
            return await self.where(table).send(text, allowed_mentions=mentions, nonce=drawn())

    def _ping_now(self, table: Table, show: _Show, item: _Item) -> list[int]:
        """The seats a ping item calls now: only those still to act (who chose meanwhile is
        not called), and none when its turn has passed or was pinged (a ping would mislead)."""
        assert item.ping is not None
        seats = [seat for seat in item.ping if seat in self._ping_seats(table)]
        return seats if item.turn == show.turn and show.pinged != item.turn else []

    def _due_ping(self, table: Table, show: _Show) -> tuple[_Item | None, list[int]]:
        """The turn's ping to send now and the seats it calls; a ping whose turn passed (or
        was pinged) is dropped: the live table is edited instead."""
        ping = show.ping
        seats = self._ping_now(table, show, ping) if ping is not None else []
        if ping is not None and not seats:
            show.ping = ping = None
        return ping, seats

    async def _send(self, table: Table, show: _Show, items: list[_Item], *, closed: bool) -> list[_Item]:
        """Gather narration into the record of the round going on; once a round ends
        (or the table closes: ``closed``) post its record, in order, pinging nobody.
        Returns the items not handled (Discord failed): they come again, in order."""
        for index, item in enumerate(items):
            if not item.boundary:
                show.record.append(item)
                continue
            try:
                await self._post_record(table, show, [*show.record, item])
            except TRANSIENT as error:
                log.warning("the record of table %s failed (%r)", table.id, error)
                return items[index:]
        if closed and show.record:
            try:
                await self._post_record(table, show, list(show.record))
            except TRANSIENT as error:
                log.warning("the record of table %s failed (%r)", table.id, error)
                return [_Item(boundary=True, line=show.next_line)]  # (tried again: the lines wait in the record)
        return []

    async def _post_record(self, table: Table, show: _Show, items: list[_Item]) -> None:
        """Post one round's record (``items``: its lines, then perhaps the boundary item) in
        as few messages as Discord's 2,000 characters allow, each named by its first line's
        serial (:func:`owed`: a record posted just before a kill, or whose answer was lost,
        is not posted twice), and mark it told.  The live table goes below it
        (:meth:`_updater` waits)."""
        texts = [item for item in items if item.text is not None]
        show.recording = True
        try:
            for chunk in _chunk_items(texts):
                text = "\n".join((i.text or "")[:1900] for i in chunk)
                sent = await self._post(table, text, NO_PINGS, owed(table, "l", chunk[0].line))
                self.manager.set_message(table, "record", sent.id)
            del show.record[:len([i for i in items if not i.boundary])]
        finally:
            show.recording = False
        last = max((item.line + (item.text is not None) for item in items), default=0)
        if self._told(table, items, last) or texts:
            await self.manager.save_messages(table)

    @staticmethod
    def _told(table: Table, items: Sequence[_Item], lines: int = 0) -> bool:
        return table.told(max((item.upto for item in items), default=0),
                          max((item.notes for item in items), default=0), lines)

    async def _open_thread(self, table: Table, gone: int | None = None) -> None:
        """Open the table's thread: from its lobby message, or, when the thread it had was
        deleted (``gone``, or saved as :data:`MOVED`), from a message in the channel that
        says the game continues there.  That message is named by the thread it replaces
        (:func:`owed`): a try whose answer was lost, or a kill before the new thread was
        saved, does not say it twice, and the thread already opened from it is the one."""
        lang = table.locale
        name = t(lang, "table.thread_name", game=t(lang, f"{table.game}.title"), table=table.id)[:100]
        channel = self.where(table, thread=False)
        gone = gone or table.messages.get(MOVED)
        thread_id: int | None = None
        try:
            lobby_id = table.messages.get("lobby")
            starter: discord.PartialMessage | discord.Message
            if lobby_id and not gone:
                starter = channel.get_partial_message(lobby_id)
            else:
                starter = await channel.send(t(lang, "table.moved", table=table.id), allowed_mentions=NO_PINGS,
                                             nonce=owed(table, "c", 0, replaces=gone))
            try:
                thread_id = (await starter.create_thread(name=name, auto_archive_duration=1440)).id
            except discord.HTTPException as error:
                if error.code != THREAD_EXISTS:
                    raise
                thread_id = starter.id  # opened by a try whose answer was lost (it has the message's id)
        except discord.DiscordServerError:
            raise  # Discord's trouble: tried again (the message it opens from is not posted twice)
        except discord.HTTPException:
            log.warning("no thread for table %s; playing in the channel", table.id, exc_info=True)
        self.manager.set_message(table, "thread", thread_id)
        self.manager.set_message(table, MOVED, None)
        self.manager.set_message(table, "table", None)
        await self.manager.save_messages(table)
        self._edit_lobby_later(table)  # it says the game is on, and where

    async def _update_table_message(self, table: Table, repost: bool = False,
                                    answer: _Token | None = None, ping: Sequence[int] = ()) -> None:
        """Draw the live table and show it: edited in place, or posted anew at the bottom
        (``repost``; ``ping``: the seats whose turn it is, pinged by it)."""
        version = table.version
        message = await self.uis[table.game].table_message(table, table.locale)
        show = self.shows.get(table.id)
        if show is not None and table.version != version:
            show.table_dirty = True  # the game moved on while the picture was drawn: drawn again after
        self._last_moves(table, message)
        mentions = NO_PINGS
        turn = ping or self._ping_seats(table)
        if turn:  # whose turn it is, named on the live table while it lasts (only a new message pings)
            message.heading = self.ping_line(table, turn)
        if ping:
            mentions = pinging([table.seats[seat].user_id for seat in ping])
        show_watchers(table, message, table.locale)
        variant = variant_line(table.game, table.options, table.locale)
        if variant:  # the table's variant, above the game's own summary
            message.summary = f"{variant}\n{message.summary}"
        for extra in self.extras:
            extra.table_message(table, message, table.locale)
        try:
            await self._post_table_message(table, message, repost, with_image=message.image is not None,
                                           answer=answer, mentions=mentions, version=version)
        except discord.Forbidden:
            if message.image is None:
                raise
            # The bot may no longer attach files here: the text summary carries the game.
            log.warning("table %s: image refused (missing Attach Files?); posting text only", table.id)
            await self._post_table_message(table, message, repost, with_image=False, mentions=mentions,
                                           version=version)

    def _last_moves(self, table: Table, message: TableMessage) -> None:
        """The last few lines of the round going on, as text on the live table (they go
        into the round's record once it ends)."""
        show = self.shows.get(table.id)
        if show is None or table.status != "playing":
            return
        # what the extras add at a start (the shuffle's full commitment) stays in the record:
        # the live table shows it in its own small print
        at_start = {line for extra in self.extras
                    for line in extra.narrate(table, [{"type": "started"}], table.locale)}
        lines = [item.text for item in (*show.record, *show.lines)
                 if item.text and item.text not in at_start][-LAST_MOVES:]
        if lines:
            message.note(t(table.locale, "table.last_moves"), "\n".join(lines))

    def _pinged(self, table: Table, seats: Sequence[int]) -> None:
        """After a turn's ping: the game's UI may bring the pinged players' private panels
        down to it (a fresh one right below the ping: the move is one click)."""
        follow = getattr(self.uis[table.game], "follow", None)
        if follow is not None:
            follow(table, [table.seats[seat].user_id for seat in seats])

    async def _post_table_message(self, table: Table, message: TableMessage, repost: bool, *,
                                  with_image: bool, answer: _Token | None = None,
                                  mentions: discord.AllowedMentions = NO_PINGS, version: int | None = None) -> None:
        def files() -> list[discord.File]:
            image = message.image if with_image else None
            return [discord.File(io.BytesIO(image), filename=TABLE_PICTURE)] if image is not None else []

        layout = message.layout(with_image)
        messageable = self.where(table)
        old = table.messages.get("table")
        if old and not repost and answer is not None:
            try:  # through a click's token: not counted against the bot's global limit
                # (the message of this token, as chosen: a click on the table meanwhile keeps a token
                # of its own, whose @original is the table, not this one's)
                await quietly(answer.webhook.edit_message(answer.target, attachments=files(), view=layout,
                                                          **LEGACY_CLEARED))
                return
            except (discord.HTTPException, *TRANSIENT):
                # expired, or Discord trouble: the bot's own edit below (which finds a deleted message too)
                log.info("table %s: redraw through a click's token failed; editing it", table.id, exc_info=True)
                show = self.shows.get(table.id)
                if show is not None and show.answer is answer:
                    show.answer = None
        if old and not repost:
            try:
                await messageable.get_partial_message(old).edit(attachments=files(), view=layout, **LEGACY_CLEARED)
                return
            except discord.NotFound:
                pass  # deleted: post it again below
        show = self.shows.get(table.id)
        # the live table before goes through a click's token on it while one lives
        deleter = show.answer if show is not None else None
        if deleter is not None and (deleter.message != old or time.monotonic() >= deleter.until):
            deleter = None
        shown = table.version if version is None else version
        sent_id = await self._post_by_token(table, show, shown, files, layout, mentions)
        if sent_id is None:
            # named by the version it shows and the message it replaces, both saved: a live table
            # posted just before a kill is not posted twice, and a repost is not the earlier post
            nonce = owed(table, "v", shown, replaces=old)
            try:
                sent_id = (await messageable.send(files=files(), view=layout, allowed_mentions=mentions,
                                                  nonce=nonce)).id
            except discord.NotFound:  # the thread is gone: open a new one
                await self._open_thread(table, gone=table.thread_id)
                messageable = self.where(table)
                sent_id = (await messageable.send(files=files(), view=layout, allowed_mentions=mentions,
                                                  nonce=nonce)).id
        # Record the new message before the old one goes: the deletion event may
        # arrive before Discord's answer, and must not be taken for a user's.
        self.manager.set_message(table, "table", sent_id)
        self.manager.set_message(table, POSTING, None)
        stale = old if old and repost and old != sent_id else None  # (the same: a post after a kill, found by its nonce)
        self.manager.set_message(table, STALE, stale)
        await self.manager.save_messages(table)
        if stale:
            await self._delete_old(table, stale, deleter)
            if table.messages.get(STALE) == stale:
                self.manager.set_message(table, STALE, None)  # (saved with the next change)

    async def _delete_old(self, table: Table, old: int, token: _Token | None) -> None:
        """The live table before a new one goes: through a click's ``token`` on it while one
        lives (not counted against the bot's global limit), else the bot's own delete."""
        self._deleting.add(old)
        try:
            if token is not None:
                try:
                    await token.webhook.delete_message(token.target)
                    return
                except (discord.HTTPException, *TRANSIENT):
                    log.info("table %s: deleting the old table through a click's token failed", table.id)
            await self.where(table).get_partial_message(old).delete()
        except discord.HTTPException:
            pass
        finally:
            asyncio.get_running_loop().call_later(60, self._deleting.discard, old)

    async def _post_by_token(self, table: Table, show: _Show | None, version: int,
                             files: Callable[[], list[discord.File]], layout: discord.ui.LayoutView,
                             mentions: discord.AllowedMentions) -> int | None:
        """Post the live table as a public followup through the freshest living token of a
        click in the thread (:meth:`_poster`): Discord does not count it against the bot's
        global limit, and the token edits and deletes it later.  Its id; None: no token lives, or
        Discord refused it (the bot's own post follows, with its nonce).

        A followup carries no nonce: it is sent once (:func:`~cogs.common.adapter.sent_once`),
        and the version being posted is saved first (``POSTING``), so a post that landed
        unsaved (a kill, an answer lost: a 5xx, a dropped connection) is found in the thread
        and taken as the live table (:meth:`_adopt`) rather than posted twice."""
        poster = self._poster(table, show)
        if poster is None or show is None:
            return None
        webhook, until = poster
        self.manager.set_message(table, POSTING, version)
        await self.manager.save_messages(table)
        try:
            with sent_once():  # (not sent again by discord.py after a 5xx: it may have landed)
                sent = await id_of(webhook.send(files=files(), view=layout, allowed_mentions=mentions,
                                                ephemeral=False, wait=True))
        except UNCERTAIN:
            show.adopt = True  # it may have landed: looked for before it is posted again
            show.adopt_ping = mentions is not NO_PINGS
            raise
        except discord.HTTPException:
            # expired or refused (e.g. the thread is gone): the bot's own post
            log.info("table %s: posting the live table through a token failed", table.id, exc_info=True)
            self.manager.set_message(table, POSTING, None)
            if show.answer is not None and show.answer.webhook is webhook:
                show.answer = None
            return None
        show.answer = _Token(webhook, sent, sent, table.thread_id or table.channel_id, until)
        return sent

    async def _adopt(self, table: Table, show: _Show) -> None:
        """A live table posted through a token may have landed without its id saved (a
        kill between the post and the save, or its answer lost): the bot's newest message
        in the thread that is an interaction's followup with controls, newer than the saved
        live table, is that one; it becomes the live table (the one before goes) and its
        ping counts as sent.  Found nothing: it is posted (and pings) again."""
        pinging, show.adopt, show.adopt_ping = show.adopt_ping, False, False
        version = table.messages.get(POSTING)
        if version is None:
            return
        old = table.messages.get("table")
        me = self.bot.user.id if self.bot.user is not None else None
        found: discord.Message | None = None
        try:
            async for message in self.where(table).history(limit=ADOPT_LOOKBACK):
                if message.id <= (old or 0):
                    break
                if message.author.id == me and message.webhook_id is not None and message.components:
                    found = message
                    break
        except discord.NotFound:
            pass  # the thread is gone: a new one comes with the post
        except BaseException:
            show.adopt, show.adopt_ping = True, pinging
            raise
        self.manager.set_message(table, POSTING, None)
        if found is None:
            return
        log.info("table %s: the live table posted through a token before is adopted", table.id)
        self.manager.set_message(table, "table", found.id)
        if (pinging or table.messages.get("ping") == version) and show.ping is not None:
            show.pinged, show.ping = show.ping.turn, None  # its ping went out with it
            self.manager.set_message(table, "ping", version)
        show.repost = table.messages.get("record", 0) > found.id
        show.table_dirty = True
        await self.manager.save_messages(table)
        if old:
            await self._delete_old(table, old, None)

    async def _finish(self, table: Table) -> None:
        """Show the standings, then close the table: until then a restart shows them again."""
        await self._until_it_lands(table, "the final standings", self._show_standings)
        await self.manager.ended(table)

    async def _until_it_lands(self, table: Table, what: str, attempt: Callable[[Table], Awaitable[None]]) -> None:
        """``attempt`` (an edit the players are owed) until it lands (:func:`until_it_lands`)."""
        await until_it_lands(f"table {table.id}: {what}", lambda: attempt(table))

    async def _show_standings(self, table: Table) -> None:
        lobby = table.messages.get("lobby")
        if not lobby:
            return
        embed = self.lobby.lobby_embed(table)
        result = table.engine.result if table.engine else None
        if result is not None:
            lang = table.locale
            order = sorted(range(len(table.seats)), key=lambda s: (result.places[s], s))
            embed.description = t(lang, "table.finished") + "\n" + "\n".join(
                t(lang, "table.standing", place=result.places[s], name=self.lobby.seat_name(table, s),
                  score=result.scores[s]) for s in order)
        again = view_of(PlayAgain.make(table.id, t(table.locale, "table.again"),
                                       style=discord.ButtonStyle.success, emoji="🔁"))
        for extra in self.extras:
            await extra.standings(table, embed, again)
        await self.where(table, thread=False).get_partial_message(lobby).edit(embed=embed, view=again)
