"""The project's tests: ``unit/`` (no Discord stand-in, no bot process), ``e2e/`` (the
real bot against the stand-in in ``fakediscord/``) and ``games/<key>/`` (one game's
engine, players and rules); see README.md."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository's root (where bot.py is)."""
