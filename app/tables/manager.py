"""Tables: lobbies and games in progress, apart from Discord.

A :class:`Table` is a lobby that becomes a game.  The :class:`TableManager`
owns every table, one ``asyncio.Lock`` per table (two clicks never race),
the turn timers and the computer players, and saves every change through the
store before the caller acknowledges it to a player.  It knows nothing about
Discord: the bot's table cog listens to changes and presents them.

Games are replayed from ``seed`` and ``log`` (the engines are
deterministic), so a table survives a restart with nothing but its row and
its action log.

Nothing is applied before it is saved.  Every change (a move, a join, the
start, a computer's or the timer's move, a stop) is made on a *draft*, a copy
of the table with a copy of its engine; the draft is saved, and only once the
store's transaction committed does it become the live table.  When the save
fails (disk full, file locked or read-only, I/O error) the live table is as
it was, the player is told ``errors.not_saved``, and computer turns and
timers try again with a growing pause until the database is back.  While a
save is slow (a lock held elsewhere), :data:`SLOW_SAVE` lets the caller
acknowledge the click before Discord's 3 s are up.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import logging
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Mapping, Protocol, Sequence

from app.after.verify import commit
from core import registry
from core.protocol import Event, EventType, Game, to_act

LEVELS = ("easy", "normal", "hard")  # computer levels (core.ai.LEVELS)
TIMEOUT_LEVEL = "normal"  # the turn timer's takeover plays at normal level

log = logging.getLogger(__name__)

MISSED_TURNS_LIMIT = 3  # after this many timed-out turns in a row a computer holds the seat
DEFAULT_TURN_TIME = 120


def starts_turn(game: str, event: Event) -> bool:
    """Whether an engine event starts a turn: the shared "turn" event or the
    game's new-deal event (its spec names it)."""
    kind = event.get("type")
    return kind == EventType.TURN.value or kind == registry.spec(game).deal_event


ACTIVE = ("lobby", "playing")
RECENT_TURNS = 3  # turns of public events a table keeps for its picture (Table.remember)
RECENT_EVENTS = 240  # and at most this many events
IDLE_LIMIT = 24 * 3600  # seconds without a person acting before a table closes itself (abandoned)
SWEEP_INTERVAL = 600  # seconds between looks for idle tables
MAX_OPEN_LOBBIES = 3  # lobbies one person may host at once, across servers
RESTORE_SLICE = 0.005  # seconds the restore at a start holds the loop before clicks get it
SLOW_SAVE_AFTER = 1.2  # seconds a save may take before SLOW_SAVE is called
RETRY_FIRST, RETRY_MAX = 0.5, 30.0  # seconds between tries of an automatic move the store refused

#: ``(deadline, hook)``: when a change of the current task (waiting for its
#: table's lock, then for the store) is still not saved at ``deadline``
#: (event-loop time), ``hook`` is awaited; the table cog sets it per click to
#: acknowledge the click in time.  The hook must be harmless when called twice.
SLOW_SAVE: contextvars.ContextVar[tuple[float, Callable[[], Awaitable[None]]] | None] = contextvars.ContextVar(
    "SLOW_SAVE", default=None)


def when_slow(hook: Callable[[], Awaitable[None]], after: float | None = None) -> None:
    """Set this task's SLOW_SAVE hook, due ``after`` seconds from now."""
    due = asyncio.get_running_loop().time() + (SLOW_SAVE_AFTER if after is None else after)
    SLOW_SAVE.set((due, hook))


#: The saves this click has committed so far (a list the click's handler
#: sets, see :func:`counting_saves`): a failure after one of them must not be
#: answered "nothing changed".
COMMITTED: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("COMMITTED", default=None)


@contextlib.contextmanager
def counting_saves() -> Iterator[list[bool]]:
    """While the block runs, every save of this task that commits (through
    :func:`slow_guard`) is noted in the list it yields."""
    saved: list[bool] = []
    token = COMMITTED.set(saved)
    try:
        yield saved
    finally:
        COMMITTED.reset(token)


async def slow_guard(saving: Awaitable[Any]) -> Any:
    """Await a save; when it is still running at this task's SLOW_SAVE
    deadline, call the hook (and go on waiting).  Any save of a click or a
    command goes through here (tables, nights, server settings)."""
    slow = SLOW_SAVE.get()
    if slow is None:
        result = await saving
    else:
        task = asyncio.ensure_future(saving)
        done, _ = await asyncio.wait({task}, timeout=max(0.0, slow[0] - asyncio.get_running_loop().time()))
        if not done:
            await _call_hook(slow[1])
        result = await task
    saved = COMMITTED.get()
    if saved is not None:
        saved.append(True)
    return result


async def _call_hook(hook: Callable[[], Awaitable[None]]) -> None:
    SLOW_SAVE.set(None)  # once per task
    try:
        await hook()
    except Exception:
        log.warning("the slow-save hook failed", exc_info=True)


@contextlib.asynccontextmanager
async def guarded(lock: asyncio.Lock) -> AsyncIterator[None]:
    """A table's, a night's (or the creation) lock; waiting for it counts
    towards SLOW_SAVE (the holder may itself be waiting for a locked database)."""
    slow = SLOW_SAVE.get()
    if slow is None or not lock.locked():
        await lock.acquire()
    else:
        acquire = asyncio.ensure_future(lock.acquire())
        try:
            done, _ = await asyncio.wait({acquire}, timeout=max(0.0, slow[0] - asyncio.get_running_loop().time()))
            if not done:
                await _call_hook(slow[1])
            await acquire
        except BaseException:
            if acquire.done() and not acquire.cancelled() and acquire.exception() is None:
                lock.release()
            else:
                acquire.cancel()
            raise
    try:
        yield
    finally:
        lock.release()


class TableError(Exception):
    """A table-level refusal (not seated, lobby full...).  ``code`` keys the
    translated message ``errors.<code>``; ``params`` fill its placeholders."""

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


@dataclass(slots=True)
class Seat:
    user_id: int | None  # None: a computer player
    name: str
    away: bool = False  # a computer holds the seat until its owner is back
    missed: int = 0  # timed-out turns in a row
    level: str = "normal"  # a computer seat's level: easy | normal | hard
    #: away by the owner's own choice (stepped away), not after missed turns:
    #: what a game night reads to take them off the night, also after a restart
    stepped: bool = False

    @property
    def computer(self) -> bool:
        return self.user_id is None

    @property
    def number(self) -> int | None:
        """A computer seat's number ("CPU 2": 2), which tells it from the table's other computers."""
        if not self.computer:
            return None
        digits = self.name.rsplit(" ", 1)[-1]
        return int(digits) if digits.isdigit() else None

    @property
    def automatic(self) -> bool:
        return self.user_id is None or self.away

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "name": self.name, "away": self.away, "missed": self.missed,
                "level": self.level, **({"stepped": True} if self.stepped else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Seat":
        # seats saved before levels existed are normal-level computers
        return cls(data["user_id"], data["name"], bool(data.get("away")), int(data.get("missed", 0)),
                   str(data.get("level") or "normal"), bool(data.get("stepped")))


@dataclass(frozen=True)
class Watcher:
    """Someone following a running table without a seat: they see what
    everyone sees (the table message, the thread), never a hand."""

    user_id: int
    name: str


@dataclass(slots=True)  # 32 fields: past what a shared-key __dict__ holds (~1.3 KB more a table)
class Table:
    id: int
    guild_id: int
    channel_id: int
    game: str
    host_id: int
    max_seats: int
    options: dict[str, Any]
    locale: str = "en"
    status: str = "lobby"  # lobby | playing | finished | cancelled | abandoned
    seats: list[Seat] = field(default_factory=list)
    seed: int | None = None
    shuffle: dict[str, Any] = field(default_factory=dict)  # commitment to the seed (app.verify.commit)
    log: list[tuple[int, str]] = field(default_factory=list)
    messages: dict[str, int] = field(default_factory=dict)  # lobby, thread, table
    created_at: float = 0.0
    started_at: float | None = None
    turn_seat: int | None = None
    turn_deadline: float | None = None
    saved: int = 0  # how many log entries the store holds
    active_at: float = 0.0  # when a person last acted here (joined, started, moved...)
    stopped_by: str | None = None  # who stopped the game (abandoned), None when it went idle
    #: why it was stopped when nobody in particular did (a catalogue key ``faults.stop_<reason>``)
    stop_reason: str | None = None
    idle: bool = False  # closed because nobody acted for the idle limit
    recorded: bool = False  # the result is in the store's statistics
    posting: bool = False  # created by this process, its lobby message not posted yet
    narrated: int = 0  # how many log entries the thread was told (kept in meta, set by the presenter)
    #: what the thread is told that no log entry replays (the start, a timed-out turn, "I'm back"):
    #: ``{"n": serial, "at": log position, "event": ...}``, saved with the change that says it;
    #: once told (``notes_told``, set by the presenter) it leaves the saved meta
    notes: list[dict[str, Any]] = field(default_factory=list)
    noted: int = 0  # notes ever made here (the next one's serial)
    notes_told: int = 0  # notes the thread was told (kept in meta, set by the presenter)
    #: narration lines the thread was told up to ``narrated``/``notes_told`` (kept in meta, set by
    #: the presenter): the serial of the next line, which names its message to Discord (a nonce)
    lines_told: int = 0
    night_id: int | None = None  # a table of a game night (app/nights/host.py)
    watchers: list[Watcher] = field(default_factory=list)  # in the order they came
    ending: list[Event] = field(default_factory=list, repr=False)  # events of a last move not yet shown
    #: the public events of the latest turns (:meth:`remember`): what the table's picture marks
    recent: list[Event] = field(default_factory=list, repr=False)
    engine: Game | None = field(default=None, repr=False)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def version(self) -> int:
        """Changes with every action: buttons carry it to detect stale clicks."""
        return len(self.log)

    @property
    def thread_id(self) -> int | None:
        return self.messages.get("thread")

    @property
    def host_alone(self) -> bool:
        """The host is the only person still at the table: every other
        person's seat is away (left the game, or timed out), computers aside."""
        return self.seat_of(self.host_id) is not None and all(
            seat.computer or seat.away or seat.user_id == self.host_id for seat in self.seats)

    def view(self, seat: int | None) -> dict[str, Any]:
        """What *seat* (None: everyone) sees of the game; only a started table has one."""
        if self.engine is None:
            raise RuntimeError(f"table {self.id} has no game")
        return self.engine.view(seat)

    def seat_of(self, user_id: int) -> int | None:
        for index, seat in enumerate(self.seats):
            if seat.user_id == user_id:
                return index
        return None

    def names(self) -> list[str]:
        return [seat.name for seat in self.seats]

    def watching(self, user_id: int) -> bool:
        return any(w.user_id == user_id for w in self.watchers)

    def meta(self) -> dict[str, Any]:
        return {
            "host_id": self.host_id,
            "max_seats": self.max_seats,
            "options": self.options,
            "locale": self.locale,
            "seats": [s.to_dict() for s in self.seats],
            "seed": self.seed,
            "shuffle": self.shuffle,
            "messages": self.messages,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "turn_seat": self.turn_seat,
            "turn_deadline": self.turn_deadline,
            "active_at": self.active_at,
            "stopped_by": self.stopped_by,
            **({"stop_reason": self.stop_reason} if self.stop_reason else {}),
            **({"idle": True} if self.idle else {}),
            "narrated": self.narrated,
            "notes": [note for note in self.notes if note["n"] > self.notes_told],
            "noted": self.noted,
            "notes_told": self.notes_told,
            "lines_told": self.lines_told,
            **({"night_id": self.night_id} if self.night_id is not None else {}),
            **({"watchers": [[w.user_id, w.name] for w in self.watchers]} if self.watchers else {}),
        }

    def draft(self, *, engine: bool = False) -> "Table":
        """A copy to change and save; the live table changes only by :meth:`adopt`.
        ``messages`` stays shared: the presenter records ids on the live table."""
        draft = copy.copy(self)
        draft.seats = [copy.copy(s) for s in self.seats]
        draft.log = list(self.log)
        draft.options = dict(self.options)
        draft.notes = list(self.notes)
        draft.watchers = list(self.watchers)
        if engine and self.engine is not None:
            draft.engine = self.engine.copy()
        return draft

    def adopt(self, draft: "Table") -> None:
        """Take over a saved draft's state."""
        for name in ("status", "host_id", "seats", "seed", "log", "options", "started_at", "turn_seat", "turn_deadline",
                     "saved", "engine", "active_at", "stopped_by", "stop_reason", "idle", "shuffle", "noted",
                     "watchers"):
            setattr(self, name, getattr(draft, name))
        self.notes = [note for note in draft.notes if note["n"] > self.notes_told]

    def note(self, event: Event) -> Event:
        """Keep ``event`` (not an engine event) to be told in the thread at this
        point of the log; it is saved with this draft."""
        self.noted += 1
        self.notes.append({"n": self.noted, "at": len(self.log), "event": dict(event)})
        return event

    def remember(self, events: Sequence[Event]) -> None:
        """Keep ``events`` (told to everyone) among the recent ones: those since
        the start of the turn :data:`RECENT_TURNS` turns back, so the picture can
        mark the last move, a whole reveal or chain, a new round (not saved: after
        a restart the presenter's replay of the round going on remembers them again)."""
        recent = self.recent + [dict(e) for e in events]
        starts = [i for i, e in enumerate(recent) if starts_turn(self.game, e)]
        if len(starts) > RECENT_TURNS:
            recent = recent[starts[-RECENT_TURNS - 1] + 1:]
        self.recent = recent[-RECENT_EVENTS:]

    def told(self, upto: int, notes: int, lines: int = 0) -> bool:
        """The presenter told the thread everything up to log entry ``upto`` and
        note ``notes``, in ``lines`` narration lines since the game began; True if
        that is news (to be saved)."""
        news = upto > self.narrated or notes > self.notes_told or lines > self.lines_told
        self.narrated = max(self.narrated, upto)
        self.notes_told = max(self.notes_told, notes)
        self.lines_told = max(self.lines_told, lines)
        if news:
            self.notes = [note for note in self.notes if note["n"] > self.notes_told]
        return news


class Listener(Protocol):
    def __call__(self, table: Table, events: list[Event]) -> None: ...


ComputerPlayer = Callable[[Any, int, random.Random], Any]
Note = Callable[[str], str]  # a line for a player's answer, in the language given


class TableManager:
    """Every table of the bot; the only writer of table state."""

    def __init__(
        self,
        store: Any,
        games: Mapping[str, type[Game]],
        computers: Mapping[str, ComputerPlayer],
        *,
        listener: Listener | None = None,
        computer_delay: float = 1.5,
        time_scale: float = 1.0,
        seed: int | None = None,
        seeds: int | None = None,
        clock: Callable[[], float] = time.time,
        players: Any = None,
        idle_limit: float = IDLE_LIMIT,
        sweep_interval: float = SWEEP_INTERVAL,
        max_open_lobbies: int = MAX_OPEN_LOBBIES,
    ) -> None:
        self.store = store
        self.games = dict(games)
        self.computers = dict(computers)
        self.players = players  # app.computers.Computers: levelled players and hints (else ``computers``)
        self.listener: Listener = listener or (lambda table, events: None)
        #: called with a table once its game is over (recorded) or it was cancelled; may run
        #: inside the table's lock, so a hook schedules its work and never waits on the table
        self.closed_hooks: list[Callable[[Table], None]] = []
        #: called with (table, user id, away) once a step away (``away``) or a return was
        #: saved, outside the table's lock; each may return a note for the answer to that
        #: player (its text in a language), e.g. that a game night no longer seats them
        self.away_hooks: list[Callable[[Table, int, bool], Awaitable[Note | None]]] = []
        self.computer_delay = computer_delay
        self.time_scale = time_scale
        self.fixed_seed = seed  # every table's seed (tests only)
        self.seed_source = seeds  # each table's seed drawn from it and the table's number (tests only)
        self.clock = clock
        self.idle_limit = idle_limit
        self.sweep_interval = sweep_interval
        self.max_open_lobbies = max_open_lobbies
        self.tables: dict[int, Table] = {}
        #: table id -> its one timer: a loop timer handle while it waits (a few hundred
        #: bytes, not a sleeping task's ~1.5 KB per table), the task once it is due
        self._timers: dict[int, asyncio.TimerHandle | asyncio.Task[None]] = {}
        self._retries: dict[int, int] = {}  # table id -> automatic moves the store refused in a row
        self._closers: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._create_lock = asyncio.Lock()  # "is a table here?" and the insert, as one step
        self._closing = False
        # the restore at a start (restore_in_background): rows not restored yet, by table id
        self._pending: dict[int, Any] = {}
        self._records_read = asyncio.Event()
        self._loaded = asyncio.Event()
        self._restoring: asyncio.Task[None] | None = None
        self._resume: Callable[[Table], None] | None = None
        self._timing = True  # timers are armed as tables are restored (after start_timers)

    # ------------------------------------------------------------------ lookup
    def get(self, table_id: int) -> Table | None:
        return self.tables.get(table_id)

    def in_guild(self, guild_id: int) -> list[Table]:
        """The server's open tables (lobbies and games), oldest first."""
        return sorted((table for table in self.tables.values() if table.status in ACTIVE and table.guild_id == guild_id),
                      key=lambda table: table.id)

    def in_channel(self, channel_id: int) -> Table | None:
        """The active table whose lobby channel or game thread this is."""
        for table in self.tables.values():
            if table.status in ACTIVE and channel_id in (table.channel_id, table.thread_id):
                return table
        return None

    # ---------------------------------------------------------------- restore
    async def restore(self, owns: Callable[[int], bool] | None = None) -> list[Table]:
        """Load every lobby and game from the store and replay it; with ``owns``
        only those of the servers it accepts (a shard cluster: this process's servers)."""
        restored = []
        for record in await self._records(owns):
            table = await self._restore_record(record)
            if table is not None:
                restored.append(table)
        self._loaded.set()
        return restored

    async def _records(self, owns: Callable[[int], bool] | None) -> list[Any]:
        """The active tables' rows, then those closed before the thread and the lobby said so."""
        active = [r for r in await self.store.active_tables() if owns is None or owns(r.guild_id)]
        closed = [r for r in await self.store.untold_closed_tables() if owns is None or owns(r.guild_id)]
        return active + closed

    async def _restore_record(self, record: Any) -> Table | None:
        """One table from its row, replayed; an active one joins ``tables``, a closed
        one is handed back to be told, never to be played (it stays out of ``tables``)."""
        table = self._from_record(record)
        if table.status not in ACTIVE:
            if table.seed is not None:  # its table message is drawn once more, without buttons
                try:
                    table.engine = self.games[table.game].replay(
                        len(table.seats), table.seed, self.engine_options(table), table.log)
                except Exception:
                    log.exception("closed table %s could not be replayed", table.id)
            return table
        if table.status == "playing":
            assert table.seed is not None  # a game's seed is drawn when it starts
            try:
                table.engine = self.games[table.game].replay(
                    len(table.seats), table.seed, self.engine_options(table), table.log)
            except Exception:  # a corrupt row must not stop the other tables
                log.exception("table %s could not be replayed; it is left out", table.id)
                return None
            if table.engine.over:
                # Stopped after the last move, before its end was shown: record it
                # (at most once per table) and hand the ending back to be announced.
                table.status = "finished"
                table.turn_deadline = None
                await self._record(table)
                cls = self.games[table.game]
                before = cls.replay(len(table.seats), table.seed, self.engine_options(table), table.log[:-1])
                seat, text = table.log[-1]
                table.ending = before.apply(seat, before.parse(text))
        self.tables[table.id] = table
        return table

    # ------------------------------------------------- restore while connecting
    def restore_in_background(self, owns: Callable[[int], bool] | None = None,
                              resume: Callable[[Table], None] | None = None,
                              slice_s: float = RESTORE_SLICE) -> asyncio.Task[None]:
        """Restore every table in a task of its own, the most recently active first,
        yielding the loop every ``slice_s`` seconds (clicks go first); ``resume`` is
        called with each table once it is restored, before its timer is armed.  A
        click on a table not restored yet restores that one at once
        (:meth:`restored`); everything else waits for :meth:`loaded`."""
        self._resume = resume
        self._timing = False
        task = asyncio.get_running_loop().create_task(
            self._restore_all(owns, slice_s), name="tables-restore", context=contextvars.Context())
        self._restoring = task
        return task

    async def _restore_all(self, owns: Callable[[int], bool] | None, slice_s: float) -> None:
        loop = asyncio.get_running_loop()
        try:
            records = await self._records(owns)
            records.sort(key=lambda r: -float(r.meta.get("active_at") or r.updated_at or 0.0))
            self._pending = {r.id: r for r in records}
            self._records_read.set()
            started = loop.time()
            while self._pending:
                table_id = next(iter(self._pending))
                await self._admit(table_id)
                if loop.time() - started >= slice_s:
                    await asyncio.sleep(0)  # a click waiting here goes first
                    started = loop.time()
            count = sum(1 for t in self.tables.values() if t.status in ACTIVE)
            log.info("restored %d table(s)", count)
        except Exception:
            log.exception("restoring the tables failed")
        finally:
            self._pending.clear()
            self._records_read.set()
            self._loaded.set()

    async def _admit(self, table_id: int) -> Table | None:
        """Restore one pending table now (once), hand it to ``resume``, arm its timer."""
        record = self._pending.pop(table_id, None)
        if record is None:
            return self.tables.get(table_id)
        try:
            table = await self._restore_record(record)
        except Exception:
            log.exception("table %s could not be restored", table_id)
            return None
        if table is not None:
            if self._resume is not None:
                try:
                    self._resume(table)
                except Exception:
                    log.exception("table %s could not be resumed", table.id)
            if self._timing and table.status == "playing":
                self._schedule(table)
        return table

    async def restored(self, table_id: int) -> Table | None:
        """The table ``table_id`` once restored: at once if the background restore
        has not come to it yet (see :meth:`restore_in_background`)."""
        if not self.is_loaded:
            await self._records_read.wait()
            if table_id in self._pending:
                await self._admit(table_id)
        return self.tables.get(table_id)

    async def loaded(self) -> None:
        """Wait until every table is restored (at once when no restore runs)."""
        if not self.is_loaded:
            await self._loaded.wait()

    @property
    def is_loaded(self) -> bool:
        """Whether no restore started by :meth:`restore_in_background` is still running."""
        return self._restoring is None or self._loaded.is_set()

    def _from_record(self, record: Any) -> Table:
        """A table as the store holds it (its engine not replayed yet)."""
        meta = record.meta
        table = Table(
            id=record.id,
            guild_id=record.guild_id,
            channel_id=record.channel_id,
            game=record.game,
            host_id=meta["host_id"],
            max_seats=meta["max_seats"],
            options=dict(meta["options"]),
            locale=meta.get("locale", "en"),
            status=record.status,
            seats=[Seat.from_dict(s) for s in meta["seats"]],
            seed=meta.get("seed"),
            shuffle=dict(meta.get("shuffle") or {}),
            log=[(int(seat), str(text)) for seat, text in record.actions],
            messages={k: int(v) for k, v in meta.get("messages", {}).items()},
            created_at=meta.get("created_at", 0.0),
            started_at=meta.get("started_at"),
            turn_seat=meta.get("turn_seat"),
            turn_deadline=meta.get("turn_deadline"),
            active_at=float(meta.get("active_at") or record.updated_at or 0.0),
            night_id=meta.get("night_id"),
            watchers=[Watcher(int(user_id), str(name)) for user_id, name in meta.get("watchers", ())],
        )
        table.saved = len(table.log)
        table.narrated = min(int(meta.get("narrated", len(table.log))), len(table.log))
        table.noted = int(meta.get("noted", 0))
        table.notes_told = int(meta.get("notes_told", 0))
        table.lines_told = int(meta.get("lines_told", 0))
        table.notes = [dict(note) for note in meta.get("notes", ()) if int(note["n"]) > table.notes_told]
        table.stopped_by = meta.get("stopped_by")
        table.stop_reason = meta.get("stop_reason")
        table.idle = bool(meta.get("idle"))
        if "noted" not in meta and table.status == "playing" and not table.thread_id:
            # saved before notes existed: a game whose start was never shown
            table.note({"type": "started"})
            table.notes[-1]["at"] = 0
        return table

    def move_events(self, table: Table, start: int) -> list[list[Event]]:
        """The engine's events of each log entry from ``start`` on, in one replay
        (without the table's notes).  The table itself is not touched."""
        if table.seed is None or not table.log[start:]:
            return []
        cls = self.games[table.game]
        engine = cls.replay(len(table.seats), table.seed, self.engine_options(table), table.log[:start])
        return [engine.apply(seat, engine.parse(text)) for seat, text in table.log[start:]]

    def replay_events(self, table: Table, start: int, notes_told: int | None = None,
                      moves: Sequence[list[Event]] | None = None) -> list[Event]:
        """What the thread was not told yet, to tell it after a restart, in the
        order it happened: the engine's events of the log entries from ``start``
        on (``moves``: those, already replayed by :meth:`move_events`), and the
        notes after ``notes_told`` (default: the table's) at their places among
        them.  The table itself is not touched."""
        told = table.notes_told if notes_told is None else notes_told
        notes = sorted((n for n in table.notes if n["n"] > told), key=lambda n: n["n"])
        events: list[Event] = []
        for index, move in enumerate(self.move_events(table, start) if moves is None else moves, start):
            while notes and notes[0]["at"] <= index:
                events.append(dict(notes.pop(0)["event"]))
            events += move
        events += [dict(note["event"]) for note in notes]
        return events

    def start_timers(self) -> None:
        self._timing = True
        for table in list(self.tables.values()):
            if table.status == "playing":
                self._schedule(table)
        if self._sweeper is None and not self._closing:
            self._sweeper = asyncio.get_running_loop().create_task(
                self._sweep_loop(), name="tables-idle", context=contextvars.Context())

    async def shutdown(self) -> None:
        self._closing = True
        for timer in self._timers.values():
            if not isinstance(timer, asyncio.Task):
                timer.cancel()  # not due yet: no task to wait for
        tasks = [*(t for t in self._timers.values() if isinstance(t, asyncio.Task)), *self._closers,
                 *([self._sweeper] if self._sweeper else []),
                 *([self._restoring] if self._restoring and not self._restoring.done() else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._timers.clear()
        self._closers.clear()
        self._sweeper = None

    # ------------------------------------------------------------------ lobby
    async def create(
        self,
        *,
        guild_id: int,
        channel_id: int,
        game: str,
        host_id: int,
        host_name: str,
        seats: int,
        rounds: int | None = None,
        turn_time: int = DEFAULT_TURN_TIME,
        locale: str = "en",
        options: Mapping[str, Any] | None = None,
        night_id: int | None = None,
    ) -> Table:
        """A new lobby, saved.  At most one active table per channel (also
        when two people ask at the same instant) and ``max_open_lobbies``
        lobbies per host.  ``options``: the game's table options (its spec's
        ``options``, checked against their ranges); ``rounds`` is one of them,
        kept as a keyword for the games that have it."""
        from app.store import ChannelBusy

        cls = self.games[game]
        if not cls.min_seats <= seats <= cls.max_seats:
            raise TableError("bad_seats", min=cls.min_seats, max=cls.max_seats)
        chosen = dict(options or {})
        if rounds is not None:
            chosen["rounds"] = rounds
        spec = registry.spec(game)
        table_options: dict[str, Any] = {"turn_time": max(0, int(turn_time))}
        variant = chosen.pop("variant", None)
        if variant is not None:  # one the game declares (core/spec.py VariantSpec), or a refusal
            if spec.variant(variant) is None:
                raise TableError("table.bad_variant", variant=str(variant)[:40])
            table_options["variant"] = variant
        for name, value in chosen.items():
            option = spec.option(name)
            if option is None or value is None:
                continue  # e.g. Play again under a game without that option
            try:
                table_options[name] = option.check(value)
            except ValueError:
                raise TableError("bad_option", option=name, min=option.minimum, max=option.maximum) from None
        await self.loaded()  # (a table restored later may be in this channel)
        async with self._guarded(self._create_lock):
            existing = self.in_channel(channel_id)
            if existing is not None and night_id is None:  # a night opens several tables in its channel
                raise TableError("channel_busy", table=existing.id)
            # counted in the database: the cap holds across the processes of a shard cluster
            try:
                hosted = await self.store.open_lobbies(host_id) if night_id is None else 0
            except Exception as error:
                log.warning("the lobbies of %s could not be counted: %r", host_id, error)
                raise TableError("not_saved") from error
            if hosted >= self.max_open_lobbies and night_id is None:
                raise TableError("lobby_limit", count=self.max_open_lobbies)
            now = self.clock()
            table = Table(
                id=0, guild_id=guild_id, channel_id=channel_id, game=game, host_id=host_id,
                max_seats=seats, options=table_options, locale=locale,
                seats=[Seat(host_id, host_name)], created_at=now, active_at=now, posting=True,
                night_id=night_id,
            )
            try:
                table.id = await self._slow_guard(self.store.create_table(guild_id, channel_id, game, table.meta()))
            except ChannelBusy:  # another process of the same database got there first
                record = await self.store.table_in_channel(channel_id)
                raise TableError("channel_busy", table=record.id if record else "?") from None
            except Exception as error:
                log.warning("a new table in channel %s was not saved: %r", channel_id, error)
                raise TableError("not_saved") from error
            self.tables[table.id] = table
        return table

    def _lobby(self, table: Table) -> None:
        if table.status != "lobby":
            raise TableError("not_in_lobby")

    async def join(self, table: Table, user_id: int, name: str) -> None:
        async with self._locked(table):
            self._lobby(table)
            if table.seat_of(user_id) is not None:
                raise TableError("already_seated")
            if len(table.seats) >= table.max_seats:
                raise TableError("table_full")
            draft = self._touch(table.draft())
            draft.seats.append(Seat(user_id, name))
            await self._save(table, draft)
        self.listener(table, [{"type": "lobby", "change": "join", "name": name}])

    async def watch(self, table: Table, user_id: int, name: str, on: bool | None = None) -> bool:
        """Watch a running table, or stop (``on`` None: the other of the two).
        Players watch their own game from their seat.  True: watching now."""
        async with self._locked(table):
            if table.status != "playing":
                raise TableError("table.watch_not_playing")
            if table.seat_of(user_id) is not None:
                raise TableError("table.watch_seated")
            watching = table.watching(user_id)
            want = not watching if on is None else on
            if want == watching:
                return watching
            draft = table.draft()
            draft.watchers = [w for w in draft.watchers if w.user_id != user_id]
            if want:
                draft.watchers.append(Watcher(user_id, name))
            await self._save(table, draft)
        self.listener(table, [{"type": "watchers"}])
        return want

    async def leave(self, table: Table, user_id: int) -> list[Note]:
        """Leave the lobby (the host hands it to the next person seated); in a
        game, step away: a computer plays the seat (at the normal level) until
        its owner is back (*I'm back*).  Returns the away hooks' notes (none
        for a lobby)."""
        if table.status == "playing":
            return await self.step_away(table, user_id)
        async with self._locked(table):
            self._lobby(table)
            index = table.seat_of(user_id)
            if index is None:
                raise TableError("not_seated")
            draft = self._touch(table.draft())
            heir = None
            if user_id == table.host_id:  # the next person seated hosts the table from now on
                heir = next((s for s in table.seats if s.user_id not in (None, user_id)), None)
                if heir is None or heir.user_id is None:
                    raise TableError("host_alone")  # nobody to hand it to: the host cancels it
                draft.host_id = heir.user_id
            name = draft.seats.pop(index).name
            await self._save(table, draft)
        self.listener(table, [{"type": "lobby", "change": "leave", "name": name,
                               **({"host": heir.name} if heir is not None else {})}])
        return []

    async def remove_seat(self, table: Table, user_id: int, *, person: int | None = None,
                          computer: int | None = None, can_manage: bool = False) -> str:
        """The host (or a moderator) takes a seat out of the lobby: a computer
        added by mistake (``computer``: its :attr:`Seat.number`), or someone
        who joined and is not there (``person``: their user id).  The host's
        own seat stays (the host cancels the table instead).  Returns the
        seat's name."""
        async with self._locked(table):
            self._lobby(table)
            if user_id != table.host_id and not can_manage:
                raise TableError("host_only")
            if person is not None and person == table.host_id:
                raise TableError("host_cannot_leave")
            index = next((i for i, s in enumerate(table.seats)
                          if (person is not None and s.user_id == person)
                          or (computer is not None and s.number == computer)), None)
            if index is None:
                raise TableError("seat_gone")
            draft = self._touch(table.draft())
            name = draft.seats.pop(index).name
            await self._save(table, draft)
        self.listener(table, [{"type": "lobby", "change": "removed", "name": name}])
        return name

    async def add_computer(self, table: Table, user_id: int, level: str = "normal") -> None:
        if level not in LEVELS:
            raise TableError("ai.bad_level")
        if self.players is None or not self.players.supports(table.game):
            level = "normal"  # a game without levelled players: its own computer player
        async with self._locked(table):
            self._lobby(table)
            if user_id != table.host_id:
                raise TableError("host_only")
            if len(table.seats) >= table.max_seats:
                raise TableError("table_full")
            taken = {s.number for s in table.seats}
            number = next(n for n in range(1, len(table.seats) + 2) if n not in taken)
            name = f"CPU {number}"  # (the lowest free number: one removed is given again)
            draft = self._touch(table.draft())
            draft.seats.append(Seat(None, name, level=level))
            await self._save(table, draft)
        self.listener(table, [{"type": "lobby", "change": "computer", "name": name, "level": level}])

    async def unrated(self, table: Table) -> bool:
        """A game that cannot change ratings: computer players at a server that
        does not rate such games (``/settings rated_computers``, see _record)."""
        if not any(s.computer for s in table.seats):
            return False
        settings = await self.store.guild_settings(table.guild_id)
        return not settings.get("rate_bot_games")

    async def set_variant(self, table: Table, user_id: int, variant: str | None) -> None:
        """The host chooses the table's variant in the lobby (None: the standard
        game); only one its game declares."""
        async with self._locked(table):
            self._lobby(table)
            if user_id != table.host_id:
                raise TableError("host_only")
            if variant is not None and registry.spec(table.game).variant(variant) is None:
                raise TableError("table.bad_variant", variant=str(variant)[:40])
            draft = self._touch(table.draft())
            if variant is None:
                draft.options.pop("variant", None)
            else:
                draft.options["variant"] = variant
            await self._save(table, draft)

    async def set_hints(self, table: Table, user_id: int, on: bool) -> None:
        """The host turns the coach on or off in the lobby; only for unrated games."""
        async with self._locked(table):
            self._lobby(table)
            if user_id != table.host_id:
                raise TableError("host_only")
            if on and (self.players is None or not self.players.supports(table.game)):
                raise TableError("ai.hints_unavailable")
            if on and not await self.unrated(table):
                raise TableError("ai.hints_rated")
            draft = self._touch(table.draft())
            if on:
                draft.options["hints"] = True
            else:
                draft.options.pop("hints", None)
            await self._save(table, draft)

    async def hint(self, table: Table, user_id: int) -> Any:
        """The coach: the hard level's decision for the caller's move, with its figures."""
        if not table.options.get("hints"):
            raise TableError("ai.hints_off")
        if table.status != "playing" or table.engine is None:
            raise TableError("not_playing")
        seat = table.seat_of(user_id)
        if seat is None:
            raise TableError("not_seated")
        if seat not in to_act(table.engine):
            raise TableError("ai.hint_not_your_turn")
        return await self.players.hint(table, seat)

    async def cancel(self, table: Table, user_id: int, *, can_manage: bool, name: str | None = None,
                     reason: str | None = None) -> None:
        """End a table: the host or a moderator cancels a lobby; a moderator
        (Manage Messages) stops a running game, and so may its host once left
        alone at it (every other person has left: stepped away or timed out;
        computers may remain); it is then closed as 'abandoned' (no result,
        no statistics).  ``reason`` says why when no person stopped it (e.g.
        ``"players_left"``, a game night's table whose players all left the
        night)."""
        async with self._locked(table):
            if table.status not in ACTIVE:
                raise TableError("table_closed")
            if table.status == "lobby":
                if user_id != table.host_id and not can_manage:
                    raise TableError("cancel_denied")
                status = "cancelled"
            else:
                if not can_manage and not (user_id == table.host_id and table.host_alone):
                    raise TableError("stop_denied")
                status = "abandoned"
            draft = table.draft()
            draft.status = status
            draft.turn_deadline = None
            if status == "abandoned" and reason:
                draft.stop_reason = reason
            elif status == "abandoned":
                draft.stopped_by = name or str(user_id)
            # (the thread and the lobby say so; saved with the close, told after a restart too)
            said = draft.note({"type": "cancelled"} if status == "cancelled"
                              else {"type": "abandoned", "by": draft.stopped_by})
            await self._save(table, draft)
            self._drop_timer(table)
        self._forget(table)
        self.listener(table, [said])
        self._closed(table)

    async def start(self, table: Table, user_id: int) -> list[Event]:
        async with self._locked(table):
            self._lobby(table)
            if user_id != table.host_id:
                raise TableError("host_only")
            cls = self.games[table.game]
            if len(table.seats) < cls.min_seats:
                raise TableError("not_enough_players", min=cls.min_seats)
            if all(s.computer for s in table.seats):
                raise TableError("no_humans")
            draft = self._touch(table.draft())
            draft.seed = self.new_seed(draft.id)
            draft.engine = cls.new(len(draft.seats), draft.seed, **self.engine_options(draft))
            draft.shuffle = commit(draft.game, draft.id, draft.seed, self.engine_options(draft),
                                   variant=draft.options.get("variant"))
            draft.status = "playing"
            draft.started_at = self.clock()
            events = [draft.note({"type": "started"})]
            self._new_turn(draft)
            await self._save(table, draft)  # refused: still a lobby, startable again
        self.listener(table, events)
        self._schedule(table)
        return events

    async def ended(self, table: Table) -> None:
        """The end of the game was shown: the table is closed for good (and
        leaves memory; *Play again* reads it from the store)."""
        async with table.lock:
            if table.status != "finished":
                return
            if await self._close_finished(table):
                return
        # Still 'playing' in the store (its result or its closing was refused): try
        # again shortly; a restart meanwhile records it (once) and shows the end again.
        self._later(self._close_later(table))

    async def _close_finished(self, table: Table) -> bool:
        if not table.recorded:
            await self._record(table)
        if not table.recorded:  # closed unrecorded, the result would be lost for good
            return False
        try:
            await self.store.close_table(table.id, "finished")
        except Exception as error:
            log.warning("table %s: closing failed (%r); trying again", table.id, error)
            return False
        table.ending = []
        self._forget(table)
        return True

    async def _close_later(self, table: Table) -> None:
        delay = RETRY_FIRST
        while not self._closing:
            await asyncio.sleep(delay)
            async with table.lock:
                if table.status != "finished" or await self._close_finished(table):
                    return
            delay = min(RETRY_MAX, delay * 2)

    def set_message(self, table: Table, kind: str, message_id: int | None) -> None:
        if message_id is None:
            table.messages.pop(kind, None)
        else:
            table.messages[kind] = message_id
        if kind == "lobby":
            table.posting = False

    async def save_messages(self, table: Table) -> None:
        """Persist message/thread ids after the presenter (re)posted them.  A
        failure is logged only: the ids live on in memory and go out with the
        table's next save."""
        async with table.lock:
            # (a stopped or cancelled table too: what its thread was told of the close)
            if table.status in ACTIVE or table.status in ("cancelled", "abandoned"):
                try:
                    await self.store.save_table(table.id, status=table.status, meta=table.meta(), actions=(),
                                                first_index=table.saved)
                except Exception as error:
                    log.warning("table %s: message ids not saved (%r)", table.id, error)

    # ------------------------------------------------------------------ play
    async def act(self, table: Table, user_id: int, action: Any, *, version: int | None = None) -> list[Event]:
        """A player's own action.  Validated by the engine, saved, then announced.

        Raises :class:`TableError` (not seated, stale, not playing, not
        saved) or the engine's :class:`~core.protocol.GameError` (illegal
        move); in every case nothing changed.
        """
        async with self._locked(table):
            if table.status != "playing" or table.engine is None:
                raise TableError("not_playing")
            seat = table.seat_of(user_id)
            if seat is None:
                raise TableError("not_seated")
            if version is not None and version != table.version:
                raise TableError("stale")
            if isinstance(action, str):
                action = table.engine.parse(action)
            draft = self._touch(table.draft(engine=True))
            events = self._apply(draft, seat, action)  # the engine refuses a wrong turn or move
            draft.seats[seat].missed = 0
            await self._commit(table, draft, events)
        self.listener(table, events)
        self._schedule(table)
        return events

    async def step_away(self, table: Table, user_id: int) -> list[Note]:
        """A player who must go hands the seat to a computer now (rather than
        after three missed turns); the game goes on and counts for them.
        Returns the away hooks' notes."""
        return await self._hand_over(table, user_id, away=True)

    async def back(self, table: Table, user_id: int) -> list[Note]:
        """'I'm back': the owner takes the seat back from the computer.
        Returns the away hooks' notes."""
        return await self._hand_over(table, user_id, away=False)

    @staticmethod
    def may_hand_over(table: Table, user_id: int, *, away: bool) -> int:
        """The seat ``user_id`` may hand to the computer (``away``) or take
        back now; raises :class:`TableError` saying why not."""
        if table.status != "playing":
            raise TableError("not_playing")
        seat = table.seat_of(user_id)
        if seat is None:
            raise TableError("not_seated")
        if table.seats[seat].away == away:
            raise TableError("already_away" if away else "not_away")
        return seat

    async def _hand_over(self, table: Table, user_id: int, *, away: bool) -> list[Note]:
        """The seat of ``user_id`` to the computer (``away``) or back to its
        owner; then the away hooks, whose notes are returned."""
        async with self._locked(table):
            seat = self.may_hand_over(table, user_id, away=away)
            draft = self._touch(table.draft())
            draft.seats[seat].away = draft.seats[seat].stepped = away
            if not away:
                draft.seats[seat].missed = 0
                if draft.engine is not None and seat in to_act(draft.engine):
                    self._new_turn(draft, force=True)  # the turn is the owner's, with a fresh timer
            events = [draft.note({"type": "away" if away else "back", "seat": seat})]
            await self._save(table, draft)
        self.listener(table, events)
        self._schedule(table)  # stepped away on the seat's own turn: the computer plays it now
        notes: list[Note] = []
        for hook in self.away_hooks:
            try:
                note = await hook(table, user_id, away)
            except Exception:
                log.exception("an away hook failed for table %s", table.id)
                continue
            if note:
                notes.append(note)
        return notes

    # -------------------------------------------------------------- internals
    def engine_options(self, table: Table) -> dict[str, Any]:
        """The options the table's engine is made with (the table's, less the bot's own)."""
        options = {k: v for k, v in table.options.items() if k not in ("turn_time", "hints", "variant")}
        spec = registry.spec(table.game)
        variant = spec.variant(table.options.get("variant"))
        if variant is not None:
            options.update(variant.options)
        for name, value in list(options.items()):
            option = spec.option(name)
            if option is not None and option.at_most_seats and value is not None:
                # e.g. fewer rounds than players, never more: the lobby's choice
                # is capped by the players who actually sat down.
                options[name] = min(int(value), len(table.seats))
        return options

    def new_seed(self, table_id: int) -> int:
        """The seed of a game starting at table ``table_id``: from the operating system's
        secure source, unless a test fixed it (``seed``: every table the same deal) or
        gave a source (``seeds``: each table its own deal, the same on every run).
        63 bits: the most a SQLite integer (games.seed) holds; see app/after/verify.py.

        >>> m = TableManager(None, {}, {}, seeds=5)
        >>> m.new_seed(1) == m.new_seed(1) != m.new_seed(2)
        True
        >>> TableManager(None, {}, {}, seed=5, seeds=5).new_seed(1)
        5
        """
        if self.fixed_seed is not None:
            return self.fixed_seed
        if self.seed_source is not None:
            return random.Random(f"{self.seed_source}:{table_id}").getrandbits(63)
        return secrets.randbits(63)

    def _touch(self, draft: Table) -> Table:
        draft.active_at = self.clock()
        return draft

    def _apply(self, table: Table, seat: int, action: Any) -> list[Event]:
        assert table.engine is not None
        events = table.engine.apply(seat, action)
        table.log.append((seat, str(action)))
        return events

    def _new_turn(self, table: Table, force: bool = False, events: Sequence[Event] = ()) -> None:
        engine = table.engine
        to_move = engine.to_move if engine is not None else None
        acting = to_act(engine) if engine is not None else frozenset()
        new = force or any(starts_turn(table.game, e) for e in events)
        if not registry.spec(table.game).simultaneous:
            new = new or to_move != table.turn_seat
        elif table.turn_deadline is None and acting and table.turn_seat is None:
            new = True  # the first turn of a simultaneous game (no event at the start)
        if not new:
            return
        table.turn_seat = to_move
        turn_time = table.options.get("turn_time", 0)
        if not acting or not turn_time:
            table.turn_deadline = None
        else:
            table.turn_deadline = self.clock() + turn_time * self.time_scale

    async def _commit(self, table: Table, draft: Table, events: list[Event]) -> None:
        """Save a draft after an action; record the result when the game ended."""
        assert draft.engine is not None
        self._new_turn(draft, events=events)
        if draft.engine.over:
            draft.turn_deadline = None
            # The store keeps it 'playing' until the end was shown (see ended()):
            # a stop in between records and announces it at the next start.
            await self._save(table, draft)
            table.status = "finished"
            await self._record(table)
            self._closed(table)
        else:
            await self._save(table, draft)

    async def _save(self, table: Table, draft: Table) -> None:
        """Save *draft*; once committed it becomes the live *table*.  Any
        failure leaves the live table as it was and raises ``not_saved``."""
        new = draft.log[table.saved:]
        try:
            await self._slow_guard(self.store.save_table(
                table.id, status=draft.status, meta=draft.meta(), actions=new, first_index=table.saved))
        except Exception as error:
            log.warning("table %s: change not saved (%r); nothing changed", table.id, error)
            raise TableError("not_saved") from error
        draft.saved = len(draft.log)
        table.adopt(draft)

    @staticmethod
    async def _slow_guard(saving: Awaitable[Any]) -> Any:
        return await slow_guard(saving)

    @staticmethod
    async def _call_hook(hook: Callable[[], Awaitable[None]]) -> None:
        await _call_hook(hook)

    def _locked(self, table: Table) -> contextlib.AbstractAsyncContextManager[None]:
        return self._guarded(table.lock)

    @staticmethod
    def _guarded(lock: asyncio.Lock) -> contextlib.AbstractAsyncContextManager[None]:
        return guarded(lock)

    async def _record(self, table: Table) -> None:
        from app.store import GameRecord, PlayerResult

        result = table.engine.result if table.engine is not None else None
        assert result is not None, "only a finished game is recorded"
        has_bots = any(s.computer for s in table.seats)
        players = [
            PlayerResult(
                user_id=seat.user_id, name=seat.name, seat=index,
                score=result.scores[index], place=result.places[index],
                stats=dict(result.stats[index]) if result.stats else {},
            )
            for index, seat in enumerate(table.seats)
        ]
        try:
            rated = True
            if has_bots:
                settings = await self.store.guild_settings(table.guild_id)
                rated = bool(settings.get("rate_bot_games"))
            if table.options.get("hints"):
                rated = False  # the coach helped: never a rated game
            if table.options.get("variant") and rated:
                # a variant counts for stats; the rating boards are the standard game's unless the server says
                settings = await self.store.guild_settings(table.guild_id)
                rated = bool(settings.get("rate_variants"))
            record = GameRecord(
                table_id=table.id, guild_id=table.guild_id, channel_id=table.channel_id, game=table.game,
                started_at=table.started_at or table.created_at, ended_at=self.clock(), seed=table.seed,
                rounds=result.rounds, has_bots=has_bots, rated=rated, players=players,
            )
            await self.store.record_game(record)  # once per table id, whatever the number of calls
            table.recorded = True
        except Exception:  # the game itself is saved: ended() (or the next start) records it again
            log.exception("recording the result of table %s failed", table.id)

    def _closed(self, table: Table) -> None:
        for hook in self.closed_hooks:
            try:
                hook(table)
            except Exception:
                log.exception("a closed-table hook failed for table %s", table.id)

    @staticmethod
    def _missed(table: Table, seat: int) -> Event:
        """A timed-out turn of ``seat``: the third in a row hands it to a computer
        (the thread's line about it is a note of the draft ``table``)."""
        state = table.seats[seat]
        state.missed += 1
        if state.missed >= MISSED_TURNS_LIMIT:
            state.away = True
        return table.note({"type": "timeout", "seat": seat, "away": state.away})


    def _forget(self, table: Table) -> None:
        """A closed table leaves memory (its presenter keeps a reference while it shows the end)."""
        if table.status not in ACTIVE and self.tables.get(table.id) is table:
            del self.tables[table.id]
            self._retries.pop(table.id, None)
            if self.players is not None:
                self.players.forget(table.id)  # its replayed history is no longer needed

    def _later(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro, context=contextvars.Context())
        self._closers.add(task)
        task.add_done_callback(self._closers.discard)

    # ---------------------------------------------------------- idle tables
    async def _sweep_loop(self) -> None:
        await self.loaded()
        while not self._closing:
            try:
                await self.close_idle()
            except Exception:
                log.exception("looking for idle tables failed")
            await asyncio.sleep(self.sweep_interval)

    async def close_idle(self) -> list[Table]:
        """Close (as 'abandoned') every table where nobody acted for ``idle_limit``."""
        now = self.clock()
        closed = []
        for table in list(self.tables.values()):
            if table.status not in ACTIVE or now - table.active_at < self.idle_limit:
                continue
            async with table.lock:
                if table.status not in ACTIVE or now - table.active_at < self.idle_limit:
                    continue
                draft = table.draft()
                draft.status = "abandoned" if table.status == "playing" else "cancelled"
                draft.turn_deadline = None
                draft.idle = True
                said = draft.note({"type": "idle", "hours": max(1, round(self.idle_limit / 3600))})
                try:
                    await self._save(table, draft)
                except TableError:
                    continue  # the next sweep tries again
                self._drop_timer(table)
            log.info("table %s closed: nobody acted for %.0f s", table.id, now - table.active_at)
            self._forget(table)
            closed.append(table)
            self.listener(table, [said])
            self._closed(table)
        return closed

    # --------------------------------------------------------- timers, bots
    def _drop_timer(self, table: Table) -> None:
        timer = self._timers.pop(table.id, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()

    def _schedule(self, table: Table, retry_in: float | None = None) -> None:
        """Arm the one timer a table needs: a computer's move or the turn timer
        (or, after the store refused one, the same move again in ``retry_in`` s)."""
        self._drop_timer(table)
        if self._closing or table.status != "playing" or table.engine is None:
            return
        acting = to_act(table.engine)
        if not acting:
            return
        version = table.version
        if any(table.seats[seat].automatic for seat in acting):
            delay = self.computer_delay * self.time_scale if retry_in is None else retry_in
            timeout = False
        elif table.turn_deadline is not None:
            delay = max(0.0, table.turn_deadline - self.clock())
            if retry_in is not None:
                delay = max(delay, retry_in)
            timeout = True
        else:
            return
        loop = asyncio.get_running_loop()
        # A fresh context: a click's SLOW_SAVE hook must not follow into the timer.
        context = contextvars.Context()

        def due() -> None:  # (a dropped timer's handle was cancelled: it never gets here)
            self._timers[table.id] = loop.create_task(
                self._auto(table, version, timeout=timeout), name=f"table-{table.id}", context=context)

        self._timers[table.id] = loop.call_later(delay, due, context=context)

    async def _think(self, table: Table, version: int, timeout: bool) -> dict[int, Any]:
        """The hard computers' moves, searched in a worker thread outside the lock
        (on a copy of each seat's knowledge): seat -> move, for every hard
        computer that must act now (several when everyone chooses at once)."""
        engine = table.engine
        if timeout or self.players is None or table.status != "playing" or engine is None:
            return {}
        planned: dict[int, Any] = {}
        for seat in sorted(to_act(engine)):
            if table.version != version or table.status != "playing":
                return {}  # the table moved on while we thought: the plan is stale
            if not table.seats[seat].automatic or table.seats[seat].level != "hard":
                continue
            try:
                planned[seat] = await self.players.think(table, seat, "hard")
            except asyncio.CancelledError:
                raise
            except Exception:  # the table must go on: the normal level moves instead
                log.exception("the hard search at table %s failed", table.id)
        return planned if table.version == version else {}

    def _chooser(self, table: Table, planned: dict[int, Any], version: int, timeout: bool) -> ComputerPlayer:
        """The player for this automatic move: the planned (searched) move if the
        table did not change meanwhile, else the seat's level (normal on a timeout)."""
        if self.players is None:
            return self.computers[table.game]
        # (judged once, before this batch's first move: each move applied lengthens the log, the version)
        fresh = table.version == version

        def choose(engine: Any, seat: int, rng: random.Random) -> Any:
            if fresh and seat in planned:
                return planned.pop(seat)
            level = TIMEOUT_LEVEL if timeout else table.seats[seat].level
            return self.players.choose(table, seat, level)

        return choose

    async def _auto(self, table: Table, version: int, *, timeout: bool) -> None:
        try:
            planned = await self._think(table, version, timeout)
            async with table.lock:
                if table.status != "playing" or table.version != version or table.engine is None:
                    return
                acting = to_act(table.engine)
                if not acting:
                    return
                draft = table.draft(engine=True)
                engine = draft.engine
                assert engine is not None  # a copy of the table's
                choose = self._chooser(draft, planned, version, timeout)
                events: list[Event] = []
                if timeout and registry.spec(table.game).simultaneous:
                    # S3: every seat that has not chosen gets the computer's choice, and
                    # the table says so before the reveal.
                    for seat in sorted(acting):
                        if seat not in to_act(engine) or engine.over:
                            continue
                        events.append(self._missed(draft, seat))
                        rng = random.Random(f"{draft.seed}:{draft.version}")
                        events += self._apply(draft, seat, choose(engine, seat, rng))
                elif timeout:
                    seat = min(acting)
                    # The computer plays the rest of this turn for the absent player.
                    while engine.to_move == seat and not engine.over:
                        rng = random.Random(f"{draft.seed}:{draft.version}")
                        step = self._apply(draft, seat, choose(engine, seat, rng))
                        events += step
                        if any(starts_turn(table.game, e) for e in step):
                            break  # that turn is over; a new one (even the same seat's) gets its own timer
                    events.append(self._missed(draft, seat))
                else:
                    # Computers (and seats a computer holds) act; people keep their own timer.
                    for seat in sorted(acting):
                        if seat in to_act(engine) and draft.seats[seat].automatic and not engine.over:
                            rng = random.Random(f"{draft.seed}:{draft.version}")
                            events += self._apply(draft, seat, choose(engine, seat, rng))
                await self._commit(table, draft, events)
        except asyncio.CancelledError:
            raise
        except TableError as error:
            if error.code != "not_saved":
                raise
            # The store refused the move (disk full, locked...): nothing changed;
            # the same move is tried again, less and less often, until it is saved.
            tries = self._retries[table.id] = self._retries.get(table.id, 0) + 1
            wait = min(RETRY_MAX, RETRY_FIRST * 2 ** (tries - 1))
            log.warning("table %s: automatic move not saved (try %d); again in %.1f s", table.id, tries, wait)
            if self._timers.get(table.id) is asyncio.current_task():
                self._timers.pop(table.id, None)
                self._schedule(table, retry_in=wait)
            return
        except Exception:
            log.exception("automatic move at table %s failed", table.id)
            return
        finally:
            if self._timers.get(table.id) is asyncio.current_task():
                self._timers.pop(table.id, None)
        self._retries.pop(table.id, None)
        self.listener(table, events)
        self._schedule(table)
