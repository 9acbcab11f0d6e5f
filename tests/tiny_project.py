"""A tiny committed DVC project for orchestration tests: the real params.yaml and a two-stage
dvc.yaml (`first` follows assemble.per_field, the form's sample size; `second` reads first's output
and writes a metric and plots git keeps), built once by `dvc repro` with a local-folder remote."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from citeworth.orchestration.versioning import dvc, git

ROOT = Path(__file__).resolve().parents[1]
DVC_YAML = """stages:
  first:
    cmd: {python} step.py first
    deps: [step.py]
    params: [assemble.per_field]
    outs: [out/first.txt]
  second:
    cmd: {python} step.py second
    deps: [step.py, out/first.txt]
    outs: [out/second.txt]
    metrics:
      - stats.json:
          cache: false
    plots:
      - plots:
          cache: false
"""
STEP = """import json, os, sys, yaml
if sys.argv[1] == "first":
    open("out/first.txt", "w").write(str(yaml.safe_load(open("params.yaml"))["assemble"]["per_field"]))
else:
    text = open("out/first.txt").read()
    open("out/second.txt", "w").write(text * 2)
    open("stats.json", "w").write(json.dumps({"n": len(text)}))
    os.makedirs("plots", exist_ok=True)
    open("plots/curve.csv", "w").write("x,y\\n0," + text + "\\n")
    open("plots/curve.png", "wb").write(bytes([0x89]) + b"PNG" + text.encode())
"""



def build_tiny_project(root: Path) -> Path:
    """The project at ``root``, committed on ``main`` after one `dvc repro`."""
    root.mkdir(parents=True)
    shutil.copy(ROOT / "params.yaml", root / "params.yaml")
    (root / "dvc.yaml").write_text(DVC_YAML.format(python=sys.executable))
    (root / "step.py").write_text(STEP)
    (root / "out").mkdir()
    git(root, "init", "--quiet", "--initial-branch", "main")
    dvc(root, "init", "--quiet")
    dvc(root, "config", "core.autostage", "false")
    dvc(root, "remote", "add", "--default", "local", "../storage")  # relative to .dvc/, as ours
    dvc(root, "repro", "--quiet")
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", "built")
    return root
