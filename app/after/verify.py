"""Verifiable shuffle: a commitment to every game's seed, and its check.

When a game starts, its seed (``secrets.randbits(63)`` in
:mod:`app.tables.manager`: the most a SQLite integer holds) is fixed together with a
fresh 128-bit nonce, and the table shows the SHA-256 of

    cardnight-shuffle-v1|<game>|<table id>|<seed>|<nonce hex>

(UTF-8, no newline); a game of a table variant names it with the game
(``<game>+<variant>``), so the commitment covers the variant too.  The seed and the nonce stay secret until the game is
over; then the final standings reveal both, and anyone can recompute the
hash (``printf '%s' 'cardnight-shuffle-v1|<game>|12|123456|ab..' | sha256sum``).

Why the nonce: a hash of the seed alone could be inverted by trying seeds
(2**48 SHA-256 hashes take hours on one graphics card, 2**63 days on a few
thousand), which would give away every hand of a game in progress.  With
128 secret random bits in the hashed text that search is out of reach, and
the game key and table id keep one commitment from being passed off as
another table's.

:func:`check` is what ``/verify`` runs on a finished game: the hash of the
revealed seed and nonce must equal the commitment published at the start,
and the stored action log, replayed from that seed through the engine's
own rules (every move checked), must end in the recorded result.  It only
uses the engine protocol (``new``, ``parse``, ``apply``, ``result``), so it
works for every game.
"""
from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any, Sequence

from core.protocol import GameError

PREFIX = "cardnight-shuffle-v1"
NONCE_BYTES = 16
SHORT = 12  # hex digits shown in a table message's text


def preimage(game: str, table_id: int, seed: int, nonce: str) -> str:
    """The text whose SHA-256 is the commitment.

    >>> preimage("cards", 12, 345, "00ff")
    'cardnight-shuffle-v1|cards|12|345|00ff'
    """
    return f"{PREFIX}|{game}|{int(table_id)}|{int(seed)}|{nonce}"


def commitment(game: str, table_id: int, seed: int, nonce: str) -> str:
    """SHA-256 (hex) of :func:`preimage`.

    >>> commitment("cards", 12, 345, "00ff")[:16]
    'd21af56c8da691f4'
    """
    return hashlib.sha256(preimage(game, table_id, seed, nonce).encode("utf-8")).hexdigest()


def committed(game: str, variant: str | None) -> str:
    """The game as the commitment names it: with its variant, if it has one.

    >>> committed("cards", "quick"), committed("cards", None)
    ('cards+quick', 'cards')
    """
    return f"{game}+{variant}" if variant else game


def commit(game: str, table_id: int, seed: int, options: dict[str, Any], *,
           variant: str | None = None) -> dict[str, Any]:
    """What a table keeps when its game starts: a fresh nonce, the commitment
    (to the game, its variant, the table and the seed), and the engine
    options the game runs with (so a replay needs nothing else)."""
    nonce = secrets.token_hex(NONCE_BYTES)
    return {"nonce": nonce, "sha256": commitment(committed(game, variant), table_id, seed, nonce),
            "options": dict(options), **({"variant": variant} if variant else {})}


def short(digest: str) -> str:
    """The commitment as a table message's text shows it.

    >>> short("0123456789abcdef" * 4)
    '0123456789ab'
    """
    return digest[:SHORT]


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`check`.

    ``problem`` is None when everything holds, else one of
    ``no_commitment`` (a game from before commitments), ``hash_mismatch``,
    ``illegal_move`` (at ``step``, 1-based), ``not_over`` (the log stops
    before the end), ``extra_moves`` (moves after the end, at ``step``),
    ``result_differs``.
    """

    hash_ok: bool
    replay_ok: bool
    result_ok: bool
    moves: int
    problem: str | None = None
    step: int | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def check(
    engine: Any,
    *,
    game: str,
    table_id: int,
    seats: int,
    seed: int | None,
    nonce: str | None,
    published: str | None,
    options: dict[str, Any],
    log: Sequence[tuple[int, str]],
    scores: Sequence[int],
    places: Sequence[int],
) -> Verdict:
    """Check a finished game (see the module doc).  CPU-bound: call it in a
    worker thread for long games.  ``engine`` is the game's engine class;
    ``scores``/``places`` the recorded result per seat."""
    moves = len(log)
    if seed is None or not nonce or not published:
        return Verdict(False, False, False, moves, "no_commitment")
    hash_ok = commitment(game, table_id, seed, nonce) == published
    try:
        g = engine.new(seats, seed, **options)
    except GameError:
        return Verdict(hash_ok, False, False, moves, "illegal_move", 0)
    for step, (seat, text) in enumerate(log, start=1):
        if g.over:
            return Verdict(hash_ok, False, False, moves, "extra_moves", step)
        try:
            g.apply(int(seat), g.parse(str(text)))
        except GameError:
            return Verdict(hash_ok, False, False, moves, "illegal_move", step)
    if not g.over or g.result is None:
        return Verdict(hash_ok, False, False, moves, "not_over")
    result = g.result
    result_ok = list(result.scores) == list(scores) and list(result.places) == list(places)
    problem = None if hash_ok and result_ok else ("hash_mismatch" if not hash_ok else "result_differs")
    return Verdict(hash_ok, True, result_ok, moves, problem)
