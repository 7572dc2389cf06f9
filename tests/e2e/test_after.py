"""After the game, end to end: the shuffle commitment a table shows at the
start is the hash of the seed its final standings reveal; ``/verify`` checks
a real game and catches a tampered log or seed; Replay pages through a whole
game with every hand, telling the same story the thread told; ``/versus``
counts shared games across servers."""
from __future__ import annotations

import hashlib
import re
import sqlite3
from typing import Any

import pytest

from app.i18n.catalogue import t
from app.store import GameRecord, PlayerResult
from core.games.garbage.engine import TEXT, Garbage
from core.games.nimmt.engine import Nimmt
from tests.e2e import button, description, footer, panel_answer, play_nimmt, running_bot, start_table, started
from tests.e2e.test_garbage import play_garbage

pytestmark = pytest.mark.timeout(600)

SHORT = re.compile(r"Shuffle commitment \(SHA-256\): ([0-9a-f]{12})…")
FULL = re.compile(r"`([0-9a-f]{64})`")


def thread_story(fd: Any, t_: Any, game: str) -> list[str]:
    """The moves as the thread told them: every narrated line except pings,
    the start line and computer take-overs."""
    started = t("en", "table.game_started", game=t("en", f"{game}.title"))
    shuffle = (t("en", "after.narrate_commitment", sha="").split("`")[0],
               t("en", "after.narrate_revealed", seed=0, nonce="").split(" 0")[0])
    lines = []
    for message in fd.messages(t_.thread):
        if not message.content or message.attachments or message.embeds:
            continue
        for line in message.content.splitlines():
            if line == started or line.startswith(shuffle) or message.mentions and re.match(r"<@\d+>", line):
                continue
            lines.append(line)
    return lines


def revealed(lobby_text: str) -> tuple[int, str, str]:
    seed = re.search(r"Seed: (\d+)", lobby_text)
    nonce = re.search(r"Nonce: ([0-9a-f]{32})", lobby_text)
    sha = re.search(r"\(SHA-256\): ([0-9a-f]{64})", lobby_text)
    assert seed and nonce and sha, lobby_text
    return int(seed.group(1)), nonce.group(1), sha.group(1)


def sha256_of(game: str, table_id: int, seed: int, nonce: str) -> str:
    """The commitment as docs/hosting.md tells a player to compute it."""
    return hashlib.sha256(f"cardnight-shuffle-v1|{game}|{table_id}|{seed}|{nonce}".encode()).hexdigest()


async def check_commitment_during_play(fd: Any, world: Any, t_: Any, user: Any, secret: int) -> str:
    """The table message shows the short commitment; its button and /verify
    show the full one, and nothing reveals the seed while the game is on."""
    message = await fd.wait_for(lambda: (m := t_.table_message()) and SHORT.search(footer(m)) and m, timeout=10)
    short_match = SHORT.search(footer(message))
    assert short_match, footer(message)
    short = short_match.group(1)
    r = await fd.click(user, message, f"shuf:{t_.table_id}")
    assert r.ack_type == 4 and r.ephemeral, r
    full_match = FULL.search(r.message.text())
    assert full_match, r.message.text()
    full = full_match.group(1)
    assert full.startswith(short)
    assert t("en", "after.commitment_pending") in r.message.text()
    r = await fd.slash(user, t_.thread, "verify")  # in the table's thread: this table
    assert r.ephemeral and full in r.message.text() and "Seed" not in r.message.text()
    r = await fd.slash(user, world.channel, "verify", table=t_.table_id)
    assert r.ephemeral and full in r.message.text()
    assert str(secret) not in r.message.text() + footer(message)
    return full


async def page_through(fd: Any, user: Any, t_: Any, engine: Any, seats: int, seed: int, options: dict[str, Any],
                       log: list[tuple[int, str]], hands: bool) -> list[str]:
    """Open Replay under the final standings and press Next to the end.  Every
    page is checked against the engine replayed here from the revealed seed;
    returns the narration of all pages in order."""
    replay_button = button(t_.lobby, r"rply:\d+:0:o")
    assert replay_button, t_.lobby.buttons()
    r = await fd.click(user, t_.lobby, replay_button["custom_id"])
    assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == user.id, r
    page = r.message
    game = engine.new(seats, seed, **options)
    story: list[str] = []
    for step in range(len(log) + 1):
        if step:
            seat, text = log[step - 1]
            game.apply(seat, game.parse(text))
        assert footer(page) == t("en", "after.replay_footer", step=step, count=len(log)), footer(page)
        assert any(a["filename"] == "replay.png" and a["data"][:4] == b"\x89PNG" for a in page.attachments)
        head, summary, shown = description(page).split("\n\n")
        head_lines = head.splitlines()
        if step:
            assert head_lines[0].startswith(f"Move {step} of {len(log)}: "), head_lines[0]
            story += head_lines[1:]
        else:
            assert head_lines == [t("en", "after.replay_deal", count=len(log))]
        table = game.view(None)
        hand_lines = shown.splitlines()[1:]
        for s in range(seats):
            if hands:  # every hand, as the engine dealt and played it
                cards = ", ".join(str(c) for c in game.view(s)["hand"]) or "-"
                assert hand_lines[s].endswith(f": {cards}"), (step, s, hand_lines[s], cards)
            else:  # Garbage: every layout as it lay, the face-down cards in brackets
                layout = " ".join(c or f"[{TEXT[game.cards[s][k]]}]"
                                  for k, c in enumerate(table["players"][s]["layout"]))
                assert hand_lines[s].endswith(f": {layout}"), (step, s, hand_lines[s], layout)
        if "stacks" in table:
            for stack in table["stacks"]:
                assert f"**{stack['label']}** {stack['top']} " in summary, (step, summary)
        if step < len(log):
            next_step = button(page, rf"rply:\d+:{step + 1}:n")
            assert next_step, step
            r = await fd.click(user, page, next_step["custom_id"])
            assert r.ack_type == 7, r
            page = r.message
    assert game.over
    assert button(page, r"rply:\d+:\d+:n") is None  # Next is disabled on the last step
    # The other buttons: back to the first step, and round jumps forward.
    first = button(page, r"rply:\d+:0:f")
    assert first
    r = await fd.click(user, page, first["custom_id"])
    assert footer(r.message) == t("en", "after.replay_footer", step=0, count=len(log))
    jump = button(r.message, r"rply:\d+:\d+:s")
    assert jump
    r = await fd.click(user, r.message, jump["custom_id"])
    assert footer(r.message) == t("en", "after.replay_footer", step=int(jump["custom_id"].split(":")[2]),
                                  count=len(log))
    return story


async def game_id_from_history(fd: Any, user: Any, channel: Any) -> tuple[int, Any]:
    r = await fd.slash(user, channel, "history")
    options = r.message.selects()[0]["options"]
    game_id = int(options[0]["value"])
    r = await fd.select(user, r.message, r.message.selects()[0]["custom_id"], [str(game_id)])
    assert f"game #{game_id}" in r.message.text()
    return game_id, r.message


# --------------------------------------------------------------------------- tests
async def test_nimmt_commitment_reveal_verify_tamper_and_replay(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    database = tmp_path / "bot.db"
    async with running_bot(fd, database, world.guild) as bot:
        t_ = await start_table(fd, world.channel, ana, [ben], "nimmt new", computers=2, turn_time=0, seats=4, rounds=2)
        live = bot.tables.get(t_.table_id)
        full = await check_commitment_during_play(fd, world, t_, ben, live.seed)
        await play_nimmt(fd, t_, {ana: "en", ben: "en"})

        # The final standings reveal seed and nonce, and they hash to the commitment shown at the start.
        await fd.wait_for(lambda: button(t_.lobby, r"rply:\d+:0:o"), timeout=10)
        seed, nonce, sha = revealed(t_.lobby.text())
        assert sha == full == sha256_of("nimmt", t_.table_id, seed, nonce)
        thread = t_.log_text()  # the thread keeps both, in messages that are never edited
        assert t("en", "after.narrate_commitment", sha=full) in thread
        assert t("en", "after.narrate_revealed", seed=seed, nonce=nonce) in thread
        assert thread.index(full) < thread.index("Game over!") < thread.index(nonce)
        final = await fd.wait_for(lambda: (m := t_.table_message()) and str(seed) in footer(m) and m, timeout=10)
        assert SHORT.search(footer(final)).group(1) == full[:12]

        # /verify on the game (its number from /history) and its Verify button agree: all good.
        game_id, shown = await game_id_from_history(fd, ana, world.channel)
        assert button(shown, rf"vrfy:{game_id}")
        record = await bot.store.table(t_.table_id)
        log = list(record.actions)
        r = await fd.click(ana, shown, button(shown, rf"rply:{game_id}:0:o")["custom_id"])  # Replay from /history
        assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == ana.id
        assert footer(r.message) == t("en", "after.replay_footer", step=0, count=len(log))
        r = await fd.click(ana, r.message, button(r.message, rf"rply:{game_id}:{len(log)}:l")["custom_id"])
        assert r.ack_type == 7 and footer(r.message) == t("en", "after.replay_footer", step=len(log), count=len(log))
        ok = t("en", "after.verify_ok")
        for r in (await fd.slash(ben, world.channel, "verify", game=game_id),
                  await fd.click(ben, t_.lobby, f"vrfy:{game_id}")):
            await r.settled()
            text = (r.followups[0] if r.followups else r.message).text()
            assert ok in text and full in text and str(seed) in text, text
            assert t("en", "after.replay_ok", count=len(log)) in text

        # Replay from the standings message: every step, every hand, the thread's story.
        story = await page_through(fd, ben, t_, Nimmt, 4, seed, {"rounds": 2}, log, hands=True)
        assert story == thread_story(fd, t_, "nimmt")

        async def verify_text() -> str:
            r = await fd.slash(ana, world.channel, "verify", game=game_id)
            await r.settled()
            return (r.followups[0] if r.followups else r.message).text()

        # Tampering with the store is caught: a move of the log, then the seed.
        db = sqlite3.connect(database, isolation_level=None)
        idx = len(log) // 2  # a move in the middle now names a stack that does not exist
        (action,) = db.execute("SELECT action FROM table_actions WHERE table_id = ? AND idx = ?",
                               (t_.table_id, idx)).fetchone()
        db.execute("UPDATE table_actions SET action = 'take 99' WHERE table_id = ? AND idx = ?", (t_.table_id, idx))
        text = await verify_text()
        assert t("en", "after.verify_failed") in text and ok not in text
        assert t("en", "after.hash_ok") in text  # the seed still matches; the moves do not
        assert t("en", "after.problem_illegal_move", step=idx + 1, count=len(log)) in text, text
        r = await fd.click(ana, t_.lobby, f"rply:{game_id}:0:o")  # nothing to replay, and it says why
        assert r.ephemeral and r.message.text() == t("en", "after.replay_broken", id=game_id)
        db.execute("UPDATE table_actions SET action = ? WHERE table_id = ? AND idx = ?", (action, t_.table_id, idx))
        assert ok in await verify_text()
        # a recorded score that the moves do not lead to
        db.execute("UPDATE game_players SET score = score + 1 WHERE game_id = ? AND seat = 0", (game_id,))
        text = await verify_text()
        assert t("en", "after.hash_ok") in text and t("en", "after.problem_result_differs", count=len(log)) in text
        db.execute("UPDATE game_players SET score = score - 1 WHERE game_id = ? AND seat = 0", (game_id,))

        db.execute("UPDATE games SET seed = seed + 1 WHERE id = ?", (game_id,))
        db.execute("UPDATE tables SET meta = json_set(meta, '$.seed', json_extract(meta, '$.seed') + 1) WHERE id = ?",
                   (t_.table_id,))
        text = await verify_text()
        assert t("en", "after.verify_failed") in text and t("en", "after.hash_bad") in text, text
        db.execute("UPDATE tables SET meta = json_set(meta, '$.seed', json_extract(meta, '$.seed') - 1) WHERE id = ?",
                   (t_.table_id,))
        text = await verify_text()  # only the game record changed: the two disagree
        assert t("en", "after.problem_seed_differs", table=seed) in text, text
        db.execute("UPDATE games SET seed = seed - 1 WHERE id = ?", (game_id,))
        db.close()

    # After a restart the buttons under the standings still work.
    async with running_bot(fd, database, world.guild):
        r = await fd.click(ana, t_.lobby, f"vrfy:{game_id}")
        await r.settled()
        assert ok in (r.followups[0] if r.followups else r.message).text()
        r = await fd.click(ana, t_.lobby, f"rply:{game_id}:0:o")
        assert r.ephemeral and footer(r.message) == t("en", "after.replay_footer", step=0, count=len(log))


async def test_garbage_replay_shows_every_layout_and_the_thread_story(fast_world, tmp_path):
    world = fast_world
    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, table_seed=1121) as bot:
        t_ = await start_table(fd, world.channel, ana, [], "garbage new", computers=1, turn_time=0, seats=2)
        await check_commitment_during_play(fd, world, t_, ana, 1121)
        await play_garbage(t_, bot, [ana], take_discard=False)
        await fd.wait_for(lambda: button(t_.lobby, r"rply:\d+:0:o"), timeout=10)
        seed, nonce, sha = revealed(t_.lobby.text())
        assert seed == 1121 and sha == sha256_of("garbage", t_.table_id, seed, nonce)
        log = list((await bot.store.table(t_.table_id)).actions)
        story = await page_through(fd, ana, t_, Garbage, 2, seed, {}, log, hands=False)
        assert story == thread_story(fd, t_, "garbage")


async def test_versus_counts_shared_games_across_servers(world, tmp_path):
    fd = world.fd
    ana, ben, cid = world.person("ana"), world.person("ben"), world.person("cid")
    other = fd.add_guild("Elsewhere")
    # (game, guild, [(user, score, place)]) -- counted by hand below
    games = [
        ("nimmt", world.guild.id, [(ana, 10, 1), (ben, 20, 2), (cid, 30, 3)]),
        ("nimmt", other.id, [(ana, 25, 3), (ben, 5, 1), (cid, 12, 2)]),
        ("nimmt", other.id, [(ana, 8, 1), (ben, 8, 1)]),
        ("nimmt", world.guild.id, [(ana, 3, 1), (cid, 9, 2)]),  # without ben
        ("garbage", world.guild.id, [(ana, 0, 1), (ben, 4, 2)]),
        ("garbage", other.id, [(ben, 0, 1), (ana, 2, 2), (cid, 3, 3)]),
        ("garbage", other.id, [(ben, 0, 1), (cid, 1, 2)]),  # without ana
    ]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        for i, (game, guild, players) in enumerate(games):
            made = await bot.store.record_game(GameRecord(
                table_id=5_000 + i, guild_id=guild, channel_id=1, game=game, started_at=1.0, ended_at=2.0 + i,
                seed=1, rounds=1, has_bots=False, rated=True,
                players=[PlayerResult(u.id, u.name, s, score, place) for s, (u, score, place) in enumerate(players)]))
            assert made is not None

        async def versus(caller: Any, **options: Any) -> str:
            r = await fd.slash(caller, world.channel, "versus", **options)
            assert r.ack_type == 4 and r.ephemeral
            return r.message.text()

        text = await versus(ana, user=ben)
        # 11 nimmt!: 3 together; ana ahead once (10 < 20), ben once (5 < 25), level once; penalties 43 / 33
        assert t("en", "after.versus_games", count=3) in text
        assert t("en", "after.versus_ahead", name="ben", ahead=1, behind=1, level=1) in text
        assert t("en", "after.versus_score_nimmt", name="ben", mine="14.3", theirs="11.0") in text
        # Garbage: 2 together, one each
        assert t("en", "after.versus_games", count=2) in text
        assert text.index("11 nimmt!") < text.index("Garbage")

        text = await versus(ben, user=ana, game="garbage")
        assert "11 nimmt!" not in text and t("en", "after.versus_games", count=2) in text
        assert t("en", "after.versus_ahead", name="ana", ahead=1, behind=1, level=0) in text

        text = await versus(cid, user=ana, game="nimmt")  # cid: 3 shared games, ahead in one
        assert t("en", "after.versus_ahead", name="ana", ahead=1, behind=2, level=0) in text
        assert t("en", "after.versus_score_nimmt", name="ana", mine="17.0", theirs="12.7") in text

        assert t("en", "after.versus_self") in await versus(ana, user=ana)
        # these games were recorded without moves (no table behind them): Replay and /verify say so
        game_id, shown = await game_id_from_history(fd, ana, world.channel)
        r = await fd.click(ana, shown, f"rply:{game_id}:0:o")
        assert r.ephemeral and r.message.text() == t("en", "after.no_moves", id=game_id)
        r = await fd.slash(ana, world.channel, "verify", game=game_id)
        await r.settled()
        assert (r.followups[0] if r.followups else r.message).text() == t("en", "after.no_moves", id=game_id)
        r = await fd.slash(ana, world.channel, "verify", game=999_999)
        await r.settled()
        assert (r.followups[0] if r.followups else r.message).text() == t("en", "stats.no_such_game")
        loner = world.person("dee")
        assert t("en", "after.versus_none", name="dee") in await versus(ana, user=loner)
        # Spanish caller: the same figures in Spanish
        es = world.person("eva", locale="es-ES")
        await bot.store.record_game(GameRecord(
            table_id=6_000, guild_id=world.guild.id, channel_id=1, game="nimmt", started_at=1.0, ended_at=9.0,
            seed=1, rounds=1, has_bots=False, rated=True,
            players=[PlayerResult(es.id, "eva", 0, 7, 1), PlayerResult(ana.id, "ana", 1, 12, 2)]))
        text = await versus(es, user=ana)
        assert t("es", "after.versus_score_nimmt", name="ana", mine="7,0", theirs="12,0") in text
        # ... and from the side of the player with more games (the store reads from eva's few)
        text = await versus(ana, user=es, game="nimmt")
        assert t("en", "after.versus_games", count=1) in text
        assert t("en", "after.versus_ahead", name="eva", ahead=0, behind=1, level=0) in text
        assert t("en", "after.versus_score_nimmt", name="eva", mine="12.0", theirs="7.0") in text


async def play_take6_out(fd, tbl, table, person, before_last_turn=None) -> None:
    """``person`` plays a 6 nimmt! game to its end from their panel, the first choice
    each turn (the computers play the other seats); ``before_last_turn()`` runs just
    before their last card."""
    from tests.e2e.test_take6 import card_buttons, open_panel, row_buttons

    seat = table.seat_of(person.id)
    for _ in range(100):
        if table.status != "playing":
            break
        if seat in table.engine.to_act:
            if before_last_turn is not None and len(table.engine.view(seat)["hand"]) == 1:
                await before_last_turn()
            panel = await open_panel(tbl, person)
            choice = (row_buttons(panel) or card_buttons(panel))[0]
            await panel_answer(await tbl.click(person, panel, choice["custom_id"]))  # (new rows: a new picture)
        else:
            await fd.wait_for(lambda: table.status != "playing" or seat in table.engine.to_act, timeout=10)


async def test_take6_replay_through_simultaneous_turns(world, tmp_path):
    """A game where everyone chooses at once replays one choice per page: the
    hands as the engine holds them, and the same story the thread told."""
    from core.games.take6.engine import Take6

    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        tbl, table = await started(world, bot, [ana], "take6 new", computers=2, deals=1, turn_time=0)
        await check_commitment_during_play(fd, world, tbl, ana, table.seed)
        await play_take6_out(fd, tbl, table, ana)
        await fd.wait_for(lambda: button(tbl.lobby, r"rply:\d+:0:o"), timeout=10)
        seed, nonce, sha = revealed(tbl.lobby.text())
        assert sha == sha256_of("take6", tbl.table_id, seed, nonce)
        record = await bot.store.table(tbl.table_id)
        log = list(record.actions)
        options = record.meta["shuffle"]["options"]
        story = await page_through(fd, ana, tbl, Take6, 3, seed, options, log, hands=True)
        assert story == thread_story(fd, tbl, "take6")


async def test_the_standings_wait_for_a_slow_recording_and_come_with_replay(world, tmp_path):
    """A database that takes a moment to record the result (a busy disk) while the table
    message's redraw of the last turn waits out a rate limit: the lobby shows the final
    standings only once the game is recorded, with Replay and Verify under them."""
    import asyncio


    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        record_game = bot.store.record_game

        async def slow_record(record: GameRecord) -> Any:
            await asyncio.sleep(2.0)
            return await record_game(record)

        bot.store.record_game = slow_record
        tbl, table = await started(world, bot, [ana], "take6 new", computers=2, deals=1, turn_time=0)
        async def last_turn() -> None:
            # its redraw of the table message (through the token of ana's click, or an edit)
            # is told to wait a second
            fd.fail_next("PATCH", r"^/(webhooks/\d+/[^/]+/messages/@original|channels/\d+/messages/\d+)$",
                         status=429, retry_after=1.0)

        await play_take6_out(fd, tbl, table, ana, last_turn)
        assert table.status == "finished"
        finished = t("en", "table.finished")
        await fd.wait_for(lambda: finished in tbl.lobby.text(), timeout=10)
        assert button(tbl.lobby, r"rply:\d+:0:o") and button(tbl.lobby, r"vrfy:\d+"), tbl.lobby.buttons()
        assert fd.clear_failures() == 0  # the last redraw did wait out its 429


async def test_the_thread_tells_the_end_before_the_lobby_shows_the_standings(world, tmp_path):
    """The last turn's narration is slow to post (Discord fails it once; discord.py tries
    again a second later): the lobby's final standings wait for the thread's "Game over!"."""

    fd = world.fd
    ana = world.person("ana")
    told_first: list[bool] = []  # at each edit of the lobby that shows the standings: was the end told?

    def watch(message: Any, kind: str) -> None:
        if kind == "edit" and message.id == tbl.lobby.id and t("en", "table.finished") in message.text():
            told_first.append("Game over!" in tbl.log_text())

    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        tbl, table = await started(world, bot, [ana], "take6 new", computers=2, deals=1, turn_time=0)
        fd.message_listeners.append(watch)
        async def last_turn() -> None:
            # once its ping is out: its narration will fail once
            await fd.wait_for(lambda: ana.id in fd.messages(tbl.thread)[-1].mentions, timeout=10)
            fd.fail_next("POST", rf"/channels/{tbl.thread.id}/messages$", status=500)

        await play_take6_out(fd, tbl, table, ana, last_turn)
        await fd.wait_for(lambda: told_first, timeout=10)
        assert told_first == [True]
        assert fd.clear_failures() == 0  # the end's narration did fail once
