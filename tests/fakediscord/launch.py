"""Run a bot against the stand-in in a subprocess.

    python -m tests.fakediscord.launch module:function [args...]

Reads FAKEDISCORD_API / FAKEDISCORD_GATEWAY (see ``FakeDiscord.env()``), points discord.py at them, then
imports ``module`` and calls the synchronous ``function()`` (e.g. ``bot:main``).  Extra args are left in
``sys.argv[1:]``.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import List, Optional


def patch_discord_from_env() -> None:
    import yarl
    from discord import gateway, http

    api = os.environ.get("FAKEDISCORD_API")
    gw = os.environ.get("FAKEDISCORD_GATEWAY")
    if not api or not gw:
        raise SystemExit("FAKEDISCORD_API and FAKEDISCORD_GATEWAY must be set (see FakeDiscord.env())")
    http.Route.BASE = api
    gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gw)


def main(argv: Optional[List[str]] = None) -> object:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or ":" not in argv[0]:
        raise SystemExit("usage: python -m tests.fakediscord.launch module:function [args...]")
    target = argv[0]
    module_name, func_name = target.split(":", 1)
    patch_discord_from_env()
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    sys.argv = [target, *argv[1:]]
    func: object = importlib.import_module(module_name)
    for part in func_name.split("."):
        func = getattr(func, part)
    if not callable(func):
        raise SystemExit(f"{target} is not callable")
    return func()


if __name__ == "__main__":
    main()
