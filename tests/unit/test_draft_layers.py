"""Which way the draft tools' imports run, read from the source (``citeworth.core.codedeps``, lazy
imports included): ``check`` and ``lsp`` use ``suggest``, ``suggest`` never uses ``check``, the
shared draft types import none of them, and the options both front ends build stay light."""

from __future__ import annotations

import pkgutil

import pytest

import citeworth.suggest
from citeworth.core import codedeps


def _modules(package) -> list[str]:
    names = [module.name for module in pkgutil.iter_modules(package.__path__)]
    return [package.__name__] + [f"{package.__name__}.{name}" for name in names]


@pytest.mark.parametrize("module", _modules(citeworth.suggest))
def test_suggest_never_imports_check_or_lsp(module):
    closure = codedeps.imported_modules(module)
    assert not {m for m in closure if m.startswith(("citeworth.check", "citeworth.lsp"))}


def test_the_shared_draft_types_import_no_tool():
    closure = codedeps.imported_modules("citeworth.drafts")
    assert not {m for m in closure if m.startswith(("citeworth.check", "citeworth.suggest", "citeworth.lsp"))}


def test_check_imports_suggest_and_the_shared_types():
    closure = codedeps.imported_modules("citeworth.check.run")
    assert {"citeworth.drafts", "citeworth.suggest.draft"} <= closure


def test_the_options_both_front_ends_build_import_nothing_heavy():
    closure = codedeps.imported_modules("citeworth.check.options")
    assert closure <= {"citeworth.check", "citeworth.check.options", "citeworth.core",
                       "citeworth.core.schema"}
