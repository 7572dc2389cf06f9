"""Checks on the shape of the code base that keep the engine honest."""
import ast
import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

from tests import ROOT


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "core").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_never_imports_discord_or_io(path):
    forbidden = {"discord", "aiohttp", "aiosqlite", "sqlite3", "cogs", "app"}
    assert not (_imports(path) & forbidden), f"{path.name} imports {_imports(path) & forbidden}"


@pytest.mark.parametrize("path", sorted((ROOT / "app").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_app_never_imports_discord(path):
    """app/ is the layer that needs no Discord: what touches discord.py is in cogs/
    (its internals in cogs/common/adapter.py)."""
    forbidden = {"discord", "cogs"}
    assert not (_imports(path) & forbidden), f"{path.name} imports {_imports(path) & forbidden}"


def _modules(package: str):
    pkg = importlib.import_module(package)
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
        yield info.name


@pytest.mark.parametrize("module", [*_modules("core"), *_modules("app"), *_modules("cogs")])
def test_doctests(module):
    mod = importlib.import_module(module)
    failed, _ = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert failed == 0


@pytest.mark.parametrize("path", sorted((ROOT / "cogs").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_cogs_draw_pictures_only_through_the_drawing_processes(path):
    """Every renderer a cog calls goes through ``app.render.pool.draw`` (its
    processes, off the bot's GIL): never called directly, nor through the
    loop's default thread pool, where a 6 nimmt! table picture held the
    bot's GIL on every move."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from cogs.games import installed

    modules = [cog.pictures.__name__ for cog in installed.cogs() if cog.pictures] + ["app.render.profile", "app.render.night"]
    renderers = {name for module in modules for name in dir(importlib.import_module(module)) if name.startswith("render_")}
    assert len(renderers) >= len(modules)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        args = [a.attr if isinstance(a, ast.Attribute) else getattr(a, "id", "") for a in node.args]
        if called == "draw":
            continue
        assert called not in renderers, f"{path.name}:{node.lineno} calls {called} on the bot's own thread"
        assert not set(args) & renderers, f"{path.name}:{node.lineno} hands {set(args) & renderers} to {called}"


_IGNORE = re.compile(r"#\s*type:\s*ignore(\[[^\]]*\])?(.*)$")


def test_few_type_ignores_each_with_its_code_and_reason():
    """mypy runs on the code (.ci/lint); where it must be told to look away, the
    comment says which error and why, and there are at most ten of them."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if ".venv" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = _IGNORE.search(line)
            if match:
                where = f"{path.relative_to(ROOT)}:{number}"
                found.append(where)
                assert match[1] and re.match(r"\s*#\s*\S", match[2]), f"{where}: give the error code and a reason"
    assert len(found) <= 10, found
