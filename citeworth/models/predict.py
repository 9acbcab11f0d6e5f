"""``citeworth predict``: which sentences of a text need a citation?

Input: ``--text``, text files (paragraphs separated by blank lines; ``-`` reads stdin) or JSONL
(dataset records with ``samples``, or objects with a ``text`` paragraph). Text is split into
sentences with the curation's splitter (scispacy tokenizer + pysbd), so sentences are cut exactly
as in the dataset. Output: one JSON line per sentence with its P(cite-worthy).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from tqdm.auto import tqdm

from citeworth.core.io import JsonInputError, atomic_write, dumps, parse_json
from citeworth.core.schema import THRESHOLD
from citeworth.models.scoring import load_model, model_folder, score_paragraphs
from citeworth.text.sentences import MAX_PARAGRAPH_CHARS, SentenceSplitter

log = logging.getLogger(__name__)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citeworth predict",
        description="Score every sentence for cite-worthiness (does it need a citation?) with a model\n"
        "trained by `citeworth run train` or installed as a model package; a context model reads\n"
        "each paragraph whole.\n"
        "Text is split into sentences as the dataset's curation splits them (scispacy + pysbd).\n\n"
        "Output: one JSON line per sentence with paragraph, sentence (indices), text,\n"
        "score = P(cite-worthy), cite_worthy = score >= threshold, and label when the input had one.",
        epilog="examples:  citeworth predict --text 'Deep nets excel at vision. We use one here.'\n"
        "           citeworth predict draft.txt --out scores.jsonl\n"
        "           citeworth predict data/citeworth/test.jsonl --model models/sentence",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("inputs", nargs="*", type=Path, metavar="FILE",
                        help="text files (blank lines separate paragraphs), JSONL files (*.jsonl), "
                        "or - for stdin")
    parser.add_argument("--text", action="append", default=[], help="a paragraph to score (repeatable)")
    parser.add_argument("--model", type=Path,
                        help="a model folder (exported, or written by the train stage), a model name "
                        "(context: models/context), a profile's build (study, study/context) or an installed "
                        "model package's name (default: as citeworth check: this folder's best model by dev "
                        "F1, else the newest installed model package)")
    parser.add_argument("--out", type=Path, help="write JSONL here (atomically) instead of stdout")
    parser.add_argument("--batch-size", type=int, help="inputs per forward pass (default: the model's)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help="score at or above which a sentence is cite-worthy (default: %(default)s)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if not args.inputs and not args.text:
        _parser().error("give --text or at least one FILE (- for stdin)")
    try:
        model = load_model(model_folder(args.model), args.batch_size)
        paragraphs = iter_paragraphs(args.text, args.inputs)
        if args.out:
            with atomic_write(args.out) as handle:
                count = write_scores(model, paragraphs, handle, args.threshold)
        else:
            count = write_scores(model, paragraphs, sys.stdout, args.threshold)
    except (FileNotFoundError, ValueError) as exc:
        print(f"citeworth predict: {exc}", file=sys.stderr)
        return 1
    log.info("scored %d sentences with %s", count, args.model or "the default model")
    return 0


def iter_paragraphs(texts: list[str], paths: list[Path]) -> Iterator[dict]:
    """Records of the dataset shape (``samples`` of ``text``) from every input, in order.

    Input the curation would quarantine is an error naming its file (and line or paragraph):
    text that is not UTF-8, a JSONL line that is not a JSON object (malformed, nested too deeply,
    a lone surrogate), and a paragraph longer than the curation's ``max_paragraph_chars``.
    """
    yield from _split("--text", [(f"--text {n}", text) for n, text in enumerate(texts, 1)])
    for path in paths:
        if path.suffix == ".jsonl":
            yield from _from_jsonl(path)
        else:
            content = _read_text(path)
            paragraphs = [p for p in re.split(r"\n\s*\n", content) if p.strip()]
            yield from _split(str(path), [(f"{path}: paragraph {n}", p) for n, p in enumerate(paragraphs, 1)])


def _read_text(path: Path) -> str:
    """The file's text, or standard input's for ``-``."""
    data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _from_jsonl(path: Path) -> Iterator[dict]:
    raw: list[tuple[str, str]] = []
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = parse_json(line)
            except JsonInputError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from None
            if _is_dataset_record(record):
                yield record
            elif isinstance(record, dict) and isinstance(record.get("text"), str):
                raw.append((f"{path}:{number}", record["text"]))
            else:
                raise ValueError(f"{path}:{number}: a record needs 'samples' (a list of objects with a "
                                 "'text' string: the dataset shape) or a 'text' string")
    yield from _split(str(path), raw)


def _is_dataset_record(record) -> bool:
    samples = record.get("samples") if isinstance(record, dict) else None
    return isinstance(samples, list) and all(isinstance(s, dict) and isinstance(s.get("text"), str)
                                             for s in samples)


def _split(source: str, located: list[tuple[str, str]]) -> Iterator[dict]:
    """``located``: (where, paragraph) pairs, ``where`` naming the paragraph in errors."""
    if not located:
        return
    limit = MAX_PARAGRAPH_CHARS
    for where, text in located:
        if len(text) > limit:
            raise ValueError(f"{where} has {len(text):,} characters, over the {limit:,} the curation "
                             "splits (max_paragraph_chars): split it into paragraphs")
    paragraphs = [text for _, text in located]
    splitter = SentenceSplitter()
    for text, bounds in zip(paragraphs, splitter.split(paragraphs), strict=True):
        samples = [{"text": text[a:b]} for a, b in bounds]
        if samples:
            yield {"source": source, "original_text": text, "samples": samples}


def write_scores(model, paragraphs: Iterable[dict], handle, threshold: float) -> int:
    """Score paragraphs in chunks and write one JSON line per sentence; returns the sentence count."""
    count = 0
    with tqdm(unit="paragraph", desc="predict") as bar:
        for index, (record, scores) in enumerate(score_paragraphs(model, paragraphs)):
            for j, (sample, score) in enumerate(zip(record["samples"], scores, strict=True)):
                line = {"paragraph": index, "sentence": j, "text": sample["text"],
                        "score": round(float(score), 6), "cite_worthy": bool(score >= threshold)}
                if "label" in sample:  # dataset records: keep the gold label beside the prediction
                    line["label"] = sample["label"]
                handle.write(dumps(line) + "\n")
            count += len(scores)
            bar.update(1)
    return count
