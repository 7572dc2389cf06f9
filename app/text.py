"""User-chosen text (display names) shown in Discord messages.

A name is text, never markup: :func:`plain` is the one helper every message,
embed, narration line and panel uses to show a name.  It escapes Discord's
markdown (bold, links, headings, quotes, spoilers...), breaks mention and
timestamp syntax (``<@id>``, ``<#id>``, ``<t:...>``, ``@everyone``) and bare
links, so a name shows as typed and never pings, links or formats.

Labels of buttons and select options are not markdown: they take the raw
name (only cut to Discord's length), as do images.
"""
from __future__ import annotations

import re
import unicodedata

ZWSP = "\u200b"  # zero-width space: invisible, breaks what Discord would parse

# Every ASCII punctuation Discord's markdown gives a meaning to; a backslash
# before any punctuation shows it as itself.
_SPECIAL = re.compile(r"([\\*_~`|\[\]()#>\-+.!=:{}])")


def plain(text: object) -> str:
    r"""``text`` safe to show inside a Discord message or embed.

    >>> plain("**ben**")
    '\\*\\*ben\\*\\*'
    >>> plain("[x](https://example.com)")
    '\\[x\\]\\(https\\:\u200b//example\\.com\\)'
    >>> "<@" in plain("<@123>"), "@everyone" in plain("@everyone")
    (False, False)
    >>> plain("Zoë 李")
    'Zoë 李'
    >>> plain("a\nb")
    'a b'
    """
    s = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in str(text))
    s = s.replace("://", ":" + ZWSP + "//")  # no bare link
    s = s.replace("<", "<" + ZWSP).replace("@", "@" + ZWSP)  # no mention, channel, emoji or timestamp
    return _SPECIAL.sub(r"\\\1", s)


def bold(text: object) -> str:
    r"""A name in bold, escaped.

    >>> bold("a_b")
    '**a\\_b**'
    """
    return f"**{plain(text)}**"


def label(text: object, limit: int = 100) -> str:
    """A name for a component label (not markdown): raw, single-line, cut.

    >>> label("x" * 120, 80) == "x" * 79 + "…"
    True
    """
    s = " ".join(str(text).split()) or "?"
    return s if len(s) <= limit else s[: limit - 1] + "…"
