"""Game nights in motion, apart from Discord: sign-up, rounds of tables
opened through the :class:`~app.tables.TableManager`, points as each table
finishes, the end of the night.

Every change is saved (one JSON row per night, :meth:`Store.save_night`)
before the caller answers a player.  The host learns that a table of a night
is over from the manager's ``closed_hooks`` and reads the finish from what
the store recorded (:meth:`Store.table_result`), so after a restart
:meth:`NightHost.reconcile` settles a table that ended while the bot was
down exactly as the hook would have.  One ``asyncio.Lock`` per night.  A
change the store refused is undone in memory (:meth:`NightHost._change`), and
messages are drawn from :meth:`NightHost.shown`, the night as last saved, so
nothing is shown that was not saved, not even while a save is under way.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import json
import logging
import time
from typing import Any, AsyncIterator, Awaitable, Callable

from app.i18n.catalogue import t
from app.nights.night import (
    ENDED, PLAYING, SIGNUP, GameEvents, Missed, Night, NightError, NightTable, Player, highlights,
    seat_round, standings,
)
from app.tables.manager import LEVELS, Note, Table, TableError, TableManager, guarded, slow_guard
from core import registry

log = logging.getLogger(__name__)

DEFAULT_TABLE_SIZE = 4
#: the break between rounds of a night whose rounds start by themselves (seconds, times the
#: table manager's time scale): time to read the standings, fetch a drink, sign up late
BREAK_SECONDS = 60.0
#: a reminder goes out this long before a night's first round (seconds, times the time scale)
REMIND_BEFORE = 15 * 60.0
#: how far ahead a night's first round may be set with a start time (seconds, real time): a night
#: holds its channel until it is over; Discord's calendar itself takes events further ahead
MAX_AHEAD = 30 * 86400.0
#: the earliest a start time may be (seconds from now, times the time scale): as ``starts_in:1``
MIN_AHEAD = 60.0

#: kinds: "round" (started or over), "table" (one ended), "players" (someone stepped away or is back), "ended",
#: "missed" (the first round's time came and it could not start: :attr:`Night.missed` says why)
Listener = Callable[[Night, str], None]


def _copy(night: Night) -> Night:
    """A copy of *night* that shares nothing with it (through what the store saves)."""
    meta = json.loads(json.dumps(night.meta()))
    return Night.from_record(night.id, night.guild_id, night.channel_id, night.game, night.status, meta)


class NightHost:
    def __init__(self, store: Any, tables: TableManager, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.tables = tables
        self.clock = clock
        self.nights: dict[int, Night] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._shown: dict[int, Night] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self.listener: Listener = lambda night, kind: None
        #: announces and starts the tables of a round that started by itself (the cog's)
        self.round_started: Callable[[Night], Awaitable[None]] | None = None
        self._timers: dict[int, asyncio.Task[None]] = {}  # night id -> its next round's start
        #: sends a night's reminder (the cog's); True once it went out
        self.remind: Callable[[Night], Awaitable[bool]] | None = None
        self._reminders: dict[int, asyncio.Task[None]] = {}  # night id -> its reminder's timer
        tables.closed_hooks.append(self._table_closed)
        tables.away_hooks.append(self._seat_handed)

    # ------------------------------------------------------------------ lookup
    def lock(self, night: Night) -> asyncio.Lock:
        return self._locks.setdefault(night.id, asyncio.Lock())

    def shown(self, night: Night) -> Night:
        """*night* as last saved: what messages may show.  The night itself
        changes in memory under its lock before the store has taken the
        change, and a refused change is undone; a message drawn meanwhile
        from the night itself could show what never happened."""
        return self._shown.get(night.id, night)

    def _keep(self, night: Night) -> None:
        self._shown[night.id] = _copy(night)

    def in_channel(self, channel_id: int) -> Night | None:
        for night in self.nights.values():
            if night.channel_id == channel_id and night.status != ENDED:
                return night
        return None

    def game_limits(self, game: str) -> tuple[int, int]:
        cls = self.tables.games[game]
        return int(cls.min_seats), int(cls.max_seats)

    def can_control(self, night: Night, user_id: int, can_manage: bool) -> bool:
        return user_id == night.organiser_id or can_manage

    def _control(self, night: Night, user_id: int, can_manage: bool) -> None:
        if not self.can_control(night, user_id, can_manage):
            raise NightError("not_organiser")

    def _open(self, night: Night) -> None:
        if night.status == ENDED:
            raise NightError("ended")

    async def _save(self, night: Night) -> None:
        try:
            await slow_guard(self.store.save_night(night.id, night.status, night.meta()))
        except Exception as error:
            log.warning("night %s: change not saved (%r)", night.id, error)
            raise TableError("not_saved") from error
        self._keep(night)

    @contextlib.asynccontextmanager
    async def _change(self, night: Night) -> AsyncIterator[None]:
        """A change of ``night`` (under its lock): when it fails (the store
        refused it), the night is as it was before, also in memory."""
        before = _copy(night)
        try:
            yield
        except BaseException:
            for f in dataclasses.fields(Night):
                setattr(night, f.name, getattr(before, f.name))
            raise

    def _tell(self, night: Night, kind: str) -> None:
        try:
            self.listener(night, kind)
        except Exception:
            log.exception("night %s: listener failed (%s)", night.id, kind)

    # ----------------------------------------------------------------- restore
    async def restore(self, owns: Callable[[int], bool] | None = None) -> list[Night]:
        """Load every open night (before the tables' timers start); with ``owns``
        only those of the servers it accepts."""
        for row in await self.store.open_nights():
            if owns is not None and not owns(row["guild_id"]):
                continue
            night = Night.from_record(row["id"], row["guild_id"], row["channel_id"], row["game"],
                                      row["status"], row["meta"])
            self.nights[night.id] = night
            self._keep(night)
        return list(self.nights.values())

    async def reconcile(self, night: Night) -> bool:
        """After a restart: settle tables that ended while the bot was down,
        close lobbies a stop left unannounced to the night.  True if anything changed."""
        changed = False
        known = {nt.table_id for nt in night.tables}
        for unknown in list(self.tables.tables.values()):
            if unknown.night_id == night.id and unknown.id not in known and unknown.status == "lobby":
                await self.tables.cancel(unknown, unknown.host_id, can_manage=True)  # seated, never told
        if night.status != ENDED and any(self.follow_seats(night, table) for table in self._playing(night)):
            try:
                async with self._change(night):
                    await self._save(night)
                self._tell(night, "players")
                changed = True
            except TableError:  # not saved: as it was; the next start tries again
                log.warning("night %s: a step away or back not followed yet", night.id)
        for nt in list(night.playing_tables()):
            table = self.tables.get(nt.table_id)
            if table is None or table.status in ("finished", "cancelled"):
                try:
                    async with self._change(night):
                        changed = await self._settle(night, nt.table_id) or changed
                except TableError:  # not saved: settled later, when the store takes it
                    self._later_settle(night, nt.table_id)
        return changed

    def _playing(self, night: Night) -> list[Table]:
        """The live tables of the night's round."""
        tables = (self.tables.get(nt.table_id) for nt in night.playing_tables())
        return [table for table in tables if table is not None and table.status == "playing"]

    @staticmethod
    def follow_seats(night: Night, table: Table) -> bool:
        """Make the night agree with ``table``'s seats, as :meth:`_seat_handed`
        would have: someone whose seat they handed to the computer by choice is
        off the night, someone back at it is on it again.  The seat is saved
        first and the night after it, so a kill between the two saves leaves the
        night behind; a restart mends it here.  A night that already followed
        this table's step away, and was changed since (they signed up again,
        pressed *Leave*, were taken off), is left as it is.  True if ``night``
        changed (in memory: the caller saves it)."""
        changed = False
        for seat in table.seats:
            player = night.player(seat.user_id) if seat.user_id is not None else None
            if player is None:
                continue
            if seat.away and seat.stepped and not player.left and player.stepped_at != table.id:
                player.step(table.id, True)
                changed = True
            elif not seat.away and player.away and player.stepped_at == table.id:
                player.step(table.id, False)
                changed = True
        return changed

    # ------------------------------------------------------------------ sign-up
    async def create(self, *, guild_id: int, channel_id: int, game: str, organiser_id: int, organiser_name: str,
                     table_size: int | None, rounds: int | None, turn_time: int, locale: str,
                     starts_in: float | None = None, remind_role: int | None = None,
                     variant: str | None = None, starts_at: float | None = None) -> Night:
        """A night in sign-up; ``starts_in`` (seconds, times the table manager's
        time scale) or ``starts_at`` (a moment, seconds since the epoch): its
        first round starts by itself then (see :meth:`first_at`); ``remind_role``:
        the role its reminder pings."""
        first = self.first_at(starts_in, starts_at)
        if game not in self.tables.games:
            raise NightError("bad_game")
        if variant is not None and registry.spec(game).variant(variant) is None:
            raise NightError("bad_variant")
        low, high = self.game_limits(game)
        size = min(max(DEFAULT_TABLE_SIZE, low), high) if table_size is None else table_size
        if not max(2, low) <= size <= high:
            raise NightError("bad_size", min=max(2, low), max=high)
        if self.in_channel(channel_id) is not None:
            raise NightError("channel_busy")
        night = Night(id=0, guild_id=guild_id, channel_id=channel_id, game=game, organiser_id=organiser_id,
                      table_size=size, rounds=rounds, turn_time=max(0, int(turn_time)), locale=locale,
                      players=[Player(organiser_id, organiser_name)], created_at=self.clock(),
                      remind_role=remind_role, variant=variant)
        night.next_at = first
        try:
            night.id = await slow_guard(self.store.create_night(guild_id, channel_id, game, night.meta()))
        except LookupError:
            raise NightError("channel_busy") from None
        except Exception as error:
            log.warning("night in channel %s: not saved (%r)", channel_id, error)
            raise TableError("not_saved") from error
        self.nights[night.id] = night
        self._keep(night)
        self._arm(night)
        return night

    async def join(self, night: Night, user_id: int, name: str) -> None:
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            player = night.player(user_id)
            if player is not None and not player.left:
                raise NightError("already_joined")
            if player is not None:
                player.left, player.away, player.name = False, False, name
            else:
                night.players.append(Player(user_id, name))
            await self._save(night)

    async def join_many(self, night: Night, user_id: int, can_manage: bool, people: list[tuple[int, str]]) -> int:
        """*Seat my voice channel*: sign up everyone given; returns how many were new."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            added = 0
            for uid, name in people:
                player = night.player(uid)
                if player is None:
                    night.players.append(Player(uid, name))
                elif player.left:
                    player.left = player.away = False
                else:
                    continue
                added += 1
            if added:
                await self._save(night)
            return added

    async def leave(self, night: Night, user_id: int) -> None:
        """Not seated again; a table of this round whose people all left is closed."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            player = night.player(user_id)
            if player is None or player.left and not player.away:  # (off by a step away: now for good)
                raise NightError("not_joined")
            await self._gone(night, player)

    async def remove(self, night: Night, user_id: int, can_manage: bool, player_id: int) -> str:
        """The organiser takes someone off the night who signed up and is not
        there (as if they had left: not seated again; a game of theirs still
        counts).  Returns their name."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            player = night.player(player_id)
            if player is None or player.left:
                raise NightError("gone")
            await self._gone(night, player)
            return player.name

    async def _gone(self, night: Night, player: Player) -> None:
        """``player`` leaves the night (saved; under the night's lock)."""
        user_id = player.user_id
        player.left, player.away, player.stepped_at = True, False, None
        await self._save(night)
        gone = {p.user_id for p in night.players if p.left and not p.away}  # (a computer plays on for those away)
        for nt in night.playing_tables():
            people = [u for u in nt.seats if u is not None]
            table = self.tables.get(nt.table_id)
            if user_id in people and all(u in gone for u in people) and table is not None:
                try:
                    await self.tables.cancel(table, table.host_id, can_manage=True, reason="players_left")
                except TableError:
                    pass  # finished meanwhile: it counts

    async def _seat_handed(self, table: Table, user_id: int, away: bool) -> Note | None:
        """Someone at a table of the night stepped away (``/leave`` in its
        thread: they must go) or is back.  Gone: the night no longer seats them
        (their game plays on with a computer in their seat, and counts); back:
        it seats them again.  Returns the line their answer adds."""
        night = self.nights.get(table.night_id) if table.night_id is not None else None
        if night is None or night.status == ENDED:
            return None
        key = "away_off" if away else "back_on"
        try:
            async with guarded(self.lock(night)), self._change(night):
                player = night.player(user_id)
                if player is None or night.status == ENDED or (player.left if away else not player.away):
                    return None  # off the night already, or off it by their own choice
                player.step(table.id, away)
                await self._save(night)
        except TableError:  # not saved: as it was, and they are told so
            key = "away_not_saved" if away else "back_not_saved"
        else:
            self._tell(night, "players")
        return lambda lang: t(lang, f"nights.{key}", back=t(lang, "table.im_back"), join=t(lang, "nights.join"),
                              leave=t(lang, "nights.leave"))

    async def toggle_fill(self, night: Night, user_id: int, can_manage: bool) -> bool:
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            night.fill = not night.fill
            await self._save(night)
            return night.fill

    # ------------------------------------------------------------- the calendar
    async def toggle_reminder(self, night: Night, user_id: int) -> bool:
        """*Remind me*: ``user_id`` hears of the first round about
        :data:`REMIND_BEFORE` ahead (or no longer).  True: on the list now."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            if night.round or night.status != SIGNUP:
                raise NightError("remind_started")
            if night.first_start() is None:
                raise NightError("no_start_time")
            if night.reminded:
                raise NightError("reminded_already")
            on = user_id not in night.remind
            if on:
                night.remind.append(user_id)
            else:
                night.remind.remove(user_id)
            await self._save(night)
        self._arm(night)
        return on

    async def set_interest(self, night: Night, user_id: int, interested: bool) -> None:
        """Someone marked the night's event *Interested* in Discord (or took it back)."""
        async with guarded(self.lock(night)), self._change(night):
            if night.status == ENDED or (user_id in night.interested) == interested:
                return
            if interested:
                night.interested.append(user_id)
            else:
                night.interested.remove(user_id)
            await self._save(night)
        self._arm(night)
        self._tell(night, "players")

    def first_at(self, starts_in: float | None, starts_at: float | None) -> float | None:
        """When a first round starts by itself: ``starts_in`` seconds (times
        the time scale) from now, or at the moment ``starts_at``, which must be
        at least :data:`MIN_AHEAD` and at most :data:`MAX_AHEAD` ahead (not
        both; neither: None, the organiser starts it)."""
        if starts_in is not None and starts_at is not None:
            raise NightError("two_times")
        now = self.clock()
        if starts_in is not None:
            return now + max(0.0, float(starts_in)) * self.tables.time_scale
        if starts_at is None:
            return None
        if starts_at < now + MIN_AHEAD * self.tables.time_scale:
            raise NightError("time_past", at=int(starts_at))
        if starts_at > now + MAX_AHEAD:
            raise NightError("time_too_far", at=int(starts_at), days=round(MAX_AHEAD / 86400))
        return float(starts_at)

    async def reschedule(self, night: Night, user_id: int, can_manage: bool, starts_in: float | None,
                         starts_at: float | None = None) -> None:
        """The first round starts ``starts_in`` seconds (times the time scale)
        from now, or at ``starts_at`` (:meth:`first_at`); the reminder follows
        the new time."""
        if starts_in is None and starts_at is None:
            raise NightError("no_time")
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            if night.round or night.status != SIGNUP:
                raise NightError("already_started")
            night.next_at = self.first_at(starts_in, starts_at)
            night.reminded = False
            await self._save(night)
        self._arm(night)
        self._tell(night, "players")

    async def toggle_watch(self, night: Night, user_id: int, name: str) -> bool:
        """*Watch* on the night's standings: ``user_id`` watches every live
        table of the night, this round and the next ones (or no longer).
        True: watching now."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            on = user_id not in night.watchers
            if on:
                night.watchers[user_id] = name
            else:
                del night.watchers[user_id]
            await self._save(night)
        for table in self._playing(night):
            await self._watch(table, user_id, name, on)
        return on

    async def _watch(self, table: Table, user_id: int, name: str, on: bool) -> None:
        """A night's watcher at one of its tables (not where they play; a
        table that ended or a refused save meanwhile: that table goes without)."""
        if table.seat_of(user_id) is None and table.watching(user_id) != on:
            with contextlib.suppress(TableError):
                await self.tables.watch(table, user_id, name, on=on)

    async def event_told(self, night: Night, event_id: int | None, status: str | None, start: float | None) -> None:
        """Discord's calendar was told of the night (its event, status, start),
        or the event is gone (None)."""
        async with guarded(self.lock(night)), self._change(night):
            night.event_id, night.event_status, night.event_start = event_id, status, start
            await self._save(night)
        self._forget_if_over(night)

    def remind_at(self, night: Night) -> float | None:
        """When the night's reminder is due (None: none is, or it went out)."""
        start = night.first_start()
        if start is None or night.reminded:
            return None
        return start - REMIND_BEFORE * self.tables.time_scale

    async def _remind_when_due(self, night: Night) -> None:
        """At :meth:`remind_at`, the reminder once (then saved as sent, so a
        restart does not send it again); tried again, less and less often,
        while Discord or the store refuse."""
        wait = 1.0
        while not self._closing:
            due = self.remind_at(night)
            if due is None:
                return
            await asyncio.sleep(max(0.0, due - self.clock()))
            if self.remind_at(night) != due or self.clock() < due:
                continue  # moved meanwhile, or woken a moment early
            if not night.to_remind() and night.remind_role is None:
                return  # nobody to remind: a later Remind me arms it again
            try:
                sent = self.remind is not None and await self.remind(night)
                if sent:
                    async with guarded(self.lock(night)), self._change(night):
                        night.reminded = True
                        await self._save(night)
                    self._tell(night, "players")
                    return
            except Exception:
                log.warning("night %s: reminder not sent or not saved; again in %.1f s", night.id, wait, exc_info=True)
            await asyncio.sleep(wait)
            wait = min(30.0, wait * 2)

    async def set_level(self, night: Night, user_id: int, can_manage: bool, level: str) -> None:
        """The level of the computers that fill the night's tables from the next round on."""
        if level not in LEVELS:
            raise NightError("bad_level")
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            night.level = level
            await self._save(night)

    # ------------------------------------------------------------------ rounds
    async def ratings(self, night: Night) -> dict[int, float]:
        out = {}
        for player in night.active():
            profile = await self.store.profile(player.user_id, night.game, None)
            out[player.user_id] = float(profile["ordinal"]) if profile and profile.get("ordinal") is not None else 0.0
        return out

    async def start_round(self, night: Night, user_id: int, can_manage: bool) -> list[Table]:
        """Seat everyone signed up at new tables (saved, still lobbies): the
        caller then announces and starts them with :meth:`launch`."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            made = await self._seat(night)
        self._arm(night)  # (a countdown to this round is over)
        self._tell(night, "round")
        return made

    async def _seat(self, night: Night) -> list[Table]:
        """The next round's tables, created and saved with the night (under its lock)."""
        if night.status == PLAYING:
            raise NightError("round_running")
        if night.rounds is not None and night.round >= night.rounds:
            raise NightError("no_rounds_left", rounds=night.rounds)
        low, high = self.game_limits(night.game)
        ratings = await self.ratings(night)
        # a worker thread: balancing a big night takes a noticeable moment (bench/nights.py)
        seating = await asyncio.get_running_loop().run_in_executor(None, seat_round, night, ratings, low, high)
        seen: set[int] = set()
        for seats in seating:  # nobody at two tables, whatever the seating says
            people = [u for u in seats if u is not None]
            if seen & set(people) or len(set(people)) != len(people):
                raise NightError("seated_twice")
            seen |= set(people)
        names = night.names()
        made: list[Table] = []
        new: list[NightTable] = []
        try:
            for number, seats in enumerate(seating, start=1):
                host = next(u for u in seats if u is not None)
                table = await self.tables.create(
                    guild_id=night.guild_id, channel_id=night.channel_id, game=night.game, host_id=host,
                    host_name=names[host], seats=len(seats), turn_time=night.turn_time,
                    locale=night.locale, night_id=night.id,
                    options={"variant": night.variant} if night.variant else None)
                made.append(table)
                for uid in seats:
                    if uid is None:
                        await self.tables.add_computer(table, host, night.level)
                    elif uid != host:
                        await self.tables.join(table, uid, names[uid])
                new.append(NightTable(table.id, night.round + 1, number, [s.user_id for s in table.seats]))
            night.round += 1
            night.tables += new
            night.status = PLAYING
            night.next_at = None
            await self._save(night)
        except Exception:  # nothing half-seated stays behind
            for table in made:
                with contextlib.suppress(TableError):  # (not saved: the next start cancels it)
                    await self.tables.cancel(table, table.host_id, can_manage=True)
            raise
        return made

    # ------------------------------------------------- rounds that start by themselves
    async def toggle_auto(self, night: Night, user_id: int, can_manage: bool) -> bool:
        """Each next round starts by itself, :data:`BREAK_SECONDS` after the
        round before it ended (on between rounds: from now)."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            night.auto = not night.auto
            if night.round:  # (before the first round: a scheduled start stays as it is)
                night.next_at = self._next_at(night)
            await self._save(night)
        self._arm(night)
        return night.auto

    def _next_at(self, night: Night) -> float | None:
        """When the next round starts by itself: after a break, between rounds
        of a night that has them start by themselves and has rounds left."""
        if not night.auto or night.status != SIGNUP or night.round == 0:
            return None
        if night.rounds is not None and night.round >= night.rounds:
            return None
        return self.clock() + BREAK_SECONDS * self.tables.time_scale

    def start_timers(self) -> None:
        """Every countdown to a next round (after a start: the saved times)."""
        for night in list(self.nights.values()):
            self._arm(night)

    def _arm(self, night: Night) -> None:
        """The timers a night needs: its next round's start, its reminder."""
        reminder = self._reminders.pop(night.id, None)
        if reminder is not None and reminder is not asyncio.current_task():
            reminder.cancel()
        if self.remind_at(night) is not None and not self._closing:
            self._reminders[night.id] = asyncio.get_running_loop().create_task(
                self._remind_when_due(night), name=f"night-{night.id}-reminder", context=contextvars.Context())
        timer = self._timers.pop(night.id, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()
        if night.next_at is None or night.status != SIGNUP or self._closing:
            return
        # a fresh context: a click's slow-save hook must not follow into the timer
        self._timers[night.id] = asyncio.get_running_loop().create_task(
            self._next_round(night), name=f"night-{night.id}", context=contextvars.Context())

    async def _next_round(self, night: Night) -> None:
        try:
            made = await self._start_when_due(night)
        except Exception:
            log.exception("night %s: the next round could not start by itself", night.id)
            return
        finally:
            if self._timers.get(night.id) is asyncio.current_task():
                self._timers.pop(night.id, None)
        if made is None:
            return  # started by hand, ended, turned off, or the bot stops
        self._tell(night, "missed" if night.missed is not None else "round")
        if made and self.round_started is not None:
            try:
                await self.round_started(night)
            except Exception:  # (its tables are saved: the next start launches them)
                log.exception("night %s: the round that started by itself was not launched", night.id)

    async def _start_when_due(self, night: Night) -> list[Table] | None:
        """At ``next_at``, the next round's tables ([] if it could not start:
        too few signed up, or no round left; the organiser decides); None if
        there is nothing to start any more."""
        wait = 1.0
        while True:
            await asyncio.sleep(max(0.0, (night.next_at or 0.0) - self.clock()))
            try:
                async with guarded(self.lock(night)), self._change(night):
                    if night.status != SIGNUP or night.next_at is None:
                        return None
                    if self.clock() < night.next_at:
                        continue  # woken a moment early (the loop's clock is not the wall clock)
                    try:
                        return await self._seat(night)
                    except NightError as error:
                        log.info("night %s: the next round did not start by itself (%s)", night.id, error.code)
                        if night.round == 0:  # (saved with it: told once, after a restart too)
                            night.missed = Missed(error.code, dict(error.params), int(self.clock()))
                        night.next_at = None
                        await self._save(night)
                        return []
            except TableError:  # not saved: as it was; try again, less and less often
                log.warning("night %s: next round not saved; again in %.1f s", night.id, wait)
                if self._closing:
                    return None
                night.next_at = self.clock() + wait
                wait = min(30.0, wait * 2)

    async def launch(self, night: Night, announce: Callable[[Table, NightTable], Awaitable[None]]) -> None:
        """Start every table of the round still in its lobby (at round start,
        and after a restart between saving the seating and starting)."""
        for nt in night.playing_tables():
            table = self.tables.get(nt.table_id)
            if table is None or table.status != "lobby":
                continue
            try:
                await announce(table, nt)
            except Exception:
                log.exception("night %s: table %s could not be announced", night.id, table.id)
            try:
                await self.tables.start(table, table.host_id)
            except TableError:
                log.warning("night %s: table %s did not start", night.id, table.id, exc_info=True)
                continue
            for user_id, name in list(night.watchers.items()):  # the night's watchers follow its new tables
                await self._watch(table, user_id, name, True)

    def _table_closed(self, table: Table) -> None:
        if table.night_id is None or table.night_id not in self.nights:
            return
        self._later_settle(self.nights[table.night_id], table.id)

    def _later_settle(self, night: Night, table_id: int) -> None:
        task = asyncio.get_running_loop().create_task(self._settle_locked(night, table_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _settle_locked(self, night: Night, table_id: int) -> None:
        delay = 0.5
        while True:
            try:
                async with guarded(self.lock(night)), self._change(night):
                    await self._settle(night, table_id)
                return
            except TableError:  # not saved: as it was; try again, less and less often
                log.warning("night %s: table %s not settled yet; again in %.1f s", night.id, table_id, delay)
            except Exception:
                log.exception("night %s: settling table %s failed", night.id, table_id)
                return
            if self._closing:
                return
            await asyncio.sleep(delay)
            delay = min(30.0, delay * 2)

    async def _settle(self, night: Night, table_id: int) -> bool:
        """A table of the night is over: its finish counts (or not, if it was
        closed), and the round ends when it was the last one."""
        nt = night.table(table_id)
        if nt is None or nt.status != "playing" or night.status == ENDED:
            return False
        result = await self.store.table_result(table_id)
        if result is not None and len(result) == len(nt.seats):
            nt.status, nt.places = "done", [int(r["place"]) for r in result]
        else:
            nt.status = "closed"
        kind = "table"
        if nt.round == night.round and not night.playing_tables():
            night.status = SIGNUP
            kind = "round"
            if night.rounds is not None and night.round >= night.rounds:
                await self._end(night)
                self._tell(night, "ended")
                return True
            night.next_at = self._next_at(night)  # saved with the round's end
        await self._save(night)
        self._arm(night)
        self._tell(night, kind)
        return True

    async def end(self, night: Night, user_id: int, can_manage: bool) -> None:
        """End the night now: tables still playing finish as ordinary games."""
        async with guarded(self.lock(night)), self._change(night):
            self._open(night)
            self._control(night, user_id, can_manage)
            await self._end(night)
        self._arm(night)  # (no next round)
        self._tell(night, "ended")

    async def _end(self, night: Night) -> None:
        for nt in night.playing_tables():
            nt.status = "closed"
        night.status = ENDED
        night.next_at = None
        night.ended_at = self.clock()
        night.recap_due = True  # saved with the end: a restart before the recap is posted posts it
        rows = [{"user_id": s.user_id, "place": s.rank, "points": s.points, "wins": s.wins, "games": s.games}
                for s in standings(night)]
        try:
            await slow_guard(self.store.end_night(night.id, night.meta(), rows))
        except Exception as error:
            log.warning("night %s: its end not saved (%r)", night.id, error)
            raise TableError("not_saved") from error
        self._keep(night)

    async def recap_posted(self, night: Night, message_id: int | None) -> None:
        """The recap went out (``message_id``), or cannot ever (None: its channel
        is gone): it is no longer due, also after a restart."""
        async with guarded(self.lock(night)), self._change(night):
            if message_id is not None:
                night.messages["recap"] = message_id
            night.recap_due = False
            await self._save(night)
        self._forget_if_over(night)

    def _forget_if_over(self, night: Night) -> None:
        """An ended night whose recap is out needs nothing in memory: its
        standings come from the store (a restart does not load it either), and
        a click on one of its old buttons finds no night and is told it ended."""
        if night.status == ENDED and not night.recap_due:
            self.nights.pop(night.id, None)
            self._shown.pop(night.id, None)
            self._locks.pop(night.id, None)

    async def missed_told(self, night: Night, missed: Missed) -> None:
        """The organiser was told why the first round did not start (``missed``): it is
        not told again, also after a restart.  Not saved: told again then, under the
        same nonce (Discord answers with the note posted first)."""
        async with guarded(self.lock(night)):
            if night.missed != missed:
                return  # (missed again meanwhile: that one is told next)
            try:
                async with self._change(night):
                    night.missed = None
                    await self._save(night)
            except TableError:
                pass

    async def save_messages(self, night: Night) -> None:
        """Persist message ids after the cog (re)posted them.  A failure is
        logged only: the ids live on in memory and go out with the next save."""
        async with guarded(self.lock(night)):
            with contextlib.suppress(TableError):
                await self._save(night)
        self._forget_if_over(night)

    async def close(self) -> None:
        self._closing = True  # a settling the store refuses is left to the next start (reconcile)
        timers = list(self._timers.values()) + list(self._reminders.values())
        for timer in timers:  # a countdown resumes from its saved time at the next start
            timer.cancel()
        await asyncio.gather(*timers, return_exceptions=True)
        self._timers.clear()
        self._reminders.clear()
        for task in list(self._tasks):
            try:
                await asyncio.wait_for(task, timeout=5)
            except (Exception, asyncio.CancelledError):
                pass

    # --------------------------------------------------------------- the recap
    async def game_events(self, night: Night) -> list[GameEvents]:
        """Every finished table's events, replayed from its saved log (in a
        worker thread: a night's games replay in milliseconds, but not zero)."""
        games = []
        for nt in night.tables:
            if nt.status != "done":
                continue
            record = await self.store.table(nt.table_id)
            if record is None or record.meta.get("seed") is None:
                continue
            cls = self.tables.games.get(record.game)
            if cls is None:
                continue
            seats = record.meta["seats"]
            names = [t(night.locale, "table.computer_name", name=s["name"]) if s.get("user_id") is None
                     else s["name"] for s in seats]
            options = {k: v for k, v in record.meta.get("options", {}).items() if k != "turn_time"}
            if "rounds" in options:
                options["rounds"] = min(int(options["rounds"]), len(seats))
            try:
                events = await asyncio.get_running_loop().run_in_executor(
                    None, _replay_events, cls, len(seats), record.meta["seed"], options, record.actions)
            except Exception:
                log.exception("night %s: table %s could not be replayed", night.id, nt.table_id)
                continue
            games.append(GameEvents(nt.round, nt.number, names, events, record.game))
        return games

    async def highlights(self, night: Night) -> list[dict[str, Any]]:
        return highlights(await self.game_events(night))


def _replay_events(cls: Any, seats: int, seed: int, options: dict[str, Any],
                   actions: list[tuple[int, str]]) -> list[dict[str, Any]]:
    game = cls.new(seats, seed, **options)
    events: list[dict[str, Any]] = []
    for seat, text in actions:
        events += game.apply(seat, game.parse(text))
    return events
