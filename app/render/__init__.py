"""Images of the game tables, hands and player profiles (PNG bytes).

Pure functions from *view* dicts (what ``Game.view(seat)`` returns: plain,
JSON-serialisable data; never game objects) to PNG bytes.  The bot calls them
through :func:`app.render.pool.draw` (a worker process or one painter thread) on every move, so they are fast (a few ms; card sprites
are cached) and keep images modest (at most 1000 px wide, flat colours).

Every word drawn comes from the ``labels`` argument, already translated by
the caller; numbers and player names are drawn as given.  Each function's
label keys are exported as a tuple constant (``NIMMT_TABLE_LABELS`` ...)
whose comment lists each key's ``{placeholders}``.  Every placeholder of a
key is always supplied, so a translation may use any subset of them.  Use
forms that need no plural ("Draw pile: {count}").  A missing key is drawn as
the key itself (visible, never a crash).

Fonts: Pillow's embedded scalable font (no system fonts needed); see
:mod:`app.render.base` for how characters it lacks are folded.

Modules: :mod:`~app.render.base` (fonts, text), :mod:`~app.render.cards` (card
sprites), :mod:`~app.render.common` (palette, seat badges, the render lock),
one module per game beside it (each game's ``renderer`` in core.registry),
:mod:`~app.render.profile`, :mod:`~app.render.night` (a night's recap) and
:mod:`~app.render.pool` (drawing off the event loop).
"""
