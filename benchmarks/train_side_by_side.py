"""Training the Table 4 models side by side (``citeworth run train --workers N``, what ``make demo``
runs) vs one after another (the train@<model> cells of ``dvc repro``), in one run on one machine.

    dvc repro validate                              # once: the demo dataset the models train on
    python benchmarks/train_side_by_side.py         # crnn, transformer, tfidf_lr; 2 workers
    python benchmarks/train_side_by_side.py --models sentence solo --workers 2 --rounds 1

Both modes train the same models on the project's data/citeworth with params.yaml's train section
(one torch thread per process), into scratch folders (benchmarks/work/train_side_by_side/), so no
earlier result is reused:

- one after another: ``citeworth run train -S 'models=[NAME]'`` per model, each in a process of its
  own, the next when the last one ended (what ``dvc repro`` runs for the matrix cells);
- side by side: ``citeworth run train -S 'models=[A,B,...]' --workers N``: each model in a fresh
  process, N at a time.

Rounds alternate the order (one after another first, then side by side first, ...) so a change in
the machine's load hits both modes alike. Reported: wall seconds and CPU seconds (user + system of
every process a mode started) of each mode per round, the ratios side by side / one after another
of their sums (CPU time shows the work; other tenants hardly change it), the cores and the load
average before and after (other tenants of a shared machine slow both modes), and whether both
modes wrote the same files byte for byte (metrics compared without their wall-clock runtime keys,
the one declared exception) in every round. Writes benchmarks/results/train_side_by_side.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work" / "train_side_by_side"
RESULTS = ROOT / "benchmarks" / "results" / "train_side_by_side.json"
DEFAULT_MODELS = ("crnn", "transformer", "tfidf_lr")


def train(out: Path, models: list[str], workers: int | None) -> None:
    """``citeworth run train`` in ``out`` (its outputs there), on the project's dataset."""
    command = [sys.executable, "-m", "citeworth.cli", "run", "train", "--params", str(ROOT / "params.yaml"),
               "-S", f"data_dir={ROOT / 'data' / 'citeworth'}", "-S", f"models=[{', '.join(models)}]"]
    if workers:
        command += ["--workers", str(workers)]
    subprocess.run(command, cwd=out, check=True, stdout=subprocess.DEVNULL)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # ended children and their reaped children
    return usage.ru_utime + usage.ru_stime


def timed(name: str, models: list[str], workers: int) -> dict[str, float]:
    """Wall and CPU seconds (of every process it started) of training ``models`` one way."""
    out = WORK / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start, cpu = time.perf_counter(), children_cpu()
    if workers > 1:
        train(out, models, workers)
    else:
        for model in models:
            train(out, [model], None)
    seconds = {"wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(children_cpu() - cpu, 1)}
    print(f"{name}: {seconds}", flush=True)
    return seconds


def outputs(folder: Path) -> dict[str, object]:
    from citeworth.models.train import without_runtimes

    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "checkpoints" not in p.parts):
        relative = path.relative_to(folder).as_posix()
        files[relative] = (without_runtimes(json.loads(path.read_text())) if relative.startswith("metrics/")
                           else path.read_bytes())
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(DEFAULT_MODELS), help="train.catalog entries")
    parser.add_argument("--workers", type=int, default=2, help="models trained at once side by side")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each mode once a round")
    args = parser.parse_args()
    if not (ROOT / "data" / "citeworth" / "train.jsonl").is_file():
        sys.exit("no data/citeworth: run `dvc repro validate` first")
    load_before = [round(x, 2) for x in os.getloadavg()]
    modes = {"one_after_another": 1, "side_by_side": args.workers}
    rounds, identical = [], True
    for number in range(args.rounds):
        order = list(modes) if number % 2 == 0 else list(modes)[::-1]
        rounds.append({name: timed(name, args.models, modes[name]) for name in order})
        identical &= outputs(WORK / "one_after_another") == outputs(WORK / "side_by_side")
    sequential, side_by_side = ({key: round(sum(r[name][key] for r in rounds), 1)
                                 for key in ("wall_s", "cpu_s")} for name in modes)
    results = {
        "command": f"python benchmarks/train_side_by_side.py --models {' '.join(args.models)} "
                   f"--workers {args.workers} --rounds {args.rounds}",
        "models": args.models,
        "workers": args.workers,
        "cores": len(os.sched_getaffinity(0)),
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "rounds_s": rounds,
        "one_after_another": sequential,
        "side_by_side": side_by_side,
        "ratio_side_by_side_to_one_after_another": round(side_by_side["wall_s"] / sequential["wall_s"], 3),
        "cpu_ratio_side_by_side_to_one_after_another": round(side_by_side["cpu_s"] / sequential["cpu_s"], 3),
        "byte_identical": identical,
    }
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(json.dumps(results, indent=2, sort_keys=True))
    if not identical:
        sys.exit("side-by-side training wrote other files than one after another")


if __name__ == "__main__":
    main()
