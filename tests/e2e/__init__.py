"""End-to-end tests and their harness: the real bot, the real discord.py client, a
local stand-in for Discord (``tests.fakediscord``), and players who only type slash
commands and click what they see.  The helpers live here (``from tests.e2e import
running_bot, open_table, ...``); the tests are this package's ``test_*.py``.
"""
from __future__ import annotations

import asyncio
import contextlib
import difflib
import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from app.config import Config
from app.i18n.catalogue import t as translate
from bot import CardBot
from cogs.tables.game_ui import Part
from tests import table_seeds


class LogWatch(logging.Handler):
    """The records logged while it is installed (``with LogWatch() as logs:``), at
    WARNING and above unless told otherwise: what an operator would see."""

    def __init__(self, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> "LogWatch":
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        logging.getLogger().removeHandler(self)

    def tracebacks(self) -> list[logging.LogRecord]:
        """ERROR records that carry a traceback (an exception, or one quoted in the message)."""
        return [r for r in self.records if r.levelno >= logging.ERROR
                and (r.exc_info is not None or "Traceback" in r.getMessage())]


class HeldClock:
    """A clock for the bot that a test can hold still, for a timer of the bot that reads
    its clock when due (a game night's next round): held, it shows the moment it was
    held at; let go, it runs on from there (the time it was held does not count).  What
    the bot shows meanwhile stays up however slow the machine is."""

    def __init__(self) -> None:
        self._held_at: float | None = None
        self._lost = 0.0

    def __call__(self) -> float:
        return (time.time() if self._held_at is None else self._held_at) - self._lost

    def hold(self) -> None:
        if self._held_at is None:
            self._held_at = time.time()

    def let_go(self) -> None:
        if self._held_at is not None:
            self._lost += time.time() - self._held_at
            self._held_at = None


@contextlib.asynccontextmanager
async def running_bot(fd: Any, database: Path, guild: Any, *, loaded: bool = True,
                      **overrides: Any) -> AsyncIterator[CardBot]:
    """Start the bot in this event loop against the stand-in; stop it after.
    ``loaded``: yield once every saved table is restored (the bot restores them
    while it connects), for tests that look at ``bot.tables``.  Each table's deal comes from
    the test's node id (``tests.table_seeds``) unless the test fixes one (``table_seed``)."""
    settings = dict(token=fd.token, dev_guild=guild.id, database=database, computer_delay=0.02,
                    time_scale=1.0, table_seed=None, table_seeds=table_seeds(), log_level="WARNING")
    settings.update(overrides)
    config = Config(**settings)
    with fd.patched():
        bot = CardBot(config)
        task = asyncio.create_task(bot.start(fd.token))
        try:
            ready = asyncio.ensure_future(_ready(fd))
            await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():  # the bot stopped before it was ready: show why
                ready.cancel()
                task.result()
                raise AssertionError("the bot stopped before it was ready")
            ready.result()
            if loaded:
                await asyncio.wait_for(bot.tables.loaded(), 15)
            yield bot
        finally:
            await bot.close()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _ready(fd: Any) -> None:
    await fd.wait_ready(timeout=15)
    await fd.wait_commands(timeout=15)


def button(message: Any, pattern: str) -> dict[str, Any] | None:
    """The first enabled button whose custom_id matches ``pattern``."""
    for b in message.buttons():
        if b.get("custom_id") and re.fullmatch(pattern, b["custom_id"]) and not b.get("disabled"):
            return b
    return None


def select(message: Any, pattern: str) -> dict[str, Any] | None:
    for s in message.selects():
        if s.get("custom_id") and re.fullmatch(pattern, s["custom_id"]):
            return s
    return None


async def private_answer(result: Any) -> Any:
    """The private message a click answered with: its own ephemeral reply (4) or update (7),
    or, after a deferred update of the public message it was on (6: *My hand*, *Rules*
    on the table message), the ephemeral followup that came after."""
    if result.ack_type == 5:
        await result.settled()
    if result.ack_type in (4, 5, 7):
        return result.message
    assert result.ack_type == 6, result
    # (the table message may be redrawn through the click's token before the followup comes, and a
    # turn's new live table may be posted through it, publicly: the private answer is the ephemeral one)
    private = await result.interaction.fd.wait_for(
        lambda: [m for m in result.followups if m.ephemeral_to is not None], timeout=10)
    return private[-1]


async def ephemeral_text(result: Any) -> str:
    """The text of the private answer an interaction got (its followup after a deferral)."""
    message = await private_answer(result)
    assert message.ephemeral
    return message.text()


def parts(components: Any) -> dict[int, str]:
    """The text displays of a Components V2 layout by ``id`` (the live table's
    :class:`~cogs.tables.game_ui.Part`)."""
    from tests.fakediscord.models import walk_components

    return {c["id"]: c["content"] for c in walk_components(components) if c.get("type") == 10 and "id" in c}


def description(message: Any) -> str:
    """The description of a message's first embed; of a live table, its summary."""
    if message.embeds:
        return message.embeds[0].get("description") or ""
    return parts(message.components).get(Part.SUMMARY, "")


def footer(message: Any) -> str:
    """The footer of a message's first embed ("" without one); of a live table, its small print."""
    if message.embeds:
        return (message.embeds[0].get("footer") or {}).get("text", "")
    small = parts(message.components).get(Part.FOOTER, "")
    return " · ".join(line.removeprefix("-# ") for line in small.splitlines())


def title(message: Any) -> str:
    """The title of a message's first embed; of a live table, its heading's first line."""
    if message.embeds:
        return message.embeds[0].get("title") or ""
    return parts(message.components).get(Part.HEADING, "").split("\n")[0].removeprefix("### ")


def fields(message: Any) -> dict[str, str]:
    """A message's embed fields, name to value; of a live table, its notes (the last moves,
    who watches), title to text."""
    if message.embeds:
        return {f["name"]: f["value"] for e in message.embeds for f in e.get("fields") or ()}
    notes = (text.split("\n", 1) for n, text in parts(message.components).items() if n >= Part.NOTES)
    return {head.strip("*"): rest for head, rest in notes}


def said(version: dict[str, Any]) -> str:
    """What a message (or one of its versions, as ``Message.history`` keeps them) says
    in its own words: its content, or a live table's whose-turn line (under its title)."""
    heading = parts(version["components"]).get(Part.HEADING)
    if heading is None:
        return version["content"] or ""
    return "\n".join([version["content"] or "", *heading.split("\n")[1:]]).strip("\n")


async def open_hand(t: "Table", user: Any, game: str = "nimmt") -> Any:
    """*My hand* on the table message: answered at once as an update of the table message
    (type 6), the panel follows as an ephemeral followup only ``user`` sees."""
    hand = f"{game}.hand:{t.table_id}"
    # (a round's repost: for a moment the newest table message may be the old one, its buttons
    # already gone, the new one not posted yet; a player clicks the one that shows My hand)
    clicked = await t.fd.wait_for(lambda: (m := t.table_message()) is not None and button(m, re.escape(hand)) and m,
                                  timeout=10)
    r = await t.click(user, clicked, hand)
    if r.ack_type == 4:
        # The click raced a new round's repost of the table message (on the old one, or on
        # the new one before the bot had recorded it): the panel comes as a plain reply.
        where = t.thread or t.channel
        posted = [m for m in t.fd.messages(where, include_deleted=True) if any(
            re.fullmatch(rf"\w+\.hand:{t.table_id}", b.get("custom_id") or "") for b in m.buttons())]
        assert len(posted) > 1 and clicked.id in (posted[-1].id, posted[-2].id), r
    else:
        assert r.ack_type == 6, r
    panel = await private_answer(r)
    assert panel.ephemeral_to == user.id, panel
    return panel


async def followed_panel(t: "Table", user: Any, game: str = "nimmt") -> Any:
    """The player's panel that came down right below the live table pinging them (a panel
    follows its player while its interaction token lives), once it is there."""
    refresh = rf"{game}\.refresh:{t.table_id}"

    def below() -> Any:
        live = t.table_message()
        if live is None or user.id not in live.pinged:
            return None
        panels = [m for m in t.fd.ephemerals(user, t.thread) if m.id > live.id and button(m, refresh)]
        return panels[-1] if panels else None

    return await t.fd.wait_for(below, timeout=10, what=f"{user.name}'s panel below the ping")


#: the live table's field with the moves of the round going on, in every language
LAST_MOVES = {translate(lang, "table.last_moves") for lang in ("en", "es", "de")}


@dataclass
class Table:
    """What the players see of one table, found through the stand-in."""

    fd: Any
    channel: Any
    lobby: Any
    table_id: int
    thread: Any = None
    acks: list[Any] = field(default_factory=list)
    #: called with the person right before each of their clicks (e.g. :func:`check_newest`)
    before_click: Callable[[Any], None] | None = None

    def record(self, result: Any) -> Any:
        self.acks.append(result)
        return result

    async def click(self, user: Any, message: Any, custom_id: str) -> Any:
        if self.before_click is not None:
            self.before_click(user)
        return self.record(await self.fd.click(user, message, custom_id))

    async def choose(self, user: Any, message: Any, custom_id: str, values: list[str]) -> Any:
        if self.before_click is not None:
            self.before_click(user)
        return self.record(await self.fd.select(user, message, custom_id, values))

    async def wait_thread(self) -> Any:
        """The game's thread, started from the lobby message (so it has its id):
        not the thread of an earlier table in the channel, which is the newest
        one until this table's is opened."""
        def started() -> Any:
            threads = self.fd.threads(self.channel)
            if self.lobby is None:
                return threads[-1] if threads else None
            return next((th for th in threads if th.id == self.lobby.id), None)

        self.thread = await self.fd.wait_for(started, timeout=10)
        return self.thread

    def table_message(self) -> Any | None:
        """The newest table message in the thread (the one with the game's image)."""
        where = self.thread or self.channel
        found = None
        for message in self.fd.messages(where):
            if any(a.get("filename") == "table.png" for a in message.attachments) or any(
                    re.fullmatch(rf"\w+\.hand:{self.table_id}", b.get("custom_id") or "") for b in message.buttons()):
                found = message
        return found

    def log_text(self) -> str:
        """What the thread tells: its messages' text (the rounds' records, the live table's
        whose-turn line) and the moves of the round going on, which the live table shows."""
        where = self.thread or self.channel
        told = [said(m.snapshot()) for m in self.fd.messages(where)]
        live = self.table_message()
        told += [text for name, text in (fields(live) if live is not None else {}).items() if name in LAST_MOVES]
        return "\n".join(text for text in told if text)

    def record_lines(self) -> list[str]:
        """The thread's record: the lines of every message but the live table's."""
        where = self.thread or self.channel
        live = self.table_message()
        return [line for m in self.fd.messages(where) if m.content and (live is None or m.id != live.id)
                for line in m.content.splitlines()]


async def open_table(fd: Any, host: Any, channel: Any, command: str, **options: Any) -> Table:
    result = await fd.slash(host, channel, command, **options)
    lobby = await posted(result)
    assert not result.ephemeral, result
    match = re.match(r"table.join:(\d+)", lobby.buttons()[0]["custom_id"])
    assert match, lobby.buttons()
    table = Table(fd, channel, lobby, int(match.group(1)))
    table.record(result)
    return table


async def seat_players(table: Table, host: Any, players: list[Any], computers: int = 0,
                       level: str = "normal") -> None:
    """People join; the host adds computer players (normal: the button; another
    level: the lobby's level menu)."""
    for user in players:
        r = await table.click(user, table.lobby, f"table.join:{table.table_id}")
        table.lobby = await updated(r)
    for _ in range(computers):
        if level == "normal":
            r = await table.click(host, table.lobby, f"table.cpu:{table.table_id}")
        else:
            r = await table.choose(host, table.lobby, f"table.level:{table.table_id}", [level])
        table.lobby = await updated(r)


async def start_table(fd: Any, channel: Any, host: Any, guests: list[Any], command: str = "nimmt new",
                      computers: int = 0, **options: Any) -> Table:
    """A started table: ``host`` opens it with ``command`` (one seat each for the host,
    ``guests`` and ``computers`` unless ``seats`` is given), the guests join, the host adds
    the computers and starts; back once the game's thread and table message are there."""
    options.setdefault("seats", 1 + len(guests) + computers)
    table = await open_table(fd, host, channel, command, **options)
    await seat_players(table, host, guests, computers)
    await updated(await table.click(host, table.lobby, f"table.start:{table.table_id}"))
    await table.wait_thread()
    await fd.wait_for(table.table_message, timeout=10)
    return table


async def started(world: Any, bot: Any, people: list[Any], command: str = "nimmt new", computers: int = 0,
                  **options: Any) -> tuple[Table, Any]:
    """:func:`start_table` in the world's channel, hosted by ``people[0]``, and the bot's live table."""
    table = await start_table(world.fd, world.channel, people[0], people[1:], command, computers, **options)
    return table, bot.tables.get(table.table_id)


async def posted(r: Any, timeout: float = 10) -> Any:
    """The message a command answered with: in the answer itself (type 4), or, when a
    save slower than the bot waits before acknowledging made it answer "thinking" first
    (type 5, a busy machine's database), that message once edited."""
    assert r.ack_type in (4, 5), r
    if r.ack_type == 5:
        await r.settled(timeout)
    assert r.message is not None, r
    return r.message


async def updated(r: Any, timeout: float = 10) -> Any:
    """The message a click was on, once the click's answer updated it: in the answer
    itself (type 7), or acknowledged first (type 6: a save slower than the bot waits
    before acknowledging, as on a busy machine; a picture still being drawn) and edited
    right after."""
    assert r.ack_type in (6, 7), r
    if r.ack_type == 6:
        await r.settled(timeout)
    assert r.message is not None, r
    return r.message


async def panel_answer(r: Any, timeout: float = 10) -> Any:
    """The 11 nimmt! panel after a click on it, as its player sees it: updated in the
    answer itself (type 7, its picture drawn already), or, for a move whose new picture
    is still being drawn, acknowledged at once (type 6) and edited right after; or, when
    the panel clicked had just been replaced by one that followed its player below a
    ping, answered anew (type 4) with the fresh panel, the click not played."""
    message = await posted(r, timeout) if r.ack_type in (4, 5) else await updated(r, timeout)
    assert message.ephemeral_to is not None, r
    return message


def nimmt_choice(panel: Any, order: tuple[str, ...], lang: str = "en") -> tuple[str, str, list[str]] | None:
    """What a scripted person does next on their 11 nimmt! panel: ``(kind, custom_id, values)``
    for the first control of ``order`` the panel offers (None: nothing to do).  The names:
    ``steal`` and ``open`` (the first offer), ``play`` (the quick play), ``cards`` (as many
    as it takes), ``end`` (End turn), ``take`` (Take stack), ``fit`` (the first stack one of
    the cards fits on), ``fit_no_take`` (that, when no Take is offered), ``stack`` (the first)."""
    no_fit = translate(lang, "nimmt.stack_no_fit")
    stacks = select(panel, r"nimmt\.stack:.*")
    fitting = [o for o in (stacks or {}).get("options", []) if o.get("description") != no_fit]
    take = button(panel, r"nimmt\.take:.*")
    for name in order:
        if name in ("steal", "open"):
            offer = select(panel, rf"nimmt\.{name}:.*")
            if offer:
                return "select", offer["custom_id"], [offer["options"][0]["value"]]
        elif name in ("play", "end", "take"):
            kind = "pass" if name == "end" else name
            found = button(panel, rf"nimmt\.{kind}:.*")
            if found:
                return "click", found["custom_id"], []
        elif name == "cards":
            cards = select(panel, r"nimmt\.cards:.*")
            if cards:
                return "select", cards["custom_id"], [o["value"] for o in cards["options"]][: cards["max_values"]]
        elif name in ("fit", "fit_no_take"):
            if stacks and fitting and not (name == "fit_no_take" and take):
                return "select", stacks["custom_id"], [fitting[0]["value"]]
        elif name == "stack":
            if stacks:
                return "select", stacks["custom_id"], [stacks["options"][0]["value"]]
        else:
            raise ValueError(f"no such control: {name}")
    return None


#: the order :func:`nimmt_turn` plays in: a fitting stack before End turn, unless Take is offered
TURN_ORDER = ("steal", "open", "cards", "fit_no_take", "end", "take", "stack")


async def nimmt_turn(t: Table, user: Any, panel: Any = None, lang: str = "en") -> None:
    """One whole 11 nimmt! turn as a player does it: open the hand (or refresh
    an open panel), pick a stack where a card fits, play; take a stack when
    nothing fits; end a bull-card turn when no other stack takes a card."""
    if panel is None:
        panel = await open_hand(t, user)
    else:
        panel = await panel_answer(await t.click(user, panel, f"nimmt.refresh:{t.table_id}"))
    assert panel.ephemeral_to == user.id
    for _ in range(40):
        choice = nimmt_choice(panel, TURN_ORDER, lang)
        if choice is None:
            return  # no controls left: the turn is over
        kind, custom_id, values = choice
        if kind == "click":
            r = await t.click(user, panel, custom_id)
        else:
            r = await t.choose(user, panel, custom_id, values)
        panel = await panel_answer(r)


async def play_nimmt(fd: Any, t: Table, people: dict[Any, str], table_lang: str = "en") -> None:
    """Everyone plays when pinged (``people``: user -> their language) until
    the lobby message shows the final standings."""
    finished = translate(table_lang, "table.finished")
    pinged = {u.id: 0 for u in people}

    def pings(user: Any) -> int:
        # (a live table that pinged is deleted once the next one is posted: still a ping received)
        return sum(1 for _, u in fd.pings(t.thread) if u == user.id)

    def last_pinged() -> Any:
        """Who the newest ping in the thread is for (the turn that is on now)."""
        for _, uid in reversed(fd.pings(t.thread)):
            for user in people:
                if user.id == uid:
                    return user
        return None

    for _ in range(3000):
        if finished in t.lobby.text():
            return
        mover = None
        for user in people:
            count = pings(user)
            if count > pinged[user.id]:
                pinged[user.id] = count
                mover = last_pinged()  # several new pings (turns played before): the newest is on
        if mover is None:
            await fd.wait_for(lambda: finished in t.lobby.text()
                              or any(pings(u) > pinged[u.id] for u in people), timeout=30)
            continue
        check_newest(fd, t.thread)
        t.before_click = lambda user: check_newest(fd, t.thread)  # and as they act, before each click
        try:
            await nimmt_turn(t, mover, lang=people[mover])
        finally:
            t.before_click = None
    raise AssertionError("the game did not end")


# ------------------------------------------------------------------ what the thread says
MOVE = {
    "nimmt": re.compile(r"^\*\*(?P<name>(?:\\.|[^*\\])+)\*\* (?:played|took stack|ended the turn|opened stack|takes a bull)"),
    "garbage": re.compile(r"^\*\*(?P<name>(?:\\.|[^*\\])+)\*\*: (?:drew|took)"),
}
NEW_TURN = ("turn", "round_start", "hand_start")


def as_read(text: str) -> str:
    """What Discord shows of escaped text: a backslash before punctuation shows that
    punctuation; zero-width spaces show nothing."""
    return re.sub(r"\\([^\w\s])", r"\1", text).replace("\u200b", "")


def versions(message: Any) -> list[str]:
    """The text of a message as shown now and before each of its edits."""
    from tests.fakediscord.models import embed_text

    old = ["\n".join([v["content"] or "", *(p for e in v["embeds"] for p in embed_text(e)),
                      *parts(v["components"]).values()]) for v in message.history]
    return [message.text(), *old]


def everything_shown(fd: Any, channels: list[Any], users: list[Any]) -> list[Any]:
    """Every message any of these people could see: public ones and their own ephemerals,
    those deleted since included (a replaced live table, a panel that came down below a ping)."""
    seen = [m for channel in channels for m in fd.messages(channel, include_deleted=True)]
    for user in users:
        seen += fd.ephemerals(user, include_deleted=True)
    return seen


def expected_pings(table: Any, options: dict[str, Any]) -> Counter:
    """From the engine alone: how many turns of each person began (timers off)."""
    engine = type(table.engine).replay(len(table.seats), table.seed, options, [])
    humans = {i: s.user_id for i, s in enumerate(table.seats) if s.user_id is not None}
    count: Counter = Counter()
    if engine.to_move in humans:
        count[humans[engine.to_move]] += 1
    for seat, text in table.log:
        events = engine.apply(seat, engine.parse(text))
        if any(e["type"] in NEW_TURN for e in events) and engine.to_move in humans:
            count[humans[engine.to_move]] += 1
    return count


#: the controls a pinged player needs, on the live table that pings them
CONTROLS = {"nimmt": r"nimmt\.hand:\d+", "take6": r"take6\.hand:\d+", "garbage": r"garbage\.(draw|discard|jack):.*"}


async def shows_the_last_move(t: Table, table: Any, render: Any, labels: dict[str, str]) -> Any:
    """The live table's picture, once it is the table's public view drawn with the public
    events of its latest turns (``table.recent``: the marks of the last move); it differs from
    the same view drawn without them, so the marks are there."""
    import io

    from PIL import Image, ImageChops

    from cogs.tables.game_ui import picture_names

    def drawn(recent: list[Any]) -> Any:
        data = render(table.view(None), picture_names(table, table.locale), labels, recent)
        return Image.open(io.BytesIO(data)).convert("RGB")

    def shown() -> Any:
        live = t.table_message()
        picture = next((a for a in live.attachments if a["filename"] == "table.png"), None) if live else None
        if picture is None or not table.recent:
            return None
        posted = Image.open(io.BytesIO(picture["data"])).convert("RGB")
        expected = drawn(list(table.recent))
        same = posted.size == expected.size and ImageChops.difference(posted, expected).getbbox() is None
        return posted if same else None

    posted = await t.fd.wait_for(shown, timeout=15, what="the live table drawn with the last move")
    plain = drawn([])
    assert posted.size != plain.size or ImageChops.difference(posted, plain).getbbox() is not None
    return posted


def check_newest(fd: Any, thread: Any) -> None:
    """While a pinged person is to move, the live table that pinged them is the newest
    message of the thread: nothing of the bot's (a round's record, a note) came below it,
    so the notification lands on the controls.  Ephemerals are not counted (nobody else
    sees them: a panel that followed its player below the ping).  Called when the ping is
    seen and again right before each click of the person's turn: a message that lands
    below the live table after the ping, before or between their clicks, is caught."""
    ping = fd.pings(thread)[-1][0]
    newest = fd.messages(thread)[-1]
    assert newest.id == ping.id, f"below the ping: {newest.text()[:80]!r}"


def check_pings(fd: Any, t: Any, table: Any, options: dict[str, Any], game: str) -> None:
    """Exactly one ping per turn that needs a person, and the ping is the live table itself:
    it names the player, pings only them and carries the controls they need (0 messages
    between the ping and the controls).  That it is the newest message of the thread while
    the person is to move is :func:`check_newest`'s, called before each of their clicks."""
    pings = [(m, u) for m, u in fd.pings()]
    users = {s.user_id: s.name for s in table.seats if s.user_id is not None}
    assert all(u in users for _, u in pings), "somebody not at the table was pinged"
    assert all(m.channel_id == t.thread.id for m, _ in pings)
    for m, u in pings:
        posted = said(m.history[0] if m.history else m.snapshot())  # as it pinged (edits never do)
        assert any(line.startswith(f"<@{u}>, it's your turn.") for line in posted.splitlines()), posted
        assert m.pinged == [u]
        from tests.fakediscord.models import walk_components

        components = m.history[0]["components"] if m.history else m.components
        controls = [c for c in walk_components(components) if re.fullmatch(CONTROLS[game], c.get("custom_id") or "")]
        assert controls, f"a ping without the controls: {posted}"
    assert Counter(u for _, u in pings) == expected_pings(table, options)
    assert len({m.id for m, _ in pings}) == len(pings), "one message pinged twice"


def _steps(lines: list[str]) -> list[str]:
    """Narration as its steps: a line's parts between arrows, without the mover's name in
    front (one move told at once or in two messages, e.g. a Garbage turn that waits for a
    Jack's slot, reads the same)."""
    return [re.sub(r"^\*\*(?:\\.|[^*\\])+\*\*: ", "", part) for line in lines for part in line.split(" → ")]


def check_record(t: Any, bot: Any, table: Any) -> list[str]:
    """The thread's record holds every move of the engine's log, each once, in order: the
    narration of the saved log replayed is, step by step, what the record says (of the
    record's lines, those the log narrates: not the start, the notes or the pings)."""
    presenter = bot.parts.loaded_tables.presenter
    expected = _steps(presenter.narrate(table, bot.tables.replay_events(table, 0, notes_told=1 << 62)))
    wanted = set(expected)
    record = t.record_lines()
    found = [step for step in _steps(record) if step in wanted]
    assert found == expected, "\n".join(difflib.unified_diff(expected, found, "log", "record", lineterm="", n=1))
    return record


class live_engine:
    """The engine a table holds *now*: the table swaps in a new engine object
    once each change is saved, so a test must not keep the old one."""

    def __init__(self, table: Any) -> None:
        self._table = table

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table.engine, name)
