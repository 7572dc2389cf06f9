"""The cyclic collector with hundreds of tables: what lives on is frozen.

Python's collector pauses grow with the tables (their figures, from
``bench/load.py`` and ``bench/cycles.py``, are in bench/README.md, *The collector
and discord.py's bookkeeping*; what the bot's discord.py client need not keep or
parse is trimmed in cogs/common/adapter.py):

- **At the start.**  :func:`freeze_loaded` moves what is loaded at the start into
  the permanent generation (``gc.freeze``) after a collection of the young
  generations only, and :func:`keep_frozen` freezes the tables as they are
  restored: a full pass would walk every restored table, right when the first
  clicks after a restart come in.
- **Later on.**  A full pass walks every object the collector tracks, so its
  pause grows with the live tables.  Leaving full passes out used to cost
  memory, because every move left reference cycles; the adapter's
  ``break_cycles`` breaks them where they end, so no move leaves a cycle of the
  bot's own objects (tests/e2e/test_cycles.py).  With that, :func:`keep_frozen`
  freezes, every ``FREEZE_EVERY`` seconds, what survived a full pass over what is
  not frozen yet: that pass, and Python's own (rare after it), walk only what
  came since the last freeze, never all the tables.  What a frozen object leaves
  is still freed by its reference count (a closed table's engine, presenter and
  messages); only a cycle that was alive at a freeze and dies later stays until
  the next thaw (``THAW_EVERY``; an exception kept with its traceback is the
  kind), which bench/load.py's RSS after play and after the close step would show.
"""
from __future__ import annotations

import asyncio
import gc

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
