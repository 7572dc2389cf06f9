"""One translation function for every string a user sees.

Catalogues live in ``data/locales/<lang>/*.json`` (shared) and in each
game's folder, ``data/games/<key>/locales/<lang>/*.json`` (see
:attr:`core.spec.GameSpec.folder`); every file of a language is merged, and
its keys are prefixed with the file's stem, so ``data/locales/en/table.json``
holding ``{"join": "..."}`` gives the key ``table.join`` (and a game's
``commands.json`` adds its own ``commands.*`` keys).  A key said twice is an
error.  English is the source; a key missing in another language falls back
to English.

A value is either a template string with named placeholders or, for
plurals, a dict of CLDR categories (``one``/``other``) chosen by the
``count`` argument:

    >>> t("en", "common.test_plural", count=1)
    '1 card'
    >>> t("es", "common.test_plural", count=3)
    '3 cartas'

Translate the template, then format it: never glue sentences from pieces.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

LOCALES = ("en", "es", "de")
DEFAULT = "en"
LOCALE_DIR = Path(__file__).resolve().parents[2] / "data" / "locales"


def normalise(locale: object) -> str:
    """Map a Discord locale (``es-ES``, ``es-419``, ``de``, ``en-GB``...) or a
    ``discord.Locale`` to one of ``LOCALES``.

    >>> normalise("es-419"), normalise("de"), normalise("fr"), normalise(None)
    ('es', 'de', 'en', 'en')
    """
    if locale is None:
        return DEFAULT
    text = str(getattr(locale, "value", locale)).lower()
    lang = text.split("-")[0].split("_")[0]
    return lang if lang in LOCALES else DEFAULT


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.load silently keeps the last of two equal keys; a catalogue that
    # says the same key twice is a mistake we want to hear about.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate catalogue key {key!r}")
        out[key] = value
    return out


@lru_cache(maxsize=None)
def catalogue(lang: str) -> dict[str, Any]:
    """All keys of one language, flattened to ``file.key``.

    >>> catalogue("de")["common.test_plural"]["other"]
    '{count} Karten'
    """
    from core import registry

    out: dict[str, Any] = {}
    for folder in (LOCALE_DIR / lang, *(spec.folder / "locales" / lang for spec in registry.GAMES)):
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            with path.open(encoding="utf-8") as fh:
                try:
                    data = json.load(fh, object_pairs_hook=_no_duplicates)
                except ValueError as exc:
                    raise ValueError(f"{path}: {exc}") from exc
            for key, value in data.items():
                if f"{path.stem}.{key}" in out:
                    raise ValueError(f"{path}: duplicate catalogue key {path.stem}.{key!r}")
                out[f"{path.stem}.{key}"] = value
    return out


def _plural_category(lang: str, count: float) -> str:
    """The CLDR plural category of *count* as shown (English, Spanish and
    German share the rule: "one" for exactly 1, else "other", also for
    decimals: "1 point", "1,5 Punkte", "0 puntos").

    >>> _plural_category("de", 1), _plural_category("en", 1.0), _plural_category("es", 1.5)
    ('one', 'one', 'other')
    """
    return "one" if count == 1 else "other"


def t(locale: object, key: str, /, **params: Any) -> str:
    """Translate ``key`` into ``locale`` and fill its named placeholders."""
    lang = normalise(locale)
    value = catalogue(lang).get(key)
    if value is None:
        value = catalogue(DEFAULT).get(key)
    if value is None:
        raise KeyError(f"no catalogue entry {key!r}")
    if isinstance(value, dict):
        count = float(params.get("count", 0))
        value = value.get(_plural_category(lang, count)) or value["other"]
    if not params:
        return value
    try:
        return value.format(**params)
    except (KeyError, IndexError) as exc:
        raise KeyError(f"{key!r} ({lang}) needs placeholder {exc}; got {sorted(params)}") from None


def has(key: str, lang: str = DEFAULT) -> bool:
    """Whether ``lang``'s own catalogue holds ``key`` (no English fallback).

    >>> has("common.test_plural"), has("common.no_such_key"), has("common.test_plural", "es")
    (True, False, True)
    """
    return key in catalogue(lang)
