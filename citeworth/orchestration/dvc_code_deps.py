"""dvc.yaml's code deps, computed: each stage depends on exactly the code its stage function imports.

dvc.yaml is static YAML, so the deps are written into it by this command and checked by
``tests/unit/test_pipeline_graph.py``. A stage's code is the import closure of its stage function's
module (``citeworth.core.codedeps``), listed as files, or as a folder where every file below it is
one (``citeworth/sources``)::

    python -m citeworth.orchestration.dvc_code_deps            # print each stage's code deps
    python -m citeworth.orchestration.dvc_code_deps --write    # rewrite dvc.yaml's
    python -m citeworth.orchestration.dvc_code_deps --check    # exit 1 when dvc.yaml's differ
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

import yaml

from citeworth.core.codedeps import code_files, tree_files
from citeworth.core.io import write_text
from citeworth.stages import STAGES

PACKAGE = "citeworth"
ROOT = Path(__file__).resolve().parents[2]  # the project: dvc.yaml's paths are relative to it


def stage_code_deps(module: str) -> list[str]:
    """``module``'s code files as dvc.yaml deps."""
    return sorted(_collapse({path.relative_to(ROOT) for path in code_files(module)}, ROOT / PACKAGE))


def _collapse(files: set[Path], folder: Path) -> list[str]:
    """A folder below the package root whose every file is in ``files`` stands for them all."""
    below = [path.relative_to(ROOT) for path in tree_files(folder)]
    if folder != ROOT / PACKAGE and below and set(below) <= files:
        return [folder.relative_to(ROOT).as_posix()]
    deps = [path.as_posix() for path in files if path.parent == folder.relative_to(ROOT)]
    for sub in sorted(path for path in folder.iterdir() if path.is_dir()):
        deps += _collapse(files, sub)
    return deps


def covered_files(deps: Iterable[str]) -> set[Path]:
    """The code files that dvc.yaml deps name (a folder: every file below it)."""
    covered: set[Path] = set()
    for dep in deps:
        path = ROOT / dep
        covered |= {p.relative_to(ROOT) for p in tree_files(path)} if path.is_dir() else {Path(dep)}
    return covered


def stage_modules(dvc_yaml: Path) -> dict[str, str]:
    """dvc.yaml's stage names -> the module of the citeworth stage function each runs."""
    modules = {}
    for name, stage in yaml.safe_load(dvc_yaml.read_text(encoding="utf-8"))["stages"].items():
        if "foreach" in stage:  # one definition over several params sections of one stage function
            found = {STAGES[item["section"]].partition(":")[0] for item in stage["foreach"].values()}
            if len(found) != 1:
                raise ValueError(f"dvc.yaml stage {name!r} runs several modules: {sorted(found)}")
            modules[name] = found.pop()
        else:
            modules[name] = STAGES[stage["cmd"].split()[2]].partition(":")[0]
    return modules


def with_code_deps(text: str, deps: dict[str, list[str]]) -> str:
    """dvc.yaml's ``text`` with each stage's ``- citeworth/...`` deps replaced by ``deps[stage]``,
    written where the first of them was; comments and every other line are kept."""
    out, stage, written = [], None, set()
    for line in text.splitlines(keepends=True):
        if line.startswith("  ") and line[2] not in " #" and line.rstrip().endswith(":"):
            stage = line.strip()[:-1]  # a stage's name, indented under ``stages:``
        if stage in deps and line.strip().startswith(f"- {PACKAGE}/"):
            if stage not in written:
                indent = line[:len(line) - len(line.lstrip())]
                out += [f"{indent}- {dep}\n" for dep in deps[stage]]
                written.add(stage)
            continue
        out.append(line)
    if missing := set(deps) - written:
        raise ValueError(f"dvc.yaml stages without code deps to replace: {sorted(missing)}")
    return "".join(out)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m citeworth.orchestration.dvc_code_deps",
        description="Compute each dvc.yaml stage's code deps from the import graph of its stage "
                    "function's module (what counts as an import: citeworth/core/codedeps.py).")
    parser.add_argument("dvc_yaml", nargs="?", type=Path, default=ROOT / "dvc.yaml",
                        help="the pipeline file (default: the project's dvc.yaml)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="rewrite the file's code deps in place")
    action.add_argument("--check", action="store_true", help="exit 1 when the file's code deps differ")
    args = parser.parse_args(argv)
    deps = {name: stage_code_deps(module) for name, module in stage_modules(args.dvc_yaml).items()}
    text = args.dvc_yaml.read_text(encoding="utf-8")
    updated = with_code_deps(text, deps)
    if args.write and updated != text:
        write_text(args.dvc_yaml, updated)
    elif args.check and updated != text:
        print(f"{args.dvc_yaml}: code deps differ from the imports; run "
              "python -m citeworth.orchestration.dvc_code_deps --write", file=sys.stderr)
        return 1
    elif not (args.write or args.check):
        for name, stage_deps in deps.items():
            print(f"{name}:", *stage_deps, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
