"""The code a module runs, read from its source: every kind of import, followed transitively, and
the fingerprint over exactly those files."""

from __future__ import annotations

import sys

import pytest

from citeworth.core import codedeps
from citeworth.core import fingerprint as fp

FILES = {
    "__init__.py": '"""The root: left out of every closure."""\n',
    "shared.py": "LIMIT = 20\n",
    "tools/__init__.py": '"""Tools."""\n',
    "tools/main.py": (
        "import os.path\n"
        "from . import rules\n"  # relative, a module
        "from .. import shared\n"  # two levels up
        'REGISTRY = {"plain": "fp_pkg.plugins.plain:run"}\n'  # a module named by a string
        "def lazy():\n"
        "    from .sub.deep import value  # imported when called\n"
        "    return value\n"),
    "tools/rules.py": "import fp_pkg.tools.sub\n",  # absolute
    "tools/data/sections.txt": "introduction\n",  # a rule file of the tools package
    "tools/unused.py": "X = 1\n",
    "tools/sub/__init__.py": "",
    "tools/sub/deep.py": "value = 1\n",
    "tools/sub/notes.txt": "the subpackage's, not the tools package's\n",
    "plugins/__init__.py": "",
    "plugins/plain.py": "def run(): pass\n",
    "plugins/other.py": "def run(): pass\n",
    "tools/__pycache__/rules.cpython-311.pyc": "cache",
    "tools/.rules.py.x1.tmp": "half-written",
}


@pytest.fixture
def package(tmp_path, monkeypatch):
    """An importable package ``fp_pkg`` (never imported here: the closure reads its source)."""
    root = tmp_path / "fp_pkg"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for cache in (codedeps.package_folder, codedeps.direct_imports, fp.code_digest):
        cache.cache_clear()
    yield root
    for cache in (codedeps.package_folder, codedeps.direct_imports, fp.code_digest):
        cache.cache_clear()
    assert "fp_pkg" not in sys.modules


def test_the_closure_follows_relative_absolute_lazy_and_named_imports(package):
    assert codedeps.imported_modules("fp_pkg.tools.main") == {
        "fp_pkg.tools", "fp_pkg.tools.main", "fp_pkg.tools.rules", "fp_pkg.shared", "fp_pkg.tools.sub",
        "fp_pkg.tools.sub.deep", "fp_pkg.plugins", "fp_pkg.plugins.plain"}
    assert codedeps.imported_modules("fp_pkg.tools.rules") == {"fp_pkg.tools", "fp_pkg.tools.rules",
                                                               "fp_pkg.tools.sub"}


def test_the_code_files_are_the_modules_and_their_packages_data(package):
    files = [path.relative_to(package).as_posix() for path in codedeps.code_files("fp_pkg.tools.main")]
    assert files == ["plugins/__init__.py", "plugins/plain.py", "shared.py", "tools/__init__.py",
                     "tools/data/sections.txt", "tools/main.py", "tools/rules.py", "tools/sub/__init__.py",
                     "tools/sub/deep.py", "tools/sub/notes.txt"]


def test_the_digest_changes_with_the_code_the_module_runs_and_only_with_it(package):
    before = fp.code_digest("fp_pkg.tools.main")
    for elsewhere in ("tools/unused.py", "plugins/other.py", "__init__.py",
                      "tools/__pycache__/rules.cpython-311.pyc", "tools/.rules.py.x1.tmp"):
        (package / elsewhere).write_text("# edited\n")
        fp.code_digest.cache_clear()
        assert fp.code_digest("fp_pkg.tools.main") == before, elsewhere
    for imported in ("shared.py", "tools/data/sections.txt", "tools/sub/deep.py", "plugins/plain.py"):
        (package / imported).write_text((package / imported).read_text() + "# edited\n")
        fp.code_digest.cache_clear()
        after = fp.code_digest("fp_pkg.tools.main")
        assert after != before, imported
        before = after


def test_an_unknown_module():
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        codedeps.imported_modules("no_such_module.x")


def test_the_stages_closures_leave_out_what_they_never_import():
    assert "citeworth.report.stage" not in codedeps.imported_modules("citeworth.models.train")
    assert "citeworth.curate.assemble" not in codedeps.imported_modules("citeworth.curate.stage")
    assert "citeworth.curate.engine" in codedeps.imported_modules("citeworth.curate.stage")  # lazy
    assert "citeworth.models.tfidf" in codedeps.imported_modules("citeworth.models.train")  # by name
    text = {m for m in codedeps.imported_modules(*(f"citeworth.text.{m}" for m in (
        "anchors", "citations", "fields", "pysbd_regex", "sections", "sentences")))}
    assert {m.split(".")[1] for m in text} == {"text", "core"}  # the toolkit imports no stage
