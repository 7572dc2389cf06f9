"""The games' Discord side, one package each: its cog (``cog``) and its pictures (``render``)."""
