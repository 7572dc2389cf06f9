"""Checks on the shape of the code base that keep the engine honest."""
import ast
import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "core").glob("*.py")), ids=lambda p: p.name)
def test_core_never_imports_discord_or_io(path):
    forbidden = {"discord", "aiohttp", "aiosqlite", "sqlite3", "cogs", "app"}
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
