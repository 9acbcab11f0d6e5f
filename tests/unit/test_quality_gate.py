"""The quality gate on small datasets written here: clean passes, each injected fault is named."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from citeworth.cli import main
from citeworth.core.errors import StageFailed
from citeworth.core.io import write_jsonl
from citeworth.core.paper import CitationSpan, Paper, Paragraph
from citeworth.core.params import ParamsError
from citeworth.quality.checkpoints import run_suites
from citeworth.quality.config import ValidateParams
from citeworth.quality.gate import validate
from citeworth.quality.site import run_id_for
from citeworth.quality.suites import suites
from citeworth.quality.tables import raw_tables
from citeworth.sources import BadRecord
from citeworth.stages import stage_params

SPLIT_PAPERS = {"train": range(0, 8), "dev": range(8, 9), "test": range(9, 10)}


# The paths params.yaml gives (no defaults: dvc.yaml names them).
PATHS = dict(data_dir="data/citeworth", baseline_dir=None, curated_dir=None, site_dir="reports/quality/site",
             summary_path="reports/quality/summary.json")

def sample(text: str | None, cite: bool = False, **overrides) -> dict:
    record = {"text": text, "label": "check-worthy" if cite else "non-check-worthy", "original_text": text,
              "ref_ids": [["b1"]] if cite else None, "citation_text": ["[1]"] if cite else None}
    record.update(overrides)
    return record


def paragraph(paper_id, index, field, samples: list[dict], **overrides) -> dict:
    record = {"paper_id": paper_id, "section_idx": index, "section_title": "Introduction",
              "mag_field_of_study": [field], "original_text": " ".join(str(s["text"]) for s in samples),
              "samples": samples, "source": "test", "release": "t1", "shard": "s0"}
    record.update(overrides)
    return record


def clean_paragraphs(paper: int) -> list[dict]:
    field = ("Biology", "Physics")[paper % 2]
    return [paragraph(f"p{paper}", index, field, [
        sample(f"Paper {paper} paragraph {index} reports that wood frogs breed in choruses.", cite=True),
        sample(f"Paper {paper} paragraph {index} describes the ponds sampled in late winter."),
        sample(f"Paper {paper} paragraph {index} gives the water temperature of every pond."),
    ]) for index in range(2)]


def clean_dataset() -> dict[str, list[dict]]:
    return {split: [p for paper in papers for p in clean_paragraphs(paper)]
            for split, papers in SPLIT_PAPERS.items()}


def write_dataset(folder: Path, splits: dict[str, list[dict]]) -> None:
    for split, records in splits.items():
        write_jsonl(folder / f"{split}.jsonl", records)


def params_for(project: Path, **overrides) -> ValidateParams:
    values = {"data_dir": project / "data" / "citeworth", "baseline_dir": project / "data" / "baseline",
              "curated_dir": None, "site_dir": project / "reports" / "quality" / "site",
              "summary_path": project / "reports" / "quality" / "summary.json"}
    return ValidateParams(**{**values, **overrides})


def one_fault(paper_id: str, text: str | None, field: str = "Biology", **sample_overrides) -> dict:
    return paragraph(paper_id, 0, field, [sample(text, **sample_overrides)])


# Each fault in a paper of its own: (check that must fail, paper id, paragraph record).
FAULTS = [
    ("sentences.no_numeric_bracket", "f_numeric", one_fault("f_numeric", "Frogs breed in choruses [12].")),
    ("sentences.no_author_year", "f_year", one_fault("f_year", "Frogs breed in choruses (Smith, 2010).")),
    ("sentences.no_et_al", "f_etal", one_fault("f_etal", "Frogs breed in choruses as Smith et al. found.")),
    ("sentences.no_hanging_citation", "f_hanging", one_fault("f_hanging", "Frogs breed in ponds as in.")),
    ("sentences.no_cite_placeholder", "f_cite", one_fault("f_cite", "Frogs breed {{cite:0a1b}} in spring.")),
    ("sentences.no_latex_cite", "f_latex", one_fault("f_latex", r"Frogs breed \cite{smith} in choruses.")),
    ("sentences.no_unresolved_reference", "f_unres", one_fault("f_unres", "Frogs breed in [?] choruses.")),
    ("sentences.no_bibref", "f_bibref", one_fault("f_bibref", "Frogs breed BIBREF3 in choruses.")),
    ("sentences.no_empty_brackets", "f_empty", one_fault("f_empty", "Frogs breed () in choruses at night.")),
    ("sentences.no_space_before_stop", "f_space", one_fault("f_space", "Frogs breed in choruses at night .")),
    ("sentences.starts_with_capital", "f_lower", one_fault("f_lower", "frogs breed in choruses at night.")),
    ("sentences.ends_with_stop", "f_nostop", one_fault("f_nostop", "Frogs breed in choruses at night")),
    ("sentences.length_in_range", "f_short", one_fault("f_short", "Frogs breed.")),
    ("sentences.length_in_range", "f_long", one_fault("f_long", "Frogs " + "breed " * 400 + "again.")),
    ("sentences.text_present", "f_notext", one_fault("f_notext", None)),
    ("sentences.label_valid", "f_label", one_fault("f_label", "Frogs breed in choruses at dusk.", label="1")),
    ("sentences.label_matches_citations", "f_nocitation",
     one_fault("f_nocitation", "Frogs breed in choruses at night.", label="check-worthy")),
    ("sentences.field_valid", "f_field", one_fault("f_field", "Frogs breed in ponds at dusk.", "Sociology")),
    ("sentences.field_valid", "f_fields",
     paragraph("f_fields", 0, "Biology", [sample("Frogs breed in choruses at night.")],
               mag_field_of_study=["Biology", "Physics"])),
    ("sentences.field_present", "f_nofield",
     paragraph("f_nofield", 0, "Biology", [sample("Frogs breed in choruses at dusk.")],
               mag_field_of_study=[])),
    ("sentences.paper_id_not_blank", " ", one_fault(" ", "Frogs breed in choruses at night.")),
    ("sentences.section_idx_valid", "f_index",
     paragraph("f_index", -1, "Biology", [sample("Frogs breed in choruses at night.")])),
    ("paragraphs.has_sentences", "f_nosamples", paragraph("f_nosamples", 0, "Biology", [])),
]
# A soft check: warned about, never failing the gate.
FORMULA = one_fault("f_formula", "Frogs breed {{formula:9f8e}} times a year.")
LEAKED = paragraph("f_leak", 0, "Physics", [sample("A paper whose paragraphs sit in two splits is a leak.")])
SHARED_TEXT = "This very sentence occurs in both the train and the dev split."


def dirty_dataset() -> dict[str, list[dict]]:
    splits = clean_dataset()
    splits["train"] += [record for _, _, record in FAULTS] + [FORMULA]
    duplicate = paragraph("f_dup", 0, "Biology", [sample("A paragraph stored twice in the same split.")])
    shared = paragraph("f_shared_a", 0, "Physics", [sample(SHARED_TEXT)])
    splits["train"] += [duplicate, duplicate, LEAKED, shared]
    splits["test"].append({**LEAKED, "section_idx": 1,
                           "samples": [sample("The leaked paper's second paragraph, in test.")]})
    # Dev becomes all cite-worthy: its share leaves the [0.05, 0.8] bounds.
    splits["dev"] = [paragraph("f_shared_b", 0, "Biology", [sample(SHARED_TEXT, cite=True)]),
                     *[{**p, "samples": [{**s, **sample(s["text"], cite=True)} for s in p["samples"]]}
                       for p in splits["dev"]]]
    return splits


EXPECTED_FAILURES = {check for check, _, _ in FAULTS} | {
    "sentences.no_residual_marker", "paragraphs.paragraph_unique", "split_papers.paper_in_one_split",
    "split_identities.identity_in_one_split", "split_texts.text_in_one_split",
    "split_labels.cite_worthy_share_in_bounds", "split_fields.field_share_in_bounds",
}


@pytest.fixture(scope="module")
def dirty(tmp_path_factory):
    """One gate run, through the CLI, over a dataset carrying every fault at once:
    (error message, summary, project)."""
    project = tmp_path_factory.mktemp("dirty")
    write_dataset(project / "data" / "citeworth", dirty_dataset())
    (project / "params.yaml").write_text(
        "validate:\n  data_dir: data/citeworth\n  baseline_dir: null\n  curated_dir: null\n"
        "  site_dir: reports/quality/site\n"
        "  summary_path: reports/quality/summary.json\n")
    overrides = ["examples=50", "max_cross_split_duplicates=0.0", "field_share={min: 0.0, max: 0.9}"]
    stderr = io.StringIO()
    with contextlib.chdir(project), contextlib.redirect_stderr(stderr):
        code = main(["run", "validate", *[arg for item in overrides for arg in ("-S", item)]])
    assert code == 1, stderr.getvalue()
    summary = json.loads((project / "reports" / "quality" / "summary.json").read_text())
    prefix = "citeworth: stage validate failed: "
    message = stderr.getvalue()
    return message[message.index(prefix) + len(prefix):], summary, project


def failure_blocks(message: str) -> dict[str, str]:
    """The message's failures by check name: each block is its headline and example lines."""
    blocks: dict[str, str] = {}
    name = None
    for line in message.splitlines()[1:]:
        if not line.startswith(" "):
            name = line.split(":", 1)[0]
            blocks[name] = line
        else:
            blocks[name] += "\n" + line
    return blocks


def test_the_gate_fails_exactly_the_injected_checks(dirty):
    message, summary, _ = dirty
    assert summary["success"] is False
    assert set(summary["critical_failures"]) == EXPECTED_FAILURES
    assert set(failure_blocks(message)) == EXPECTED_FAILURES
    assert message.startswith(f"{len(EXPECTED_FAILURES)} critical expectation(s) failed")


@pytest.mark.parametrize("check, paper_id", [(check, paper_id) for check, paper_id, _ in FAULTS],
                         ids=[f"{check}-{paper_id.strip() or 'blank'}" for check, paper_id, _ in FAULTS])
def test_each_fault_is_named_with_its_row(dirty, check, paper_id):
    block = failure_blocks(dirty[0])[check]
    assert "violated by" in block
    assert f"paper_id={paper_id!r}" in block


def test_split_faults_name_their_rows(dirty):
    blocks = failure_blocks(dirty[0])
    assert "paper_id='f_leak' split='test'" in blocks["split_papers.paper_in_one_split"]
    assert "paper_id='f_leak' split='train'" in blocks["split_papers.paper_in_one_split"]
    assert SHARED_TEXT in blocks["split_texts.text_in_one_split"]
    assert "split='dev' cite_worthy_share=1.0" in blocks["split_labels.cite_worthy_share_in_bounds"]
    assert "paper_id='f_dup' section_idx=0" in blocks["paragraphs.paragraph_unique"]
    counts = dirty[1]["expectations"]["split_papers.paper_in_one_split"]
    assert counts["unexpected_count"] == 2 and counts["success"] is False


def test_failures_json_keeps_the_example_rows_summary_json_leaves_out(dirty):
    _, summary, project = dirty
    failures = json.loads((project / "reports" / "quality" / "site" / "failures.json").read_text())
    assert set(failures) == EXPECTED_FAILURES | set(summary["warnings"])
    leak = failures["split_papers.paper_in_one_split"]
    assert leak["severity"] == "critical" and leak["unexpected_count"] == 2 and leak["why"]
    shown = {(row["paper_id"], row["split"]) for row in leak["examples"]}
    assert shown >= {("f_leak", "test"), ("f_leak", "train")}
    assert "examples" not in summary["expectations"]["split_papers.paper_in_one_split"]


def test_soft_expectations_only_warn(dirty):
    summary = dirty[1]
    assert summary["warnings"] == ["sentences.no_other_placeholder"]
    assert summary["expectations"]["sentences.no_other_placeholder"]["severity"] == "soft"


def test_failure_still_writes_data_docs_and_a_missing_baseline_is_reported(dirty):
    _, summary, project = dirty
    assert (project / "reports" / "quality" / "site" / "index.html").is_file()
    assert summary["baseline"]["available"] is False
    assert summary["markers_removed_percent"]["baseline"] is None


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A clean dataset and a baseline with hanging markers, validated once: (project, result)."""
    project = tmp_path_factory.mktemp("clean")
    write_dataset(project / "data" / "citeworth", clean_dataset())
    baseline = clean_dataset()
    for record in baseline["train"][:3]:  # the spans-only baseline leaves a hanging "shown by."
        record["samples"][0] = sample(f"Paper {record['paper_id']} shows this as shown by.", cite=True)
    write_dataset(project / "data" / "baseline", baseline)
    return project, validate(params_for(project))


def test_a_clean_dataset_passes_with_docs_and_side_by_side_marker_rates(clean):
    project, result = clean
    assert result["success"] is True and result["warnings"] == []
    assert (project / "reports" / "quality" / "site" / "index.html").is_file()
    summary = json.loads((project / "reports" / "quality" / "summary.json").read_text())
    assert all(entry["success"] for entry in summary["expectations"].values())
    pages = list((project / "reports" / "quality" / "site" / "validations").rglob("*.html"))
    assert len(pages) == len(summary["rows"]) == 9  # one per table, the baseline's two included
    assert summary["baseline"]["available"] is True
    total = sum(len(p["samples"]) for split in clean_dataset().values() for p in split)
    hanging = summary["residual_markers"]["no_hanging_citation"]
    assert hanging["ours_percent"] == 0.0
    assert hanging["baseline_percent"] == pytest.approx(100 * 3 / total, abs=1e-4)
    assert summary["markers_removed_percent"] == {"ours": 100.0,
                                                  "baseline": pytest.approx(100 - 100 * 3 / total, abs=1e-4)}


def test_reruns_are_byte_identical_and_leave_no_stale_pages(clean):
    project = clean[0]
    stale = project / "reports" / "quality" / "site" / "validations" / "stale.html"
    stale.write_text("from an earlier run")
    params = params_for(project, summary_path=project / "again" / "summary.json")
    validate(params)
    assert params.summary_path.read_bytes() == (project / "reports" / "quality" / "summary.json").read_bytes()
    assert not stale.exists()
    assert not [p for p in (project / "reports" / "quality").iterdir() if p.name.startswith(".")]


def _site_bytes(project: Path) -> dict[str, bytes]:
    site = project / "reports" / "quality" / "site"
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def test_data_docs_of_the_same_data_are_byte_identical_in_another_folder_at_another_time(clean, tmp_path):
    project = clean[0]
    shutil.copytree(project / "data", tmp_path / "data")
    validate(params_for(tmp_path))
    site = _site_bytes(tmp_path)
    assert site == _site_bytes(project)
    run_dirs = {Path(name).parts[2:4] for name in site if name.startswith("validations/")}
    [(run_name, run_time)] = run_dirs  # one run, named by the data and dated at the epoch
    assert run_name.startswith("citeworth-validate-") and run_time == "19700101T000000.000000Z"
    assert b"?d=" not in site["index.html"]


def test_the_validation_run_is_named_by_the_validated_data():
    frame = pd.DataFrame({"text": ["A sentence.", "Another one."], "n": [1, None]})
    name = run_id_for({"sentences": frame}).run_name
    assert run_id_for({"sentences": frame.copy()}).run_name == name
    assert run_id_for({"sentences": frame.assign(n=[1, 2])}).run_name != name
    assert run_id_for({"paragraphs": frame}).run_name != name


def test_an_empty_split_fails_the_gate(tmp_path):
    splits = clean_dataset()
    splits["train"] += splits.pop("dev")
    splits["dev"] = []
    write_dataset(tmp_path / "data" / "citeworth", splits)
    with pytest.raises(StageFailed, match=r"split_labels.all_splits_present.*'dev'"):
        validate(params_for(tmp_path))


def test_a_missing_split_file_is_a_clear_error(tmp_path):
    write_dataset(tmp_path / "data" / "citeworth", {"train": clean_dataset()["train"]})
    with pytest.raises(StageFailed, match=r"missing in .*: dev.jsonl, test.jsonl \(run the assemble stage"):
        validate(params_for(tmp_path))


def test_a_corrupt_line_is_named(tmp_path):
    write_dataset(tmp_path / "data" / "citeworth", clean_dataset())
    with open(tmp_path / "data" / "citeworth" / "dev.jsonl", "a") as handle:
        handle.write("{not json\n")
    with pytest.raises(StageFailed, match=r"dev.jsonl:3 is not JSON"):
        validate(params_for(tmp_path))


def test_soft_checks_downgrade_named_checks_of_their_source_and_reject_unknown_names(tmp_path):
    soft = {"demo": ["split_fields.field_share_in_bounds"]}
    params = ValidateParams(**PATHS, source="demo", soft_checks=soft)
    found = suites(params, raw=False)["split_fields"].expectations
    assert [e.meta["severity"] for e in found] == ["soft"]
    other = params.model_copy(update={"source": "s2orc_legacy"})
    found = suites(other, raw=False)["split_fields"].expectations
    assert [e.meta["severity"] for e in found] == ["critical"]
    with pytest.raises(ParamsError, match="soft_checks.s2_api names unknown check.*sentences.no_such_check"):
        suites(ValidateParams(**PATHS, soft_checks={"s2_api": ["sentences.no_such_check"]}), raw=False)


@pytest.mark.parametrize("source,severity", [("demo", "soft"), ("arxiv_s3", "critical"),
                                             ("s2_api", "critical")])
def test_the_demo_field_share_warning_stays_with_the_demo_source(tmp_path, source, severity):
    """params.yaml softens the field-share check for the demo corpus only: a real source's
    dataset (download.source switched, nothing else) gates on it."""
    profile = tmp_path / "profile.yaml"
    params_yaml = Path(__file__).resolve().parents[2] / "params.yaml"
    profile.write_text(f"extends: {params_yaml}\ndownload: {{source: {source}}}\n")
    params = stage_params("validate", path=profile)
    found = suites(params, raw=False)["split_fields"].expectations
    assert [e.meta["check"] for e in found] == ["field_share_in_bounds"]
    assert [e.meta["severity"] for e in found] == [severity]


def raw_paper(paper_id: str, text: str, spans: list[tuple[int, int, str]]) -> Paper:
    cite_spans = tuple(CitationSpan(start, end, span_text) for start, end, span_text in spans)
    return Paper(paper_id, "A title", ("Biology",), [Paragraph(text, "Introduction", cite_spans)], shard="s0")


def test_raw_suite_checks_span_offsets_and_the_quarantine_rate(tmp_path):
    text = "Frogs breed in choruses [1]."
    items = [("unarxive", raw_paper("good", text, [(24, 27, "[1]")])),
             ("unarxive", raw_paper("past_end", text, [(24, 40, "[1]")])),
             ("unarxive", raw_paper("negative", text, [(-2, 3, "Fr")])),
             ("unarxive", raw_paper("empty", text, [(5, 5, "")])),
             ("unarxive", raw_paper("shifted", text, [(23, 26, "[1]")])),
             ("unarxive", BadRecord("s0", "line 7", "missing_key:body_text", "no body_text", "{}"))]
    tables = raw_tables(items)
    by_name = suites(ValidateParams(**PATHS), raw=True)
    found = run_suites(tables, {name: by_name[name] for name in tables}, tmp_path / "site", examples=10)
    failed = {o.name: o for o in found if not o.success}
    assert set(failed) == {"raw_spans.span_ends_inside", "raw_spans.span_starts_inside",
                           "raw_spans.span_not_empty", "raw_spans.span_text_matches",
                           "raw_records.record_readable"}
    assert [e["paper_id"] for e in failed["raw_spans.span_ends_inside"].examples] == ["past_end"]
    assert [e["paper_id"] for e in failed["raw_spans.span_starts_inside"].examples] == ["negative"]
    assert [e["paper_id"] for e in failed["raw_spans.span_not_empty"].examples] == ["empty"]
    assert {e["paper_id"] for e in failed["raw_spans.span_text_matches"].examples} >= {"shifted"}
    assert failed["raw_records.record_readable"].examples[0]["bad_reason"] == "missing_key:body_text"
