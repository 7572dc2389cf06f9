"""What the bot says, end to end: a name is shown as typed and never pings or
links; a turn that needs a person pings that person exactly once, while it is
still their turn; the thread's narration is the engine's log, even across
SIGKILLs."""
from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from core.games.nimmt.engine import Nimmt
from tests.e2e import (MOVE, as_read, check_pings, description, everything_shown, followed_panel, nimmt_turn, open_hand, open_table, panel_answer,
                       play_nimmt, private_answer, running_bot, seat_players, started, versions, updated)

pytestmark = pytest.mark.timeout(600)

HOSTILE = "<@{victim}> [x](https://example.com) **b**"
MASKED_LINK = re.compile(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\((?:<)?https?:")


# ------------------------------------------------------------------ names are text
async def test_a_name_with_a_mention_and_a_link_neither_pings_nor_links(world, tmp_path):
    fd = world.fd
    victim = world.person("vic")  # never plays
    hostile = HOSTILE.format(victim=victim.id)
    mallory = world.person("mallory", nick=hostile)
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, mallory, world.channel, "nimmt new", seats=3, rounds=1, turn_time=0)
        await seat_players(t, mallory, [ana], computers=1)
        r = await t.click(mallory, t.lobby, f"table.start:{t.table_id}")
        await updated(r)
        await t.wait_thread()
        table = bot.tables.get(t.table_id)
        assert table.seats[0].name == hostile
        # At mallory's turn ana's panel says whom it waits for.
        await fd.wait_for(t.table_message, timeout=10)
        for _ in range(5):
            await fd.wait_for(lambda: table.engine.to_move is not None
                              and table.seats[table.engine.to_move].user_id is not None, timeout=10)
            if table.seats[table.engine.to_move].user_id == mallory.id:
                break
            await nimmt_turn(t, ana)
        shown = await open_hand(t, ana)
        assert f"Waiting for {hostile}." in as_read(shown.text()), shown.text()
        await play_nimmt(fd, t, {mallory: "en", ana: "en"})
        await fd.wait_for(lambda: "Game over!" in t.log_text(), timeout=10)
        for command, options in (("stats", {"user": mallory}), ("leaderboard", {"by": "games"}),
                                 ("history", {"user": mallory})):
            r = await fd.slash(ana, world.channel, command, **options)
            await r.settled()
            assert r.ack_type in (4, 5)
            answer = r.followups[-1] if r.ack_type == 5 and r.followups else r.message
            assert hostile in as_read(answer.text()), (command, answer.text())

        assert not any(u == victim.id for _, u in fd.pings()), "the name pinged someone"
        shown = everything_shown(fd, [world.channel, t.thread], [mallory, ana, victim])
        named = [m for m in shown if "example" in m.text()]
        assert len(named) > 10  # the name is shown: lobby, narration, panels, stats...
        for text in (text for m in shown for text in versions(m)):
            assert f"<@{victim.id}>" not in text, text
            assert not MASKED_LINK.search(text), text
            assert "https://example.com" not in text, text
        # The name reads as typed once Discord's markdown drops the escapes, bold in narration.
        assert f"**{hostile}**" in as_read(t.log_text())
        # Every ping went to a seat, once per turn.
        check_pings(fd, t, table, {"rounds": 1}, "nimmt")


# ------------------------------------------------------------------ one ping per turn
@pytest.mark.parametrize("humans,computers,rounds", [(4, 0, 1)], ids=["4-people"])
async def test_nimmt_pings_once_per_turn(world, tmp_path, humans, computers, rounds):
    """(The full games of tests/e2e/test_nimmt.py and tests/e2e/test_garbage.py check their pings too.)"""
    fd = world.fd
    people = [world.person(name) for name in ("ana", "ben", "cleo", "dan")[:humans]]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t = await open_table(fd, people[0], world.channel, "nimmt new", seats=humans + computers,
                             rounds=rounds, turn_time=0)
        await seat_players(t, people[0], people[1:], computers)
        r = await t.click(people[0], t.lobby, f"table.start:{t.table_id}")
        await updated(r)
        await t.wait_thread()
        table = bot.tables.get(t.table_id)
        await fd.wait_for(t.table_message, timeout=10)
        await play_nimmt(fd, t, {u: "en" for u in people})
        await fd.wait_for(lambda: "The game is over" in t.lobby.text(), timeout=10)
        reposts = sum(1 for m in fd.messages(t.thread, include_deleted=True) if m.deleted)
        # Each new round reposts the table message: the bot's own deletions of the old one
        # never count as a user's (which would redraw it and ping again).
        assert reposts >= rounds - 1
        check_pings(fd, t, table, bot.tables.engine_options(table), "nimmt")
        # Words agree with their numbers: no "up to 0 stacks", no "1 cards, 1 bulls, 1 points".
        panels = [x for u in people for m in fd.ephemerals(u) for x in versions(m)]
        assert panels and not any("up to 0" in x for x in panels)
        summaries = [x for m in fd.messages(t.thread, include_deleted=True) if description(m) for x in versions(m)]
        assert any(" 0 bulls, 0 points" in x for x in summaries)
        assert not any(re.search(r"\b1 (cards|bulls|points)\b", x) for x in summaries)


# ------------------------------------------------------------------ narration across kills
def told_moves(text: str) -> list[str]:
    return [line for line in text.splitlines() if MOVE["nimmt"].match(line)]


def moves_of_the_log(database: Any, table_id: int) -> list[str]:
    """The move lines the engine's log stands for, from the saved log alone."""
    import json
    import sqlite3

    from app.i18n.catalogue import t

    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        meta = json.loads(con.execute("SELECT meta FROM tables WHERE id = ?", (table_id,)).fetchone()[0])
        log = con.execute("SELECT seat, action FROM table_actions WHERE table_id = ? ORDER BY idx",
                          (table_id,)).fetchall()
    finally:
        con.close()
    names = [f"**{s['name']}**" for s in meta["seats"]]
    options = {k: v for k, v in meta["options"].items() if k != "turn_time"}
    engine = Nimmt.replay(len(names), meta["seed"], options, [])
    lines = []
    for seat, text in log:
        for e in engine.apply(seat, engine.parse(text)):
            if e["type"] == "played":
                lines.append(t("en", "nimmt.played", name=names[e["seat"]], label=e["label"], onto=e["onto"],
                               cards=", ".join(str(c) for c in e["cards"])))
            elif e["type"] == "took":
                lines.append(t("en", "nimmt.took", name=names[e["seat"]], label=e["label"], top=e["top"],
                               count=e["count"]))
            elif e["type"] == "passed":
                lines.append(t("en", "nimmt.passed", name=names[e["seat"]]))
            elif e["type"] == "opened":
                lines.append(t("en", "nimmt.opened", name=names[e["seat"]], label=e["label"], card=e["card"]))
    return lines


async def test_narration_after_kills_is_the_log_in_order_once(world, bots, tmp_path):
    """The bot is SIGKILLed right after acknowledging moves while Discord fails its posts
    in the thread: after each restart the live table is again the newest message of the thread and
    shows the move, and at the end the thread's record tells every move of the engine's
    log, in order, once."""
    from tests.e2e.test_restart import Run, people_of

    fd = world.fd
    people = people_of(world)
    bot = bots(fd, world.guild, tmp_path / "talk.db", tmp_path / "talk.log")
    await bot.start()
    held: list[int] = []  # moves the bot died right after

    def live_last() -> Any:
        """The newest message of the thread when it is the live table (its picture)."""
        shown = fd.messages(run.thread)
        last = shown[-1] if shown else None
        return last if last is not None and any(a.get("filename") == "table.png" for a in last.attachments) else None

    async def kill_before_telling(run: Run, event: str, payload: Any) -> Any:
        if event != "click" or len(held) >= 3 or run.clicks < 3 * (len(held) + 1):
            return None
        user, panel, (kind, custom_id, values) = payload
        if not re.match(r"nimmt\.(cards|take|pass|steal|open):", custom_id):
            return None
        # Discord fails the thread's posts (discord.py tries again 1, 3, 5, 7 s later) until the
        # bot dies, however long the answer took on a busy machine.
        fd.fail_next("POST", rf"/channels/{run.thread.id}/messages$", status=500, times=1000)
        r = await run.interact(user, panel, kind, custom_id, values)
        shown = await panel_answer(r)
        await run.bot.kill()
        fd.clear_failures()
        held.append(run.clicks)
        await run.bot.start()
        # The live table is the newest message again and shows the move.
        name = f"**{user.name}**"
        await fd.wait_for(lambda: (live := live_last()) is not None and name in live.text(), timeout=15)
        return shown

    run = Run(world, bot, people, hook=kill_before_telling)
    await run.open("talk")
    await run.start()
    await run.play()
    text = await run.finish_shown()
    await bot.stop()
    assert len(held) >= 2, held
    expected = moves_of_the_log(bot.database, run.table_id)
    assert told_moves(text) == expected
    fd.assert_clean()


# ------------------------------------------------------------------ the panel
async def _two_people(world: Any, bot: Any, seed_names=("ana", "ben")) -> tuple[Any, Any, list[Any]]:
    people = [world.person(name) for name in seed_names]
    t, table = await started(world, bot, people, rounds=1, turn_time=0)
    return t, table, people


async def test_one_click_plays_a_card(world, tmp_path):
    """A panel offers a button per card that fits a stack (when they fit in the panel):
    one click plays that card there."""
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table, people = await _two_people(world, bot)
        for _ in range(30):
            user = next(u for u in people if table.seat_of(u.id) == table.engine.to_move)
            panel = await open_hand(t, user)
            quick = [b for b in panel.buttons() if (b["custom_id"] or "").startswith("nimmt.play:")]
            if quick and not table.engine.view(table.engine.to_move)["turn"]["several_cards"]:
                break
            await nimmt_turn(t, user, panel)
        else:
            pytest.fail("no panel offered one-click plays")
        view = table.engine.view(table.seat_of(user.id))
        pairs = sorted((int(s), c) for s, cards in view["playable"].items() for c in cards)
        labels = {s["id"]: s["label"] for s in view["stacks"]}
        assert sorted(b["label"] for b in quick) == sorted(f"{c} → {labels[s]}" for s, c in pairs)
        assert "Click a card below to play it at once" in panel.text()
        choice = quick[-1]
        card, label = choice["label"].split(" → ")
        version = table.version
        r = await t.click(user, panel, choice["custom_id"])
        shown = await panel_answer(r)
        assert table.version == version + 1
        assert f"played {card} on stack {label}" in shown.text()
        assert int(card) not in table.engine.view(table.seat_of(user.id))["hand"]
        await fd.wait_for(lambda: f"played {card} on stack {label}" in t.log_text(), timeout=10)


async def test_a_redraw_under_way_does_not_wipe_a_fresh_answer(world, tmp_path):
    """ana's open panel is coming down below the ping of her turn (Discord is slow to take
    the new message) when she refreshes the one she has and picks a stack: she is answered
    in time, the stack's controls stay, and she is left with one live panel."""
    from tests.e2e import button, private_answer, select

    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table, (ana, ben) = await _two_people(world, bot)
        while table.engine.to_move != table.seat_of(ben.id):
            await nimmt_turn(t, ana)
        r = await t.click(ana, t.table_message(), f"nimmt.hand:{t.table_id}")
        panel = await private_answer(r)
        assert "Waiting for ben" in panel.text()
        # The panel coming down (a new followup of her My hand click) is held: Discord is
        # slow to take it.  (A 5xx is no longer this case: the followup is sent once and the
        # panel above goes at once, test_follow.py's test_a_panel_whose_followup_answer_failed_is_never_doubled.)
        token = r.interaction.token
        slow = fd.hold("POST", rf"/webhooks/\d+/{token}$")
        await nimmt_turn(t, ben)
        assert table.engine.to_move == table.seat_of(ana.id)
        await fd.wait_for(lambda: slow.caught, timeout=5)
        clicks = len(panel.tokens)
        refresh = asyncio.ensure_future(t.click(ana, panel, f"nimmt.refresh:{t.table_id}"))
        await fd.wait_for(lambda: len(panel.tokens) > clicks, timeout=5)  # her click is on its way
        slow.release()
        r = await refresh
        assert r.ack_type in (4, 7) and r.latency < 3
        shown = r.message
        stacks = select(shown, r"nimmt.stack:\d+:.*")
        assert stacks, shown.text()
        chosen = stacks["options"][0]
        r = await t.choose(ana, shown, stacks["custom_id"], [chosen["value"]])
        assert r.ack_type == 7

        def controls() -> bool:
            return bool(select(shown, rf"nimmt.cards:\d+:\d+:{chosen['value']}")
                        or button(shown, rf"nimmt.take:\d+:\d+:{chosen['value']}"))

        assert controls(), shown.text()
        await fd.wait_for(lambda: any(req.method == "POST" and req.path.endswith(token) and req.status == 200
                                      for req in fd.requests), timeout=5)  # the panel that came down, landed
        await asyncio.sleep(0.5)
        assert controls(), "the redraw wiped the chosen stack"
        assert [m for m in fd.ephemerals(ana, t.thread) if select(m, r"nimmt.stack:\d+:.*")] == [shown]


async def test_open_panels_say_the_game_is_over(world, tmp_path):
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table, people = await _two_people(world, bot)
        await play_nimmt(fd, t, {u: "en" for u in people})
        for user in people:
            latest = [m for m in fd.ephemerals(user) if any(a["filename"] == "hand.png" for a in m.attachments)][-1]
            await fd.wait_for(lambda: "The game is over." in latest.text(), timeout=5)
            assert "Waiting for" not in latest.text()


async def test_clicks_are_answered_while_tables_are_redrawn_after_a_kill(world, bots, tmp_path):
    """Three games in progress, SIGKILL, start: while the bot tells and redraws every
    table, each player to move gets their hand at once (within Discord's 3 s)."""
    from tests.e2e.test_restart import Run, people_of

    fd = world.fd
    people = people_of(world)
    bot = bots(fd, world.guild, tmp_path / "busy.db", tmp_path / "busy.log")
    await bot.start()
    runs = []
    for n in range(3):
        run = Run(world, bot, people)
        await run.open(f"busy-{n}")
        await run.start()
        for _ in range(2 + n):
            await run.step(await run.mover())
        runs.append(run)
    # The narration of the last moves is still held back when the bot dies.
    for run in runs:
        fd.fail_next("POST", rf"/channels/{run.thread.id}/messages$", status=500)
    user = await runs[-1].mover()
    await runs[-1].step(user)
    await bot.kill()
    await bot.start()
    answers = []
    for run in runs:
        user = await run.mover()
        message = run.table_message()
        r = await fd.click(user, message, f"nimmt.hand:{run.table_id}")  # NoAcknowledgement if late
        answers.append(r)
        assert r.ack_type in (4, 5, 6), r
    assert all(r.latency < 3 for r in answers), [r.latency for r in answers]
    for r in answers:
        shown = await private_answer(r)
        assert shown.ephemeral and "Your hand" in shown.text(), shown.text()
    await bot.stop()
    fd.assert_clean()


async def test_a_slow_panel_is_still_answered_in_time(world, tmp_path, monkeypatch):
    """When drawing a hand takes longer than Discord waits (a busy machine), the click
    is answered in time (My hand: at once, as an update of the table message) and the
    panel follows."""
    import time

    from cogs.games.nimmt import render as render_nimmt

    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table, people = await _two_people(world, bot)
        draw = render_nimmt.render_nimmt_hand

        def slow(*args: Any) -> bytes:
            time.sleep(2.5)  # in the panel's worker thread: the bot's loop goes on
            return draw(*args)

        monkeypatch.setattr(render_nimmt, "render_nimmt_hand", slow)
        user = people[0]
        r = await t.click(user, t.table_message(), f"nimmt.hand:{t.table_id}")
        assert r.ack_type == 6 and r.latency < 3, r
        panel = await private_answer(r)
        assert "Your hand" in panel.text() and panel.ephemeral_to == user.id
        r = await t.click(user, panel, f"nimmt.refresh:{t.table_id}")
        # the same hand: its picture is reused (answered at once, 7), else deferred in time (6)
        assert r.ack_type in (6, 7) and r.latency < 3, r
        await r.settled(timeout=10)
        assert any(a["filename"] == "hand.png" for a in panel.attachments)
        monkeypatch.undo()


async def test_a_move_is_acknowledged_before_its_panel_is_drawn(world, tmp_path, monkeypatch):
    """A move on the panel is saved and acknowledged without waiting for the new
    picture of the hand; the panel then shows the move, picture included."""
    import threading

    from cogs.games.nimmt import render as render_nimmt
    from tests.e2e import button, select

    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        t, table, people = await _two_people(world, bot)
        user = next(u for u in people if table.seat_of(u.id) == table.engine.to_move)
        panel = await open_hand(t, user)
        stacks = select(panel, r"nimmt.stack:\d+:.*")
        panel = await panel_answer(await t.choose(user, panel, stacks["custom_id"], [stacks["options"][0]["value"]]))
        take = button(panel, r"nimmt.take:\d+:.*")
        assert take, panel.text()
        draw, drawn = render_nimmt.render_nimmt_hand, threading.Event()

        def held(*args: Any) -> bytes:
            drawn.wait(10)  # (in the painter's thread: the bot's loop goes on)
            return draw(*args)

        monkeypatch.setattr(render_nimmt, "render_nimmt_hand", held)
        monkeypatch.setattr(bot.parts.tables.uis["nimmt"].panels, "answer_within", 30.0)  # no late deferral
        version, edits = table.version, panel.edit_count
        r = await t.click(user, panel, take["custom_id"])
        try:
            # acknowledged while the picture is still being drawn: the move is saved, the panel not redrawn yet
            assert r.ack_type == 6 and not r.settled_now, r
            assert table.version == version + 1 and panel.edit_count == edits
            assert len((await bot.store.table(t.table_id)).actions) == table.version
        finally:
            drawn.set()
        assert await panel_answer(r) is panel
        assert "took stack" in panel.text() and not button(panel, r"nimmt.take:\d+:.*")
        assert any(a["filename"] == "hand.png" for a in panel.attachments)
        monkeypatch.undo()


@pytest.mark.parametrize("status", [None, 502], ids=["answered", "502-after-it-landed"])
async def test_a_panel_drawn_slowly_fills_its_thinking_message(world, tmp_path, monkeypatch, status):
    """A click answered with a new panel (here a panel control on the public table
    message: a fresh private panel) whose picture takes longer than Discord waits is
    acknowledged "thinking..." in time; the panel then fills that message (an edit of
    it): the player has one private message, the panel, which a later move redraws and
    which goes when the panel follows them below their ping.  When Discord carries the
    panel out and only its answer fails (a 502 of its edge), discord.py sends the edit
    again, which changes nothing: still one panel, still kept current."""
    import threading

    from cogs.games.nimmt import render as render_nimmt

    fd = world.fd
    people = [world.person(name) for name in ("ana", "ben", "cleo")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        t, table = await started(world, bot, people, rounds=1, turn_time=0)
        to_move = table.engine.to_move
        mover = people[to_move]
        waiter = next(u for u in people if u is not mover and table.seat_of(u.id) != (to_move + 1) % 3)
        draw, drawn = render_nimmt.render_nimmt_hand, threading.Event()

        def held(*args: Any) -> bytes:
            drawn.wait(10)  # (in the painter's thread: the bot's loop goes on)
            return draw(*args)

        monkeypatch.setattr(render_nimmt, "render_nimmt_hand", held)
        since = len(fd.requests)
        if status is not None:
            # (the panel's request, however it is sent)
            fd.fail_next("*", r"/webhooks/\d+/[^/]+(/messages/@original)?$", status=status, after=True)
        r = await fd.forge(waiter, t.table_message(), f"nimmt.refresh:{t.table_id}")
        try:
            assert r.ack_type == 5 and r.ephemeral and r.message.loading, r  # "thinking...", in time
        finally:
            drawn.set()
        panel = await private_answer(r)
        assert not panel.loading and "Your hand" in panel.text() and panel.ephemeral_to == waiter.id
        assert any(a["filename"] == "hand.png" for a in panel.attachments)
        token = r.interaction.token

        def sent() -> list[tuple[str, int]]:
            return [(q.method, q.status) for q in fd.requests[since:] if q.path.startswith("/webhooks/") and token in q.path]

        # the "thinking..." message edited (again after the 502, by discord.py), no followup
        await fd.wait_for(lambda: sent() == [("PATCH", 502)] * (status is not None) + [("PATCH", 200)], timeout=15,
                          what="the thinking message edited")
        assert r.followups == [] and fd.ephemerals(waiter, t.thread) == [panel]
        monkeypatch.undo()
        # a move that is not the waiter's turn yet: the panel (the former "thinking..." message) is redrawn
        edits, shown = panel.edit_count, panel.text()
        await nimmt_turn(t, mover)
        await fd.wait_for(lambda: panel.edit_count > edits and panel.text() != shown, timeout=10,
                          what="the panel redrawn after the move")
        assert fd.ephemerals(waiter, t.thread) == [panel] and sent()[-1] == ("PATCH", 200)
        # the next move pings the waiter: the panel follows below the ping, the former one goes
        for _ in range(3):
            if table.status != "playing" or people[table.engine.to_move] is waiter:
                break
            await nimmt_turn(t, people[table.engine.to_move])
        assert table.status == "playing" and people[table.engine.to_move] is waiter
        below = await followed_panel(t, waiter)
        await fd.wait_for(lambda: fd.ephemerals(waiter, t.thread) == [below], timeout=10,
                          what="one panel: the one below the ping")
        assert fd.message(panel.id).deleted
    fd.assert_clean()
