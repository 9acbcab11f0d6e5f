"""The blind Table 3 annotation sheet: export hides method and label; score reads them back."""

import csv
import json

import pytest

from citeworth.curate.annotation import export, main, score


def write_dataset(folder, texts):
    folder.mkdir(parents=True)
    samples = [{"text": t, "label": label} for t, label in texts]
    (folder / "train.jsonl").write_text(json.dumps({"samples": samples}) + "\n")
    for split in ("dev", "test"):
        (folder / f"{split}.jsonl").write_text("")


@pytest.fixture
def sheet(tmp_path):
    write_dataset(tmp_path / "ours", [(f"Ours cite {i}.", "check-worthy") for i in range(5)]
                  + [(f"Ours plain {i}.", "non-check-worthy") for i in range(5)])
    write_dataset(tmp_path / "base", [(f"Base cite {i}.", "check-worthy") for i in range(5)]
                  + [(f"Base plain {i}.", "non-check-worthy") for i in range(5)])
    n = export({"ours": tmp_path / "ours", "baseline": tmp_path / "base"}, 3, 7,
               tmp_path / "sheet.csv", tmp_path / "key.csv")
    assert n == 12
    return tmp_path / "sheet.csv", tmp_path / "key.csv"


def fill(path, judge):
    rows = list(csv.DictReader(open(path)))
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=rows[0].keys())
        writer.writeheader()
        for row in rows:
            row["extracted_correct"], row["markers_removed"] = judge(row["sentence"])
            writer.writerow(row)


def test_sheet_is_blind(sheet):
    header = next(csv.reader(open(sheet[0])))
    assert header == ["id", "sentence", "extracted_correct", "markers_removed"]
    methods = [row["method"] for row in csv.DictReader(open(sheet[1]))]
    assert methods.count("ours") == methods.count("baseline") == 6
    assert methods != sorted(methods)  # shuffled together


def test_score_per_method(sheet, capsys):
    fill(sheet[0], lambda s: ("1", "1") if s.startswith("Ours") else ("yes", "0"))
    assert score(*sheet) == {"baseline": {"extracted_correct": 100.0, "markers_removed": 0.0, "n": 6},
                             "ours": {"extracted_correct": 100.0, "markers_removed": 100.0, "n": 6}}
    assert main(["score", "--sheet", str(sheet[0]), "--key", str(sheet[1])]) == 0
    assert "Extracted Correct" in capsys.readouterr().out


def test_unfilled_sheet_is_refused(sheet):
    with pytest.raises(ValueError, match="not completely filled"):
        score(*sheet)
