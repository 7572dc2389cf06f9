"""The bot's own budget of Discord requests, kept under Discord's global limit.

Discord allows a bot token about 50 requests a second; past it every request
gets a 429 and discord.py stops *all* requests of the bot until it passes,
answers to clicks included.  So the bot spends its requests itself: every
request that counts (channel messages, edits, threads; not interaction
answers or interaction webhooks, which Discord exempts) first takes a token
from a bucket refilled at ``rate`` per second.  Requests of a click or of
pings go first; narration and table-message redraws (``background()``)
take turns after them.  A table message that has waited :data:`STARVE_AFTER`
takes turns with the pings, so that pings at the limit never starve it (a
round's new table message, which no click's token can edit).  A redraw may
take its token before drawing the picture (``prepay``), so a picture is
drawn only when it can be sent at once.  A table whose narration or redraw
waits gathers what happens meanwhile into that one message: when moves come
faster than the limit allows, tables are told in fewer, fuller messages.

Tokens bound when requests are *granted*; a prepaid request goes out only
once its picture is drawn, and on a busy machine pictures granted over a
second or two can finish together.  Nor does a request arrive when it is
sent: it can wait in discord.py (a route's bucket), in the network, or in a
busy Discord, and requests sent over a second can arrive together.  So the
requests themselves are also kept under a ``ceiling`` (``rate + burst``):
a counted request holds a place from when it is sent until :data:`WINDOW`
after its answer came.  Discord counts it somewhere in between, so any
requests Discord counts within one second all held their places at once
when the last of them was sent: never more than the ceiling, however late
they arrive (else a restart of many tables draws global 429s:
bench/README.md, *The request budget*).

Discord also limits the edits of messages in each channel: about 5 per 5 s
(a bucket per channel, which discord.py learns from Discord's answers: edits
sent before it knows where the bucket stands go all the same, and the sixth
earns a 429, which counts towards Discord's ban of invalid requests).  So
every edit the bot makes in a channel also waits for its turn in that
channel (:data:`CHANNEL_LIMIT` per :data:`CHANNEL_WINDOW`), before it takes
its token.  (Interaction answers and their webhooks are not limited so.)

Pure asyncio: it knows a route only by its ``path``, ``method`` and
``channel_id`` attributes.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import functools
import time
from typing import Any, Awaitable, Callable, Iterator

#: the queue of the current task's requests: FRONT (clicks, pings), TABLES
#: (table messages: yield to FRONT, but not for ever) or TALK (narration)
FRONT, TABLES, TALK = 0, 1, 2
_QUEUE: contextvars.ContextVar[int] = contextvars.ContextVar("budget_queue", default=FRONT)
#: tokens the current task took ahead (``prepay``) for its next requests
_PREPAID: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("budget_prepaid", default=None)

#: routes Discord does not count against the global limit
EXEMPT = ("/interactions/", "/webhooks/")

#: seconds a counted request holds its place under the ceiling after its answer
#: came (Discord's second, and a little for clocks that differ)
WINDOW = 1.05

#: message edits in one channel per :data:`CHANNEL_WINDOW` (Discord: 5 per 5 s)
CHANNEL_LIMIT = 5
#: seconds (Discord's 5, and a little for the time a request takes to arrive)
CHANNEL_WINDOW = 5.3
#: the route (method, path) Discord limits per channel this way
PER_CHANNEL = ("PATCH", "/channels/{channel_id}/messages/{message_id}")

#: seconds a table message waits behind the clicks and pings at most: then
#: every other token is its (the oldest one's) until no table message is that old
STARVE_AFTER = 2.0


def background(*, tables: bool = False) -> None:
    """From now on, requests of the current task wait for the clicks' and
    pings'; ``tables``: they are table messages, which wait
    :data:`STARVE_AFTER` at most before they take turns with them (narration
    may wait longer: what waits is told with the next ping)."""
    _QUEUE.set(TABLES if tables else TALK)


@contextlib.contextmanager
def foreground() -> Iterator[None]:
    """Requests made inside go with the clicks' (e.g. a turn's ping from a background task)."""
    token = _QUEUE.set(FRONT)
    try:
        yield
    finally:
        _QUEUE.reset(token)


class RequestBudget:
    """A token bucket: at most ``burst`` requests at once, ``rate`` a second after."""

    def __init__(self, rate: float, burst: int = 5, clock: Callable[[], float] = time.monotonic,
                 starve_after: float = STARVE_AFTER) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._stamp = clock()
        #: waiting requests of FRONT, TABLES and TALK, each oldest first: (since, future)
        self._queues: tuple[collections.deque[tuple[float, asyncio.Future[None]]], ...] = (
            collections.deque(), collections.deque(), collections.deque())
        self._starve_after = starve_after
        self._turn = False  # the last token went to a table message that had waited too long
        self._pump: asyncio.Task[None] | None = None
        #: when the answers to the last counted requests came (within WINDOW)
        self._sent: collections.deque[float] = collections.deque()
        self._flying = 0  # counted requests sent and not answered yet
        #: resolved at the next answer, for a request that waits while every place is in flight
        self._answered: asyncio.Future[None] | None = None
        self.ceiling = int(rate + burst)
        #: channel id -> when its last message edits went (within CHANNEL_WINDOW, at most
        #: CHANNEL_LIMIT: a short list), for the channels edited lately
        self._channels: dict[int, list[float]] = {}
        self._swept = clock()  # when channels quiet for a window were last forgotten
        self.taken = 0  # tokens handed out (for the benchmark's figures)
        self.held = 0  # requests the ceiling held back (tests/unit/test_budget.py reads it)
        self.paced = 0  # times an edit waited for its channel's turn

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    async def take(self) -> None:
        """Wait for a token (the current task's priority decides the order)."""
        if self.rate <= 0:
            return
        self._refill()
        if not any(self._queues) and self._tokens >= 1:
            self._tokens -= 1
            self.taken += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queues[_QUEUE.get()].append((self._clock(), future))
        if self._pump is None or self._pump.done():
            self._pump = asyncio.get_running_loop().create_task(self._run(), context=contextvars.Context())
        await future

    def _next(self) -> asyncio.Future[None]:
        """The waiting request whose turn it is: the oldest click or ping,
        unless a table message has waited too long and the last turn was not
        such a one's; with no click or ping waiting, the older of the oldest
        table message and the oldest narration."""
        front, tables, talk = self._queues
        starved = bool(tables) and self._clock() - tables[0][0] >= self._starve_after
        self._turn = starved and bool(front) and not self._turn
        if self._turn:
            return tables.popleft()[1]
        if front:
            return front.popleft()[1]
        back = tables if tables and (not talk or tables[0][0] <= talk[0][0]) else talk
        return back.popleft()[1]

    async def _run(self) -> None:
        while any(self._queues):
            self._refill()
            if self._tokens < 1:
                await asyncio.sleep((1 - self._tokens) / self.rate)
                continue
            future = self._next()
            if future.done():  # its task was cancelled meanwhile
                continue
            self._tokens -= 1
            self.taken += 1
            future.set_result(None)

    async def prepay(self) -> None:
        """Take the token of the current task's next request now."""
        await self.take()
        paid = _PREPAID.get()
        if paid is None:
            _PREPAID.set([1])
        else:
            paid[0] += 1

    async def spend(self, route: Any) -> bool:
        """Before a request on ``route``: a token, unless it is exempt or prepaid,
        and a place under the ceiling.  True: the request is counted (and
        :meth:`answered` must follow it)."""
        path = getattr(route, "path", "")
        if path.startswith(EXEMPT):
            return False
        await self._channel_turn(route)
        paid = _PREPAID.get()
        if paid and paid[0] > 0:
            paid[0] -= 1
        else:
            await self.take()
        await self._under_ceiling()
        return self.rate > 0  # (no pace: no ceiling either)

    def answered(self) -> None:
        """A counted request's answer came (or it failed): its place is free :data:`WINDOW` later."""
        self._flying -= 1
        self._sent.append(self._clock())
        if self._answered is not None and not self._answered.done():
            self._answered.set_result(None)

    async def _channel_turn(self, route: Any) -> None:
        """An edit of a message: wait until fewer than :data:`CHANNEL_LIMIT` edits went
        to its channel in the last :data:`CHANNEL_WINDOW` seconds."""
        channel = getattr(route, "channel_id", None)
        if channel is None or (getattr(route, "method", ""), getattr(route, "path", "")) != PER_CHANNEL:
            return
        key = int(channel)
        while True:
            now = self._clock()
            sent = self._channels.get(key)
            if sent is None:
                if now - self._swept >= CHANNEL_WINDOW:  # channels quiet for a window are forgotten
                    self._swept = now
                    for old in [k for k, d in self._channels.items() if not d or d[-1] <= now - CHANNEL_WINDOW]:
                        del self._channels[old]
                sent = self._channels[key] = []
            while sent and sent[0] <= now - CHANNEL_WINDOW:
                del sent[0]
            if len(sent) < CHANNEL_LIMIT:
                sent.append(now)
                return
            self.paced += 1
            await asyncio.sleep(sent[0] + CHANNEL_WINDOW - now)

    async def _under_ceiling(self) -> None:
        """Wait until fewer than ``ceiling`` counted requests are in flight or were
        answered in the last :data:`WINDOW`, then take a place."""
        if self.rate <= 0:
            return
        sent, held = self._sent, False
        while True:
            now = self._clock()
            while sent and sent[0] <= now - WINDOW:
                sent.popleft()
            if len(sent) + self._flying < self.ceiling:
                self._flying += 1
                self.held += held
                return
            held = True
            if sent:
                await asyncio.sleep(sent[0] + WINDOW - now)
            else:  # every place is in flight: the first answer starts a place's last window
                if self._answered is None or self._answered.done():
                    self._answered = asyncio.get_running_loop().create_future()
                await asyncio.shield(self._answered)

    def wrap(self, request: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """``request(route, ...)`` (discord.py's ``HTTPClient.request``) within the budget."""
        @functools.wraps(request)
        async def budgeted(route: Any, *args: Any, **kwargs: Any) -> Any:
            if not await self.spend(route):
                return await request(route, *args, **kwargs)
            try:
                return await request(route, *args, **kwargs)
            finally:
                self.answered()

        return budgeted
