"""Tables without Discord, for the tests of the table manager, nights and shards:
the two classic games, a manager that keeps every event it announced, a lobby."""
from __future__ import annotations

import asyncio
from typing import Any, Callable

from app.store import Store
from app.tables.manager import Table, TableManager
from core.games.garbage import engine as garbage
from core.games.nimmt import engine as nimmt

GAMES: dict[str, Any] = {"nimmt": nimmt.Nimmt, "garbage": garbage.Garbage}
COMPUTERS: dict[str, Any] = {"nimmt": nimmt.greedy_player, "garbage": garbage.greedy_player}
HOST, ANA, BEN, MOD = 1001, 1002, 1003, 1004


def manager(store: Store, games: dict[str, Any] = GAMES, computers: dict[str, Any] = COMPUTERS,
            **kw: Any) -> TableManager:
    """A manager whose computers move at once (seed 7 unless given); ``m.events`` lists
    the events it announced, in order."""
    kw.setdefault("computer_delay", 0.0)
    kw.setdefault("seed", 7)
    events: list[list[dict[str, Any]]] = []
    m = TableManager(store, games, computers, listener=lambda table, ev: events.append(list(ev)), **kw)
    setattr(m, "events", events)  # what the tests read back
    return m


async def lobby(m: TableManager, *, game: str = "nimmt", seats: int = 3, channel: int = 10, host: int = HOST,
                host_name: str = "Host", **kw: Any) -> Table:
    """A new lobby in server 1, opened by ``host``."""
    return await m.create(guild_id=1, channel_id=channel, game=game, host_id=host, host_name=host_name,
                          seats=seats, **kw)


async def until(condition: Callable[[], Any], timeout: float = 20.0) -> None:
    """Wait until ``condition()`` holds; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.01)
