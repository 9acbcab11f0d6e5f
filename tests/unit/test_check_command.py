"""``citeworth check`` end to end through the CLI with a real model: TF-IDF + logistic regression
trained here on a small written dataset and saved as the train stage saves it. Formats (the SARIF
log validated against the official SARIF 2.1.0 schema, a test fixture), exit codes, usage errors,
stdin, baselines, the default model (best dev F1 in metrics/models.json) and the pre-commit hook."""

from __future__ import annotations

import io
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from citeworth import cli
from citeworth.core.schema import CITE_WORTHY, NOT_CITE_WORTHY
from citeworth.drafts import CITED
from citeworth.models.fitting import fit_model, model_spec
from citeworth.models.scoring import NoModel, best_model
from citeworth.models.spec import TfidfSpec

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
MAIN = str(FIXTURES / "check" / "paper" / "main.tex")
MARKDOWN = str(FIXTURES / "check" / "draft.md")
GNU_LINE = re.compile(r"^(.+):(\d+):(\d+): warning: sentence may need a citation "
                      r"\(score (\d\.\d\d)\) \[CW001\]$")
CITING = ["Previous studies reported that {a} varies with {b}.", "It has been shown that {a} depends on {b}.",
          "Several groups reported {a} in {b}."]
PLAIN = ["We measure {a} in our own {b}.", "Table two lists our values of {a} and {b}.",
         "In this section we describe {a} and {b}."]
TOPICS = ["flux", "cells", "yeast", "tissues", "temperature", "samples", "plants"]


def dataset(rng: random.Random, n: int) -> list[dict]:
    records = []
    for _ in range(n):
        samples = []
        for _ in range(3):
            cite = rng.random() < 0.4
            text = rng.choice(CITING if cite else PLAIN).format(a=rng.choice(TOPICS), b=rng.choice(TOPICS))
            samples.append({"text": text, "label": CITE_WORTHY if cite else NOT_CITE_WORTHY})
        records.append({"mag_field_of_study": ["Biology"], "samples": samples})
    return records


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    rng = random.Random(3)
    spec = model_spec("tfidf_lr", TfidfSpec(kind="tfidf_lr"))
    trained = fit_model(spec, dataset(rng, 40), dataset(rng, 8), 1, None)
    directory = tmp_path_factory.mktemp("models") / "tfidf_lr"
    trained.save(directory)
    return directory


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_gnu_lines_a_summary_and_exit_1_when_there_are_more_flags_than_allowed(model_dir, capsys):
    code, out, err = run(capsys, MAIN, MARKDOWN, "--model", str(model_dir), "--threshold", "0")
    lines = out.splitlines()
    assert code == 1 and lines and all(GNU_LINE.match(line) for line in lines)
    assert {GNU_LINE.match(line).group(1) for line in lines} == {
        MAIN, str(FIXTURES / "check" / "paper" / "sections" / "method.tex"), MARKDOWN}
    assert err.splitlines()[-1].startswith(f"citeworth check: {len(lines)} flagged, ")
    assert "sentence/s" not in err  # no progress bar when stderr is not a terminal
    code, out, _ = run(capsys, MAIN, "--model", str(model_dir), "--threshold", "0", "--fail-on", "1000")
    assert code == 0 and out
    code, out, _ = run(capsys, MAIN, "--model", str(model_dir), "--threshold", "1")
    assert (code, out) == (0, "")


def test_jsonl_reports_every_sentence_and_cited_ones_regardless_of_the_model(model_dir, capsys):
    code, out, _ = run(capsys, MAIN, "--model", str(model_dir), "--format", "jsonl", "--threshold", "0")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and len(rows) == 18
    keys = {"file", "line", "column", "end", "text", "score", "status", "fingerprint"}
    assert all(set(r) == keys for r in rows)
    assert all(0 <= r["score"] <= 1 and (r["end"]["line"], r["end"]["column"]) > (r["line"], r["column"])
               for r in rows)
    assert sum(r["status"] == CITED for r in rows) == 6
    assert {r["status"] for r in rows} == {"cited", "flagged", "suppressed"}  # threshold 0: no "ok"


def test_sarif_is_valid_sarif_2_1_0_with_one_result_per_flag(model_dir, capsys, tmp_path):
    schema = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
    out_file = tmp_path / "out" / "check.sarif"
    code, out, _ = run(capsys, MAIN, MARKDOWN, "nope.md", "--model", str(model_dir), "--threshold", "0",
                       "--format", "sarif", "-o", str(out_file))
    log = json.loads(out_file.read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    assert code == 2 and out == ""  # an unreadable input: exit 2, the rest still reported
    run_ = log["runs"][0]
    assert [rule["id"] for rule in run_["tool"]["driver"]["rules"]] == ["CW001"]
    flagged = [r for r in _jsonl(capsys, model_dir, MAIN, MARKDOWN) if r["status"] == "flagged"]
    assert len(run_["results"]) == len(flagged) > 0
    first, row = run_["results"][0], flagged[0]
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (
        row["line"], row["column"], row["end"]["line"], row["end"]["column"])
    assert first["partialFingerprints"] == {"citeworthSentenceText/v1": row["fingerprint"]}
    [notification] = run_["invocations"][0]["toolExecutionNotifications"]
    assert "nope.md: cannot read" in notification["message"]["text"]


def _jsonl(capsys, model_dir, *files) -> list[dict]:
    _, out, _ = run(capsys, *files, "--model", str(model_dir), "--threshold", "0", "--format", "jsonl")
    return [json.loads(line) for line in out.splitlines()]


def test_usage_errors_and_unreadable_inputs_exit_2_with_a_clear_message(model_dir, capsys, tmp_path):
    for args in (["--threshold", "1.5"], ["--fail-on", "-1"], ["--format", "xml"], ["-", "-"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["check", MAIN, *args])
        assert exit_info.value.code == 2
    capsys.readouterr()
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01")
    (tmp_path / "broken.tex").write_text("{" * 3000 + "deep" + "}" * 3000)
    code, out, err = run(capsys, str(tmp_path / "missing.tex"), str(tmp_path / "binary.txt"),
                         str(tmp_path / "broken.tex"), str(tmp_path), "--model", str(model_dir))
    assert code == 2 and out == ""
    assert f"{tmp_path / 'missing.tex'}: cannot read: No such file or directory" in err
    assert "binary.txt: binary data" in err
    assert "broken.tex: cannot parse LaTeX (latex_parse_error)" in err
    assert f"{tmp_path}: cannot read: Is a directory" in err


def test_a_binary_file_named_tex_exits_2_naming_it_without_a_traceback(tmp_path):
    """Through the CLI as a user runs it (was ``KeyError: 'figure.tex'``): a file of binary bytes
    named ``.tex`` is no LaTeX; the message names it, before any model is loaded."""
    (tmp_path / "figure.tex").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff")
    done = subprocess.run([sys.executable, "-m", "citeworth.cli", "check", "figure.tex"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == ("citeworth check: error: figure.tex: cannot parse LaTeX (no_main_tex): "
                                   "figure.tex is binary data (a NUL byte), not LaTeX")


def test_no_trained_model_says_how_to_train_one(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, MARKDOWN)
    assert code == 2 and "metrics/models.json does not exist" in err and "make demo" in err
    code, _, err = run(capsys, MARKDOWN, "--model", "models/none")
    assert code == 2 and "--model models/none: no such folder" in err and "make demo" in err


def test_the_default_model_is_the_best_by_dev_f1_among_saved_ones(model_dir, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    summary = {"a": {"dev_f1": 0.4, "f1": 0.9}, "b": {"dev_f1": 0.6, "f1": 0.1}, "c": {"dev_f1": 0.9}}
    Path("metrics").mkdir()
    Path("metrics/models.json").write_text(json.dumps(summary))
    for name in ("a", "b"):  # c has metrics but no saved model
        shutil.copytree(model_dir, Path("models") / name)
    assert best_model() == Path("models/b")
    code, _, err = run(capsys, MARKDOWN, "--fail-on", "1000")
    assert code == 0 and "model models/b," in err
    Path("metrics/models.json").write_text(json.dumps({"a": {"f1": 0.9}}))
    with pytest.raises(NoModel, match="rerun `citeworth run report`"):
        best_model()


def test_stdin_is_plain_text_unless_told_otherwise(model_dir, capsys, monkeypatch):
    text = "Earlier work reported that flux varies [3]. We measured it again.\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    rows = _jsonl(capsys, model_dir, "-")
    assert [(r["file"], r["line"], r["column"], r["status"]) for r in rows] == [
        ("-", 1, 1, "cited"), ("-", 1, 45, "flagged")]
    tex = "\\begin{document}\nFlux was measured \\cite{x}.\n\\end{document}\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(tex.encode())))
    code, out, _ = run(capsys, "-", "--syntax", "tex", "--model", str(model_dir), "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["file"], r["line"], r["status"]) for r in rows] == [("-", 2, "cited")]


def test_a_written_baseline_keeps_moved_flags_silent_and_reports_edited_ones(model_dir, capsys, tmp_path):
    draft, baseline = tmp_path / "draft.md", tmp_path / "baseline.json"
    draft.write_text("Flux varies across tissues.\n\nCells reported growth at night.\n")
    args = ["--model", str(model_dir), "--threshold", "0"]
    code, out, _ = run(capsys, str(draft), *args, "--write-baseline", str(baseline))
    assert (code, out) == (0, "")  # every current flag is accepted
    assert len(json.loads(baseline.read_text())["flags"]) == 2
    # moved (other line, other paragraph order) and one edited sentence: only the edit is new
    draft.write_text("# Notes\n\nCells reported growth at night.\n\nFlux varies across all tissues.\n")
    code, out, err = run(capsys, str(draft), *args, "--baseline", str(baseline))
    assert code == 1 and out.splitlines() == [
        f"{draft}:5:1: warning: sentence may need a citation "
        f"(score {GNU_LINE.match(out.splitlines()[0]).group(4)}) [CW001]"]
    assert "(1 baselined)" in err
    baseline.write_text("{}")
    code, _, err = run(capsys, str(draft), *args, "--baseline", str(baseline))
    assert code == 2 and "is not a baseline written by `citeworth check --write-baseline`" in err


def test_the_help_explains_formats_suppressions_and_exit_codes(capsys):
    with pytest.raises(SystemExit):
        cli.main(["check", "--help"])
    text = capsys.readouterr().out
    for words in ("% citeworth: ignore", "<!-- citeworth: ignore -->", "--baseline", "metrics/models.json",
                  "SARIF 2.1.0", "Exit status", "[@key]"):
        assert words in text


def test_the_pre_commit_hook_runs_the_check_command_on_drafts():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "citeworth-check")
    assert hook["entry"] == "citeworth check" and hook["require_serial"] is True
    files = re.compile(hook["files"])
    assert files.search("paper/main.tex") and files.search("README.md") and not files.search("fig.png")
