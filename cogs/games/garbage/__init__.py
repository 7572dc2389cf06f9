"""Garbage at the table: the cog (``cog``), the pictures (``render``)."""
