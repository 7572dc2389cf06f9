"""What the running bot keeps per table (or per table and player), counted by
structure: all of it should be empty once every table is closed."""
from __future__ import annotations

from typing import Any


def per_table_state(bot: Any) -> dict[str, int]:
    """Entries in each structure of the bot that holds something of a table (not the
    ids of replaced messages the presenter is deleting: it forgets each after a minute)."""
    manager = bot.tables
    counts: dict[str, int] = {
        "manager.tables": len(manager.tables),
        "manager._timers": len(manager._timers),
        "manager._retries": len(manager._retries),
        "manager._closers": len(manager._closers),
        "manager._pending": len(manager._pending),
    }
    players = getattr(manager, "players", None)
    if players is not None and hasattr(players, "_replays"):
        counts["computers._replays"] = len(players._replays)
    cog = bot.parts.loaded_tables
    if cog is not None:
        counts["lobby.redrawing"] = len(cog.lobby.redrawing)
        counts["presenter.shows"] = len(cog.presenter.shows)
        counts["presenter._edits"] = len(cog.presenter._edits)
        for key, ui in cog.uis.items():
            panels = getattr(ui, "panels", None)  # (the games with private hand panels)
            if panels is not None:
                for name in ("open", "_refreshers", "_locks"):
                    counts[f"{key}.panels.{name}"] = len(getattr(panels, name))
    return counts
