"""Imports flow one way: down the folders of docs/architecture.md, never up, never in a circle.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: a lazy import
still ties the modules together. So does a string that names a module of the package (the module
list the plugin hands the call loop to preload, say); a module may not be imported by a string
given to ``importlib.import_module`` or ``__import__`` at all, since no reader (and no checker) sees
where such an import points. A module may import its own folder's modules or a lower folder's;
the folders' graph has no circle either; only the pytest layer's folder imports pytest.

The checks are functions of a package directory, so each is also shown failing on a planted
package at the end of this file.
"""

from __future__ import annotations

import ast
import graphlib
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_omk

PACKAGE = Path(pytest_omk.__file__).parent

LAYERS: list[tuple[str, ...]] = [
    ("", "errors", "js", "_util"),  # knows no sample ("" is the package's own __init__)
    ("models",),  # data and its schemas
    ("loading", "recordings", "grade"),  # files in, data out; graders are pure
    ("resolve", "execute", "compare"),  # resolve and execute record through recordings/
    ("agent", "judge", "config", "app"),  # the judge calls through execute/calls
    ("run", "report"),  # never each other
    ("plugin", "__main__"),  # the pytest layer
]
"""Bottom to top; a module's folder is the first part of its name below the package
(docs/architecture.md has the same table)."""
NEVER = {("run", "report"), ("report", "run")}
"""Folders of one layer that must not import each other."""
PYTEST_FOLDER = "plugin"
PYTEST_MODULES = ("pytest", "_pytest", "xdist", "pytest_html")
ROOT_FACES = {"", "__main__", "errors"}
"""The only modules directly under the package: its faces."""
STRING_IMPORTERS = {"import_module", "__import__"}


@dataclass
class Package:
    """The modules of one package directory and what each imports."""

    root: Path

    @property
    def name(self) -> str:
        return self.root.name

    def modules(self) -> dict[str, Path]:
        """Module name (``pytest_omk.run.loop``) to file."""
        found = {}
        for path in self.root.rglob("*.py"):
            parts = path.relative_to(self.root.parent).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
        return found

    def graph(self) -> dict[str, set[str]]:
        """Each module's imports of the package's modules and of the pytest family."""
        modules = self.modules()
        return {name: _imports(path, modules) - {name} for name, path in modules.items()}

    def folder(self, module: str) -> str:
        """The folder a module belongs to: the first part of its name below the package."""
        if module.split(".")[0] in PYTEST_MODULES:
            return module.split(".")[0]
        rest = module.removeprefix(self.name).removeprefix(".")
        return rest.split(".")[0]


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
            found.update(subs or {node.module})
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules:
            found.add(node.value)  # a module named by a string is imported by someone
    return {n for n in found if n in modules or n.split(".")[0] in PYTEST_MODULES}


def _layer(folder: str) -> int:
    ranks = [i for i, layer in enumerate(LAYERS) if folder in layer]
    assert ranks, f"folder {folder!r} is in no layer of LAYERS"
    return ranks[0]


def loose_modules(package: Package) -> set[str]:
    """Modules directly under the package other than its faces."""
    return {
        m
        for m, path in package.modules().items()
        if path.parent == package.root and package.folder(m) not in ROOT_FACES
    }


def upward_imports(package: Package) -> set[tuple[str, str]]:
    """Imports of a higher layer's module, or of a folder the ``NEVER`` table forbids."""
    bad = set()
    for module, deps in package.graph().items():
        mine = package.folder(module)
        for dep in deps:
            theirs = package.folder(dep)
            if theirs in PYTEST_MODULES:
                continue
            if _layer(theirs) > _layer(mine) or (mine, theirs) in NEVER:
                bad.add((module, dep))
    return bad


def pytest_imports_outside_the_pytest_folder(package: Package) -> set[tuple[str, str]]:
    """Imports of pytest, ``_pytest``, xdist or pytest-html below the pytest layer's folder."""
    return {
        (module, dep)
        for module, deps in package.graph().items()
        for dep in deps
        if package.folder(dep) in PYTEST_MODULES and package.folder(module) != PYTEST_FOLDER
    }


def private_pytest_outside_compat(package: Package) -> set[str]:
    """Modules other than the pytest layer's ``compat`` that import pytest's private ``_pytest``."""
    compat = f"{package.name}.{PYTEST_FOLDER}.compat"
    return {
        m
        for m, deps in package.graph().items()
        if m != compat and any(d.split(".")[0] == "_pytest" for d in deps)
    }


def module_cycle(package: Package) -> list[str] | None:
    """A circle of modules, or ``None``."""
    return _cycle(
        {
            m: {d for d in deps if package.folder(d) not in PYTEST_MODULES}
            for m, deps in package.graph().items()
        }
    )


def folder_cycle(package: Package) -> list[str] | None:
    """A circle of folders (packages), or ``None``: two modules may be acyclic while their folders
    import each other."""
    folders: dict[str, set[str]] = {}
    for module, deps in package.graph().items():
        mine = package.folder(module)
        theirs = {package.folder(d) for d in deps} - {mine} - set(PYTEST_MODULES)
        folders.setdefault(mine, set()).update(theirs)
    return _cycle(folders)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def string_imports(package: Package) -> set[tuple[str, int]]:
    """Calls of ``import_module``/``__import__`` whose module is spelled in the code (a string, an
    f-string, a concatenation) rather than handed in: an import no reader sees."""
    found = set()
    for module, path in package.modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in STRING_IMPORTERS and not isinstance(node.args[0], ast.Name):
                found.add((module, node.lineno))
    return found


OMK = Package(PACKAGE)


def test_the_package_root_holds_only_its_faces() -> None:
    assert loose_modules(OMK) == set()


def test_no_module_imports_upward_or_across_a_forbidden_pair() -> None:
    assert upward_imports(OMK) == set()


def test_only_the_pytest_layer_imports_pytest() -> None:
    assert pytest_imports_outside_the_pytest_folder(OMK) == set()


def test_only_compat_uses_private_pytest_api() -> None:
    assert private_pytest_outside_compat(OMK) == set()


def test_no_circle_of_modules_even_through_lazy_imports() -> None:
    assert module_cycle(OMK) is None


def test_no_circle_of_folders() -> None:
    assert folder_cycle(OMK) is None


def test_no_module_is_imported_by_a_spelled_string() -> None:
    assert string_imports(OMK) == set()


def test_every_folder_has_a_layer() -> None:
    for module in OMK.modules():
        _layer(OMK.folder(module))


# The checks fail where they should: a planted package for each.


def _plant(tmp_path: Path, files: dict[str, str]) -> Package:
    root = tmp_path / "planted"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return Package(root)


def test_a_folder_circle_with_acyclic_modules_is_caught(tmp_path: Path) -> None:
    planted = _plant(
        tmp_path,
        {
            "execute/__init__.py": "",
            "execute/openai.py": "",
            "execute/factory.py": "from planted.agent import loop\n",
            "agent/__init__.py": "",
            "agent/loop.py": "from planted.execute import openai\n",
        },
    )
    assert module_cycle(planted) is None
    assert folder_cycle(planted) is not None


def test_a_string_import_is_caught_and_counts_as_an_import(tmp_path: Path) -> None:
    planted = _plant(
        tmp_path,
        {
            "execute/__init__.py": "",
            "execute/calls.py": 'import importlib\n\ndef preload():\n    importlib.import_module("planted.judge.judge")\n',
            "judge/__init__.py": "",
            "judge/judge.py": "from planted.execute import calls\n",
            "run/__init__.py": "",
            "run/loop.py": "import importlib\n\ndef load(name: str):\n    importlib.import_module(name)\n",
        },
    )
    assert string_imports(planted) == {("planted.execute.calls", 4)}
    assert ("planted.execute.calls", "planted.judge.judge") in upward_imports(planted)
    assert module_cycle(planted) is not None


def test_an_upward_import_and_pytest_below_the_plugin_are_caught(tmp_path: Path) -> None:
    planted = _plant(
        tmp_path,
        {
            "report/__init__.py": "",
            "report/writer.py": "import pytest\nfrom planted.run import pipeline\n",
            "run/__init__.py": "",
            "run/pipeline.py": "",
            "loose.py": "",
            "plugin/__init__.py": "",
            "plugin/compat.py": "from _pytest.junitxml import xml_key\n",
            "plugin/junit.py": "import _pytest.junitxml\n",
        },
    )
    assert upward_imports(planted) == {("planted.report.writer", "planted.run.pipeline")}
    assert pytest_imports_outside_the_pytest_folder(planted) == {("planted.report.writer", "pytest")}
    assert private_pytest_outside_compat(planted) == {"planted.plugin.junit"}
    with pytest.raises(AssertionError, match="in no layer"):
        _layer(planted.folder("planted.loose"))
    assert loose_modules(planted) == {"planted.loose"}
