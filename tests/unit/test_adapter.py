"""What cogs/common/adapter.py takes from discord.py beyond its public API is where
the adapter expects it: an upgrade of discord.py that moves or renames any of it
fails here, by name, before the bot starts without its patches.  And nothing
outside the adapter reaches into discord.py's private parts."""
import ast
import re

import aiohttp
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


def _message_payload(message_id):
    """A message as Discord answers a webhook request with it (the fields discord.py reads)."""
    return {"id": str(message_id), "channel_id": "7", "type": 0, "content": "hi", "author": {
        "id": "9", "username": "bot", "discriminator": "0", "avatar": None}, "attachments": [], "embeds": [],
        "mentions": [], "mention_roles": [], "pinned": False, "mention_everyone": False, "tts": False,
        "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None, "flags": 0, "components": []}


async def test_within_id_of_or_quietly_discord_py_parses_no_message_it_is_answered_with():
    """What answers_unparsed patches (``Webhook._create_message``, ``InteractionMessage``)
    still builds discord.py's messages outside id_of / quietly / answer_id; within them only the id is kept."""
    adapter.answers_unparsed()
    adapter.answers_unparsed()  # (once: a second call patches nothing again)
    async with aiohttp.ClientSession() as session:
        webhook = discord.Webhook.partial(5, "token", session=session)
        await _parsed_or_not(webhook)


async def _parsed_or_not(webhook):
    from discord import interactions


    def made(message_id):
        return (webhook._create_message(_message_payload(message_id), thread=discord.utils.MISSING),
                interactions.InteractionMessage(state=webhook._state, channel=None, data=_message_payload(message_id)))

    outside = made(11)
    assert isinstance(outside[0], discord.WebhookMessage) and isinstance(outside[1], discord.InteractionMessage)
    assert [m.id for m in outside] == [11, 11] and outside[0].content == "hi" == outside[1].content

    inside = []

    async def request(message_id):
        inside.extend(made(message_id))
        return inside[0]

    assert await adapter.id_of(request(12)) == 12
    assert [type(m).__name__ for m in inside] == ["_Sent", "_Sent"] and [m.id for m in inside] == [12, 12]
    inside.clear()
    assert await adapter.quietly(request(13)) is None
    assert not any(isinstance(m, discord.Message) for m in inside)
    assert isinstance(made(14)[1], discord.InteractionMessage)  # (after: parsed again)


async def test_a_form_with_files_goes_to_the_session_as_one_body_of_the_same_bytes():
    """whole_forms: discord.py's webhook adapter hands aiohttp a multipart form (a message with
    a file); the session gets it rendered (the same bytes aiohttp would write, part by part)
    under its Content-Type; a JSON body goes as it is."""
    import io

    seen = []

    class Answered:
        async def __aenter__(self):
            return "response"

        async def __aexit__(self, *exc):
            seen.append("closed")

    class Session:
        def request(self, method, url, **kwargs):
            seen.append((method, url, kwargs))
            return Answered()

    def form():
        made = aiohttp.FormData(quote_fields=False)
        made.add_field(name="payload_json", value='{"content": "hi"}')
        made.add_field(name="files[0]", value=io.BytesIO(b"\x89PNG..."), filename="table.png",
                       content_type="application/octet-stream")
        return made

    sent = form()
    async with adapter._WholeForms(Session()).request("POST", "u", data=sent, headers={"A": "1"}, params=None) as got:
        assert got == "response"
    (method, url, kwargs), closed = seen
    body = kwargs["data"]
    boundary = kwargs["headers"]["Content-Type"].split("boundary=")[1]
    assert closed == "closed" and (method, url, kwargs["params"], kwargs["headers"]["A"]) == ("POST", "u", None, "1")
    assert kwargs["headers"]["Content-Type"].startswith("multipart/form-data; boundary=")
    expected = form()  # as aiohttp renders it, with the same boundary
    expected._writer._boundary = boundary.encode()
    assert isinstance(body, bytes) and body == await expected().as_bytes()
    assert b'name="files[0]"; filename="table.png"' in body and b"\x89PNG..." in body
    assert body.endswith(b"--" + boundary.encode() + b"--\r\n")

    seen.clear()
    async with adapter._WholeForms(Session()).request("PATCH", "u", data='{"a": 1}', headers={"B": "2"}):
        pass
    assert seen[0] == ("PATCH", "u", {"data": '{"a": 1}', "headers": {"B": "2"}})
