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
