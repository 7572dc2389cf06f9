"""Tables survive a restart: the real bot runs in a subprocess against the
Discord stand-in, is SIGKILLed in the middle of games and started again on
the same database; the players finish with the same clicks, and the game
ends exactly as an uninterrupted run of the same script does.

Every choice of a person comes from what their private panel shows (a fixed
rule), the deck comes from ``TABLE_SEED`` and the computer's moves from the
seed and the table version, so two runs of the script play the same game.
Whose turn it is is read from the database (``meta.turn_seat``, written in
the same transaction as the action): the driver never waits for a ping that
a kill may have swallowed.
"""
from __future__ import annotations

import asyncio
import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.e2e import button, nimmt_choice, panel_answer, posted, private_answer, updated
from tests.e2e.processes import SEED, BotProcess, connect, table_row
from tests.fakediscord import NoAcknowledgement

pytestmark = pytest.mark.timeout(240)

SEATS = 3  # two people and a computer
PERSON_NAMES = ("ana", "ben")


# ----------------------------------------------------------------- the database
def seats_since(database: Path, table_id: int, index: int) -> list[int]:
    """Seats of the actions saved from ``index`` on."""
    con = connect(database)
    try:
        return [r[0] for r in con.execute(
            "SELECT seat FROM table_actions WHERE table_id = ? AND idx >= ? ORDER BY idx", (table_id, index))]
    finally:
        con.close()


def final_state(database: Path, table_id: int) -> dict[str, Any]:
    con = connect(database, readonly=False)
    try:
        integrity = [r[0] for r in con.execute("PRAGMA integrity_check")]
        fk = con.execute("PRAGMA foreign_key_check").fetchall()
        status, meta = con.execute("SELECT status, meta FROM tables WHERE id = ?", (table_id,)).fetchone()
        actions = con.execute("SELECT idx, seat, action FROM table_actions WHERE table_id = ? ORDER BY idx",
                              (table_id,)).fetchall()
        games = con.execute("SELECT id, seed, rounds, has_bots, n_players FROM games WHERE table_id = ?",
                            (table_id,)).fetchall()
        standings = con.execute(
            "SELECT p.seat, p.user_id, p.name, p.score, p.place FROM game_players p JOIN games g "
            "ON g.id = p.game_id WHERE g.table_id = ? ORDER BY p.seat", (table_id,)).fetchall()
        return {"integrity": integrity, "fk": fk, "status": status, "seats": json.loads(meta)["seats"],
                "actions": actions, "games": games, "standings": standings}
    finally:
        con.close()


# ----------------------------------------------------------------- the players
def decide(panel: Any) -> tuple[str, str, list[str]] | None:
    """The script: what a person clicks next on their hand panel (None: nothing to do).

    Steal from / open with the first offer; End turn as soon as it is offered; play all
    fitting cards (one when without bulls); take a stack when Take is offered, else put
    the cards on the first stack that fits, else on the first stack."""
    return nimmt_choice(panel, ("steal", "open", "end", "cards", "take", "fit", "stack"))


@dataclass
class Run:
    """One table played by the script; ``hook`` may kill and restart the bot between clicks."""

    world: Any
    bot: BotProcess
    people: list[Any]
    channel: Any = None
    table_id: int = 0
    lobby: Any = None
    thread: Any = None
    panels: dict[int, Any] = field(default_factory=dict)  # each person's latest panel
    old_panels: list[tuple[Any, Any]] = field(default_factory=list)
    clicks: int = 0
    end_turns: int = 0
    log: list[str] = field(default_factory=list)  # what was clicked, for diagnostics
    hook: Callable[["Run", str, Any], Any] | None = None

    @property
    def fd(self) -> Any:
        return self.world.fd

    def after(self, custom_id: str, values: list[str]) -> tuple[int, Any] | None:
        """The seat to move and the game as the saved log leaves it with this panel
        control applied by that seat (None: the control is no move)."""
        from core.games.nimmt.engine import Nimmt

        action = action_of(custom_id, values)
        if action is None:
            return None
        con = connect(self.bot.database)
        try:
            log = con.execute("SELECT seat, action FROM table_actions WHERE table_id = ? ORDER BY idx",
                              (self.table_id,)).fetchall()
        finally:
            con.close()
        game = Nimmt.replay(SEATS, self.bot.seed, {"rounds": 1}, log)
        seat = game.to_move
        assert seat is not None, "the game was over already"
        game.apply(seat, action)
        return seat, game

    async def open(self, channel_name: str) -> None:
        fd = self.fd
        self.channel = fd.add_channel(self.world.guild, channel_name)
        host = self.people[0]
        r = await fd.slash(host, self.channel, "nimmt new", seats=SEATS, rounds=1, turn_time=0)
        self.lobby = await posted(r)
        assert not r.ephemeral, r
        join = re.match(r"table.join:(\d+)", self.lobby.buttons()[0]["custom_id"])
        assert join, self.lobby.buttons()
        self.table_id = int(join.group(1))
        for user in self.people[1:]:
            r = await fd.click(user, self.lobby, f"table.join:{self.table_id}")
            await updated(r)
        r = await fd.click(host, self.lobby, f"table.cpu:{self.table_id}")
        await updated(r)

    async def start(self) -> None:
        r = await self.fd.click(self.people[0], self.lobby, f"table.start:{self.table_id}")
        await updated(r)
        await self.wait_thread()

    async def wait_thread(self) -> None:
        fd = self.fd
        threads = await fd.wait_for(lambda: fd.threads(self.channel), timeout=15)
        self.thread = threads[-1]
        await fd.wait_for(self.table_message, timeout=15)

    def table_message(self) -> Any | None:
        found = None
        for message in self.fd.messages(self.thread):
            if any(a.get("filename") == "table.png" for a in message.attachments) and \
                    button(message, rf"nimmt.hand:{self.table_id}"):
                found = message
        return found

    def state(self) -> tuple[str, dict[str, Any], int]:
        return table_row(self.bot.database, self.table_id)

    async def mover(self) -> Any | None:
        """The person to move (None: the game is over); waits while the computer thinks."""
        async def ready() -> Any:
            status, meta, _ = self.state()
            if status != "playing":
                return ("over",)
            seat = meta["turn_seat"]
            user_id = meta["seats"][seat]["user_id"] if seat is not None else None
            return (user_id,) if user_id is not None else None

        status, meta, version = self.state()
        if status == "playing" and meta["turn_seat"] is not None and \
                meta["seats"][meta["turn_seat"]]["user_id"] is None and self.hook:
            await self.hook(self, "computer", version)
        found = await self.fd.wait_for(ready, timeout=20)
        if found == ("over",):
            return None
        return next(u for u in self.people if u.id == found[0])

    async def interact(self, user: Any, message: Any, kind: str, custom_id: str, values: list[str]) -> Any:
        self.clicks += 1
        self.log.append(f"{self.clicks}: {user.name} {kind} {custom_id} {values}")
        if kind == "click":
            return await self.fd.click(user, message, custom_id)
        return await self.fd.select(user, message, custom_id, values)

    def newest_panel(self, user: Any) -> Any | None:
        """The newest of the person's panels still there: while the bot knows its token, a
        panel follows its player below each ping of theirs (the one above is deleted)."""
        panels = [m for m in self.fd.ephemerals(user, self.thread) if button(m, rf"nimmt.refresh:{self.table_id}")]
        return panels[-1] if panels else None

    async def step(self, user: Any) -> None:
        """One interaction of ``user``: open the hand, or the next control of the script."""
        panel = self.newest_panel(user) if user.id in self.panels else None
        choice = decide(panel) if panel is not None else None
        if choice is None:
            if self.hook:
                await self.hook(self, "hand", user)
            message = self.table_message()
            r = await self.interact(user, message, "click", f"nimmt.hand:{self.table_id}", [])
            shown = await private_answer(r)  # (after a deferred update of the table message: a followup)
            assert shown.ephemeral_to == user.id, r
            if panel is not None:
                self.old_panels.append((user, panel))
            self.panels[user.id] = shown
            assert decide(shown) is not None, f"{user.name}'s turn, but no controls:\n{shown.text()}"
            return
        kind, custom_id, values = choice
        assert panel is not None  # (a choice is decided on a panel)
        if custom_id.startswith("nimmt.pass:"):
            self.end_turns += 1
        if self.hook:
            replaced = await self.hook(self, "click", (user, panel, choice))
            if replaced is not None:
                self.panels[user.id] = replaced
                return
        try:
            r = await self.interact(user, panel, kind, custom_id, values)
        except LookupError:  # it was deleted just then: a new one came below the ping (the next step takes it)
            gone = self.fd.message(panel.id)
            if gone is None or not gone.deleted:
                raise
            self.log.append(f"{user.name}: the panel moved down")
            return
        if r.ack_type == 4:  # (clicked just as it was replaced below the ping: answered anew)
            self.panels[user.id] = r.message
            return
        assert r.ack_type in (6, 7), (r, self.log[-5:])
        self.panels[user.id] = await panel_answer(r)

    async def play(self) -> None:
        for _ in range(2000):
            user = await self.mover()
            if user is None:
                return
            await self.step(user)
        raise AssertionError("the game did not end")

    async def finish_shown(self) -> str:
        """The thread's narration once the end is announced, and the lobby's final standings."""
        fd = self.fd
        await fd.wait_for(lambda: "The game is over" in self.lobby.text(), timeout=15)
        await fd.wait_for(lambda: "Game over!" in self.thread_text(), timeout=15)
        return self.thread_text()

    def thread_text(self) -> str:
        return "\n".join(m.content for m in self.fd.messages(self.thread) if m.content)


def record_of(run: Run | GarbageRun) -> list[str]:
    """The thread's record as a person reads it once the game is over: the lines of every
    message but the live table (the picture), each run's shuffle commitment and table
    number left out (a random nonce of its own, another table)."""
    return [re.sub(r"\b[0-9a-f]{16,}\b", "-", re.sub(r"#\d+", "#-", line))
            for m in run.fd.messages(run.thread) if not m.attachments for line in m.content.splitlines()]


def standings_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\d+\. \*\*.+\*\* — -?\d+$", line)]


async def uninterrupted(world: Any, bots: Callable[..., BotProcess], tmp_path: Path, people: list[Any]) -> dict:
    run = await played(world, bots, tmp_path, "games-a", people=people)
    bot = run.bot
    text = await run.finish_shown()
    await bot.stop()
    state = final_state(bot.database, run.table_id)
    return {"run": run, "state": state, "standings": standings_lines(text), "lobby": run.lobby.text(),
            "record": record_of(run)}


def people_of(world: Any) -> list[Any]:
    return [world.users.get(name) or world.person(name) for name in PERSON_NAMES]


async def played(world: Any, bots: Callable[..., BotProcess], tmp_path: Path, name: str,
                 hook: Callable[[Run, str, Any], Any] | None = None, run: type[Run] = Run,
                 people: list[Any] | None = None, **options: Any) -> Run:
    """A table of the script's people (:func:`people_of` unless given) and a computer played
    to its last move on a bot started for it (``options``: :class:`BotProcess`'s), every file
    and the channel named ``name``, ``hook`` called between clicks."""
    bot = bots(world.fd, world.guild, tmp_path / f"{name}.db", tmp_path / f"{name}.log", **options)
    await bot.start()
    game = run(world, bot, people_of(world) if people is None else people, hook=hook)
    await game.open(name)
    await game.start()
    await game.play()
    return game


class AtMove:
    """A :class:`Run` hook that steps in at the ``at``-th click of a person that :meth:`counts`
    (a move, unless told otherwise), and at the next one that counts until it is ``done``:
    :meth:`act` makes (or not) that click, and returns the panel it showed (None: the script
    makes it as usual)."""

    def __init__(self, at: int = 3) -> None:
        self.at = at
        self.moves = 0
        self.done = False

    def counts(self, run: Run, user: Any, custom_id: str, values: list[str]) -> bool:
        return action_of(custom_id, values) is not None

    async def __call__(self, run: Run, event: str, payload: Any) -> Any:
        if event != "click" or self.done:
            return None
        user, panel, (kind, custom_id, values) = payload
        if not self.counts(run, user, custom_id, values):
            return None
        self.moves += 1
        if self.moves < self.at:
            return None
        return await self.act(run, user, panel, kind, custom_id, values)

    async def act(self, run: Run, user: Any, panel: Any, kind: str, custom_id: str, values: list[str]) -> Any:
        raise NotImplementedError


def assert_same_game(a: dict, b: dict) -> None:
    sa, sb = a["state"], b["state"]
    for s in (sa, sb):
        assert s["integrity"] == ["ok"] and s["fk"] == [], s["integrity"]
        assert s["status"] == "finished"
        assert len(s["games"]) == 1, f"recorded {len(s['games'])} times"
    assert [a[1:] for a in sb["actions"]] == [a[1:] for a in sa["actions"]], "the action logs differ"
    assert [x[0] for x in sb["actions"]] == list(range(len(sb["actions"])))
    assert sb["games"][0][1:] == sa["games"][0][1:]
    assert sb["standings"] == sa["standings"]
    assert b["standings"] == a["standings"] and a["standings"], (a["standings"], b["standings"])
    # the same game, but each run's shuffle commitment has its own random nonce
    lobby = lambda text: re.sub(r"(Nonce: |\(SHA-256\): )[0-9a-f]+", r"\1-",  # noqa: E731
                                text.split("Final standings:", 1)[1])
    assert lobby(b["lobby"]) == lobby(a["lobby"])


# ----------------------------------------------------------------- the tests
@dataclass
class KillPlan:
    """Where run B SIGKILLs the bot (each at most once), and what it checks after."""

    after_clicks: int = 6  # right after an acknowledged click: narration and redraw still in flight
    mid_click: int = 30  # while an action click is in flight: saved, not yet acknowledged
    done: set[str] = field(default_factory=set)
    unacknowledged: int = 0
    stale_answers: list[str] = field(default_factory=list)

    async def __call__(self, run: Run, event: str, payload: Any) -> Any:
        fd = run.fd
        if event in ("hand", "click") and run.clicks >= self.after_clicks and "after" not in self.done:
            self.done.add("after")
            await run.bot.restart()
            return None
        if event == "computer" and "computer" not in self.done and "after" in self.done:
            self.done.add("computer")  # the computer's move is due: killed before or after it, it is made once
            await run.bot.restart()
            return None
        if event != "click":
            return None
        user, panel, (kind, custom_id, values) = payload
        if custom_id.startswith("nimmt.pass:") and "bulls" not in self.done:
            # A bull-card holder played a batch and has not ended the turn.
            self.done.add("bulls")
            old_table = run.table_message()
            await run.bot.restart()
            # The old table message's "My hand" still answers: a second panel.
            r = await run.interact(user, old_table, "click", f"nimmt.hand:{run.table_id}", [])
            second = await private_answer(r)
            assert second.ephemeral_to == user.id, r
            assert button(second, r"nimmt.pass:\d+:.*"), second.text()
            # End turn on the panel shown before the kill.
            r = await run.interact(user, panel, kind, custom_id, values)
            shown = await panel_answer(r)
            # The second panel is stale now: it answers with the current hand, changing nothing.
            _, meta, version = run.state()
            r2 = await run.interact(user, second, "click", custom_id, [])
            self.stale_answers.append((await panel_answer(r2)).text())
            # Nothing of the clicker's was added (the computer may have moved meanwhile).
            seat = [s["user_id"] for s in meta["seats"]].index(user.id)
            assert seat not in seats_since(run.bot.database, run.table_id, version)
            return shown
        is_action = re.match(r"nimmt\.(cards|take|pass|steal|open):", custom_id)
        if is_action and run.clicks >= self.mid_click and "mid" not in self.done:
            self.done.add("mid")
            _, _, before = run.state()
            # Discord fails the answer three times (discord.py tries again after 1, 3
            # and 5 s: past the 3 s Discord waits): the click is never acknowledged,
            # however late the kill comes after the action was saved.  (Failing it once
            # left a 1 s window: a test process that a loaded machine held up longer
            # killed the bot after its second try had answered the click.)
            fd.fail_next("POST", r"/interactions/\d+/[^/]+/callback$", status=500, times=3)
            task = asyncio.create_task(run.interact(user, panel, kind, custom_id, values))
            await fd.wait_for(lambda: task.done() or run.state()[2] > before, timeout=10, interval=0.001)
            await run.bot.kill()
            fd.clear_failures()  # the click after the restart is answered at once
            with pytest.raises(NoAcknowledgement):
                await task
            fd.take_violations(r"not acknowledged within")
            self.unacknowledged += 1
            await run.bot.start()
            # "The application did not respond": the player clicks again.
            r = await run.interact(user, panel, kind, custom_id, values)
            shown = await panel_answer(r)
            # Saved once: after it, only the computer may have moved.
            _, meta, _ = run.state()
            seat = next(i for i, s in enumerate(meta["seats"]) if s["user_id"] == user.id)
            con = connect(run.bot.database)
            try:
                seats = [row[0] for row in con.execute(
                    "SELECT seat FROM table_actions WHERE table_id = ? AND idx >= ? ORDER BY idx",
                    (run.table_id, before))]
            finally:
                con.close()
            assert seats[:1] == [seat], "the action was lost"
            assert all(meta["seats"][s]["user_id"] is None for s in seats[1:]), f"made twice: {seats}"
            return shown
        return None


async def test_kills_mid_game_lose_nothing(world, bots, tmp_path):
    """SIGKILL at several points of a game; the restarted bot finishes it as if
    nothing happened: same action log, same standings, recorded once."""
    fd = world.fd
    people = people_of(world)
    a = await uninterrupted(world, bots, tmp_path, people)

    plan = KillPlan()
    run = await played(world, bots, tmp_path, "games-b", plan, people=people)
    bot = run.bot
    text = await run.finish_shown()
    assert plan.done == {"after", "computer", "bulls", "mid"}, (plan.done, run.log[-10:])
    assert plan.unacknowledged == 1
    assert a["run"].end_turns >= 1, "no bull-card holder ended a turn by hand: pick another SEED"
    assert bot.kills == 4
    for answer in plan.stale_answers:
        assert "The table has moved on" in answer
    # After the end, an old panel answers cleanly too.
    user, old = run.old_panels[0]
    r = await fd.click(user, old, f"nimmt.refresh:{run.table_id}")
    assert r.ack_type == 4 and r.ephemeral and "closed" in r.message.text(), r
    await bot.kill()  # a kill after the end changes nothing either
    await bot.start()
    r = await fd.click(user, old, f"nimmt.refresh:{run.table_id}")  # (the restarted bot answers)
    assert r.ack_type == 4 and r.ephemeral and "closed" in r.message.text(), r
    await bot.stop()
    b = {"run": run, "state": final_state(bot.database, run.table_id), "standings": standings_lines(text),
         "lobby": run.lobby.text()}
    assert_same_game(a, b)
    # the thread reads as the uninterrupted run's: every move in the record once, in order
    assert record_of(run) == a["record"], "\n".join(difflib.unified_diff(a["record"], record_of(run), "a", "b",
                                                                          lineterm=""))
    fd.assert_clean()


@dataclass
class GarbageRun:
    """A Garbage table of one person (who draws, and puts a Jack on the highest slot offered)
    against a computer, played through the live table's buttons; ``kill_after_jack`` kills
    and restarts the bot right after the person's first Jack placed."""

    world: Any
    bot: BotProcess
    kill_after_jack: bool = False
    thread: Any = None
    table_id: int = 0
    jacks: int = 0

    @property
    def fd(self) -> Any:
        return self.world.fd

    def table_message(self, after: int) -> tuple[Any, int] | None:
        """The newest live table whose move buttons are newer than version ``after``."""
        for message in reversed(self.fd.messages(self.thread)):
            moves = [b["custom_id"] for b in message.buttons()
                     if re.fullmatch(rf"garbage\.(draw|jack):{self.table_id}:\d+(:\d+)?", b.get("custom_id") or "")]
            if moves:
                version = int(moves[0].split(":")[2])
                return (message, version) if version > after else None
        return None

    async def play(self, channel_name: str) -> str:
        fd, ana = self.fd, people_of(self.world)[0]
        channel = fd.add_channel(self.world.guild, channel_name)
        lobby = await posted(await fd.slash(ana, channel, "garbage new", seats=2, turn_time=0))
        join = re.match(r"table.join:(\d+)", lobby.buttons()[0]["custom_id"])
        assert join, lobby.buttons()
        self.table_id = int(join.group(1))
        await updated(await fd.click(ana, lobby, f"table.cpu:{self.table_id}"))
        await updated(await fd.click(ana, lobby, f"table.start:{self.table_id}"))
        self.thread = (await fd.wait_for(lambda: fd.threads(channel), timeout=15))[-1]
        last = -1
        for _ in range(2000):
            found = await fd.wait_for(
                lambda: "over" if table_row(self.bot.database, self.table_id)[0] == "finished"
                else self.table_message(last), timeout=20)
            if found == "over":
                break
            message, last = found
            jacks = [b["custom_id"] for b in message.buttons() if b["custom_id"].startswith("garbage.jack:")]
            r = await fd.click(ana, message, jacks[-1] if jacks else f"garbage.draw:{self.table_id}:{last}")
            assert r.ack_type == 6, r
            if jacks:
                self.jacks += 1
                if self.kill_after_jack and self.bot.kills == 0:
                    await self.bot.restart()  # the hand goes on: its moves so far are told again
        else:
            raise AssertionError("the game did not end")
        await fd.wait_for(lambda: "Game over!" in "\n".join(m.content for m in fd.messages(self.thread)),
                          timeout=15)
        return "\n".join(record_of(self))


async def test_a_garbage_jack_turn_reads_the_same_after_a_kill(world, bots, tmp_path):
    """Seed 3: ana's first draw ends in a Jack to place, and the bot is SIGKILLed right
    after she places it.  The restarted bot tells the hand going on again in one batch;
    the thread's record reads line by line as an uninterrupted run's: the Jack turn a line
    per move (the draw up to the Jack; the Jack placed, on to the discard), not one line."""
    fd = world.fd
    records = []
    for name, kill in (("a", False), ("b", True)):
        bot = bots(fd, world.guild, tmp_path / f"{name}.db", tmp_path / f"{name}.log", seed=3)
        await bot.start()
        run = GarbageRun(world, bot, kill_after_jack=kill)
        records.append((await run.play(f"garbage-{name}")).splitlines())
        await bot.stop()
        assert run.jacks >= 1 and bot.kills == kill
    a, b = records
    assert b == a, "\n".join(difflib.unified_diff(a, b, "a", "b", lineterm=""))
    # ana's Jack turn: the draw up to the Jack, then the Jack placed, each a line of its own
    turn = next(i for i, line in enumerate(a) if line.startswith("**ana**: drew"))
    assert a[turn].endswith("where does the Jack go?") and a[turn + 1].startswith("**ana**: the Jack went to slot"), \
        a[turn:turn + 2]
    fd.assert_clean()


async def test_lobby_survives_kills(world, bots, tmp_path):
    """A lobby outlives a SIGKILL: its old buttons still seat people, and the game starts."""
    fd = world.fd
    ana, ben = people_of(world)
    bot = bots(fd, world.guild, tmp_path / "lobby.db", tmp_path / "lobby.log")
    await bot.start()
    run = Run(world, bot, [ana, ben])
    run.channel = fd.add_channel(world.guild, "lobby")
    r = await fd.slash(ana, run.channel, "nimmt new", seats=3, rounds=1, turn_time=0)
    assert r.ack_type == 4
    run.lobby = r.message
    run.table_id = int(re.match(r"table.join:(\d+)", run.lobby.buttons()[0]["custom_id"]).group(1))
    await bot.restart()
    r = await fd.click(ben, run.lobby, f"table.join:{run.table_id}")
    await updated(r)
    assert "Seats taken: 2/3" in r.message.text(), r
    await bot.restart()
    r = await fd.click(ben, run.lobby, f"table.join:{run.table_id}")
    assert r.ack_type == 4 and r.ephemeral, r  # already seated: the join was kept
    r = await fd.click(ana, run.lobby, f"table.cpu:{run.table_id}")
    await updated(r)
    assert "Seats taken: 3/3" in r.message.text(), r
    await run.start()
    status, meta, _ = run.state()
    assert status == "playing"
    assert [s["user_id"] for s in meta["seats"]] == [ana.id, ben.id, None]
    user = await run.mover()
    await run.step(user)  # the mover's hand opens
    await bot.stop()
    state = final_state(bot.database, run.table_id)
    assert state["integrity"] == ["ok"] and state["fk"] == []
    fd.assert_clean()


async def test_kill_between_start_and_thread(world, bots, tmp_path):
    """Start was acknowledged, then the bot died before it opened the thread:
    after the restart the game is shown (thread, table message, ping) and playable."""
    fd = world.fd
    ana, ben = people_of(world)
    bot = bots(fd, world.guild, tmp_path / "start.db", tmp_path / "start.log")
    await bot.start()
    run = Run(world, bot, [ana, ben])
    await run.open("early")
    # Discord fails the thread creation once: discord.py waits a second before retrying.
    fd.fail_next("POST", r"/channels/\d+/messages/\d+/threads$", status=500)
    r = await fd.click(ana, run.lobby, f"table.start:{run.table_id}")
    await updated(r)
    await bot.kill()
    assert not fd.threads(run.channel), "the thread was opened before the kill"
    await bot.start()
    await run.wait_thread()
    mover = await run.mover()
    await fd.wait_for(lambda: any(mover.id in m.mentions for m in fd.messages(run.thread)), timeout=10)
    await run.play()
    await run.finish_shown()
    await bot.stop()
    state = final_state(bot.database, run.table_id)
    assert state["integrity"] == ["ok"] and len(state["games"]) == 1
    fd.assert_clean()


class _Killed(BaseException):
    """Stands for SIGKILL inside one process: no ``except Exception`` catches it."""


async def test_kill_between_last_move_and_record(tmp_path):
    """The last move is saved, the process dies before the result is recorded:
    the next start records the game (once) and closes the table.  (In one
    process: a SIGKILL cannot be aimed between two transactions.)"""
    import random

    from app.store import open_store
    from app.tables.manager import TableManager
    from core.games.nimmt import engine as nimmt

    games, computers = {"nimmt": nimmt.Nimmt}, {"nimmt": nimmt.greedy_player}
    path = str(tmp_path / "end.db")
    store = await open_store(path, checkpoint_interval=None)
    m = TableManager(store, games, computers, computer_delay=0.0, seed=SEED)
    table = await m.create(guild_id=1, channel_id=10, game="nimmt", host_id=1, host_name="Ana", seats=2,
                           rounds=1, turn_time=0)
    await m.join(table, 2, "Ben")
    await m.start(table, 1)

    async def killed(record: Any) -> None:
        raise _Killed()

    setattr(store, "record_game", killed)  # the store dies while recording
    with pytest.raises(_Killed):
        while True:
            seat = table.engine.to_move
            action = nimmt.greedy_player(table.engine, seat, random.Random(table.version))
            await m.act(table, table.seats[seat].user_id, action)
    log = list(table.log)
    assert table.engine.over
    m._closing = True
    await store.close()

    for start in range(2):  # the first start finishes the job, the second finds nothing to do
        store = await open_store(path, checkpoint_interval=None)
        try:
            again = TableManager(store, games, computers, computer_delay=0.0)
            restored = await again.restore()
            assert [t.id for t in restored if t.status == "playing"] == []
            if start == 0:  # the ending comes back to be announced; once shown, the table closes
                [ended] = restored
                assert ended.status == "finished" and ended.ending[-1]["type"] == "game_over"
                await again.ended(ended)
            else:
                assert restored == []
            record = await store.table(table.id)
            assert record.status == "finished" and [tuple(a) for a in record.actions] == log
            history = await store.history(1)
            assert len(history) == 1 and history[0]["game"] == "nimmt"
            assert await store.integrity_check() == ["ok"]
            await again.shutdown()
        finally:
            await store.close()


async def test_kill_between_lobby_saved_and_posted(world, bots, tmp_path):
    """``/nimmt new`` saved the lobby, then the bot died before its message was
    posted (unacknowledged): the player runs the command again and gets the lobby,
    not "a table is already open here" with nothing to click."""
    fd = world.fd
    ana, ben = people_of(world)
    bot = bots(fd, world.guild, tmp_path / "new.db", tmp_path / "new.log")
    await bot.start()
    channel = fd.add_channel(world.guild, "orphan")
    # Discord fails the answer once: discord.py waits a second before trying again.
    fd.fail_next("POST", r"/interactions/\d+/[^/]+/callback", status=500)
    task = asyncio.create_task(fd.slash(ana, channel, "nimmt new", seats=2, rounds=1, turn_time=0))

    def saved() -> bool:
        con = connect(bot.database)
        try:
            return con.execute("SELECT count(*) FROM tables WHERE channel_id = ?", (channel.id,)).fetchone()[0] > 0
        finally:
            con.close()

    await fd.wait_for(lambda: task.done() or saved(), timeout=10, interval=0.005)
    await bot.kill()
    with pytest.raises(NoAcknowledgement):
        await task
    fd.take_violations(r"not acknowledged within")
    await bot.start()
    r = await fd.slash(ana, channel, "nimmt new", seats=2, rounds=1, turn_time=0)
    run = Run(world, bot, [ana, ben], channel=channel, lobby=await posted(r))
    assert not r.ephemeral, r.message.text()
    run.table_id = int(re.match(r"table.join:(\d+)", run.lobby.buttons()[0]["custom_id"]).group(1))
    r = await fd.click(ben, run.lobby, f"table.join:{run.table_id}")
    await updated(r)
    assert "Seats taken: 2/2" in r.message.text(), r
    await run.start()
    await bot.stop()
    state = final_state(bot.database, run.table_id)
    assert state["integrity"] == ["ok"] and state["status"] == "playing"
    fd.assert_clean()



def action_of(custom_id: str, values: list[str]) -> Any:
    """The engine action a panel control stands for (None: not an action)."""
    from core.games.nimmt.engine import Open, Pass, Play, Steal, Take

    control = re.fullmatch(r"nimmt\.([a-z]+):\d+(?::\d+)?(?::(\d+))?", custom_id)
    assert control, custom_id
    op, arg = control.groups()
    return {"cards": lambda: Play(int(arg), tuple(int(v) for v in values)), "take": lambda: Take(int(arg)),
            "pass": lambda: Pass(), "steal": lambda: Steal(int(values[0])),
            "open": lambda: Open(int(values[0]))}.get(op, lambda: None)()


async def test_kill_after_the_last_move_was_acknowledged(world, bots, tmp_path):
    fd = world.fd
    seen: list[bool] = []

    async def last_move(run: Run, event: str, payload: Any) -> Any:
        if event != "click":
            return None
        user, panel, (kind, custom_id, values) = payload
        moved = run.after(custom_id, values)
        if moved is None or not moved[1].over:
            return None
        # The last move: its narration fails once (discord.py waits a second), the bot dies meanwhile.
        fd.fail_next("POST", rf"/channels/{run.thread.id}/messages$", status=500)
        r = await run.interact(user, panel, kind, custom_id, values)
        shown = await panel_answer(r)
        assert "The game is over" in shown.text(), shown.text()
        await run.bot.kill()
        seen.append(True)
        await run.bot.start()
        return shown

    run = await played(world, bots, tmp_path, "last", last_move, seed=2)  # a person moves last
    bot = run.bot
    assert seen == [True]
    state = final_state(bot.database, run.table_id)
    assert state["integrity"] == ["ok"] and len(state["games"]) == 1
    try:
        await fd.wait_for(lambda: "The game is over" in run.lobby.text(), timeout=5)  # the gap
    finally:
        await bot.stop()
