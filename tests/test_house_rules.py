"""The house rules ARCHITECTURE.md states, held by tests: no import cycle, no long module,
and only the pytest layer (`plugin/`) imports pytest.

An import counts wherever it is written: at module level, under TYPE_CHECKING or
inside a function. A deferred import hides a cycle from the interpreter, not from
a reader: the two modules still cannot be understood, or moved, one without the other.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest_qualbench

PACKAGE_ROOT = Path(pytest_qualbench.__file__).parent
MAX_MODULE_LINES = 500
# The one subpackage that may import pytest: engines, metrics and the report stay usable,
# and testable, without a pytest session.
PYTEST_LAYER = "plugin"
PYTEST_MODULES = frozenset({"pytest", "_pytest"})


def package_modules(root: Path) -> dict[str, Path]:
    """Every module of the package under `root`, by dotted name.

    A compiled extension counts by its stub (`.pyi`), so that importing it is not
    mistaken for an import of its package.
    """
    modules: dict[str, Path] = {}
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.pyi")]):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The package's modules that module `name` (at `path`) imports, anywhere in its text.

    `from package import submodule` imports the submodule, not the package's `__init__`
    (which runs for any submodule, so it would join every module to its package).
    """
    is_package = path.stem == "__init__"
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    imported.add(submodule)
                elif source in modules:
                    imported.add(source)
    imported.discard(name)
    return imported


def import_cycle(root: Path) -> list[str] | None:
    """One import cycle among the modules of the package at `root` (first and last the same),
    or None when there is none."""
    modules = package_modules(root)
    graph = {name: sorted(imported_modules(name, path, modules)) for name, path in modules.items()}
    # Depth-first search: an edge back to a module still on the path closes a cycle.
    finished: set[str] = set()
    for start in sorted(graph):
        if start in finished:
            continue
        path = [start]
        pending = [iter(graph[start])]
        while pending:
            following = next(pending[-1], None)
            if following is None:
                finished.add(path.pop())
                pending.pop()
            elif following in path:
                return [*path[path.index(following) :], following]
            elif following not in finished:
                path.append(following)
                pending.append(iter(graph[following]))
    return None


def write_package(root: Path, files: Mapping[str, str]) -> Path:
    package = root / "pkg"
    for relative, text in {"__init__.py": "", **files}.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text)
    return package


def test_no_import_cycle_in_the_package() -> None:
    cycle = import_cycle(PACKAGE_ROOT)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_no_module_over_the_line_limit() -> None:
    too_long = {
        str(path.relative_to(PACKAGE_ROOT.parent)): lines
        for path in sorted(PACKAGE_ROOT.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines: {too_long}"


def pytest_imports(path: Path) -> list[str]:
    """`module line N` for each import of pytest (or its internals) in the module at `path`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        found.extend(
            f"{name} line {node.lineno}" for name in names if name.split(".")[0] in PYTEST_MODULES
        )
    return found


def test_only_the_pytest_layer_imports_pytest() -> None:
    outside = {
        str(path.relative_to(PACKAGE_ROOT.parent)): imports
        for path in sorted(PACKAGE_ROOT.rglob("*.py"))
        if path.relative_to(PACKAGE_ROOT).parts[0] != PYTEST_LAYER
        and (imports := pytest_imports(path))
    }
    assert not outside, f"pytest imported outside {PYTEST_LAYER}/: {outside}"


def test_a_deferred_pytest_import_is_found(tmp_path: Path) -> None:
    module = tmp_path / "engine.py"
    module.write_text("def later():\n    from _pytest.config import Config\n    import pytest\n")
    assert pytest_imports(module) == ["_pytest.config line 2", "pytest line 3"]


def test_a_cycle_through_a_deferred_import_is_found(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "a.py": "from pkg.b import helper\n",
            "b.py": "def helper():\n    from pkg import c\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n",
        },
    )
    assert import_cycle(package) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]


def test_a_submodule_imported_through_its_package_is_no_cycle(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "__init__.py": "from pkg.inner.leaf import value\n",
            "inner/__init__.py": "",
            "inner/leaf.py": "value = 1\n",
            "user.py": "from pkg.inner import leaf\nfrom . import _compiled\n",
            "_compiled.pyi": "def walk() -> None: ...\n",
        },
    )
    assert import_cycle(package) is None


def test_a_package_importing_its_importer_is_a_cycle(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {"__init__.py": "from pkg.user import thing\n", "user.py": "from pkg import name\n"},
    )
    assert import_cycle(package) == ["pkg", "pkg.user", "pkg"]
