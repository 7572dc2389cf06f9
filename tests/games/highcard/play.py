"""Play high card to the end through the Discord stand-in, with a test
registry that holds high card alone: ``python -m tests.games.highcard.play``.

The registry is chosen before anything else imports it (the store's game
codes, the command choices and custom_id patterns are read at import), so
this runs in a process of its own (test_highcard.py starts it).  A person
opens ``/highcard new``, adds a computer seat, starts, plays every card from
the private *Your cards* answer, then reads /stats, the replay and /verify.
Exits non-zero, with the failed check, if anything a player would notice is
wrong.
"""
from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path

from core import registry
from tests.games.highcard import SPEC
from tests.games.highcard.engine import HighCard

registry.use((SPEC,))

from cogs.games import installed  # noqa: E402
from tests.games.highcard.cog import HighCardCog  # noqa: E402  (after the registry: cogs read it at import)

installed.use((HighCardCog,))

from app.i18n.catalogue import t  # noqa: E402
from tests.conftest import make_world  # noqa: E402
from tests.e2e import button, open_table, running_bot, seat_players  # noqa: E402


def footer(message: object) -> str:
    embeds = getattr(message, "embeds", None) or []
    return (embeds[0].get("footer") or {}).get("text", "") if embeds else ""


def text_of(message: object) -> str:
    embeds = getattr(message, "embeds", None) or []
    return "\n".join([getattr(message, "content", "") or ""] + [
        f"{e.get('title', '')}\n{e.get('description', '')}\n" + "\n".join(
            f"{f.get('name', '')} {f.get('value', '')}" for f in e.get("fields", [])) for e in embeds])


async def play(folder: Path) -> None:
    async with make_world() as world:
        fd = world.fd
        ana = world.person("ana")
        async with running_bot(fd, folder / "bot.db", world.guild) as bot:
            table = await open_table(fd, ana, world.channel, "highcard new", seats=2)
            assert t("en", "highcard.title") in text_of(table.lobby), text_of(table.lobby)
            await seat_players(table, ana, [], computers=1)
            r = await table.click(ana, table.lobby, f"table.start:{table.table_id}")
            assert r.ack_type in (6, 7), r
            await table.wait_thread()
            live = bot.tables.get(table.table_id)
            assert live is not None
            seat = live.seat_of(ana.id)
            assert seat is not None

            def game() -> HighCard:
                assert live is not None and isinstance(live.engine, HighCard), live
                return live.engine

            for _ in range(10):  # three cards, one a trick
                await fd.wait_for(lambda: game().over or game().to_move == seat, timeout=10)
                if game().over:
                    break
                message = await fd.wait_for(
                    lambda: (m := table.table_message()) and button(m, rf"highcard\.hand:{table.table_id}") and m,
                    timeout=10)
                r = await table.click(ana, message, f"highcard.hand:{table.table_id}")  # Your cards, privately
                assert r.ack_type == 4 and r.ephemeral and r.message.ephemeral_to == ana.id, r
                cards = [b for b in r.message.buttons() if re.fullmatch(r"highcard\.play:\d+:\d+:\d+", b["custom_id"])]
                assert cards, r.message.buttons()
                played = await table.click(ana, r.message, cards[-1]["custom_id"])
                assert played.ack_type == 7, played
                assert played.message.content == t("en", "highcard.you_played", card=cards[-1]["label"])
            assert game().over, "the game did not end"
            result = game().result
            assert result is not None
            standing = t("en", "highcard.standing", place=result.places[seat], name="**ana**", count=result.scores[seat])
            await fd.wait_for(lambda: standing in table.log_text(), timeout=10)  # the thread tells the standings

            # stats recorded: the profile's line of the figures high card declares
            replay = await fd.wait_for(lambda: button(table.lobby, r"rply:\d+:0:o"), timeout=15)
            game_id = int(replay["custom_id"].split(":")[1])
            r = await fd.slash(ana, world.channel, "stats")
            if r.ack_type == 5:  # "thinking...": the profile card follows
                await r.settled(15)
            line = t("en", "highcard.stats_line", tricks=game().tricks[seat])
            assert line in text_of(r.message), text_of(r.message)
            print("stats:", line)

            # the replay, page by page from the deal to the last card
            record = await bot.store.table(table.table_id)
            assert record is not None
            moves = len(list(record.actions))
            r = await fd.click(ana, table.lobby, replay["custom_id"])
            assert r.ephemeral and footer(r.message) == t("en", "after.replay_footer", step=0, count=moves), r
            last = button(r.message, rf"rply:{game_id}:{moves}:l")
            assert r.message is not None and last is not None, r
            r = await fd.click(ana, r.message, last["custom_id"])
            assert footer(r.message) == t("en", "after.replay_footer", step=moves, count=moves)
            print("replay:", moves, "moves")

            # /verify: the revealed seed matches the commitment and the log replays to the result
            r = await fd.slash(ana, world.channel, "verify", game=game_id)
            if r.ack_type == 5:
                await r.settled(15)
            assert t("en", "after.verify_ok") in text_of(r.message), text_of(r.message)
            print("verify: ok")


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(play(Path(folder)))
    print("high card played to the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
