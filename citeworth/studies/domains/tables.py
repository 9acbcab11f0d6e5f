"""Table 5: the train field × test field F1 matrix with σ and ρ, as Markdown."""

from __future__ import annotations

# Table 5's abbreviations of the paper's fields (and a few more); others are written out.
ABBREVIATIONS = {"Chemistry": "Ch", "Engineering": "E", "Computer Science": "CS", "Psychology": "P",
                 "Biology": "B", "Medicine": "M", "Physics": "Ph", "Mathematics": "Ma",
                 "Materials Science": "MS", "Economics": "Ec"}


def abbreviation(name: str) -> str:
    return ABBREVIATIONS.get(name, name)


def table5(metrics: dict) -> str:
    fields = metrics["fields"]
    abbr = [abbreviation(f) for f in fields]
    seeds = metrics["seeds"]
    lines = [
        "# Table 5: cite-worthiness F1 across fields",
        "",
        "Rows: train field; columns: test field. F1 ×100 of the cite-worthy class"
        + (f", mean over seeds {seeds}" if len(seeds) > 1 else f" (seed {seeds[0]})")
        + ". In-domain cells test on the field's own test papers (80/10/10 by paper); out-of-domain "
        "cells test on all of the target field. σ: standard deviation over train fields; ρ: Pearson "
        "correlation of F1 with the Euclidean distance between the train and test field clusters.",
        "",
        "| Train \\ Test | " + " | ".join(abbr) + " |",
        "|---|" + "---:|" * len(fields),
    ]
    for a, short in zip(fields, abbr, strict=True):
        row = [f"{100 * metrics['matrix'][a][b]['f1']:.2f}" for b in fields]
        lines.append(f"| {short} | " + " | ".join(row) + " |")
    lines.append("| σ | " + " | ".join(f"{100 * metrics['sigma'][b]:.2f}" for b in fields) + " |")
    lines.append("| ρ | " + " | ".join("n/a" if metrics["rho"][b] is None else f"{metrics['rho'][b]:.2f}"
                                       for b in fields) + " |")
    clusters = metrics["clusters"]
    lines += [
        "",
        f"Fields: {', '.join(f'{abbreviation(f)} = {f}' for f in fields)}.",
        f"σ of the in-domain (diagonal) F1: {100 * metrics['sigma_in_domain']:.2f}.",
        f"Embedding clusters ({clusters['encoder']}, {sum(clusters['sentences'].values())} sentences, "
        f"Gaussian mixture in {clusters['cluster_dims']} PCA dimensions): purity "
        f"{100 * clusters['purity']:.2f}.",
        "",
    ]
    return "\n".join(lines)
