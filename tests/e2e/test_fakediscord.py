"""Tests of the Discord stand-in (tests/fakediscord) with a small, real discord.py bot running in-process."""
from __future__ import annotations

import asyncio
import datetime
import contextlib
import io
import os
import re
import subprocess
import sys
import time
from typing import Any, AsyncIterator, Dict, Optional, cast

import aiohttp
import discord
import pytest
from discord import app_commands
from discord.ext import commands

from tests.fakediscord import FakeDiscord, NoAcknowledgement
from tests.fakediscord.pytest_plugin import fake_discord  # noqa: F401  (fixture)

from tests import ROOT as REPO_ROOT


# --------------------------------------------------------------------------------------------- the test bot
class SeatButton(discord.ui.DynamicItem[discord.ui.Button], template=r"seat:(?P<table>[0-9]+):(?P<seat>[0-9]+)"):
    def __init__(self, table: int, seat: int, taken: bool = False) -> None:
        super().__init__(
            discord.ui.Button(label=f"Join seat {seat}", custom_id=f"seat:{table}:{seat}",
                              style=discord.ButtonStyle.primary, disabled=taken)
        )
        self.table = table
        self.seat = seat

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> "SeatButton":
        return cls(int(match["table"]), int(match["seat"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        bot = cast(GameBot, interaction.client)
        seats = bot.tables.setdefault(self.table, {})
        seats[self.seat] = interaction.user.id
        # mentions added by an edit never ping; say so explicitly (the stand-in flags it otherwise)
        await interaction.response.edit_message(content=render_table(self.table, seats),
                                                view=table_view(self.table, bot.table_sizes.get(self.table, 4), seats),
                                                allowed_mentions=discord.AllowedMentions.none())


def render_table(table: int, seats: dict) -> str:
    who = ", ".join(f"seat {s}: <@{u}>" for s, u in sorted(seats.items())) or "nobody yet"
    return f"Table {table} - {who}"


def table_view(table: int, size: int, seats: dict) -> discord.ui.View:
    v = discord.ui.View(timeout=None)
    for s in range(1, size + 1):
        v.add_item(SeatButton(table, s, taken=s in seats))
    return v


class HandView(discord.ui.View):
    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Play", custom_id="hand:play", style=discord.ButtonStyle.success)
    async def play(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.edit_message(content="You played.", view=None)

    @discord.ui.select(custom_id="hand:pick", min_values=1, max_values=2,
                       options=[discord.SelectOption(label=f"Card {n}", value=str(n)) for n in (3, 17, 55)])
    async def pick(self, interaction: discord.Interaction, select: discord.ui.Select) -> None:
        await interaction.response.send_message(f"picked {','.join(select.values)}", ephemeral=True)


class BoardView(discord.ui.View):
    """A public board whose button answers privately: a deferred update of the board (type 6),
    then the private part as an ephemeral followup (the "My hand" of a card game)."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Peek", custom_id="board:peek")
    async def peek(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.defer()
        private = await interaction.followup.send("only you see this", ephemeral=True, wait=True)
        cast(GameBot, interaction.client).peeks.append((interaction.followup, private.id))


class RenameModal(discord.ui.Modal, title="Rename table"):
    name: discord.ui.TextInput[RenameModal] = discord.ui.TextInput(label="New name", custom_id="rename:name", max_length=30)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(f"renamed to {self.name.value}")


class GameBot(commands.Bot):
    def __init__(self, **kw) -> None:
        super().__init__(command_prefix="!", intents=discord.Intents.default(), **kw)
        self.tables: dict = {}
        self.table_sizes: dict = {}
        self.next_table = 1
        self.errors: list = []
        self.block_seconds = 0.0
        self.peeks: list = []  # (the webhook of a Peek click, its ephemeral followup's id)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(SeatButton)
        self.add_view(HandView())
        self.add_view(BoardView())
        self.tree.add_command(NimmtGroup())
        await self.tree.sync()


class AdminGroup(app_commands.Group, name="admin", description="Admin tools"):
    @app_commands.command(name="reset", description="Reset everything")
    async def reset(self, interaction: discord.Interaction, confirm: bool) -> None:
        await interaction.response.send_message(f"reset confirm={confirm}", ephemeral=True)


class NimmtGroup(app_commands.Group, name="nimmt", description="6 nimmt!"):
    admin = AdminGroup()

    @app_commands.command(name="new", description="Open a table")
    @app_commands.describe(seats="Number of seats", rounds="Rounds to play", rival="Someone to challenge")
    async def new(self, interaction: discord.Interaction, seats: app_commands.Range[int, 2, 5], rounds: int = 1,
                  rival: Optional[discord.Member] = None) -> None:
        bot = cast(GameBot, interaction.client)
        table = bot.next_table
        bot.next_table += 1
        bot.table_sizes[table] = seats
        embed = discord.Embed(title=f"Table {table}", description=f"{seats} seats, {rounds} rounds")
        if rival is not None:
            embed.add_field(name="Rival", value=rival.mention)
        await interaction.response.send_message(render_table(table, {}), embed=embed, view=table_view(table, seats, {}))
        msg = await interaction.original_response()
        thread = await msg.create_thread(name=f"Table {table}")
        await thread.send(f"Welcome {interaction.user.mention}")

    @app_commands.command(name="hand", description="Show your hand")
    async def hand(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("Your hand: 3 17 55", view=HandView(), ephemeral=True)

    @app_commands.command(name="board", description="A public board with a private button")
    async def board(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("the board", view=BoardView())

    @app_commands.command(name="slow", description="Deferred reply")
    async def slow(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await asyncio.sleep(0.1)
        await interaction.followup.send("done slow")
        await interaction.followup.send("only for you", ephemeral=True)

    @app_commands.command(name="leak", description="Public defer, ephemeral followup (bug on purpose)")
    async def leak(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await interaction.followup.send("secret hand", ephemeral=True)

    @app_commands.command(name="quiet", description="Ephemeral deferred reply edited later")
    async def quiet(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        await asyncio.sleep(0.05)
        await interaction.edit_original_response(content="quiet result")

    @app_commands.command(name="upload", description="Send a file")
    async def upload(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("the table", file=discord.File(io.BytesIO(b"\x89PNG-fake"), filename="table.png"))

    @app_commands.command(name="check", description="Check my permissions here")
    async def check(self, interaction: discord.Interaction) -> None:
        p = interaction.app_permissions
        missing = [n for n in ("send_messages", "embed_links", "create_public_threads", "send_messages_in_threads")
                   if not getattr(p, n)]
        await interaction.response.send_message("missing: " + (", ".join(missing) or "nothing"), ephemeral=True)

    @app_commands.command(name="rename", description="Rename via a modal")
    async def rename(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(RenameModal())

    @app_commands.command(name="deck", description="Pick a deck")
    async def deck(self, interaction: discord.Interaction, name: str) -> None:
        await interaction.response.send_message(f"deck {name}")

    @deck.autocomplete("name")
    async def deck_auto(self, interaction: discord.Interaction, current: str):
        return [app_commands.Choice(name=n, value=n) for n in ("classic", "pro", "party") if n.startswith(current)]

    @app_commands.command(name="twice", description="Acknowledges twice (bug on purpose)")
    async def twice(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("first")
        interaction.response._response_type = None  # defeat discord.py's own guard
        try:
            await interaction.response.send_message("second")
        except discord.HTTPException as e:
            cast(GameBot, interaction.client).errors.append(e.code)

    @app_commands.command(name="late", description="Answers too late (bug on purpose)")
    async def late(self, interaction: discord.Interaction) -> None:
        await asyncio.sleep(0.6)
        try:
            await interaction.response.send_message("too late")
        except discord.HTTPException as e:
            cast(GameBot, interaction.client).errors.append(e.code)

    @app_commands.command(name="block", description="Blocks the event loop (bug on purpose)")
    async def block(self, interaction: discord.Interaction) -> None:
        time.sleep(cast(GameBot, interaction.client).block_seconds)
        await interaction.response.send_message("unblocked")

    @app_commands.command(name="say", description="Post in the channel")
    async def say(self, interaction: discord.Interaction, text: str) -> None:
        await interaction.response.defer(ephemeral=True)
        try:
            assert isinstance(interaction.channel, discord.abc.Messageable)
            await interaction.channel.send(text)
            await interaction.followup.send("sent", ephemeral=True)
        except discord.HTTPException as e:
            cast(GameBot, interaction.client).errors.append((e.status, e.code))
            await interaction.followup.send(f"failed {e.status}", ephemeral=True)


def make_world(fd: FakeDiscord):
    guild = fd.add_guild("Test Guild", locale="en-US")
    chan = fd.add_channel(guild, "games")
    alice = fd.add_user("alice", locale="en-US")
    bob = fd.add_user("bob", locale="de")
    fd.add_member(guild, alice)
    fd.add_member(guild, bob, manage_messages=True)
    return guild, chan, alice, bob


@contextlib.asynccontextmanager
async def running_bot(fd: FakeDiscord, bot: Optional[commands.Bot] = None, *, identifies: int = 1):
    bot = bot or GameBot()
    task = asyncio.create_task(bot.start(fd.token))
    try:
        await fd.wait_for(lambda: fd.identify_count >= identifies or task.done(), 10, what="bot identified")
        if task.done():
            task.result()
        await fd.wait_ready()
        await fd.wait_commands()
        yield bot
    finally:
        await bot.close()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(task, 5)


async def peeked(fd: FakeDiscord, chan: Any, alice: Any, bob: Any) -> tuple[Any, Any]:
    """alice posts the board (``/nimmt board``) and bob clicks its *Peek*: the board, and the
    answer to his click."""
    board = (await fd.slash(alice, chan, "nimmt board")).message
    assert board is not None
    return board, await fd.click(bob, board, "board:peek")


# --------------------------------------------------------------------------------------------- tests
async def test_full_flow(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    async with running_bot(fd) as bot:
        # command sync
        cmds = {c["name"]: c for c in fd.commands()}
        assert "nimmt" in cmds
        subs = {o["name"]: o for o in cmds["nimmt"]["options"]}
        assert subs["new"]["type"] == 1 and subs["admin"]["type"] == 2
        assert fd.intents == discord.Intents.default().value

        # slash with options, a USER option, an embed, dynamic buttons and a thread from the message
        r = await fd.slash(alice, chan, "nimmt new", seats=3, rounds=2, rival=bob)
        assert r.latency is not None
        assert r.ack_type == 4 and not r.ephemeral and r.latency < 1
        table_msg = r.message
        assert table_msg in fd.messages(chan)
        assert "3 seats, 2 rounds" in table_msg.text() and f"<@{bob.id}>" in table_msg.text()
        assert [b["label"] for b in table_msg.buttons()] == ["Join seat 1", "Join seat 2", "Join seat 3"]
        thread = (await fd.wait_for(lambda: fd.threads(chan)))[0]
        assert thread.id == table_msg.id and thread.parent_id == chan.id and thread.type == 11
        welcome = await fd.wait_message(thread, "Welcome")
        assert welcome.mentions == [alice.id]

        # DynamicItem button: update the message (type 7)
        r2 = await fd.click_label(bob, table_msg, "Join seat 2")
        assert r2.ack_type == 7 and r2.message is table_msg
        assert f"seat 2: <@{bob.id}>" in table_msg.content and table_msg.edit_count == 1
        assert [b["disabled"] for b in table_msg.buttons()] == [False, True, False]
        with pytest.raises(PermissionError):
            await fd.click(alice, table_msg, "seat:1:2")  # disabled now
        with pytest.raises(LookupError):
            await fd.click(alice, table_msg, "seat:9:9")

        # subcommand group, boolean option
        r = await fd.slash(bob, chan, "nimmt admin reset", confirm=True)
        assert r.message is not None
        assert r.ephemeral and r.message.content == "reset confirm=True"
        with pytest.raises(TypeError):
            await fd.slash(bob, chan, "nimmt admin reset")  # missing required option
        with pytest.raises(ValueError):
            await fd.slash(alice, chan, "nimmt new", seats=9)  # outside Range

        # ephemeral reply with a persistent view; click on the ephemeral
        r = await fd.slash(alice, chan, "nimmt hand")
        hand = r.message
        assert hand is not None
        assert r.ephemeral and hand.ephemeral_to == alice.id
        assert hand in fd.ephemerals(alice) and hand not in fd.messages(chan) and hand not in fd.ephemerals(bob)
        with pytest.raises(PermissionError):
            await fd.click(bob, hand, "hand:play")
        r_sel = await fd.select(alice, hand, "hand:pick", ["3", "55"])
        assert r_sel.message is not None
        assert r_sel.ack_type == 4 and r_sel.ephemeral and r_sel.message.content == "picked 3,55"
        with pytest.raises(ValueError):
            await fd.select(alice, hand, "hand:pick", ["4"])
        r_play = await fd.click(alice, hand, "hand:play")
        assert r_play.ack_type == 7 and hand.content == "You played." and hand.components == []

        # deferred reply + followups: the first followup replaces the "thinking" message
        r = await fd.slash(alice, chan, "nimmt slow")
        assert r.message is not None
        assert r.ack_type == 5 and r.message.loading
        await r.settled(5)
        assert r.message.content == "done slow" and not r.message.loading
        await fd.wait_for(lambda: len(r.followups) == 2)
        secret = r.followups[1]
        assert secret.ephemeral_to == alice.id and secret in fd.ephemerals(alice) and secret not in fd.messages(chan)

        # ephemeral defer + edit_original_response
        r = await fd.slash(bob, chan, "nimmt quiet")
        await r.settled(5)
        assert r.message is not None
        assert r.ephemeral and r.message.content == "quiet result" and r.message in fd.ephemerals(bob)

        # file upload
        r = await fd.slash(alice, chan, "nimmt upload")
        assert r.message is not None
        assert r.message.attachments[0]["filename"] == "table.png"
        assert r.message.attachments[0]["data"] == b"\x89PNG-fake"

        # modal
        r = await fd.slash(alice, chan, "nimmt rename")
        assert r.modal is not None
        assert r.ack_type == 9 and r.modal["title"] == "Rename table"
        r2 = await fd.submit_modal(alice, r, {"rename:name": "High rollers"})
        assert r2.message is not None
        assert r2.message.content == "renamed to High rollers"

        # autocomplete
        choices = await fd.autocomplete(alice, chan, "nimmt deck", "name", name="p")
        assert [c["value"] for c in choices] == ["pro", "party"]

        # the bot fetches channel history through REST (ephemerals are not part of it)
        history = [m async for m in bot.get_channel(chan.id).history(limit=50)]
        assert {m.id for m in history} == {m.id for m in fd.messages(chan)}

        # a user deletes the table message: MESSAGE_DELETE reaches the bot, later edits get 404
        fd.delete_message(table_msg)
        assert table_msg not in fd.messages(chan)
        with pytest.raises(discord.NotFound) as ei:
            await bot.http.edit_message(chan.id, table_msg.id, params=discord.http.handle_message_parameters(content="x"))
        assert ei.value.code == 10008
    assert not [r for r in fd.requests if r.status >= 500]
    assert all(not r.path.endswith("/callback") or r.status == 200 for r in fd.requests)


async def test_deferred_update_then_ephemeral_followup(fake_discord: FakeDiscord) -> None:
    """As on Discord: after a type-6 answer an ephemeral followup is a new message only the
    clicker sees; the token's @original is the message the button is on, a followup is edited
    by its id, neither edit counts against the global limit; the token lasts 15 minutes."""
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    async with running_bot(fd) as bot:
        board, r = await peeked(fd, chan, alice, bob)
        assert r.ack_type == 6 and r.message is board
        await r.settled(5)
        private = r.followups[0]
        assert private.ephemeral_to == bob.id and private is not board and private.content == "only you see this"
        assert private in fd.ephemerals(bob) and private not in fd.ephemerals(alice)
        assert private not in fd.messages(chan) and board.content == "the board"
        webhook, private_id = bot.peeks[-1]
        assert private_id == private.id
        fd.global_rate = (1, 30.0)
        await bot.get_channel(chan.id).send("uses the only request")
        await webhook.edit_message("@original", content="the board, redrawn")
        await webhook.edit_message(private_id, content="only you see this, redrawn")
        fd.global_rate = None
        assert board.content == "the board, redrawn" and board.edited_by == ["webhook"]
        assert private.content == "only you see this, redrawn" and private.edited_by == ["webhook"]
        await bot.get_channel(chan.id).get_partial_message(board.id).edit(content="the bot's own edit")
        assert board.edited_by == ["webhook", "channel"]
        # another user's click cannot reach bob's followup through its own token
        r2 = await fd.click(alice, board, "board:peek")
        await r2.settled(5)
        theirs, _ = bot.peeks[-1]
        with pytest.raises(discord.NotFound):
            await theirs.edit_message(private_id, content="leaked")
        assert fd.take_violations(r"ephemeral message .* of user bob accessed")
        # 15 minutes on, the token is refused
        fd.token_lifetime = 0.05
        await asyncio.sleep(0.1)
        with pytest.raises(discord.HTTPException) as expired:
            await webhook.edit_message("@original", content="too late")
        assert expired.value.status == 401 and expired.value.code == 50027
        assert board.content == "the bot's own edit"
    assert not fd.violations


async def test_a_failure_armed_for_one_message_fails_only_its_calls(fake_discord: FakeDiscord) -> None:
    """``fail_next(..., message=id)``: the calls on that message fail, whichever way they name
    it (through the channel by its id, or as ``@original`` of a token whose original it is);
    another message's edits, matching the same path pattern, go through."""
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    async with running_bot(fd) as bot:
        board, r = await peeked(fd, chan, alice, bob)
        await r.settled(5)
        webhook, private_id = bot.peeks[-1]
        channel = bot.get_channel(chan.id)
        other = await channel.send("another message")
        fd.fail_next("PATCH", r"/messages/[^/]+$", 403, times=2, message=board.id)
        await webhook.edit_message(private_id, content="only you see this, redrawn")
        await channel.get_partial_message(other.id).edit(content="another message, edited")
        with pytest.raises(discord.Forbidden):
            await webhook.edit_message("@original", content="the board, redrawn")
        with pytest.raises(discord.Forbidden):
            await channel.get_partial_message(board.id).edit(content="the bot's own edit")
        assert fd.clear_failures() == 0
        assert board.content == "the board" and board.edit_count == 0
        edited, redrawn = fd.message(other.id), fd.message(private_id)
        assert edited is not None and edited.content == "another message, edited"
        assert redrawn is not None and redrawn.content == "only you see this, redrawn"
    assert not fd.violations


async def test_permissions_reported(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    fd.set_channel_overwrite(chan, deny=discord.Permissions(send_messages=True, embed_links=True))
    async with running_bot(fd) as bot:
        r = await fd.slash(alice, chan, "nimmt check")
        assert r.message is not None
        assert r.message.content == "missing: send_messages, embed_links"
        r = await fd.slash(alice, chan, "nimmt say", text="hello")
        await r.settled(5)
        assert bot.errors == [(403, 50013)]
        # an explicit allow for the bot's role wins over the @everyone deny
        fd.set_channel_overwrite(chan, guild.bot_role, allow=discord.Permissions(send_messages=True))
        r = await fd.slash(alice, chan, "nimmt say", text="hello")
        await r.settled(5)
        assert [m.content for m in fd.messages(chan)] == ["hello"]


async def test_violations_detected(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    async with running_bot(fd) as bot:
        # acknowledged twice
        r = await fd.slash(alice, chan, "nimmt twice")
        await fd.wait_for(lambda: bot.errors)
        assert r.message is not None
        assert bot.errors == [40060] and r.message.content == "first"
        assert fd.take_violations("acknowledged twice")

        # 2001 characters
        r = await fd.slash(alice, chan, "nimmt say", text="x" * 2001)
        await r.settled(5)
        assert bot.errors[-1] == (400, 50035)
        assert fd.take_violations(r"content > 2000")

        route = discord.http.Route("POST", "/channels/{channel_id}/messages", channel_id=chan.id)

        def button(cid: str, label: str = "b") -> dict:
            return {"type": 2, "style": 1, "label": label, "custom_id": cid}

        bad_payloads = {
            r"more than 5 action rows": {"components": [{"type": 1, "components": [button(f"r{i}")]} for i in range(6)]},
            r"more than 5 buttons": {"components": [{"type": 1, "components": [button(f"b{i}") for i in range(6)]}]},
            r"duplicate custom_id": {"components": [{"type": 1, "components": [button("same"), button("same")]}]},
            r"label > 80": {"components": [{"type": 1, "components": [button("l", "L" * 81)]}]},
            r"custom_id > 100": {"components": [{"type": 1, "components": [button("c" * 101)]}]},
            r"custom_id missing": {"components": [{"type": 1, "components": [{"type": 2, "style": 1, "label": "x"}]}]},
            r"select must be alone": {"components": [{"type": 1, "components": [
                button("x"), {"type": 3, "custom_id": "s", "options": [{"label": "a", "value": "a"}]}]}]},
            r"26 options > 25": {"components": [{"type": 1, "components": [
                {"type": 3, "custom_id": "s", "options": [{"label": str(i), "value": str(i)} for i in range(26)]}]}]},
            r"max_values 3 > number of options 2": {"components": [{"type": 1, "components": [
                {"type": 3, "custom_id": "s", "max_values": 3,
                 "options": [{"label": "a", "value": "a"}, {"label": "b", "value": "b"}]}]}]},
            r"embeds total .* > 6000": {"embeds": [{"description": "d" * 4000}, {"description": "d" * 2001}]},
            r"more than 10 embeds": {"embeds": [{"title": "t"}] * 11},
        }
        for pattern, payload in bad_payloads.items():
            with pytest.raises(discord.HTTPException) as ei:
                await bot.http.request(route, json=payload)
            assert ei.value.status == 400, pattern
            assert fd.take_violations(pattern), (pattern, fd.violations)
        fd.assert_clean()

        # a mention added by an edit does not notify
        msg = await bot.get_channel(chan.id).send("scores")
        await msg.edit(content=f"scores - your turn {alice.mention}")
        assert fd.take_violations("mention added by edit")

        # ephemeral message ids are not reachable through channel routes, nor through another user's token
        hand = (await fd.slash(alice, chan, "nimmt hand")).message
        assert hand is not None
        with pytest.raises(discord.NotFound):
            await bot.get_channel(chan.id).fetch_message(hand.id)
        assert fd.take_violations("ephemeral message .* channel route")
        r_bob = await fd.slash(bob, chan, "nimmt upload")
        wh = discord.Webhook.partial(fd.application_id, r_bob.interaction.token, client=bot)
        with pytest.raises(discord.NotFound):
            await wh.edit_message(hand.id, content="peek")
        assert fd.take_violations("ephemeral message .* of user alice accessed through the interaction of bob")

        # an ephemeral followup after a public defer is shown publicly
        r = await fd.slash(alice, chan, "nimmt leak")
        await r.settled(5)
        assert fd.take_violations("ephemeral followup after a public defer")
        assert r.message is not None
        assert r.message.content == "secret hand" and r.message in fd.messages(chan)

        # sending to a deleted thread
        fd.delete_channel(fd.threads(chan)[0]) if fd.threads(chan) else None
        thread = fd.add_thread(chan, "side")
        fd.delete_channel(thread)
        with pytest.raises(discord.NotFound) as ei:
            await bot.http.send_message(thread.id, params=discord.http.handle_message_parameters(content="hi"))
        assert ei.value.code == 10003
        assert fd.take_violations("deleted channel")

        # an unknown route is reported
        with pytest.raises(discord.NotFound):
            await bot.http.request(discord.http.Route("GET", "/channels/{channel_id}/nonsense", channel_id=chan.id))
        assert fd.take_violations("unknown route")
        fd.assert_clean()

    # late acknowledgement (shorter deadline to keep the test fast)
    fd.ack_deadline = 0.3
    async with running_bot(fd, identifies=2) as bot:
        with pytest.raises(NoAcknowledgement):
            await fd.slash(alice, chan, "nimmt late")
        await fd.wait_for(lambda: bot.errors)
        assert bot.errors == [10062]
        assert fd.take_violations("not acknowledged within")
        assert fd.take_violations("acknowledged after")
    fd.ack_deadline = 3.0


async def test_rest_failures_and_rate_limits(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    fd.edit_rate = (2, 0.6)
    async with running_bot(fd) as bot:
        channel = bot.get_channel(chan.id)
        # 500 on a channel message: discord.py retries and succeeds
        fd.fail_next("POST", r"^/channels/\d+/messages$", 500)
        m = await channel.send("after a 500")
        assert [x.status for x in fd.requests if x.method == "POST" and x.path.endswith("/messages")] == [500, 200]
        # 429 with Via + retry_after: discord.py sleeps and retries
        fd.fail_next("POST", r"^/channels/\d+/messages$", 429, retry_after=0.1)
        await channel.send("after a 429")
        # 503 is not retried: the bot sees an exception
        fd.fail_next("POST", r"^/channels/\d+/messages$", 503)
        with pytest.raises(discord.DiscordServerError):
            await channel.send("lost")
        # a dropped connection (status 0) also reaches the caller
        fd.fail_next("POST", r"^/channels/\d+/messages$", 0)
        with pytest.raises(aiohttp.ClientError):
            await channel.send("dropped")
        assert fd.requests[-1].status == 0
        assert [x.content for x in fd.messages(chan)] == ["after a 500", "after a 429"]

        # interaction callback 500: the webhook adapter retries within the 3 s window
        fd.fail_next("POST", r"/callback$", 500)
        r = await fd.slash(alice, chan, "nimmt hand")
        assert r.latency is not None
        assert r.ack_type == 4 and 0.9 < r.latency < 3

        # per-channel edit bucket: 5 quick edits with a 2-per-0.6 s bucket are spaced out by discord.py
        t0 = time.monotonic()
        for i in range(5):
            m = await m.edit(content=f"edit {i}")
        elapsed = time.monotonic() - t0
        assert elapsed > 0.9 and fd.messages(chan)[0].content == "edit 4"
        # concurrent edits hit a real 429 (recorded in requests, not a violation) and still all land
        m2 = await channel.send("race")
        await asyncio.gather(*(m2.edit(content=f"race {i}") for i in range(4)))
        raced = fd.message(m2.id)
        assert raced is not None and raced.edit_count == 4
        edit_statuses = [x.status for x in fd.requests if x.method == "PATCH"]
        assert set(edit_statuses) <= {200, 429}
        limited = [x for x in fd.requests if x.status == 429]
        assert limited  # the injected one at least
    assert not fd.violations


async def test_global_rate_limit_and_message_listeners(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    seen: list = []
    fd.message_listeners.append(lambda m, kind: seen.append((kind, m.content)))
    async with running_bot(fd) as bot:
        channel = bot.get_channel(chan.id)
        fd.global_rate = (3, 0.4)  # Discord's is 50 per second
        t0 = time.monotonic()
        await asyncio.gather(*(channel.send(f"burst {i}") for i in range(7)))
        elapsed = time.monotonic() - t0
        fd.global_rate = None
        # every message lands, spaced out by discord.py after global 429s
        assert sorted(x.content for x in fd.messages(chan)) == sorted(f"burst {i}" for i in range(7))
        assert elapsed > 0.4
        assert any(x.status == 429 for x in fd.requests if x.path.endswith("/messages"))
        # interaction answers do not count against the global limit
        fd.global_rate = (1, 30.0)
        await channel.send("uses the only request")
        r = await fd.slash(alice, chan, "nimmt new", seats=2)
        assert r.ack_type == 4
        fd.global_rate = None
        assert ("create", "burst 0") in seen and ("create", "uses the only request") in seen
    assert not fd.violations


async def test_reconnect_resume_and_restart() -> None:
    async with FakeDiscord() as fd:
        guild, chan, alice, bob = make_world(fd)
        with fd.patched():
            async with running_bot(fd):
                r = await fd.slash(alice, chan, "nimmt new", seats=2)
                table_msg = r.message
                assert table_msg is not None
                # dropped socket: discord.py resumes on the resume_gateway_url
                fd.drop_gateway()
                await fd.wait_for(lambda: fd.resume_count == 1)
                fd.request_reconnect()  # op 7
                await fd.wait_for(lambda: fd.resume_count == 2)
                fd.send(alice, chan, "hello while resumed")
                r = await fd.slash(alice, chan, "nimmt hand")
                assert r.ack_type == 4
                # invalidated session: discord.py identifies again
                await fd.drop_gateway(resumable=False)
                await fd.wait_for(lambda: fd.identify_count == 2)
                r = await fd.slash(alice, chan, "nimmt hand")
                assert r.ack_type == 4
            # while no bot is connected a click is lost (no violation: the bot cannot help it) ...
            assert not fd.connected
            fd.ack_deadline = 0.3
            with pytest.raises(NoAcknowledgement):
                await fd.click_label(bob, table_msg, "Join seat 1")
            fd.ack_deadline = 3.0
            # ... and after a restart (a new process) persistent DynamicItem buttons on old messages work again
            async with running_bot(fd, GameBot(), identifies=3):
                assert fd.connected
                r = await fd.click_label(bob, table_msg, "Join seat 1")
                assert r.ack_type == 7 and f"seat 1: <@{bob.id}>" in table_msg.content
        fd.assert_clean()


async def test_heartbeat_gap_detected() -> None:
    async with FakeDiscord(heartbeat_interval=500) as fd:
        guild, chan, alice, bob = make_world(fd)
        with fd.patched():
            async with running_bot(fd) as bot:
                await asyncio.sleep(1.1)
                assert fd.heartbeats >= 2 and not fd.violations
                bot.block_seconds = 1.2
                r = await fd.slash(alice, chan, "nimmt block")
                assert r.message is not None
                assert r.message.content == "unblocked"
        assert fd.take_violations("heartbeat gap")
        fd.assert_clean()


async def test_launcher_subprocess(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    env = {**os.environ, **fd.env(), "PYTHONPATH": str(REPO_ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakediscord.launch", "tests.fakediscord.demo_bot:main",
        cwd=str(REPO_ROOT), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        await fd.wait_commands(timeout=20)
        await fd.wait_ready(timeout=20)
        r = await fd.slash(alice, chan, "ping", text="hi")
        assert r.message is not None
        assert r.message.content == "pong: hi"
        r2 = await fd.click_label(alice, r.message, "Again")
        assert r2.message is not None
        assert r2.ack_type == 7 and r2.message.content == "pong again"
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 10)


class ExtrasBot(commands.Bot):
    """Components v2, DMs, a context menu, attachment options, prefix messages, guild-only command sync."""

    def __init__(self, guild_id: int) -> None:
        super().__init__(command_prefix="!", intents=discord.Intents.all())
        self.guild_id = guild_id

    async def setup_hook(self) -> None:
        class Board(discord.ui.LayoutView):
            def __init__(self) -> None:
                super().__init__(timeout=None)
                container: discord.ui.Container[Board] = discord.ui.Container()
                container.add_item(discord.ui.TextDisplay("Scoreboard"))
                row: discord.ui.ActionRow[Board] = discord.ui.ActionRow()
                row.add_item(Refresh(self))
                container.add_item(row)
                self.add_item(container)

        class Refresh(discord.ui.Button[Board]):
            def __init__(self, board: Board) -> None:
                super().__init__(label="Refresh", custom_id="board:refresh")
                self.board = board

            async def callback(self, interaction: discord.Interaction) -> None:
                await interaction.response.defer()
                await asyncio.sleep(0.05)
                assert interaction.message is not None
                await interaction.message.edit(view=self.board)  # channel route, after the ack

        @self.tree.command(name="board", description="Components v2 board")
        async def board(interaction: discord.Interaction) -> None:
            await interaction.response.send_message(view=Board())

        @self.tree.command(name="dm", description="DM someone")
        async def dm(interaction: discord.Interaction, who: discord.User) -> None:
            try:
                await who.send("psst")
                await interaction.response.send_message("sent", ephemeral=True)
            except discord.Forbidden as e:
                await interaction.response.send_message(f"closed {e.code}", ephemeral=True)

        @self.tree.command(name="readfile", description="Read an attachment")
        async def readfile(interaction: discord.Interaction, f: discord.Attachment) -> None:
            data = await f.read()
            await interaction.response.send_message(f"read {len(data)} bytes of {f.filename}")

        @self.tree.context_menu(name="Inspect")
        async def inspect(interaction: discord.Interaction, member: discord.Member) -> None:
            await interaction.response.send_message(f"inspect {member.name}", ephemeral=True)

        @self.tree.command(name="where", description="Where am I")
        async def where(interaction: discord.Interaction) -> None:
            assert isinstance(interaction.channel, (discord.TextChannel, discord.Thread))
            await interaction.response.send_message(f"in {interaction.channel.name} ({interaction.channel.type})")

        guild = discord.Object(self.guild_id)
        self.tree.copy_global_to(guild=guild)
        await self.tree.sync(guild=guild)

    async def on_message(self, message: discord.Message) -> None:
        if message.content == "!hi" and not message.author.bot:
            await message.reply(f"hello {message.author.mention}")


async def test_more_surfaces(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    carol = fd.add_user("carol", dms_open=False)
    fd.add_member(guild, carol)
    async with running_bot(fd, ExtrasBot(guild.id)):
        assert fd.commands() == [] and {c["name"] for c in fd.commands(guild)} == {"board", "dm", "readfile", "Inspect", "where"}
        r = await fd.slash(alice, chan, "board")
        board = r.message
        assert board is not None
        assert board.flags & (1 << 15) and board.text() == "Scoreboard" and board.buttons()[0]["custom_id"] == "board:refresh"
        r2 = await fd.click(alice, board, "board:refresh")
        assert r2.ack_type == 6
        await r2.settled(5)
        assert board.edit_count == 1

        r = await fd.slash(alice, chan, "dm", who=bob)
        assert r.message is not None
        assert r.message.content == "sent" and [m.content for m in fd.dms(bob)] == ["psst"]
        r = await fd.slash(alice, chan, "dm", who=carol)
        assert r.message is not None
        assert r.message.content == "closed 50007"

        r = await fd.slash(alice, chan, "readfile", f=("notes.txt", b"12345"))
        assert r.message is not None
        assert r.message.content == "read 5 bytes of notes.txt"

        r = await fd.context_menu(alice, chan, "Inspect", bob)
        assert r.message is not None
        assert r.ephemeral and r.message.content == "inspect bob"

        fd.send(alice, chan, "!hi")
        reply = await fd.wait_message(chan, "hello")
        assert reply.type == 19 and reply.mentions == [alice.id]

        thread = fd.add_thread(chan, "side room", owner=alice)
        r = await fd.slash(alice, thread, "where")
        assert r.message is not None
        assert r.message.content == "in side room (public_thread)" and r.message in fd.messages(thread)
        assert fd.messages(chan)[-1].type == 18  # "alice started a thread"


async def test_validation_units_and_app_emojis(fake_discord: FakeDiscord) -> None:
    from tests.fakediscord import validation

    ok_v2 = [{"type": 17, "components": [
        {"type": 10, "content": "hello"},
        {"type": 9, "components": [{"type": 10, "content": "side"}],
         "accessory": {"type": 2, "style": 1, "label": "Go", "custom_id": "go"}},
        {"type": 1, "components": [{"type": 2, "style": 2, "label": "Stop", "custom_id": "stop"}]},
    ]}]
    assert validation.check_message({"components": ok_v2, "flags": 1 << 15}) == []
    dup = [{"type": 17, "components": [
        {"type": 9, "components": [{"type": 10, "content": "a"}],
         "accessory": {"type": 2, "style": 1, "label": "Go", "custom_id": "go"}},
        {"type": 1, "components": [{"type": 2, "style": 1, "label": "Go", "custom_id": "go"}]},
    ]}]
    assert any("duplicate custom_id" in p for p in validation.check_message({"components": dup, "flags": 1 << 15}))
    assert validation.check_message({"content": "x", "components": ok_v2, "flags": 1 << 15})
    assert validation.check_message({}) == ["cannot send an empty message"]
    assert validation.check_message({"embeds": [{"fields": [{"name": "n", "value": ""}]}]})
    link = {"type": 1, "components": [{"type": 2, "style": 5, "label": "Docs", "url": "https://example.org"}]}
    assert validation.check_message({"components": [link]}) == []

    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    async with running_bot(fd) as bot:
        emoji = await bot.create_application_emoji(name="card_55", image=b"\x89PNG\r\n\x1a\n")
        assert emoji.name == "card_55" and [e.name for e in await bot.fetch_application_emojis()] == ["card_55"]
        assert list(fd.app_emojis.values())[0]["name"] == "card_55"
        fd.set_channel_overwrite(chan, deny=discord.Permissions(use_application_commands=True))
        with pytest.raises(PermissionError):
            await fd.slash(alice, chan, "nimmt hand")


class IntentBot(commands.Bot):
    """No members intent; one intent (``intent``) on or off.  What it heard: voice state
    updates as (member, channel before, channel after), the scheduled events' gateway events."""

    def __init__(self, intent: str, on: bool) -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        setattr(intents, intent, on)
        super().__init__(command_prefix="!", intents=intents)
        self.updates: list = []
        self.seen: list = []

    async def on_voice_state_update(self, member, before, after) -> None:
        self.updates.append((member.id, before.channel and before.channel.id, after.channel and after.channel.id))

    async def on_socket_event_type(self, event_type: str) -> None:
        if event_type.startswith("GUILD_SCHEDULED_EVENT"):
            self.seen.append(event_type)


@contextlib.asynccontextmanager
async def with_and_without(fd: FakeDiscord, guild: Any, intent: str) -> AsyncIterator[tuple[IntentBot, IntentBot]]:
    """Two bots connected, one with ``intent`` and one without, once each has ``guild`` in its cache."""
    bot, deaf = IntentBot(intent, True), IntentBot(intent, False)
    tasks = [asyncio.create_task(b.start(fd.token)) for b in (bot, deaf)]
    try:
        await fd.wait_ready()
        await fd.wait_for(lambda: bot.get_guild(guild.id) and deaf.get_guild(guild.id))
        yield bot, deaf
    finally:
        for b in (bot, deaf):
            await b.close()
        for task in tasks:
            task.cancel()


def in_voice(guild: discord.Guild, channel_id: int) -> Dict[int, discord.VoiceState]:
    """Who the bot's cache has in voice channel ``channel_id``, by user id."""
    channel = guild.get_channel(channel_id)
    assert isinstance(channel, discord.VoiceChannel)
    return channel.voice_states


async def test_voice_states(fake_discord: FakeDiscord) -> None:
    fd = fake_discord
    guild = fd.add_guild("Voice Guild")
    lounge = fd.add_channel(guild, "Lounge", type=2)
    den = fd.add_channel(guild, "Den", type=2)
    text = fd.add_channel(guild, "chat")
    early, late, quiet = fd.add_user("early"), fd.add_user("late"), fd.add_user("quiet")
    for user in (early, late, quiet):
        fd.add_member(guild, user)
    fd.join_voice(early, lounge)  # before the bot connects: GUILD_CREATE carries it
    with pytest.raises(ValueError):
        fd.join_voice(late, text)
    async with with_and_without(fd, guild, "voice_states") as (bot, deaf):
        g = bot.get_guild(guild.id)
        assert g is not None
        assert set(in_voice(g, lounge.id)) == {early.id}
        assert g.get_member(early.id) is not None  # members in voice come without the members intent
        assert g.get_member(quiet.id) is None
        fd.join_voice(late, lounge)
        await fd.wait_for(lambda: (late.id, None, lounge.id) in bot.updates)
        assert set(in_voice(g, lounge.id)) == {early.id, late.id}
        late_member = g.get_member(late.id)
        assert late_member is not None and late_member.display_name == "late"
        fd.join_voice(early, den)
        await fd.wait_for(lambda: (early.id, lounge.id, den.id) in bot.updates)
        fd.leave_voice(late, guild)
        await fd.wait_for(lambda: (late.id, lounge.id, None) in bot.updates)
        assert set(in_voice(g, lounge.id)) == set()
        assert set(in_voice(g, den.id)) == {early.id}
        # without the intent a bot hears nothing of it
        deaf_guild = deaf.get_guild(guild.id)
        assert deaf_guild is not None
        assert not deaf.updates and not in_voice(deaf_guild, den.id)


async def test_who_is_pinged(fake_discord: FakeDiscord) -> None:
    """The stand-in tells whom a message notified: allowed_mentions decide, edits never ping."""
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    async with running_bot(fd) as bot:
        channel = bot.get_channel(chan.id)
        both = f"{alice.mention} {bob.mention}"
        plain = await channel.send(both)  # no allowed_mentions: Discord pings every mention
        none = await channel.send(both, allowed_mentions=discord.AllowedMentions.none())
        one = await channel.send(both, allowed_mentions=discord.AllowedMentions(users=[discord.Object(bob.id)]))
        parsed = await channel.send(both, allowed_mentions=discord.AllowedMentions(users=True))
        silent = await channel.send(both, silent=True)
        later = await channel.send("scores", allowed_mentions=discord.AllowedMentions.none())
        await later.edit(content=f"scores {alice.mention}", allowed_mentions=discord.AllowedMentions.none())
        by_id = {m.id: m for m in fd.messages(chan)}
        assert by_id[plain.id].pinged == [alice.id, bob.id]
        assert by_id[none.id].pinged == [] and by_id[none.id].mentions == [alice.id, bob.id]
        assert by_id[one.id].pinged == [bob.id]
        assert by_id[parsed.id].pinged == [alice.id, bob.id]
        assert by_id[silent.id].pinged == []
        assert by_id[later.id].pinged == []
        assert [(m.id, u) for m, u in fd.pings(chan)] == [
            (plain.id, alice.id), (plain.id, bob.id), (one.id, bob.id), (parsed.id, alice.id), (parsed.id, bob.id)]


def test_integer_option_bounds_follow_discord():
    """Discord takes INTEGER/NUMBER bounds within +-2**53 only; beyond that the
    command sync fails (the stand-in reports it as a violation)."""
    from tests.fakediscord import FakeDiscord

    fd = FakeDiscord()

    def command(max_value: int) -> dict:
        return {"type": 1, "name": "pick", "description": "Pick a number", "options": [
            {"type": 4, "name": "n", "description": "A number", "min_value": 1, "max_value": max_value}]}

    assert fd._validate_command(command(2 ** 53)) == []
    assert any("max_value" in p for p in fd._validate_command(command(2 ** 62)))


async def test_a_client_gone_in_the_middle_of_a_request_is_no_fault_of_the_stand_in(fake_discord: FakeDiscord) -> None:
    """A killed bot leaves a picture half sent: the stand-in logs the dropped
    request (status 0) and records no violation; the failures fail_next armed
    and nobody used can be cleared."""
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    body = b"--xx\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"table.png\"\r\n\r\n" + b"\0" * 1000
    reader, writer = await asyncio.open_connection(fd.host, fd.port)
    writer.write((f"PATCH /api/v10/channels/{chan.id}/messages/1 HTTP/1.1\r\nHost: x\r\n"
                  f"Authorization: Bot {fd.token}\r\nContent-Type: multipart/form-data; boundary=xx\r\n"
                  f"Content-Length: 100000\r\n\r\n").encode() + body)
    await writer.drain()
    writer.transport.abort()  # as SIGKILL does: no FIN, the rest never comes
    await fd.wait_for(lambda: any(r.method == "PATCH" and r.status == 0 for r in fd.requests), timeout=5)
    assert fd.take_violations() == []
    fd.fail_next("POST", r"^/channels/\d+/messages$", 500, times=3)
    assert fd.clear_failures() == 3 and fd.clear_failures() == 0


async def test_a_message_nonce_is_posted_once(fake_discord: FakeDiscord) -> None:
    """As Discord: a nonce sent again (enforce_nonce) returns the first message."""
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    async with running_bot(fd) as bot:
        channel = bot.get_channel(chan.id)
        first = await channel.send("recap", nonce="recap-1")
        again = await channel.send("recap", nonce="recap-1")
        other = await channel.send("recap", nonce="recap-2")
        assert again.id == first.id != other.id
        assert [m.id for m in fd.messages(chan)] == [first.id, other.id]


async def test_uploads_arrive_as_sent_and_a_broken_form_is_refused(fake_discord: FakeDiscord) -> None:
    """The stand-in reads discord.py's multipart uploads itself: every file keeps its name
    (quotes and accents included), its bytes and its type; a form cut short (no closing
    delimiter) or without a boundary is Discord's 400 and a recorded violation."""
    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40 + b"\r\n--\r\n\r\n"  # delimiter-like bytes inside
    async with running_bot(fd) as bot:
        channel = bot.get_channel(chan.id)
        sent = await channel.send("pictures", files=[discord.File(io.BytesIO(png), filename='tisch "1" ä.png'),
                                                     discord.File(io.BytesIO(b""), filename="empty.png")])
        stored = fd.messages(chan)[-1]
        assert stored.id == sent.id and stored.content == "pictures"
        assert [(a["filename"], a["data"], a.get("content_type")) for a in stored.attachments] == [
            ('tisch "1" ä.png', png, "application/octet-stream"), ("empty.png", b"", "application/octet-stream")]
        assert fd.take_violations() == []

    url = f"http://{fd.host}:{fd.port}/api/v10/channels/{chan.id}/messages"
    auth = {"Authorization": f"Bot {fd.token}"}
    cut = b'--xx\r\nContent-Disposition: form-data; name="payload_json"\r\n\r\n{"content": "half"}'
    async with aiohttp.ClientSession() as http:
        for ctype in ("multipart/form-data; boundary=xx", "multipart/form-data"):
            async with http.post(url, data=cut, headers={**auth, "Content-Type": ctype}) as r:
                assert r.status == 400 and (await r.json())["code"] == 50035
    problems = fd.take_violations()
    assert len(problems) == 2 and "closing delimiter" in problems[0] and "boundary" in problems[1]
    assert [m.content for m in fd.messages(chan)] == ["pictures"]


async def test_guild_scheduled_events(fake_discord: FakeDiscord) -> None:
    """Discord's Guild Scheduled Events: created with Manage Events only (50013 otherwise),
    validated as Discord does (an external event needs a location and an end, no start in
    the past), SCHEDULED -> ACTIVE -> COMPLETED or SCHEDULED -> CANCELED only, nothing
    changes a finished event (180000); Interested sends USER_ADD / USER_REMOVE to bots
    with the intent, and GET .../users lists who is interested."""
    fd = fake_discord
    guild = fd.add_guild("Events", bot_permissions=discord.Permissions(view_channel=True))
    fd.add_channel(guild, "games")
    ann, bea = fd.add_user("ann"), fd.add_user("bea")
    for user in (ann, bea):
        fd.add_member(guild, user)
    async with with_and_without(fd, guild, "guild_scheduled_events") as (bot, deaf):
        g = bot.get_guild(guild.id)
        assert g is not None and guild.bot_role is not None
        start = discord.utils.utcnow() + datetime.timedelta(hours=1)

        async def external() -> discord.ScheduledEvent:
            assert g is not None
            return await g.create_scheduled_event(
                name="Game night", start_time=start, end_time=start + datetime.timedelta(hours=3),
                entity_type=discord.EntityType.external, location="#games", privacy_level=discord.PrivacyLevel.guild_only)

        with pytest.raises(discord.Forbidden) as refused:
            await external()
        assert refused.value.code == 50013 and not fd.scheduled_events(guild)
        fd.set_role_permissions(guild.bot_role, discord.Permissions(view_channel=True, manage_events=True))
        raw = bot.http
        bad: Dict[str, Any] = {"name": "x", "privacy_level": 2, "entity_type": 3, "scheduled_start_time": start.isoformat(),
                               "entity_metadata": {"location": "#games"}}
        with pytest.raises(discord.HTTPException) as no_end:  # an external event needs its end
            await raw.create_guild_scheduled_event(guild.id, **bad)
        assert no_end.value.code == 50035
        past = dict(bad, scheduled_start_time=(start - datetime.timedelta(hours=2)).isoformat(),
                    scheduled_end_time=start.isoformat())
        with pytest.raises(discord.HTTPException):
            await raw.create_guild_scheduled_event(guild.id, **past)
        assert len(fd.take_violations("scheduled event refused")) == 2
        event = await external()
        assert event.status is discord.EventStatus.scheduled and event.location == "#games"
        await fd.wait_for(lambda: "GUILD_SCHEDULED_EVENT_CREATE" in bot.seen)
        fd.mark_interested(ann, event.id)
        fd.mark_interested(bea, event.id)
        fd.mark_interested(bea, event.id, False)
        await fd.wait_for(lambda: bot.seen.count("GUILD_SCHEDULED_EVENT_USER_REMOVE") == 1)
        assert bot.seen.count("GUILD_SCHEDULED_EVENT_USER_ADD") == 2
        assert [u.id async for u in event.users()] == [ann.id]
        with pytest.raises(discord.HTTPException) as skipped:  # SCHEDULED -> COMPLETED is not a transition
            await raw.edit_scheduled_event(guild.id, event.id, status=3)
        assert skipped.value.code == 50035 and fd.take_violations("status 1 -> 3")
        later = start + datetime.timedelta(hours=1)
        await raw.edit_scheduled_event(guild.id, event.id, scheduled_start_time=later.isoformat(),
                                       scheduled_end_time=(later + datetime.timedelta(hours=3)).isoformat())
        await raw.edit_scheduled_event(guild.id, event.id, status=2)
        await raw.edit_scheduled_event(guild.id, event.id, status=3)
        assert fd.scheduled_events(guild)[0]["status"] == 3
        assert fd.scheduled_events(guild)[0]["scheduled_start_time"] == later.isoformat()
        with pytest.raises(discord.HTTPException) as finished:
            await raw.edit_scheduled_event(guild.id, event.id, name="again")
        assert finished.value.code == 180000 and fd.take_violations("changed after it finished")
        with pytest.raises(ValueError):
            fd.mark_interested(bea, event.id)
        second = await external()
        await raw.edit_scheduled_event(guild.id, second.id, status=4)  # SCHEDULED -> CANCELED
        await raw.delete_scheduled_event(guild.id, second.id)
        with pytest.raises(discord.NotFound):
            await raw.get_scheduled_event(guild.id, second.id, False)
        await fd.wait_for(lambda: "GUILD_SCHEDULED_EVENT_DELETE" in bot.seen)
        assert not deaf.seen  # without the intent a bot hears none of it


async def test_role_and_everyone_pings(fake_discord: FakeDiscord) -> None:
    """A role mention notifies the role's members when allowed_mentions lets it through and the
    role is mentionable (or the author may mention everyone); @everyone needs that permission."""
    fd = fake_discord
    guild, chan, _alice, _bob = make_world(fd)
    players = fd.add_role(guild, "players", mentionable=True)
    quiet = fd.add_role(guild, "quiet")
    carl = fd.add_user("carl")
    fd.add_member(guild, carl, roles=[players, quiet])
    async with running_bot(fd) as bot:
        channel = bot.get_channel(chan.id)
        role_only = discord.AllowedMentions(everyone=False, users=False, roles=[discord.Object(players.id)])
        sent = await channel.send(f"{players.mention} @everyone", allowed_mentions=role_only)
        hidden = await channel.send(f"{quiet.mention}", allowed_mentions=discord.AllowedMentions(roles=True))
        nothing = await channel.send(f"{players.mention}", allowed_mentions=discord.AllowedMentions.none())
        everyone = await channel.send("@everyone")  # the bot may not mention everyone
        by_id = {m.id: m for m in fd.messages(chan)}
        assert by_id[sent.id].pinged == [carl.id]
        assert by_id[hidden.id].pinged == [] and by_id[nothing.id].pinged == [] and by_id[everyone.id].pinged == []


async def test_components_v2_layouts_as_discord_documents(fake_discord: FakeDiscord) -> None:
    """The stand-in refuses (400/50035) the Components V2 layouts Discord refuses, stores the
    ones it takes with their ``id``s, and pings who a text display mentions."""
    from tests.fakediscord import validation

    V2 = 1 << 15

    def text(s: str = "t") -> dict:
        return {"type": 10, "content": s}

    def button(cid: str) -> dict:
        return {"type": 2, "style": 1, "label": cid, "custom_id": cid}

    def gallery(n: int, url: str = "https://example.org/p.png") -> dict:
        return {"type": 12, "items": [{"media": {"url": url}} for _ in range(n)]}

    def section(texts: int, accessory: Optional[dict] = None) -> dict:
        d: dict = {"type": 9, "components": [text(f"s{i}") for i in range(texts)]}
        if accessory is not None:
            d["accessory"] = accessory
        return d

    thumb = {"type": 11, "media": {"url": "https://example.org/t.png"}}
    # at the limits: 40 components (the container and its 39 texts), 4,000 characters
    assert validation.check_message({"flags": V2, "components": [
        {"type": 17, "components": [text("x" * 100) for _ in range(39)]}]}) == []
    assert validation.check_message({"flags": V2, "components": [text("x" * 2000), text("y" * 2000)]}) == []
    assert validation.check_message({"flags": V2, "components": [
        section(3, thumb), gallery(10), {"type": 14, "spacing": 2, "divider": False},
        {"type": 17, "accent_color": 0xFFFFFF, "spoiler": True, "components": [
            section(1, button("go")), {"type": 1, "components": [button("stop")]}, {"type": 14}, text()]}]}) == []
    refused: dict[str, dict[str, Any]] = {
        r"content cannot be used with IS_COMPONENTS_V2": {"flags": V2, "content": "hi", "components": [text()]},
        r"embeds cannot be used": {"flags": V2, "embeds": [{"title": "t"}], "components": [text()]},
        r"sticker_ids cannot be used": {"flags": V2, "sticker_ids": ["1"], "components": [text()]},
        r"poll cannot be used": {"flags": V2, "poll": {"question": {"text": "?"}}, "components": [text()]},
        r"more than 40 components \(41": {"flags": V2, "components": [
            {"type": 17, "components": [text() for _ in range(40)]}]},
        r"more than 40 components \(42": {"flags": V2, "components": [  # buttons in rows count too
            {"type": 1, "components": [button(f"b{r}{i}") for i in range(5)]} for r in range(7)]},
        r"text displays total 4001 chars > 4000": {"flags": V2, "components": [
            text("x" * 2000), {"type": 17, "components": [section(1, thumb), text("y" * 1999)]}]},
        r"section holds 1 to 3 text displays \(4\)": {"flags": V2, "components": [section(4, thumb)]},
        r"section holds 1 to 3 text displays \(0\)": {"flags": V2, "components": [section(0, thumb)]},
        r"section needs an accessory": {"flags": V2, "components": [section(1)]},
        r"media gallery holds 1 to 10 items \(11\)": {"flags": V2, "components": [gallery(11)]},
        r"media gallery holds 1 to 10 items \(0\)": {"flags": V2, "components": [gallery(0)]},
        r"type 11 is not allowed here": {"flags": V2, "components": [thumb]},
        r"type 2 is not allowed here": {"flags": V2, "components": [button("loose")]},
        r"components\[0\].components\[0\]: component type 17 is not allowed": {"flags": V2, "components": [
            {"type": 17, "components": [{"type": 17, "components": [text()]}]}]},
        r"separator spacing must be 1 or 2": {"flags": V2, "components": [{"type": 14, "spacing": 3}]},
        r"accent_color 16777216": {"flags": V2, "components": [{"type": 17, "accent_color": 0x1000000,
                                                                "components": [text()]}]},
        r"file component only takes attachment://": {"flags": V2, "components": [
            {"type": 13, "file": {"url": "https://example.org/a.zip"}}]},
        r"attachment://missing.png names no attachment": {"flags": V2, "components": [
            gallery(1, "attachment://missing.png")]},
        r"text display without content": {"flags": V2, "components": [text("")]},
        r"duplicate component id 7": {"flags": V2, "components": [{**text(), "id": 7}, {**text(), "id": 7}]},
        r"duplicate custom_id 'go'": {"flags": V2, "components": [
            section(1, button("go")), {"type": 1, "components": [button("go")]}]},
        r"need IS_COMPONENTS_V2": {"components": [text()]},
    }
    for pattern, payload in refused.items():
        problems = validation.check_message(payload, files=set())
        assert any(re.search(pattern, p) for p in problems), (pattern, problems)
    # ids: the ones sent are kept, the others numbered in order around them
    numbered = validation.with_ids([{"type": 17, "components": [{**text(), "id": 2}, section(1, thumb)]}])
    assert [c["id"] for c in validation.walk(numbered)] == [1, 2, 3, 4, 5]

    fd = fake_discord
    guild, chan, alice, bob = make_world(fd)
    clicked: list[str] = []

    class Play(discord.ui.Button["Table"]):
        async def callback(self, interaction: discord.Interaction) -> None:
            clicked.append(interaction.user.name)
            await interaction.response.defer()

    class Table(discord.ui.LayoutView):
        def __init__(self) -> None:
            super().__init__(timeout=None)
            self.add_item(discord.ui.Container(
                discord.ui.TextDisplay(f"Round 1 - {alice.mention}, your turn"),
                discord.ui.MediaGallery(discord.MediaGalleryItem("attachment://table.png")),
                discord.ui.ActionRow(Play(label="Play", custom_id="v2:play")),
                accent_colour=0x2ECC71))

    async with running_bot(fd) as bot:
        channel = bot.get_channel(chan.id)
        assert isinstance(channel, discord.TextChannel)
        sent = await channel.send(view=Table(), file=discord.File(io.BytesIO(b"\x89PNG\r\n\x1a\n"), "table.png"),
                                  allowed_mentions=discord.AllowedMentions(users=[discord.Object(alice.id)]))
        m = fd.messages(chan)[-1]
        assert m.id == sent.id and m.flags & V2 and m.content == "" and m.attachment_names() == ["table.png"]
        assert "Round 1" in m.text() and [b["custom_id"] for b in m.buttons()] == ["v2:play"]
        assert [c["id"] for c in m.all_components()] == [1, 2, 3, 4, 5]  # numbered as Discord numbers them
        assert [(p.id, u) for p, u in fd.pings(chan)] == [(m.id, alice.id)]  # a text display's mention pings
        container = sent.components[0]
        assert isinstance(container, discord.components.Container) and container.accent_colour == discord.Colour(0x2ECC71)
        r = await fd.click(alice, m, "v2:play")
        assert r.ack_type == 6 and clicked == ["alice"]

        # an edit cannot take the flag off, nor put content on it
        route = discord.http.Route("PATCH", "/channels/{channel_id}/messages/{message_id}",
                                   channel_id=chan.id, message_id=m.id)
        refused_edits: Dict[str, Dict[str, Any]] = {r"cannot be removed": {"flags": 0, "components": [text()]},
                                                    r"content cannot be used": {"content": "now in content"}}
        for pattern, payload in refused_edits.items():
            with pytest.raises(discord.HTTPException) as ei:
                await bot.http.request(route, json=payload)
            assert (ei.value.status, ei.value.code) == (400, 50035), pattern
            assert fd.take_violations(pattern), (pattern, fd.violations)
        # a plain message becomes a layout only once its content is gone
        plain = await channel.send("scores")
        route = discord.http.Route("PATCH", "/channels/{channel_id}/messages/{message_id}",
                                   channel_id=chan.id, message_id=plain.id)
        with pytest.raises(discord.HTTPException):
            await bot.http.request(route, json={"flags": V2, "components": [text("scores")]})
        assert fd.take_violations(r"content cannot be used .*still on the message")
        await bot.http.request(route, json={"flags": V2, "content": "", "components": [text("scores")]})
        assert fd.messages(chan)[-1].flags & V2 and fd.messages(chan)[-1].text() == "scores"
        fd.assert_clean()
