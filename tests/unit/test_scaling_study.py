"""The data-scaling stage on a small dataset this test writes: nested samples, every point on the whole
test split, resumed points, and its outputs."""

from __future__ import annotations

import json

from citeworth.core.io import write_jsonl
from citeworth.studies.scaling.params import ScalingParams
from citeworth.studies.scaling.stage import scaling

PATHS = dict(data_dir="data/citeworth", points_dir="metrics/scaling", metrics_path="metrics/scaling.json",
             plots_dir="plots/scaling", table_path="reports/scaling.md")


def paragraph(i: int) -> dict:
    cited, plain = ("Prior studies reported this effect in mice", "We measured the effect here")
    samples = [{"text": f"{cited} ({i}).", "label": "check-worthy"},
               {"text": f"{plain} ({i}).", "label": "non-check-worthy"}]
    return {"paper_id": f"p{i}", "mag_field_of_study": ["Biology"], "samples": samples, "source": "test"}


def test_points_grow_to_every_sentence_test_on_the_whole_split_and_resume(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for split, n in {"train": 60, "dev": 10, "test": 20}.items():
        write_jsonl(tmp_path / f"data/citeworth/{split}.jsonl", [paragraph(i) for i in range(n)])
    params = ScalingParams(**PATHS, curves={"lr": {"model": {"kind": "tfidf_lr", "label": "LR"},
                                                   "sizes": [10, 40, None]}})

    assert scaling(params) == {"points_trained": 3, "points": 3}
    metrics = json.loads((tmp_path / "metrics/scaling.json").read_text())
    points = metrics["curves"]["lr"]["points"]
    assert [p["train_sentences"] for p in points] == [10, 40, 120]  # two-sentence paragraphs
    assert metrics["test_sentences"] == 40 and metrics["train_sentences"] == 120
    assert all(0 <= p["f1"] <= 1 and p["f1_ci"][0] <= p["f1"] <= p["f1_ci"][1] for p in points)
    assert (tmp_path / "plots/scaling/scaling.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "plots/scaling/points.csv").read_text().splitlines()[1].startswith("lr,10,")
    assert "| LR | 120 |" in (tmp_path / "reports/scaling.md").read_text()

    before = (tmp_path / "metrics/scaling.json").read_bytes()
    (tmp_path / "metrics/scaling/lr__40.json").unlink()  # an interrupted run: one point missing
    assert scaling(params) == {"points_trained": 1, "points": 3}
    assert (tmp_path / "metrics/scaling.json").read_bytes() == before
