"""Training and inference speed of the sentence and context models: our loop vs a bare torch loop.

    python benchmarks/training.py                  # demo settings from params.yaml, demo dataset
    python benchmarks/training.py --rounds 3 --max-steps 40
    python benchmarks/training.py --device cuda    # on a GPU: writes benchmarks/results/training_cuda.json

Both loops train the same module (same initial weights), on the same tokenized items in the same
batches, with the same optimizer (fused AdamW); ours adds what the train stage does per step
(class-weighted loss, gradient clipping, warmup schedule, accumulation bookkeeping, progress bar).
Inference: ``loop.predict_proba`` vs a bare ``inference_mode`` forward over the same batches.
Rounds alternate ours / bare so machine load hits both alike. Examples/s are wall-clock, best
round; the ours-vs-bare ratio (target <= 1.1) compares median CPU time, which other tenants of a
shared machine disturb far less than the wall clock. Each model runs in its own process, so its
peak RSS is its own. Writes benchmarks/results/training.json.

``--device cuda`` measures the training loop on a GPU instead: sentence classifiers from a config
(random init: the embedded MiniLM's shape and a BERT-base-size one, the shape of SciBERT), batch
256 of demo sentences at 128 tokens, ours (``loop.fit``: bf16 autocast where supported, prefetched
pinned batches) against a bare loop with bf16 autocast on the same batches; a warm-up round first,
then the best of ``--rounds`` on the wall clock (synchronised), target ours/bare <= 1.1. It also
projects the time of the paper's training run (945k sentences x 3 epochs) at ours' rate. Writes
benchmarks/results/training_cuda.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "training.json"
CUDA_RESULTS = ROOT / "benchmarks" / "results" / "training_cuda.json"
MODELS = ("sentence", "context")
# --device cuda: encoder shapes (None: the embedded encoder's config; else BertConfig overrides)
CUDA_SIZES = {"embedded": None, "bert-base": {"hidden_size": 768, "num_hidden_layers": 12,
                                              "num_attention_heads": 12, "intermediate_size": 3072}}
CUDA_BATCH, CUDA_LENGTH = 256, 128
PAPER_TRAIN_SENTENCES, PAPER_EPOCHS = 945_000, 3  # the paper's train split; SciBERT's epochs


def peak_rss_mb() -> float:
    scale = 1 / 1024 if platform.system() == "Linux" else 1 / 1024**2
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale, 1)


def setup(name: str, max_steps: int):
    """The demo spec of ``name``, its module and adapter, and the demo train split as items."""
    from citeworth.models import context, data, sentence
    from citeworth.models.data import load_splits
    from citeworth.models.fitting import model_spec
    from citeworth.stages import stage_params

    params = stage_params("train", path=ROOT / "params.yaml")
    spec = model_spec(name, params.catalog[name])
    spec.optim = spec.optim.model_copy(update={"device": "cpu", "epochs": 1, "max_steps": max_steps})
    train = load_splits(ROOT / params.data_dir)["train"]
    if spec.kind == "context":
        from citeworth.models import encoders

        module, adapter = context._assemble(spec, *encoders.load_encoder_and_tokenizer(spec.encoder))
    else:
        module, tokenizer = sentence.build(spec, train)
        adapter = sentence.SentenceAdapter(tokenizer, spec.max_length)
    items = adapter.items(train)
    return spec, module, adapter, items, data.balanced_class_weights(data.labels(train))


def batches_of(items, spec, max_steps):
    import numpy as np

    from citeworth.models import loop

    order = loop.length_batches(items, spec.optim.batch_size, np.random.default_rng([1, 0]))
    return order[:max_steps]


def ours_train(module, adapter, items, spec, weights, order) -> None:
    from citeworth.models import loop

    subset = [items[i] for batch in order for i in batch]  # exactly the bare loop's examples
    loop.fit(module, adapter, subset, None, spec.optim, seed=1, class_weights=weights, desc="ours")


def bare_train(module, adapter, items, spec, weights, order) -> None:
    import torch
    from torch.nn import functional as F

    optimizer = torch.optim.AdamW(module.parameters(), lr=spec.optim.lr, fused=True)
    module.train()
    for idx in order:
        batch = adapter.collate([items[i] for i in idx])
        output = module(**batch.inputs)
        logits = output.logits if hasattr(output, "logits") else output
        if batch.select is not None:
            logits = logits[batch.select]
        F.cross_entropy(logits, batch.labels).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def ours_predict(module, adapter, items, spec) -> None:
    import torch

    from citeworth.models import loop

    rows = sum(len(item.index) for item in items)
    loop.predict_proba(module, adapter, items, rows, spec.optim.eval_batch_size, torch.device("cpu"))


def bare_predict(module, adapter, items, spec) -> None:
    import torch

    from citeworth.models import loop

    module.eval()
    with torch.inference_mode():
        for idx in loop.length_batches(items, spec.optim.eval_batch_size, None):
            batch = adapter.collate([items[i] for i in idx])
            output = module(**batch.inputs)
            logits = output.logits if hasattr(output, "logits") else output
            torch.softmax(logits if batch.select is None else logits[batch.select], dim=-1)


def timed(fn, *args) -> dict:
    """Wall-clock and CPU seconds of ``fn(*args)`` (CPU time: this process's own work, which other
    tenants of a shared machine disturb far less than the wall clock)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}


def measure(name: str, rounds: int, max_steps: int) -> dict:
    """One model, in this process: alternate ours / bare for training and inference."""
    import torch

    spec, module, adapter, items, weights = setup(name, max_steps)
    initial = {k: v.clone() for k, v in module.state_dict().items()}
    order = batches_of(items, spec, max_steps)
    runs = {k: [] for k in ("ours_train", "bare_train", "ours_predict", "bare_predict")}
    for _ in range(rounds):
        for who, train_fn in (("ours", ours_train), ("bare", bare_train)):
            module.load_state_dict(initial)
            runs[f"{who}_train"].append(timed(train_fn, module, adapter, items, spec, weights, order))
        for who, predict_fn in (("ours", ours_predict), ("bare", bare_predict)):
            runs[f"{who}_predict"].append(timed(predict_fn, module, adapter, items, spec))
    trained_examples = sum(len(items[i].index) for batch in order for i in batch)
    sentences = sum(len(item.index) for item in items)
    return {
        "encoder": spec.encoder, "batch_size": spec.optim.batch_size,
        "eval_batch_size": spec.optim.eval_batch_size, "threads": torch.get_num_threads(),
        "train_steps": len(order), "train_examples": trained_examples, "inference_examples": sentences,
        "inputs": "sentences" if spec.kind == "sentence" else "paragraph windows ([SEP] per sentence)",
        "train": _compare(trained_examples, runs["ours_train"], runs["bare_train"]),
        "inference": _compare(sentences, runs["ours_predict"], runs["bare_predict"]),
        "rounds": {k: [{c: round(t, 3) for c, t in r.items()} for r in v] for k, v in runs.items()},
        "peak_rss_mb": peak_rss_mb(),
    }


def _compare(examples: int, ours: list[dict], bare: list[dict]) -> dict:
    """Examples/s on the wall clock (best round) and ours/bare by median CPU time (the 1.1x target)."""
    ratio = statistics.median(r["cpu"] for r in ours) / statistics.median(r["cpu"] for r in bare)
    return {"ours_examples_per_s": round(examples / min(r["wall"] for r in ours), 2),
            "bare_examples_per_s": round(examples / min(r["wall"] for r in bare), 2),
            "ours_over_bare_cpu_time": round(ratio, 3), "within_1_1x": ratio <= 1.1}


def cuda_setup(size: str, steps: int, device: str):
    """A random-init sentence classifier of ``size``, demo sentences tokenized at CUDA_LENGTH and
    repeated to fill ``steps`` batches of CUDA_BATCH, and the optimizer settings of the demo."""
    from transformers import BertConfig, BertForSequenceClassification

    from citeworth.models import data, encoders, sentence
    from citeworth.models.data import load_splits
    from citeworth.models.fitting import model_spec
    from citeworth.stages import stage_params

    params = stage_params("train", path=ROOT / "params.yaml")
    spec = model_spec("sentence", params.catalog["sentence"])
    spec.optim = spec.optim.model_copy(update={"device": device, "epochs": 1, "max_steps": steps,
                                               "batch_size": CUDA_BATCH, "warmup_steps": 0})
    config = encoders.load_config(encoders.EMBEDDED).to_dict()
    config.update(CUDA_SIZES[size] or {})
    module = BertForSequenceClassification(BertConfig(**{**config, "num_labels": 2}))
    adapter = sentence.SentenceAdapter(encoders.load_tokenizer(encoders.EMBEDDED), CUDA_LENGTH)
    train = load_splits(ROOT / params.data_dir)["train"]
    items = adapter.items(train)
    items = (items * (steps * CUDA_BATCH // len(items) + 1))[: steps * CUDA_BATCH]
    return spec, module, adapter, items, data.balanced_class_weights(data.labels(train))


def bare_bf16_train(module, adapter, items, spec, order, device) -> None:
    """The floor: collate, copy, bf16 autocast forward, loss, backward, fused AdamW -- nothing else."""
    import torch
    from torch.nn import functional as F

    optimizer = torch.optim.AdamW(module.parameters(), lr=spec.optim.lr, fused=True)
    module.train()
    for idx in order:
        batch = adapter.collate([items[i] for i in idx]).to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            logits = module(**batch.inputs).logits
        F.cross_entropy(logits.float(), batch.labels).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def cuda_measure(size: str, rounds: int, steps: int, device_name: str = "cuda") -> dict:
    """One encoder size on ``device_name``: a warm-up, then alternating ours / bare rounds."""
    import numpy as np
    import torch

    from citeworth.models import loop

    device = torch.device(device_name)
    spec, module, adapter, items, weights = cuda_setup(size, steps, device_name)
    module.to(device)
    initial = {k: v.clone() for k, v in module.state_dict().items()}
    order = loop.length_batches(items, CUDA_BATCH, np.random.default_rng([1, 0]))

    def synced(fn, *args) -> float:
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn(*args)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start

    def ours() -> None:
        loop.fit(module, adapter, items, None, spec.optim, seed=1, class_weights=weights, desc="ours")

    runs: dict[str, list[float]] = {"ours": [], "bare_bf16": []}
    for round_ in range(rounds + 1):  # round 0 warms up kernels and the allocator
        for who, fn in (("ours", ours), ("bare_bf16", lambda: bare_bf16_train(module, adapter, items, spec,
                                                                               order, device))):
            module.load_state_dict(initial)
            seconds = synced(fn)
            if round_:
                runs[who].append(round(seconds, 3))
    rates = {who: len(items) / min(times) for who, times in runs.items()}
    ratio = rates["bare_bf16"] / rates["ours"]  # = ours' time over the bare loop's
    paper_hours = PAPER_TRAIN_SENTENCES * PAPER_EPOCHS / rates["ours"] / 3600
    precision = loop.precision_for(device, spec.optim.precision)
    return {
        "parameters": sum(p.numel() for p in module.parameters()), "batch_size": CUDA_BATCH,
        "sequence_length": CUDA_LENGTH, "steps": len(order), "examples": len(items),
        "precision": str(precision.dtype or "fp32"), "rounds_seconds": runs,
        "ours_examples_per_s": round(rates["ours"], 1),
        "bare_bf16_examples_per_s": round(rates["bare_bf16"], 1),
        "ours_over_bare_time": round(ratio, 3), "within_1_1x": ratio <= 1.1,
        "paper_training_hours_projected": round(paper_hours, 2),
    }


def cuda_main(args) -> int:
    import torch

    if args.cuda_worker:
        print(json.dumps(cuda_measure(args.cuda_worker, args.rounds, args.max_steps, args.device)))
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no CUDA device here", file=sys.stderr)
        return 1
    results = {"command": " ".join(["python benchmarks/training.py", *sys.argv[1:]]),
               "device": torch.cuda.get_device_name() if args.device == "cuda" else args.device,
               "torch": torch.__version__, "sizes": {}}
    for size in CUDA_SIZES:
        cmd = [sys.executable, __file__, "--device", args.device, "--cuda-worker", size,
               "--rounds", str(args.rounds), "--max-steps", str(args.max_steps)]
        done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
        results["sizes"][size] = json.loads(done.stdout.strip().splitlines()[-1])
        print(size, json.dumps(results["sizes"][size]), file=sys.stderr)
    CUDA_RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


def _params_threads() -> int | None:
    from citeworth.stages import stage_params

    return stage_params("train", path=ROOT / "params.yaml").threads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="alternating ours/bare rounds")
    parser.add_argument("--max-steps", type=int, default=10, help="training steps per measurement")
    parser.add_argument("--threads", type=int, help="torch threads (default: train.threads in params.yaml)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: the GPU benchmark (random-init encoders, batch 256, vs a bare bf16 loop)")
    parser.add_argument("--worker", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--cuda-worker", choices=list(CUDA_SIZES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.device == "cuda" or args.cuda_worker:
        return cuda_main(args)
    threads = args.threads or _params_threads()
    if threads:
        import torch

        torch.set_num_threads(threads)
    if args.worker:  # one model, printed as JSON for the parent
        print(json.dumps(measure(args.worker, args.rounds, args.max_steps)))
        return 0
    results = {"command": " ".join(["python benchmarks/training.py", *(argv or sys.argv[1:])]),
               "cores": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
               "models": {}}
    for name in MODELS:
        cmd = [sys.executable, __file__, "--worker", name, "--rounds", str(args.rounds),
               "--max-steps", str(args.max_steps)]
        cmd += ["--threads", str(args.threads)] if args.threads else []
        done = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
        results["models"][name] = json.loads(done.stdout.strip().splitlines()[-1])
        summary = {part: results["models"][name][part] for part in ("train", "inference")}
        print(name, json.dumps(summary), file=sys.stderr)
    results["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
