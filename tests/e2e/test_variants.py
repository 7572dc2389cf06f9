"""Table variants end to end: chosen with ``variant:`` (a game's own, declared in
its registry entry), shown on the lobby, the table, in ``/history``, the
replay and ``/verify`` (whose commitment names the variant), counted for
stats but not rated unless the server says so; a night plays its variant at
every table, and a variant the night's game does not declare is refused
privately."""
from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest

from app.i18n.catalogue import t
from tests.e2e import button, open_table, running_bot, seat_players, updated
from tests.e2e.test_after import game_id_from_history
from tests.e2e.test_night import signed_up_night

pytestmark = pytest.mark.timeout(300)

FAST = {"computer_delay": 0.01, "time_scale": 0.02, "table_seed": 11}
TACTICAL = t("en", "table.variant_line", variant=t("en", "take6.variant_tactical"),
             info=t("en", "take6.variant_tactical_info"))


async def test_a_tactical_6_nimmt_table_from_lobby_to_verify(world, tmp_path):
    fd = world.fd
    ana = world.person("ana")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        table = await open_table(fd, ana, world.channel, "take6 new", seats=3, deals=1, turn_time=1,
                                 variant="tactical")
        assert TACTICAL in table.lobby.text()
        await seat_players(table, ana, [], computers=2)
        await updated(await table.click(ana, table.lobby, f"table.start:{table.table_id}"))
        live = bot.tables.get(table.table_id)
        assert live.engine.cards == 34 and live.engine.options["variant"] == "tactical"
        await table.wait_thread()
        shown = await fd.wait_for(table.table_message, timeout=10)
        assert TACTICAL in shown.text()
        # ana lets the turn timer play for her; the computers play their seats
        await fd.wait_for(lambda: t("en", "table.finished") in fd.message(table.lobby.id).text(), timeout=120)
        lobby = fd.message(table.lobby.id)
        await fd.wait_for(lambda: button(lobby, r"rply:\d+:0:o"), timeout=10)

        game_id, picked = await game_id_from_history(fd, ana, world.channel)
        r = await fd.slash(ana, world.channel, "history")
        assert f"6 nimmt! ({t('en', 'take6.variant_tactical')})" in r.message.text()
        detail = await bot.store.game_detail(game_id)
        assert detail is not None and detail["rated"] is False  # counted, not on the rating boards
        r = await fd.slash(ana, world.channel, "verify", game=game_id)
        await r.settled()
        text = (r.followups[0] if r.followups else r.message).text()
        assert t("en", "after.verify_ok") in text and TACTICAL in text
        record = await bot.store.table(table.table_id)
        shuffle = record.meta["shuffle"]
        preimage = f"cardnight-shuffle-v1|take6+tactical|{table.table_id}|{record.meta['seed']}|{shuffle['nonce']}"
        assert shuffle["variant"] == "tactical" and hashlib.sha256(preimage.encode()).hexdigest() == shuffle["sha256"]
        assert preimage in text
        r = await fd.click(ana, picked, button(picked, rf"rply:{game_id}:0:o")["custom_id"])  # the replay
        assert r.ephemeral and TACTICAL in r.message.text()


async def test_a_night_plays_its_variant_and_refuses_one_its_game_lacks(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", variant="tactical")
        assert r.ephemeral and t("en", "nights.error_bad_variant") in r.message.text()
        assert not fd.messages(world.channel)  # nothing was opened
        short = t("en", "table.variant_line", variant=t("en", "garbage.variant_short"),
                  info=t("en", "garbage.variant_short_info"))
        signup, night_id = await signed_up_night(fd, world, ana, [ben], game="garbage", variant="short",
                                                 turn_time=0)
        assert short in signup.text()
        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        night = bot.nights.nights[night_id]
        await fd.wait_for(lambda: night.playing_tables() and all(
            (tb := bot.tables.get(nt.table_id)) is not None and tb.engine is not None
            for nt in night.playing_tables()), timeout=20)
        for nt in night.playing_tables():
            table = bot.tables.get(nt.table_id)
            assert table.options["variant"] == "short" and table.engine.slots == [5, 5]
        lobby_ids = [m for m in fd.messages(world.channel) if re.search(r"round 1, table \d+", m.content or "")]
        assert lobby_ids and all(short in m.text() for m in lobby_ids)


async def test_the_host_picks_the_variant_in_the_lobby(world, tmp_path):
    """The lobby's Variant button goes round the standard game and the game's own variants,
    for the host only; a forged pick of another game's variant or of none at all is refused privately."""
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        table = await open_table(fd, ana, world.channel, "garbage new", seats=2, turn_time=0)
        pick = f"table.variant:{table.table_id}:short"
        assert button(table.lobby, re.escape(pick))["label"] == t("en", "table.variant_pick",
                                                                   variant=t("en", "table.variant_standard"))
        r = await fd.click(ben, table.lobby, pick)
        assert r.ephemeral and t("en", "errors.host_only") in r.message.text()
        r = await fd.click(ana, table.lobby, pick)
        assert r.ack_type == 7
        short = t("en", "table.variant_line", variant=t("en", "garbage.variant_short"),
                  info=t("en", "garbage.variant_short_info"))
        assert short in r.message.text() and bot.tables.get(table.table_id).options["variant"] == "short"
        assert button(r.message, rf"table.variant:{table.table_id}:standard")  # round to the standard game
        for forged in ("tactical", "nonsense"):  # 6 nimmt!'s, and none at all
            r = await fd.forge(ana, table.lobby, f"table.variant:{table.table_id}:{forged}")
            assert r.ephemeral and bot.tables.get(table.table_id).options["variant"] == "short"
        await seat_players(table, ana, [ben])
        await updated(await table.click(ana, table.lobby, f"table.start:{table.table_id}"))
        assert bot.tables.get(table.table_id).engine.slots == [5, 5]


async def test_a_server_that_opts_in_rates_its_variant_games(world, tmp_path):
    """With ``/settings rated_variants`` (and, for a game with computers, ``rated_computers``)
    a variant's game is rated like a standard one; the same game before the opt-in was not."""
    fd = world.fd
    ana = world.person("ana")
    boss = world.person("boss", manage_guild=True)

    async def play_tactical(bot: Any) -> Any:
        table = await open_table(fd, ana, world.channel, "take6 new", seats=3, deals=1, turn_time=1,
                                 variant="tactical")
        await seat_players(table, ana, [], computers=2)
        await updated(await table.click(ana, table.lobby, f"table.start:{table.table_id}"))
        await fd.wait_for(lambda: t("en", "table.finished") in fd.message(table.lobby.id).text(), timeout=120)
        return await fd.wait_for(lambda: recorded(bot, table.table_id), timeout=20)

    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        r = await fd.slash(boss, world.channel, "settings rated_computers", enabled=True)
        assert r.ephemeral
        assert (await play_tactical(bot))["rated"] is False  # computers rated, variants not yet
        r = await fd.slash(boss, world.channel, "settings rated_variants", enabled=True)
        assert r.ephemeral and r.message.text() == t("en", "admin.variants_rated_on")
        assert (await play_tactical(bot))["rated"] is True



async def recorded(bot: Any, table_id: int) -> Any:
    """The recorded game of ``table_id`` once the store has it (None before)."""
    game_id = await bot.store.game_of_table(table_id)
    return None if game_id is None else await bot.store.game_detail(game_id)
