"""The shape of the imports: no module imports one that (through others)
imports it back, and our cogs find one another through typed objects, never
``bot.get_cog("Name")``."""
from __future__ import annotations

import ast
from pathlib import Path

from tests import ROOT

PACKAGES = ("core", "app", "cogs")


def _sources() -> dict[str, Path]:
    """Every module of the bot by dotted name (``cogs.tables`` for its ``__init__.py``)."""
    found = {"bot": ROOT / "bot.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imported(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the bot this one imports when it runs (at the top or in a
    function; not the names it imports for type checking only)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking(node):
            for child in getattr(node, "orelse", []):
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base in known:
                out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    out.discard(module)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                group.append(other)
                if other == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_a_function_level_import_counts_and_a_type_checking_one_does_not(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\n"
                    "def f():\n    from y import z\n", encoding="utf-8")
    assert _imported("m", path, {"x", "y", "y.z"}) == {"y", "y.z"}


def test_no_import_cycles():
    sources = _sources()
    known = set(sources)
    graph = {module: _imported(module, path, known) for module, path in sources.items()}
    assert graph["cogs.tables.presenter"] >= {"cogs.tables.lobby"}  # (the finder sees the imports)
    assert _cycles(graph) == []


def test_our_cogs_are_not_looked_up_by_name():
    """``bot.get_cog("Tables")`` is untyped and fails late: cogs and items reach
    another cog through :func:`cogs.common.parts.parts`."""
    lookups = [f"{path.relative_to(ROOT)}:{node.lineno}"
               for path in _sources().values() for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Attribute) and node.attr == "get_cog"]
    assert lookups == []


def _undeclared_self_attributes(path: Path) -> dict[str, set[str]]:
    """Per class of a module: the ``self.<name>`` it uses that it does not declare itself
    (no method, class attribute or ``self.<name> = ...`` of its own): what a mixin shares."""
    out: dict[str, set[str]] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        declared: set[str] = set()
        used: set[str] = set()
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                declared.add(item.name)
            elif isinstance(item, ast.Assign):
                declared.update(target.id for target in item.targets if isinstance(target, ast.Name))
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                declared.add(item.target.id)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                (declared if isinstance(sub.ctx, ast.Store) else used).add(sub.attr)
        if used - declared:
            out[node.name] = used - declared
    return out


def test_the_undeclared_attribute_finder_sees_a_mixin(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("class A:\n    def f(self):\n        return self.manager\n"
                    "class B:\n    x = 1\n    def __init__(self):\n        self.y = self.x\n", encoding="utf-8")
    assert _undeclared_self_attributes(path) == {"A": {"manager"}}


def test_the_table_kit_is_objects_not_mixins():
    """The lobby, the presenter, the router, the cog and the hand panels each use only
    what they declare (their constructor's arguments, their own methods): nothing is
    shared through a class made of several."""
    from discord.ext import commands

    from cogs.tables import TablesCog

    assert TablesCog.__bases__ == (commands.Cog,)
    found = {f"{path.name}:{name}": sorted(names) for path in sorted((ROOT / "cogs" / "tables").glob("*.py"))
             for name, names in _undeclared_self_attributes(path).items()
             if name in ("Lobby", "Presenter", "Router", "TablesCog", "HandPanels")}
    assert found == {}
