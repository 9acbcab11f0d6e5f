"""Benchmark: LaTeX parse work and time against the number of environment definitions made after
``\\begin{document}`` (issue 33: a real 1998 arXiv paper, quant-ph/9802040, with 11 such
``\\newenvironment``s and 22 such ``\\newcommand``s, was quarantined at the 60 s limit).

    .venv/bin/python benchmarks/latex_definitions.py                      # this checkout's parser
    PYTHONPATH=<older checkout> .venv/bin/python benchmarks/latex_definitions.py --label before

For N = 8, 12, 16 definitions of each kind -- ``\\newenvironment{eX}{\\begin{theorem}}{\\end{theorem}}``
and the pair ``\\newcommand{\\bX}{\\begin{theorem}}`` / ``\\newcommand{\\eX}{\\end{theorem}}`` (N/2
pairs) -- each used once in the body with a citation, it parses the paper with the definitions
after ``\\begin{document}`` and, as the baseline of the same run, the same paper with them in the
preamble (which the parser does not parse): seconds (median of ``--repeats``, each parse stopped at
the reader's 60 s limit) and work (the parser's steps: tokens read and nodes walked). Then the
fixture written after quant-ph/9802040's pattern (``tests/fixtures/latex_body_definitions``), once
and with its body repeated 2 and 4 times: steps per character, constant when work is linear in the
length. Results: benchmarks/results/latex_definitions.json, one entry per ``--label``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from citeworth.sources.base import RecordError
from citeworth.sources.latex.parser import Deadline, parse
from citeworth.sources.latex.project import flatten

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "latex_definitions.json"
FIXTURE = ROOT / "tests" / "fixtures" / "latex_body_definitions" / "main.tex"
COUNTS = (8, 12, 16)
LIMIT = 60.0  # the reader's TIME_LIMIT
_DEFINITION_LINE = re.compile(r"^\\new(?:environment|command)\{.*\n", re.M)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="parses per paper (median; default 3)")
    parser.add_argument("--label", default="current", help="the results entry to write (default: current)")
    args = parser.parse_args(argv)
    run = {
        "command": " ".join(["benchmarks/latex_definitions.py", *(sys.argv[1:] if argv is None else argv)]),
        "code": _code_version(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_1m": round(os.getloadavg()[0], 2)},
        "definitions_after_begin_document": [
            {"kind": kind, "definitions": n, **compare(paper(kind, n), args.repeats)}
            for kind in ("newenvironment", "newcommand") for n in COUNTS
        ],
        "fixture": [fixture_work(copies, args.repeats) for copies in (1, 2, 4)],
    }
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[args.label] = run
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(json.dumps(run, indent=2))
    return 0


def paper(kind: str, n: int) -> tuple[str, str]:
    """The paper with ``n`` definitions of ``kind`` after ``\\begin{document}``, and its preamble twin."""
    names = [_letters(i) for i in range(n if kind == "newenvironment" else n // 2)]
    if kind == "newenvironment":
        definitions = "".join(f"\\newenvironment{{e{x}}}{{\\begin{{theorem}}}}{{\\end{{theorem}}}}\n"
                              for x in names)
        uses = "".join(f"\\begin{{e{x}}} Statement {x} holds \\cite{{k{x}}}. \\end{{e{x}}}\n\n"
                       for x in names)
    else:
        definitions = "".join(f"\\newcommand{{\\b{x}}}{{\\begin{{theorem}}}}\n"
                              f"\\newcommand{{\\e{x}}}{{\\end{{theorem}}}}\n" for x in names)
        uses = "".join(f"\\b{x} Statement {x} holds \\cite{{k{x}}}. \\e{x}\n\n" for x in names)
    head = "\\documentclass{article}\n\\newtheorem{theorem}{Theorem}\n"
    body = f"\\section{{Results}}\nWe state {len(names)} results.\n\n{uses}\\end{{document}}\n"
    return (head + "\\begin{document}\n" + definitions + body,
            head + definitions + "\\begin{document}\n" + body)


def compare(sources: tuple[str, str], repeats: int) -> dict:
    after, before = (measure(source, repeats) for source in sources)
    return {
        "after_begin_document": after,
        "in_preamble": before,
        "seconds_ratio_to_preamble": round(after["seconds"] / max(before["seconds"], 1e-4), 1),
        "steps_ratio_to_preamble": round(after["steps"] / before["steps"], 2),
    }


def measure(source: str, repeats: int) -> dict:
    """Median seconds and the steps of one parse; a parse past LIMIT counts as LIMIT (``read``: False)."""
    times, steps, read = [], 0, True
    for _ in range(repeats):
        deadline = Deadline(LIMIT)
        start = time.perf_counter()
        try:
            parse(flatten({"main.tex": source}, "main.tex"), deadline)
        except RecordError as exc:
            if exc.reason != "latex_timeout":
                raise
            read = False
        times.append(time.perf_counter() - start)
        steps = deadline.steps
        if not read:
            break  # one timeout says it: no need to wait the limit again
    return {"seconds": round(statistics.median(times), 3), "steps": steps, "read": read,
            "chars": len(source)}


def fixture_work(copies: int, repeats: int) -> dict:
    """The fixture with its sections repeated ``copies`` times (its definitions once)."""
    source = FIXTURE.read_text()
    start, end = source.index("\\section{Introduction}"), source.index("\\begin{thebibliography}")
    source = source[:start] + source[start:end] * copies + source[end:]
    found = measure(source, repeats)
    return {"copies": copies, "definitions_after_begin_document": len(_DEFINITION_LINE.findall(source)),
            **found, "steps_per_char": round(found["steps"] / found["chars"], 3)}


def _letters(i: int) -> str:
    """a, b, ..., z, ba, bb...: a macro name has letters only."""
    return (_letters(i // 26) if i >= 26 else "") + chr(ord("a") + i % 26)


def _code_version() -> str:
    """The commit of the citeworth package measured (and whether its files differ from it)."""
    import citeworth

    folder = Path(citeworth.__file__).parent
    done = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=folder, capture_output=True,
                          text=True)
    return done.stdout.strip() or f"not a git checkout: {folder}"


if __name__ == "__main__":
    sys.exit(main())
