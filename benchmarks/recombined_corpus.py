"""A benchmark corpus of distinct papers: paragraphs of different real papers recombined (issue 25).

    python benchmarks/recombined_corpus.py raw/recombined                 # 20 shards, seed 0
    python benchmarks/recombined_corpus.py raw/recombined --shards 40 --seed 1

A throughput benchmark on one shard's papers repeated lets content caches (pysbd's compiled
patterns, the anchor cache, a shard store) profit from repetition. This corpus is made of the real
papers the project's curate inputs read (params.yaml `curate.inputs`: the mirrored demo corpus,
after `citeworth run download`), through the project's own readers:

- Every synthetic paper takes `--paragraphs-per-paper` paragraphs, each from a different real paper,
  with its section, ordered by where it stood in its paper (introductions first).
- Its citations become unarXive `{{cite:KEY}}` placeholders with keys of its own (numbered in order
  of first citation, hashed with the paper's id, as unarXive's keys are hashes) and its bibliography
  carries the cited entries of every source paper under those keys, so every citation stays linked.
  Figure, table and formula references keep their text and become ref_spans.
- Its field of study, year and abstract come from its first source paper that has an abstract and
  a CiteWorth field with an arXiv category (the format's field scheme is arXiv's; Psychology has none).
- Paragraphs are drawn in passes over the shuffled distinct source paragraphs (one with an unlinked
  citation is left out): each is used once before any is used again. A corpus larger than the
  source material reuses paragraphs, each time in another paper, so no two papers repeat and no
  paragraph with citations repeats verbatim (its keys differ); a paragraph without citations does
  repeat. The manifest says how many distinct source paragraphs there were and how often each was
  used (`source_paragraph_uses`); `--distinct-only` caps the corpus at one use of each. The demo
  corpus (demo-v2: 173 papers, 11,007 distinct paragraphs, 3,494 with citations) fills 331 papers of
  30 paragraphs that way; the default 20 x 300 papers use each paragraph about 16 times.

Output: one unarXive JSONL shard per file (`arXiv_src_recombined_NNN.jsonl`, the unarxive reader's
layout) and MANIFEST.json, written last; a rerun with the same settings reuses the corpus.
``write_corpus`` is the entry point for other benchmarks: it returns the `curate.inputs` that make
`citeworth run curate` read the corpus.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import json
import os
import random
import shutil
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from pathlib import Path

from citeworth.core.paper import BibEntry, Paper, Paragraph
from citeworth.sources import BadRecord, input_shards, read_shard
from citeworth.sources.base import InputSpec
from citeworth.text.fields import assign_field

ROOT = Path(__file__).resolve().parents[1]
SHARDS = 20
PAPERS_PER_SHARD = 300
PARAGRAPHS_PER_PAPER = 30
SHARD_NAME = "arXiv_src_recombined_{:03d}.jsonl"
MANIFEST = "MANIFEST.json"
FORMAT_VERSION = 1  # bump when the files written change, so an old corpus is not reused
# An arXiv category for each CiteWorth field that has one (text/fields.py maps them back).
ARXIV_CATEGORY = {
    "Biology": "q-bio.QM", "Medicine": "physics.med-ph", "Engineering": "eess.SP",
    "Chemistry": "physics.chem-ph", "Computer Science": "cs.CL", "Materials Science": "cond-mat.mtrl-sci",
    "Economics": "econ.GN", "Mathematics": "math.NA", "Physics": "physics.gen-ph",
}
_ID_NAMES = {"doi": "doi", "arxiv": "arxiv_id", "pmid": "pubmed_id", "pmcid": "pmc_id", "s2": "s2"}


@dataclasses.dataclass(frozen=True)
class Donor:
    """What a synthetic paper takes from its first source paper that has an arXiv category."""

    category: str | None
    title: str
    abstract: str
    year: int | None

    @property
    def usable(self) -> bool:
        return bool(self.category and self.abstract)


@dataclasses.dataclass(frozen=True)
class SourceParagraph:
    source: int  # index of its real paper in the donors list
    position: float  # where it stood in its paper, 0 (first) .. 1
    paragraph: Paragraph
    bib: dict[str, BibEntry]  # the entries its citations link


@dataclasses.dataclass
class SourceMaterial:
    donors: list[Donor]
    paragraphs: list[SourceParagraph]
    counts: Counter  # papers read, paragraphs seen, duplicates and unlinked ones left out


def read_source_material(inputs: Sequence[InputSpec]) -> SourceMaterial:
    """Every distinct paragraph of the real papers ``inputs`` name, with its linked bibliography."""
    material = SourceMaterial([], [], Counter())
    seen: set[str] = set()
    for shard in input_shards(inputs):
        for paper in read_shard(shard):
            if isinstance(paper, BadRecord):
                material.counts["bad_records"] += 1
                continue
            _add_paper(material, paper, seen)
    return material


def _add_paper(material: SourceMaterial, paper: Paper, seen: set[str]) -> None:
    decision = assign_field(paper.metadata.get("field_scheme"), paper.fields_of_study,
                            venue=paper.metadata.get("venue_id"))
    source = len(material.donors)
    material.donors.append(Donor(ARXIV_CATEGORY.get(decision.field), paper.title or "",
                                 paper.abstract or "", paper.metadata.get("year")))
    material.counts["papers"] += 1
    for index, paragraph in enumerate(paper.paragraphs):
        material.counts["paragraphs"] += 1
        if paragraph.text in seen:
            material.counts["duplicate_paragraphs"] += 1
            continue
        seen.add(paragraph.text)
        if any(span.ref_id not in paper.bib_entries for span in paragraph.cite_spans):
            material.counts["unlinked_citation_paragraphs"] += 1
            continue
        bib = {span.ref_id: paper.bib_entries[span.ref_id] for span in paragraph.cite_spans}
        material.paragraphs.append(SourceParagraph(source, index / max(len(paper.paragraphs) - 1, 1),
                                                   paragraph, bib))


def plan_papers(paragraphs: Sequence[SourceParagraph], papers: int, per_paper: int, seed: int,
                distinct_only: bool = False) -> Iterator[list[SourceParagraph]]:
    """``papers`` lists of ``per_paper`` paragraphs, each of a different source paper, drawn in
    shuffled passes over ``paragraphs`` (each used once a pass; one passed over because its paper
    is already in the list waits at the head of the queue). With ``distinct_only`` it stops when
    the first pass runs out."""
    sources = len({p.source for p in paragraphs})
    if per_paper > sources:
        raise ValueError(f"{per_paper} paragraphs per paper need as many source papers; there are {sources}")
    rng = random.Random(seed)
    queue: deque[SourceParagraph] = deque()
    passes = 0
    for _ in range(papers):
        chosen: dict[int, SourceParagraph] = {}
        passed_over = []
        while len(chosen) < per_paper:
            if not queue:
                if passes and distinct_only:
                    return
                queue.extend(rng.sample(list(paragraphs), len(paragraphs)))
                passes += 1
            part = queue.popleft()
            if part.source in chosen:
                passed_over.append(part)
            else:
                chosen[part.source] = part
        queue.extendleft(reversed(passed_over))
        yield sorted(chosen.values(), key=lambda p: p.position)


def render_paper(paper_id: str, parts: Sequence[SourceParagraph], donors: Sequence[Donor]) -> dict:
    """An unarXive record of ``parts``: citations as placeholders with the paper's own keys."""
    donor = next((donors[p.source] for p in parts if donors[p.source].usable), None)
    if donor is None:
        raise ValueError(f"{paper_id}: none of its source papers has an abstract and a field with an "
                         "arXiv category")
    bib: dict[str, dict] = {}
    refs: dict[str, dict] = {}
    body = [_render_paragraph(paper_id, part, bib, refs) for part in parts]
    return {
        "paper_id": paper_id,
        "metadata": {"id": paper_id, "title": f"{donor.title} (recombined {paper_id})",
                     "categories": donor.category, "abstract": donor.abstract, "doi": None,
                     "journal-ref": None, "update_date": f"{donor.year or 2022}-01-01"},
        "abstract": {"section": "Abstract", "text": donor.abstract},
        "body_text": body,
        "bib_entries": bib,
        "ref_entries": refs,
    }


def _render_paragraph(paper_id: str, part: SourceParagraph, bib: dict, refs: dict) -> dict:
    """The paragraph as an unarXive body block; its citations' entries join ``bib`` under the
    paper's next keys (each source paper gives one paragraph, so its entries are new keys)."""
    paragraph, keys = part.paragraph, {}
    spans = sorted([(s.start, s.end, "cite", s.ref_id) for s in paragraph.cite_spans]
                   + [(start, end, kind, None) for start, end, kind in paragraph.ref_spans])
    pieces, cites, ref_spans, cursor, length = [], [], [], 0, 0
    for start, end, kind, ref_id in spans:
        pieces.append(paragraph.text[cursor:start])
        length += start - cursor
        if kind == "cite":
            if ref_id not in keys:
                keys[ref_id] = _cite_key(paper_id, len(bib))
                bib[keys[ref_id]] = _bib_entry(part.bib[ref_id])
            key = keys[ref_id]
            surface = f"{{{{cite:{key}}}}}"
            cites.append({"start": length, "end": length + len(surface), "text": surface, "ref_id": key})
        else:
            surface, ref = paragraph.text[start:end], f"r{len(refs)}"
            refs[ref] = {"type": kind}
            ref_spans.append({"start": length, "end": length + len(surface), "text": surface, "ref_id": ref})
        pieces.append(surface)
        length += len(surface)
        cursor = end
    pieces.append(paragraph.text[cursor:])
    return {"section": paragraph.section, "sec_number": None, "sec_type": "section",
            "content_type": "paragraph", "text": "".join(pieces), "cite_spans": cites, "ref_spans": ref_spans}


def _cite_key(paper_id: str, number: int) -> str:
    """The paper's ``number``-th citation key, hashed as unarXive's keys are (40 hex digits)."""
    return hashlib.sha1(f"{paper_id}/{number}".encode()).hexdigest()


def _bib_entry(entry: BibEntry) -> dict:
    raw = entry.raw or ". ".join(str(x) for x in (", ".join(entry.authors), entry.title, entry.year) if x)
    return {"bib_entry_raw": raw or entry.ref_id,
            "ids": {_ID_NAMES[kind]: value for kind, value in entry.ids.items()}}


def write_corpus(dest_dir: str | Path, shards: int = SHARDS, seed: int = 0,
                 papers_per_shard: int = PAPERS_PER_SHARD, paragraphs_per_paper: int = PARAGRAPHS_PER_PAPER,
                 inputs: Sequence[InputSpec] | None = None, distinct_only: bool = False) -> dict:
    """Write the corpus under ``dest_dir`` (kept if already written with these settings); returns
    the manifest: counts, and `curate_inputs` / `curate_overrides` that point `citeworth run curate`
    at it (relative paths resolve against the working directory, as params.yaml's do)."""
    dest = Path(dest_dir)
    inputs = list(inputs) if inputs is not None else _project_inputs()
    settings = {"format_version": FORMAT_VERSION, "shards": shards, "seed": seed,
                "papers_per_shard": papers_per_shard, "paragraphs_per_paper": paragraphs_per_paper,
                "distinct_only": distinct_only, "inputs": [dataclasses.asdict(spec) for spec in inputs]}
    if (manifest := _existing_manifest(dest)) and manifest["settings"] == settings:
        return manifest
    material = read_source_material(inputs)
    plans = plan_papers(material.paragraphs, shards * papers_per_shard, paragraphs_per_paper, seed,
                        distinct_only)
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    uses: Counter = Counter()
    papers = _write_shards(staging, plans, shards, papers_per_shard, seed, material.donors, uses)
    manifest = _manifest(dest, settings, material, papers, uses)
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(staging, dest)
    return manifest


def _write_shards(folder: Path, plans: Iterator[list[SourceParagraph]], shards: int, per_shard: int,
                  seed: int, donors: Sequence[Donor], uses: Counter) -> list[int]:
    """Papers written to each shard; a shard the plans do not reach (``distinct_only``) is not written."""
    counts = []
    for shard in range(shards):
        batch = list(itertools.islice(plans, per_shard))
        if not batch:
            break
        with open(folder / SHARD_NAME.format(shard), "w", encoding="utf-8") as out:
            for number, parts in enumerate(batch):
                paper_id = f"recombined-{seed}-{shard:03d}-{number:05d}"
                out.write(json.dumps(render_paper(paper_id, parts, donors)) + "\n")
                uses.update(id(part) for part in parts)
        counts.append(len(batch))
    return counts


def _manifest(dest: Path, settings: dict, material: SourceMaterial, papers: list[int], uses: Counter) -> dict:
    cited = sum(1 for p in material.paragraphs if p.paragraph.cite_spans)
    uncited = {id(p) for p in material.paragraphs if not p.paragraph.cite_spans}
    # the only verbatim repeats: a paragraph with citations differs by its keys in every paper
    repeats = sum(n - 1 for key, n in uses.items() if key in uncited)
    release = f"recombined-{settings['seed']}"
    inputs = [{"reader": "unarxive", "glob": str(dest / "*.jsonl"), "release": release}]
    return {
        "settings": settings,
        "shards": len(papers),
        "papers": sum(papers),
        "paragraphs": sum(uses.values()),
        "source": {**dict(sorted(material.counts.items())), "distinct_paragraphs": len(material.paragraphs),
                   "distinct_paragraphs_with_citations": cited},
        "source_paragraph_uses": {"unused": len(material.paragraphs) - len(uses),
                                  "max": max(uses.values(), default=0),
                                  "mean": round(sum(uses.values()) / max(len(material.paragraphs), 1), 2),
                                  "verbatim_repeats": repeats},
        "curate_inputs": inputs,
        "curate_overrides": ["-S", f"inputs={json.dumps(inputs)}"],
    }


def _existing_manifest(dest: Path) -> dict | None:
    try:
        return json.loads((dest / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def _project_inputs() -> list[InputSpec]:
    """params.yaml's `curate.inputs` (the real papers), read from the project root."""
    from citeworth.stages import stage_params

    return list(stage_params("curate", path=ROOT / "params.yaml").inputs)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dest", type=Path, help="folder to write the shards and MANIFEST.json into")
    parser.add_argument("--shards", type=int, default=SHARDS, help=f"shard files (default {SHARDS})")
    parser.add_argument("--seed", type=int, default=0, help="random seed: the same seed, the same corpus")
    parser.add_argument("--papers-per-shard", type=int, default=PAPERS_PER_SHARD,
                        help=f"synthetic papers per shard (default {PAPERS_PER_SHARD})")
    parser.add_argument("--paragraphs-per-paper", type=int, default=PARAGRAPHS_PER_PAPER,
                        help=f"paragraphs per paper, each from a different real paper "
                             f"(default {PARAGRAPHS_PER_PAPER})")
    parser.add_argument("--distinct-only", action="store_true",
                        help="use every source paragraph at most once (the corpus may come out smaller)")
    args = parser.parse_args(argv)
    dest = args.dest.resolve()
    os.chdir(ROOT)  # params.yaml's input globs are relative to the project root
    manifest = write_corpus(dest, args.shards, args.seed, args.papers_per_shard, args.paragraphs_per_paper,
                            distinct_only=args.distinct_only)
    print(json.dumps({k: v for k, v in manifest.items() if k != "settings"}, indent=2))


if __name__ == "__main__":
    main()
