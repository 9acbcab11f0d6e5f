"""Benchmark: the LaTeX reader (``arxiv_latex``) on the mirrored LaTeX papers and malformed snippets.

    .venv/bin/python benchmarks/latex.py              # the mirror: $CITEWORTH_MIRROR, else ../shared/data
    .venv/bin/python benchmarks/latex.py --repeats 5

For each paper (SciPy 1.0, SymPy, minimap2 folders; arXiv e-print 2004.14974; and the test fixtures
written for LaTeX 2.09, ``tests/fixtures/latex209/acmconf.tex`` and ``runaway.tex``, the second with
unclosed braces in a user macro's argument) it reports, in one run:

- citation commands the reader finds (all, in running text, through user aliases) against two
  independent counts: a regular expression over the flattened source (comments and ``\\iffalse``
  blocks removed; it knows the standard command names only, not user aliases) and pandoc's
  ``Cite`` elements (``pandoc -f latex -t json`` from the main file's folder; skipped when pandoc is
  not installed -- it is not a project dependency);
- keys of in-text citations resolved to a bibliography entry (target >= 98%);
- sentences (the curation's splitter, placeholders removed) that keep a ``\\``, ``{`` or ``}`` (target 0);
- seconds per paper (median of ``--repeats``; target: median over the mirrored papers <= 0.5 s), and
  as a ratio to the floor measured in the same run: pylatexenc alone parsing the same flattened
  source; the slowest paper (max and p99 over all papers: the tail the median hides);
- papers read as one paragraph or fewer per section of their source (a construct that swallows the
  rest of the paper; target 0), over these papers and the check command's fixture draft;
- byte-identical reruns: two reads give equal Papers and two unarXive exports equal bytes.

Malformed snippets (unbalanced braces, unknown macros, broken arguments...) written here count the
citations recovered. Results: benchmarks/results/latex.json (with the machine's load average).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pylatexenc
from pylatexenc import latexwalker

from citeworth.core.io import write_json
from citeworth.corpora.export.stage import ExportParams, export
from citeworth.sources import InputSpec, discover_shards
from citeworth.sources.latex import TexDocument, parse_tex_file, parse_tex_files
from citeworth.sources.latex.files import iter_sources
from citeworth.sources.latex.project import find_main, flatten, strip_comments, tex_texts
from citeworth.sources.latex.reader import read, read_paper
from citeworth.sources.latex.vocabulary import CITE_COMMANDS, MULTI_CITES
from citeworth.sources.unarxive import PLACEHOLDER
from citeworth.text.sentences import SentenceSplitter

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "latex.json"
PAPERS = {
    "2004.14974": "github/allenai/s2orc-doc2json/tests/latex/2004.14974.gz",
    "scipy-1.0": "github/scipy/scipy-articles/scipy-1.0",
    "sympy-paper": "github/scolobb/sympy-paper",
    "minimap2": "github/lh3/minimap2/tex",
}
FIXTURES = ROOT / "tests" / "fixtures"
FIXTURE_PAPERS = {
    "acmconf (LaTeX 2.09)": FIXTURES / "latex209" / "acmconf.tex",
    "runaway (LaTeX 2.09)": FIXTURES / "latex209" / "runaway.tex",
}
CHECK_DRAFT = FIXTURES / "check" / "paper" / "main.tex"  # no bibliography: parsed, not read as a Paper
_SECTION = re.compile(r"\\section\*?\s*[\[{]")
TARGET_SECONDS = 0.5
TARGET_RESOLVED = 0.98
PANDOC_TIMEOUT = 120
_REGEX_CITE = re.compile(
    r"\\("
    + "|".join(sorted((c for c in CITE_COMMANDS if c not in MULTI_CITES), key=len, reverse=True))
    + r")\*?\s*(?:\[[^\]]*\]\s*){0,2}\{([^{}]*)\}"
)
_LEFTOVER = re.compile(r"[\\{}]")
# Malformed snippets: (LaTeX, the keys a reader should recover).
SNIPPETS = [
    (r"Unbalanced { brace before \cite{a1}.", ["a1"]),
    (r"Unbalanced } brace before \cite{a2}.", ["a2"]),
    (r"\unknownmacro{x} then \citep{a3} and \alsounknown.", ["a3"]),
    (r"\textbf{bold \cite{a4}} inside an argument.", ["a4"]),
    (r"\textcolor{red}{see \citet[p.~4]{a5,a6}}", ["a5", "a6"]),
    (r"Optional args \citep[see][chap.~2]{a7}.", ["a7"]),
    (r"Starred \citet*{a8} and \citeauthor{a9}.", ["a8", "a9"]),
    (r"A cite with spaces \cite{ a10 , a11 }.", ["a10", "a11"]),
    (r"Math with a brace $x^{2$ then \cite{a12}.", ["a12"]),
    (r"\begin{itemize}\item one \cite{a13}\item two", ["a13"]),
    (r"\newcommand{\mc}[1]{\citep{#1}} aliased \mc{a14}.", ["a14"]),
    (r"\def\dc#1{\cite{#1}} defined \dc{a15}.", ["a15"]),
    (r"Biblatex \parencite[12]{a16} and \textcite{a17}.", ["a16", "a17"]),
    (r"Multi \cites{a18}{a19} keys.", ["a18", "a19"]),
    (r"Trailing backslash \cite{a20} \\", ["a20"]),
    (r"Missing close of argument \cite{a21", ["a21"]),
    (r"\footnote{A note citing \cite{a22}} and text.", ["a22"]),
    (r"\begin{unknownenv}[opt]{arg} inside \cite{a23} \end{unknownenv}", ["a23"]),
    (r"Comment % \cite{not-this}" + "\n" + r"next line \cite{a24}.", ["a24"]),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed reads per paper (median; default 3)")
    args = parser.parse_args(argv)
    mirror = Path(os.environ.get("CITEWORTH_MIRROR") or ROOT.parent / "shared" / "data")
    if not mirror.is_dir():
        sys.exit(f"no data mirror at {mirror}: set CITEWORTH_MIRROR")
    splitter = SentenceSplitter()
    pandoc = shutil.which("pandoc")
    papers = [
        measure(paper_id, mirror / path, args.repeats, splitter, pandoc) for paper_id, path in PAPERS.items()
    ]
    fixtures = [
        measure(paper_id, path, args.repeats, splitter, pandoc) for paper_id, path in FIXTURE_PAPERS.items()
    ]
    check_draft = parse_tex_file(CHECK_DRAFT)
    thin = [p["paper"] for p in papers + fixtures if p["thin"]]
    thin += [CHECK_DRAFT.name] * is_thin(check_draft)
    seconds = statistics.median(p["seconds"] for p in papers)
    every = sorted(papers + fixtures, key=lambda p: p["seconds"])
    keys = sum(p["in_text_keys"] for p in papers)
    resolved = sum(p["in_text_keys_resolved"] for p in papers)
    leftovers = sum(p["sentences_with_latex"] for p in papers)
    snippets = snippet_recovery()
    identical = reruns_identical(mirror)
    results = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "pylatexenc": pylatexenc.__version__,
            "pandoc": _pandoc_version(pandoc),
            "load_average_1m": round(os.getloadavg()[0], 2),
        },
        "papers": papers,
        "summary": {
            "median_seconds_per_paper": round(seconds, 3),
            "max_seconds_per_paper": every[-1]["seconds"],
            "p99_seconds_per_paper": round(
                statistics.quantiles([p["seconds"] for p in every], n=100, method="inclusive")[98], 3
            ),
            "slowest_paper": every[-1]["paper"],
            "papers_read_as_one_paragraph_or_fewer_per_section": f"{len(thin)}/{len(every) + 1}",
            "median_ratio_to_pylatexenc_parse": round(
                statistics.median(p["ratio_to_parse_floor"] for p in papers), 2
            ),
            "keys_resolved_share": round(resolved / keys, 4) if keys else None,
            "sentences_with_latex": leftovers,
            "snippet_citations_recovered": f"{snippets['recovered']}/{snippets['expected']}",
            "snippet_crashes": snippets["crashes"],
            "reruns_byte_identical": identical,
            "within_targets": {
                "seconds": seconds <= TARGET_SECONDS,
                "resolved": keys == 0 or resolved / keys >= TARGET_RESOLVED,
                "leftover_latex": leftovers == 0,
                "byte_identical": identical,
                "no_paper_read_as_one_paragraph_per_section": not thin,
            },
        },
        "fixture_papers": fixtures,
        "snippets": snippets["cases"],
    }
    write_json(RESULTS, results)
    print(json.dumps(results["summary"], indent=2))
    return 0


def measure(paper_id: str, path: Path, repeats: int, splitter: SentenceSplitter, pandoc: str | None) -> dict:
    [shard] = discover_shards("arxiv_latex", str(path))
    [source] = iter_sources(shard.paths)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        paper = read_paper(source, shard, None)
        times.append(time.perf_counter() - start)
    texts = tex_texts(source.files)
    flat = flatten(texts, find_main(source.files, texts))
    floor = []
    for _ in range(repeats):
        start = time.perf_counter()
        latexwalker.LatexWalker(flat.parse_text, tolerant_parsing=True).get_latex_nodes()
        floor.append(time.perf_counter() - start)
    doc = parse_tex_files(source.files)
    in_text = [c for c in doc.citations if c.in_text]
    cites = [c for p in paper.paragraphs for c in p.cite_spans]
    # Not the \cite{#1} in a macro definition's body (SciPy's \inlinecite): not a citation.
    regex = [m for m in _REGEX_CITE.finditer(strip_comments(flat.parse_text)) if "#" not in m.group(2)]
    return {
        "paper": paper_id,
        "main_file": flat.main,
        "files_included": len(flat.included),
        "source_chars": len(flat.text),
        "paragraphs": len(paper.paragraphs),
        "sections_in_source": sections_in_source(doc),
        "thin": is_thin(doc),
        "cite_commands": len(doc.citations),
        "cite_commands_in_text": len(in_text),
        "cite_commands_via_user_aliases": sum(c.command != c.cite_command for c in doc.citations),
        "cite_commands_without_aliases": sum(c.command == c.cite_command for c in doc.citations),
        "cite_keys": sum(len(c.keys) for c in doc.citations),
        "regex_cite_commands": len(regex),
        "regex_cite_keys": sum(len([k for k in m.group(2).split(",") if k.strip()]) for m in regex),
        "pandoc_cite_keys": pandoc_cites(pandoc, source.files, flat.main) if pandoc else None,
        "in_text_keys": len(cites),
        "in_text_keys_resolved": sum(c.ref_id is not None for c in cites),
        "bib_entries": len(paper.bib_entries),
        "sentences": (sentences := sentence_count(paper, splitter))[0],
        "sentences_with_latex": sentences[1],
        "seconds": round(statistics.median(times), 3),
        "pylatexenc_parse_seconds": round(statistics.median(floor), 3),
        "ratio_to_parse_floor": round(statistics.median(times) / statistics.median(floor), 2),
    }


def sections_in_source(doc: TexDocument) -> int:
    """``\\section`` commands in the source outside comments (whether or not the parser reached
    them), at least 1."""
    return max(1, len(_SECTION.findall(strip_comments(doc.source.parse_text))))


def is_thin(doc: TexDocument) -> bool:
    """Read as one paragraph or fewer per section: the mark of a construct that swallowed the rest."""
    return len(doc.paragraphs) <= sections_in_source(doc)


def sentence_count(paper, splitter: SentenceSplitter) -> tuple[int, int]:
    """Sentences of the paper's paragraphs and those keeping LaTeX, placeholders removed."""
    total = leftover = 0
    for bounds, paragraph in zip(
        splitter.split(p.text for p in paper.paragraphs), paper.paragraphs, strict=True
    ):
        for start, end in bounds:
            sentence = PLACEHOLDER.sub("", paragraph.text[start:end])
            total += 1
            leftover += bool(_LEFTOVER.search(sentence))
    return total, leftover


def pandoc_cites(pandoc: str, files: dict[str, bytes], main: str) -> int | str:
    """Citation keys in pandoc's ``Cite`` elements, or why pandoc gave none."""
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            (Path(folder) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(folder) / name).write_bytes(data)
        try:
            done = subprocess.run(
                [pandoc, "-f", "latex", "-t", "json", main],
                cwd=Path(folder) / Path(main).parent,
                capture_output=True,
                timeout=PANDOC_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return f"no answer in {PANDOC_TIMEOUT} s"
    if done.returncode != 0:
        return f"failed: {done.stderr.decode(errors='replace').strip()[:200]}"
    return _count_cites(json.loads(done.stdout))


def _count_cites(node) -> int:
    if isinstance(node, dict):
        own = len(node["c"][0]) if node.get("t") == "Cite" else 0
        return own + sum(_count_cites(value) for value in node.values())
    if isinstance(node, list):
        return sum(_count_cites(value) for value in node)
    return 0


def snippet_recovery() -> dict:
    cases, recovered, expected, crashes = [], 0, 0, 0
    for snippet, keys in SNIPPETS:
        document = "\\documentclass{article}\\begin{document}\n" + snippet + "\n\\end{document}\n"
        try:
            found = parse_tex_files({"main.tex": document.encode()}).cited_keys
        except Exception as exc:  # a crash is what this counts
            crashes += 1
            found = [f"crash: {type(exc).__name__}"]
        hits = len(set(keys) & set(found))
        recovered += hits
        expected += len(keys)
        cases.append({"snippet": snippet, "expected": keys, "found": found})
    return {"cases": cases, "recovered": recovered, "expected": expected, "crashes": crashes}


def reruns_identical(mirror: Path) -> bool:
    """Two reads of every paper give equal Papers, and two unarXive exports equal bytes."""
    inputs = [InputSpec("arxiv_latex", str(mirror / path)) for path in PAPERS.values()]
    shards = [shard for spec in inputs for shard in discover_shards(spec.reader, spec.glob)]
    if [list(read(s)) for s in shards] != [list(read(s)) for s in shards]:
        return False
    with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
        for out in (first, second):
            export(ExportParams(inputs=inputs, format="unarxive", out_dir=Path(out), stats_dir=Path(out),
                                spacy_model=None))
        comparison = filecmp.dircmp(Path(first) / "unarxive", Path(second) / "unarxive")
        names = comparison.common_files
        same, _, _ = filecmp.cmpfiles(
            Path(first) / "unarxive", Path(second) / "unarxive", names, shallow=False
        )
        return bool(names) and same == names and not comparison.left_only and not comparison.right_only


def _pandoc_version(pandoc: str | None) -> str | None:
    if not pandoc:
        return None
    return subprocess.run([pandoc, "--version"], capture_output=True, text=True).stdout.split("\n")[0]


if __name__ == "__main__":
    sys.exit(main())
