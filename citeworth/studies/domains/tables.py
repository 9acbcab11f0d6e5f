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
    unit = metrics.get("group_by", "field")
    abbr = [abbreviation(f) for f in fields]
    seeds = metrics["seeds"]
    target = ("all of the target " + unit if metrics.get("out_of_domain_test", "all") == "all"
              else f"the target {unit}'s test papers, as its in-domain cell")
    lines = [
        f"# Table 5: cite-worthiness F1 across {unit}s",
        "",
        f"Rows: train {unit}; columns: test {unit}. F1 ×100 of the cite-worthy class"
        + (f", mean over seeds {seeds}" if len(seeds) > 1 else f" (seed {seeds[0]})")
        + f". In-domain cells test on the {unit}'s own test papers (80/10/10 by paper); out-of-domain "
        f"cells test on {target}. σ: standard deviation over train {unit}s; ρ: Pearson "
        f"correlation of F1 with the Euclidean distance between the train and test {unit} clusters.",
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
        f"{unit.capitalize()}s: {', '.join(f'{abbreviation(f)} = {f}' for f in fields)}.",
        f"σ of the in-domain (diagonal) F1: {100 * metrics['sigma_in_domain']:.2f}.",
        f"Embedding clusters ({clusters['encoder']}, {sum(clusters['sentences'].values())} sentences, "
        f"Gaussian mixture in {clusters['cluster_dims']} PCA dimensions): purity "
        f"{100 * clusters['purity']:.2f}.",
        "",
    ]
    return "\n".join(lines)
