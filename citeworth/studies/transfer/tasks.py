"""Downstream scientific NLP tasks (the SciBERT benchmark of Table 6): which tasks, and their readers.

The benchmark files keep the layout of ``allenai/scibert``'s ``data/`` folder (downloaded to
``raw/<source>/<release>/github/allenai/scibert/data`` or read from a mirror):

- ``text_classification/<task>/{train,dev,test}.txt``: JSON lines ``{"text", "label", "metadata"}``
  (SciCite, ACL-ARC citation intent, and the relation tasks ChemProt / SciERC, whose entity pair is
  marked inline with ``<< >>`` and ``[[ ]]``);
- ``ner/<task>/{train,dev,test}.txt``: CoNLL-style, one token per line with the tag in the last
  column, blank lines between sentences, ``-DOCSTART-`` lines between documents. Tags are IOB1 in
  BC5CDR and SciERC (``I-`` opens a span) and IOB2 in NCBI-disease; seqeval's default (conlleval)
  chunking reads both.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from pydantic.dataclasses import dataclass as pydantic_dataclass

from citeworth.core.params import PARAMS_CONFIG
from citeworth.core.schema import SPLITS

CLASSIFICATION, NER = "classification", "ner"
METRICS = ("macro_f1", "micro_f1", "span_f1")


@pydantic_dataclass(frozen=True, config=PARAMS_CONFIG)
class TaskSpec:
    """One downstream task; ``kind``, ``path``, ``metric`` and ``display`` default from KNOWN_TASKS."""

    name: str
    """A task of KNOWN_TASKS (sci-cite, citation_intent, chemprot, ...), or a task of your own."""
    kind: str | None = None
    """classification | ner (null: the known task's)."""
    path: str | None = None
    """The folder under the benchmark data root holding train/dev/test.txt (null: the known task's)."""
    metric: str | None = None
    """macro_f1 | micro_f1 | span_f1 (null: the known task's)."""
    display: str | None = None
    """The row name in Table 6 (null: the known task's, else the name)."""
    max_train: int | None = None
    """Demo subset: at most this many training examples, drawn with a fixed seed (null: all)."""
    max_dev: int | None = None
    """Demo subset: at most this many dev examples (null: all)."""
    max_test: int | None = None
    """Demo subset: at most this many test examples (null: all)."""


KNOWN_TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("sci-cite", CLASSIFICATION, "text_classification/sci-cite", "macro_f1", "SciCite (CLS)"),
        TaskSpec("citation_intent", CLASSIFICATION, "text_classification/citation_intent", "macro_f1",
                 "ACL-ARC (CLS)"),
        TaskSpec("chemprot", CLASSIFICATION, "text_classification/chemprot", "micro_f1", "ChemProt (REL)"),
        TaskSpec("sciie-relation-extraction", CLASSIFICATION, "text_classification/sciie-relation-extraction",
                 "macro_f1", "SciERC (REL)"),
        TaskSpec("bc5cdr", NER, "ner/bc5cdr", "span_f1", "BC5CDR (NER)"),
        TaskSpec("NCBI-disease", NER, "ner/NCBI-disease", "span_f1", "NCBI-Disease (NER)"),
        TaskSpec("sciie", NER, "ner/sciie", "span_f1", "SciERC (NER)"),
    )
}


def resolve_task(spec: TaskSpec) -> TaskSpec:
    """Fill the unset fields of ``spec`` from the known task of the same name; check the result."""
    known = KNOWN_TASKS.get(spec.name)
    if known is not None:
        spec = replace(spec, **{k: getattr(known, k) for k in ("kind", "path", "metric", "display")
                                if getattr(spec, k) is None})
    missing = [k for k in ("kind", "path", "metric") if getattr(spec, k) is None]
    if missing:
        raise ValueError(f"task {spec.name!r} is not a known task ({', '.join(KNOWN_TASKS)}); "
                         f"give its {', '.join(missing)}")
    if spec.kind not in (CLASSIFICATION, NER):
        raise ValueError(f"task {spec.name!r}: kind must be {CLASSIFICATION!r} or {NER!r}, got {spec.kind!r}")
    if spec.metric not in METRICS:
        raise ValueError(f"task {spec.name!r}: metric must be one of {METRICS}, got {spec.metric!r}")
    return replace(spec, display=spec.display or spec.name)


# ---------------------------------------------------------------------------------------------
# Readers


class LabelledText(NamedTuple):
    text: str
    label: str


class TaggedSentence(NamedTuple):
    tokens: tuple[str, ...]
    tags: tuple[str, ...]


def read_labelled_text(path: Path) -> Iterator[LabelledText]:
    """The JSON lines of a SciBERT text-classification file."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                yield LabelledText(str(record["text"]), str(record["label"]))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a {{text, label}} JSON line ({exc})") from exc


def read_conll(path: Path) -> Iterator[TaggedSentence]:
    """Sentences of a CoNLL-style NER file: token first, tag last, blank line between sentences."""
    tokens: list[str] = []
    tags: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            columns = line.split()
            if columns and columns[0] == "-DOCSTART-":
                continue
            if not columns:
                if tokens:
                    yield TaggedSentence(tuple(tokens), tuple(tags))
                    tokens, tags = [], []
                continue
            if len(columns) < 2:
                raise ValueError(f"{path}:{number}: expected 'token ... tag', got {line.rstrip()!r}")
            tokens.append(columns[0])
            tags.append(columns[-1])
    if tokens:
        yield TaggedSentence(tuple(tokens), tuple(tags))


@dataclass
class TaskData:
    spec: TaskSpec
    splits: dict[str, list]  # split -> LabelledText or TaggedSentence examples
    labels: list[str]  # class labels (classification) or tags (NER), sorted


def load_task(data_root: Path, spec: TaskSpec) -> TaskData:
    """Read a task's standard train/dev/test files, subsetting each split as the spec says."""
    spec = resolve_task(spec)
    folder = Path(data_root) / spec.path
    reader = read_labelled_text if spec.kind == CLASSIFICATION else read_conll
    limits = {"train": spec.max_train, "dev": spec.max_dev, "test": spec.max_test}
    splits = {}
    for split in SPLITS:
        path = folder / f"{split}.txt"
        if not path.exists():
            raise FileNotFoundError(f"task {spec.name}: {path} is missing (run the download stage, or set "
                                    "transfer.downstream.data_root to the benchmark's data folder)")
        examples = list(reader(path))
        if not examples:
            raise ValueError(f"task {spec.name}: {path} holds no examples")
        splits[split] = subsample(examples, limits[split], f"{spec.name}:{split}")
    # Labels of every split, so gold labels never seen in training still count in the scores.
    if spec.kind == CLASSIFICATION:
        labels = {ex.label for examples in splits.values() for ex in examples}
    else:
        labels = {tag for examples in splits.values() for ex in examples for tag in ex.tags}
    return TaskData(spec, splits, sorted(labels))


def subsample(examples: list, limit: int | None, key: str) -> list:
    """At most ``limit`` examples drawn with a fixed seed, kept in file order."""
    if limit is None or len(examples) <= limit:
        return examples
    keep = sorted(random.Random(key).sample(range(len(examples)), limit))
    return [examples[i] for i in keep]


def task_files(data_root: Path, task: TaskSpec) -> list[Path]:
    return [Path(data_root) / task.path / f"{split}.txt" for split in SPLITS]
