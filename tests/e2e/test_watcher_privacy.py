"""A watcher never sees a hand, end to end, in every game: 11 nimmt!, 6 nimmt!
and Garbage are played through with one person watching, and everything that
person can see is scanned the moment it appears (or changes) in the stand-in:
every public message in the channel and the game's thread, and every message
shown to the watcher alone — its text, embeds, buttons' and menus' labels,
the kinds of its controls, the names of its pictures.  No card named there may
be, at that moment, in a place the game hides (a player's hand or unrevealed
choice; a face-down layout card or the stock), and the watcher's own clicks on
a player's controls are answered privately, with nothing of a hand."""
from __future__ import annotations

import json
import re
from collections import deque
from pathlib import Path
from typing import Any, Callable

import pytest

from app.i18n.catalogue import t as tr
from cogs.games.garbage.cog import card_name
from core import registry
from core.games.garbage.engine import SLOTS_OF, TEXT
from tests.e2e import button, live_engine, open_hand, panel_answer, play_nimmt, private_answer, running_bot, started
from tests.e2e.test_garbage import play_garbage

pytestmark = pytest.mark.timeout(600)

LOCALES = Path(__file__).resolve().parents[2] / "data" / "games"
#: how the bot writes cards in running text: numbers (with their ox heads: "55 (7🐮)"), or rank and suit
NUMBERS = r"\d+(?: \(\d+🐮\))?(?:, \d+(?: \(\d+🐮\))?)*"
SUITED = r"(?:10|[2-9AJQK])[♠♥♦♣](?:, (?:10|[2-9AJQK])[♠♥♦♣])*"
#: placeholders that hold cards; ``summary_player``'s ``{cards}`` is a count, not cards
CARD_FIELDS = ("card", "cards", "top")
COUNTS = {"summary_player"}
#: the controls that carry a player's cards: they belong in a private panel only
HAND_CONTROLS = {"nimmt.cards", "nimmt.play", "nimmt.stack", "nimmt.steal", "nimmt.open", "nimmt.take",
                 "nimmt.pass", "take6.card", "take6.row"}


def card_lines(game: str) -> list[re.Pattern[str]]:
    """Every English template of ``game`` that names a card, as a pattern whose groups are the cards."""
    cards = SUITED if game == "garbage" else NUMBERS
    patterns = []
    for path in sorted((LOCALES / game / "locales" / "en").glob("*.json")):
        for key, value in json.loads(path.read_text(encoding="utf-8")).items():
            for template in (value.values() if isinstance(value, dict) else [value]):
                if key in COUNTS or not isinstance(template, str) or not any(
                        f"{{{f}}}" in template for f in CARD_FIELDS):
                    continue
                parts = re.split(r"(\{\w+\})", template)
                pattern = "".join(f"({cards})" if p[1:-1] in CARD_FIELDS else ".+?"
                                  if p.startswith("{") else re.escape(p) for p in parts)
                patterns.append(re.compile(pattern.replace("\\*\\*", "")))
    assert patterns
    return patterns


def named_cards(game: str, patterns: list[re.Pattern[str]], texts: list[str]) -> set[str]:
    """The cards these texts name, as the game writes them."""
    found: set[str] = set()
    for text in texts:
        for line in text.replace("**", "").splitlines():
            for pattern in patterns:
                for match in pattern.finditer(line):
                    for group in match.groups():
                        if game == "garbage":
                            found.update(group.split(", "))
                        else:
                            found.update(re.findall(r"(\d+)(?!\d|🐮)", group))
    return found


def hidden_cards(game: str, engine: Any) -> set[str]:
    """What the game hides now, written as the bot writes cards (nothing once over: the end shows all)."""
    if engine.over:
        return set()
    if game == "garbage":
        hidden = [c for s in range(engine.seats) for k in SLOTS_OF[engine.down[s]] for c in (engine.cards[s][k - 1],)]
        hidden += list(engine.stock)
        shown = set(range(52 * engine.decks)) - set(hidden)
        # two decks: a card is secret only while no copy of it is in sight
        return {card_name("en", TEXT[c]) for c in hidden} - {card_name("en", TEXT[c]) for c in shown}
    if game == "take6":
        revealed = {c for _, c in engine.view(None)["pending"]}  # chosen cards laid out one by one
        return {str(c) for h in engine.hands for c in h} | {str(c) for c in engine.chosen if c is not None and c not in revealed}
    return {str(c) for s in range(engine.seats) for c in engine.view(s)["hand"]}


def told_cards(game: str, events: list[dict[str, Any]]) -> set[str]:
    """The cards the game's events tell everyone (what a move uncovered, a deal's leftover hands)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                walk(item)
        elif game == "garbage" and isinstance(value, str):
            found.add(card_name("en", value))
        elif game != "garbage" and isinstance(value, int):
            found.add(str(value))

    for event in events:
        for key in ("card", "cards", "uncovered", "top", "hands"):
            walk(event.get(key))
    return found


class Scan:
    """Told of every message change by the stand-in: records what the watcher could
    see in it and what the game hid at that moment, less what the game told everyone
    in this round (deal) and the one before (a round's record is posted once the next
    round is out, and names cards of the last round, now shuffled into hiding)."""

    def __init__(self, game: str, table: Any, watcher: Any, places: Callable[[], set[int]]) -> None:
        self.game, self.table, self.watcher, self.places = game, table, watcher, places
        self.patterns = card_lines(game)
        self.seen: list[tuple[int, str, set[str]]] = []  # (message id, a card shown, hidden then)
        self.controls: set[str] = set()
        self.pictures: set[str] = set()
        self.checked = 0
        self.engine: Any = table.engine.copy()
        self.moves = len(table.log)
        self.told: deque[set[str]] = deque([set()], maxlen=2)  # by the engine in this round and the one before
        self.deal = registry.spec(game).deal_event
        self.errors: list[str] = []  # the stand-in logs and drops a listener's exception: kept here

    def __call__(self, message: Any, kind: str) -> None:
        try:
            self.check(message, kind)
        except Exception as error:
            self.errors.append(repr(error))

    def check(self, message: Any, kind: str) -> None:
        if kind == "delete" or self.table.engine is None:
            return
        if message.ephemeral_to is None and message.channel_id not in self.places():
            return
        if message.ephemeral_to not in (None, self.watcher.id):
            return
        log = list(self.table.log)
        if len(log) > self.moves:  # replay the new moves on the state last seen: what did they tell?
            events = [e for seat, text in log[self.moves:] for e in self.engine.apply(seat, self.engine.parse(text))]
            cut = next((i for i, e in enumerate(events) if e.get("type") == self.deal), None)
            if cut is None:
                self.told[-1] |= told_cards(self.game, events)
            else:
                self.told[-1] |= told_cards(self.game, events[:cut])
                self.told.append(told_cards(self.game, events[cut:]))
            self.moves = len(log)
        hidden = hidden_cards(self.game, self.table.engine) - set().union(*self.told)
        texts = [message.text()]
        for c in message.all_components():
            texts += [str(c.get(k) or "") for k in ("label", "placeholder", "content")]
            texts += [str(o.get(k) or "") for o in c.get("options") or [] for k in ("label", "description", "value")]
            if c.get("custom_id"):
                self.controls.add(c["custom_id"].split(":")[0])
        self.pictures.update(a.get("filename") for a in message.attachments)
        self.checked += 1
        for card in named_cards(self.game, self.patterns, texts):
            if card in hidden:
                self.seen.append((message.id, card, hidden))


GAMES = {
    "nimmt": ("nimmt new", {"rounds": 1}, "nimmt.hand", 1),
    "take6": ("take6 new", {"deals": 1}, "take6.hand", 1),
    "garbage": ("garbage new", {}, "garbage.draw", 0),
}


async def play_take6(t: Any, table: Any, people: list[Any]) -> None:
    """Everyone plays their first card (or the first row offered) whenever asked, until the end."""
    engine = live_engine(table)
    for _ in range(300):
        if table.status != "playing":
            return
        acting = [u for u in people if table.seat_of(u.id) in engine.to_act]
        if not acting:
            await t.fd.wait_for(lambda: table.status != "playing" or any(
                table.seat_of(u.id) in engine.to_act for u in people), timeout=30)
            continue
        for user in acting:
            panel = await open_hand(t, user, "take6")
            choice = button(panel, r"take6\.row:.*") or button(panel, r"take6\.card:.*")
            if choice is not None:
                await panel_answer(await t.click(user, panel, choice["custom_id"]))  # (new rows: a new picture)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_a_watcher_sees_no_card_the_game_hides(fast_world, tmp_path, game):
    world = fast_world
    fd = world.fd
    command, options, control, computers = GAMES[game]
    ana, ben, eve = world.person("ana"), world.person("ben"), world.person("eve")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=3, computer_delay=0.01) as bot:
        t, table = await started(world, bot, [ana, ben], command, computers=computers, turn_time=0, **options)
        scan = Scan(game, table, eve, lambda: {world.channel.id, t.thread.id})
        fd.message_listeners.append(scan)
        r = await fd.click(eve, t.table_message(), f"table.watch:{t.table_id}")
        assert (await private_answer(r)).ephemeral
        await fd.wait_for(lambda: table.watching(eve.id))

        # the watcher's press on a player's control (My hand; Garbage's Draw) is refused privately
        shown = await fd.wait_for(lambda: (m := t.table_message()) and button(m, rf"{control}:{t.table_id}\b.*")
                                  and m, timeout=10)
        log = list(table.log)
        r = await fd.click(eve, shown, button(shown, rf"{control}:{t.table_id}\b.*")["custom_id"])
        refusal = await private_answer(r)
        assert refusal.ephemeral_to == eve.id and tr("en", "table.watcher_control") in refusal.text()
        assert not refusal.attachments and not refusal.all_components() and table.log == log

        if game == "nimmt":
            await play_nimmt(fd, t, {ana: "en", ben: "en"})
        elif game == "take6":
            await play_take6(t, table, [ana, ben])
        else:
            await play_garbage(t, bot, [ana, ben])
        await fd.wait_for(lambda: table.status == "finished", timeout=30)
        fd.message_listeners.remove(scan)

        assert not scan.errors, scan.errors[:3]
        assert scan.checked > 10 and not scan.seen, scan.seen[:3]  # (the thread is a compact record)
        assert not scan.controls & HAND_CONTROLS, scan.controls
        assert "hand.png" not in scan.pictures and "table.png" in scan.pictures, scan.pictures
        # and the scan does see cards: the public narration names every card once played
        assert named_cards(game, scan.patterns, [m.text() for m in fd.messages(t.thread)])
