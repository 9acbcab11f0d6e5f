"""``citeworth check DRAFT...``: read drafts, score their sentences, report the flags, set the exit code."""

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
from citeworth.check.formats import RULE_ID, gnu_lines, jsonl_lines, sarif_log
from citeworth.check.latex import read_tex, read_tex_text
from citeworth.check.markdown import read_markdown
from citeworth.check.plain import UnreadableInput, decode_text, read_plain
from citeworth.core.io import atomic_write
from citeworth.models.evaluation import THRESHOLD
from citeworth.sources.base import RecordError
from citeworth.suggest.corpus import CorpusError

SUFFIXES = {".tex": "tex", ".ltx": "tex", ".latex": "tex", ".md": "md", ".markdown": "md", ".qmd": "md",
            ".rmd": "md"}
EXIT_OK, EXIT_FLAGS, EXIT_USAGE = 0, 1, 2

DESCRIPTION = f"""\
Flag the sentences of a draft that may need a citation and have none.

Every sentence of running text is scored by a trained cite-worthiness model (the CiteWorth task);
a sentence without a citation scoring at or above --threshold is a flag. Sentences are cut with the
curation's splitter and read without their citations, as the dataset has them; the context model
reads each paragraph whole.

  LaTeX (.tex)   the main file and what it \\input/\\include's; positions map back to each file.
                 Skipped: preamble, maths, floats, captions, footnotes, comments, verbatim,
                 bibliography. A sentence with a \\cite... (any natbib/biblatex command or a macro
                 that wraps one) is 'cited', never flagged. A chapter without \\begin{{document}}
                 is read whole.
  Markdown (.md) CommonMark; code, maths, front matter, tables, HTML and footnotes skipped;
                 citations: pandoc [@key], @key, and numeric [12].
  Text (other)   paragraphs at blank lines; the curation's citation patterns ([12],
                 (Smith et al., 2010), et al.) mark cited sentences.
  -              stdin (plain text unless --syntax says otherwise).

Suppressions: '% citeworth: ignore' (the next sentence) and '% citeworth: off' ... '% citeworth: on'
in LaTeX; '<!-- citeworth: ignore -->' (and off / on) in Markdown. --baseline FILE reports only flags
not in a baseline written by --write-baseline (a flag is known by its sentence text, so moved lines
keep their identity).

Model: --model DIR, else the best model by dev F1 in metrics/models.json (written by
`citeworth run report`) among those under models/, relative to the current folder.

Suggestions (--suggest): for every flag, the top --top-k entries of the draft's own bibliography
(LaTeX: the .bib files the main file names, every entry, else its .bbl or thebibliography), ranked
offline by BM25 and the embedded MiniLM over title, abstract, keywords and authors, the sentences
of the draft that already cite an entry, and author surnames written in the sentence ("Smith et
al."), fused by reciprocal rank. For a cited sentence, the rank of each key it cites (reported, not
judged: on the benchmark no rank separated right citations from wrong ones). --corpus INDEX adds
the papers of a paper index (their titles, abstracts and the sentences in which other corpus papers
cite them). Markdown: the .bib files its YAML front matter names ("bibliography: refs.bib" or a
list); --bib FILE for a draft that names none (Markdown, text, stdin). Pandoc citations ([@key],
@key) are the keys a sentence cites. A missing or broken .bib is a warning; the check still runs.
MiniLM vectors are kept in $XDG_CACHE_HOME/citeworth (else ~/.cache/citeworth; 40,000 at most, the
least recently used dropped), so a re-check embeds only the sentences and entries that changed.

Output (stdout, or --output FILE):
  gnu    file:line:col: warning: sentence may need a citation (score 0.87) [{RULE_ID}]
         (--suggest: ... suggest: \\cite{{key1}}, \\cite{{key2}})
  jsonl  one object per sentence: file, line, column, end {{line, column}}, text, score,
         status (cited / flagged / ok; suppressed / baselined: flags not reported), fingerprint;
         --suggest: suggestions [{{key, title, score, source}}], cited_ranks [{{key, rank, of}}]
  sarif  SARIF 2.1.0 for code scanning (e.g. GitHub's upload-sarif action); --suggest: a fix per
         suggestion inserting ~\\cite{{key}} (Markdown: [@key]) before the sentence's final stop
A one-line summary goes to stderr; a progress bar too, on a terminal.

Exit status: 0 when there are at most --fail-on flags, 1 when there are more, 2 on a usage error,
an unreadable or unparsable input, a bad baseline or no trained model."""

EPILOG = """\
examples:
  citeworth check paper/main.tex
  citeworth check notes.md --threshold 0.7 --format jsonl
  citeworth check paper/main.tex --format sarif --output citeworth.sarif --fail-on 1000000
  citeworth check paper/main.tex --suggest --top-k 5 --format jsonl
  citeworth check notes.md --suggest --bib refs.bib
  citeworth check paper/main.tex --write-baseline .citeworth-baseline.json   # accept today's flags
  citeworth check paper/main.tex --baseline .citeworth-baseline.json         # report only new ones
  pandoc -t plain draft.docx | citeworth check - --model models/sentence"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citeworth check", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="drafts: .tex, .md, any text file, - (stdin)")
    parser.add_argument("--format", choices=("gnu", "jsonl", "sarif"), default="gnu",
                        help="report format (default: %(default)s)")
    parser.add_argument("-o", "--output", type=Path,
                        help="write the report here (atomically) instead of stdout")
    parser.add_argument("--model", type=Path,
                        help="a model folder written by the train stage (default: the best by dev F1)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help="score at or above which an uncited sentence is flagged (default: %(default)s)")
    parser.add_argument("--fail-on", type=int, default=0, metavar="N",
                        help="exit 1 when there are more than N flags (default: %(default)s)")
    parser.add_argument("--baseline", type=Path, metavar="FILE",
                        help="do not report flags this baseline holds")
    parser.add_argument("--write-baseline", type=Path, metavar="FILE",
                        help="save every current flag as the baseline (they are then not reported)")
    parser.add_argument("--syntax", choices=("auto", "tex", "md", "txt"), default="auto",
                        help="how to read the inputs (default: by suffix; stdin: txt)")
    parser.add_argument("--suggest", action="store_true",
                        help="rank the draft's own bibliography for every flag (and cited sentence)")
    parser.add_argument("--top-k", type=int, default=3, metavar="K",
                        help="suggestions per flag (default: %(default)s)")
    parser.add_argument("--bib", type=Path, action="append", default=[], metavar="FILE",
                        help="with --suggest: the .bib of drafts that name none (Markdown without a "
                        "front-matter bibliography, plain text, stdin); repeatable")
    parser.add_argument("--corpus", type=Path, metavar="INDEX",
                        help="with --suggest: also suggest the papers of this paper index "
                        "(written by `citeworth suggest-index`)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0.0 <= args.threshold <= 1.0:
        parser.error(f"--threshold must be between 0 and 1 (got {args.threshold})")
    if args.fail_on < 0:
        parser.error(f"--fail-on must be 0 or more (got {args.fail_on})")
    if args.top_k < 1:
        parser.error(f"--top-k must be 1 or more (got {args.top_k})")
    if args.corpus and not args.suggest:
        parser.error("--corpus needs --suggest")
    if args.bib and not args.suggest:
        parser.error("--bib needs --suggest")
    if args.files.count("-") > 1:
        parser.error("stdin (-) can be read once")
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
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # weights loading: ours is the one bar
    try:
        model_dir, model = _model(args.model)
    except (FileNotFoundError, ValueError) as exc:
        return _fail(str(exc))
    encoder = _encoder_loading() if args.suggest else None  # loads while the draft is scored
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


def _encoder_loading():
    from citeworth.suggest.dense import Encoder
    from citeworth.suggest.vector_cache import user_cache_dir

    encoder = Encoder(cache_dir=user_cache_dir())
    encoder.load_in_background()
    return encoder


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
