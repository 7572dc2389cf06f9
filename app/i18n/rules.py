"""The rules shown by ``/rules``, split into pages that each fit one embed.

The text is player-facing Markdown in each game's folder,
``data/games/<key>/rules/<lang>.md`` (:attr:`core.spec.GameSpec.folder`).
Its ``## `` heading starts the game and is followed by a ``<!-- game: id -->``
comment naming it; each ``### `` heading starts a section.  Sections are
packed whole into pages (a section too long for one page is split between
paragraphs), so a page never starts in the middle of a paragraph:

    >>> pages = rules_pages(GAMES[0], "es-419")
    >>> all(len(body) <= PAGE_LIMIT for _, body in pages)
    True
    >>> all(game in _load(game, "de") for game in GAMES)   # every registered game has its rules
    True

A language without a rules file falls back to English.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from app.i18n.catalogue import DEFAULT, normalise
from core import registry
from core.registry import KEYS

GAMES = KEYS  # every game of core.registry, in its order

PAGE_LIMIT = 4000   # hard limit of a page body (an embed description holds 4096)
PAGE_TARGET = 2400  # soft limit: a page stops taking whole sections beyond this
TITLE_LIMIT = 256   # embed title

_COMMENT = re.compile(r"<!--(.*?)-->", re.S)
_GAME_TAG = re.compile(r"<!--\s*game:\s*([a-z0-9_]+)\s*-->")
_BLANKS = re.compile(r"\n{3,}")


def _split_long(text: str, limit: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` characters, between
    paragraphs if possible, else between lines, else anywhere.

    >>> _split_long("aaa\\n\\nbbb\\n\\nccc", 8)
    ['aaa\\n\\nbbb', 'ccc']
    >>> _split_long("abcdefgh", 3)
    ['abc', 'def', 'gh']
    """
    if len(text) <= limit:
        return [text]
    for sep in ("\n\n", "\n"):
        parts = text.split(sep)
        if len(parts) > 1:
            out: list[str] = []
            current = ""
            for part in parts:
                for piece in _split_long(part, limit):
                    joined = f"{current}{sep}{piece}" if current else piece
                    if len(joined) <= limit:
                        current = joined
                    else:
                        out.append(current)
                        current = piece
            out.append(current)
            return out
    return [text[i:i + limit] for i in range(0, len(text), limit)]


def _pack(blocks: list[str], target: int = PAGE_TARGET, limit: int = PAGE_LIMIT) -> list[str]:
    """Pack blocks into pages: whole blocks while a page stays within
    ``target``; a block longer than ``limit`` is split first.

    >>> _pack(["a" * 5, "b" * 5, "c" * 20], target=12, limit=25)
    ['aaaaa\\n\\nbbbbb', 'cccccccccccccccccccc']
    """
    pages: list[str] = []
    current = ""
    for block in blocks:
        for piece in _split_long(block, limit):
            joined = f"{current}\n\n{piece}" if current else piece
            if current and len(joined) > target:
                pages.append(current)
                current = piece
            else:
                current = joined
    if current:
        pages.append(current)
    return pages


def parse(text: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Split a rules document into ``{game: (title, pages)}``.

    >>> doc = "# Rules\\n## Alpha\\n<!-- game: a -->\\nIntro.\\n### One\\nText.\\n"
    >>> parse(doc)
    {'a': ('Alpha', ('Intro.\\n\\n### One\\nText.',))}
    """
    games: dict[str, tuple[str, tuple[str, ...]]] = {}
    for chunk in re.split(r"(?m)^## ", text)[1:]:
        heading, _, body = chunk.partition("\n")
        tag = _GAME_TAG.search(body)
        if tag is None:
            raise ValueError(f"rules section {heading!r} has no <!-- game: ... --> tag")
        body = _COMMENT.sub("", body)
        blocks = [b.strip() for b in re.split(r"(?m)^(?=### )", body)]
        # Discord renders a heading only after a blank line.
        blocks = [_BLANKS.sub("\n\n", b) for b in blocks if b]
        title = heading.strip()[:TITLE_LIMIT]
        games[tag.group(1)] = (title, tuple(_pack(blocks)))
    return games


@lru_cache(maxsize=None)
def _load(game: str, lang: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    folder: Path = registry.spec(game).folder / "rules"
    path = folder / f"{lang}.md"
    if not path.is_file():
        path = folder / f"{DEFAULT}.md"
    return parse(path.read_text(encoding="utf-8"))


def rules_pages(game: str, locale: object) -> list[tuple[str, str]]:
    """The rules of ``game`` (a key of :mod:`core.registry`) in the language
    of ``locale`` (anything ``app.i18n.normalise`` accepts) as a list of
    ``(title, body)`` pages; each body fits an embed description.

    >>> rules_pages("chess", "en")
    Traceback (most recent call last):
    ...
    ValueError: unknown game 'chess'
    """
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}")
    lang = normalise(locale)
    games = _load(game, lang)
    if game not in games:
        games = _load(game, DEFAULT)
    title, pages = games[game]
    return [(title, body) for body in pages]
