"""A start restores the saved tables while the bot connects: a click on a
table not restored yet restores that one first and answers from its saved
state; anything else waits until every table is back."""
from __future__ import annotations

import asyncio

import pytest

from app.i18n.catalogue import t as translate
from app.tables.manager import TableManager
from tests.e2e import open_hand, running_bot, start_table

pytestmark = pytest.mark.timeout(120)


async def test_a_click_right_after_a_start_answers_from_the_saved_table_while_others_wait(
        world, tmp_path, monkeypatch):
    fd = world.fd
    db = tmp_path / "bot.db"
    ana, ben, cleo, dan = (world.person(n) for n in ("ana", "ben", "cleo", "dan"))
    other = fd.add_channel(world.guild, "more-games")
    async with running_bot(fd, db, world.guild):
        first = await start_table(fd, world.channel, ana, [ben], turn_time=0)
        second = await start_table(fd, other, cleo, [dan], turn_time=0)
        hand_before = (await open_hand(first, ana)).text()

    # The restore at the next start is held back (as on a slow start with many tables),
    # except what a click asks for.
    release = asyncio.Event()
    restore_record = TableManager._restore_record

    async def slow(self, record):
        if asyncio.current_task().get_name() == "tables-restore":
            await release.wait()
        return await restore_record(self, record)

    monkeypatch.setattr(TableManager, "_restore_record", slow)
    async with running_bot(fd, db, world.guild, loaded=False) as bot:
        assert bot.tables.get(first.table_id) is None and bot.tables.get(second.table_id) is None
        # Ana opens her hand on the table message she saw before the start: the table
        # is restored for her click and shows exactly what it showed before.
        panel = await open_hand(first, ana)  # (only ana sees it)
        assert panel.text() == hand_before
        assert bot.tables.get(first.table_id) is not None
        assert bot.tables.get(second.table_id) is None  # still waiting for the background restore
        # A command waits for every table: "is there a table in this channel?" needs them all.
        asking = asyncio.ensure_future(fd.slash(dan, other, "nimmt new", seats=2))
        await asyncio.sleep(0.5)
        assert not asking.done()
        release.set()
        r = await asking
        assert r.ephemeral and r.message.content == translate("en", "errors.channel_busy", table=second.table_id)
        await asyncio.wait_for(bot.tables.loaded(), 10)
        table = bot.tables.get(second.table_id)
        assert table is not None and table.status == "playing" and table.engine is not None
        # The table the click restored is not restored a second time by the background.
        assert bot.tables.get(first.table_id).engine is not None
        await open_hand(second, cleo)
