"""``citeworth check DRAFT...``: the options, then ``run.check``. Imports are light here, so that
``--help`` is quick and ``--suggest``'s encoder starts loading before spaCy and the model do."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from citeworth.check import RULE_ID
from citeworth.check.options import SYNTAXES, TOP_K, CheckOptions, ReportOptions
from citeworth.core.schema import THRESHOLD

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

Model: --model DIR, a model name (--model context: models/context) or a profile's build (--model
study: the best model by dev F1 of `make study`, trained on ~4,300 real papers; --model
study/context: that build's context model), else the best model by dev F1 in metrics/models.json
(written by `citeworth run report`) among those under models/, relative to the current folder.

Suggestions (--suggest): for every flag, the top --top-k entries of the draft's own bibliography
(LaTeX: the .bib files the main file names, every entry, else its .bbl or thebibliography), ranked
offline by BM25 and the embedded MiniLM over title, abstract, keywords and authors, the sentences
of the draft that already cite an entry, and author surnames written in the sentence ("Smith et
al."), fused by reciprocal rank. For a cited sentence, the rank of each key it cites (reported, not
judged: on the benchmark no rank separated right citations from wrong ones). --corpus INDEX adds
the papers of a paper index (their titles, abstracts and the sentences in which other corpus papers
cite them). --works DIR then adds, after the draft's own entries, the top --top-k works of a
cited-works index (`citeworth run works`: every work the corpus' papers cite) that its
bibliography does not have, each with its identifier, title, year, how many corpus papers cite it
and the BibTeX entry that adds it (JSONL: bibtex, bib). Markdown: the .bib files its YAML front
matter names ("bibliography: refs.bib" or a
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
  citeworth check paper/main.tex --suggest --works data/works --format jsonl
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
                        help="a model folder written by the train stage, a model name (context: "
                        "models/context) or a profile's build (study: the best of `make study`; "
                        "study/context: its context model) (default: the best by dev F1)")
    parser.add_argument("--threshold", type=float, default=THRESHOLD,
                        help="score at or above which an uncited sentence is flagged (default: %(default)s)")
    parser.add_argument("--fail-on", type=int, default=0, metavar="N",
                        help="exit 1 when there are more than N flags (default: %(default)s)")
    parser.add_argument("--baseline", type=Path, metavar="FILE",
                        help="do not report flags this baseline holds")
    parser.add_argument("--write-baseline", type=Path, metavar="FILE",
                        help="save every current flag as the baseline (they are then not reported)")
    parser.add_argument("--syntax", choices=SYNTAXES, default="auto",
                        help="how to read the inputs (default: by suffix; stdin: txt)")
    parser.add_argument("--suggest", action="store_true",
                        help="rank the draft's own bibliography for every flag (and cited sentence)")
    parser.add_argument("--top-k", type=int, default=TOP_K, metavar="K",
                        help="suggestions per flag (default: %(default)s)")
    parser.add_argument("--bib", type=Path, action="append", default=[], metavar="FILE",
                        help="with --suggest: the .bib of drafts that name none (Markdown without a "
                        "front-matter bibliography, plain text, stdin); repeatable")
    parser.add_argument("--corpus", type=Path, metavar="INDEX",
                        help="with --suggest: also suggest the papers of this paper index "
                        "(written by `citeworth suggest-index`)")
    parser.add_argument("--works", type=Path, metavar="DIR",
                        help="with --suggest: after the draft's own entries, the works of this cited-works "
                        "index (written by `citeworth run works`) it does not cite yet, each with the "
                        "BibTeX entry that adds it")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    options = CheckOptions(args.model, args.threshold, args.syntax, args.suggest, args.top_k, tuple(args.bib),
                           args.corpus, args.works)
    for field, problem in options.problems().items():
        parser.error(f"--{field.replace('_', '-')} {problem}")
    if args.fail_on < 0:
        parser.error(f"--fail-on must be 0 or more (got {args.fail_on})")
    if args.corpus and not args.suggest:
        parser.error("--corpus needs --suggest")
    if args.works and not args.suggest:
        parser.error("--works needs --suggest")
    if args.bib and not args.suggest:
        parser.error("--bib needs --suggest")
    if args.files.count("-") > 1:
        parser.error("stdin (-) can be read once")
    report = ReportOptions(args.format, args.output, args.fail_on, args.baseline, args.write_baseline)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # weights loading: ours is the one bar
    encoder = _encoder_loading() if args.suggest else None  # loads while the drafts are read and scored
    try:
        from citeworth.core import collector

        with collector.streaming():  # one check, then the process ends: no collection walks what it built
            from citeworth.check import run  # the readers, the model: the encoder loads meanwhile

            return run.check(args.files, options, report, encoder)
    finally:
        if encoder is not None:  # every way out, an early error too
            encoder.close()


def _encoder_loading():
    from citeworth.core.io import user_cache_dir
    from citeworth.suggest import WITHOUT_ENCODER, encoder_available

    if not encoder_available():
        print(f"citeworth check: note: {WITHOUT_ENCODER}", file=sys.stderr)
        return None
    from citeworth.suggest.dense import Encoder

    encoder = Encoder(cache_dir=user_cache_dir())
    encoder.load_in_background()
    return encoder
