"""The results page builder (citeworth.results) on small result files this test writes: what each
section shows, what it leaves out when a stage has not run, its images, and older versions in git."""

from __future__ import annotations

import io
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from citeworth.results.files import Version, WorkingCopy, head_commit, list_refs, open_files
from citeworth.results.page import build_page, image, render

STATS = {
    "overall": {"sentences": 40, "tokens": 900, "cite_worthy": 10, "non_cite_worthy": 30,
                "cite_worthy_share": 0.25, "min_chars": 30, "max_chars": 300, "mean_chars": 120.5,
                "median_chars": 110.0, "paragraphs": 8, "papers": 4},
    "splits": {"train": {"sentences": 30, "cite_worthy": 7}, "dev": {"sentences": 5, "cite_worthy": 1},
               "test": {"sentences": 5, "cite_worthy": 2, "papers": 1}},
    "fields": {"Biology": {"sentences": 22, "cite_worthy_share": 0.3}, "Physics": {"sentences": 18}},
    "funnel": {"curation": {"papers": 12, "papers_kept": 4, "paragraphs": 300, "paragraphs_in_sections": 90,
                            "candidates": 20, "kept": 8, "sentences": 40,
                            "papers_rejected": {"no_venue": 3, "too_few_citations": 5},
                            "paragraphs_rejected": {"section_not_permitted": 210, "missed_citation": 12}},
               "quarantined": {"malformed_json": 2}, "shards": 3},
    "duplicates": {"copies": 4, "papers": 3, "papers_in_several_copies": 1, "dropped_copies": 1,
                   "dropped_paragraphs": 2, "dropped_by_source": {"tei": 1}},
}
SUMMARY = {
    "success": False, "critical_failures": ["sentences.no_et_al"], "warnings": [],
    "rows": {"sentences": 40, "paragraphs": 8},
    "expectations": {"sentences.no_et_al": {"success": False, "severity": "critical", "rows": 40,
                                            "unexpected_count": 1, "unexpected_percent": 2.5,
                                            "expectation": "expect_column_values_to_not_match_regex"},
                     "sentences.text_present": {"success": True, "severity": "critical", "rows": 40}},
    "residual_markers": {"no_et_al": {"ours_percent": 2.5, "baseline_percent": 7.5}},
    "markers_removed_percent": {"ours": 97.5, "baseline": 90.0},
    "baseline": {"available": True},
}
FAILURES = {"sentences.no_et_al": {"why": "no leftover 'et al.'", "examples": [
    {"paper_id": "p<1>", "text": "As Smith et al. showed."}]}}
MODELS = {
    "tfidf_lr": {"label": "Logistic Regression", "kind": "tfidf_lr", "seeds": 1, "f1": 0.5, "f1_std": 0.0,
                 "precision": 0.4, "precision_std": 0.0, "recall": 0.6667, "recall_std": 0.0,
                 "runtime_seconds": 3.0},
    "sentence": {"label": "MiniLM (sentence)", "kind": "sentence", "seeds": 2, "f1": 0.8, "f1_std": 0.05,
                 "precision": 0.75, "precision_std": 0.1, "recall": 0.9, "recall_std": 0.0,
                 "runtime_seconds": 75.0, "f1_ci": [0.61, 0.93], "roc_auc": 0.871, "pr_auc": 0.702,
                 "test_sentences": 5, "dev_f1": 0.55},
}
DOMAINS = {
    "fields": ["Biology", "Physics"], "seeds": [1], "model": {"label": "MiniLM-Ctx"},
    "matrix": {"Biology": {"Biology": {"f1": 0.4}, "Physics": {"f1": 0.3}},
               "Physics": {"Biology": {"f1": 0.2}, "Physics": {"f1": 0.6}}},
    "data": {"Biology": {"Biology": {"test": {"sentences": 7}}, "Physics": {"test": {"sentences": 18}}},
             "Physics": {"Biology": {"test": {"sentences": 22}}, "Physics": {"test": {"sentences": 4}}}},
    "sigma": {"Biology": 0.1, "Physics": 0.15}, "rho": {"Biology": 0.9, "Physics": None},
    "sigma_in_domain": 0.14, "clusters": {"purity": 0.8, "sentences": {"Biology": 10, "Physics": 6}},
}
TRANSFER = {
    "encoder": "embedded", "variants": ["Base", "Cite"], "seeds": [1, 2],
    "tasks": {"sci-cite": {"display": "SciCite (CLS)", "metric": "macro_f1", "test_items": 32,
                           "test": {"Base": {"mean": 0.4, "std": 0.01},
                                    "Cite": {"mean": 0.45, "std": 0.02}}}},
    "average": {"Base": 0.4, "Cite": 0.45},
    "pretraining": {"Cite": {"steps": 38, "train_sentences": 303}},
}
CUTOFF = {"chosen": {"cutoff": 0.45, "precision": 0.56, "recall": 1.0, "f1": 0.718, "mcc": 0.62, "tp": 14,
                     "fp": 11, "fn": 0, "tn": 24},
          "gold": {"dev_pairs": 49, "test_pairs": 49}, "rule": "max MCC on the gold dev pairs",
          "similarity": {"method": "embedding", "encoder": "embedded"}}
RELATED = {"overall": {"papers": 67, "papers_with_section": 10, "sentences": 230,
                       "share_sentences_with_citation": 0.317, "anchors": 187},
           "per_source": {"unarxive": {"papers": 40, "sentences": 120}}, "lookup": {}}
PR_CSV = "threshold,precision,recall\n0.2,0.4,1.0\n0.5,0.5,0.5\n0.9,1.0,0.25\n"
CONFUSION_CSV = ("actual,predicted\ncheck-worthy,check-worthy\nnon-check-worthy,check-worthy\n"
                 "non-check-worthy,non-check-worthy\ncheck-worthy,non-check-worthy\n")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def write(root: Path, relative: str, content: str | bytes | dict) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, dict):
        content = json.dumps(content)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A project whose every stage ran (params.yaml as shipped names the default paths)."""
    write(tmp_path, "params.yaml", "download: {source: demo, release: demo-v1}\n")
    write(tmp_path, "reports/dataset_stats.json", STATS)
    write(tmp_path, "reports/quality/summary.json", SUMMARY)
    write(tmp_path, "reports/quality/site/failures.json", FAILURES)
    write(tmp_path, "metrics/models.json", MODELS)
    for name in MODELS:
        write(tmp_path, f"plots/models/{name}/pr_curve.csv", PR_CSV)
        write(tmp_path, f"plots/models/{name}/confusion.csv", CONFUSION_CSV)
    write(tmp_path, "metrics/domains.json", DOMAINS)
    write(tmp_path, "plots/domains/heatmap.png", PNG_SIGNATURE + b"heatmap")
    write(tmp_path, "metrics/transfer.json", TRANSFER)
    write(tmp_path, "reports/silver/cutoff.json", CUTOFF)
    for split, lines in (("train", 6), ("dev", 2), ("test", 3)):
        write(tmp_path, f"data/silver/{split}.jsonl", "{}\n" * lines)
    write(tmp_path, "reports/related_work_stats.json", RELATED)
    return tmp_path


class Tables(HTMLParser):
    """Each <table> of a page as rows of cell texts, by the id of the section it is in."""

    def __init__(self):
        super().__init__()
        self.by_section: dict[str, list[list[list[str]]]] = {}
        self.images: list[str] = []
        self.section = self.cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.section = attrs.get("id")
        elif tag == "table":
            self.by_section.setdefault(self.section, []).append([])
        elif tag == "tr":
            self.by_section[self.section][-1].append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag == "img":
            self.images.append(attrs["src"])
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.by_section[self.section][-1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def parse(html: str) -> Tables:
    tables = Tables()
    tables.feed(html)
    return tables


def test_every_section_as_tables_with_the_test_items_behind_them(project):
    html = render(build_page(WorkingCopy(project), refs=[]))
    tables = parse(html)
    [table2] = tables.by_section["dataset"]
    assert table2[0] == ["", "all", "train", "dev", "test", "Biology", "Physics"]
    assert table2[1] == ["Sentences", "40", "30", "5", "5", "22", "18"]
    assert ["Cite-worthy share", "25.00%", "–", "–", "–", "30.00%", "–"] in table2
    assert "n = 5 test sentences" in html

    [table4] = tables.by_section["models"]
    assert table4[0][5:8] == ["F1 95% CI", "ROC AUC", "PR AUC"]
    sentence = next(row for row in table4 if row[0].startswith("MiniLM (sentence)"))
    assert sentence[4:11] == ["80.00 ± 5.00", "61.00–93.00", "87.10", "70.20", "55.00", "1m15s", "5"]
    tfidf = next(row for row in table4 if row[0].startswith("Logistic Regression"))
    assert tfidf[5:9] == ["–", "–", "–", "–"]  # a model trained before those keys existed
    assert sorted(tables.images) == sorted(
        [f"./files/plots/models/{m}/{c}.png" for m in MODELS for c in ("pr_curve", "confusion")]
        + ["./files/plots/domains/heatmap.png", "./files/plots/domains/pca.png"])

    [table5] = tables.by_section["domains"]
    assert table5[1] == ["Biology", "40.00 n = 7", "30.00 n = 18"]
    assert table5[-1] == ["ρ (F1 vs cluster distance)", "0.90", "n/a"]

    [table6] = tables.by_section["transfer"]
    assert table6[1] == ["SciCite (CLS)", "macro_f1", "40.00 ± 1.00", "45.00 ± 2.00", "32"]

    [silver] = tables.by_section["silver"]
    assert silver[1][:4] == ["0.450", "0.560", "1.000", "0.718"]
    assert "n = 49 gold dev pairs" in html and "train 6, dev 2, test 3" in html
    [related] = tables.by_section["related_work"]
    assert related[1][:2] == ["unarxive", "40"] and related[2][:5] == ["all", "67", "10", "230", "31.7%"]


def test_the_gate_verdict_with_its_failures_example_rows_and_marker_rates(project):
    html = render(build_page(WorkingCopy(project), refs=[]))
    assert 'class="verdict failed">failed' in html
    assert "sentences.no_et_al</code> — no leftover &#39;et al.&#39;: 1 of 40 rows (2.5%)" in html
    examples, markers = parse(html).by_section["quality"]
    assert examples == [["paper_id", "text"], ["p<1>", "As Smith et al. showed."]]
    assert "<td>p&lt;1&gt;</td>" in html and "<1>" not in html  # escaped, once
    assert markers[1] == ["no_et_al", "2.50%", "7.50%"] and markers[-1][1:] == ["97.50%", "90.00%"]
    assert 'href="./quality/index.html">Data Docs' in html


def test_funnel_is_an_inline_svg_bar_chart_of_steps_and_rejections(project):
    page = build_page(WorkingCopy(project), refs=[])
    funnel = page.sections["funnel"]
    assert [(b.label, b.value) for b in funnel["steps"].bars][:4] == [
        ("papers read", 12), ("papers kept", 4), ("one copy of each", 3), ("paragraphs read", 300)]
    widths = {b.label: b.width for b in funnel["steps"].bars}
    assert widths["paragraphs read"] == max(widths.values()) and widths["papers kept"] < widths["papers read"]
    assert [b.label for b in funnel["rejections"].bars] == [
        "paragraph: section_not_permitted", "paragraph: missed_citation", "paper: too_few_citations",
        "paper: no_venue"]
    html = render(page)
    assert html.count("<svg") == 2 and "<title>Curation funnel</title>" in html
    assert "malformed_json</code> 2" in html and "<script" not in html  # works with JavaScript off
    assert ("Papers in several copies (across sources, or twice in one): 1; 1 of 4 copies left out "
            "(<code>tei</code> 1) with their 2 paragraphs") in html
    assert "<code>reports/duplicates.json</code>" in html


def test_a_version_assembled_before_duplicates_were_counted_shows_its_funnel_without_them(tmp_path):
    write(tmp_path, "params.yaml", "{}\n")
    write(tmp_path, "reports/dataset_stats.json", {k: v for k, v in STATS.items() if k != "duplicates"})
    page = build_page(WorkingCopy(tmp_path), refs=[])
    assert "one copy of each" not in [b.label for b in page.sections["funnel"]["steps"].bars]
    assert "several copies" not in render(page)


def test_sections_of_stages_that_did_not_run_are_left_out(tmp_path):
    write(tmp_path, "params.yaml", "{}\n")
    write(tmp_path, "reports/dataset_stats.json", STATS)
    page = build_page(WorkingCopy(tmp_path), refs=[])
    assert {k for k, v in page.sections.items() if v} == {"dataset", "funnel"}
    html = render(page)
    for title in ("Table 4", "Table 5", "Table 6", "Quality gate", "Silver", "Related-work"):
        assert title not in html
    assert "No Airflow run recorded" in html


def test_paths_come_from_params_yaml(project):
    (project / "metrics/models.json").rename(project / "metrics/table4.json")
    write(project, "params.yaml", "report: {metrics_path: metrics/table4.json}\n")
    assert build_page(WorkingCopy(project), refs=[]).sections["models"]["rows"]


def test_images_are_the_plot_files_or_charts_drawn_from_their_csv(project):
    import matplotlib.image

    files = WorkingCopy(project)
    assert image(files, "plots/domains/heatmap.png") == PNG_SIGNATURE + b"heatmap"
    for chart in ("pr_curve", "confusion"):
        png = image(files, f"plots/models/sentence/{chart}.png")
        assert png.startswith(PNG_SIGNATURE)
        height, width, _ = matplotlib.image.imread(io.BytesIO(png)).shape
        assert height > 100 and width > 100
        assert image(files, f"plots/models/sentence/{chart}.png") == png  # deterministic
    for refused in ("plots/models/sentence/pr_curve.csv", "metrics/models.png", "plots/../params.png",
                    "/etc/passwd.png", "plots/models/sentence/other.png", "plots/domains/pca.png"):
        assert image(files, refused) is None, refused


def test_versions_are_read_from_git_and_the_dvc_cache(project):
    git(project, "init", "--quiet")
    git(project, "add", "--all")
    git(project, "commit", "--quiet", "-m", "demo-v1 built")
    git(project, "tag", "--annotate", "data/demo/demo-v1", "-m", "dataset from demo release demo-v1")
    # The Data Docs are a DVC output: git ignores them, dvc.lock and the cache hold them.
    git(project, "rm", "--cached", "--quiet", "-r", "reports/quality/site")
    cached = json.dumps(FAILURES).encode()
    listing = json.dumps([{"md5": "ab" + "1" * 30, "relpath": "failures.json"}]).encode()
    write(project, ".dvc/cache/files/md5/ab/" + "1" * 30, cached)
    write(project, ".dvc/cache/files/md5/cd/" + "2" * 26 + ".dir", listing)
    write(project, "dvc.lock", "stages:\n  validate:\n    outs:\n    - path: reports/quality/site\n"
                               f"      md5: cd{'2' * 26}.dir\n")
    git(project, "add", "dvc.lock")
    git(project, "commit", "--quiet", "-m", "site in DVC")
    git(project, "tag", "--annotate", "data/demo/demo-v2", "-m", "demo-v2")
    git(project, "branch", "runs/manual__2024-01-01")
    write(project, "reports/dataset_stats.json", {**STATS, "overall": {**STATS["overall"], "sentences": 99}})

    refs = list_refs(project)
    assert [(r.name, r.kind) for r in refs] == [("data/demo/demo-v2", "data version"),
                                                ("data/demo/demo-v1", "data version"),
                                                ("runs/manual__2024-01-01", "run")]
    assert refs[0].commit == head_commit(project)

    v1 = open_files(project, "data/demo/demo-v1")
    assert isinstance(v1, Version)
    assert v1.read_json("reports/dataset_stats.json")["overall"]["sentences"] == 40
    assert open_files(project, None).read_json("reports/dataset_stats.json")["overall"]["sentences"] == 99
    v2 = open_files(project, "data/demo/demo-v2")
    assert v2.read_json("reports/quality/site/failures.json") == FAILURES  # from the DVC cache
    assert v2.read_bytes("reports/quality/site/index.html") is None
    assert image(v2, "plots/models/tfidf_lr/pr_curve.png").startswith(PNG_SIGNATURE)
    with pytest.raises(LookupError, match="no data version or run 'HEAD~1'"):
        open_files(project, "HEAD~1")  # only listed refs: a query string names no arbitrary revision

    html = render(build_page(v1, refs))
    assert '<option value="data/demo/demo-v1" selected>' in html
    assert "./files/plots/models/sentence/pr_curve.png?version=data/demo/demo-v1" in html


def _demo_v1_and_a_run_branch(project, branch: str) -> None:
    """The project committed and tagged data/demo/demo-v1, and an experiment's branch on it."""
    git(project, "init", "--quiet")
    git(project, "add", "--all")
    git(project, "commit", "--quiet", "-m", "demo-v1 built")
    git(project, "tag", "--annotate", "data/demo/demo-v1", "-m", "dataset from demo release demo-v1")
    git(project, "branch", branch)


def _run_section(html: str) -> str:
    return html.split('<section id="run"', 1)[1].split("<h3>Versions</h3>", 1)[0]


def test_experiments_and_runs_on_the_defaults_are_labelled(project):
    _demo_v1_and_a_run_branch(project, "runs/manual__2024-01-02")
    refs = list_refs(project)
    experiment_badge = '<span class="badge experiment">experiment (runs/manual__2024-01-02)</span>'
    defaults_badge = '<span class="badge defaults">defaults</span>'

    for version in (None, "data/demo/demo-v1"):  # the branch's working copy, a data version
        page = build_page(open_files(project, version), refs, head_commit(project))
        run_section = _run_section(render(page))
        assert defaults_badge in run_section and "experiment (" not in run_section
    page = build_page(open_files(project, "runs/manual__2024-01-02"), refs, head_commit(project))
    assert page.run["experiment"] and page.run["results_of"] == "experiment (runs/manual__2024-01-02)"
    html = render(page)
    assert experiment_badge in _run_section(html) and defaults_badge not in _run_section(html)
    versions = html.split("<h3>Versions</h3>", 1)[1].split("</table>", 1)[0]  # every version, labelled
    assert re.search(r'version=data/demo/demo-v1">data/demo/demo-v1</a></td>\s*<td>'
                     + re.escape(defaults_badge), versions)
    assert re.search(r'version=runs/manual__2024-01-02">runs/manual__2024-01-02</a></td>\s*<td>'
                     + re.escape(experiment_badge), versions)
    assert "runs/manual__2024-01-02 · experiment · " in html and "data/demo/demo-v1 · defaults · " in html


def test_the_run_behind_a_version_is_asked_of_the_airflow_shell(project):
    _demo_v1_and_a_run_branch(project, "runs/scheduled__2024-01-08")
    asked = []

    def find_runs(**query):
        asked.append(query)
        return [{"dag_id": "citeworth_dataset", "run_id": "manual__2024-01-01T00:00:00+00:00",
                 "state": "success", "run_type": "manual", "start_date": "2024-01-01T00:00:01+00:00",
                 "end_date": "2024-01-01T00:09:00+00:00"}]

    refs = list_refs(project)
    page = build_page(WorkingCopy(project), refs, head_commit(project), find_runs)
    assert asked == [{"tag": "data/demo/demo-v1"}]  # the working copy is the version tagged on its commit
    assert (page.run["source"], page.run["release"]) == ("demo", "demo-v1")
    html = render(page)
    assert 'href="../dags/citeworth_dataset/runs/manual__2024-01-01T00%3A00%3A00%2B00%3A00"' in html
    build_page(open_files(project, "runs/scheduled__2024-01-08"), refs, head_commit(project), find_runs)
    assert asked[-1] == {"run_id": "scheduled__2024-01-08"}
    write(project, "later.txt", "x")
    git(project, "add", "later.txt")
    git(project, "commit", "--quiet", "-m", "later")
    page = build_page(WorkingCopy(project), refs, head_commit(project), find_runs)
    assert asked[-1] == {} and page.run["latest_runs"]  # untagged: the latest run of each DAG
    assert "No data version tag on this commit" in render(page)


def test_the_findings_the_scaling_curve_per_collection_scores_and_a_table5_of_subjects(project):
    per_collection = {"elife": {"f1": 0.7, "roc_auc": 0.88, "pr_auc": 0.75},
                      "plos": {"f1": 0.6, "roc_auc": 0.8, "pr_auc": None}}
    models = {**MODELS, "sentence": {**MODELS["sentence"], "per_collection": per_collection}}
    write(project, "metrics/models.json", models)
    write(project, "metrics/findings.json", {"test_sentences": 5, "findings": [
        {"claim": "Context is critical", "metric": "f1", "verdict": "not shown",
         "pairs": [{"better": "context", "worse": "solo", "difference": 1.5, "ci": [-0.4, 3.2]}]}]})
    write(project, "metrics/scaling.json", {"test_sentences": 5, "train_sentences": 30, "curves": {
        "tfidf_lr": {"label": "Logistic Regression", "points": [
            {"train_sentences": 10, "f1": 0.4, "f1_ci": [0.3, 0.5], "roc_auc": 0.7, "pr_auc": 0.5},
            {"train_sentences": 30, "f1": 0.5, "f1_ci": [0.4, 0.6], "roc_auc": 0.75, "pr_auc": 0.55}]}}})
    write(project, "plots/scaling/scaling.png", PNG_SIGNATURE + b"curve")
    write(project, "metrics/domains.json", {**DOMAINS, "group_by": "subject", "out_of_domain_test": "test"})
    html = render(build_page(WorkingCopy(project), refs=[]))
    tables = parse(html)

    shown = tables.by_section["models"][1]
    assert shown == [["Collection", "F1", "ROC AUC", "PR AUC"],
                     ["elife", "70.00", "88.00", "75.00"], ["plos", "60.00", "80.00", "–"]]
    assert "MiniLM (sentence) (the best by dev F1)" in html
    [findings] = tables.by_section["findings"]
    assert findings[1] == ["Context is critical", "not shown", "f1", "context − solo: +1.50 (-0.40 to +3.20)"]
    [scaling] = tables.by_section["scaling"]
    assert scaling[2] == ["Logistic Regression", "30", "50.00", "40.00–60.00", "75.00", "55.00"]
    assert "./files/plots/scaling/scaling.png" in tables.images
    assert image(WorkingCopy(project), "plots/scaling/scaling.png") == PNG_SIGNATURE + b"curve"
    assert "Table 5: F1 across subjects" in html and "the same test papers as the column" in html
