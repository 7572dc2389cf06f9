"""What cogs/common/adapter.py takes from discord.py beyond its public API is where
the adapter expects it: an upgrade of discord.py that moves or renames any of it
fails here, by name, before the bot starts without its patches.  And nothing
outside the adapter reaches into discord.py's private parts."""
import ast
import re

import discord
import pytest
from discord.app_commands import CommandTree
from discord.ui import view as view_module

from cogs.common import adapter
from tests import ROOT


def test_the_installed_discord_py_is_the_one_the_adapter_is_written_against():
    assert adapter.check_version(), f"discord.py {discord.__version__}: see cogs/common/adapter.py"


async def test_the_client_internals_the_adapter_patches_are_there():
    client = discord.Client(intents=discord.Intents.none())
    http = client.http
    assert callable(http.request) and callable(http._try_clear_expired_ratelimits)
    assert isinstance(http._buckets, dict)
    bucket = discord.http.Ratelimit(None)  # what trim_ratelimits reads of a bucket
    for name in ("_last_request", "outgoing", "_pending_requests", "_sleeping", "remaining"):
        assert hasattr(bucket, name), f"Ratelimit.{name}"
    assert callable(bucket.is_expired)

    connection = adapter.connection_of(client)
    for event in ("MESSAGE_CREATE", "MESSAGE_UPDATE", "INTERACTION_CREATE", "GUILD_SCHEDULED_EVENT_USER_ADD",
                  "GUILD_SCHEDULED_EVENT_USER_REMOVE"):
        assert callable(connection.parsers[event]), event
    assert hasattr(connection, "self_id") and callable(connection.dispatch)
    store = connection._view_store
    assert isinstance(store._views, dict) and isinstance(store._dynamic_items, dict)
    assert isinstance(store._synced_message_views, dict) and callable(store.is_message_tracked)
    assert adapter.view_registries(client) is not None


async def test_wrap_parser_replaces_and_puts_back_discord_pys_parser():
    client = discord.Client(intents=discord.Intents.none())
    parsers = adapter.connection_of(client).parsers
    original, seen = parsers["INTERACTION_CREATE"], []

    def wrapper(parse):
        return lambda data: seen.append(data)

    restore = adapter.wrap_parser(client, "INTERACTION_CREATE", wrapper)
    parsers["INTERACTION_CREATE"]({"id": "1"})
    assert seen == [{"id": "1"}] and parsers["INTERACTION_CREATE"] is not original
    restore()
    assert parsers["INTERACTION_CREATE"] is original


def test_the_classes_break_cycles_patches_have_what_it_relies_on():
    for name in ("add_view", "schedule_dynamic_item_call"):
        assert callable(getattr(view_module.ViewStore, name)), f"ViewStore.{name}"
    for cls in (view_module.View, view_module.LayoutView):
        assert callable(getattr(cls.from_message, "__func__", None)), f"{cls.__name__}.from_message"
        assert hasattr(cls(), "__discord_ui_modal__")
    assert callable(CommandTree._call)
    assert "_cs_response" in discord.Interaction.__slots__
    assert "_parent" in discord.InteractionResponse.__slots__
    file = discord.File(__file__)
    assert callable(file._closer) and hasattr(file, "_owner")
    file.close()

    class Item(discord.ui.DynamicItem[discord.ui.Button], template=r"adapter:(?P<n>\d+)"):
        def __init__(self) -> None:
            super().__init__(discord.ui.Button(custom_id="adapter:1"))

    assert isinstance(Item.__discord_ui_compiled_template__, re.Pattern)
    assert hasattr(Item().item, "_view")


def test_what_sent_once_swaps_is_there():
    """sent_once puts its adapter into discord.py's webhook context variable; the adapter
    hands its session's ``request`` to discord.py's own, and shares its buckets' locks."""
    import contextvars
    import inspect

    from discord.webhook import async_ as webhook_module

    assert isinstance(webhook_module.async_context, contextvars.ContextVar)
    default = webhook_module.async_context.get()
    assert isinstance(default, webhook_module.AsyncWebhookAdapter)
    assert hasattr(default, "_locks")
    assert list(inspect.signature(webhook_module.AsyncWebhookAdapter.request).parameters)[:3] == [
        "self", "route", "session"]
    with adapter.sent_once():
        inside = webhook_module.async_context.get()
        assert inside is not default and inside._locks is default._locks
    assert webhook_module.async_context.get() is default


def _private_discord_reads(path):
    """Names of discord.py's private attributes a module reads (``x._name`` where
    ``_name`` is an attribute discord.py's own classes define)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in _DISCORD_PRIVATE}


_DISCORD_PRIVATE = {"_connection", "_view_store", "_cs_response", "_try_clear_expired_ratelimits", "_buckets",
                    "_dynamic_items", "_synced_message_views", "_closer", "parsers", "_state", "_http"}


@pytest.mark.parametrize("path", sorted([ROOT / "bot.py", *(ROOT / "cogs").rglob("*.py"), *(ROOT / "app").rglob("*.py")]),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_adapter_reaches_into_discord_py(path):
    if path == ROOT / "cogs" / "common" / "adapter.py":
        return
    assert not _private_discord_reads(path), f"{path.relative_to(ROOT)}: move it into cogs/common/adapter.py"
