"""The private panel follows its player down the thread: when the live table pings a
person whose panel is open through an interaction token that still lives, the bot
sends them the panel afresh right below the ping (an ephemeral followup only they
see) and deletes the one above, so the common turn is one click after the ping.
Played as people do: they click what they see at the bottom of the thread.

The figures (clicks per turn, messages between a ping and the controls) print with
``pytest -s tests/e2e/test_follow.py``."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import pytest

from app.i18n.catalogue import t as translate
from core.protocol import to_act
from tests.e2e import (button, check_newest, check_pings, check_record, followed_panel, nimmt_choice, nimmt_turn,
                       panel_answer, private_answer, running_bot, started)
from tests.e2e.processes import table_row

pytestmark = pytest.mark.timeout(600)

#: a panel's controls that make (part of) a move
MOVES = {"nimmt": r"nimmt\.(play|take|cards|stack|pass|steal|open):.*", "take6": r"take6\.(card|row):.*"}
#: the entry to the panel on the live table
HAND = {"nimmt": r"nimmt\.hand:\d+", "take6": r"take6\.hand:\d+"}


def moves(message: Any, game: str) -> list[str]:
    """The custom_ids of the move controls a message shows (enabled ones)."""
    ids = [b["custom_id"] for b in message.buttons() if not b.get("disabled")]
    ids += [s["custom_id"] for s in message.selects() if not s.get("disabled")]
    return [i for i in ids if re.fullmatch(MOVES[game], i or "")]


def decide(panel: Any, game: str) -> tuple[str, str, list[str]] | None:
    """What a person clicks on their panel, the fewest clicks first: a one-click move
    (a card, a quick play or take, a row), else the menus (None: nothing to do)."""
    if game == "take6":
        for pattern in (r"take6\.card:.*", r"take6\.row:.*"):
            found = button(panel, pattern)
            if found:
                return "click", found["custom_id"], []
        return None
    return nimmt_choice(panel, ("steal", "open", "play", "cards", "end", "fit", "take", "stack"))


@dataclass
class Turn:
    """One turn of one person: what they clicked, and how far below the ping the controls
    of their move were."""

    user: str
    clicks: int
    between: int  # messages they saw between the ping and the controls
    followed: bool  # their panel came down below the ping (else: My hand on the ping)
    turn: Any = None  # which (as ``Players.turn_of`` names it)
    controls: list[str] = field(default_factory=list)  # the custom_ids of the move's controls, in order


@dataclass
class Players:
    """People who act when pinged, on what they see at the bottom of the thread: the panel
    below the ping, else the ping's *My hand*.  ``turn_of(user)`` names the turn a person
    has to play now (None: none), so that a click whose answer shows their next turn
    already does not run on into it (that turn's ping brings the panel down)."""

    fd: Any
    thread: Any
    game: str
    people: list[Any]
    turn_of: Callable[[Any], Any]
    #: called before a person's first move of a turn, on their panel (e.g. a kill or 15 minutes passing)
    before_move: Callable[["Players", Any, Any], Awaitable[None]] | None = None
    turns: list[Turn] = field(default_factory=list)
    #: whose panel is open through a token the bot knows: theirs comes below each ping
    opened: set[int] = field(default_factory=set)
    seen: dict[int, int] = field(default_factory=dict)  # pings handled per person

    def pings(self, user: Any) -> list[Any]:
        return [m for m, u in self.fd.pings(self.thread) if u == user.id]

    def panels_below(self, user: Any, ping: Any) -> list[Any]:
        """The person's panels with a move on them, below the ping, as they see the thread."""
        return [m for m in self.fd.visible_messages(user, self.thread)
                if m.id > ping.id and m.ephemeral_to == user.id and moves(m, self.game)]

    def live_panels(self, user: Any) -> list[Any]:
        """The person's panels in the thread that still show a move."""
        return [m for m in self.fd.ephemerals(user, self.thread) if moves(m, self.game)]


    async def turn(self, user: Any, ping: Any) -> None:
        """The person plays: on the panel that came below ``ping``, else through its My hand."""
        fd = self.fd
        clicks = 0
        followed = user.id in self.opened
        check_newest(fd, self.thread)
        if followed:
            panel = (await fd.wait_for(lambda: self.panels_below(user, ping), timeout=10,
                                       what=f"{user.name}'s panel below the ping"))[-1]
            seen = [m.id for m in fd.visible_messages(user, self.thread)]
            between = seen.index(panel.id) - seen.index(ping.id) - 1
        else:
            # the live table that pinged (it stays the live table while the turn is theirs) carries My hand
            live = fd.message(ping.id)
            hand = button(live, HAND[self.game])
            assert hand is not None and not live.deleted, live.text()
            check_newest(fd, self.thread)
            r = await fd.click(user, live, hand["custom_id"])
            clicks += 1
            panel = await private_answer(r)
            between = 0
        assert panel.ephemeral_to == user.id
        # one live panel: a panel that came below the ping replaces the one above (deleted right after)
        await fd.wait_for(lambda: self.live_panels(user) == [panel], timeout=10, what=f"{user.name}: one live panel")
        if self.before_move is not None:
            await self.before_move(self, user, panel)
        turn = self.turn_of(user)
        controls: list[str] = []
        for _ in range(12):
            choice = decide(panel, self.game) if turn is not None and self.turn_of(user) == turn else None
            if choice is None:
                break
            kind, custom_id, values = choice
            controls.append(custom_id)
            check_newest(fd, self.thread)  # nothing came below the live table since the ping
            if kind == "click":
                r = await fd.click(user, panel, custom_id)
            else:
                r = await fd.select(user, panel, custom_id, values)
            clicks += 1
            panel = await panel_answer(r)
        self.opened.add(user.id)  # (the panel clicked last: a token of now)
        self.turns.append(Turn(user.name, clicks, between, followed, turn, controls))

    async def play(self, finished: Callable[[], bool]) -> None:
        """Everyone plays each turn of theirs until the game is over."""
        for _ in range(3000):
            if finished():
                return
            todo = []
            for user in self.people:
                pings = self.pings(user)
                if len(pings) > self.seen.get(user.id, 0):
                    self.seen[user.id] = len(pings)
                    todo.append((user, pings[-1]))
            if not todo:
                await self.fd.wait_for(lambda: finished() or any(
                    len(self.pings(u)) > self.seen.get(u.id, 0) for u in self.people), timeout=30)
                continue
            for user, ping in todo:
                await self.turn(user, ping)
        raise AssertionError("the game did not end")

    def figures(self, turns: list[Turn] | None = None) -> str:
        turns = self.turns if turns is None else turns
        followed = [turn for turn in turns if turn.followed]
        fallback = [turn for turn in turns if not turn.followed]

        def mean(some: list[Turn]) -> str:
            return f"{sum(turn.clicks for turn in some) / len(some):.2f}" if some else "-"

        ones = sum(turn.clicks == 1 for turn in followed)
        return (f"{len(turns)} turns after a ping: {len(followed)} with the panel below the ping "
                f"({mean(followed)} clicks each, {ones} in one click), {len(fallback)} through My hand ({mean(fallback)} clicks each), "
                f"{mean(turns)} clicks per turn in all; messages between ping and controls: "
                f"max {max((turn.between for turn in turns), default=0)}")



def turn_of(table: Any, game: str) -> Callable[[Any], Any]:
    """The turn a person (a seat of the bot's table) has to play now: 11 nimmt!: the round
    and the seat to move (nobody moves twice in a row in a round); 6 nimmt!: the deal,
    the turn and the phase (a card, then perhaps a row)."""
    def now(user: Any) -> Any:
        engine = table.engine
        seat = table.seat_of(user.id)
        if table.status != "playing" or engine is None or seat not in to_act(engine):
            return None
        view = engine.view(None)
        return (view["round"], seat) if game == "nimmt" else (view["deal"], view["turn"], view["phase"])
    return now


@pytest.mark.parametrize("game,command,options", [
    ("nimmt", "nimmt new", dict(rounds=2)),
    ("take6", "take6 new", dict(deals=2)),
], ids=["nimmt", "take6"])
async def test_the_panel_follows_its_player(fast_world, tmp_path, game, command, options):
    """Over a whole game, every person who opened their panel once finds it right below
    each ping (0 messages between), afresh, with one live panel at a time; the common
    turn is one click; the pings, the record and the end are as without it."""
    world = fast_world
    fd = world.fd
    people = [world.person(name) for name in ("ana", "ben", "cleo")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        t, table = await started(world, bot, people, command, computers=1, turn_time=0, **options)
        players = Players(fd, t.thread, game, people, turn_of(table, game))
        finished = translate("en", "table.finished")
        await players.play(lambda: finished in fd.message(t.lobby.id).text())
        print(f"{game}: {players.figures()}")
        followed = [turn for turn in players.turns if turn.followed]
        first = [turn for turn in players.turns if not turn.followed]
        # Each person opened their panel once (My hand on the ping, then the move)...
        assert sorted(turn.user for turn in first) == ["ana", "ben", "cleo"], first
        assert all(turn.clicks >= 2 for turn in first)
        # ... and from then on it came below every ping of theirs: 0 messages between.
        assert followed, players.turns
        assert all(turn.between == 0 for turn in players.turns), players.turns
        # The common turn is one click (a bull-card turn or a stack menu may take more).
        assert sum(turn.clicks == 1 for turn in followed) >= 0.75 * len(followed), players.turns
        if game == "nimmt":
            # When nothing fits, the panel below the ping offers each stack's Take: one click
            # (a second only to choose whose bull card, when the supply is empty).
            takes = [turn for turn in followed if turn.controls and turn.controls[0].startswith("nimmt.take:")]
            assert takes, players.turns
            assert all(len(turn.controls) == 1 or turn.controls[1].startswith("nimmt.steal:") for turn in takes), takes
        # No hand reached anyone but its owner; no panel shows a move once it is over.
        for user in people:
            assert all(m.ephemeral_to == user.id for m in fd.ephemerals(user))
            await fd.wait_for(lambda: not players.live_panels(user), timeout=10)
        if game == "nimmt":
            check_pings(fd, t, table, bot.tables.engine_options(table), "nimmt")
        check_record(t, bot, table)


async def test_an_expired_token_falls_back_to_my_hand(fast_world, tmp_path):
    """Once a panel's token is older than Discord allows (15 minutes: the stand-in
    answers 401/50027 as Discord does), its panel cannot come down: that person's
    next ping is answered through My hand, the game goes on, and the panel they open
    then follows them again."""
    world = fast_world
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    aged: list[int] = []

    async def fifteen_minutes_pass(players: Players, user: Any, panel: Any) -> None:
        # before ana's 3rd move: every token issued so far is too old (ben's; her move's
        # click makes her a fresh one)
        if not aged and user is ana and sum(turn.user == "ana" for turn in players.turns) == 2:
            fd.age_tokens(15 * 60)
            players.opened.discard(ben.id)
            aged.append(len(players.turns))

    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        t, table = await started(world, bot, [ana, ben], "nimmt new", rounds=1, turn_time=0)
        players = Players(fd, t.thread, "nimmt", [ana, ben], turn_of(table, "nimmt"),
                          before_move=fifteen_minutes_pass)
        finished = translate("en", "table.finished")
        await players.play(lambda: finished in fd.message(t.lobby.id).text())
        print(f"nimmt, tokens expired once: {players.figures()}")
        assert aged
        after = players.turns[aged[0] + 1:]
        bens = [turn for turn in after if turn.user == "ben"]
        assert len(bens) >= 2 and not bens[0].followed and bens[0].clicks >= 2  # My hand: his token had expired
        assert all(turn.followed for turn in bens[1:])  # then it follows again
        assert all(turn.followed for turn in after if turn.user == "ana")
        assert all(turn.between == 0 for turn in players.turns)
        check_pings(fd, t, table, bot.tables.engine_options(table), "nimmt")


async def test_a_restart_falls_back_then_follows_again(fast_world, bots, tmp_path):
    """SIGKILL mid-turn: the restarted bot knows no token.  The person whose turn it was
    moves on the panel they had (answered in place: a fresh token); the other's next ping
    is answered through My hand; nothing is sent twice; then panels follow again."""
    world = fast_world
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    bot = bots(fd, world.guild, tmp_path / "bot.db", tmp_path / "bot.log")
    await bot.start()
    r = await fd.slash(ana, world.channel, "nimmt new", seats=2, rounds=1, turn_time=0)
    lobby = r.message
    table_id = int(re.match(r"table.join:(\d+)", lobby.buttons()[0]["custom_id"]).group(1))
    assert (await fd.click(ben, lobby, f"table.join:{table_id}")).ack_type == 7
    assert (await fd.click(ana, lobby, f"table.start:{table_id}")).ack_type == 7
    thread = await fd.wait_for(lambda: next((th for th in fd.threads(world.channel) if th.id == lobby.id), None),
                               timeout=15)
    killed: list[int] = []
    before: dict[str, Any] = {}

    async def kill(players: Players, user: Any, panel: Any) -> None:
        if not killed and sum(turn.followed for turn in players.turns) >= 3:
            before["pings"] = len(fd.pings(thread))
            before["messages"] = {m.id for m in fd.messages(thread, include_deleted=True)}
            await bot.restart()
            killed.append(len(players.turns))
            players.opened = {user.id}  # (their click on the panel they have makes a fresh token)

    def turn(user: Any) -> Any:  # (two people, one round: they take turns)
        status, meta, _ = table_row(bot.database, table_id)
        seat = meta.get("turn_seat")
        mine = status == "playing" and seat is not None and meta["seats"][seat]["user_id"] == user.id
        return seat if mine else None

    players = Players(fd, thread, "nimmt", [ana, ben], turn, before_move=kill)
    finished = translate("en", "table.finished")
    await players.play(lambda: finished in fd.message(lobby.id).text())
    print(f"nimmt across a kill: {players.figures()}; after it: {players.figures(players.turns[killed[0] + 1:])}")
    assert killed
    mover = players.turns[killed[0]].user  # who moved across the kill
    after = players.turns[killed[0] + 1:]
    firsts: dict[str, Turn] = {}
    for played in after:
        firsts.setdefault(played.user, played)
    other = next(name for name in ("ana", "ben") if name != mover)
    assert firsts[mover].followed and not firsts[other].followed and firsts[other].clicks >= 2, after
    assert all(played.followed for played in after if played is not firsts[other]), after
    assert all(played.between == 0 for played in players.turns)
    # nothing doubled: each ping once, none of the messages from before the kill pinged again
    pings = fd.pings(thread)
    assert len({m.id for m, _ in pings}) == len(pings)
    assert not [m for m, _ in pings[before["pings"]:] if m.id in before["messages"]]
    await bot.stop()


async def a_duel(world: Any, bot: Any) -> tuple[Any, Any, Callable[[Any], Any], Any, Any]:
    """ana and ben's one-round 11 nimmt! game without a turn timer, started: the table as
    they see it, the bot's table, the turn a person has to play now (:func:`turn_of`),
    the person to move and the one waiting."""
    people = [world.person("ana"), world.person("ben")]
    t, table = await started(world, bot, people, rounds=1, turn_time=0)
    return t, table, turn_of(table, "nimmt"), people[table.engine.to_move], people[1 - table.engine.to_move]


async def play_on(t: Any, user: Any, panel: Any, now: Callable[[Any], Any], turn: Any) -> tuple[Any, int]:
    """``user`` plays their ``turn`` on ``panel`` as a person does (:func:`decide`: the fewest
    clicks first) until it is played: the panel as the last click left it, and the clicks."""
    clicks = 0
    for _ in range(4):
        choice = decide(panel, "nimmt") if now(user) == turn else None
        if choice is None:
            break
        kind, custom_id, values = choice
        r = await (t.click(user, panel, custom_id) if kind == "click" else t.choose(user, panel, custom_id, values))
        clicks += 1
        panel = await panel_answer(r)
    return panel, clicks


@pytest.mark.parametrize("status, landed", [(502, True), (0, True), (502, False)], ids=["502-landed", "dropped-landed",
                                                                                         "502-not-landed"])
async def test_a_panel_whose_followup_answer_failed_is_never_doubled(world, tmp_path, status, landed):
    """The panel coming down below the ping fails uncertainly: Discord posts it and only its
    answer fails (a 502 of its edge, or the connection dropped on the way back; ``landed``),
    or the 502 comes before.  It is sent once (discord.py would send it again after the
    502: two panels), the one above goes all the same, and the player has one panel at
    most: the one that landed, on which they play their turn (one or two clicks), else the
    ping's My hand opens one.  The panel played on follows them again at their next turn."""
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        t, table, now, mover, waiter = await a_duel(world, bot)
        r = await t.click(waiter, t.table_message(), f"nimmt.hand:{t.table_id}")
        above = await private_answer(r)
        token = r.interaction.token
        since = len(fd.requests)
        fd.fail_next("POST", rf"/webhooks/\d+/{token}$", status=status, after=landed)
        await nimmt_turn(t, mover)
        ping = await fd.wait_for(lambda: (m := t.table_message()) is not None and waiter.id in m.pinged and m,
                                 timeout=10)
        turn = now(waiter)
        assert turn is not None

        def panels() -> list[Any]:
            return [m for m in fd.ephemerals(waiter, t.thread) if any(
                re.fullmatch(rf"nimmt\.\w+:{t.table_id}(:.*)?", b.get("custom_id") or "")
                for b in [*m.buttons(), *m.selects()])]

        await fd.wait_for(lambda: fd.message(above.id).deleted, timeout=10, what="the panel above the ping deleted")
        sent = [q for q in fd.requests[since:] if q.method == "POST" and q.path.endswith(token)]
        assert [q.status for q in sent] == [status], sent  # sent once, never again
        clicks = 0
        if landed:
            assert len(panels()) == 1 and panels()[0].id > ping.id, panels()
            panel = panels()[0]
        else:
            assert panels() == []
            r = await t.click(waiter, fd.message(ping.id), f"nimmt.hand:{t.table_id}")
            clicks += 1
            panel = await private_answer(r)
            assert panels() == [panel]
        panel, more = await play_on(t, waiter, panel, now, turn)
        clicks += more
        assert now(waiter) != turn, panel.text()  # played
        assert clicks <= 2, clicks  # (this deal: one click on the panel that landed; My hand and one)
        assert panels() == [panel]
        if table.status == "playing":  # the panel played on follows them to their next turn
            await nimmt_turn(t, mover)
            below = await followed_panel(t, waiter)
            await fd.wait_for(lambda: panels() == [below], timeout=10, what="one panel: the one below the new ping")
    fd.assert_clean()


@pytest.mark.parametrize("status, landed", [(502, True), (0, True), (502, False)], ids=["502-landed", "dropped-landed",
                                                                                         "502-not-landed"])
async def test_my_hand_whose_followup_answer_failed_shows_one_panel(world, tmp_path, status, landed):
    """*My hand* is acknowledged as an update of the live table and the panel follows as an
    ephemeral followup, whose answer fails: Discord posted it (a 502 of its edge, or the
    connection dropped on the way back; ``landed``), or the 502 came before.  It is sent
    once (discord.py would send it again after the 502: two panels): the player sees the
    one that landed, and nothing else, and plays on it; else nothing, and My hand again
    opens one.  The panel played on follows them to their next turn."""
    fd = world.fd
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3) as bot:
        t, table, now, mover, waiter = await a_duel(world, bot)
        turn = now(mover)
        since = len(fd.requests)
        fd.fail_next("POST", r"/webhooks/\d+/[^/]+$", status=status, after=landed)
        r = await t.click(mover, t.table_message(), f"nimmt.hand:{t.table_id}")
        assert r.ack_type == 6, r
        hand = r
        clicks = 1
        if landed:
            panel = await private_answer(r)
        else:
            # nothing comes; My hand again (answered once the first click is done with)
            r = await t.click(mover, t.table_message(), f"nimmt.hand:{t.table_id}")
            clicks += 1
            panel = await private_answer(r)
        panel, more = await play_on(t, mover, panel, now, turn)
        clicks += more
        assert now(mover) != turn, panel.text()  # played
        assert clicks <= 3, clicks  # (this deal: My hand, one click on the panel; My hand once more)
        # one private message: the panel played on (no second copy, no error)
        assert fd.ephemerals(mover, t.thread) == [panel], [m.text() for m in fd.ephemerals(mover, t.thread)]
        # sent once, never again (the click's token may post the live table too: a public followup)
        sent = [q for q in fd.requests[since:] if q.method == "POST" and q.path.endswith(hand.interaction.token)]
        assert [q.status for q in sent if q.status != 200] == [status], sent
        assert [m for m in hand.followups if m.ephemeral_to is not None] == ([panel] if landed else [])
        if table.status == "playing":
            await nimmt_turn(t, waiter)
            below = await followed_panel(t, mover)
            await fd.wait_for(lambda: fd.ephemerals(mover, t.thread) == [below], timeout=10,
                              what="one panel: the one below the new ping")
    fd.assert_clean()
