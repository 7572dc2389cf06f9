"""The bot's request budget (app/budget.py): requests Discord counts go out at
the bot's own pace, clicks' requests before queued table redraws, interaction
answers never wait."""
from __future__ import annotations

import asyncio
import contextvars
from dataclasses import dataclass

from app import budget
from app.budget import RequestBudget


@dataclass
class Route:
    path: str


CHANNEL = Route("/channels/{channel_id}/messages")
ANSWER = Route("/interactions/{interaction_id}/{interaction_token}/callback")
PANEL = Route("/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}")


def recorder(sent: list[str]):
    async def request(route: Route, name: str) -> str:
        sent.append(name)
        return name
    return request


async def test_counted_requests_keep_the_pace_and_interaction_answers_never_wait():
    loop = asyncio.get_running_loop()
    b = RequestBudget(rate=50, burst=3)
    times: list[float] = []

    async def request(route: Route, name: str) -> None:
        times.append(loop.time())

    send = b.wrap(request)
    await asyncio.gather(*(send(CHANNEL, f"m{i}") for i in range(13)))
    # 3 at once, then one each 20 ms: the 13th no sooner than 10 * 20 ms after the first
    assert times[-1] - times[0] >= 10 / 50 - 0.01
    assert b.taken == 13
    # the bucket is empty now: answers and panel webhooks still go at once, uncounted
    answered: list[str] = []
    waiting = asyncio.ensure_future(send(CHANNEL, "late"))
    await asyncio.sleep(0)
    for i in range(20):
        await b.wrap(recorder(answered))(ANSWER if i % 2 else PANEL, f"a{i}")
    assert len(answered) == 20 and not waiting.done()
    await waiting
    assert b.taken == 14


async def test_redraws_wait_for_the_requests_of_clicks_and_narration():
    b = RequestBudget(rate=100, burst=1)
    sent: list[str] = []
    send = b.wrap(recorder(sent))

    async def redraw(i: int) -> None:
        budget.background()
        await send(CHANNEL, f"redraw{i}")

    await send(CHANNEL, "first")  # empties the bucket
    redraws = [asyncio.create_task(redraw(i), context=contextvars.Context()) for i in range(3)]
    await asyncio.sleep(0)  # the redraws queue up
    clicks = [asyncio.ensure_future(send(CHANNEL, f"click{i}")) for i in range(2)]
    await asyncio.gather(*redraws, *clicks)
    assert sent == ["first", "click0", "click1", "redraw0", "redraw1", "redraw2"]


async def test_a_redraw_pays_before_drawing_and_its_request_then_goes_at_once():
    b = RequestBudget(rate=100, burst=1)
    sent: list[str] = []
    send = b.wrap(recorder(sent))
    order: list[str] = []

    async def redraw() -> None:
        budget.background()
        await b.prepay()
        order.append("drawn")  # the picture: only once the request may go
        await send(CHANNEL, "edit")
        order.append("sent")

    await send(CHANNEL, "first")
    task = asyncio.create_task(redraw(), context=contextvars.Context())
    await asyncio.sleep(0)
    assert order == []  # no token yet: nothing drawn
    await task
    assert order == ["drawn", "sent"] and sent == ["first", "edit"] and b.taken == 2


async def test_no_pace_when_the_rate_is_zero():
    b = RequestBudget(rate=0)
    sent: list[str] = []
    await asyncio.gather(*(b.wrap(recorder(sent))(CHANNEL, str(i)) for i in range(100)))
    assert len(sent) == 100


async def test_a_ping_from_the_narrating_task_goes_before_queued_narration_and_redraws():
    b = RequestBudget(rate=100, burst=1)
    sent: list[str] = []
    send = b.wrap(recorder(sent))

    async def background_task(name: str, ping: bool = False) -> None:
        budget.background()
        if ping:
            with budget.foreground():
                await send(CHANNEL, name)
            await send(CHANNEL, name + "-after")  # back in the background queue
        else:
            await send(CHANNEL, name)

    await send(CHANNEL, "first")
    tasks = [asyncio.create_task(background_task(n), context=contextvars.Context())
             for n in ("redraw1", "narration2", "redraw3")]
    await asyncio.sleep(0)
    tasks.append(asyncio.create_task(background_task("ping", ping=True), context=contextvars.Context()))
    await asyncio.gather(*tasks)
    assert sent == ["first", "ping", "redraw1", "narration2", "redraw3", "ping-after"]


async def test_pings_at_the_limit_do_not_starve_a_table_message():
    """Clicks and pings keep the bucket empty; a table message queued behind
    them is sent once it has waited ``starve_after``, taking turns with them,
    not once they stop."""
    b = RequestBudget(rate=100, burst=1, starve_after=0.05)
    sent: list[str] = []
    send = b.wrap(recorder(sent))

    async def redraw() -> None:
        budget.background(tables=True)
        await send(CHANNEL, "table")

    async def narrate() -> None:
        budget.background()
        await send(CHANNEL, "narration")  # told with the next ping, if it waits: no rescue

    await send(CHANNEL, "first")  # empties the bucket
    pings = [asyncio.ensure_future(send(CHANNEL, f"ping{i}")) for i in range(10)]
    talk = asyncio.create_task(narrate(), context=contextvars.Context())
    table = asyncio.create_task(redraw(), context=contextvars.Context())
    await asyncio.sleep(0)
    pings += [asyncio.ensure_future(send(CHANNEL, f"ping{i}")) for i in range(10, 30)]  # more keep coming
    await asyncio.gather(talk, table, *pings)
    at = sent.index("table")
    # its turn came after about 0.05 s (5 pings at 100/s), long before the last of the 30 pings;
    # the narration queued before it waited for all of them
    assert 1 <= at - 1 <= 9 and sent[-2:] == ["ping29", "narration"], sent
    assert b.taken == 33


async def test_requests_granted_over_time_but_sent_together_still_keep_under_the_ceiling():
    """Redraws pay before drawing; on a busy machine their pictures can finish
    together.  Sent at once, they still go out no more than ``rate + burst``
    in any window: a burst past Discord's global limit would stop every
    request of the bot."""
    loop = asyncio.get_running_loop()
    b = RequestBudget(rate=50, burst=5)
    times: list[float] = []

    async def request(route: Route, name: str) -> None:
        times.append(loop.time())

    send = b.wrap(request)
    drawn = asyncio.Event()

    async def redraw(i: int) -> None:
        budget.background()
        await b.prepay()  # granted one by one, 20 ms apart
        await drawn.wait()  # the pictures all finish at once
        await send(CHANNEL, f"redraw{i}")

    tasks = [asyncio.create_task(redraw(i), context=contextvars.Context()) for i in range(70)]
    while b.taken < 70:
        await asyncio.sleep(0.05)
    drawn.set()
    await asyncio.gather(*tasks)
    assert len(times) == 70 and b.held > 0
    times.sort()
    most = max(sum(1 for t in times[i:] if t < start + budget.WINDOW - 0.01) for i, start in enumerate(times))
    assert most <= b.ceiling == 55


async def test_requests_held_up_on_their_way_arrive_no_more_than_the_ceiling_in_a_second():
    """A request sent is not yet a request counted: a busy Discord (or discord.py's
    own waits) can hold requests sent over seconds and take them in at once.  A
    request keeps its place until a window after its answer, so however long
    Discord stalls, no second of arrivals holds more than the ceiling: the stall
    slows the bot down instead of drawing global 429s."""
    loop = asyncio.get_running_loop()
    b = RequestBudget(rate=50, burst=5)
    arrived: list[float] = []
    stalled = asyncio.Event()
    loop.call_later(1.5, stalled.set)  # Discord takes nothing in for 1.5 s, then everything at once

    async def request(route: Route, name: str) -> None:
        await stalled.wait()
        arrived.append(loop.time())

    send = b.wrap(request)
    await asyncio.gather(*(send(CHANNEL, f"m{i}") for i in range(120)))
    assert len(arrived) == 120 and b.held > 0
    most = max(sum(1 for t in arrived[i:] if t < start + 1.0) for i, start in enumerate(arrived))
    assert most <= b.ceiling == 55
