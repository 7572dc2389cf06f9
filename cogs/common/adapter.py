"""Every place the bot reaches into discord.py beyond its public API, in one module.

The bot is written against discord.py 2.7 (``requirements.txt`` pins it);
:func:`check_version` says so at start when another one is installed, and
``tests/unit/test_adapter.py`` fails when an upgrade moves or renames what is
used here.  What and why:

- :data:`ORIGINAL`: editing an interaction's own message through its followup webhook.
- :func:`sent_once`: a webhook message (a followup: no nonce) sent once, not again
  after a 5xx as discord.py's webhook adapter does (it may have landed).
- :func:`pace_requests`: every REST request through the bot's request budget
  (``HTTPClient.request``, see app/budget.py).
- :func:`trim_ratelimits`: ``HTTPClient`` keeps one ``Ratelimit`` (~1.1 KB) per
  route and channel until it has been idle for 5 minutes, and each time it makes a
  new one (past 256) it scans them all, on the loop.  Here the scan runs at most
  every ``every`` seconds and lets go of a bucket idle for ``idle`` seconds that
  holds nothing back (requests left, or its window over; nothing waiting).
- :func:`skip_own_messages`: with the guild-messages intent (needed to notice a
  deleted table message) every message the bot posts or edits comes back as a
  gateway event that discord.py turns into a ``Message`` only to dispatch
  ``on_message``/``on_message_edit``, which nothing of the bot reads for its own
  messages; those are dropped unless discord.py keeps a view in sync with the message.
- :func:`raw_event_users`, :func:`wrap_parser`: gateway events read before (or
  instead of) discord.py's own parser (the game nights' "Interested", the gate of
  interactions while tables are restored at a start).
- :func:`break_cycles`: the reference cycles discord.py makes on every move, broken
  where they end (tests/e2e/test_cycles.py; figures in bench/README.md); :func:`let_go`
  for a view drawn and not sent.
- :func:`view_registries`: what discord.py's dispatch will route (cogs/guard.py).
- :func:`whole_forms`: a webhook or interaction request with files goes out as one
  body (aiohttp writes a multipart form part by part: a system call each).
- :func:`quietly`, :func:`id_of`, :func:`answer_id`: a webhook or interaction request whose answer (the
  message sent or edited) is not turned into a discord.py ``Message``
  (:func:`answers_unparsed`): the bot needs at most its id.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import re
from types import TracebackType
from typing import Any, Awaitable, Callable, Iterator, Mapping, cast

import aiohttp
import discord
from discord import interactions as interactions_module
from discord.http import json_or_text
from discord.ui import view as view_module
from discord.webhook import async_ as webhook_module

log = logging.getLogger(__name__)

#: the discord.py release this module is written against (major, minor)
SUPPORTED = (2, 7)


def check_version() -> bool:
    """Whether the installed discord.py is the release this module is written
    against; logs an error when it is not (what is patched here may have moved)."""
    found = tuple(int(part) for part in discord.__version__.split(".")[:2])
    if found != SUPPORTED:
        log.error("discord.py %s is installed; the bot is written against %d.%d.x (cogs/common/adapter.py)",
                  discord.__version__, *SUPPORTED)
        return False
    return True


#: the message id of an interaction's own response, for ``Webhook.edit_message``
#: through the interaction's followup webhook: Discord documents
#: ``/webhooks/{application.id}/{interaction.token}/messages/@original``; discord.py
#: declares the id an int and puts it into the path as it is.
ORIGINAL = cast(int, "@original")


class _FirstAnswer:
    """The aiohttp session of one webhook request, as discord.py's webhook adapter uses it
    (``async with session.request(...) as response``): a 5xx answer raises
    :class:`discord.DiscordServerError` at once instead of coming back to the adapter,
    which would send the request again; so does a connection reset the adapter would
    send again (``errno`` 54 or 10054: macOS, Windows), as an :class:`aiohttp.ClientConnectionError`."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self._session = session

    def request(self, *args: Any, **kwargs: Any) -> "_Answer":
        return _Answer(self._session.request(*args, **kwargs))


class _Answer:
    def __init__(self, pending: Any) -> None:
        self._pending = pending  # aiohttp's request context manager

    async def __aenter__(self) -> aiohttp.ClientResponse:
        try:
            response: aiohttp.ClientResponse = await self._pending.__aenter__()
        except OSError as error:
            if error.errno in (54, 10054):
                raise aiohttp.ClientConnectionError(str(error)) from error
            raise
        if response.status >= 500:
            try:
                data = await json_or_text(response)
            finally:
                await self._pending.__aexit__(None, None, None)
            raise discord.DiscordServerError(response, data)
        return response

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self._pending.__aexit__(kind, error, trace)


class _OnceAdapter(webhook_module.AsyncWebhookAdapter):
    """discord.py's webhook adapter, each request sent once whatever Discord answers
    (a 429 is waited out and sent again: Discord did not carry it out)."""

    def __init__(self, buckets: Any) -> None:
        super().__init__()
        self._locks = buckets  # the default adapter's: one rate limit bucket per webhook, as before

    async def request(self, route: Any, session: Any, **kwargs: Any) -> Any:
        return await super().request(route, cast(aiohttp.ClientSession, _FirstAnswer(session)), **kwargs)


_ONCE: _OnceAdapter | None = None


@contextlib.contextmanager
def sent_once() -> Iterator[None]:
    """Webhook requests made within (in this task) are sent once: discord.py sends a
    webhook request again after a 500, 502 or 504 answer (up to 5 times), but a followup
    carries no nonce and may have landed before Discord's edge failed, so a message
    sent again would show twice.  Here the 5xx (or a dropped connection) reaches the
    caller, who looks for what landed."""
    global _ONCE
    if _ONCE is None:
        _ONCE = _OnceAdapter(webhook_module.async_context.get()._locks)
    token = webhook_module.async_context.set(_ONCE)
    try:
        yield
    finally:
        webhook_module.async_context.reset(token)


def pace_requests(client: discord.Client, wrap: Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]
                  ) -> None:
    """Every REST request of *client* goes through ``wrap(request)`` (the request budget)."""
    http = client.http
    setattr(http, "request", wrap(http.request))


def connection_of(client: discord.Client) -> Any:
    """The client's gateway state (discord.py's ``ConnectionState``: its parsers, its view store)."""
    return client._connection


def wrap_parser(client: discord.Client, event: str,
                wrapper: Callable[[Callable[[Any], None]], Callable[[Any], None]]) -> Callable[[], None]:
    """discord.py's parser of the gateway *event* replaced by ``wrapper(parser)``;
    returns the function that puts the parser back."""
    parsers = connection_of(client).parsers
    parse = parsers[event]
    parsers[event] = wrapper(parse)

    def restore() -> None:
        parsers[event] = parse

    return restore


IDLE = 5.0  # seconds a bucket must be idle before it is let go
EVERY = 5.0  # seconds between scans


def trim_ratelimits(http: Any, *, idle: float = IDLE, every: float = EVERY) -> None:
    """Replace ``http._try_clear_expired_ratelimits`` (called for every new bucket key)."""
    last = [0.0]

    def clear() -> None:
        try:
            now = asyncio.get_running_loop().time()
        except RuntimeError:
            return
        if now - last[0] < every:
            return
        last[0] = now
        buckets = http._buckets
        stale = [key for key, bucket in buckets.items()
                 if now - bucket._last_request >= idle and bucket.outgoing == 0 and not bucket._pending_requests
                 and not bucket._sleeping.locked() and (bucket.remaining > 0 or bucket.is_expired())]
        for key in stale:
            del buckets[key]

    http._try_clear_expired_ratelimits = clear


def skip_own_messages(connection: Any) -> None:
    """Drop MESSAGE_CREATE / MESSAGE_UPDATE of the bot's own messages before discord.py parses them."""
    parsers = connection.parsers
    create, update = parsers["MESSAGE_CREATE"], parsers["MESSAGE_UPDATE"]
    views = connection._view_store

    def own(data: dict[str, Any]) -> bool:
        author = data.get("author")
        return author is not None and connection.self_id is not None and int(author["id"]) == connection.self_id

    def tracked(data: dict[str, Any]) -> bool:
        ids = [data.get("id"), (data.get("interaction") or {}).get("id")]
        return any(i is not None and views.is_message_tracked(int(i)) for i in ids)

    def on_create(data: dict[str, Any]) -> None:
        if not own(data):
            create(data)

    def on_update(data: dict[str, Any]) -> None:
        if not own(data) or tracked(data):
            update(data)

    parsers["MESSAGE_CREATE"] = on_create
    parsers["MESSAGE_UPDATE"] = on_update


def raw_event_users(connection: Any) -> None:
    """GUILD_SCHEDULED_EVENT_USER_ADD / _REMOVE as ``raw_scheduled_event_user(data, interested)``:
    discord.py drops them for a user it has not cached, and without the members intent
    it has cached almost nobody."""
    parsers = connection.parsers
    for event, interested in (("GUILD_SCHEDULED_EVENT_USER_ADD", True), ("GUILD_SCHEDULED_EVENT_USER_REMOVE", False)):
        parse = parsers[event]

        def raw(data: dict[str, Any], parse: Callable[[Any], None] = parse, interested: bool = interested) -> None:
            connection.dispatch("raw_scheduled_event_user", data, interested)
            parse(data)

        parsers[event] = raw


def view_registries(bot: Any) -> tuple[Mapping[Any, Mapping[tuple[int, str], Any]], list[re.Pattern[str]]] | None:
    """discord.py's two dispatch registries (private in 2.7; see cogs/guard.py for
    why the guard reads them): the views' items by message id (None: any message) and
    ``(component_type, custom_id)``, and the templates of the registered
    dynamic items.  None when this discord.py keeps them elsewhere."""
    store = getattr(getattr(bot, "_connection", None), "_view_store", None)
    views = getattr(store, "_views", None)
    dynamic = getattr(store, "_dynamic_items", None)
    if not isinstance(views, Mapping) or not isinstance(dynamic, Mapping):
        return None
    return views, [p for p in dynamic if isinstance(p, re.Pattern)]


# ----------------------------------------------------------------------------- reference cycles
def _unlink(view: Any) -> None:
    """Drop the items' references back to their view (``item._view``) and, in a layout,
    to the container or row that holds them (``item._parent``): the view keeps its items."""
    for item in view.walk_children():
        item._view = None
        item._parent = None
        inner = getattr(item, "item", None)  # a dynamic item's button or select
        if inner is not None and hasattr(inner, "_view"):
            inner._view = None
            inner._parent = None


def let_go(view: Any) -> None:
    """A view drawn and then not sent (its message was not needed after all): its items'
    references back to it are dropped, as they are for a view that is sent (:func:`break_cycles`)."""
    _unlink(view)


def _fully_dynamic(view: Any) -> bool:
    return all(isinstance(item, discord.ui.DynamicItem) or not item.is_dispatchable() for item in view.walk_children())


_DISPATCHED: Any = None  # contextvars.ContextVar: the views discord.py builds for one dynamic item call


def break_cycles() -> None:
    """Three reference cycles discord.py 2.x makes on every move (bench/cycles.py), broken where they end.

    - ``discord.File.close`` puts the stream's own bound ``close`` back into the
      stream's ``__dict__``: a cycle through every picture sent (its PNG bytes
      included).  Here the stub is deleted instead, which uncovers the same method.
    - A view and its items refer to each other (``item._view``; in a layout, a
      container or row and its items too: ``item._parent``).  A view of dynamic
      items only (every table message and panel) is not dispatched through once it
      is sent: discord.py does not store it (nor start the 15-minute timeout task it
      gives every ephemeral answer with a view, which held each such view, a private
      panel's or the rules', for 15 minutes), and the items' back references are dropped.
      The view discord.py builds from the clicked message for a dynamic item's
      callback is unlinked when the callback is over.
    - ``Interaction.response`` refers to its interaction (``_parent``).  Once the
      dynamic item's callback or the slash command is over and the interaction
      answered, the response lets go of it (``is_done()`` stays true).
    """
    global _DISPATCHED
    if _DISPATCHED is not None:
        return
    _DISPATCHED = contextvars.ContextVar("dispatched_views", default=None)

    def close(self: Any) -> None:
        try:
            del self.fp.close  # the stub set in __init__: the stream's own method shows again
        except AttributeError:
            self.fp.close = self._closer
        if self._owner:
            self._closer()

    setattr(discord.File, "close", close)  # a patch of the library: not its declared type

    store = view_module.ViewStore
    add_view = store.add_view

    @functools.wraps(add_view)
    def add_view_unlinked(self: Any, view: Any, message_id: Any = None) -> None:
        if (not view.__discord_ui_modal__ and _fully_dynamic(view) and message_id not in self._views
                and message_id not in self._synced_message_views):
            # Nothing is dispatched through it (its dynamic items are found by their
            # custom_id templates, registered as add_view would): not stored, so
            # discord.py starts no 15-minute timeout task holding it, as it does for
            # every ephemeral answer or followup with a view.
            for item in view.walk_children():
                if isinstance(item, discord.ui.DynamicItem):
                    self._dynamic_items.setdefault(item.__discord_ui_compiled_template__, item.__class__)
            _unlink(view)
            return
        add_view(self, view, message_id)

    setattr(store, "add_view", add_view_unlinked)

    for cls in (view_module.View, view_module.LayoutView):
        from_message = getattr(cls.from_message, "__func__")  # the function under the classmethod

        def recorded(klass: Any, *args: Any, _original: Any = from_message, **kwargs: Any) -> Any:
            view = _original(klass, *args, **kwargs)
            made = _DISPATCHED.get()
            if made is not None:
                made.append(view)
            return view

        setattr(cls, "from_message", classmethod(functools.wraps(from_message)(recorded)))

    call = store.schedule_dynamic_item_call

    @functools.wraps(call)
    async def call_then_unlink(self: Any, component_type: int, factory: Any, interaction: Any, *args: Any) -> None:
        made: list[Any] = []
        _DISPATCHED.set(made)  # this runs in its own task: the variable is this call's
        try:
            await call(self, component_type, factory, interaction, *args)
        finally:
            for view in made:
                _unlink(view)
            made.clear()
            release_response(interaction)

    setattr(store, "schedule_dynamic_item_call", call_then_unlink)

    tree = discord.app_commands.CommandTree
    run_command = tree._call

    @functools.wraps(run_command)
    async def call_then_release(self: Any, interaction: Any) -> None:
        try:
            await run_command(self, interaction)
        finally:
            release_response(interaction)

    setattr(tree, "_call", call_then_release)


def release_response(interaction: Any) -> None:
    """An answered interaction's ``response`` lets go of the interaction (see :func:`break_cycles`)."""
    try:
        response = interaction._cs_response
    except AttributeError:
        return
    if response.is_done():
        response._parent = None


# ----------------------------------------------------------------------------- forms sent whole
class _WholeForms:
    """The aiohttp session of one webhook request, as discord.py's webhook adapter uses it
    (``async with session.request(...)``): a multipart form (a message with files) is
    rendered into one body first, the same bytes under the same ``Content-Type``, so the
    request goes out in one write instead of about eight (a boundary, headers, a payload
    and a line end for each part: a system call each)."""

    __slots__ = ("_session",)

    def __init__(self, session: Any) -> None:
        self._session = session

    def request(self, method: str, url: Any, *, data: Any = None, headers: Mapping[str, str] | None = None,
                **kwargs: Any) -> Any:
        if isinstance(data, aiohttp.FormData):
            return _WholeForm(self._session, method, url, data, dict(headers or {}), kwargs)
        return self._session.request(method, url, data=data, headers=headers, **kwargs)


class _WholeForm:
    def __init__(self, session: Any, method: str, url: Any, form: aiohttp.FormData, headers: dict[str, str],
                 kwargs: dict[str, Any]) -> None:
        self._session, self._method, self._url, self._form = session, method, url, form
        self._headers, self._kwargs = headers, kwargs
        self._pending: Any = None

    async def __aenter__(self) -> aiohttp.ClientResponse:
        body = self._form()
        data = await body.as_bytes()
        self._headers["Content-Type"] = body.content_type  # (with the form's boundary)
        self._pending = self._session.request(self._method, self._url, data=data, headers=self._headers,
                                              **self._kwargs)
        response: aiohttp.ClientResponse = await self._pending.__aenter__()
        return response

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        await self._pending.__aexit__(kind, error, trace)


def whole_forms() -> None:
    """Every request of discord.py's webhook adapter (followups, token edits, interaction
    answers) hands its session through :class:`_WholeForms`."""
    adapter = webhook_module.AsyncWebhookAdapter
    if getattr(adapter.request, "_whole_forms", False):
        return
    request = adapter.request

    @functools.wraps(request)
    async def whole(self: Any, route: Any, session: Any, **kwargs: Any) -> Any:
        return await request(self, route, cast(aiohttp.ClientSession, _WholeForms(session)), **kwargs)

    setattr(whole, "_whole_forms", True)
    setattr(adapter, "request", whole)


# ----------------------------------------------------------------------------- answers not parsed
_UNPARSED: contextvars.ContextVar[bool] = contextvars.ContextVar("answers_unparsed", default=False)


class _Sent:
    """What discord.py gets in place of a message Discord answered with, within :func:`quietly`,
    :func:`id_of` or :func:`answer_id`: its id (what discord.py itself reads of it afterwards, to store a view)."""

    __slots__ = ("id",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.id = int(data["id"])


def answers_unparsed() -> None:
    """Within :func:`quietly`, :func:`id_of` or :func:`answer_id` (in that task only), discord.py turns no
    message Discord answers with into a ``WebhookMessage`` (a followup sent, a webhook
    message edited) or an ``InteractionMessage`` (the original response edited, the message
    of an interaction's answer): parsing one (its components, embeds, attachments, author)
    was a sizeable share of the bot's CPU per move, for objects nothing read."""
    webhook = webhook_module.Webhook
    if getattr(webhook._create_message, "_unparsed", False):
        return
    create = webhook._create_message

    @functools.wraps(create)
    def create_message(self: Any, data: Any, *, thread: Any) -> Any:
        if _UNPARSED.get():
            return _Sent(data)
        return create(self, data, thread=thread)

    setattr(create_message, "_unparsed", True)
    setattr(webhook, "_create_message", create_message)

    message = interactions_module.InteractionMessage
    base_new = super(message, message).__new__

    def new(cls: Any, *args: Any, **kwargs: Any) -> Any:
        # (a _Sent is no InteractionMessage: Python then calls no __init__ on it)
        data = kwargs.get("data")
        if data is not None and _UNPARSED.get():
            return _Sent(data)
        return base_new(cls)

    setattr(message, "__new__", new)


async def quietly(request: Awaitable[Any]) -> None:
    """Await a discord.py webhook or interaction *request* (a coroutine not started yet)
    whose message, as Discord answers with it, is not needed: it is not parsed."""
    token = _UNPARSED.set(True)
    try:
        await request
    finally:
        _UNPARSED.reset(token)


async def id_of(request: Awaitable[Any]) -> int:
    """The id of the message a discord.py webhook *request* sends or edits (``Webhook.send``
    with ``wait=True``, ``Webhook.edit_message``, ``Interaction.edit_original_response``),
    the message itself not parsed."""
    token = _UNPARSED.set(True)
    try:
        sent = await request
    finally:
        _UNPARSED.reset(token)
    return cast(_Sent, sent).id


async def answer_id(request: Awaitable[discord.InteractionCallbackResponse[Any]]) -> int | None:
    """The id of the message an interaction's answer *request* (``InteractionResponse.send_message``)
    posts, as Discord tells it (None: not told), the message itself not parsed."""
    token = _UNPARSED.set(True)
    try:
        answer = await request
    finally:
        _UNPARSED.reset(token)
    return answer.message_id
