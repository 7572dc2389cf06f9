"""Stats, leaderboards and history end to end: games finished through clicks
(and many more seeded straight into the store as setup) show up in
``/stats``, ``/leaderboard`` and ``/history`` as a player sees them."""
from __future__ import annotations

import re
import time
from typing import Any

import pytest

from app.i18n.catalogue import t
from app.store import MIN_GAMES, GameRecord, PlayerResult
from tests.e2e import Table, description, footer, play_nimmt, running_bot, select, start_table

pytestmark = pytest.mark.timeout(600)




async def full_game(fd: Any, channel: Any, host: Any, others: list[Any], *, computers: int = 0,
                    langs: dict[int, str] | None = None, table_lang: str = "en",
                    while_playing: Any = None) -> Table:
    """Open a 1-round table, seat everyone, start, play it to the end."""
    langs = langs or {}
    seats = 1 + len(others) + computers
    t_ = await start_table(fd, channel, host, others, computers=computers, seats=seats, rounds=1, turn_time=0)
    if while_playing is not None:
        await while_playing(t_)
    await play_nimmt(fd, t_, {u: langs.get(u.id, "en") for u in [host, *others]}, table_lang)
    return t_


def final_standings(t_: Table, table_lang: str = "en") -> dict[str, tuple[int, int]]:
    """name -> (place, score), read from the lobby message's final standings."""
    text = t_.lobby.text()
    marker = t(table_lang, "table.finished")
    assert marker in text, text
    out = {}
    for line in text.split(marker, 1)[1].splitlines():
        m = re.fullmatch(r"(\d+)\. (.+) — (-?\d+)", line.strip())
        if m:
            out[m.group(2).replace("\\", "")] = (int(m.group(1)), int(m.group(3)))
    return out


# --------------------------------------------------------------------------- looking
async def answer(result: Any) -> Any:
    """The message a user ends up seeing for a slash command or click."""
    await result.settled(timeout=10)
    if result.followups:
        return result.followups[0]
    return result.message


BOARD_ROW = re.compile(r"(\*\*)?(\d+)\. (.+?) — (\S+) \((\d+) games?\)(\*\*)?")


def board_rows(message: Any) -> list[tuple[int, str, str, int, bool]]:
    """(rank, name, value, games, bold) per line of a leaderboard embed."""
    rows = []
    for line in description(message).splitlines():
        m = BOARD_ROW.fullmatch(line)
        assert m, line
        rows.append((int(m.group(2)), m.group(3).replace("\\", ""), m.group(4), int(m.group(5)),
                     bool(m.group(1))))
    return rows


async def read_board(fd: Any, user: Any, channel: Any, **options: Any) -> list[Any]:
    """Run /leaderboard and page through it with Next to the end, then back to
    the start with Previous; returns the messages seen going forward."""
    r = await fd.slash(user, channel, "leaderboard", **options)
    assert r.ack_type == 4 and r.ephemeral, r
    message = r.message
    pages = [message.embeds[0]]
    seen = [board_rows(message)]
    footers = [footer(message)]
    while True:
        ids = [b for b in message.buttons() if b["custom_id"].startswith("lb:")]
        assert len(ids) == 2, ids
        prev_b, next_b = ids
        if next_b["disabled"]:
            break
        r = await fd.click(user, message, next_b["custom_id"])
        assert r.ack_type == 7 and r.ephemeral, r
        message = r.message
        pages.append(message.embeds[0])
        seen.append(board_rows(message))
        footers.append(footer(message))
    # ... and back again with Previous: the same pages, in reverse.
    for index in range(len(pages) - 2, -1, -1):
        prev_b = [b for b in message.buttons() if b["custom_id"].startswith("lb:")][0]
        r = await fd.click(user, message, prev_b["custom_id"])
        assert r.ack_type == 7, r
        message = r.message
        assert board_rows(message) == seen[index]
    assert [b["disabled"] for b in message.buttons() if b["custom_id"].startswith("lb:")][0] is True
    return list(zip(seen, footers, pages))


# --------------------------------------------------------------------------- seeding
class Seeder:
    """Writes synthetic finished games straight into the store (test setup)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.table_id = 10_000_000
        self.now = time.time() - 86_400

    async def game(self, guild_id: int, channel_id: int, players: list[tuple[int, str]],
                   *, rated: bool = True, game: str = "nimmt") -> None:
        """``players`` in finishing order (first wins); 2 penalty points per place."""
        self.table_id += 1
        self.now += 60
        results = [PlayerResult(user_id=uid, name=name, seat=i, score=2 * i, place=i + 1,
                                stats={"penalty_rounds": 1, "rounds_won": int(i == 0), "bulls_earned": 1}
                                if game == "nimmt" else {"hands_won": 2 - i})
                   for i, (uid, name) in enumerate(players)]
        made = await self.store.record_game(GameRecord(
            table_id=self.table_id, guild_id=guild_id, channel_id=channel_id, game=game,
            started_at=self.now - 30, ended_at=self.now, seed=1, rounds=1, has_bots=False, rated=rated,
            players=results))
        assert made is not None


SYNTH = 900_000_000_000_000_000  # synthetic user ids, far from the stand-in's


# --------------------------------------------------------------------------- tests
async def test_stats_history_and_boards(world, tmp_path):
    """A real game between two people lands once in /stats and /history (with
    its final standings); seeded games fill the boards, which page with
    buttons, show the caller's rank off the page, keep players below the
    minimum off the rate boards, and tell this server from all servers."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    zoe = world.person("zoe")
    guild2 = fd.add_guild("Other Night", locale="en-US")
    chan2 = fd.add_channel(guild2, "cards")
    for user in (ana, zoe):
        fd.add_member(guild2, user)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        # -- nothing yet
        r = await fd.slash(ana, world.channel, "stats")
        msg = await answer(r)
        assert msg.ephemeral_to == ana.id
        assert msg.text() == t("en", "stats.no_games_any", name="ana")  # no game named: none assumed
        r = await fd.slash(ana, world.channel, "stats", game="take6")
        assert (await answer(r)).text() == t("en", "stats.no_games", name="ana", game="6 nimmt!")
        r = await fd.slash(ana, world.channel, "history")
        assert r.ephemeral and t("en", "guard.no_history", name="ana") in r.message.text()

        # -- one real game, through clicks
        game = await full_game(fd, world.channel, ana, [ben])
        standings = final_standings(game)
        assert set(standings) == {"ana", "ben"}
        log = game.log_text()

        def figures(name: str) -> dict[str, Any]:
            place, score = standings[name]
            bulls = sum(1 for line in log.splitlines()
                        if line.startswith((f"**{name}** receives a bull card", f"**{name}** takes a bull card")))
            out = re.search(r"Round 1 is over: \*\*(\w+)\*\*", log)
            return {"place": place, "score": score, "bulls": bulls,
                    "rounds_won": int(out is not None and out.group(1) == name)}

        for user in (ana, ben):
            f = figures(user.name)
            r = await fd.slash(ana, world.channel, "stats", **({} if user is ana else {"user": user}))
            assert r.ack_type == 5 and r.ephemeral
            msg = await answer(r)
            text = msg.text()
            won = int(f["place"] == 1)
            assert t("en", "stats.title", name=user.name, game="11 nimmt!") in text
            assert t("en", "stats.games", games=1, wins=won, rate=f"{100 * won}%") in text
            assert t("en", "stats.nimmt_line", avg=f"{f['score']:.1f}", rounds=f["rounds_won"],
                     bulls=f["bulls"]) in text, (text, log)
            # rated (two people), but not ranked before the minimum number of games
            assert re.search(r"Rating: -?\d+\.\d \(skill \d+\.\d ± \d+\.\d\) · on the rating board after "
                             rf"{MIN_GAMES - 1} more games", text), text
            assert t("en", "stats.this_server") in text
            png = [a for a in msg.attachments if a["filename"] == "profile.png"]
            assert png and png[0]["data"].startswith(b"\x89PNG")
            assert msg.embeds[0]["image"]["url"].endswith("profile.png")

        # /history: the game once, and its detail shows the final standings
        r = await fd.slash(ben, world.channel, "history")
        assert r.ack_type == 4 and r.ephemeral
        lines = description(r.message).splitlines()
        assert len(lines) == 1, lines
        place, score = standings["ben"]
        assert re.fullmatch(rf"11 nimmt!, <t:\d+:d>: place {place} of 2 \({score}\)", lines[0]), lines
        pick = select(r.message, r"hist:\d+")
        assert len(pick["options"]) == 1
        r = await fd.select(ben, r.message, pick["custom_id"], [pick["options"][0]["value"]])
        assert r.ephemeral
        detail = await answer(r)
        assert detail.ephemeral_to == ben.id
        shown = {m.group(2): (int(m.group(1)), int(m.group(3))) for m in
                 (re.fullmatch(r"(\d+)\. (.+) — (-?\d+)", line) for line in description(detail).splitlines()) if m}
        assert shown == standings
        fields = {f["name"]: f["value"] for f in detail.embeds[0]["fields"]}
        assert fields["Rounds"] == "1"

        # -- seeded data: 24 players with 5+ games here, zoe with 3 here and 3 elsewhere,
        #    a player with 4 games, and players only in the other server
        seed = Seeder(bot.store)
        g1, c1, g2, c2 = world.guild.id, world.channel.id, guild2.id, chan2.id
        synth = [(SYNTH + i, f"player{i:02d}") for i in range(24)]
        for round_ in range(6):
            for i in range(0, 24, 2):
                a, b = synth[i], synth[i + 1]
                order = [a, b] if (i // 2 + round_) % 3 else [b, a]
                await seed.game(g1, c1, order)
        few = (SYNTH + 100, "fewgames")
        for k in range(4):
            await seed.game(g1, c1, [few, synth[k]])
        for k in range(3):
            await seed.game(g1, c1, [synth[k], (zoe.id, "zoe")])
            await seed.game(g2, c2, [(zoe.id, "zoe"), (SYNTH + 200 + k, f"far{k}")])
        far = [(SYNTH + 300 + i, f"faraway{i}") for i in range(6)]
        for round_ in range(5):
            for i in range(0, 6, 2):
                await seed.game(g2, c2, [far[i], far[i + 1]])

        # expected counts, per scope, for the board everyone sees the same way
        games_here: dict[str, int] = {}
        wins_here: dict[str, int] = {}
        games_all: dict[str, int] = {}
        for record in await _all_games(bot):
            for p in record["players"]:
                games_all[p["name"]] = games_all.get(p["name"], 0) + 1
                if record["guild_id"] == g1:
                    games_here[p["name"]] = games_here.get(p["name"], 0) + 1
                    wins_here[p["name"]] = wins_here.get(p["name"], 0) + (p["place"] == 1)

        # /leaderboard by games, this server: paged by 10, rank order, zoe bold where she is
        pages = await read_board(fd, zoe, world.channel, by="games")
        rows = [row for page_rows, _, _ in pages for row in page_rows]
        # equal counts share a place: one plus the players with more games ("1, 1, 1, 4")
        assert [row[0] for row in rows] == [1 + sum(other > row[3] for other in games_here.values())
                                            for row in rows]
        assert len(set(row[0] for row in rows)) < len(rows)  # (some share one)
        assert {row[1]: row[3] for row in rows} == games_here
        assert all(len(page_rows) == 10 for page_rows, _, _ in pages[:-1])
        assert len(pages) == -(-len(games_here) // 10) >= 3
        assert [int(v) for _, _, v, _, _ in rows] == sorted((int(v) for _, _, v, _, _ in rows), reverse=True)
        zoe_rank = next(rank for rank, name, *_ , bold in rows if name == "zoe")
        assert [bold for _, name, *_ , bold in rows] == [name == "zoe" for _, name, *_ in rows]
        for number, (_, foot, _) in enumerate(pages, start=1):
            assert f"Page {number}/{len(pages)}" in foot
            # the caller's own rank is in the footer of every page, on it or not
            assert t("en", "stats.your_rank", rank=zoe_rank) in foot
        assert zoe_rank > 10  # so page 1 shows her rank without her row

        # by wins: same players, ordered by wins
        pages = await read_board(fd, ana, world.channel, by="wins")
        rows = [row for page_rows, _, _ in pages for row in page_rows]
        assert {row[1]: int(row[2]) for row in rows} == wins_here
        assert [int(row[2]) for row in rows] == sorted(wins_here.values(), reverse=True)

        # by win rate: only players with at least 5 games here
        pages = await read_board(fd, zoe, world.channel, by="win_rate")
        rows = [row for page_rows, _, _ in pages for row in page_rows]
        eligible = {name for name, count in games_here.items() if count >= 5}
        assert {row[1] for row in rows} == eligible
        assert "fewgames" not in eligible and "zoe" not in eligible and "ana" not in eligible
        for _, foot, _ in pages:
            assert t("en", "stats.not_ranked") in foot
            assert t("en", "stats.min_games", count=5) in foot
        rates = [int(row[2].rstrip("%")) for row in rows]
        assert rates == sorted(rates, reverse=True)
        for rank, name, value, games, _ in rows:
            assert value == f"{100 * wins_here[name] / games_here[name]:.0f}%"

        # by rating: rated players with 5+ games; fewgames is only on the counting boards
        pages = await read_board(fd, ana, world.channel, by="rating")
        rows = [row for page_rows, _, _ in pages for row in page_rows]
        assert {row[1] for row in rows} == eligible
        ratings = [float(row[2]) for row in rows]
        assert ratings == sorted(ratings, reverse=True)

        # global: zoe has 6 games in all and is on the win-rate board; the far-away
        # players show up; counts are the sums over both servers
        pages = await read_board(fd, zoe, world.channel, by="win_rate", scope="global")
        rows = [row for page_rows, _, _ in pages for row in page_rows]
        assert {row[1] for row in rows} == {name for name, count in games_all.items() if count >= 5}
        assert "zoe" in {row[1] for row in rows} and "faraway0" in {row[1] for row in rows}
        zoe_row = next(row for row in rows if row[1] == "zoe")
        assert zoe_row[3] == 6 and zoe_row[4]
        assert t("en", "stats.your_rank", rank=zoe_row[0]) in pages[0][1]
        assert "all servers" in pages[0][2]["title"]

        # /stats in this server: the global figures (with the global rating rank)
        # plus this server's (too few games here to be ranked)
        pages = await read_board(fd, zoe, world.channel, by="rating", scope="global")
        zoe_rating = next(row for page_rows, _, _ in pages for row in page_rows if row[1] == "zoe")
        r = await fd.slash(zoe, world.channel, "stats")
        text = (await answer(r)).text()
        everywhere, here = text.split(t("en", "stats.this_server"))
        assert t("en", "stats.games", games=6, wins=3, rate="50%") in everywhere
        assert f"Rating: {zoe_rating[2]} " in everywhere and f"· rank {zoe_rating[0]}" in everywhere
        assert t("en", "stats.games", games=3, wins=0, rate="0%") in here
        assert "· on the rating board after 2 more games" in here

        # -- the other server (its commands come with the owner's /sync)
        r = await fd.slash(fd.owner, world.channel, "sync")
        assert "Published" in (await answer(r)).text()
        pages = await read_board(fd, zoe, chan2, by="games")
        rows = [row for page_rows, _, _ in pages for row in page_rows]
        assert {row[1] for row in rows} == {"zoe", "far0", "far1", "far2", *(n for _, n in far)}
        assert next(row for row in rows if row[1] == "zoe")[3] == 3
        assert "this server" in pages[0][2]["title"]
        r = await fd.slash(zoe, chan2, "stats")
        text = (await answer(r)).text()
        assert t("en", "stats.games", games=6, wins=3, rate="50%") in text
        assert t("en", "stats.games", games=3, wins=3, rate="100%") in text
        r = await fd.slash(ana, chan2, "leaderboard", by="games")
        assert t("en", "stats.not_ranked") in footer(r.message)

        # Garbage has its own figures: hands won
        for _ in range(2):
            await seed.game(g1, c1, [(zoe.id, "zoe"), synth[0]], game="garbage")
        r = await fd.slash(zoe, world.channel, "stats", game="garbage")
        text = (await answer(r)).text()
        assert t("en", "stats.title", name="zoe", game="Garbage") in text
        assert t("en", "stats.games", games=2, wins=2, rate="100%") in text
        assert t("en", "stats.garbage_line", hands=4) in text and "Penalty" not in text
        r = await fd.slash(zoe, world.channel, "leaderboard", game="garbage", scope="server", by="wins")
        assert r.message.embeds[0]["title"] == t("en", "stats.board_title", game="Garbage", scope="this server",
                                                 by="wins")
        assert [row[:4] for row in board_rows(r.message)] == [(1, "zoe", "2", 2), (2, "player00", "0", 2)]
        assert t("en", "stats.your_rank", rank=1) in footer(r.message)
        r = await fd.slash(ana, world.channel, "stats", game="garbage")
        assert t("en", "stats.no_games", name="ana", game="Garbage") in (await answer(r)).text()
        assert "Also played: 11 nimmt!" in (await answer(r)).text()  # what ana did play, and how to ask
        # without game: zoe's card is of the game she played last (Garbage), with the others named
        r = await fd.slash(zoe, world.channel, "stats")
        msg = await answer(r)
        assert t("en", "stats.title", name="zoe", game="Garbage") in msg.text()
        assert msg.embeds[0]["footer"]["text"] == t("en", "stats.also_played", games="11 nimmt!", option="game",
                                                    command="/stats")

        # a Spanish reader sees the same boards in Spanish
        sofia = world.person("sofia", locale="es-ES")
        r = await fd.slash(sofia, world.channel, "leaderboard", by="wins")
        assert r.message.embeds[0]["title"] == t("es", "stats.board_title", game="11 nimmt!",
                                                 scope=t("es", "stats.server"), by=t("es", "stats.by_wins"))
        assert t("es", "stats.not_ranked") in footer(r.message)
        assert t("es", "stats.page", page=1, pages=3) in footer(r.message)
        assert "partidas)" in description(r.message)
        assert [b["label"] for b in r.message.buttons()] == [t("es", "pager.previous"), t("es", "pager.next")]
        r = await fd.slash(sofia, world.channel, "stats", user=zoe, game="nimmt")
        text = (await answer(r)).text()
        assert t("es", "stats.games", games=6, wins=3, rate="50 %") in text and t("es", "stats.this_server") in text
        # numbers the Spanish way: decimal comma
        assert re.search(r"Valoración: -?\d+,\d \(habilidad \d+,\d ± \d+,\d\) · puesto \d+", text), text
        r = await fd.slash(sofia, world.channel, "leaderboard", by="win_rate", scope="global")
        assert re.search(r"^1\. \S+ — \d+ % \(", description(r.message)), description(r.message)
        r = await fd.slash(sofia, world.channel, "leaderboard", by="rating")
        assert all(re.search(r" — -?\d+,\d \(\d+ partidas\)", line) for line in description(r.message).splitlines())
        r = await fd.slash(sofia, world.channel, "history", user=ben)
        assert r.message.embeds[0]["title"] == t("es", "guard.history_title", name="ben")
        assert select(r.message, r"hist:\d+")["placeholder"] == t("es", "stats.history_pick")

        # the real game is still recorded once: once in the history, once in the counts
        r = await fd.slash(ana, world.channel, "history")
        assert len(description(r.message).splitlines()) == 1
        r = await fd.slash(ana, world.channel, "stats")
        assert "Games: 1 ·" in (await answer(r)).text()


async def _all_games(bot: Any) -> list[dict[str, Any]]:
    """Every recorded game with its standings (verification only)."""
    out: list[dict[str, Any]] = []
    game_id = 1
    while True:
        detail = await bot.store.game_detail(game_id)
        if detail is None:
            return out
        out.append({"guild_id": detail["guild_id"], "players": detail["standings"]})
        game_id += 1


async def test_computer_games_rated_only_when_the_server_says(world, tmp_path):
    """A game with a computer player is unrated by default; a member without
    Manage Server cannot change that; after a manager's
    ``/settings rated_computers enabled:True`` the next one is rated."""
    fd = world.fd
    cara = world.person("cara")
    ben = world.person("ben")
    max_ = world.person("max", manage_guild=True)
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        game = await full_game(fd, world.channel, cara, [], computers=1)
        standings = final_standings(game)
        assert len(standings) == 2 and "cara" in standings
        r = await fd.slash(cara, world.channel, "stats")
        text = (await answer(r)).text()
        assert "Games: 1 ·" in text and "Rating:" not in text
        # not rated, and why: this server's setting (and the command that changes it)
        setting = t("en", "stats.unrated_computers_here", command="/settings rated_computers")
        assert t("en", "stats.unrated_why", count=1, why=setting) in text

        # the history detail marks the computer
        r = await fd.slash(cara, world.channel, "history")
        pick = select(r.message, r"hist:\d+")
        r = await fd.select(cara, r.message, pick["custom_id"], [pick["options"][0]["value"]])
        detail = description(await answer(r))
        assert "🤖" in detail and "cara" in detail

        # a member without Manage Server is refused, privately
        r = await fd.slash(ben, world.channel, "settings rated_computers", enabled=True)
        assert r.ack_type == 4 and r.ephemeral
        assert r.message.text() == t("en", "errors.manage_guild_only")
        assert r.message.ephemeral_to == ben.id

        game = await full_game(fd, world.channel, cara, [], computers=1)
        r = await fd.slash(cara, world.channel, "stats")
        text = (await answer(r)).text()
        assert "Games: 2 ·" in text and t("en", "stats.unrated_why", count=2, why=setting) in text
        assert "none of the 2 games finished was rated" in text

        # a manager turns it on: the next game with a computer counts
        r = await fd.slash(max_, world.channel, "settings rated_computers", enabled=True)
        assert r.ephemeral and r.message.text() == t("en", "admin.rated_on")
        game = await full_game(fd, world.channel, cara, [], computers=1)
        r = await fd.slash(cara, world.channel, "stats")
        text = (await answer(r)).text()
        assert "Games: 3 ·" in text
        # rated now, and not on the board until MIN_GAMES games: it says how many more
        assert re.search(r"Rating: -?\d+\.\d \(skill \d+\.\d ± \d+\.\d\) · on the rating board after "
                         rf"{MIN_GAMES - 3} more games", text), text
        assert "Not rated yet" not in text

        # computer players are never on a board, rated game or not
        for by in ("games", "wins"):
            r = await fd.slash(cara, world.channel, "leaderboard", by=by)
            assert [row[1] for row in board_rows(r.message)] == ["cara"]
            assert t("en", "stats.your_rank", rank=1) in footer(r.message)

        # and off again
        r = await fd.slash(max_, world.channel, "settings rated_computers", enabled=False)
        assert r.ephemeral and r.message.text() == t("en", "admin.rated_off")
        assert [g["rated"] for g in [await bot.store.game_detail(i) for i in (1, 2, 3)]] == [False, False, True]

    # after a restart every game is still there exactly once
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        r = await fd.slash(cara, world.channel, "stats")
        assert "Games: 3 ·" in (await answer(r)).text()
        r = await fd.slash(cara, world.channel, "history")
        assert len(description(r.message).splitlines()) == 3
        assert len(select(r.message, r"hist:\d+")["options"]) == 3


async def test_board_buttons_and_history_select_survive_a_restart(world, tmp_path):
    """Leaderboard paging and the history select are persistent: clicked on
    a message from before a restart, they still answer."""
    fd = world.fd
    zoe = world.person("zoe", locale="de")
    odd = world.person("odd_*name*")
    players = [(SYNTH + i, f"p{i}") for i in range(14)] + [(zoe.id, "zoe")]
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        seed = Seeder(bot.store)
        for i in range(0, 14, 2):
            await seed.game(world.guild.id, world.channel.id, [players[i], players[i + 1]])
        await seed.game(world.guild.id, world.channel.id, [players[0], (zoe.id, "zoe")])
        # a name with markdown characters is shown as written
        r = await fd.slash(odd, world.channel, "stats")
        assert (await answer(r)).text() == t("en", "stats.no_games_any", name=r"odd\_\*name\*")
        board = (await fd.slash(zoe, world.channel, "leaderboard", by="games")).message
        history = (await fd.slash(zoe, world.channel, "history")).message
        assert t("de", "stats.page", page=1, pages=2) in footer(board)
    async with running_bot(fd, tmp_path / "bot.db", world.guild):
        nxt = [b for b in board.buttons() if b["custom_id"].startswith("lb:")][1]
        r = await fd.click(zoe, board, nxt["custom_id"])
        assert r.ack_type == 7, r
        assert t("de", "stats.page", page=2, pages=2) in footer(r.message)
        rows = board_rows_any(r.message)
        # p0 has 2 games, everyone else 1: they share the 2nd place (listed by id), zoe is
        # last, bold, on this page
        assert [rank for rank, *_ in rows] == [2] * 5
        assert t("de", "stats.your_rank", rank=2) in footer(r.message)
        assert rows[-1][1].startswith("zoe — 1 ") and rows[-1][1].endswith("**")
        pick = select(history, r"hist:\d+")
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC · \d+", pick["options"][0]["description"])
        r = await fd.select(zoe, history, pick["custom_id"], [pick["options"][0]["value"]])
        detail = await answer(r)
        assert detail.embeds[0]["title"].startswith("11 nimmt! — ")
        assert "zoe" in description(detail) and "p0" in description(detail)


def board_rows_any(message: Any) -> list[tuple[int, str]]:
    """(rank, rest) per line of a leaderboard in any language."""
    out = []
    for line in description(message).splitlines():
        m = re.fullmatch(r"(?:\*\*)?(\d+)\. (.+)", line)
        assert m, line
        out.append((int(m.group(1)), m.group(2)))
    return out


async def test_stats_answer_even_when_the_card_cannot_be_drawn(world, tmp_path):
    """A display name the image renderer chokes on (a paragraph separator)
    still gets its figures from /stats instead of an endless "thinking"."""
    fd = world.fd
    odd = world.person("para\u2029graph")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        await Seeder(bot.store).game(world.guild.id, world.channel.id,
                                     [(odd.id, "para\u2029graph"), (SYNTH, "other")])
        r = await fd.slash(odd, world.channel, "stats")
        assert r.ack_type == 5 and r.ephemeral
        text = (await answer(r)).text()
        assert t("en", "stats.games", games=1, wins=1, rate="100%") in text


async def test_stats_whose_answer_failed_after_it_landed_shows_once(world, tmp_path):
    """/stats answers "thinking" first and then its card; Discord carries the card out and
    only its answer fails (a 502 of its edge): discord.py sends it again, and the player
    still sees their stats once (the card fills the "thinking" message by an edit, which
    sent again changes nothing; a followup sent again was a second card)."""
    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        await Seeder(bot.store).game(world.guild.id, world.channel.id, [(ana.id, "ana"), (SYNTH, "other")])
        since = len(fd.requests)
        fd.fail_next("*", r"/webhooks/\d+/[^/]+(/messages/@original)?$", status=502, after=True)
        r = await fd.slash(ana, world.channel, "stats")
        assert r.ack_type == 5 and r.ephemeral
        figures = t("en", "stats.games", games=1, wins=1, rate="100%")
        assert figures in (await answer(r)).text()
        # discord.py sends it again (after a second): once that is carried out too...
        await fd.wait_for(lambda: [q.status for q in fd.requests[since:] if q.path.startswith("/webhooks/")]
                          == [502, 200], timeout=15)
        # ... the player has one answer with their stats
        assert [m.id for m in fd.ephemerals(ana) if figures in m.text()] == [r.message.id]
    fd.assert_clean()


async def test_my_place_jumps_to_the_page_with_your_line(world, tmp_path):
    """Far down a long board, *My place* opens the page with your own line
    (bold) instead of Next, Next, Next; it is offered only where the pager
    needs more than one click, and not to someone who is not on the board."""
    fd = world.fd
    ana, newcomer = world.person("ana"), world.person("newcomer")
    async with running_bot(fd, tmp_path / "bot.db", world.guild) as bot:
        seed = Seeder(bot.store)
        for i in range(34):  # 34 players with one win each over ana: she is 35th of 35, on page 4 of 4
            await seed.game(world.guild.id, world.channel.id, [(SYNTH + i, f"p{i:02d}"), (ana.id, "ana")])

        def my_place(message):
            return [b for b in message.buttons() if b["custom_id"].startswith("lbme:")]

        r = await fd.slash(ana, world.channel, "leaderboard", by="wins")
        assert footer(r.message).startswith("Page 1/4") and "Your rank: 35" in footer(r.message)
        (button,) = my_place(r.message)
        assert button["label"] == t("en", "stats.my_place")
        r = await fd.click(ana, r.message, button["custom_id"])
        assert r.ack_type == 7 and r.ephemeral and footer(r.message).startswith("Page 4/4")
        assert board_rows(r.message)[-1] == (35, "ana", "0", 34, True)
        assert not my_place(r.message)  # already there
        previous = [b for b in r.message.buttons() if b["custom_id"].startswith("lb:")][0]
        r = await fd.click(ana, r.message, previous["custom_id"])
        assert footer(r.message).startswith("Page 3/4") and not my_place(r.message)  # one click away: Next
        r = await fd.slash(newcomer, world.channel, "leaderboard", by="wins")
        assert "not on this board" in footer(r.message) and not my_place(r.message)
