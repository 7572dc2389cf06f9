"""The manuals a reader follows: README.md, docs/ and bench/README.md.

Every link between them leads somewhere, the README's test command is the
one CI runs, and the shuffle commitment a player is told to recompute is the
one the bot commits to.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from app.after.verify import commitment
from tests import ROOT

MANUALS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """The heading anchors GitHub makes for a Markdown file (lower case,
    punctuation dropped, spaces as hyphens)."""
    found = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading[1].strip().lower())
            found.add(text.replace(" ", "-"))
    return found


@pytest.mark.parametrize("manual", MANUALS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(manual: Path) -> None:
    links = LINK.findall(manual.read_text(encoding="utf-8"))
    assert links or manual.name != "README.md" or manual.parent != ROOT, "the README points nowhere"
    for link in links:
        if re.match(r"[a-z]+://", link):
            continue
        target, _, anchor = link.partition("#")
        path = (manual.parent / target).resolve() if target else manual
        assert path.is_file(), f"{manual.name}: {link} names no file"
        assert ROOT in path.parents, f"{manual.name}: {link} leaves the repository"
        if anchor:
            assert anchor in anchors(path), f"{manual.name}: {link} names no heading of {path.name}"


def test_readme_is_a_front_door_with_the_test_command_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "\n    python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && .venv/bin/python bot.py\n" in readme
    test_command = ("python3 -m venv .venv && .venv/bin/pip install -r requirements-test.txt"
                    " && .venv/bin/python -m pytest -q")
    assert f"\n    {test_command}\n" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "-r requirements-test.txt" in ci and "\n.venv/bin/python -m pytest -q\n" in ci


def test_the_commitment_a_player_recomputes_is_the_bots() -> None:
    """docs/hosting.md's recipe, followed literally with a table's revealed values."""
    hosting = (ROOT / "docs" / "hosting.md").read_text(encoding="utf-8")
    recipe = re.search(r"`printf '%s' '([^']+)' \| sha256sum`", hosting)
    assert recipe is not None
    text = recipe[1].replace("<seed>", "187223649151234").replace("<nonce>", "9f1c" * 8)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert digest == commitment("nimmt", 12, 187223649151234, "9f1c" * 8)
    try:
        shell = subprocess.run(["sh", "-c", f"printf '%s' '{text}' | sha256sum"], capture_output=True, text=True,
                               check=True, timeout=10).stdout.split()[0]
    except (OSError, subprocess.CalledProcessError):
        return  # no sha256sum here: the Python hash above is the same computation
    assert shell == digest


# The manuals that name the commands: a command or an option added to a cog must be
# written up for whoever uses it.
COMMAND_MANUALS = [ROOT / "docs" / name for name in ("playing.md", "nights.md", "hosting.md")]


async def test_every_slash_command_option_and_choice_is_in_a_manual() -> None:
    """A choice is looked for by its English name up to a colon (``short: 5 starting
    slots`` is ``short``); the game a command offers is not (every game is named)."""
    from app.i18n.catalogue import t
    from core import registry
    from tests.commands import slash_commands

    titles = {t("en", f"{spec.key}.title") for spec in registry.GAMES}
    lines = [line for path in COMMAND_MANUALS for line in path.read_text(encoding="utf-8").splitlines()]
    missing: list[str] = []

    def named(word: str, naming: list[str]) -> bool:
        return any(re.search(rf"(?<![\w/-]){re.escape(word)}(?![\w-])", line) for line in naming)

    for path, options in (await slash_commands()).items():
        naming = [line for line in lines if re.search(rf"`/{re.escape(path)}(?![\w-])", line)]
        if not naming:
            missing.append(f"/{path}")
            continue
        for option, choices in options.items():
            if not named(option, naming):
                missing.append(f"/{path} {option}")
            missing += [f"/{path} {option}:{choice}" for choice in choices
                        if choice not in titles and not named(choice.split(":")[0], naming)]
    assert not missing, ("not in docs/playing.md, nights.md or hosting.md (an option or a choice: on a line "
                         f"naming its command): {missing}")


def _configuration_rows() -> dict[str, list[str]]:
    """docs/hosting.md's configuration table: each variable named in a row, and that row's cells."""
    hosting = (ROOT / "docs" / "hosting.md").read_text(encoding="utf-8")
    section = hosting.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0]):
                rows[name] = cells
    return rows


def test_every_setting_the_bot_reads_is_documented_with_its_default() -> None:
    source = (ROOT / "app" / "config.py").read_text(encoding="utf-8")
    read = set(re.findall(r"""values\.get\(["']([A-Z][A-Z0-9_]+)["']""", source))
    numbers = {name: float(default) for name, default in re.findall(r"""num\(["']([A-Z][A-Z0-9_]+)["'], ([0-9.]+)\)""", source)}
    assert {"DISCORD_TOKEN", "DATABASE_URL", "REQUESTS_PER_SECOND"} <= read | set(numbers), "config.py reads differently now"
    rows = _configuration_rows()
    assert not (read | set(numbers)) - set(rows), "read by app/config.py, not in docs/hosting.md's Configuration table"
    for name, cells in rows.items():
        assert len(cells) == 3 and cells[2], f"{name}: a row is | variable | meaning | default |"
    for name, default in numbers.items():
        shown = re.match(r"`([0-9.]+)`", rows[name][2])
        assert shown and float(shown[1]) == default, f"{name}: docs/hosting.md's default {rows[name][2]} is not {default}"


@pytest.mark.parametrize("manual", MANUALS[:-1], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_a_manual_names_exists(manual: Path) -> None:
    """A path in backticks (`cogs/tables/presenter.py`, `tests/fakediscord/`) is a
    file or folder of the repository, not one moved or removed since (bench/README.md
    also names files of earlier versions, beside their figures)."""
    text = manual.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:app|bench|cogs|core|data|docs|tests)/[\w./-]*)`", text))
    assert named or manual.name not in ("architecture.md", "adding-a-game.md"), "the pattern finds nothing"
    missing = sorted(path for path in named if not path.endswith(".db") and not (ROOT / path).exists())
    assert not missing, f"{manual.name} names what the repository does not hold: {missing}"
