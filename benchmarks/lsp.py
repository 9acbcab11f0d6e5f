"""Benchmark: ``citeworth lsp`` -- how soon an edited paragraph's diagnostics are back, and what the
server holds in memory.

    .venv/bin/python benchmarks/lsp.py                    # the mirror: $CITEWORTH_MIRROR, else ../shared/data
    .venv/bin/python benchmarks/lsp.py --model models/sentence --edits 20

Run from the project root.

- **Drafts**: a 300-sentence LaTeX draft written from the mirrored papers' paragraphs (as
  benchmarks/check.py writes it; their ``\\cite`` keys kept) with a 100-entry ``.bib`` of those
  papers' own bibliography entries (the cited ones first); and the same paragraphs as a Markdown
  draft (citations removed, the ``.bib`` named in its front matter), which shows the server's
  cost without the LaTeX parse.
- **Server**: ``citeworth lsp`` in a fresh process per draft and model, driven over stdio by a real
  LSP client (pytest-lsp's, on pygls), threshold 0 (every uncited sentence is a flag: the most a
  check can publish), debounce ``--debounce-ms``. Timed: the first diagnostics after opening the
  draft (cold: spaCy and the model load); the first code action (cold: the encoder loads, the
  bibliography is embedded); then ``--edits`` edits, each adding a sentence to a different
  paragraph, one at a time: the seconds from sending the change to the arrival of the
  diagnostics of that document version, less the debounce (target: median <= 0.3 s); then code
  actions on other flags (warm). Memory: the resident set of the server and of its encoder
  process, at the end.
- **Baseline, same run, same model**: what a server without kept state would do per edit: read
  the whole draft, split and score every paragraph (warm model and splitter, in this process, one
  torch thread as the server, before the server starts), median of 5; and the read alone, which
  the server still does whole per edit. Reported: the ratio of the edit latency to that baseline.
- **Models**: ``--model DIR`` (repeatable); default the best model by dev F1 (metrics/models.json),
  else two fitted here for timing only (their scores mean nothing, their cost is the real one):
  the demo's default kind, ``sentence`` (the embedded MiniLM, one optimizer step), and
  ``tfidf_lr``.

The machine is shared: the load average is recorded before and after each session.
Results: benchmarks/results/lsp.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil
from check import PAPERS, _parse, write_drafts  # the 300-sentence draft of benchmarks/check.py
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from suggest import _bib_entry  # the .bib writer of benchmarks/suggest.py

from citeworth.check.run import check_drafts, read_draft
from citeworth.core.io import write_json
from citeworth.lsp.settings import TORCH_THREADS
from citeworth.models.scoring import NoModel, best_model, load_model
from citeworth.sources import discover_shards
from citeworth.sources.latex.files import iter_sources
from citeworth.sources.latex.project import find_main, tex_texts
from citeworth.suggest.candidates import project_candidates
from citeworth.text.sentences import SentenceSplitter

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "lsp.json"
BIB_ENTRIES, TARGET_SECONDS, BASELINE_REPEATS = 100, 0.3, 5
ACTIONS = 6  # code action requests: the first cold, the rest warm
_CITE = re.compile(r"\\cite\{([^}]*)\}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, action="append", default=[],
                        help="a model folder to time (repeatable; default: see above)")
    parser.add_argument("--edits", type=int, default=20, help="timed edits (median; default 20)")
    parser.add_argument("--debounce-ms", type=int, default=300, help="the server's debounce (default 300)")
    args = parser.parse_args(argv)
    mirror = Path(os.environ.get("CITEWORTH_MIRROR") or ROOT.parent / "shared" / "data")
    if not mirror.is_dir():
        sys.exit(f"no data mirror at {mirror}: set CITEWORTH_MIRROR")
    with tempfile.TemporaryDirectory() as folder:
        drafts, texts = write_drafts_with_bib(mirror, Path(folder) / "draft")
        models = {str(path): path for path in args.model} or default_models(texts, Path(folder) / "models")
        runs = {name: {kind: measure(path, draft, args, Path(folder) / f"cache-{i}-{kind}")
                       for kind, draft in drafts.items()}
                for i, (name, path) in enumerate(models.items())}
    results = {
        "command": "python benchmarks/lsp.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "draft_sentences": len(texts), "bib_entries": BIB_ENTRIES, "edits": args.edits,
        "debounce_ms": args.debounce_ms, "target_seconds": TARGET_SECONDS, "models": runs,
    }
    write_json(RESULTS, results)
    print(json.dumps(results, indent=2))
    return 0


def write_drafts_with_bib(mirror: Path, folder: Path) -> tuple[dict[str, Path], list[str]]:
    """main.tex (300 sentences, ``\\bibliography{refs}``), draft.md (the same paragraphs, citations
    removed, ``bibliography: refs.bib``) and refs.bib (100 entries of the papers' own
    bibliographies, the ones the draft cites first); returns the drafts and main.tex's sentences."""
    folder.mkdir(parents=True)
    docs = {paper: _parse(mirror / path) for paper, path in PAPERS.items()}
    main, markdown = folder / "main.tex", folder / "draft.md"
    write_drafts(docs, main, markdown)
    markdown.write_text("---\nbibliography: refs.bib\n---\n\n" + markdown.read_text())
    text = main.read_text()
    cited = {key.strip() for match in _CITE.finditer(text) for key in match.group(1).split(",")}
    entries = []
    for paper, path in PAPERS.items():
        [shard] = discover_shards("arxiv_latex", str(mirror / path))
        [source] = iter_sources(shard.paths)
        files = tex_texts(source.files)
        entries += [c for c in project_candidates(files, find_main(source.files, files), paper)[0] if c.title]
    entries.sort(key=lambda entry: entry.key not in cited)
    (folder / "refs.bib").write_text("".join(_bib_entry(c.key, c) for c in entries[:BIB_ENTRIES]))
    main.write_text(text.replace("\\end{document}", "\\bibliography{refs}\n\\end{document}"))
    found = check_drafts([read_draft(str(main))], _Constant(), 0.0)
    return {"latex": main, "markdown": markdown}, [s.text for s in found]


class _Constant:
    """A model scoring every sentence 1 (to count the draft's sentences without a real one)."""

    def predict_proba(self, records):
        return [1.0 for record in records for _ in record["samples"]]


def default_models(texts: list[str], folder: Path) -> dict[str, Path]:
    """The best saved model, else a MiniLM sentence model and a TF-IDF model fitted here (timing only)."""
    try:
        return {"best": best_model()}
    except NoModel:
        pass
    from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
    from citeworth.models.fitting import fit_model, model_spec
    from citeworth.models.spec import OptimParams, SentenceSpec, TfidfSpec

    labels = (NOT_CITE_WORTHY, CITE_WORTHY)
    records = [{"mag_field_of_study": ["Biology"],
                "samples": [{"text": t, "label": labels[i % 2]} for i, t in enumerate(texts[j:j + 3])]}
               for j in range(0, len(texts), 3)]
    specs = {"sentence": SentenceSpec(kind="sentence", max_length=80,
                                      optim=OptimParams(max_steps=1, batch_size=8, eval_batch_size=64)),
             "tfidf_lr": TfidfSpec(kind="tfidf_lr")}
    for name, spec in specs.items():
        fit_model(model_spec(name, spec), records[:40], records[40:50], 1, None).save(folder / name)
    return {f"{name} (fitted here, timing only)": folder / name for name in specs}


def measure(model: Path, draft: Path, args, cache: Path) -> dict:
    baseline = _baseline(model, draft)
    load_before = os.getloadavg()
    served = asyncio.run(_serve(model, draft, args, cache))
    median = statistics.median(served["edit_seconds"])
    return {"model": str(model), "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()], **served, **baseline,
            "edit_seconds_median": round(median, 3),
            "edit_seconds_p90": round(statistics.quantiles(served["edit_seconds"], n=10)[-1], 3),
            "within_target": median <= TARGET_SECONDS,
            "ratio_to_full_check": round(median / baseline["full_check_seconds_median"], 3)}


def _baseline(model_dir: Path, draft: Path) -> dict:
    """A whole check per edit (warm model and splitter), and the read alone, medians of 5."""
    model, splitter = load_model(model_dir), SentenceSplitter()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(TORCH_THREADS)  # as the server scores
    full, read = [], []
    for _ in range(BASELINE_REPEATS):
        start = time.perf_counter()
        drafts = [read_draft(str(draft))]
        read.append(time.perf_counter() - start)
        check_drafts(drafts, model, 0.0, splitter=splitter)
        full.append(time.perf_counter() - start)
    return {"full_check_seconds_median": round(statistics.median(full), 3),
            "read_seconds_median": round(statistics.median(read), 3)}


async def _serve(model: Path, draft: Path, args, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache)}
    client = await ClientServerConfig([sys.executable, "-m", "citeworth.cli", "lsp"], server_env=env).start()
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("neovim"), root_uri=draft.parent.as_uri(),
            initialization_options={"citeworth": {"model": str(model.resolve()), "threshold": 0,
                                                  "debounceMs": args.debounce_ms}}))
        return await _session(client, draft, args)
    finally:
        await client.shutdown_session()
        await client.stop()


async def _session(client: LanguageClient, draft: Path, args) -> dict:
    uri, text = draft.as_uri(), draft.read_text()
    start = time.perf_counter()
    document = types.TextDocumentItem(uri, "latex" if draft.suffix == ".tex" else "markdown", 1, text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(document))
    await _diagnostics(client, uri, 1)
    cold = time.perf_counter() - start
    [first] = await _code_actions(client, uri, client.diagnostics[uri][:1])  # the encoder loads
    lines, latencies = text.split("\n"), []
    paragraphs = [i for i, line in enumerate(lines) if line and line[0] not in "\\-"
                  and (i + 1 == len(lines) or not lines[i + 1])]  # the last line of each paragraph
    for edit in range(args.edits):
        line = paragraphs[(edit * 7) % len(paragraphs)]
        lines[line] += f" We add sentence {edit} on the flux of living cells."
        version = edit + 2
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri),
            [types.TextDocumentContentChangeWholeDocument("\n".join(lines))]))
        published = await _diagnostics(client, uri, version)
        latencies.append(published - sent - args.debounce_ms / 1000)
        await asyncio.sleep(0.2)
    warm = await _code_actions(client, uri, client.diagnostics[uri][1:ACTIONS])
    server = psutil.Process().children()[0]
    return {"first_diagnostics_seconds_cold": round(cold, 2),
            "edit_seconds": [round(x, 3) for x in latencies],
            "flags_published": len(client.diagnostics[uri]),
            "code_action_seconds_first": round(first, 2),
            "code_action_seconds_warm_median": round(statistics.median(warm), 3),
            "server_rss_mb": round(server.memory_info().rss / 2**20),
            "encoder_process_rss_mb": round(sum(p.memory_info().rss for p in server.children()) / 2**20)}


async def _diagnostics(client: LanguageClient, uri: str, version: int) -> float:
    """When the diagnostics of ``uri`` at ``version`` arrive."""
    while True:
        params = await asyncio.wait_for(client.wait_for_notification("textDocument/publishDiagnostics"), 300)
        if params.uri == uri and params.version == version:
            return time.perf_counter()


async def _code_actions(client: LanguageClient, uri: str, flags: list[types.Diagnostic]) -> list[float]:
    """The seconds each code action request on ``flags`` took (each must offer a citation)."""
    seconds = []
    for diagnostic in flags:
        start = time.perf_counter()
        found = await client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diagnostic.range, types.CodeActionContext([diagnostic])))
        seconds.append(time.perf_counter() - start)
        if not found or not found[0].title.startswith("Cite "):
            sys.exit(f"no citation suggested at {diagnostic.range}: {found}")
    return seconds


if __name__ == "__main__":
    sys.exit(main())
