"""Garbage (Trash): the engine (``engine``) and its computer players (``players``)."""
