"""The citeworth code a module runs: its imports, read from the source and followed transitively.

What a result depends on is the code its module imports, not the packages that code lies beside, so
both the fingerprints of finished work (``citeworth.core.fingerprint``) and ``dvc.yaml``'s code deps
are computed here from the import graph:

- every ``import a.b`` and ``from a import b`` (``b`` a module or a name in ``a``), relative ones
  (``from . import b``, ``from ..a import b``) too, at any depth: an import inside a function runs
  lazily, but it runs;
- a string naming a citeworth module (``"citeworth.models.tfidf"``, ``"pkg.module:function"``):
  registries import by name;
- importing ``a.b.c`` runs the ``__init__`` of ``a.b`` first (the root ``citeworth/__init__.py``
  holds only the version and is left out, so a release number does not redo finished work);
- a package's files that are not Python (``data/``, ``templates/``, the demo tables): the rule files
  its modules read.

``citeworth.orchestration.dvc_code_deps`` writes ``dvc.yaml``'s code deps from this.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

# Files that are not source: interpreter caches, and the atomic writers' temporaries.
_NOT_SOURCE = ("__pycache__",)
_NOT_SOURCE_SUFFIXES = (".pyc", ".tmp")


@functools.cache
def package_folder(top: str) -> Path | None:
    """The folder of top-level package ``top``; None when it is not a package."""
    spec = importlib.util.find_spec(top)  # a top-level name: found without importing it
    return Path(spec.origin).resolve().parent if spec and spec.origin and spec.submodule_search_locations \
        else None


def source_file(module: str) -> Path | None:
    """The file of ``module`` (a package's ``__init__.py``), found without importing anything; None
    for a name that is not a module of a package (a function, a class, a word)."""
    parts = module.split(".")
    folder = package_folder(parts[0]) if all(part.isidentifier() for part in parts) else None
    if folder is None:
        return None
    path = folder.joinpath(*parts[1:])
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if len(parts) > 1 and path.with_suffix(".py").is_file() else None


def _with_packages(module: str) -> set[str]:
    """``a.b.c`` -> {a.b, a.b.c} (the root package left out, see the module docstring)."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)}


def _is_package(module: str) -> bool:
    return source_file(module).name == "__init__.py"


def _absolute(node: ast.ImportFrom, module: str) -> str:
    """The module ``from ... import`` names, relative levels resolved against ``module``."""
    if not node.level:
        return node.module
    package = module if _is_package(module) else module.rpartition(".")[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def _named(tree: ast.AST, module: str) -> set[str]:
    """Every module name ``tree`` imports or writes as a string (some are names in a module)."""
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module)
            named |= {source} | {f"{source}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value.partition(":")[0])
    return named


@functools.cache
def direct_imports(module: str) -> frozenset[str]:
    """The modules of ``module``'s own package tree (and their packages) its source names."""
    path = source_file(module)
    if path is None:
        raise ModuleNotFoundError(f"no module {module!r}")
    top = module.partition(".")[0]
    ours = {name for name in _named(ast.parse(path.read_text(encoding="utf-8")), module)
            if name.partition(".")[0] == top and source_file(name) is not None}
    return frozenset(set().union(*map(_with_packages, ours)))


def imported_modules(*entries: str) -> frozenset[str]:
    """``entries``, every module they can import, transitively, and the packages on the way."""
    seen: set[str] = set()
    todo = sorted(set(entries).union(*map(_with_packages, entries)))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += sorted(direct_imports(module) - seen)
    return frozenset(seen)


def tree_files(folder: Path) -> list[Path]:
    """Every file below ``folder`` but interpreter caches and temporaries, in path order."""
    return sorted(path for path in folder.rglob("*") if path.is_file()
                  and not path.name.endswith(_NOT_SOURCE_SUFFIXES)
                  and not any(part in _NOT_SOURCE for part in path.relative_to(folder).parts))


def package_data(package: str) -> list[Path]:
    """A package's files that are not Python, below its folder but not in a subpackage's."""
    folder = source_file(package).parent
    return [path for path in tree_files(folder) if path.suffix != ".py" and not any(
        (parent / "__init__.py").exists() for parent in path.parents if folder in parent.parents)]


def code_files(*entries: str) -> list[Path]:
    """The source file of each module in the import closure of ``entries`` and the data files of
    each package in it, in path order."""
    files: set[Path] = set()
    for module in imported_modules(*entries):
        files.add(source_file(module))
        if _is_package(module):
            files |= set(package_data(module))
    return sorted(files)
