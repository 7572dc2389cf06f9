"""Local stand-in for Discord (REST + Gateway on 127.0.0.1) for end-to-end tests of the bot.

    from tests.fakediscord import FakeDiscord
    async with FakeDiscord() as fd:
        guild = fd.add_guild("Test Guild")
        chan = fd.add_channel(guild, "games")
        alice = fd.add_user("alice"); fd.add_member(guild, alice)
        with fd.patched():
            ... start the real discord.py bot with fd.token ...
            await fd.wait_ready(); await fd.wait_commands()
            r = await fd.slash(alice, chan, "nimmt new", seats=4)
        fd.assert_clean()

See README.md in this package for the full API.
"""
from .models import Channel, Guild, InteractionResult, Member, Message, Role, User
from .server import (
    DEFAULT_BOT_PERMISSIONS,
    DEFAULT_EVERYONE_PERMISSIONS,
    ApiError,
    FakeDiscord,
    Hold,
    NoAcknowledgement,
    RequestLog,
)

__all__ = [
    "FakeDiscord",
    "Hold",
    "User",
    "Guild",
    "Role",
    "Member",
    "Channel",
    "Message",
    "InteractionResult",
    "NoAcknowledgement",
    "RequestLog",
    "ApiError",
    "DEFAULT_BOT_PERMISSIONS",
    "DEFAULT_EVERYONE_PERMISSIONS",
]
