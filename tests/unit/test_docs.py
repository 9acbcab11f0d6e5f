"""The documentation site: its generated reference pages are current (as test_pipeline_graph.py holds
dvc.yaml's code deps to the imports), it builds with ``mkdocs build --strict`` (no broken link or
anchor, no page outside the nav), the README keeps to its shape, and the hand-written pages keep to
the code (``citeworth/docs/drift.py``: each kind of drift has a test that its check catches it)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from citeworth import cli
from citeworth.core.params import describe
from citeworth.docs import drift
from citeworth.docs import environment as docs_environment
from citeworth.docs import reference as docs_reference
from citeworth.docs import study_results as docs_study
from citeworth.stages import STAGES, params_class, stage_function

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return docs_reference.generated()


def test_the_generated_pages_are_current(generated):
    stale = docs_reference.stale(generated)
    assert stale == [], f"stale: {', '.join(map(str, stale))}; run {docs_reference.REGENERATE}"


def test_the_site_builds_strict(tmp_path):
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                           cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stderr[-4000:]
    assert (tmp_path / "reference" / "cli" / "index.html").is_file()


def test_the_cli_page_has_every_command_and_option(generated):
    page = generated[Path("docs/reference/cli.md")]
    parsers = docs_reference.command_parsers()
    assert {parser.prog for parser in parsers} >= {f"citeworth {name}" for name in ["run", *cli.TOOLS]}
    assert "citeworth cluster up" in {parser.prog for parser in parsers}  # a tool's own subcommands
    for parser in parsers:
        assert f"\n## {parser.prog}\n" in page
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction):
                assert f"`{', '.join(action.option_strings) or action.dest}`" in page, (parser.prog, action)
    assert str(ROOT) not in page  # no checkout's own path


def test_a_tool_parser_is_taken_before_it_parses_and_the_patch_is_undone():
    original = argparse.ArgumentParser.parse_args
    parser = docs_reference.tool_parser("check")
    assert parser.prog == "citeworth check"
    assert "--suggest" in parser._option_string_actions
    assert argparse.ArgumentParser.parse_args is original


def test_the_params_page_has_every_stage_and_key(generated):
    page = generated[Path("docs/reference/params.md")]
    sections = {chunk.partition("\n")[0]: chunk for chunk in page.split("\n## ")[1:]}
    assert list(sections) == list(STAGES)
    for stage in STAGES:
        for key in describe(params_class(stage_function(stage))):
            assert f"| `{key.path}` |" in sections[stage], (stage, key.path)


def test_the_dvc_pages_have_every_stage_and_output(generated):
    stages = docs_reference.dvc_stages()
    assert {"download", "curate@baseline", "report"} <= {stage["name"] for stage in stages}
    stages_page = generated[Path("docs/reference/dvc-stages.md")]
    outputs_page = generated[Path("docs/reference/outputs.md")]
    picture = generated[Path("docs/assets/pipeline.svg")]
    for stage in stages:
        assert f"\n## {stage['name']}\n" in stages_page
        assert f">{stage['name'].partition('@')[0]}</text>" in picture
        for out in stage["outs"]:
            assert f"| `{out['path']}` |" in outputs_page


def test_every_results_file_has_a_page_in_the_nav(generated):
    nav = generated[Path("mkdocs.yml")]
    for path in docs_reference.results_files():
        page = generated[Path(f"docs/reference/benchmarks/{path.stem}.md")]
        assert f"reference/benchmarks/{path.stem}.md" in nav
        command = json.loads(path.read_text(encoding="utf-8")).get("command")
        if command:
            assert command.strip() in page


def test_every_deviation_variant_is_on_its_page(generated):
    page = generated[Path("docs/reference/deviation-figures.md")]
    variants = json.loads((ROOT / "docs" / "deviations.json").read_text(encoding="utf-8"))["variants"]
    assert all(f"| `{name}` |" in page for name in variants)


def test_the_readme_is_short_and_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    first_block = re.search(r"```\w*\n(.*?)```", text, re.S).group(1)
    assert first_block.splitlines() == [
        "make demo   # set up, then run the main job on the embedded default (demo corpus, small encoder)",
        "make test   # set up, then run the linters and the whole test suite"]
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")  # CI builds the docs


def test_the_study_page_says_when_make_study_was_resumed_not_run_from_a_fresh_clone():
    curation = {"papers_read": 10, "shards": 1, "papers_kept": 5, "sentences": 50, "cpu_s": 1.0,
                "papers_per_cpu_s": 10.0, "ratio_to_demo": 1.0, "no_fields_of_study_share": 0.0}
    fresh = {"fresh_clone": True, "wall_s": 4800, "cpu_s": 9000, "returncode": 0,
             "load_average_before": [0.1], "load_average_after": [1.9]}
    page = docs_study._cost({"make_study": fresh, "curation": curation})
    assert "from a fresh clone: **80.0 minutes**" in page
    resumed = {"fresh_clone": False, "wall_s": 900, "cpu_s": 1000, "returncode": 0, "commit": "a" * 40,
               "failed_before": {"silver": {"returncode": 143, "wall_s": 1412}}}
    page = docs_study._cost({"make_study": resumed, "curation": curation})
    assert "**Not a fresh-clone time.**" in page and "silver failed (exit 143 after 23.5 minutes)" in page
    assert "from a fresh clone:" not in page


def test_the_study_page_sets_gpu_rows_beside_the_cpu_ones_and_marks_a_stopped_model(tmp_path):
    study = {"table4": {"context": {"f1": 0.6445}, "solo": {"f1": 0.66}}}
    assert docs_study._gpu(study, tmp_path) == ""  # no GPU run: no section
    done = {"status": "done", "label": "MiniLM-Ctx", "precision": 0.65, "recall": 0.78, "f1": 0.7115,
            "f1_ci": [0.7007, 0.7223], "roc_auc": 0.874, "pr_auc": 0.777, "train_seconds": 270}
    gpu = {"command": "python benchmarks/study_gpu.py --seeds 1", "date": "2026-11-27", "commit": "b" * 40,
           "device": "NVIDIA H200", "machine": {"torch": "2.11"}, "note": "One seed.",
           "models": {"context": done, "solo": {"status": "stopped at the time limit"}}}
    (tmp_path / docs_study.GPU_RESULTS).parent.mkdir(parents=True)
    (tmp_path / docs_study.GPU_RESULTS).write_text(json.dumps(gpu), encoding="utf-8")
    page = docs_study._gpu(study, tmp_path)
    assert ("| MiniLM-Ctx (`context`) | done | 65.00 | 78.00 | **71.15** | 70.1–72.2 | 87.4 | 77.7 | 4.5 min "
            "| 64.45 |") in page
    assert "| `solo` | stopped at the time limit | – | – | – | – | – | – | – | 66.00 |" in page
    assert "tested on the same test split." in page


def test_the_study_page_says_when_the_gpu_rows_come_from_an_earlier_test_split(tmp_path):
    study = {"table4": {"context": {"f1": 0.65, "test_sentences": 13_000}}}
    gpu = {"command": "python benchmarks/study_gpu.py", "date": "2026-11-27", "commit": "b" * 40,
           "device": "NVIDIA H200", "machine": {"torch": "2.11"}, "note": "One seed.",
           "models": {"context": {"status": "done", "label": "MiniLM-Ctx", "precision": 0.65, "recall": 0.78,
                                  "f1": 0.71, "f1_ci": [0.70, 0.72], "roc_auc": 0.87, "pr_auc": 0.78,
                                  "train_seconds": 270, "test_sentences": 10_633}}}
    (tmp_path / docs_study.GPU_RESULTS).parent.mkdir(parents=True)
    (tmp_path / docs_study.GPU_RESULTS).write_text(json.dumps(gpu), encoding="utf-8")
    page = docs_study._gpu(study, tmp_path)
    assert ("**the test split of an earlier build of the study** (10,633 sentences; Table 4's has 13,000)"
            in page)
    assert "the same test split" not in page


def test_a_figure_span_is_rewritten_from_its_value_and_an_unknown_one_names_its_page():
    text = "takes <!-- figure: demo-time -->about 12 minutes<!-- /figure --> on 2 cores"
    assert docs_reference.with_figures(text, {"demo-time": "13 min 05 s"}, "README.md") == \
        "takes <!-- figure: demo-time -->13 min 05 s<!-- /figure --> on 2 cores"
    with pytest.raises(KeyError, match="README.md: no figure 'demo-tim'"):
        docs_reference.with_figures(text.replace("demo-time", "demo-tim"), {"demo-time": "1"}, "README.md")


def test_the_pages_give_make_demo_s_time_from_the_fresh_clone_run(generated):
    """The README's first command is timed by benchmarks/demo_phases.py --fresh; no page types it."""
    runs = json.loads(docs_reference.DEMO_PHASES.read_text(encoding="utf-8"))
    minutes = docs_reference._minutes(runs[docs_reference.FRESH_CLONE]["fresh_clone_s"])
    for page in ("README.md", "docs/getting-started.md"):
        assert minutes in generated[Path(page)]
        spans = docs_reference.FIGURE.findall(generated[Path(page)])
        assert {name for _, name, _, _ in spans} & {"demo-time", "demo-phases"}
    assert "| MiniLM-Ctx |" in generated[Path("docs/researchers/demo-results.md")]
    typed = re.compile(r"\b(?:about|takes|in) \d+ minutes|\d+ min \d+ s")
    for page in docs_reference.DEMO_TIME_PAGES:
        outside = docs_reference.FIGURE.sub("", generated[Path(page)])
        assert not typed.findall(outside), f"{page} types a demo time outside a figure span"


# -- pages that keep to the code (citeworth/docs/drift.py) ------------------------------------------


def _pages(generated: dict[Path, str]) -> dict[Path, str]:
    """Every page as `make docs` builds it: the README and the site's pages, figures written in."""
    paths = [Path("README.md"), *(path.relative_to(ROOT) for path in sorted((ROOT / "docs").rglob("*.md")))]
    return {path: generated.get(path) or (ROOT / path).read_text(encoding="utf-8") for path in paths}


def test_every_page_keeps_to_the_code(generated):
    problems = [problem for path, text in _pages(generated).items()
                for problem in drift.problems(str(path), text, docs_reference.is_generated(text))]
    assert problems == []


def test_a_list_must_name_every_member_the_code_has():
    old = "<!-- list: stages -->download → curate → assemble → validate → train → report<!-- /list -->"
    [problem] = drift.list_problems("p.md", old)
    assert "works" in problem and "scaling" in problem and "pdf2tei" in problem
    every = "<!-- list: models-dag -->" + ", ".join(drift.models_dag_stages()) + "<!-- /list -->"
    assert drift.list_problems("p.md", every) == []
    assert "unknown list kind" in drift.list_problems("p.md", "<!-- list: stage -->x<!-- /list -->")[0]


def test_a_list_of_stages_outside_a_span_is_reported():
    paragraph = "The chain: download → curate → assemble → validate → train → report, domains and transfer."
    assert drift.unchecked_lists("p.md", paragraph)
    assert drift.unchecked_lists("p.md", f"<!-- list: stages -->{paragraph}<!-- /list -->") == []
    assert drift.unchecked_lists("p.md", "curate and assemble, then train.") == []


def test_a_page_may_not_name_a_stage_command_model_or_variable_the_code_lacks():
    text = ("`citeworth run curation`, `citeworth checks draft.tex`, `train@longformer_ctx`, "
            "`CITEWORTH_WORKER=2`; fine: `citeworth run works`, `CITEWORTH_MIRROR`, `train@pu`, "
            "`pip install citeworth-model-x`, `citeworth check`")
    problems = " ".join(drift.unknown_names("p.md", text))
    for name in ("'curation'", "'checks'", "'longformer_ctx'", "'CITEWORTH_WORKER'"):
        assert name in problems
    for name in ("'works'", "'CITEWORTH_MIRROR'", "'pu'", "'check'"):
        assert name not in problems


def test_a_page_may_not_put_a_paper_in_a_release_that_does_not_add_it():
    """silver.md said demo-v1 holds the SciPy and SymPy LaTeX papers; demo_releases.tsv adds them in
    demo-v2."""
    old = "On demo-v1 the stage links one citing sentence: SciPy 1.0's sentence cites the SymPy paper."
    [problem] = drift.release_problems("p.md", old)
    assert "SciPy" in problem and "demo-v2" in problem
    assert drift.release_problems("p.md", old.replace("demo-v1", "demo-v2")) == []
    assert drift.release_problems("p.md", "demo-v1 has no LaTeX papers: SciPy comes with demo-v2.") == []


def test_a_failure_table_quotes_only_messages_the_code_still_says():
    table = ("| what you see | why | what to do |\n|---|---|---|\n"
             "| `mirror folder … does not exist (set CITEWORTH_MIRROR= to use the origin URLs)` | a | b |\n"
             "| `mirror folder … has melted into the ground` | a | b |\n")
    [problem] = drift.unknown_messages("p.md", table)
    assert "has melted into the ground" in problem


def test_no_page_speaks_of_how_the_project_was_made():
    for text in ("chosen by measurement, see the issue and", "the 15 minutes of GPU time this work had",
                 "repeated papers (issue 25)", "The issue's older H100 figures"):
        assert drift.history("p.md", text), text
    assert drift.history("p.md", "a known problem of GROBID; this works offline") == []


def test_the_params_files_comments_state_no_corpus_figures():
    for path in [ROOT / "params.yaml", *sorted((ROOT / "params").glob("*.yaml"))]:
        assert drift.config_figures(path.name, path.read_text(encoding="utf-8")) == []
    old = ("  per_field: null  # keep every paragraph: the demo is 60% Biology, 34% Medicine\n"
           "# on the demo's 1,543 training sentences the dev F1 rose; ~13,000 test sentences\n"
           "  max_steps: 150  # ~20 sentences a CPU second; 8,000 of the training sentences\n")
    found = drift.config_figures("params.yaml", old)
    assert [problem.split(":")[1] for problem in found] == ["1", "1", "2", "2"]


def test_a_results_figure_span_is_written_from_its_file():
    works = json.loads((ROOT / "benchmarks" / "results" / "works.json").read_text(encoding="utf-8"))
    text = ("<!-- figure: works.json:quality/queries -->1<!-- /figure --> queries, "
            "<!-- figure: works.json:quality/methods/fused/recall@10|.1% -->x<!-- /figure -->")
    written = docs_reference.with_figures(text, {}, "p.md")
    assert f"-->{works['quality']['queries']:,}<!--" in written
    assert f"-->{works['quality']['methods']['fused']['recall@10']:.1%}<!--" in written
    with pytest.raises(KeyError, match="p.md: figure 'works.json:quality/nope'"):
        docs_reference.with_figures("<!-- figure: works.json:quality/nope -->1<!-- /figure -->", {}, "p.md")


def test_the_environment_reference_lists_every_variable_the_code_reads(generated):
    found = docs_environment.read_by(ROOT)
    assert set(found) == set(docs_environment.VARIABLES), "add or remove it in citeworth/docs/environment.py"
    page = generated[Path("docs/reference/environment.md")]
    assert all(f"| `{name}` |" in page for name in found)
    assert "CITEWORTH_FIELDS" not in found and "CITEWORTH_S3" not in found  # a constant; Airflow's connection


def test_the_root_files_are_in_the_site_and_agree_on_the_version(generated):
    import tomllib

    import yaml

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["version"] == project["version"]
    assert citation["license"] == project["license"]["text"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").strip().startswith("Apache License")
    released = re.findall(r"^## (\d+\.\d+\.\d+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert released[0] == project["version"]
    nav = generated[Path("mkdocs.yml")]
    for page in ("changelog.md", "license.md", "citing.md"):
        assert f": {page}" in nav and Path("docs") / page in generated


def test_the_cited_works_benchmark_measured_the_study_build_the_results_page_shows():
    results = ROOT / "benchmarks" / "results"
    works = json.loads((results / "works.json").read_text(encoding="utf-8"))
    study = json.loads((results / "study.json").read_text(encoding="utf-8"))
    indexed = works["speed"]["whole_study_index"]["counts"]["papers_selected"]
    assert indexed == study["dataset"]["overall"]["papers"]


def test_a_figure_beside_a_results_file_must_be_one_of_its_values():
    """cited-works-index.md gave the study's index 2,843 papers beside works.json; the study has 2,901."""
    works = json.loads((ROOT / "benchmarks" / "results" / "works.json").read_text(encoding="utf-8"))
    papers = works["speed"]["whole_study_index"]["counts"]["papers_indexed"]
    recall = works["quality"]["methods"]["fused"]["recall@10"]
    right = f"Measured (`works.json`): {papers:,} papers, Recall@10 {recall:.3f} ({recall:.1%})."
    assert drift.results_figures("p.md", right) == []
    [problem] = drift.results_figures("p.md", right.replace(f"{papers:,}", f"{papers - 58:,}"))
    assert f"{papers - 58:,} stands beside works.json" in problem
    earlier = "<!-- other -->2,157 papers (an earlier build)<!-- /other -->"
    other = right.replace(f"{papers:,} papers", earlier)
    assert drift.results_figures("p.md", other) == []
    assert drift.results_figures("p.md", "No results file here: 2,843 papers, arXiv 2004.14974.") == []
