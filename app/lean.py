"""What the bot's discord.py client need not keep or parse, with hundreds of tables.

Costs of discord.py 2.x and of Python's collector that grow with the number of
tables (their figures, from ``bench/load.py`` and ``bench/cycles.py``, are in
bench/README.md, *The collector and discord.py's bookkeeping*):

- **Rate-limit buckets.**  ``HTTPClient`` keeps one ``Ratelimit`` (~1.1 KB)
  per route and channel (a thread's messages, its edits, its lobby...) until
  it has been idle for 5 minutes, and each time it makes a new one (past 256)
  it scans them all, on the loop: one scan per new thread route.
  :func:`trim_ratelimits` scans at most every ``every`` seconds and lets go
  of a bucket idle for ``idle`` seconds that holds nothing back (requests
  left, or its window over; nothing waiting), which a new bucket would not
  know anyway.
- **The bot's own messages.**  With the guild-messages intent (needed to
  notice a deleted table message) every message the bot posts or edits comes
  back as a gateway event that discord.py turns into a ``Message`` (embeds,
  components, author...) only to dispatch ``on_message``/``on_message_edit``,
  which nothing of the bot reads for its own messages.  :func:`skip_own_messages`
  drops those two events for messages the bot wrote, unless discord.py keeps
  a view in sync with that message (a non-dynamic view; a table's are all
  dynamic items).
- **The cyclic collector at start.**  :func:`freeze_loaded` moves what is
  loaded at the start into the permanent generation (``gc.freeze``)
  after a collection of the young generations only, and :func:`keep_frozen`
  freezes the tables as they are restored: a full pass would walk every
  restored table, right when the first clicks after a restart come in.
- **The cyclic collector later on.**  A full pass walks every object the
  collector tracks, so its pause grows with the live tables.  Leaving full
  passes out used to cost memory, because every move left reference cycles
  (bench/cycles.py found them): discord.py's ``File.close`` puts a stream's
  bound ``close`` back into its own ``__dict__`` (each picture sent, its PNG
  bytes included), views and their items refer to each other, and so do an
  interaction and its ``response``.  :func:`break_cycles` breaks the three
  where they end; no move leaves a cycle of the bot's own objects
  (tests/e2e/test_cycles.py).  With that, :func:`keep_frozen` freezes, every
  ``FREEZE_EVERY`` seconds, what survived a full pass over what is not frozen
  yet: that pass, and Python's own (rare after it), walk only what came since
  the last freeze, never all the tables; the longer the interval, the more a
  pass walks while tables are opened.  What a frozen object leaves is still
  freed by its reference count (a closed table's engine, presenter and
  messages); only a cycle that was alive at a freeze and dies later stays
  until the next thaw (``THAW_EVERY``; an exception kept with its traceback
  is the kind; the ones a move made are broken above), which
  bench/load.py's RSS after play and after the close step would show.
"""
from __future__ import annotations

import asyncio
import gc
from typing import Any

IDLE = 30.0  # seconds a bucket must be idle before it is let go
EVERY = 10.0  # seconds between scans


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


def freeze_loaded() -> None:
    """At the start: what is loaded lives as long as the process (see above)."""
    gc.collect(1)
    gc.freeze()


FREEZE_EVERY = 0.5  # seconds between freezes of what survived (keep_frozen)
THAW_EVERY = 3600.0  # seconds between full passes over everything, the frozen included


async def keep_frozen(every: float = FREEZE_EVERY, thaw_every: float = THAW_EVERY) -> None:
    """Every ``every`` seconds: a full pass over what is not frozen yet, then all that survived it is frozen.

    That pass walks only what came since the last freeze (half a second of play,
    or of tables being opened: at most a few ms), never every live table, and frees the cycles
    that died meanwhile; Python's own full passes, rare after it, walk no more
    (see above).

    A cycle among objects that were frozen alive (a closed table's, a connection's)
    is never found by those passes, so once every ``thaw_every`` seconds everything is
    unfrozen for one full pass: a bot that runs for weeks does not grow by what such
    cycles hold.  That pass walks every live table: one pause an hour instead of
    one every few seconds."""
    loop = asyncio.get_running_loop()
    thawed = loop.time()
    while True:
        await asyncio.sleep(every)
        if thaw_every and loop.time() - thawed >= thaw_every:
            thawed = loop.time()
            gc.unfreeze()
        gc.collect()
        gc.freeze()


# ----------------------------------------------------------------------------- reference cycles
def _unlink(view: Any) -> None:
    """Drop the items' references back to their view (``item._view``): the view keeps its items."""
    for item in view.walk_children():
        item._view = None
        inner = getattr(item, "item", None)  # a dynamic item's button or select
        if inner is not None and hasattr(inner, "_view"):
            inner._view = None


def _fully_dynamic(view: Any) -> bool:
    from discord.ui import DynamicItem

    return all(isinstance(item, DynamicItem) or not item.is_dispatchable() for item in view.walk_children())


_DISPATCHED: Any = None  # contextvars.ContextVar: the views discord.py builds for one dynamic item call


def break_cycles() -> None:
    """Three reference cycles discord.py 2.x makes on every move (bench/cycles.py), broken where they end.

    - ``discord.File.close`` puts the stream's own bound ``close`` back into the
      stream's ``__dict__``: a cycle through every picture sent (its PNG bytes
      included).  Here the stub is deleted instead, which uncovers the same method.
    - A view and its items refer to each other (``item._view``).  A view of dynamic
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
    import contextvars
    import functools

    import discord
    from discord.ui import view as view_module

    global _DISPATCHED
    if _DISPATCHED is not None:
        return
    _DISPATCHED = contextvars.ContextVar("lean_dispatched_views", default=None)

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
