"""Catalogues, the keys the code uses, the rules pages and the command translator.

The key scan covers the whole code base (bot.py, app/, cogs/, core/): every
``t(locale, "file.key", ...)``, ``locale_str(..., key="...")`` and
``command_str("...")`` with a literal key must name an English catalogue
entry, and any other string literal that looks like a catalogue key
(``<file>.<key>`` where ``<file>`` is a catalogue file) must exist too.
A literal that only looks like a key can be exempted with ``# i18n: ignore``
on its line.
"""
from __future__ import annotations

import ast
import json
import re
import string
from pathlib import Path

import pytest
from discord import Locale
from discord.app_commands import TranslationContext, TranslationContextLocation, locale_str

from app.i18n import catalogue as i18n
from app.i18n.catalogue import LOCALES, catalogue, t
from app.i18n.rules import GAMES, PAGE_LIMIT, TITLE_LIMIT, rules_pages
from core import registry
from cogs.common.translator import CatalogueTranslator, is_valid_name, is_valid_text, key_kind, translate_key

from tests import ROOT
from tests.commands import tree_with_every_cog
EN = "en"
OTHERS = [lang for lang in LOCALES if lang != EN]
PLURAL_CATEGORIES = {"zero", "one", "two", "few", "many", "other"}
HOUSE_RULES = {"nimmt": [f"H{i}" for i in range(1, 8)], "garbage": [f"G{i}" for i in range(1, 5)],
               "take6": [f"S{i}" for i in range(1, 5)]}
EMBED_TOTAL = 6000


# --------------------------------------------------------------------------
# catalogue shape and parity


def _forms(value) -> dict[str, str]:
    return value if isinstance(value, dict) else {"": value}


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def _placeholders(value) -> set[str]:
    out: set[str] = set()
    for form in _forms(value).values():
        out |= _fields(form)
    return out


def _folders(lang: str) -> list[Path]:
    """The catalogue folders of ``lang``: the shared one and each game's."""
    return [i18n.LOCALE_DIR / lang, *(spec.folder / "locales" / lang for spec in registry.GAMES)]


@pytest.mark.parametrize("lang", LOCALES)
def test_catalogue_files_are_flat_json_objects(lang):
    for path in sorted(p for folder in _folders(lang) for p in folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data, dict), path.name
        for key, value in data.items():
            assert re.fullmatch(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*", key), f"{lang}/{path.name}: bad key {key!r}"
            if isinstance(value, dict):
                assert value and set(value) <= PLURAL_CATEGORIES, f"{lang}/{path.name}: {key} is not a plural dict"
                assert "other" in value, f"{lang}/{path.name}: {key} lacks 'other'"
                assert all(isinstance(v, str) for v in value.values()), f"{lang}/{path.name}: {key}"
            else:
                assert isinstance(value, str), f"{lang}/{path.name}: {key} must be a string or plural dict"


@pytest.mark.parametrize("lang", LOCALES)
def test_templates_parse_with_named_placeholders(lang):
    for key, value in catalogue(lang).items():
        for category, form in _forms(value).items():
            try:
                names = _fields(form)
            except ValueError as exc:  # a stray "{" or "}"
                pytest.fail(f"{lang}: {key} {category}: {exc}")
            for name in names:
                assert name.isidentifier(), f"{lang}: {key}: placeholder {{{name}}} must be a plain name"


@pytest.mark.parametrize("lang", OTHERS)
def test_every_english_key_is_translated_and_nothing_else(lang):
    en, other = set(catalogue(EN)), set(catalogue(lang))
    assert not other - en, f"{lang} has keys English does not: {sorted(other - en)}"
    if en - other:
        per_file: dict[str, list[str]] = {}
        for key in sorted(en - other):
            per_file.setdefault(key.split(".")[0], []).append(key.split(".", 1)[1])
        summary = "\n".join(f"  {lang}/{stem}.json lacks {len(keys)}: {', '.join(keys[:8])}{' ...' if len(keys) > 8 else ''}"
                             for stem, keys in per_file.items())
        pytest.fail(f"{len(en - other)} English keys have no {lang} translation:\n{summary}")


@pytest.mark.parametrize("lang", OTHERS)
def test_translations_keep_placeholders_and_plural_categories(lang):
    en, other = catalogue(EN), catalogue(lang)
    for key in sorted(set(en) & set(other)):
        assert isinstance(en[key], dict) == isinstance(other[key], dict), f"{lang}: {key}: plural vs plain"
        if isinstance(en[key], dict):
            assert set(other[key]) == set(en[key]), f"{lang}: {key}: categories {set(other[key])} != {set(en[key])}"
        assert _placeholders(other[key]) == _placeholders(en[key]), (
            f"{lang}: {key}: placeholders {sorted(_placeholders(other[key]))} != {sorted(_placeholders(en[key]))}"
        )


@pytest.mark.parametrize("lang", LOCALES)
def test_every_entry_formats(lang):
    for key, value in catalogue(lang).items():
        params = {name: 1 for name in _placeholders(value)}
        for count in (1, 2):
            if isinstance(value, dict):
                params["count"] = count
            text = t(lang, key, **params)
            assert text and "{" not in text.replace("{{", ""), f"{lang}: {key} -> {text!r}"


# --------------------------------------------------------------------------
# keys used in the code

TRACKED = {"t", "locale_str", "command_str"}


def _code_files() -> list[Path]:
    files = [ROOT / "bot.py"] if (ROOT / "bot.py").is_file() else []
    for folder in ("app", "cogs", "core"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local names of ``t``/``locale_str``/``command_str``, e.g. ``locale_str as _``."""
    names = {name: name for name in TRACKED}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in TRACKED:
                    names[alias.asname or alias.name] = alias.name
    return names


def _callee(node: ast.Call, aliases: dict[str, str]) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return aliases.get(func.id, "")
    if isinstance(func, ast.Attribute) and func.attr in TRACKED:
        return func.attr
    return ""


def _literal(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _fstring_pattern(node) -> re.Pattern | None:
    """``f"garbage.rank_{r}"`` -> a regex that at least one key must match."""
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(re.escape(str(value.value)))
        else:
            parts.append(r"[A-Za-z0-9_.]+")
    return re.compile("".join(parts))


def _stems() -> list[str]:
    return sorted({p.stem for folder in _folders(EN) for p in folder.glob("*.json")})


def _scan(path: Path):
    """Yield (line, kind, key, call) for every key use in ``path``: kind is
    the function (t, locale_str, command_str), "literal" for a bare string
    that looks like a key, or "pattern" (key is then a regex) for f-strings."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    aliases = _aliases(tree)
    stems = _stems()
    looks_like_key = re.compile(
        rf"(?:{'|'.join(map(re.escape, stems))})\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*" if stems else r"(?!)"
    )
    file_suffix = re.compile(r"\.(?:json|md|py|txt|png|jpg|gif|webp|db|sqlite3?|log|toml|ya?ml)$")
    claimed: set[int] = set()  # constants already checked as call arguments
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            claimed.update(id(v) for v in node.values)
        if isinstance(node, ast.ClassDef):  # a component's custom_id kind (``kind="nimmt.hand"``), not a key
            claimed.update(id(kw.value) for kw in node.keywords if kw.arg == "kind")
        if not isinstance(node, ast.Call):
            continue
        name = _callee(node, aliases)
        arg = None
        if name == "t" and len(node.args) >= 2:
            arg = node.args[1]
        elif name == "locale_str":
            arg = next((kw.value for kw in node.keywords if kw.arg == "key"), None)
        elif name == "command_str" and node.args:
            arg = node.args[0]
        if arg is None:
            continue
        if (literal := _literal(arg)) is not None:
            claimed.add(id(arg))
            yield node.lineno, name, literal, node
        elif (pattern := _fstring_pattern(arg)) is not None:
            yield node.lineno, "pattern", pattern, node
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in claimed:
            continue
        text = _literal(node)
        if text is None:
            continue
        if not looks_like_key.fullmatch(text) or file_suffix.search(text) or text.endswith(("_", ".")):
            continue
        if "i18n: ignore" in lines[node.lineno - 1]:
            continue
        yield node.lineno, "literal", text, None


def _uses():
    for path in _code_files():
        for line, kind, key, call in _scan(path):
            yield f"{path.relative_to(ROOT)}:{line}", kind, key, call


def test_scanner_finds_keys_in_this_code_base():
    kinds = {kind for _, kind, _, _ in _uses()}
    assert {"t", "locale_str"} <= kinds  # the rules cog uses both


def test_scanner_on_a_sample(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from discord.app_commands import locale_str as _\n"
        "from app.i18n.catalogue import t as tr\n"
        "_('x', key='commands.rules.name')\n"
        "tr(lang, 'rules.next')\n"
        "tr(lang, f'rules.{k}')\n"
        "KEY = 'rules.previous'\n"
        "NOT_A_KEY = 'rules.md'\n"
        "IGNORED = 'rules.whatever'  # i18n: ignore\n"
        "class Next(Item, kind='rules.next_page'):\n"
        "    pass\n",
        encoding="utf-8",
    )
    found = [(kind, key if isinstance(key, str) else key.pattern) for _, kind, key, _ in _scan(sample)]
    assert found == [
        ("locale_str", "commands.rules.name"),
        ("t", "rules.next"),
        ("pattern", r"rules\.[A-Za-z0-9_.]+"),
        ("literal", "rules.previous"),
    ]


def test_every_key_used_in_code_exists_in_english():
    en = catalogue(EN)
    missing = set()
    for where, kind, key, _ in _uses():
        if kind == "pattern":
            if not any(key.fullmatch(k) for k in en):
                missing.add(f"{where}: no key matches f-string {key.pattern!r}")
        elif key not in en:
            missing.add(f"{where}: {kind} {key!r}")
    assert not missing, "keys missing from data/locales/en/*.json:\n" + "\n".join(sorted(missing))


def test_t_calls_pass_every_placeholder():
    en = catalogue(EN)
    problems = []
    for where, kind, key, call in _uses():
        if kind != "t" or key not in en or any(kw.arg is None for kw in call.keywords):
            continue  # unknown key (reported above) or **params: cannot tell
        given = {kw.arg for kw in call.keywords}
        needed = _placeholders(en[key]) | ({"count"} if isinstance(en[key], dict) else set())
        if needed - given:
            problems.append(f"{where}: t(..., {key!r}) lacks {sorted(needed - given)}")
    assert not problems, "\n".join(problems)


def test_locale_str_carries_a_key_and_the_english_text():
    en = catalogue(EN)
    problems = []
    for path in _code_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = _aliases(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and _callee(node, aliases) == "locale_str"):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            keys = [kw.value for kw in node.keywords if kw.arg == "key"]
            if not keys and not any(kw.arg is None for kw in node.keywords):
                problems.append(f"{where}: locale_str without key=")
                continue
            key = _literal(keys[0]) if keys else None
            message = _literal(node.args[0]) if node.args else None
            if key in en and message is not None and en[key] != message:
                problems.append(f"{where}: {message!r} differs from en {key} = {en[key]!r}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------
# slash command names, descriptions and choices


def _command_keys(lang: str) -> dict[str, str]:
    return {k: v for k, v in catalogue(lang).items() if k.startswith("commands.")}


@pytest.mark.parametrize("lang", LOCALES)
def test_command_keys_follow_the_convention(lang):
    for key, value in _command_keys(lang).items():
        assert isinstance(value, str), f"{lang}: {key} must be a plain string"
        assert key_kind(key) is not None, (
            f"{lang}: {key}: use <command>.name|description, <group>_<sub>.name|description, "
            "opt_<option>.name|description, choice_<value>.name or <menu>.menu_name (see cogs/common/translator.py)"
        )


@pytest.mark.parametrize("lang", LOCALES)
def test_command_names_are_valid_discord_names(lang):
    for key, value in _command_keys(lang).items():
        kind = key_kind(key)
        if kind == "name":
            assert is_valid_name(value), f"{lang}: {key} = {value!r} is not a valid Discord name"
        elif kind == "menu":
            assert 1 <= len(value) <= 32, f"{lang}: {key} = {value!r}"
        elif kind == "text":
            assert is_valid_text(value), f"{lang}: {key} = {value!r} (1..100 characters)"


def test_name_validator():
    assert all(map(is_valid_name, ["rules", "reglas", "regeln", "spiel", "über", "tomar-montón", "नियम", "กฎ"]))
    assert not any(map(is_valid_name, ["Rules", "two words", "", "a" * 33, "why?", "Über"]))


def _context(location):
    return TranslationContext(location=location, data=None)


@pytest.mark.parametrize(
    "locale, expected",
    [
        (Locale.spain_spanish, "reglas"),
        (Locale.latin_american_spanish, "reglas"),
        (Locale.german, "regeln"),
        (Locale.french, None),
        (Locale.american_english, None),
        (Locale.british_english, None),
    ],
)
async def test_translator_per_locale(locale, expected):
    translator = CatalogueTranslator()
    name = locale_str("rules", key="commands.rules.name")
    assert await translator.translate(name, locale, _context(TranslationContextLocation.command_name)) == expected


async def test_translator_descriptions_choices_and_misses():
    translator = CatalogueTranslator()
    desc = locale_str("x", key="commands.opt_rules_game.description")
    got = await translator.translate(desc, Locale.german, _context(TranslationContextLocation.parameter_description))
    assert got == t("de", "commands.opt_rules_game.description")
    choice = locale_str("Garbage", key="commands.choice_garbage.name")
    got = await translator.translate(choice, Locale.spain_spanish, _context(TranslationContextLocation.choice_name))
    assert got == "Garbage (Basura)"
    where = _context(TranslationContextLocation.command_name)
    assert await translator.translate(locale_str("rules"), Locale.german, where) is None  # no key
    assert await translator.translate(locale_str("x", key="commands.nope.name"), Locale.german, where) is None


def test_translate_key_rejects_invalid_names(monkeypatch):
    fake = dict(catalogue("de"), **{"commands.bad.name": "Zwei Wörter"})
    monkeypatch.setattr("cogs.common.translator.catalogue", lambda lang: fake)
    assert translate_key("commands.bad.name", "de", TranslationContextLocation.command_name) is None
    assert translate_key("commands.bad.name", "de", TranslationContextLocation.command_name, menu=True) == "Zwei Wörter"


async def test_every_command_text_a_client_shows_untranslated_is_the_english_catalogue_entry():
    """A client in English (or any language we do not translate into) shows a command's,
    option's or choice's default text, so that text is the English catalogue entry of
    its key, also where the code builds it (``/season mode``'s *by hand*, not ``manual``)."""
    bot = await tree_with_every_cog()
    strings: dict[str, str] = {}

    class Recording(CatalogueTranslator):
        async def translate(self, string, locale, context):
            if string.extras.get("key"):
                strings[string.extras["key"]] = string.message
            return await super().translate(string, locale, context)

    for command in bot.tree.get_commands():
        await command.get_translated_payload(bot.tree, Recording())
    await bot.close()
    assert "commands.choice_season_manual.name" in strings and "commands.choice_every_weekly.name" in strings
    wrong = {key: (shown, t("en", key)) for key, shown in strings.items() if shown != t("en", key)}
    assert not wrong, wrong


async def test_every_slash_command_translates_to_valid_unique_names():

    bot = await tree_with_every_cog()
    assert "rules" in {c.name for c in bot.tree.get_commands()}
    translator = CatalogueTranslator()
    problems: list[str] = []

    def check(item, path):
        names: dict[str, dict[str, str]] = {}
        for opt in item.get("options", []):
            if opt["type"] in (1, 2):  # subcommand, subcommand group
                check(opt, f"{path} {opt['name']}")
            for locale in ("es-ES", "es-419", "de"):
                name = opt.get("name_localizations", {}).get(locale, opt["name"])
                if name in names.setdefault(locale, {}):
                    problems.append(f"/{path}: {locale} name {name!r} used by {names[locale][name]} and {opt['name']}")
                names[locale][name] = opt["name"]
                if opt.get("name_localizations", {}).get(locale) is None:
                    problems.append(f"/{path} {opt['name']}: no {locale} name")
                for choice in opt.get("choices", []):
                    if not isinstance(choice["name"], str) or choice["name"] in ("English", "Español", "Deutsch"):
                        continue  # language names stay in their own language
                    if choice.get("name_localizations", {}).get(locale) is None:
                        problems.append(f"/{path} {opt['name']}: choice {choice['name']!r} has no {locale} name")

    top: dict[str, dict[str, str]] = {}
    for command in bot.tree.get_commands():
        payload = await command.get_translated_payload(bot.tree, translator)
        for locale in ("es-ES", "es-419", "de"):
            localized = payload.get("name_localizations", {}).get(locale)
            if localized is None:
                problems.append(f"/{payload['name']}: no {locale} name")
                localized = payload["name"]
            if payload.get("type", 1) == 1:
                assert is_valid_name(localized), f"/{payload['name']}: {locale} {localized!r}"
            if localized in top.setdefault(locale, {}):
                problems.append(f"{locale}: /{payload['name']} and /{top[locale][localized]} are both /{localized}")
            top[locale][localized] = payload["name"]
            if payload.get("description") and payload.get("description_localizations", {}).get(locale) is None:
                problems.append(f"/{payload['name']}: no {locale} description")
        check(payload, payload["name"])
    await bot.close()
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------
# rules pages


@pytest.mark.parametrize("lang", LOCALES)
@pytest.mark.parametrize("game", GAMES)
def test_rules_pages_fit_an_embed(game, lang):
    pages = rules_pages(game, lang)
    assert pages
    footer = max(len(t(lang, "rules.footer", page=len(pages), pages=len(pages))), 100)
    for title, body in pages:
        assert 0 < len(title) <= TITLE_LIMIT
        assert 0 < len(body) <= PAGE_LIMIT <= 4096
        assert len(title) + len(body) + footer <= EMBED_TOTAL
        assert "<!--" not in body and "\n## " not in body, "comments and game headings stay out of pages"


@pytest.mark.parametrize("lang", LOCALES)
@pytest.mark.parametrize("game", GAMES)
def test_rules_show_every_house_rule(game, lang):
    text = "\n".join(body for _, body in rules_pages(game, lang))
    for rule in HOUSE_RULES.get(game, ()):  # (a new game's house rules: the same-sections test below)
        assert re.search(rf"\*\*{rule}\b", text), f"{game}/{lang}: house rule {rule} is not shown in bold"
    other = [rule for key, rules in HOUSE_RULES.items() if key != game for rule in rules]
    assert not any(re.search(rf"\b{rule}\b", text) for rule in other), "house rules of the other game leak in"


def test_rules_files_exist_for_every_language():
    for spec in registry.GAMES:
        for lang in LOCALES:
            assert (spec.folder / "rules" / f"{lang}.md").is_file()


@pytest.mark.parametrize("lang", OTHERS)
@pytest.mark.parametrize("game", GAMES)
def test_translated_rules_have_the_same_sections(game, lang):
    """Same sections, same house rule order, same numbers: a cheap guard
    against a translation that drops or reorders a rule."""
    def digest(locale):
        text = "\n".join(body for _, body in rules_pages(game, locale))
        sections = len(re.findall(r"(?m)^### ", text))
        rule_order = re.findall(r"\*\*([HGS]\d)\b", text)
        numbers = sorted(re.findall(r"\d+", re.sub(r"[HGS]\d", "", text)))
        return sections, rule_order, numbers

    assert digest(lang) == digest(EN)


def test_game_names_keep_garbage_and_the_alias():
    assert rules_pages("garbage", "en")[0][0] == "Garbage (also called Trash)"
    assert "Garbage" in rules_pages("garbage", "es")[0][0] and "Basura" in rules_pages("garbage", "es")[0][0]
    assert "Garbage" in rules_pages("garbage", "de")[0][0] and "Müll" in rules_pages("garbage", "de")[0][0]
    assert {rules_pages("nimmt", lang)[0][0] for lang in LOCALES} == {"11 nimmt!"}


def test_unknown_language_falls_back_to_english():
    assert rules_pages("nimmt", "fr") == rules_pages("nimmt", "en-US")


@pytest.mark.parametrize("lang, count, expected", [
    ("en", 1, "**3.** ana — 1 point · wins: 0 · games: 1"),
    ("en", 1.0, "**3.** ana — 1 point · wins: 0 · games: 1"),
    ("en", 2.5, "**3.** ana — 2.5 points · wins: 0 · games: 1"),
    ("es", 1, "**3.** ana — 1 punto · victorias: 0 · partidas: 1"),
    ("de", 0, "**3.** ana — 0 Punkte · Siege: 0 · Spiele: 1"),
    ("de", 1, "**3.** ana — 1 Punkt · Siege: 0 · Spiele: 1"),
])
def test_plural_forms_follow_the_number_shown(lang, count, expected):
    """A night's points can be halves (shared places): one point is "1 point",
    1.0 too, anything else is plural, in every language."""
    shown = f"{count:g}"
    assert t(lang, "nights.standing", rank=3, name="ana", points=shown, count=count, wins=0, games=1) == expected
