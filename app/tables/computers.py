"""The computer players at the tables: levels, fair knowledge, search off the loop.

A computer decides from what its seat may know (``core.ai``): the seat's
``view(seat)`` and the game's public events.  The events are not stored with
a table; they are the engine's own announcements, re-made by replaying the
table's log on a private copy of the game (cached per table, extended by the
new log entries).  Only the events and the seat's view leave this module's
copy; the copy itself, with every hidden card, is never handed to a player.

Easy and normal are quick (tens of microseconds) and run on the event loop;
the hard search runs in a worker thread on a copy of the seat's knowledge,
within a time budget, so other tables stay responsive while it thinks.
"""
from __future__ import annotations

import asyncio
import logging
import random
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from core import ai
from core.protocol import Event, Game

log = logging.getLogger(__name__)

LEVELS = ai.LEVELS
TIMEOUT_LEVEL = "normal"  # the turn timer's takeover plays at normal level
LegacyPlayer = Callable[[Any, int, random.Random], Any]


@dataclass
class _Replay:
    seed: int
    engine: Any
    events: list[Event]
    done: int  # log entries replayed


class Computers:
    """Chooses moves for computer seats (and hints) at every table."""

    def __init__(self, games: Mapping[str, type[Game]], *, budget: float = ai.DEFAULT_BUDGET,
                 worlds: int = ai.HARD_WORLDS, fallback: Mapping[str, LegacyPlayer] | None = None) -> None:
        self.games = dict(games)
        self.budget = budget  # seconds per hard decision at most
        self.worlds = worlds  # simulated worlds per hard decision at most
        self.fallback = dict(fallback or {})  # games without levelled players
        self.hint_worlds = 4 * worlds  # the coach may think longer (still within the budget)
        self._replays: dict[int, _Replay] = {}

    def supports(self, game: str) -> bool:
        return ai.supports(game)

    # ------------------------------------------------------------- knowledge
    def history(self, table: Any) -> list[Event]:
        """The public events of the table's game so far (the engine's own)."""
        replay = self._replays.get(table.id)
        if replay is None or replay.seed != table.seed or replay.done > len(table.log):
            cls = self.games[table.game]
            options = {k: v for k, v in table.options.items() if k not in ("turn_time", "hints")}
            if "rounds" in options:
                options["rounds"] = min(int(options["rounds"]), len(table.seats))
            if len(self._replays) > 1000:
                self._replays.clear()
            replay = self._replays[table.id] = _Replay(table.seed, cls.new(len(table.seats), table.seed, **options),
                                                       [], 0)
        engine = replay.engine
        for seat, text in table.log[replay.done:]:
            replay.events += engine.apply(seat, engine.parse(text))
        replay.done = len(table.log)
        return replay.events

    def forget(self, table_id: int) -> None:
        self._replays.pop(table_id, None)

    def knowledge(self, table: Any, seat: int) -> Any:
        """A fresh copy of what ``seat`` knows now (safe to hand to a thread)."""
        return ai.know(table.game, table.engine.view(seat), self.history(table))

    @staticmethod
    def rng(table: Any, seat: int) -> random.Random:
        return random.Random(f"{table.seed}:{table.version}:{seat}")

    # ------------------------------------------------------------- decisions
    def choose(self, table: Any, seat: int, level: str) -> Any:
        """A move now, on the event loop (easy / normal; hard falls back to normal)."""
        if not ai.supports(table.game):
            return self.fallback[table.game](table.engine, seat, self.rng(table, seat))
        if level == "hard":
            level = "normal"
        return ai.decide(table.game, self.knowledge(table, seat), level, self.rng(table, seat)).action

    async def think(self, table: Any, seat: int, level: str) -> Any:
        """A move; the hard search runs in a worker thread on a copy of the knowledge."""
        if level != "hard" or not ai.supports(table.game):
            return self.choose(table, seat, level)
        decision = await self._search(table, seat, self.worlds)
        return decision.action

    async def hint(self, table: Any, seat: int) -> Any:
        """The hard level's decision with its figures, for the coach."""
        return await self._search(table, seat, self.hint_worlds)

    async def _search(self, table: Any, seat: int, worlds: int) -> Any:
        """The hard search in a worker thread.  Cancelled (the table moved on, the
        bot stops), the thread is told to stop after its current world: a search
        nobody waits for must not keep the GIL from the event loop for the rest
        of its budget."""
        knowledge = self.knowledge(table, seat)
        rng = self.rng(table, seat)
        stop = threading.Event()
        try:
            return await asyncio.to_thread(ai.decide, table.game, knowledge, "hard", rng, sims=worlds,
                                           budget=self.budget, stop=stop)
        except asyncio.CancelledError:
            stop.set()
            raise
