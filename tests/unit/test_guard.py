"""What the guard relies on in discord.py (see cogs/common/adapter.py: the registries
discord.py 2.7 keeps private): with the real client, a click counts as
handled exactly when discord.py's own dispatch would run a handler for it.
An upgrade that moves those registries fails here, not silently in play."""
from __future__ import annotations

from typing import Any

import discord
from discord.ext import commands

from cogs.common.adapter import view_registries
from cogs.guard import GuardCog
from cogs.night import JoinNight

MESSAGE_ID, OTHER_ID, CHANNEL_ID, USER_ID = 5001, 5002, 4001, 3001


def bot() -> commands.Bot:
    return commands.Bot(command_prefix="!", intents=discord.Intents.none())


def click(client: commands.Bot, custom_id: str, on_message: list[str], message_id: int = MESSAGE_ID,
          component_type: int = 2) -> discord.Interaction:
    """A component interaction as Discord sends it, parsed by discord.py itself."""
    user = {"id": str(USER_ID), "username": "ana", "discriminator": "0", "avatar": None, "global_name": None}
    message = {
        "id": str(message_id), "channel_id": str(CHANNEL_ID), "author": {**user, "id": "1", "bot": True},
        "content": "", "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None, "tts": False,
        "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [], "embeds": [],
        "pinned": False, "type": 0, "flags": 0,
        "components": [{"type": 1, "components": [{"type": 2, "style": 2, "label": "x", "custom_id": c}
                                                  for c in on_message]}] if on_message else [],
    }
    data: Any = {
        "id": "7001", "application_id": "1", "type": 3, "token": "t", "version": 1, "channel_id": str(CHANNEL_ID),
        "channel": {"id": str(CHANNEL_ID), "type": 1}, "user": user, "locale": "en-US",
        "attachment_size_limit": 8 << 20, "message": message,
        "data": {"custom_id": custom_id, "component_type": component_type},
    }
    return discord.Interaction(data=data, state=client._connection)


def test_discord_py_keeps_the_registries_the_guard_reads():
    client = bot()
    assert view_registries(client) is not None, "discord.py moved its view registries: see cogs/common/adapter.py"
    client.add_dynamic_items(JoinNight)
    views, patterns = view_registries(client)
    assert any(p.fullmatch("night:12:join") for p in patterns)
    client.remove_dynamic_items(JoinNight)
    assert not any(p.fullmatch("night:12:join") for p in view_registries(client)[1])


def test_a_dynamic_item_is_handled_only_on_a_message_that_carries_it():
    client = bot()
    guard = GuardCog(client)
    client.add_dynamic_items(JoinNight)
    assert guard.handled(click(client, "night:12:join", ["night:12:join"]))
    # discord.py finds no such component on the message and runs nothing: the guard answers
    assert not guard.handled(click(client, "night:12:join", ["night:12:leave"]))
    assert not guard.handled(click(client, "night:12:join", ["night:12:join"], component_type=3))
    assert not guard.handled(click(client, "nothing:of:ours", ["nothing:of:ours"]))
    client.remove_dynamic_items(JoinNight)
    assert not guard.handled(click(client, "night:12:join", ["night:12:join"]))


def test_a_view_bound_to_one_message_handles_clicks_there_only():
    client = bot()
    guard = GuardCog(client)
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label="x", custom_id="plain:1"))
    client.add_view(view, message_id=MESSAGE_ID)
    assert guard.handled(click(client, "plain:1", ["plain:1"]))
    assert not guard.handled(click(client, "plain:1", ["plain:1"], message_id=OTHER_ID))
    anywhere = discord.ui.View(timeout=None)
    anywhere.add_item(discord.ui.Button(label="y", custom_id="plain:2"))
    client.add_view(anywhere)  # a persistent view without a message: every message
    assert guard.handled(click(client, "plain:2", [], message_id=OTHER_ID))
