"""Benchmark: ``citeworth check --suggest`` -- which entry a sentence should cite.

    .venv/bin/python benchmarks/suggest.py            # the mirror: $CITEWORTH_MIRROR, else ../shared/data
    .venv/bin/python benchmarks/suggest.py --no-speed
    .venv/bin/python benchmarks/suggest.py --compare-with ../main   # also time another checkout's --suggest

Run from the project root.

- **Own bibliography** (the draft-with-a-``.bib`` case): every sentence with a resolved citation in
  the demo corpus' LaTeX papers (SciPy 1.0, SymPy, minimap2, arXiv e-print 2004.14974, read by the
  check's own path: the LaTeX parser, the curation's splitter, citations removed) and in the
  unarXive sample's papers (their bibliographies are printed strings: surnames, title and year read
  off them). Candidates: that paper's whole bibliography (a ``.bib``: every entry, cited or not);
  correct: the keys the sentence cited. The sentences that cite an entry elsewhere in the paper are
  its contexts (never the sentence itself). Reported per method (random, each signal alone, fused
  without and with contexts): Hit@1/3/5, Recall@5/10, MRR, nDCG@10, averaged per sentence and per
  paper, and by bibliography size (<= 20, 21-50, > 50). Random is the exact expectation of a random
  order (Hit@k = k/N for one correct key; MRR: the harmonic mean H_N/N).
- **Corpus**: sentences of the demo corpus' papers (unarXive sample, S2ORC, PMC, GROBID TEI, PLOS)
  whose cited paper is another corpus paper; candidates: the corpus papers but the citing one and
  any dated after it; contexts: the sentences of *other* papers that cite a candidate. Recall@10
  and MRR for BM25, dense, fused. As only a few such sentences exist, also **pooled references**:
  the own-bibliography sentences ranked against every work their 47 papers cite (bibliographies
  pooled, one candidate per title), contexts from other papers only; every method, all metrics.
- **Speed**: ``citeworth check`` on a 300-sentence LaTeX draft with a 100-entry ``.bib`` (written
  from the mirrored papers), with and without ``--suggest``, in fresh processes, same run: the
  seconds ``--suggest`` adds (target <= 5 s, cold) and the ratio. Cold: an empty vector cache
  (``XDG_CACHE_HOME`` a new folder), the first check of a draft; warm: the same check again, its
  vectors cached. ``--compare-with DIR`` times the ``--suggest`` of another checkout (its
  ``citeworth`` package) in the same rounds. A 50,000-entry ``.bib`` is timed too (cold).
  The check needs a model: the best by dev F1 (metrics/models.json), else ``--model DIR``.

Results: benchmarks/results/suggest.json (with the machine's load average).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from latex import PAPERS  # the mirrored LaTeX papers (benchmarks/latex.py)

from citeworth.check.draft import sentences
from citeworth.check.latex import tex_draft
from citeworth.core.io import write_json
from citeworth.corpora.paper_index import PaperIndex, title_key
from citeworth.drafts import Block, Draft
from citeworth.sources import BadRecord, InputSpec, discover_shards, read_shard
from citeworth.sources.latex import SourcePosition, parse_tex_files
from citeworth.sources.latex.files import iter_sources
from citeworth.sources.latex.project import find_main, tex_texts
from citeworth.suggest.candidates import Candidate, from_raw, project_candidates
from citeworth.suggest.corpus import add_papers, candidate, citations
from citeworth.suggest.dense import Encoder
from citeworth.suggest.ranker import Ranker, fuse
from citeworth.text.sentences import SentenceSplitter

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "suggest.json"
UNARXIVE = "github/IllDepence/unarXive/doc/unarXive_data_sample.tar.gz"
SIZES = (("<=20", 0, 20), ("21-50", 21, 50), (">50", 51, 10**9))
METRICS = ("hit@1", "hit@3", "hit@5", "recall@5", "recall@10", "mrr", "ndcg@10")
GOAL_HIT5, GOAL_TIMES_RANDOM = 0.6, 3.0
DRAFT_SENTENCES, BIB_ENTRIES, TARGET_ADDED_SECONDS = 300, 100, 5.0
LOW_RANK_MIN_ENTRIES = 20
DEFAULT_METHOD = "fused (all: +contexts)"  # what citeworth check --suggest computes


@dataclass
class Case:
    """A sentence to suggest for: its text (citations removed), the indices of the keys it cited."""

    paper: str
    text: str
    correct: list[int]


@dataclass
class PaperCases:
    paper: str
    candidates: list[Candidate]
    cases: list[Case]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-speed", action="store_true", help="skip the timing of the check command")
    parser.add_argument("--model", type=Path, help="the check's model for the timing (default: the best)")
    parser.add_argument("--compare-with", type=Path, metavar="DIR",
                        help="also time check --suggest of the checkout in DIR (e.g. main before a change)")
    args = parser.parse_args(argv)
    mirror = Path(os.environ.get("CITEWORTH_MIRROR") or ROOT.parent / "shared" / "data")
    if not mirror.is_dir():
        sys.exit(f"no data mirror at {mirror}: set CITEWORTH_MIRROR")
    encoder, splitter = Encoder(), SentenceSplitter()
    with tempfile.TemporaryDirectory() as folder:
        unarxive = _unpacked(mirror / UNARXIVE, Path(folder))
        papers = latex_papers(mirror, splitter) + unarxive_papers(unarxive, splitter)
        own = own_bibliography(papers, encoder)
        corpus = corpus_setting(mirror, unarxive, encoder, Path(folder))
        corpus["pooled_references"] = pooled_references(papers, encoder)
        speed = None if args.no_speed else speed_of(args.model, papers, Path(folder), args.compare_with)
    results = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                    "note": "shared machine: other jobs ran at the same time"},
        "own_bibliography": own,
        "corpus": corpus,
        "speed": speed,
    }
    write_json(RESULTS, results)
    print(json.dumps({"per_sentence": own["per_sentence"], "goal": own["goal"], "low_rank": own["low_rank"],
                      "corpus": corpus, "speed": speed}, indent=1))
    return 0


def _unpacked(archive: Path, folder: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return folder


def latex_papers(mirror: Path, splitter: SentenceSplitter) -> list[PaperCases]:
    """The mirrored LaTeX papers, read as ``citeworth check --suggest`` reads a draft."""
    found = []
    for paper, path in PAPERS.items():
        [shard] = discover_shards("arxiv_latex", str(mirror / path))
        [source] = iter_sources(shard.paths)
        texts = tex_texts(source.files)
        main = find_main(source.files, texts)
        candidates, _ = project_candidates(texts, main, paper)
        draft = tex_draft(parse_tex_files(source.files, main), paper, None)
        found.append(_cases(paper, candidates, draft, splitter))
    return found


def unarxive_papers(folder: Path, splitter: SentenceSplitter) -> list[PaperCases]:
    """The unarXive sample's papers: a block per paragraph, ``{{cite:ID}}`` markers as citations."""
    found = []
    for shard in discover_shards("unarxive", str(folder / "*" / "*.jsonl")):
        for paper in read_shard(shard):
            if isinstance(paper, BadRecord) or not paper.bib_entries:
                continue
            candidates = [from_raw(ref_id, entry.raw or "", entry.year)
                          for ref_id, entry in paper.bib_entries.items()]
            blocks = [Block(p.text, [(s.start, s.end) for s in p.cite_spans], lambda a, b: (a, b),
                            sorted([(s.start, s.end) for s in p.cite_spans]
                                   + [(a, b) for a, b, _ in p.ref_spans]),
                            {p.text[a:b]: "" for a, b, _ in p.ref_spans})
                      for p in paper.paragraphs]
            draft = Draft(paper.paper_id, blocks, lambda offset: SourcePosition("-", 1, offset + 1))
            found.append(_cases(f"arXiv:{paper.paper_id}", candidates, draft, splitter))
    return found


def _cases(paper: str, candidates: list[Candidate], draft: Draft, splitter: SentenceSplitter) -> PaperCases:
    """Every sentence with a citation whose key the bibliography has; each cited entry's other
    citing sentences become its contexts."""
    index = {c.key.lower(): i for i, c in enumerate(candidates)}
    cases = []
    for sentence in (s for paragraph in sentences([draft], splitter) for s in paragraph):
        correct = sorted({index[k.lower()] for k in sentence.cite_keys if k.lower() in index})
        if correct and sentence.text:
            cases.append(Case(paper, sentence.text, correct))
            for i in correct:
                candidates[i].contexts.append(sentence.text)
    return PaperCases(paper, candidates, cases)


# Each method: the signals it fuses (see citeworth/suggest/ranker.py); "random" is computed exactly.
METHODS = {
    "bm25": ("bm25",),
    "dense": ("dense",),
    "authors": ("authors",),
    "contexts": ("context_bm25", "context_dense"),
    "bm25+dense": ("bm25", "dense"),
    "bm25+dense+authors": ("bm25", "dense", "authors"),
    "fused (all: +contexts)": ("bm25", "dense", "authors", "context_bm25", "context_dense"),
}


def own_bibliography(papers: Sequence[PaperCases], encoder: Encoder) -> dict:
    rows: dict[str, list[dict]] = defaultdict(list)  # method -> one row per sentence
    shares: list[float] = []  # rank / size of each correct key (the check's method)
    rng = np.random.default_rng(0)
    for paper in papers:
        if not paper.cases:
            continue
        ranker = Ranker(paper.candidates, encoder)
        signals = ranker.signals([case.text for case in paper.cases])
        size = len(paper.candidates)
        tiebreak = rng.permutation(size)
        for case_index, case in enumerate(paper.cases):
            base = {"paper": paper.paper, "size": size}
            rows["random"].append(base | random_metrics(size, len(case.correct)))
            for method, ranking in rankings(signals, case_index, tiebreak).items():
                rows[method].append(base | metrics(ranking, case.correct))
                if method == DEFAULT_METHOD and size >= LOW_RANK_MIN_ENTRIES:
                    shares.extend((int(np.flatnonzero(ranking == i)[0]) + 1) / size for i in case.correct)
    summary = summarise(rows, papers)
    summary["low_rank"] = low_rank(shares)
    return summary


def pooled_references(papers: Sequence[PaperCases], encoder: Encoder) -> dict:
    """The corpus setting at scale: candidates are every work the benchmark's papers cite (their
    bibliographies pooled, one candidate per title), so a sentence's cited work is sought among
    thousands rather than its own paper's few dozen; a work's contexts are the sentences of *other*
    papers citing it (never the citing paper's own)."""
    works: dict[str, int] = {}
    pooled: list[Candidate] = []
    members = []  # per paper: its entries' indices in ``pooled``
    for paper in papers:
        member = []
        for entry in paper.candidates:
            name = title_key(entry.title) or f"{paper.paper}/{entry.key}"
            if name not in works:
                works[name] = len(pooled)
                pooled.append(dataclasses.replace(entry, contexts=[]))
            member.append(works[name])
        members.append(member)
    rows: dict[str, list[dict]] = defaultdict(list)
    tiebreak = np.random.default_rng(0).permutation(len(pooled))
    for paper, member in zip(papers, members, strict=True):
        if not paper.cases:
            continue
        contexts = defaultdict(list)
        for other, other_member in zip(papers, members, strict=True):
            for case in other.cases if other is not paper else ():
                for i in case.correct:
                    contexts[other_member[i]].append(case.text)
        candidates = [dataclasses.replace(c, contexts=contexts[i]) for i, c in enumerate(pooled)]
        signals = Ranker(candidates, encoder).signals([case.text for case in paper.cases])
        for row, case in enumerate(paper.cases):
            correct = sorted({member[i] for i in case.correct})
            rows["random"].append(random_metrics(len(pooled), len(correct)))
            for method, ranking in rankings(signals, row, tiebreak).items():
                rows[method].append(metrics(ranking, correct))
    return {"candidates": len(pooled), "bibliography_entries": sum(len(p.candidates) for p in papers),
            "sentences": len(rows["random"]),
            "per_sentence": {m: {k: round(statistics.fmean(r[k] for r in items), 4) for k in METRICS}
                             for m, items in rows.items()}}


def low_rank(shares: list[float]) -> dict:
    """Could a low rank flag a citation that does not support its sentence? For each share q, how
    often a correct citation ranks in the bibliography's last q (rank / size > 1 - q) under the
    check's method, against q for a key placed at random: only a share well below q would make a
    low rank a hint worth reporting."""
    return {"method": DEFAULT_METHOD, "min_entries": LOW_RANK_MIN_ENTRIES, "citations": len(shares),
            "correct_in_last_share": {str(q): round(float(np.mean(np.array(shares) > 1 - q)), 4)
                                      for q in (0.05, 0.1, 0.25, 0.5)} if shares else {}}


def rankings(signals: dict[str, np.ndarray], row: int, tiebreak: np.ndarray) -> dict[str, np.ndarray]:
    """Each method's order of the candidates for sentence ``row``, ties in ``tiebreak``'s random
    order (so no method profits from the bibliography's own order)."""
    size = len(tiebreak)
    return {method: np.lexsort((tiebreak, -method_scores(signals, names, row, size)))
            for method, names in METHODS.items()}


def method_scores(signals: dict[str, np.ndarray], names: Sequence[str], row: int, size: int) -> np.ndarray:
    """A method's scores for one sentence: a single signal as it is, several fused as the check fuses."""
    present = {name: signals[name][row:row + 1] for name in names if name in signals}
    if not present:
        return np.zeros(size)
    if len(present) == 1:
        return np.nan_to_num(next(iter(present.values()))[0], nan=-np.inf)
    present.setdefault("authors", np.zeros((1, size)))
    return fuse(present)[0]


def metrics(ranking: np.ndarray, correct: Sequence[int]) -> dict:
    ranks = sorted(int(np.flatnonzero(ranking == i)[0]) + 1 for i in correct)
    ideal = sum(1 / math.log2(r + 1) for r in range(1, min(len(correct), 10) + 1))
    return {
        **{f"hit@{k}": float(ranks[0] <= k) for k in (1, 3, 5)},
        **{f"recall@{k}": sum(r <= k for r in ranks) / len(ranks) for k in (5, 10)},
        "mrr": 1 / ranks[0],
        "ndcg@10": sum(1 / math.log2(r + 1) for r in ranks if r <= 10) / ideal,
    }


def random_metrics(size: int, correct: int) -> dict:
    """The expectation of ``metrics`` over uniformly random orders of ``size`` candidates."""
    def first_at(rank: int) -> float:  # P(the best-ranked correct entry is at ``rank``)
        return math.comb(size - rank, correct - 1) / math.comb(size, correct)

    ideal = sum(1 / math.log2(r + 1) for r in range(1, min(correct, 10) + 1))
    return {
        **{f"hit@{k}": sum(first_at(r) for r in range(1, min(k, size) + 1)) for k in (1, 3, 5)},
        **{f"recall@{k}": min(k, size) / size for k in (5, 10)},
        "mrr": sum(first_at(r) / r for r in range(1, size + 1)),
        "ndcg@10": sum(correct / size / math.log2(r + 1) for r in range(1, min(10, size) + 1)) / ideal,
    }


def summarise(rows: dict[str, list[dict]], papers: Sequence[PaperCases]) -> dict:
    def mean(items: list[dict]) -> dict:
        return {m: round(statistics.fmean(r[m] for r in items), 4) for m in METRICS} if items else {}

    def per_paper(items: list[dict]) -> dict:
        by_paper = defaultdict(list)
        for row in items:
            by_paper[row["paper"]].append(row)
        return mean([mean(group) for group in by_paper.values()])

    best = max((m for m in rows if m != "random"), key=lambda m: mean(rows[m])["hit@5"])
    best_hit5, random_hit5 = mean(rows[best])["hit@5"], mean(rows["random"])["hit@5"]
    return {
        "papers": sum(bool(p.cases) for p in papers),
        "sentences": len(rows["random"]),
        "sentences_by_size": {name: sum(low <= r["size"] <= high for r in rows["random"])
                              for name, low, high in SIZES},
        "per_sentence": {m: mean(items) for m, items in rows.items()},
        "per_paper": {m: per_paper(items) for m, items in rows.items()},
        "by_size": {name: {m: mean([r for r in items if low <= r["size"] <= high])
                           for m, items in rows.items()} for name, low, high in SIZES},
        "papers_detail": [{"paper": p.paper, "candidates": len(p.candidates), "sentences": len(p.cases)}
                          for p in papers],
        "goal": {"best_method": best, "hit@5": best_hit5, "random_hit@5": random_hit5,
                 "times_random": round(best_hit5 / random_hit5, 2),
                 "reached": best_hit5 >= GOAL_HIT5 and best_hit5 >= GOAL_TIMES_RANDOM * random_hit5},
    }


# The demo corpus' inputs (params.yaml's curate.inputs) in the mirror; unarXive unpacked beside.
CORPUS_INPUTS = (("s2orc_json", "github/allenai/s2orc-doc2json/tests/s2orc/*/*.json",
                  "github/allenai/s2orc/data/metadata/sample.jsonl"),
                 ("jats", "github/titipata/pubmed_parser/data/*.nxml", None),
                 ("tei", "github/kermitt2/grobid_client_python/resources/**/*.tei.xml", None),
                 ("jats", "github/PLOS/allofplos/allofplos/starter_corpus/*.xml", None))
CORPUS_METHODS = {"bm25": ("bm25", "context_bm25"), "dense": ("dense", "context_dense"),
                  "fused": ("bm25", "dense", "context_bm25", "context_dense")}


def corpus_setting(mirror: Path, unarxive: Path, encoder: Encoder, folder: Path) -> dict:
    """Sentences citing another corpus paper; candidates: the corpus but the citing paper and papers
    dated after it; contexts: other papers' sentences citing a candidate (never the citing paper's)."""
    inputs = [InputSpec("unarxive", str(unarxive / "*" / "*.jsonl"))] + [
        InputSpec(reader, str(mirror / glob), str(mirror / meta) if meta else None)
        for reader, glob, meta in CORPUS_INPUTS]
    index = PaperIndex(folder / "corpus.sqlite", keep_text=True)
    years = [_year(item) for item in add_papers(inputs, index) if not isinstance(item, BadRecord)]
    papers = index.papers()
    found = list(citations(index, papers))
    rows: dict[str, list[dict]] = defaultdict(list)
    for citing in sorted({c.citing for c in found}):
        allowed = [p for p in papers
                   if p.rowid != citing and not _later(years[p.rowid - 1], years[citing - 1])]
        position = {p.rowid: i for i, p in enumerate(allowed)}
        contexts = defaultdict(list)
        for c in found:
            if c.citing != citing:
                contexts[c.cited].append(c.sentence)
        queries = [(c.sentence, position[c.cited]) for c in found
                   if c.citing == citing and c.cited in position]
        if not queries:
            continue
        ranker = Ranker([candidate(p, contexts[p.rowid]) for p in allowed], encoder)
        signals = ranker.signals([text for text, _ in queries])
        for row, (_, correct) in enumerate(queries):
            rows["random"].append(random_metrics(len(allowed), 1))
            for method, names in CORPUS_METHODS.items():
                ranking = np.argsort(-method_scores(signals, names, row, len(allowed)), kind="stable")
                rows[method].append(metrics(ranking, [correct]))
    index.close()
    return {"papers": len(papers), "citations_within_corpus": len(found),
            "sentences": len(rows["random"]), "citing_papers": len({c.citing for c in found}),
            **{m: {k: round(statistics.fmean(r[k] for r in items), 4) for k in ("recall@10", "mrr")}
               for m, items in rows.items()}}


def _year(paper) -> int | None:
    for value in (paper.metadata.get(key) for key in ("year", "date", "publication_date")):
        if value and (found := re.search(r"\b(1[89]\d\d|20\d\d)\b", str(value))):
            return int(found.group(1))
    return None


def _later(year: int | None, than: int | None) -> bool:
    return year is not None and than is not None and year > than


def speed_of(model: Path | None, papers: Sequence[PaperCases], folder: Path, other: Path | None) -> dict:
    """``citeworth check`` of a 300-sentence draft with a 100-entry .bib, with and without --suggest
    (cold and warm; fresh processes, median of 3, alternating); ``other``'s --suggest in the same
    rounds; and --suggest with a 50,000-entry .bib."""
    draft = folder / "speed"
    draft.mkdir()
    texts = [case.text for paper in papers for case in paper.cases][:DRAFT_SENTENCES]
    model = model or _any_model(texts, folder / "model")
    entries = [c for paper in papers for c in paper.candidates if c.title][:BIB_ENTRIES]
    body = "\n\n".join(_escaped(t) for t in texts)
    (draft / "main.tex").write_text("\\documentclass{article}\n\\begin{document}\n" + body
                                    + "\n\\bibliography{refs}\n\\end{document}\n")
    (draft / "refs.bib").write_text("".join(_bib_entry(f"ref{i}", c) for i, c in enumerate(entries)))
    # --threshold 0: every sentence is a flag, the most work --suggest can have
    base = ["check", str(draft / "main.tex"), "--model", str(model), "--format", "jsonl",
            "--fail-on", "1000000", "--threshold", "0"]
    runs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    loads = []
    for round_ in range(3):
        cache = folder / f"cache{round_}"  # empty: cold
        runs["check"].append(_seconds(base))
        runs["cold"].append(_seconds([*base, "--suggest"], cache))
        runs["warm"].append(_seconds([*base, "--suggest"], cache))
        if other:
            runs["compared"].append(_seconds([*base, "--suggest"], folder / f"other{round_}", other))
        loads.append(os.getloadavg()[0])
    (draft / "refs.bib").write_text("".join(_bib_entry(f"ref{i}", entries[i % len(entries)])
                                            for i in range(50_000)))
    large_wall, large_cpu = _seconds([*base, "--suggest"], folder / "cache-large")
    wall = {name: statistics.median(w for w, _ in timed) for name, timed in runs.items()}
    cpu = {name: statistics.median(c for _, c in timed) for name, timed in runs.items()}
    result = {"model": str(model), "draft_sentences": len(texts), "bib_entries": len(entries),
              "load_average_1m_per_round": [round(load, 2) for load in loads],
              "check_seconds_median": round(wall["check"], 2),
              "check_cpu_seconds_median": round(cpu["check"], 2),
              "target_added_seconds": TARGET_ADDED_SECONDS,
              "within_target": wall["cold"] - wall["check"] <= TARGET_ADDED_SECONDS,
              "bib_50000_check_suggest_seconds": round(large_wall, 2),
              "bib_50000_check_suggest_cpu_seconds": round(large_cpu, 2)}
    for name in ("cold", "warm", "compared"):
        if name in runs:
            result[name] = {"check_suggest_seconds_median": round(wall[name], 2),
                            "added_seconds": round(wall[name] - wall["check"], 2),
                            "ratio": round(wall[name] / wall["check"], 2),
                            "added_cpu_seconds": round(cpu[name] - cpu["check"], 2)}
    if other:
        result["compared"]["checkout"] = str(other)
    return result


def _any_model(texts: list[str], folder: Path) -> Path:
    """The best saved model, else a TF-IDF model fitted here (the timing needs scores, not good ones)."""
    from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
    from citeworth.models.fitting import fit_model, model_spec
    from citeworth.models.scoring import NoModel, best_model
    from citeworth.models.spec import TfidfSpec

    try:
        return best_model()
    except NoModel:
        labels = (NOT_CITE_WORTHY, CITE_WORTHY)
        records = [{"mag_field_of_study": ["Biology"],
                    "samples": [{"text": t, "label": labels[i % 2]} for i, t in enumerate(texts[j:j + 3])]}
                   for j in range(0, len(texts), 3)]
        spec = model_spec("tfidf_lr", TfidfSpec(kind="tfidf_lr"))
        fit_model(spec, records, records[:10], 1, None).save(folder)
        return folder


def _escaped(text: str) -> str:
    return "".join("\\" + c if c in "%&#_${}" else c for c in text.replace("\\", " ").replace("^", " ")
                   .replace("~", " "))


def _bib_entry(key: str, candidate: Candidate) -> str:
    authors = " and ".join(candidate.authors) or "Anonymous"
    return (f"@article{{{key},\n  title = {{{_escaped(candidate.title)}}},\n"
            f"  author = {{{_escaped(authors)}}},\n  year = {{{candidate.year or 2000}}}\n}}\n")


def _seconds(args: list[str], cache: Path | None = None, checkout: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of ``citeworth ARGS`` in a fresh process, with the
    package of ``checkout`` and ``cache`` as the user's cache folder."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    if cache:
        env["XDG_CACHE_HOME"] = str(cache)
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "citeworth.cli", *args], capture_output=True, text=True,
                          env=env)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: flags, as every sentence is one
        sys.exit(f"citeworth {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


if __name__ == "__main__":
    sys.exit(main())
