"""Tables: lobbies and games in progress, apart from Discord.

A :class:`Table` is a lobby that becomes a game.  The :class:`TableManager`
owns every table, one ``asyncio.Lock`` per table (two clicks never race),
the turn timers and the computer players, and saves every change through the
store before the caller acknowledges it to a player.  It knows nothing about
Discord: the bot's table cog listens to changes and presents them.

Games are replayed from ``seed`` and ``log`` (the engines are
deterministic), so a table survives a restart with nothing but its row and
its action log.
"""
from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from core.protocol import Event, Game

LEVELS = ("easy", "normal", "hard")  # computer levels (core.ai.LEVELS)
TIMEOUT_LEVEL = "normal"  # the turn timer's takeover plays at normal level

log = logging.getLogger(__name__)

MISSED_TURNS_LIMIT = 3  # after this many timed-out turns in a row a computer holds the seat
DEFAULT_TURN_TIME = 120
NEW_TURN = ("turn", "round_start", "hand_start")  # engine events that start a turn


class TableError(Exception):
    """A table-level refusal (not seated, lobby full...).  ``code`` keys the
    translated message ``errors.<code>``; ``params`` fill its placeholders."""

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


@dataclass
class Seat:
    user_id: int | None  # None: a computer player
    name: str
    away: bool = False  # a computer holds the seat until its owner is back
    missed: int = 0  # timed-out turns in a row
    level: str = "normal"  # a computer seat's level: easy | normal | hard

    @property
    def computer(self) -> bool:
        return self.user_id is None

    @property
    def automatic(self) -> bool:
        return self.user_id is None or self.away

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "name": self.name, "away": self.away, "missed": self.missed,
                "level": self.level}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Seat":
        # seats saved before levels existed are normal-level computers
        return cls(data["user_id"], data["name"], bool(data.get("away")), int(data.get("missed", 0)),
                   str(data.get("level") or "normal"))


@dataclass
class Table:
    id: int
    guild_id: int
    channel_id: int
    game: str
    host_id: int
    max_seats: int
    options: dict[str, Any]
    locale: str = "en"
    status: str = "lobby"  # lobby | playing | finished | cancelled
    seats: list[Seat] = field(default_factory=list)
    seed: int | None = None
    log: list[tuple[int, str]] = field(default_factory=list)
    messages: dict[str, int] = field(default_factory=dict)  # lobby, thread, table
    created_at: float = 0.0
    started_at: float | None = None
    turn_seat: int | None = None
    turn_deadline: float | None = None
    saved: int = 0  # how many log entries the store holds
    ending: list[Event] = field(default_factory=list, repr=False)  # events of a last move not yet shown
    engine: Game | None = field(default=None, repr=False)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @property
    def version(self) -> int:
        """Changes with every action: buttons carry it to detect stale clicks."""
        return len(self.log)

    @property
    def thread_id(self) -> int | None:
        return self.messages.get("thread")

    def seat_of(self, user_id: int) -> int | None:
        for index, seat in enumerate(self.seats):
            if seat.user_id == user_id:
                return index
        return None

    def names(self) -> list[str]:
        return [seat.name for seat in self.seats]

    def meta(self) -> dict[str, Any]:
        return {
            "host_id": self.host_id,
            "max_seats": self.max_seats,
            "options": self.options,
            "locale": self.locale,
            "seats": [s.to_dict() for s in self.seats],
            "seed": self.seed,
            "messages": self.messages,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "turn_seat": self.turn_seat,
            "turn_deadline": self.turn_deadline,
        }


class Listener(Protocol):
    def __call__(self, table: Table, events: list[Event]) -> None: ...


ComputerPlayer = Callable[[Any, int, random.Random], Any]


class TableManager:
    """Every table of the bot; the only writer of table state."""

    def __init__(
        self,
        store: Any,
        games: Mapping[str, type],
        computers: Mapping[str, ComputerPlayer],
        *,
        listener: Listener | None = None,
        computer_delay: float = 1.5,
        time_scale: float = 1.0,
        seed: int | None = None,
        clock: Callable[[], float] = time.time,
        players: Any = None,
    ) -> None:
        self.store = store
        self.games = dict(games)
        self.computers = dict(computers)
        self.players = players  # app.computers.Computers: levelled players and hints (else ``computers``)
        self.listener: Listener = listener or (lambda table, events: None)
        self.computer_delay = computer_delay
        self.time_scale = time_scale
        self.fixed_seed = seed
        self.clock = clock
        self.tables: dict[int, Table] = {}
        self._timers: dict[int, asyncio.Task[None]] = {}
        self._closing = False

    # ------------------------------------------------------------------ lookup
    def get(self, table_id: int) -> Table | None:
        return self.tables.get(table_id)

    def in_channel(self, channel_id: int) -> Table | None:
        """The active table whose lobby channel or game thread this is."""
        for table in self.tables.values():
            if table.status in ("lobby", "playing") and channel_id in (table.channel_id, table.thread_id):
                return table
        return None

    # ---------------------------------------------------------------- restore
    async def restore(self) -> list[Table]:
        """Load every lobby and game from the store and replay it."""
        restored = []
        for record in await self.store.active_tables():
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
                log=[(int(seat), str(text)) for seat, text in record.actions],
                messages={k: int(v) for k, v in meta.get("messages", {}).items()},
                created_at=meta.get("created_at", 0.0),
                started_at=meta.get("started_at"),
                turn_seat=meta.get("turn_seat"),
                turn_deadline=meta.get("turn_deadline"),
            )
            table.saved = len(table.log)
            if table.status == "playing":
                try:
                    table.engine = self.games[table.game].replay(
                        len(table.seats), table.seed, self._engine_options(table), table.log)
                except Exception:  # a corrupt row must not stop the other tables
                    log.exception("table %s could not be replayed; it is left out", table.id)
                    continue
                if table.engine.over:
                    # Stopped after the last move, before its end was shown: record it
                    # (at most once per table) and hand the ending back to be announced.
                    table.status = "finished"
                    table.turn_deadline = None
                    await self._record(table)
                    cls = self.games[table.game]
                    before = cls.replay(len(table.seats), table.seed, self._engine_options(table), table.log[:-1])
                    seat, text = table.log[-1]
                    table.ending = before.apply(seat, before.parse(text))
            self.tables[table.id] = table
            restored.append(table)
        return restored

    def start_timers(self) -> None:
        for table in list(self.tables.values()):
            if table.status == "playing":
                self._schedule(table)

    async def shutdown(self) -> None:
        self._closing = True
        for task in self._timers.values():
            task.cancel()
        for task in list(self._timers.values()):
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._timers.clear()

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
    ) -> Table:
        cls = self.games[game]
        if not cls.min_seats <= seats <= cls.max_seats:
            raise TableError("bad_seats", min=cls.min_seats, max=cls.max_seats)
        existing = self.in_channel(channel_id)
        if existing is not None:
            raise TableError("channel_busy", table=existing.id)
        options: dict[str, Any] = {"turn_time": max(0, int(turn_time))}
        if rounds is not None:
            options["rounds"] = int(rounds)
        table = Table(
            id=0, guild_id=guild_id, channel_id=channel_id, game=game, host_id=host_id,
            max_seats=seats, options=options, locale=locale,
            seats=[Seat(host_id, host_name)], created_at=self.clock(),
        )
        table.id = await self.store.create_table(guild_id, channel_id, game, table.meta())
        self.tables[table.id] = table
        return table

    def _lobby(self, table: Table) -> None:
        if table.status != "lobby":
            raise TableError("not_in_lobby")

    async def join(self, table: Table, user_id: int, name: str) -> None:
        async with table.lock:
            self._lobby(table)
            if table.seat_of(user_id) is not None:
                raise TableError("already_seated")
            if len(table.seats) >= table.max_seats:
                raise TableError("table_full")
            table.seats.append(Seat(user_id, name))
            await self._save(table)
        self.listener(table, [{"type": "lobby", "change": "join", "name": name}])

    async def leave(self, table: Table, user_id: int) -> None:
        async with table.lock:
            self._lobby(table)
            index = table.seat_of(user_id)
            if index is None:
                raise TableError("not_seated")
            if user_id == table.host_id:
                raise TableError("host_cannot_leave")
            name = table.seats.pop(index).name
            await self._save(table)
        self.listener(table, [{"type": "lobby", "change": "leave", "name": name}])

    async def add_computer(self, table: Table, user_id: int, level: str = "normal") -> None:
        if level not in LEVELS:
            raise TableError("ai.bad_level")
        async with table.lock:
            self._lobby(table)
            if user_id != table.host_id:
                raise TableError("host_only")
            if len(table.seats) >= table.max_seats:
                raise TableError("table_full")
            number = sum(1 for s in table.seats if s.computer) + 1
            name = f"CPU {number}"
            table.seats.append(Seat(None, name, level=level))
            await self._save(table)
        self.listener(table, [{"type": "lobby", "change": "computer", "name": name, "level": level}])

    async def unrated(self, table: Table) -> bool:
        """A game that cannot change ratings: computer players at a server that
        does not rate such games (``/settings rated_computers``, see _record)."""
        if not any(s.computer for s in table.seats):
            return False
        settings = await self.store.guild_settings(table.guild_id)
        return not settings.get("rate_bot_games")

    async def set_hints(self, table: Table, user_id: int, on: bool) -> None:
        """The host turns the coach on or off in the lobby; only for unrated games."""
        async with table.lock:
            self._lobby(table)
            if user_id != table.host_id:
                raise TableError("host_only")
            if on and (self.players is None or not self.players.supports(table.game)):
                raise TableError("ai.hints_unavailable")
            if on and not await self.unrated(table):
                raise TableError("ai.hints_rated")
            if on:
                table.options["hints"] = True
            else:
                table.options.pop("hints", None)
            await self._save(table)

    async def hint(self, table: Table, user_id: int) -> Any:
        """The coach: the hard level's decision for the caller's move, with its figures."""
        if not table.options.get("hints"):
            raise TableError("ai.hints_off")
        if table.status != "playing" or table.engine is None:
            raise TableError("not_playing")
        seat = table.seat_of(user_id)
        if seat is None:
            raise TableError("not_seated")
        if table.engine.to_move != seat:
            raise TableError("ai.hint_not_your_turn")
        return await self.players.hint(table, seat)

    async def cancel(self, table: Table, user_id: int, *, can_manage: bool) -> None:
        async with table.lock:
            if table.status not in ("lobby", "playing"):
                raise TableError("table_closed")
            if user_id != table.host_id and not can_manage:
                raise TableError("cancel_denied")
            table.status = "cancelled"
            await self.store.close_table(table.id, "cancelled")
            self._drop_timer(table)
        self.listener(table, [{"type": "cancelled"}])

    async def start(self, table: Table, user_id: int) -> list[Event]:
        async with table.lock:
            self._lobby(table)
            if user_id != table.host_id:
                raise TableError("host_only")
            cls = self.games[table.game]
            if len(table.seats) < cls.min_seats:
                raise TableError("not_enough_players", min=cls.min_seats)
            if all(s.computer for s in table.seats):
                raise TableError("no_humans")
            table.seed = self.fixed_seed if self.fixed_seed is not None else secrets.randbits(48)
            table.engine = cls.new(len(table.seats), table.seed, **self._engine_options(table))
            table.status = "playing"
            table.started_at = self.clock()
            events = [{"type": "started"}]
            self._new_turn(table)
            await self._save(table)
        self.listener(table, events)
        self._schedule(table)
        return events

    async def ended(self, table: Table) -> None:
        """The end of the game was shown: the table is closed for good."""
        if table.status == "finished":
            await self.store.close_table(table.id, "finished")
            table.ending = []
            if self.players is not None:
                self.players.forget(table.id)  # its replayed history is no longer needed

    def set_message(self, table: Table, kind: str, message_id: int | None) -> None:
        if message_id is None:
            table.messages.pop(kind, None)
        else:
            table.messages[kind] = message_id

    async def save_messages(self, table: Table) -> None:
        """Persist message/thread ids after the presenter (re)posted them."""
        async with table.lock:
            if table.status in ("lobby", "playing"):
                await self._save(table)

    # ------------------------------------------------------------------ play
    async def act(self, table: Table, user_id: int, action: Any, *, version: int | None = None) -> list[Event]:
        """A player's own action.  Validated by the engine, saved, then announced.

        Raises :class:`TableError` (not seated, stale, not playing) or the
        engine's :class:`~core.protocol.GameError` (illegal move); in both
        cases nothing changed.
        """
        async with table.lock:
            if table.status != "playing" or table.engine is None:
                raise TableError("not_playing")
            seat = table.seat_of(user_id)
            if seat is None:
                raise TableError("not_seated")
            if version is not None and version != table.version:
                raise TableError("stale")
            engine = table.engine
            if isinstance(action, str):
                action = engine.parse(action)
            events = self._apply(table, seat, action)  # the engine refuses a wrong turn or move
            table.seats[seat].missed = 0
            await self._commit(table, events)
        self.listener(table, events)
        self._schedule(table)
        return events

    async def back(self, table: Table, user_id: int) -> None:
        """'I'm back': the owner takes the seat back from the computer."""
        async with table.lock:
            if table.status != "playing":
                raise TableError("not_playing")
            seat = table.seat_of(user_id)
            if seat is None:
                raise TableError("not_seated")
            if not table.seats[seat].away:
                raise TableError("not_away")
            table.seats[seat].away = False
            table.seats[seat].missed = 0
            if table.engine is not None and table.engine.to_move == seat:
                self._new_turn(table, force=True)
            await self._save(table)
        events = [{"type": "back", "seat": seat}]
        self.listener(table, events)
        self._schedule(table)

    # -------------------------------------------------------------- internals
    def _engine_options(self, table: Table) -> dict[str, Any]:
        options = {k: v for k, v in table.options.items() if k not in ("turn_time", "hints")}
        if "rounds" in options:
            # A table may choose fewer rounds than players (RULES.md 1), never more:
            # the lobby's choice is capped by the players who actually sat down.
            options["rounds"] = min(int(options["rounds"]), len(table.seats))
        return options

    def _apply(self, table: Table, seat: int, action: Any) -> list[Event]:
        assert table.engine is not None
        events = table.engine.apply(seat, action)
        table.log.append((seat, str(action)))
        return events

    def _new_turn(self, table: Table, force: bool = False, events: list[Event] = ()) -> None:
        engine = table.engine
        to_move = engine.to_move if engine is not None else None
        new = force or to_move != table.turn_seat or any(e.get("type") in NEW_TURN for e in events)
        if not new:
            return
        table.turn_seat = to_move
        turn_time = table.options.get("turn_time", 0)
        if to_move is None or not turn_time:
            table.turn_deadline = None
        else:
            table.turn_deadline = self.clock() + turn_time * self.time_scale

    async def _commit(self, table: Table, events: list[Event]) -> None:
        """Save after an action; record the result when the game ended."""
        assert table.engine is not None
        self._new_turn(table, events=events)
        if table.engine.over:
            table.turn_deadline = None
            # The store keeps it 'playing' until the end was shown (see ended()):
            # a stop in between records and announces it at the next start.
            await self._save(table)
            table.status = "finished"
            await self._record(table)
        else:
            await self._save(table)

    async def _save(self, table: Table) -> None:
        new = table.log[table.saved:]
        await self.store.save_table(
            table.id, status=table.status, meta=table.meta(), actions=new, first_index=table.saved)
        table.saved = len(table.log)

    async def _record(self, table: Table) -> None:
        from app.store import GameRecord, PlayerResult

        result = table.engine.result  # type: ignore[union-attr]
        has_bots = any(s.computer for s in table.seats)
        rated = True
        if has_bots:
            settings = await self.store.guild_settings(table.guild_id)
            rated = bool(settings.get("rate_bot_games"))
        if table.options.get("hints"):
            rated = False  # the coach helped: never a rated game
        players = [
            PlayerResult(
                user_id=seat.user_id, name=seat.name, seat=index,
                score=result.scores[index], place=result.places[index],
                stats=dict(result.stats[index]) if result.stats else {},
            )
            for index, seat in enumerate(table.seats)
        ]
        record = GameRecord(
            table_id=table.id, guild_id=table.guild_id, channel_id=table.channel_id, game=table.game,
            started_at=table.started_at or table.created_at, ended_at=self.clock(), seed=table.seed,
            rounds=result.rounds, has_bots=has_bots, rated=rated, players=players,
        )
        try:
            await self.store.record_game(record)
        except Exception:  # the game itself is saved; stats can be re-derived
            log.exception("recording the result of table %s failed", table.id)

    def _drop_timer(self, table: Table) -> None:
        task = self._timers.pop(table.id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def _schedule(self, table: Table) -> None:
        """Arm the one timer a table needs: a computer's move or the turn timer."""
        self._drop_timer(table)
        if self._closing or table.status != "playing" or table.engine is None:
            return
        seat = table.engine.to_move
        if seat is None:
            return
        version = table.version
        if table.seats[seat].automatic:
            delay = self.computer_delay * self.time_scale
            coro = self._auto(table, version, timeout=False, delay=delay)
        elif table.turn_deadline is not None:
            delay = max(0.0, table.turn_deadline - self.clock())
            coro = self._auto(table, version, timeout=True, delay=delay)
        else:
            return
        self._timers[table.id] = asyncio.get_running_loop().create_task(coro, name=f"table-{table.id}")

    async def _think(self, table: Table, version: int, timeout: bool) -> Any:
        """A hard computer's move, searched in a worker thread outside the lock
        (on a copy of the seat's knowledge); None when there is nothing to search."""
        engine = table.engine
        if timeout or self.players is None or table.status != "playing" or engine is None:
            return None
        seat = engine.to_move
        if seat is None or table.version != version or table.seats[seat].level != "hard":
            return None
        try:
            return await self.players.think(table, seat, "hard")
        except asyncio.CancelledError:
            raise
        except Exception:  # the table must go on: the normal level moves instead
            log.exception("the hard search at table %s failed", table.id)
            return None

    def _chooser(self, table: Table, planned: Any, version: int, timeout: bool) -> ComputerPlayer:
        """The player for this automatic move: the planned (searched) move if the
        table did not change meanwhile, else the seat's level (normal on a timeout)."""
        if self.players is None:
            return self.computers[table.game]

        def choose(engine: Any, seat: int, rng: random.Random) -> Any:
            nonlocal planned
            if planned is not None and table.version == version:
                action, planned = planned, None
                return action
            level = TIMEOUT_LEVEL if timeout else table.seats[seat].level
            return self.players.choose(table, seat, level)

        return choose

    async def _auto(self, table: Table, version: int, *, timeout: bool, delay: float) -> None:
        await asyncio.sleep(delay)
        try:
            planned = await self._think(table, version, timeout)
            async with table.lock:
                if table.status != "playing" or table.version != version or table.engine is None:
                    return
                engine = table.engine
                seat = engine.to_move
                if seat is None:
                    return
                choose = self._chooser(table, planned, version, timeout)
                events: list[Event] = []
                if timeout:
                    # The computer plays the rest of this turn for the absent player.
                    while engine.to_move == seat and not engine.over:
                        rng = random.Random(f"{table.seed}:{table.version}")
                        step = self._apply(table, seat, choose(engine, seat, rng))
                        events += step
                        if any(e.get("type") in NEW_TURN for e in step):
                            break  # that turn is over; a new one (even the same seat's) gets its own timer

                    state = table.seats[seat]
                    state.missed += 1
                    if state.missed >= MISSED_TURNS_LIMIT:
                        state.away = True
                    events.append({"type": "timeout", "seat": seat, "away": state.away})
                else:
                    rng = random.Random(f"{table.seed}:{table.version}")
                    events += self._apply(table, seat, choose(engine, seat, rng))
                await self._commit(table, events)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("automatic move at table %s failed", table.id)
            return
        finally:
            if self._timers.get(table.id) is asyncio.current_task():
                self._timers.pop(table.id, None)
        self.listener(table, events)
        self._schedule(table)
