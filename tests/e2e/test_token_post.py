"""A turn's new live table is posted through the token of a click at the table in its
thread, as a public followup (Discord does not count it against the bot's global
limit), while one lives; without one (nobody clicked yet, or the bot restarted) the
bot posts it itself.  A followup has no nonce: a kill after it landed and before its
id was saved does not leave two live tables, and one that never landed is posted
again, pinging once."""
from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e import nimmt_turn, open_hand, panel_answer, private_answer, running_bot, started
from tests.e2e.test_owed import told_twice
from tests.e2e.test_restart import AtMove, Run, played
from tests.fakediscord.models import FLAG_COMPONENTS_V2

pytestmark = pytest.mark.timeout(240)

FOLLOWUP = re.compile(r"/webhooks/\d+/[^/]+")


def posts(fd: Any, thread: Any, since: int) -> tuple[list[Any], list[Any]]:
    """The bot's own posts in ``thread`` and the followups sent through tokens, since request ``since``."""
    own = [r for r in fd.requests[since:] if r.method == "POST" and r.path == f"/channels/{thread.id}/messages"]
    followups = [r for r in fd.requests[since:] if r.method == "POST" and FOLLOWUP.fullmatch(r.path)]
    return own, followups


async def test_a_turns_live_table_goes_through_a_token_while_one_lives(world, tmp_path):
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        first = t.table_message()
        assert first.webhook_id is None  # nobody clicked yet: the bot posted it
        mover = people[table.engine.to_move]
        waiter = people[1 - table.engine.to_move]
        since = len(fd.requests)
        await nimmt_turn(t, mover)  # My hand on the live table, then the move on the panel
        current = await fd.wait_for(lambda: (m := t.table_message()) is not None and m is not first and m,
                                    timeout=10)
        # the waiter's turn: a public followup of the mover's click, in the thread, that pings
        assert current.webhook_id is not None and current.ephemeral_to is None
        assert current in fd.messages(t.thread) and current in fd.visible_messages(waiter, t.thread)
        assert fd.pings(t.thread)[-1] == (current, waiter.id)
        own, followups = posts(fd, t.thread, since)
        assert not own, own
        assert followups
        await fd.wait_for(lambda: first.deleted, timeout=10)
        # the new live table works, and the next one goes through a token too
        await nimmt_turn(t, waiter)
        after = await fd.wait_for(lambda: (m := t.table_message()) is not None and m is not current and m,
                                  timeout=10)
        if table.status == "playing":
            assert after.webhook_id is not None and fd.pings(t.thread)[-1] == (after, mover.id)
            await fd.wait_for(lambda: current.deleted, timeout=10)
        assert not posts(fd, t.thread, since)[0]
    fd.assert_clean()


def passes_the_turn(run: Run, custom_id: str, values: list[str]) -> bool:
    """Whether this control of a person's panel ends their turn with the game going on (the
    next person's turn then pings them with a new live table)."""
    moved = run.after(custom_id, values)
    if moved is None:
        return False
    seat, game = moved
    return not game.over and game.to_move != seat


class KilledPost(AtMove):
    """At the ``at``-th move of a person that ends their turn: the live table of the turn
    that follows goes through a token, and the bot is SIGKILLed before it saved its id:
    ``landed``, Discord posted it and only its answer was lost (a 502 after the work);
    else it never arrived (the connection dropped).  Then the bot starts again."""

    def __init__(self, landed: bool, at: int = 3) -> None:
        super().__init__(at)
        self.landed = landed
        self.before: Any = None  # the live table before the kill
        self.posted: Any = None  # the live table posted while its answer was lost (landed)
        self.restarted = 0  # the first request after the restart

    def counts(self, run: Run, user: Any, custom_id: str, values: list[str]) -> bool:
        return passes_the_turn(run, custom_id, values)

    async def act(self, run: Run, user: Any, panel: Any, kind: str, custom_id: str, values: list[str]) -> Any:
        self.done = True
        fd = run.fd
        since = len(fd.requests)
        self.before = run.table_message()
        fd.fail_next("POST", FOLLOWUP.pattern + "$", status=502 if self.landed else 0, times=20, after=self.landed)
        shown = await panel_answer(await run.interact(user, panel, kind, custom_id, values))
        if self.landed:
            self.posted = await fd.wait_for(
                lambda: (m := run.table_message()) is not None and m is not self.before and m, timeout=10,
                interval=0.005)
        else:
            await fd.wait_for(lambda: any(r.method == "POST" and FOLLOWUP.fullmatch(r.path)
                                          for r in fd.requests[since:]), timeout=10, interval=0.005)
        await run.bot.kill()
        fd.clear_failures()
        self.restarted = len(fd.requests)
        await run.bot.start()
        return shown


@pytest.mark.parametrize("landed", [True, False])
async def test_a_live_table_posted_through_a_token_and_a_kill(world, bots, tmp_path, landed):
    """``landed``: after the restart the live table Discord posted is found in the thread and
    taken as the live table (its ping counted), not posted again; else the bot posts it
    itself (tokens are unknown after a restart), pinging once."""
    fd = world.fd
    plan = KilledPost(landed)
    checked: list[bool] = []

    class Checked(Run):
        async def step(self, user: Any) -> None:
            await super().step(user)
            if plan.done and plan.restarted and not checked:
                checked.append(True)
                await after_restart(self)

    async def after_restart(run: Run) -> None:
        def saved_live() -> int | None:
            messages = run.state()[1].get("messages", {})
            return None if "followup" in messages else messages.get("table")

        if landed:
            assert plan.posted is not None and plan.posted.webhook_id is not None
            await fd.wait_for(lambda: saved_live() == plan.posted.id, timeout=20)
        else:
            await fd.wait_for(lambda: saved_live() not in (None, plan.before.id), timeout=20)
            live = fd.message(saved_live())
            # posted by the bot itself after the restart, and it pings
            assert live.webhook_id is None
            assert any(r.method == "POST" and r.path == f"/channels/{run.thread.id}/messages"
                       for r in fd.requests[plan.restarted:])
            assert any(m is live for m, _ in fd.pings(run.thread))
        def tables() -> list[Any]:
            return [m for m in fd.messages(run.thread) if any(a.get("filename") == "table.png" for a in m.attachments)]

        # one live table: the one before goes (deleted once the new one's id is saved), none is posted twice
        await fd.wait_for(lambda: fd.message(plan.before.id).deleted, timeout=10)
        assert len(tables()) == 1, tables()

    run = await played(world, bots, tmp_path, "kill", plan, Checked)
    bot = run.bot
    await run.finish_shown()
    assert plan.done and bot.kills == 1
    assert checked, "the game ended before the check after the restart"
    assert sum(1 for m in fd.messages(run.thread) if m.attachments) == 1
    assert told_twice(run) == []
    await bot.stop()
    fd.assert_clean()


@pytest.mark.parametrize("status", [502, 0])
async def test_a_live_table_whose_followup_answer_failed_is_posted_once(world, tmp_path, status):
    """Discord posts the live table through a click's token and only its answer fails (a 502
    of its edge, or the connection dropped on the way back): the bot does not send it again
    (a followup has no nonce: discord.py would post it again after the 502), it finds it in
    the thread and takes it as the live table; its ping counts, and the game goes on from it."""
    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        first = t.table_message()
        mover = people[table.engine.to_move]
        waiter = people[1 - table.engine.to_move]
        panel = await open_hand(t, mover)  # (its private answer is a followup too: before the failure)
        since = len(fd.requests)
        fd.fail_next("POST", FOLLOWUP.pattern + "$", status=status, after=True)
        await nimmt_turn(t, mover, panel)
        current = await fd.wait_for(lambda: (m := t.table_message()) is not None and m is not first and m,
                                    timeout=10)
        assert current.webhook_id is not None
        await fd.wait_for(lambda: first.deleted, timeout=10)
        # posted once: the one post through the token is the one whose answer failed
        own, followups = posts(fd, t.thread, since)
        assert not own, own
        assert [r.status for r in followups] == [status], followups
        assert [m for m in fd.messages(t.thread) if m.attachments] == [current]
        assert [(m, u) for m, u in fd.pings(t.thread) if u == waiter.id] == [(current, waiter.id)]
        await fd.wait_for(lambda: bot.tables.get(t.table_id).messages.get("table") == current.id, timeout=10)
        # the game goes on from the live table found: the waiter plays on it
        await nimmt_turn(t, waiter)
        after = await fd.wait_for(lambda: (m := t.table_message()) is not None and m is not current and m,
                                  timeout=10)
        if table.status == "playing":
            assert fd.pings(t.thread)[-1] == (after, mover.id)
        await fd.wait_for(lambda: current.deleted, timeout=10)
        assert [m for m in fd.messages(t.thread) if m.attachments] == [after]
    fd.assert_clean()


async def test_a_redraw_through_a_token_edits_the_live_table_it_posted_not_that_clicks_panel(
        world, tmp_path, monkeypatch):
    """The live table a panel click's token posted is redrawn through that token as the
    followup it is.  Another click on it meanwhile (*My hand*, whose token edits it as its
    ``@original``) does not turn that redraw into an edit of the panel click's own
    ``@original``, the player's panel: it would become a copy of the live table (a
    Components V2 message), and every later redraw of the panel (an embed) would be refused."""
    import threading

    from cogs.games.nimmt import render as render_nimmt

    fd = world.fd
    people = [world.person("ana"), world.person("ben")]
    cleo = world.person("cleo")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        first = t.table_message()
        mover = people[table.engine.to_move]
        waiter = people[1 - table.engine.to_move]
        # My hand, then every click on the panel itself: the freshest token's @original is the panel
        panel = await open_hand(t, mover)
        await nimmt_turn(t, mover, panel)
        live = await fd.wait_for(lambda: (m := t.table_message()) is not None and m is not first and m, timeout=10)
        assert live.webhook_id is not None and live.interaction["original_response_message_id"] == panel.id
        assert panel.embeds and not panel.flags & FLAG_COMPONENTS_V2

        # the live table's next redraw is held while its picture is drawn...
        draw, drawing, drawn = render_nimmt.render_nimmt_table, threading.Event(), threading.Event()

        def held(*args: Any) -> bytes:
            drawing.set()
            drawn.wait(10)  # (in the painter's thread: the bot's loop goes on)
            return draw(*args)

        monkeypatch.setattr(render_nimmt, "render_nimmt_table", held)
        try:
            await t.click(cleo, live, f"table.watch:{t.table_id}")  # (named on the live table: a redraw)
            await fd.wait_for(drawing.is_set, timeout=10)
            # ... while the player pinged opens their hand on it
            r = await t.click(waiter, live, f"nimmt.hand:{t.table_id}")
            assert r.ack_type == 6, r
        finally:
            drawn.set()
        monkeypatch.undo()
        # the redraw lands (wherever it goes)
        await fd.wait_for(lambda: "cleo" in live.text() or "cleo" in panel.text(), timeout=10)
        # the mover's panel is still their hand, not a copy of the live table
        assert panel.embeds and not panel.flags & FLAG_COMPONENTS_V2, panel.text()
        assert "cleo" in live.text() and not live.deleted and t.table_message() is live
        assert not any(b["custom_id"].startswith("nimmt.hand") for b in panel.buttons()), panel.text()

        # the game goes on: the waiter plays, the mover's panel is redrawn (an embed) and follows them
        await nimmt_turn(t, waiter, await private_answer(r))
        await fd.wait_for(lambda: (m := t.table_message()) is not None and m is not live, timeout=10)
    fd.assert_clean()
