"""The work of ``citeworth check`` (``command.main`` parses the options): read drafts, score their
sentences, suggest citations, report, set the exit code."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from citeworth.check.baseline import BaselineError, apply_baseline, read_baseline, write_baseline
from citeworth.check.draft import (
    BASELINED,
    CITED,
    FLAGGED,
    SUPPRESSED,
    Draft,
    Sentence,
    decide,
    directive_warnings,
    sentences,
)
from citeworth.check.formats import gnu_lines, jsonl_lines, sarif_log
from citeworth.check.latex import read_tex, read_tex_text
from citeworth.check.markdown import read_markdown
from citeworth.check.plain import UnreadableInput, decode_text, read_plain
from citeworth.core.io import atomic_write
from citeworth.sources.base import RecordError
from citeworth.suggest.corpus import CorpusError

SUFFIXES = {".tex": "tex", ".ltx": "tex", ".latex": "tex", ".md": "md", ".markdown": "md", ".qmd": "md",
            ".rmd": "md"}
EXIT_OK, EXIT_FLAGS, EXIT_USAGE = 0, 1, 2


def check(args: argparse.Namespace, encoder=None) -> int:
    """``citeworth check`` on parsed ``args``; ``encoder``: the suggestions' (already loading)."""
    try:
        known = read_baseline(args.baseline) if args.baseline else Counter()
    except BaselineError as exc:
        return _fail(str(exc))
    drafts, problems = read_drafts(args.files, args.syntax)
    for problem in problems:
        print(f"citeworth check: error: {problem}", file=sys.stderr)
    warnings = [w for draft in drafts for w in draft.warnings + directive_warnings(draft)]
    for warning in warnings:
        print(f"citeworth check: warning: {warning}", file=sys.stderr)
    if not drafts:
        return EXIT_USAGE
    try:
        model_dir, model = _model(args.model)
    except (FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    found = check_drafts(drafts, model, args.threshold, progress=True)
    apply_baseline(found, known)
    if args.write_baseline:
        write_baseline(args.write_baseline, found)
        apply_baseline(found, Counter(s.fingerprint for s in found if s.status == FLAGGED))
    if args.suggest:
        try:
            notes = _suggest(args, drafts, found, encoder)
        except CorpusError as exc:
            return _fail(str(exc))
        for note in notes:
            print(f"citeworth check: warning: {note}", file=sys.stderr)
        warnings += notes
    _write_report(args, found, problems + warnings, str(model_dir))
    print(summary(found, drafts, model_dir, args.threshold), file=sys.stderr)
    if problems:
        return EXIT_USAGE
    return EXIT_FLAGS if sum(s.status == FLAGGED for s in found) > args.fail_on else EXIT_OK


def read_drafts(paths: Sequence[str], syntax: str = "auto") -> tuple[list[Draft], list[str]]:
    """The drafts of ``paths`` and a message for each that cannot be read. A file given twice, or
    that another draft includes (a chapter given beside its main file), is checked once."""
    drafts, problems = [], []
    for path in dict.fromkeys(os.path.normpath(p) for p in paths):
        try:
            drafts.append(read_draft(path, syntax))
        except OSError as exc:
            problems.append(f"{path}: cannot read: {exc.strerror or exc}")
        except RecordError as exc:
            problems.append(f"{path}: cannot parse LaTeX ({exc.reason}): {exc.detail}")
        except UnreadableInput as exc:
            problems.append(str(exc))
    included = {os.path.normpath(f): d for d in drafts for f in d.files[1:]}
    return [d for d in drafts if included.get(os.path.normpath(d.name), d) is d], problems


def syntax_of(path: str, syntax: str = "auto") -> str:
    """How ``path`` is read: ``syntax`` unless auto, else by suffix (stdin: txt)."""
    if syntax != "auto":
        return syntax
    return "txt" if path == "-" else SUFFIXES.get(Path(path).suffix.lower(), "txt")


def read_draft(path: str, syntax: str = "auto") -> Draft:
    stdin = path == "-"
    kind = syntax_of(path, syntax)
    if kind == "tex":
        return read_tex_text(sys.stdin.buffer.read()) if stdin else read_tex(Path(path))
    data = sys.stdin.buffer.read() if stdin else Path(path).read_bytes()
    text = decode_text(data, path)
    return read_markdown(text, path) if kind == "md" else read_plain(text, path)


def check_drafts(drafts: Sequence[Draft], model, threshold: float, progress: bool = False) -> list[Sentence]:
    """Every sentence of ``drafts``, scored by ``model`` (``predict_proba`` on dataset-shaped
    records, one per paragraph) and given its status; ``progress``: a bar, if stderr is a terminal."""
    from tqdm.auto import tqdm

    from citeworth.models.scoring import score_paragraphs
    from citeworth.text.sentences import SentenceSplitter

    paragraphs = [p for p in sentences(drafts, SentenceSplitter()) if p]
    records = [{"samples": [{"text": s.text} for s in paragraph]} for paragraph in paragraphs]
    with tqdm(total=sum(map(len, paragraphs)), unit="sentence", desc="check", leave=False,
              disable=not (progress and sys.stderr.isatty())) as bar:
        scored = score_paragraphs(model, records, progress=bar.update)
        for paragraph, (_, scores) in zip(paragraphs, scored, strict=True):
            for sentence, score in zip(paragraph, scores, strict=True):
                sentence.score = float(score)
                sentence.status = decide(sentence, threshold)
    return [s for paragraph in paragraphs for s in paragraph]


def summary(found: Sequence[Sentence], drafts: Sequence[Draft], model_dir: Path, threshold: float) -> str:
    counts = Counter(s.status for s in found)
    silenced = ", ".join(f"{counts[k]} {k}" for k in (SUPPRESSED, BASELINED) if counts[k])
    return (f"citeworth check: {counts[FLAGGED]} flagged, {counts[CITED]} cited of {len(found)} sentences in "
            f"{sum(len(d.files) for d in drafts)} file(s)" + (f" ({silenced})" if silenced else "")
            + f"; model {model_dir}, threshold {threshold:g}")


def _suggest(args, drafts: Sequence[Draft], found: list[Sentence], encoder) -> list[str]:
    from citeworth.suggest.corpus import corpus_candidates
    from citeworth.suggest.draft import suggest

    corpus = corpus_candidates(args.corpus) if args.corpus else []
    return suggest([(d, syntax_of(d.name, args.syntax)) for d in drafts], found, args.top_k, corpus, encoder,
                   args.bib)


def _model(directory: Path | None):
    from citeworth.models.scoring import best_model, load_model

    directory = directory or best_model()
    return directory, load_model(directory)


def _write_report(args, found: list[Sentence], notes: list[str], model: str) -> None:
    if args.format == "sarif":
        lines = [json.dumps(sarif_log(found, notes, args.threshold, model), indent=2, sort_keys=True,
                            ensure_ascii=False)]
    else:
        lines = gnu_lines(found) if args.format == "gnu" else jsonl_lines(found)
    if args.output:
        with atomic_write(args.output) as handle:
            handle.writelines(line + "\n" for line in lines)
    else:
        sys.stdout.writelines(line + "\n" for line in lines)


def _fail(message: str) -> int:
    print(f"citeworth check: error: {message}", file=sys.stderr)
    return EXIT_USAGE
