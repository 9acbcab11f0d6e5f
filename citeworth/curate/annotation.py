"""Table 3 tooling: a blind annotation sheet of ours vs the spans-only baseline, and its scorer.

``citeworth table3 export`` samples N cite-worthy + N non-cite-worthy sentences from each method,
shuffles them together into a sheet that does not say which method made a sentence (nor its label),
and writes the key separately. An annotator fills two columns per row; ``citeworth table3 score``
joins the filled sheet with the key and prints "extracted correct" and "markers removed" per method.
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

from citeworth.core.io import atomic_write, read_jsonl
from citeworth.core.schema import CITE_WORTHY, SPLITS

JUDGEMENTS = ("extracted_correct", "markers_removed")
_YES = {"1", "y", "yes", "true"}
_NO = {"0", "n", "no", "false"}


def sentences(data_dir: Path) -> list[tuple[str, str]]:
    """(text, label) of every sentence in the dataset's splits, in file order."""
    return [(s["text"], s["label"]) for split in SPLITS
            for r in read_jsonl(Path(data_dir) / f"{split}.jsonl") for s in r["samples"]]


def draw(pool: list[tuple[str, str]], n: int, rng: random.Random) -> list[tuple[str, str]]:
    """n cite-worthy and n non-cite-worthy sentences (all of a class when it has fewer)."""
    drawn = []
    for cite_worthy in (True, False):
        group = [s for s in pool if (s[1] == CITE_WORTHY) == cite_worthy]
        drawn += rng.sample(group, min(n, len(group)))
    return drawn


def export(methods: dict[str, Path], n: int, seed: int, sheet: Path, key: Path) -> int:
    rng = random.Random(seed)
    rows = [(method, text, label) for method, path in sorted(methods.items())
            for text, label in draw(sentences(path), n, rng)]
    rng.shuffle(rows)
    with atomic_write(sheet) as s_out, atomic_write(key) as k_out:
        s_writer, k_writer = csv.writer(s_out), csv.writer(k_out)
        s_writer.writerow(["id", "sentence", *JUDGEMENTS])
        k_writer.writerow(["id", "method", "label"])
        for i, (method, text, label) in enumerate(rows, start=1):
            s_writer.writerow([i, text, "", ""])
            k_writer.writerow([i, method, label])
    return len(rows)


def score(sheet: Path, key: Path) -> dict[str, dict[str, float]]:
    """Per method, the percentage of sentences judged correct on each judgement."""
    with open(key, newline="", encoding="utf-8") as handle:
        method_of = {row["id"]: row["method"] for row in csv.DictReader(handle)}
    totals: dict[str, dict[str, int]] = {}
    problems = []
    with open(sheet, newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            if row["id"] not in method_of:
                problems.append(f"line {line}: id {row['id']!r} is not in the key")
                continue
            counts = totals.setdefault(method_of[row["id"]], {"n": 0, **dict.fromkeys(JUDGEMENTS, 0)})
            counts["n"] += 1
            for column in JUDGEMENTS:
                value = (row.get(column) or "").strip().lower()
                if value not in _YES | _NO:
                    problems.append(f"line {line}: {column} is {value!r}; fill 1/0 (or yes/no)")
                counts[column] += value in _YES
    if problems:
        raise ValueError("the sheet is not completely filled:\n" + "\n".join(problems[:20]))
    return {m: {c: round(100 * t[c] / t["n"], 2) for c in JUDGEMENTS} | {"n": t["n"]}
            for m, t in sorted(totals.items())}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="citeworth table3", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write the blind annotation sheet and its key")
    ex.add_argument("--ours", type=Path, default=Path("data/citeworth"), help="curated dataset folder")
    ex.add_argument("--baseline", type=Path, default=Path("data/baseline"), help="spans-only dataset folder")
    ex.add_argument("-n", type=int, default=500, help="sentences per class and method (default: 500)")
    ex.add_argument("--seed", type=int, default=1)
    ex.add_argument("--sheet", type=Path, default=Path("reports/table3/sheet.csv"))
    ex.add_argument("--key", type=Path, default=Path("reports/table3/key.csv"))
    sc = sub.add_parser("score", help="score a filled sheet against its key")
    sc.add_argument("--sheet", type=Path, default=Path("reports/table3/sheet.csv"))
    sc.add_argument("--key", type=Path, default=Path("reports/table3/key.csv"))
    args = parser.parse_args(argv)
    if args.command == "export":
        rows = export({"ours": args.ours, "baseline": args.baseline}, args.n, args.seed, args.sheet, args.key)
        print(f"{rows} sentences -> {args.sheet} (give this to the annotator); key -> {args.key}")
        return 0
    try:
        result = score(args.sheet, args.key)
    except ValueError as exc:
        print(f"citeworth table3: {exc}")
        return 2
    print(f"{'Method':<10} {'Extracted Correct':>18} {'Markers Removed':>16} {'n':>6}")
    for method, figures in result.items():
        print(f"{method:<10} {figures['extracted_correct']:>18.2f} {figures['markers_removed']:>16.2f} "
              f"{figures['n']:>6}")
    return 0
