"""Fixtures shared by the tests: the Discord stand-in, a PostgreSQL server."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Generator

import pytest
import pytest_asyncio

from app.store import Store, open_store
from tests import ROOT, pg, table_seeds
from tests.fakediscord import FakeDiscord

E2E = ROOT / "tests" / "e2e"
STAND_IN_FIXTURES = {"world", "fake_discord"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e, and any other that starts the stand-in, is an ``e2e`` test
    (``pytest -m "not e2e"`` is the fast subset)."""
    for item in items:
        if item.path.is_relative_to(E2E) or STAND_IN_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed e2e test's report names its ``TABLE_SEEDS`` (the bot's deals come from the
    test's node id, see ``tests.table_seeds``): run the test again, or a bot with it, for the same cards."""
    report = yield
    if report.failed and item.get_closest_marker("e2e"):
        report.sections.append(("table seeds", f"TABLE_SEEDS={table_seeds(item.nodeid)} (from the node id "
                                               f"{item.nodeid}; a table_seed the test passes wins)"))
    return report


@dataclass
class World:
    """A Discord stand-in with one server, a #games channel and some people."""

    fd: FakeDiscord
    guild: Any
    channel: Any
    users: dict[str, Any] = field(default_factory=dict)

    def person(self, name: str, locale: str = "en-US", **member: Any) -> Any:
        user = self.fd.add_user(name, locale=locale)
        self.fd.add_member(self.guild, user, **member)
        self.users[name] = user
        return user


@contextlib.asynccontextmanager
async def make_world(**options: Any) -> AsyncIterator[World]:
    """A started stand-in with a server and a channel; on exit it is stopped
    and any breach of Discord's limits fails the test."""
    fd = FakeDiscord(**options)
    await fd.start()
    try:
        guild = fd.add_guild("Game Night", locale="en-US")
        channel = fd.add_channel(guild, "games")
        yield World(fd, guild, channel)
    finally:
        await fd.stop()
    fd.assert_clean()


@pytest_asyncio.fixture
async def world():
    async with make_world() as made:
        yield made


@pytest.fixture(scope="session")
def pg_server():
    """The suite's own PostgreSQL server (tests/pg.py), started once per session (per xdist worker)."""
    server = pg.server()
    yield server
    # stopped at exit (atexit in tests/pg.py), after every process using it


@pytest.fixture
def pg_dsn(pg_server):
    """The DSN of a new, empty PostgreSQL database."""
    return pg_server.new_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request, tmp_path):
    """Where a store lives, once per backend: a new SQLite file, or a new
    PostgreSQL database on the suite's own server (``open_store(store_target)``)."""
    if request.param == "sqlite":
        return str(tmp_path / "bot.db")
    return request.getfixturevalue("pg_dsn")


@pytest_asyncio.fixture
async def store(store_target: str) -> AsyncIterator[Store]:
    """An open store, once per backend (no checkpoint timer: the tests say when)."""
    opened = await open_store(store_target, checkpoint_interval=None)
    yield opened
    await opened.close()


@pytest_asyncio.fixture
async def sqlite_store(tmp_path) -> AsyncIterator[Store]:
    """An open store on the SQLite file ``tmp_path / "bot.db"``."""
    opened = await open_store(str(tmp_path / "bot.db"), checkpoint_interval=None)
    yield opened
    await opened.close()
