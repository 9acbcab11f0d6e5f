"""The layout's rules that can be checked, read from the source (``ast``) and the docs, nothing
imported: no import cycle between citeworth modules, none between its top-level packages, no Airflow
import in the library but where docs/ARCHITECTURE.md names an exception, and every package and
top-level folder described by docs/layout.md's table or docs/ARCHITECTURE.md's layout.

Imports are every ``import`` statement at any depth: one inside a function runs later, but it runs,
so it closes a cycle as well as a module-level one (``citeworth.core.codedeps`` counts them too).
Names in strings (the stage and model registries) are not imports: a registry names what it
dispatches to, downward."""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "citeworth"

# Modules that import Airflow although the library does not (docs/ARCHITECTURE.md names each): the
# worker hosts' entry point runs in the process that becomes Airflow's Celery worker and signs its
# jwt_secret check with Airflow's own JWT code.
ALLOWED_AIRFLOW_IMPORTS = {"citeworth.orchestration.airflow_worker"}


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@cache
def syntax_tree(module: str) -> ast.Module:
    return ast.parse(modules()[module].read_text(encoding="utf-8"))


@cache
def imported_names(module: str) -> frozenset[str]:
    """What each import statement of ``module`` imports, at any depth, relative ones resolved:
    ``import a.b`` -> a.b; ``from a import b`` -> a.b when that is a module of ours, else a (b is a
    name in it)."""
    package = module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(syntax_tree(module)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(part for part in (base, node.module) if part)
            names |= {f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules() else source
                      for alias in node.names}
    return frozenset(names)


def import_graph() -> nx.DiGraph:
    """Module -> the citeworth modules it imports."""
    graph = nx.DiGraph()
    graph.add_nodes_from(modules())
    graph.add_edges_from((module, name) for module in modules()
                         for name in imported_names(module) & modules().keys() if name != module)
    return graph


def cycles(graph: nx.DiGraph) -> set[frozenset[str]]:
    return {frozenset(group) for group in nx.strongly_connected_components(graph) if len(group) > 1}


def test_no_import_cycle_between_modules():
    assert cycles(import_graph()) == set(), "modules that import each other: make the dependency one-way"


def test_no_import_cycle_between_top_level_packages():
    packages = nx.DiGraph()
    for module, imported in import_graph().edges:
        one, other = _top_package(module), _top_package(imported)
        if one != other:
            packages.add_edge(one, other)
    assert cycles(packages) == set(), "a cycle between packages: move what both use below them"


def _top_package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_cycle_rule_sees_lazy_imports_and_from_imports():
    """The checks above would pass on a graph with no edges: this one proves the graph has them."""
    graph = import_graph()
    assert graph.has_edge("citeworth.curate.stage", "citeworth.curate.store_settings")  # module level
    assert graph.has_edge("citeworth.curate.store_settings", "citeworth.curate.s3_shard_store")  # lazy
    assert graph.has_edge("citeworth.curate.stage", "citeworth.core.knobs")  # from a package import a module
    assert not graph.has_edge("citeworth.curate.stage", "citeworth.core")  # ... is that module
    graph.add_edge("citeworth.curate.shard_store", "citeworth.curate.store_settings")
    assert cycles(graph) == {frozenset({"citeworth.curate.shard_store", "citeworth.curate.store_settings",
                                        "citeworth.curate.s3_shard_store"})}


def airflow_imports() -> set[str]:
    """The modules importing ``airflow`` (a statement at any depth, or import_module("airflow..."))."""
    found = set()
    for module in modules():
        dynamic = {node.args[0].value for node in ast.walk(syntax_tree(module)) if isinstance(node, ast.Call)
                   and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
                   and node.args and isinstance(node.args[0], ast.Constant)}
        if any(name.partition(".")[0] == "airflow" for name in imported_names(module) | dynamic):
            found.add(module)
    return found


def test_the_library_imports_airflow_only_where_the_architecture_names_an_exception():
    assert airflow_imports() == ALLOWED_AIRFLOW_IMPORTS
    principle = _paragraph(ROOT / "docs" / "ARCHITECTURE.md", "- **Library first.**")
    for module in ALLOWED_AIRFLOW_IMPORTS:
        assert modules()[module].relative_to(ROOT / PACKAGE).as_posix() in principle, module


def _paragraph(path: Path, start: str) -> str:
    text = path.read_text(encoding="utf-8")
    begin = text.index(start)
    return text[begin:text.index("\n- ", begin + 1)]


def packages() -> set[str]:
    """``citeworth/x/y/`` for every package below the root one."""
    return {path.parent.relative_to(ROOT).as_posix() + "/" for path in (ROOT / PACKAGE).rglob("__init__.py")
            if path.parent != ROOT / PACKAGE}


def tracked_top_folders() -> set[str]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return {line.split("/", 1)[0] + "/" for line in listed.splitlines() if "/" in line}


def layout_table_folders() -> set[str]:
    """The folders the first column of docs/layout.md's table names (``citeworth/core/``, ``dags/``)."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    table = text[text.index("| where | what |"):]
    table = table.split("\n\n", 1)[0]
    cells = [row.split("|")[1] for row in table.splitlines()[2:]]
    return {name for cell in cells for name in re.findall(r"`([^`]+/)`", cell)}


def architecture_folders() -> set[str]:
    """The folders of docs/ARCHITECTURE.md's layout tree, each with the folders above it
    (``  sources/`` then ``    latex/`` -> ``citeworth/sources/latex/``)."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    tree = text[text.index("## Layout"):]
    tree = tree[tree.index("```\n") + 4:]
    tree = tree[:tree.index("```")]
    folders, above = set(), []  # above: (indent, folder) of the entries the next line may sit in
    for line in tree.splitlines():
        indent = len(line) - len(line.lstrip())
        if not line.strip() or indent > 12:  # a description's continuation line
            continue
        above = [(depth, name) for depth, name in above if depth < indent]
        name = line.split()[0]
        if name.endswith("/"):
            folders.add("".join(folder for _, folder in above) + name)
            above.append((indent, name))
    return folders


def test_every_package_and_top_level_folder_is_in_the_layout_docs():
    listed = layout_table_folders() | architecture_folders()
    assert packages() - listed == set(), "packages neither docs/layout.md nor ARCHITECTURE.md lists"
    assert tracked_top_folders() - listed == set(), "top-level folders the layout docs do not list"


def test_the_layout_docs_list_only_folders_that_exist():
    listed = layout_table_folders() | architecture_folders()
    assert {"citeworth/sources/latex/", "citeworth/core/", "dags/"} <= listed  # the parsers find entries
    assert {folder for folder in listed if not (ROOT / folder).is_dir()} == set()
