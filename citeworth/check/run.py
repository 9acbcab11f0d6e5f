"""The work of ``citeworth check`` (``command.main`` parses the options into ``CheckOptions`` and
``ReportOptions``): read drafts, score their sentences, suggest citations, report, set the exit
code. ``citeworth lsp`` calls the same readers (``read_draft``), scoring (``check_drafts``) and
model lookup (``check_model``)."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

import numpy as np

from citeworth.check.baseline import BaselineError, apply_baseline, read_baseline, write_baseline
from citeworth.check.draft import decide, directive_warnings, sentences
from citeworth.check.formats import gnu_lines, jsonl_lines, sarif_log
from citeworth.check.latex import read_tex, read_tex_text
from citeworth.check.markdown import read_markdown
from citeworth.check.options import CheckOptions, ReportOptions
from citeworth.check.plain import UnreadableInput, decode_text, read_plain
from citeworth.core.io import atomic_write
from citeworth.drafts import BASELINED, CITED, FLAGGED, SUPPRESSED, Draft, Sentence
from citeworth.sources.base import RecordError

SUFFIXES = {".tex": "tex", ".ltx": "tex", ".latex": "tex", ".md": "md", ".markdown": "md", ".qmd": "md",
            ".rmd": "md"}
EXIT_OK, EXIT_FLAGS, EXIT_USAGE = 0, 1, 2


def check(files: Sequence[str], options: CheckOptions, report: ReportOptions, encoder=None) -> int:
    """``citeworth check FILES``; ``encoder``: the suggestions' (already loading)."""
    try:
        known = read_baseline(report.baseline) if report.baseline else Counter()
    except BaselineError as exc:
        return _fail(str(exc))
    drafts, problems = read_drafts(files, options.syntax)
    for problem in problems:
        print(f"citeworth check: error: {problem}", file=sys.stderr)
    warnings = [w for draft in drafts for w in draft.warnings + directive_warnings(draft)]
    for warning in warnings:
        print(f"citeworth check: warning: {warning}", file=sys.stderr)
    if not drafts:
        return EXIT_USAGE
    try:
        model_dir, model = check_model(options.model)
    except (FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    found = check_drafts(drafts, model, options.threshold, progress=True)
    apply_baseline(found, known)
    if report.write_baseline:
        write_baseline(report.write_baseline, found)
        apply_baseline(found, Counter(s.fingerprint for s in found if s.status == FLAGGED))
    if options.suggest:
        try:
            notes = _suggest(options, drafts, found, encoder)
        except UnusableIndex as exc:
            return _fail(str(exc))
        for note in notes:
            print(f"citeworth check: warning: {note}", file=sys.stderr)
        warnings += notes
    _write_report(report, found, problems + warnings, str(model_dir), options.threshold)
    print(summary(found, drafts, model_dir, options.threshold), file=sys.stderr)
    if problems:
        return EXIT_USAGE
    return EXIT_FLAGS if sum(s.status == FLAGGED for s in found) > report.fail_on else EXIT_OK


def read_drafts(paths: Sequence[str], syntax: str = "auto") -> tuple[list[Draft], list[str]]:
    """The drafts of ``paths`` and a message for each that cannot be read. A file given twice, or
    that another draft includes (a chapter given beside its main file), is checked once."""
    drafts, problems = [], []
    for path in dict.fromkeys(os.path.normpath(p) for p in paths):
        try:
            drafts.append(read_draft(path, syntax))
        except READ_ERRORS as exc:
            problems.append(read_problem(path, exc))
    included = {os.path.normpath(f): d for d in drafts for f in d.files[1:]}
    return [d for d in drafts if included.get(os.path.normpath(d.name), d) is d], problems


READ_ERRORS = (OSError, RecordError, UnreadableInput)


def read_problem(path: str, error: Exception) -> str:
    """The message for a draft ``read_draft`` could not read (one of ``READ_ERRORS``)."""
    if isinstance(error, OSError):
        return f"{path}: cannot read: {error.strerror or error}"
    if isinstance(error, RecordError):
        return f"{path}: cannot parse LaTeX ({error.reason}): {error.detail}"
    return str(error)


def syntax_of(path: str, syntax: str = "auto") -> str:
    """How ``path`` is read: ``syntax`` unless auto, else by suffix (stdin: txt)."""
    if syntax != "auto":
        return syntax
    return "txt" if path == "-" else SUFFIXES.get(Path(path).suffix.lower(), "txt")


def read_draft(path: str, syntax: str = "auto", sources: Mapping[str, bytes] | None = None) -> Draft:
    """The draft of ``path`` (``-``: stdin); ``sources``: its files by path relative to its folder
    (a LaTeX project's, or the one file), as an editor holds them; default: read from disk."""
    stdin = path == "-"
    kind = syntax_of(path, syntax)
    if kind == "tex":
        return read_tex_text(sys.stdin.buffer.read()) if stdin else read_tex(Path(path), sources)
    if sources is not None:
        data = sources[Path(path).name]
    else:
        data = sys.stdin.buffer.read() if stdin else Path(path).read_bytes()
    text = decode_text(data, path)
    return read_markdown(text, path) if kind == "md" else read_plain(text, path)


def check_drafts(drafts: Sequence[Draft], model, threshold: float, progress: bool = False,
                 splitter=None, known: dict[tuple[str, ...], np.ndarray] | None = None,
                 on_file: Callable[[str, list[Sentence]], None] | None = None,
                 first: Collection[str] = ()) -> list[Sentence]:
    """Every sentence of ``drafts``, scored by ``model`` (``predict_proba`` on dataset-shaped
    records, one per paragraph) and given its status; ``progress``: a bar, if stderr is a terminal.
    A language server checking the same drafts after each edit passes its ``splitter`` (a
    ``SentenceSplitter``, default a new one) and ``known``: the scores of the paragraphs scored
    before, by their sentences' texts. Only the other paragraphs are scored (the context model
    reads a paragraph whole, so a paragraph's scores depend on its sentences alone), and ``known``
    is left holding exactly the scores of these drafts' paragraphs. With ``on_file``, paragraphs are
    scored file by file (the files of ``first`` first, then in reading order) and ``on_file(file,
    its sentences)`` is told of each as soon as they are scored: an editor shows them at once."""
    from tqdm.auto import tqdm

    from citeworth.models.scoring import score_paragraphs
    from citeworth.text.sentences import SentenceSplitter

    paragraphs = [p for p in sentences(drafts, splitter or SentenceSplitter()) if p]
    keys = [tuple(s.text for s in paragraph) for paragraph in paragraphs]
    scores = {} if known is None else known
    groups: dict[str | None, list[int]] = {}  # scored together: one file's paragraphs, the open files' first
    def not_open(index: int) -> bool:
        return {s.file for s in paragraphs[index]}.isdisjoint(first)

    for index in sorted(range(len(paragraphs)), key=not_open):
        groups.setdefault(paragraphs[index][0].file if on_file else None, []).append(index)
    waiting: dict[str, set[int]] = {}  # file -> its paragraphs (one can span an \input), until told
    for index, paragraph in enumerate(paragraphs if on_file else ()):
        for sentence in paragraph:
            waiting.setdefault(sentence.file, set()).add(index)
    scored: set[int] = set()
    with tqdm(total=sum(len(key) for key in keys if key not in scores), unit="sentence", desc="check",
              leave=False, disable=not (progress and sys.stderr.isatty())) as bar:
        for group in groups.values():
            todo = [keys[i] for i in group if keys[i] not in scores]
            records = [{"samples": [{"text": text} for text in key]} for key in todo]
            for key, (_, found) in zip(todo, score_paragraphs(model, records, progress=bar.update),
                                       strict=True):
                scores[key] = found
            for index in group:
                _decided(paragraphs[index], scores[keys[index]], threshold)
            scored.update(group)
            for file in [file for file, indices in waiting.items() if indices <= scored]:
                on_file(file, [s for i in sorted(waiting.pop(file)) for s in paragraphs[i] if s.file == file])
    for stale in scores.keys() - set(keys):
        del scores[stale]
    return [s for paragraph in paragraphs for s in paragraph]


def _decided(paragraph: list[Sentence], scores: np.ndarray, threshold: float) -> list[Sentence]:
    for sentence, score in zip(paragraph, scores, strict=True):
        sentence.score = float(score)
        sentence.status = decide(sentence, threshold)
    return paragraph


def summary(found: Sequence[Sentence], drafts: Sequence[Draft], model_dir: Path, threshold: float) -> str:
    counts = Counter(s.status for s in found)
    silenced = ", ".join(f"{counts[k]} {k}" for k in (SUPPRESSED, BASELINED) if counts[k])
    return (f"citeworth check: {counts[FLAGGED]} flagged, {counts[CITED]} cited of {len(found)} sentences in "
            f"{sum(len(d.files) for d in drafts)} file(s)" + (f" ({silenced})" if silenced else "")
            + f"; model {model_dir}, threshold {threshold:g}")


class UnusableIndex(ValueError):
    """A paper index (--corpus) or a cited-works index (--works) that cannot be used; says why."""


def _suggest(options: CheckOptions, drafts: Sequence[Draft], found: list[Sentence], encoder) -> list[str]:
    # Imported here, as --suggest asks for them: BM25 and the indexes are not a plain check's cost.
    from citeworth.suggest.corpus import CorpusError, corpus_candidates
    from citeworth.suggest.draft import suggest
    from citeworth.suggest.works import WorksIndexError

    try:
        corpus = corpus_candidates(options.corpus) if options.corpus else []
        works = works_ranker(options.works, encoder) if options.works else None
        return suggest([(d, syntax_of(d.name, options.syntax)) for d in drafts], found, options.top_k,
                       corpus, encoder, options.bibs, works)
    except (CorpusError, WorksIndexError) as exc:
        raise UnusableIndex(str(exc)) from exc


def works_ranker(folder: Path, encoder):
    """The ranker of the cited-works index at ``folder`` (a WorksIndexError saying why it cannot be
    used); ``encoder`` embeds the sentences when the index has vectors."""
    from citeworth.suggest.works import WorksIndex, WorksRanker

    return WorksRanker(WorksIndex(folder), encoder)


def check_model(name: Path | None, root: Path = Path(".")):
    """The folder and the loaded model ``name`` stands for (a folder, a model name, a profile's build:
    ``models.scoring.model_folder``), else the best model by dev F1 of the project at ``root``
    (NoModel, a FileNotFoundError, saying how to train one)."""
    from citeworth.models.scoring import load_model, model_folder

    directory = model_folder(name, root)
    return directory, load_model(directory)


def _write_report(report: ReportOptions, found: list[Sentence], notes: list[str], model: str,
                  threshold: float) -> None:
    if report.format == "sarif":
        lines = [json.dumps(sarif_log(found, notes, threshold, model), indent=2, sort_keys=True,
                            ensure_ascii=False)]
    else:
        lines = gnu_lines(found) if report.format == "gnu" else jsonl_lines(found)
    if report.output:
        with atomic_write(report.output) as handle:
            handle.writelines(line + "\n" for line in lines)
    else:
        sys.stdout.writelines(line + "\n" for line in lines)


def _fail(message: str) -> int:
    print(f"citeworth check: error: {message}", file=sys.stderr)
    return EXIT_USAGE
