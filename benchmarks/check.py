"""Benchmark: ``citeworth check`` -- how well the default model finds the sentences that need a
citation in real papers, and how fast a draft is checked.

    make demo                                   # trains the demo's models (or: dvc repro report)
    .venv/bin/python benchmarks/check.py        # the default model: best dev F1 in metrics/models.json
    .venv/bin/python benchmarks/check.py --all-models --repeats 3

Run from the project root (the default model is found there, as ``citeworth check`` finds it).

- **Quality** on the mirrored LaTeX papers (SciPy 1.0, SymPy, minimap2, arXiv e-print 2004.14974;
  ``$CITEWORTH_MIRROR``, else ../shared/data): each paper goes through the check's own path -- the
  project's LaTeX parser, the curation's splitter, citations removed from what the model reads --
  and the sentences that carried a citation (status ``cited``) are the positives. Reported: ROC AUC
  of the model's scores, and precision at k, k = the number of originally cited sentences (of the
  k highest-scoring sentences, the share that had a citation), per paper and pooled, beside the
  chance level (the cited share). ``--all-models`` adds every other saved model of the summary.
- **Speed**: a 300-sentence LaTeX draft written from those papers' paragraphs (citations back as
  ``\\cite``, formulas as their LaTeX), checked by ``citeworth check`` in a fresh process (model
  load included) pinned to 2 CPU cores; median of ``--repeats``, wall and CPU (user + system)
  seconds: on a shared machine the wall time grows with the load, while on an idle one it is at
  most the CPU time. Baseline measured in the same run: ``citeworth predict`` (plain text in, the
  same model) on the same sentences. Target: <= 20 s.
- **Cold, to the first flag**: the same draft checked by a fresh process in the default (GNU)
  format, timed from the start to the first flag it prints, median of ``--repeats``. With
  ``--before REV`` the same is measured for the code of commit REV (``git archive`` into a scratch
  folder, run with the same interpreter, model and draft), alternating with today's run by run.

Results: benchmarks/results/check.json (with the machine's load average).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from latex import PAPERS  # the same four papers as the LaTeX reader's benchmark (benchmarks/latex.py)
from sklearn.metrics import roc_auc_score

from citeworth.check.latex import tex_draft
from citeworth.check.run import check_drafts
from citeworth.core.io import write_json
from citeworth.drafts import CITED, Sentence
from citeworth.models.scoring import MODELS_DIR, MODELS_SUMMARY, best_model, load_model
from citeworth.sources import discover_shards
from citeworth.sources.latex import TexDocument, parse_tex_files
from citeworth.sources.latex.files import iter_sources

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "check.json"
DRAFT_SENTENCES = 300
TARGET_SECONDS = 20.0
CORES = 2
_PLACEHOLDER = re.compile(r"\{\{(cite|formula):([^{}]*)\}\}")
_ESCAPES = {c: f"\\{c}" for c in "%&#_${}"} | {"^": "\\^{}", "~": "\\~{}", "\\": "\\textbackslash{}"}
_SPECIAL = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed checks of the draft (median; default 3)")
    parser.add_argument("--all-models", action="store_true",
                        help="also score the papers with every other saved model")
    parser.add_argument("--before", metavar="REV",
                        help="also time the first flag with the code of this commit")
    args = parser.parse_args(argv)
    mirror = Path(os.environ.get("CITEWORTH_MIRROR") or ROOT.parent / "shared" / "data")
    if not mirror.is_dir():
        sys.exit(f"no data mirror at {mirror}: set CITEWORTH_MIRROR")
    default = best_model()
    docs = {paper: _parse(mirror / path) for paper, path in PAPERS.items()}
    names = [default.name]
    if args.all_models:
        names += sorted(n for n in json.loads(MODELS_SUMMARY.read_text()) if n != default.name
                        and (MODELS_DIR / n).is_dir())
    quality = {name: quality_of(MODELS_DIR / name, docs) for name in names}
    speed = speed_of(default, docs, args.repeats, args.before)
    results = {
        "command": "python benchmarks/check.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "cores_used": CORES, "python": platform.python_version(),
                    "load_average_1m": round(os.getloadavg()[0], 2)},
        "default_model": default.name,
        "models_summary": {n: json.loads(MODELS_SUMMARY.read_text())[n] for n in names},
        "quality": quality,
        "speed": speed,
    }
    write_json(RESULTS, results)
    print(json.dumps({"default_model": default.name, "pooled": quality[default.name]["pooled"],
                      "speed": speed}, indent=2))
    return 0


def _parse(path: Path) -> TexDocument:
    [shard] = discover_shards("arxiv_latex", str(path))
    [source] = iter_sources(shard.paths)
    return parse_tex_files(source.files)


def quality_of(model_dir: Path, docs: dict[str, TexDocument]) -> dict:
    model = load_model(model_dir)
    per_paper, pooled = {}, []
    for paper, doc in docs.items():
        found = check_drafts([tex_draft(doc, paper, None)], model, threshold=0.5)
        per_paper[paper] = ranking_quality(found)
        pooled += found
    return {"papers": per_paper, "pooled": ranking_quality(pooled)}


def ranking_quality(found: list[Sentence]) -> dict:
    """ROC AUC and precision at k (k = cited sentences) of the scores for "had a citation"."""
    cited = np.array([s.status == CITED for s in found])
    scores = np.array([s.score for s in found])
    k = int(cited.sum())
    top = np.argsort(-scores, kind="stable")[:k]
    return {
        "sentences": len(found),
        "cited": k,
        "chance_precision": round(k / len(found), 4),
        "roc_auc": round(float(roc_auc_score(cited, scores)), 4),
        "precision_at_k": round(float(cited[top].mean()), 4),
    }


def speed_of(model_dir: Path, docs: dict[str, TexDocument], repeats: int, before: str | None) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        tex, txt = Path(folder) / "draft.tex", Path(folder) / "draft.txt"
        sentences = write_drafts(docs, tex, txt)
        check = ["check", str(tex), "--model", str(model_dir), "--format", "jsonl", "--fail-on", "1000000"]
        predict = ["predict", str(txt), "--model", str(model_dir)]
        checked, check_seconds, check_cpu = _timed(check, repeats)
        _, predict_seconds, predict_cpu = _timed(predict, repeats)
        first_flag = first_flag_of(["check", str(tex), "--model", str(model_dir.resolve()), "--fail-on",
                                    "1000000"], repeats, before)
    return {
        "first_flag": first_flag,
        "draft_sentences": len(checked.splitlines()),
        "draft_sentences_written": sentences,
        "check_seconds_median": round(check_seconds, 2),
        "check_cpu_seconds_median": round(check_cpu, 2),
        "predict_seconds_median": round(predict_seconds, 2),
        "predict_cpu_seconds_median": round(predict_cpu, 2),
        "ratio_to_predict": round(check_seconds / predict_seconds, 2),
        "cpu_ratio_to_predict": round(check_cpu / predict_cpu, 2),
        "target_seconds": TARGET_SECONDS,
        "within_target": check_seconds <= TARGET_SECONDS,
        # On an idle machine the wall time is at most the CPU time (no waiting: the draft is local).
        "cpu_within_target": check_cpu <= TARGET_SECONDS,
    }


def write_drafts(docs: dict[str, TexDocument], tex: Path, txt: Path) -> int:
    """A LaTeX draft of the papers' first paragraphs (>= DRAFT_SENTENCES sentences by the check's own
    count) and the same paragraphs as plain text; returns the sentence count."""
    from citeworth.text.sentences import SentenceSplitter

    splitter = SentenceSplitter()
    body, plain, count = [], [], 0
    for paper, doc in docs.items():
        if count >= DRAFT_SENTENCES:
            break
        body.append(f"\\section{{{paper}}}")
        for paragraph in doc.paragraphs:
            if count >= DRAFT_SENTENCES:
                break
            count += len(next(splitter.split([paragraph.text])))
            body.append(_latex(paragraph.text, {f.formula_id: f.latex for f in paragraph.formulas}))
            plain.append(_PLACEHOLDER.sub("", paragraph.text))
    body_text = "\n\n".join(body)
    tex.write_text(f"\\documentclass{{article}}\n\\begin{{document}}\n{body_text}\n\\end{{document}}\n")
    txt.write_text("\n\n".join(plain) + "\n")
    return count


def _latex(text: str, formulas: dict[str, str]) -> str:
    parts, position = [], 0
    for match in _PLACEHOLDER.finditer(text):
        parts.append(_escaped(text[position:match.start()]))
        kind, value = match.groups()
        parts.append(f"\\cite{{{value}}}" if kind == "cite" else formulas[value])
        position = match.end()
    parts.append(_escaped(text[position:]))
    return "".join(parts)


def _escaped(text: str) -> str:
    return _SPECIAL.sub(lambda m: _ESCAPES[m.group()], text)


def first_flag_of(args: list[str], repeats: int, before: str | None) -> dict:
    """Seconds from the start of a fresh ``citeworth ARGS`` to its first line of output (a flag, in
    the GNU format) and its CPU seconds, medians; today's code and, with ``before``, that commit's."""
    with tempfile.TemporaryDirectory() as folder:
        codes = {"today": ROOT}
        if before:
            codes["before"] = Path(folder)
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", before, "citeworth"], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in codes}
        for repeat in range(repeats):
            for name in (list(codes) if repeat % 2 == 0 else list(reversed(codes))):
                runs[name].append(_first_flag(args, codes[name]))
    out: dict = {name: {"seconds_median": round(statistics.median(r[0] for r in times), 2),
                        "cpu_seconds_median": round(statistics.median(r[1] for r in times), 2)}
                 for name, times in runs.items()}
    if before:
        out["before"]["rev"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", before], check=True,
                                              capture_output=True, text=True).stdout.strip()
        out["ratio_today_to_before"] = round(out["today"]["seconds_median"]
                                             / out["before"]["seconds_median"], 2)
    return out


def _first_flag(args: list[str], code: Path) -> tuple[float, float]:
    """(seconds to the first line of stdout, CPU seconds of the whole run) of ``citeworth ARGS`` run
    with the package in ``code`` (its working directory: ``python -m`` imports from there first)."""
    cores = sorted(os.sched_getaffinity(0))[:CORES]
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "citeworth.cli", *args], cwd=code,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(code)},
                               preexec_fn=lambda: os.sched_setaffinity(0, cores))
    first = process.stdout.readline()
    seconds = time.perf_counter() - start
    process.stdout.read()
    if process.wait() not in (0, 1) or not first:
        raise SystemExit(f"citeworth {' '.join(args)} (code {code}) flagged nothing or failed")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _timed(args: list[str], repeats: int) -> tuple[str, float, float]:
    """The output of ``citeworth ARGS`` in a fresh process on CORES cores, and its median wall and
    CPU (user + system) seconds."""
    cores = sorted(os.sched_getaffinity(0))[:CORES]
    wall, cpu, out = [], [], ""
    for _ in range(repeats):
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "citeworth.cli", *args], capture_output=True,
                                text=True, check=True, preexec_fn=lambda: os.sched_setaffinity(0, cores))
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        out = result.stdout
    return out, statistics.median(wall), statistics.median(cpu)


if __name__ == "__main__":
    sys.exit(main())
