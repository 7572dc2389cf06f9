"""Game engines: pure, deterministic, no Discord.  See ``core.protocol``."""
