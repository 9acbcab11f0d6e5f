"""Benchmark: an author's citeworth (base install, an exported model, ONNX Runtime) against the torch
path (the README's install, the trained model), side by side in one run.

    .venv/bin/python benchmarks/author.py                 # the study's build (make study ran here)
    .venv/bin/python benchmarks/author.py --project DIR   # the models of another project (its root)

Run from the project root, on an otherwise idle machine. In one run:

- **Agreement** (per model: the project's best by dev F1, Solo and Ctx): the torch model and its
  exports (ONNX fp32 and int8, `citeworth model export`) score the project's whole test split;
  ROC AUC, F1 at the model's threshold and the largest score difference of each, and how fast each
  scores (sentences a second, 2 threads). Bounds: ROC AUC within 0.003, F1 within 0.5 points.
- **Install**: a fresh virtual environment with this checkout (no extra: `pip install citeworth`)
  and the best model's wheel (`citeworth model package`), its size on disk and what it holds; the
  README's install (.venv) beside it.
- **Cold check**: `citeworth check` on a real LaTeX paper of the mirror (arXiv 2004.14974, 28
  files, 268 sentences), a new process each time (the OS file cache warm), median of `--runs`,
  with the peak memory: the author's install with its installed model and no flag, against .venv
  with the torch model (`--model`).
- **First diagnostics**: `citeworth lsp` started fresh, a real LSP client (pytest-lsp) sends
  `initialize`, then opens the paper's main file: seconds until its first diagnostics.

Results: benchmarks/results/author.json (each figure beside the torch path's, and their ratio), with
the card of the model shipped (the docs' authors/model-card.md is generated from it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "author.json"
WORK = ROOT / "benchmarks" / "work" / "author"
PAPER = "github/allenai/s2orc-doc2json/tests/latex/2004.14974.gz"
MAIN_FILE = "emnlp2020.tex"
COMMAND = ".venv/bin/python benchmarks/author.py"
TARGETS = {"check_cold_seconds": 2.0, "lsp_first_diagnostics_seconds": 1.5, "install_mb": 500,
           "roc_auc_difference": 0.003, "f1_difference_points": 0.5}
SETTLE = 4.0  # seconds without a new file's diagnostics after which a draft's check is taken as done
THREADS = 2  # torch's, as ONNX Runtime's default on this 2-core machine (a thread per physical core)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, help="the project whose models are measured (default: the "
                        "study's workspace, `citeworth profile path study`)")
    parser.add_argument("--runs", type=int, default=5, help="cold checks and LSP starts per install (median)")
    parser.add_argument("--models", default="best,solo,context",
                        help="models to export and compare: names under models/, best = the best by dev F1")
    parser.add_argument("--out", type=Path, default=RESULTS, help="default: %(default)s")
    args = parser.parse_args(argv)
    project = (args.project or _study_workspace()).resolve()
    mirror = Path(os.environ.get("CITEWORTH_MIRROR") or ROOT.parent / "shared" / "data")
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    load_before = os.getloadavg()
    best = _best(project)
    names = list(dict.fromkeys(best if m == "best" else m for m in args.models.split(",")))
    agreement = {name: _agreement(project, name) for name in names}
    precision = _precision(agreement[best])
    shipped = WORK / "exported" / f"{best}-{precision}"
    wheel = _package(shipped)
    venv = _author_venv(wheel)
    paper = _paper(mirror)
    torch_model = project / "models" / best
    results = {
        "command": COMMAND + (" --project <the study's workspace>" if args.project else ""),
        "project": _relative(project), "best_model": best, "shipped_precision": precision,
        "package": wheel.name.split("-")[0].replace("_", "-"), "card": (shipped / "README.md").read_text(),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_before": [round(x, 2) for x in load_before]},
        "targets": TARGETS,
        "agreement": agreement,
        "install_mb": _install(venv),
        "check_cold_seconds": _pair(
            _cold_checks(venv / "bin/citeworth", paper, None, args.runs),
            _cold_checks(ROOT / ".venv/bin/citeworth", paper, torch_model, args.runs)),
        "lsp_first_diagnostics_seconds": _pair(
            _first_diagnostics(venv / "bin/citeworth", paper, None, args.runs),
            _first_diagnostics(ROOT / ".venv/bin/citeworth", paper, torch_model, args.runs)),
    }
    results["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    results["met"] = _met(results)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(json.dumps({k: results[k] for k in ("check_cold_seconds", "lsp_first_diagnostics_seconds", "met")},
                     indent=2))
    return 0


def _study_workspace() -> Path:
    from citeworth.core.workspaces import profile_workspace

    workspace = profile_workspace(ROOT, "study")
    if not workspace.is_dir():
        raise SystemExit(f"no study build at {workspace}: run `make study`, or pass --project DIR")
    return workspace


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _best(project: Path) -> str:
    from citeworth.models.scoring import best_model

    return best_model(project / "metrics/models.json", project / "models").name


def _test_split(project: Path) -> list[dict]:
    from citeworth.core.io import read_jsonl
    from citeworth.core.params import load_section

    train = load_section("train", project / "params.yaml")
    return list(read_jsonl(project / train["data_dir"] / "test.jsonl"))


def _agreement(project: Path, name: str) -> dict:
    """The torch model and its fp32 and int8 exports on the whole test split."""
    from citeworth.core.threads import torch_threads
    from citeworth.models import data
    from citeworth.models.base import load_trained
    from citeworth.models.commands import main as model_command
    from citeworth.models.exported import load_exported

    records = _test_split(project)
    labels = data.labels(records)
    found = {"sentences": len(labels)}
    with torch_threads(THREADS):
        trained = load_trained(project / "models" / name)
        found["torch"] = _scored(lambda: trained.predict_proba(records), labels)
    reference = found["torch"].pop("scores")
    for precision in ("fp32", "int8"):
        folder = WORK / "exported" / f"{name}-{precision}"
        start = time.perf_counter()
        cwd = Path.cwd()
        os.chdir(project)
        try:
            assert model_command(["export", name, "--out", str(folder), "--precision", precision]) == 0
        finally:
            os.chdir(cwd)
        export_seconds = time.perf_counter() - start
        scorer = load_exported(folder)
        scored = _scored(lambda s=scorer: s.predict_proba(records), labels)
        scores = scored.pop("scores")
        scored.update({"export_seconds": round(export_seconds, 1),
                       "max_abs_difference": round(float(np.abs(scores - reference).max()), 6),
                       "roc_auc_difference": round(abs(scored["roc_auc"] - found["torch"]["roc_auc"]), 4),
                       "f1_difference_points": round(100 * abs(scored["f1"] - found["torch"]["f1"]), 2),
                       "graph_mb": round(_size(folder / ("model.onnx" if precision == "fp32"
                                                         else "model.int8.onnx")) / 2**20, 1)})
        scored["within_bounds"] = (scored["roc_auc_difference"] <= TARGETS["roc_auc_difference"]
                                   and scored["f1_difference_points"] <= TARGETS["f1_difference_points"])
        found[precision] = scored
    return found


def _scored(score, labels: np.ndarray) -> dict:
    from sklearn.metrics import f1_score, roc_auc_score

    start = time.perf_counter()
    scores = np.asarray(score())
    seconds = time.perf_counter() - start
    return {"scores": scores, "roc_auc": round(float(roc_auc_score(labels, scores)), 5),
            "f1": round(float(f1_score(labels, scores >= 0.5)), 5), "seconds": round(seconds, 1),
            "sentences_per_second": round(len(labels) / seconds, 1)}


def _precision(agreement: dict) -> str:
    """int8 where it stays within the bounds and scores faster, else fp32."""
    int8, fp32 = agreement["int8"], agreement["fp32"]
    faster = int8["sentences_per_second"] > fp32["sentences_per_second"]
    return "int8" if int8["within_bounds"] and faster else "fp32"


def _package(folder: Path) -> Path:
    from citeworth.models.package import package_model

    return package_model(folder, WORK / "dist")


def _author_venv(model_wheel: Path) -> Path:
    """A fresh venv with this checkout's wheel (no extra) and the model package, as an author's pip."""
    venv = WORK / "venv"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(WORK / "dist"), str(ROOT)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    checkout = next((WORK / "dist").glob("citeworth-*.whl"))
    subprocess.run([venv / "bin/python", "-m", "pip", "install", "--quiet", "--constraint",
                    ROOT / "requirements.lock", checkout, model_wheel], check=True)
    return venv


def _size(path: Path) -> int:
    """Bytes on disk (allocated blocks, as du counts them)."""
    if path.is_file():
        return path.stat().st_blocks * 512
    return sum(p.lstat().st_blocks * 512 for p in path.rglob("*"))


def _install(venv: Path) -> dict:
    listing = subprocess.run([venv / "bin/python", "-I", "-c", _DISTRIBUTIONS], capture_output=True,
                             text=True, check=True).stdout  # -I: this checkout is not on its path
    author, torch_path = _size(venv) / 2**20, _size(ROOT / ".venv") / 2**20
    return {"author": round(author, 1), "torch": round(torch_path, 1), "ratio": round(author / torch_path, 3),
            "unit": "MiB on disk (du)", "author_packages": json.loads(listing)}


# Every distribution of an environment and its installed size in MiB, largest first.
_DISTRIBUTIONS = """
import importlib.metadata as metadata, json, os
rows = []
for dist in metadata.distributions():
    paths = [dist.locate_file(f) for f in dist.files or ()]
    size = sum(os.path.getsize(p) for p in paths if os.path.exists(p))
    rows.append({"name": dist.metadata["Name"], "version": dist.version, "mib": round(size / 2**20, 1)})
print(json.dumps(sorted(rows, key=lambda r: -r["mib"])))
"""


def _paper(mirror: Path) -> Path:
    folder = WORK / "paper"
    with tarfile.open(mirror / PAPER) as tar:
        tar.extractall(folder, filter="data")
    return folder


def _cold_checks(citeworth: Path, paper: Path, model: Path | None, runs: int) -> dict:
    """``citeworth check`` in a new process ``runs`` times: wall seconds and peak memory."""
    command = [str(citeworth), "check", MAIN_FILE, "--format", "jsonl", "--fail-on", "100000"]
    command += ["--model", str(model)] if model else []
    walls, peaks = [], []
    out, err = WORK / "check.out", WORK / "check.err"
    for _ in range(runs):
        # A small launcher runs it: a child of this process (torch models loaded) would inherit its
        # memory's high-water mark as its own.
        done = subprocess.run([sys.executable, "-I", "-c", _LAUNCHER, str(out), str(err), *command],
                              cwd=paper, env={**os.environ, "XDG_CACHE_HOME": str(WORK / "cache")},
                              capture_output=True, text=True, check=True)
        launched = json.loads(done.stdout)
        if launched["returncode"] != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {err.read_text()[-2000:]}")
        walls.append(launched["wall"])
        peaks.append(launched["peak_rss_kib"] / 1024)  # KiB on Linux
    return {"median": round(statistics.median(walls), 3), "runs": [round(w, 3) for w in walls],
            "sentences": len(out.read_text().splitlines()),
            "peak_rss_mib": round(statistics.median(peaks), 1)}


# Runs a command, its output to files: its wall seconds, exit status and peak memory, as JSON.
_LAUNCHER = """
import json, resource, subprocess, sys, time
out, err, *command = sys.argv[1:]
with open(out, "wb") as stdout, open(err, "wb") as stderr:
    start = time.perf_counter()
    code = subprocess.call(command, stdout=stdout, stderr=stderr)
    wall = time.perf_counter() - start
print(json.dumps({"wall": wall, "returncode": code,
                  "peak_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def _first_diagnostics(citeworth: Path, paper: Path, model: Path | None, runs: int) -> dict:
    """Seconds from ``initialize`` to the first diagnostics with a flag in them (``median``), to the
    first diagnostics of any file (a file scored without a flag is one too) and to the last file's."""
    timings = [asyncio.run(_lsp_once(citeworth, paper, model)) for _ in range(runs)]
    found = {key: [round(t[key], 3) for t in timings] for key in timings[0]}
    return {"median": statistics.median(found["first_flag"]),
            **{f"{key}_median": statistics.median(values) for key, values in found.items()},
            "runs": found["first_flag"], "files_of_the_paper": timings[0]["files"]}


async def _lsp_once(citeworth: Path, paper: Path, model: Path | None) -> dict:
    from lsprotocol import types
    from pytest_lsp import ClientServerConfig, client_capabilities

    env = {**os.environ, "XDG_CACHE_HOME": str(WORK / "cache")}
    client = await ClientServerConfig([str(citeworth), "lsp"], server_env=env).start()
    options = {"citeworth": {"model": str(model)} if model else {}}
    try:
        main = paper / MAIN_FILE
        start = time.perf_counter()
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("neovim"), root_uri=paper.as_uri(),
            initialization_options=options))
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(main.as_uri(), "latex", 1, main.read_text())))
        times: dict[str, float] = {}
        seen, changed = 0, 0.0
        while True:  # woken by each notification (no polling: the client shares the 2 cores)
            try:
                await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS),
                                       SETTLE if "first_flag" in times else 300)
            except TimeoutError:
                if "first_flag" in times:
                    break
                raise RuntimeError(f"{citeworth} lsp: no flag within 300 s") from None
            now = time.perf_counter() - start
            times.setdefault("first_diagnostics", now)
            if any(client.diagnostics.values()):
                times.setdefault("first_flag", now)
            if len(client.diagnostics) != seen:
                seen, changed = len(client.diagnostics), now
        return {**times, "every_file": changed, "files": seen}
    finally:
        await client.shutdown_session()
        await client.stop()


def _pair(author: dict, torch_path: dict) -> dict:
    return {"author": author, "torch": torch_path, "ratio": round(author["median"] / torch_path["median"], 3)}


def _met(results: dict) -> dict:
    best = results["agreement"][results["best_model"]][results["shipped_precision"]]
    return {"check_cold": results["check_cold_seconds"]["author"]["median"] <= TARGETS["check_cold_seconds"],
            "lsp_first_diagnostics": results["lsp_first_diagnostics_seconds"]["author"]["median"]
            <= TARGETS["lsp_first_diagnostics_seconds"],
            "install": results["install_mb"]["author"] <= TARGETS["install_mb"],
            "agreement": all(results["agreement"][name][p]["within_bounds"]
                             for name in results["agreement"] for p in ("fp32",))
            and best["within_bounds"]}


if __name__ == "__main__":
    sys.exit(main())
