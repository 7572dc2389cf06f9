"""Hostile and careless users, at random: the fuzzer behind ``bench/fuzz.py`` and
``tests/e2e/test_fuzz.py``.

A :class:`Fuzzer` sets up a server where games are on (11 nimmt!, 6 nimmt! and
Garbage tables with open hand panels, a lobby, private rules and leaderboard
answers), then sends interactions drawn from a seeded generator:

- forged components: custom_ids in today's shapes (``<kind>:<table>...``) and
  the shapes before typed items (``table:<id>:<op>...``, ``tsel:...``), with
  real, stale, out-of-range and too-big numbers, on public messages and on the
  sender's own private ones, claimed on the message or not, select values of
  any kind;
- stale clicks: a custom_id seen on any message earlier in the run;
- real clicks of what is on the messages now (moves, joins, pagers...);
- slash commands with options outside what they declare (range, type,
  choices, names, subcommands), and some valid read-only ones;
- the same click sent by several people at once.

Every interaction sent is recorded with whether it was answered within
Discord's 3 s (the stand-in raises ``NoAcknowledgement`` otherwise).
"""
from __future__ import annotations

import asyncio
import random
import string
from dataclasses import dataclass, field
from typing import Any

from tests.e2e import open_hand, open_table, seat_players
from tests.fakediscord.server import NoAcknowledgement

INT64 = 2**63
#: numbers a forged id or value may carry: small, real-looking, at and past the store's limit, absurd
NUMBERS = (0, 1, 2, 3, 7, 25, 99, 999, 10**6, 2**31, 2**53, INT64 - 1, INT64, 2**64, 10**19, 10**20 - 1)
#: custom_id kinds of today (table items, after the game, boards, rules, nights) and ops of the old shape
KINDS = ("table.join", "table.leave", "table.cpu", "table.level", "table.remove", "table.hints", "table.start",
         "table.cancel", "table.rules", "table.back", "table.away", "table.again", "nimmt.hand", "nimmt.refresh",
         "nimmt.hint", "nimmt.page", "nimmt.opage", "nimmt.stack", "nimmt.play", "nimmt.cards", "nimmt.take",
         "nimmt.pass", "nimmt.steal", "nimmt.open", "take6.hand", "take6.refresh", "take6.card", "take6.row",
         "take6.hint", "garbage.draw", "garbage.discard", "garbage.jack", "garbage.hint", "shuf", "vrfy", "rply",
         "lb", "lbme", "hist", "night", "rules")
OLD_OPS = ("join", "leave", "cpu", "start", "cancel", "hand", "nrefresh", "npage", "nstack", "nplay", "ncards",
           "ntake", "npass", "nsteal", "nopen", "sixcard", "sixrow", "sixrefresh", "hints", "level", "seats")
WORDS = ("on", "off", "ask", "now", "g", "games", "wins", "rating", "win_rate", "en", "es", "de", "nimmt", "take6",
         "garbage", "join", "o", "f", "x", "", "-1", "1e3", "٣", "\u200b", "<@1>", "../", "%s", "None")
#: read-only commands a player may run at any time, with valid options
SAFE_COMMANDS: tuple[tuple[str, dict[str, Any]], ...] = (("rules", {}), ("help", {}), ("leaderboard", {}), ("table list", {}), ("stats", {}))


@dataclass
class Figures:
    sent: int = 0
    unanswered: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    slow: list[str] = field(default_factory=list)


class Fuzzer:
    """Sends fuzzed interactions to the running bot through the stand-in."""

    def __init__(self, fd: Any, bot: Any, guild: Any, seed: int) -> None:
        self.fd, self.bot, self.guild = fd, bot, guild
        self.rng = random.Random(seed)
        self.figures = Figures()
        self.seen_ids: list[str] = []
        self._seen: set[str] = set()
        self.channels: list[Any] = []
        self.people: list[Any] = []
        self.table_ids: list[int] = []

    # ------------------------------------------------------------------ setup
    async def setup(self) -> None:
        """Tables as a busy evening has them, panels open, private answers with pagers."""
        fd, guild = self.fd, self.guild
        names = [("ana", "en-US"), ("ben", "en-GB"), ("cleo", "es-ES"), ("dan", "de"), ("eve", "en-US"),
                 ("fay", "es-ES")]
        for name, locale in names:
            user = fd.add_user(name, locale=locale)
            fd.add_member(guild, user)
            self.people.append(user)
        ana, ben, cleo, dan, eve, fay = self.people
        for command, host, guest, options in (("nimmt new", ana, ben, {"rounds": 2}), ("take6 new", cleo, dan, {}),
                                              ("garbage new", eve, fay, {})):
            channel = fd.add_channel(guild, command.split()[0])
            self.channels.append(channel)
            table = await open_table(fd, host, channel, command, seats=2, turn_time=0, **options)
            await seat_players(table, host, [guest])
            await table.click(host, table.lobby, f"table.start:{table.table_id}")
            await table.wait_thread()
            self.channels.append(table.thread)
            await fd.wait_for(table.table_message, timeout=30)
            self.table_ids.append(table.table_id)
            if command != "garbage new":
                for user in (host, guest):
                    await open_hand(table, user, game=command.split()[0])
        lobby_channel = fd.add_channel(guild, "lobby")
        self.channels.append(lobby_channel)
        lobby = await open_table(fd, ben, lobby_channel, "nimmt new", seats=4)
        self.table_ids.append(lobby.table_id)
        for user in self.people:
            await fd.slash(user, lobby_channel, "rules")
            await fd.slash(user, lobby_channel, "leaderboard", by="games")
        self.observe()

    # -------------------------------------------------------------- what there is
    def observe(self) -> None:
        """Remember every custom_id on the messages now: later, some of them are stale."""
        for message in self.public() + [m for user in self.people for m in self.fd.ephemerals(user)]:
            for component in message.buttons() + message.selects():
                custom_id = component.get("custom_id")
                if custom_id and custom_id not in self._seen:
                    self._seen.add(custom_id)
                    self.seen_ids.append(custom_id)

    def public(self) -> list[Any]:
        return [m for channel in self.channels for m in self.fd.messages(channel)]

    def message_for(self, user: Any) -> Any:
        """A message this user can click: a public one, or (often) one of their own private ones."""
        own = self.fd.ephemerals(user)
        if own and self.rng.random() < 0.5:
            return self.rng.choice(own[-20:])
        return self.rng.choice(self.public()[-60:])

    # ---------------------------------------------------------------- generators
    def number(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.3 and self.table_ids:
            return str(rng.choice(self.table_ids))
        if roll < 0.8:
            return str(rng.choice(NUMBERS))
        return str(rng.randrange(10**rng.randrange(1, 21)))

    def word(self) -> str:
        return self.rng.choice(WORDS + (self.number(),))

    def custom_id(self) -> str:
        """A custom_id in one of the shapes the bot reads (or none)."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.25 and self.seen_ids:  # stale (or current): one that was on a message
            custom_id = rng.choice(self.seen_ids)
        elif roll < 0.65:  # today's shape, fields of any value
            parts = [rng.choice(KINDS)] + [self.number() if rng.random() < 0.8 else self.word()
                                           for _ in range(rng.randrange(0, 6))]
            custom_id = ":".join(parts)
        elif roll < 0.85:  # the shape before typed items
            parts = [rng.choice(("table", "tsel")), self.number(), rng.choice(OLD_OPS)]
            if rng.random() < 0.6:
                parts.append(self.number())
            if rng.random() < 0.6:
                parts.append(rng.choice((f"p{self.number()}", f"d{self.number()}t{self.number()}i{self.number()}",
                                         f"{self.number()}.{self.number()}", self.word())))
            custom_id = ":".join(parts)
        else:  # anything at all
            alphabet = string.ascii_letters + string.digits + ":._-/ %\u00e9\u200b"
            custom_id = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 101)))
        return custom_id[:100] or "x"

    def values(self) -> list[str]:
        rng = self.rng
        return [self.word() if rng.random() < 0.3 else self.number() for _ in range(rng.choice((0, 1, 1, 1, 2, 5)))]

    def bad_options(self) -> tuple[str, dict[str, Any], list[Any] | None]:
        """A slash command (path) with options outside what it declares."""
        rng = self.rng
        commands = {c["name"]: c for c in self.fd.commands(self.guild) if c.get("type", 1) == 1}
        command = commands[rng.choice(sorted(commands))]
        path, schema = [command["name"]], command.get("options") or []
        subs = [o for o in schema if o["type"] in (1, 2)]
        while subs:
            sub = rng.choice(subs)
            path.append(sub["name"] if rng.random() < 0.9 else "bogus")
            schema = sub.get("options") or []
            subs = [o for o in schema if o["type"] in (1, 2)]
        if rng.random() < 0.1:  # the raw list: anything at all
            raw: list[dict[str, Any]] = [{"name": rng.choice(("seats", "game", "x", "")), "type": rng.choice((3, 4, 5, 10, 99)),
                    "value": rng.choice((None, "", [], {}, 1.5, "9" * 40))} for _ in range(rng.randrange(0, 3))]
            return " ".join(path), {}, raw
        options: dict[str, Any] = {}
        for option in schema:
            if rng.random() < 0.5:
                options[option["name"]] = self.bad_value(option)
        if not options or rng.random() < 0.2:
            options[rng.choice(("bogus", "seats", "user", "game"))] = self.bad_value({"type": rng.choice((3, 4, 6))})
        return " ".join(path), options, None

    def bad_value(self, option: dict[str, Any]) -> Any:
        rng = self.rng
        kind = option["type"]
        low, high = option.get("min_value", 0), option.get("max_value", 2**53)
        candidates: list[Any] = ["x", True, None, 1.5, [], 2**80, -(2**80), str(INT64), "9" * 25, "", "<@1>"]
        if kind in (4, 10):
            candidates += [low - 1, high + 1, high * 2 + 10]
        if option.get("choices"):
            candidates += ["chess", "NIMMT", 7]
        if kind in (6, 7, 8, 9, 11):
            candidates += [str(INT64), "123", "-5", 5]
        return rng.choice(candidates)

    # ------------------------------------------------------------------ sending
    async def send(self, kind: str, make: Any) -> None:
        """One interaction (``make()`` returns its awaitable); counted once sent."""
        try:
            coro = make()
        except (LookupError, PermissionError, ValueError, TypeError, IndexError):
            return  # nothing a user could send (a deleted message, a disabled button...)
        try:
            result = await coro
        except NoAcknowledgement as error:
            self.figures.sent += 1
            self.figures.unanswered += 1
            self.figures.slow.append(str(error).splitlines()[0][:200])
            return
        except (LookupError, PermissionError, ValueError, TypeError):
            return
        self.figures.sent += 1
        self.figures.by_kind[kind] = self.figures.by_kind.get(kind, 0) + 1
        if result.latency is not None and result.latency > 3.0:
            self.figures.unanswered += 1
            self.figures.slow.append(f"{kind}: answered after {result.latency:.2f} s")

    async def one(self) -> None:
        """One fuzzed interaction (or a few at once)."""
        rng, fd = self.rng, self.fd
        user = rng.choice(self.people)
        roll = rng.random()
        if roll < 0.45:
            message = self.message_for(user)
            component = rng.choice((2, 2, 2, 3))
            custom_id = self.custom_id()
            values = self.values() if component == 3 else None
            claimed = rng.random() < 0.85
            await self.send("forged click", lambda: fd.forge(user, message, custom_id, component_type=component,
                                                             values=values, claimed=claimed))
        elif roll < 0.65:
            message = self.message_for(user)
            buttons = [b for b in message.buttons() if b["custom_id"] and not b["disabled"]]
            selects = [s for s in message.selects() if s["type"] == 3 and s["options"] and not s["disabled"]]
            if selects and (not buttons or rng.random() < 0.3):
                menu = rng.choice(selects)
                picked = [rng.choice(menu["options"])["value"]][:max(1, menu["min_values"])]
                await self.send("real pick", lambda: fd.select(user, message, menu["custom_id"], picked))
            elif buttons:
                custom_id = rng.choice(buttons)["custom_id"]
                await self.send("real click", lambda: fd.click(user, message, custom_id))
        elif roll < 0.85:
            path, options, raw = self.bad_options()
            channel = rng.choice(self.channels)
            await self.send("forged command", lambda: fd.forge_slash(user, channel, path, options=raw, **options))
        elif roll < 0.9:
            path, options = rng.choice(SAFE_COMMANDS)
            channel = rng.choice(self.channels)
            await self.send("command", lambda: fd.slash(user, channel, path, **options))
        else:  # the same click by several people at once
            message = rng.choice(self.public()[-60:])
            ids = [b["custom_id"] for b in message.buttons() if b["custom_id"]] or [self.custom_id()]
            custom_id = rng.choice(ids)
            crowd = rng.sample(self.people, rng.randrange(2, 5))
            await asyncio.gather(*(self.send("concurrent click", lambda u=u: fd.forge(u, message, custom_id))
                                   for u in crowd))
        if rng.random() < 0.05:
            self.observe()

    async def run(self, count: int, concurrency: int = 4) -> Figures:
        """At least ``count`` interactions sent (a few more: the last ones in flight, a
        crowd's), ``concurrency`` senders at a time."""
        tries = [3 * count]  # (a draw that sends nothing, e.g. a click on a deleted message, is drawn again)

        async def sender() -> None:
            while self.figures.sent < count and tries[0] > 0:
                tries[0] -= 1
                await self.one()

        await asyncio.gather(*(sender() for _ in range(concurrency)))
        return self.figures
