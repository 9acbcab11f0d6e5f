"""The scaling stage: does more data pay? Each curve's model trained on growing seeded samples of the
training split (the paper has no such curve), every point tested on the whole test split.

A point is fingerprinted (data version, model, size, seed, threads and ``CODE``) and skipped when
current, so an interrupted run resumes and a new size trains only itself. Torch fits share the train
stage's finished fits: a point whose model and size are a Table 4 model's is loaded, not trained
again. Outputs: ``metrics/scaling.json``, ``plots/scaling/points.csv`` and ``scaling.png``,
``reports/scaling.md``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from citeworth.core.fingerprint import current_record, data_version, fingerprint
from citeworth.core.io import write_json, write_text
from citeworth.core.params import to_dict
from citeworth.core.threads import torch_threads
from citeworth.models import data
from citeworth.models.evaluation import bootstrap_f1_interval
from citeworth.models.fitting import fit_model, metrics_for, model_spec
from citeworth.studies.scaling.params import ScalingParams
from citeworth.studies.scaling.plots import curve_figure, points_csv, points_table

log = logging.getLogger(__name__)
# The code a point comes from: this module's import closure (the models), not the plots.
CODE = (__name__,)
SCORES = ("precision", "recall", "f1", "roc_auc", "pr_auc")
FINISHED_FITS = "finished"  # as the train stage keeps them (models.train.FINISHED_FITS)


def scaling(params: ScalingParams) -> dict:
    splits = data.load_splits(params.data_dir)
    version = data_version(data.split_files(params.data_dir))
    curves, trained = {}, 0
    with torch_threads(params.threads):
        for name, curve in params.curves.items():
            if curve is None:
                continue
            points = []
            for size in curve.sizes:
                point, fresh = _point(name, curve.model, size, splits, params, version)
                points.append(point)
                trained += fresh
            curves[name] = {"label": curve.model.label or name, "points": points}
    metrics = {"data_version": version, "seed": params.seed, "curves": curves,
               "test_sentences": len(data.sentences(splits["test"])),
               "train_sentences": len(data.sentences(splits["train"]))}
    write_json(params.metrics_path, metrics)
    plots = Path(params.plots_dir)
    write_text(plots / "points.csv", points_csv(curves))
    curve_figure(curves, plots / "scaling.png")
    write_text(Path(params.table_path), points_table(metrics))
    return {"points_trained": trained, "points": sum(len(c["points"]) for c in curves.values())}


def _point(name: str, model, size: int | None, splits: dict, params: ScalingParams,
           version: str) -> tuple[dict, bool]:
    """One point's result (from its file when current), and whether it was trained now."""
    spec = model_spec(name, model).model_copy(update={"max_train_sentences": size})
    path = Path(params.points_dir) / f"{name}__{size or 'all'}.json"
    expected = fingerprint(CODE, data=version, spec=to_dict(spec), seed=params.seed, threads=params.threads)
    if (saved := current_record(path, expected)) is not None:
        log.info("scaling: %s at %s sentences is current: skipped", name, size or "all")
        return saved, False
    trained = fit_model(spec, splits["train"], splits["dev"], params.seed,
                        out_dir=Path(params.checkpoints_dir) / "scaling" / path.stem,
                        finished_dir=Path(params.checkpoints_dir) / FINISHED_FITS)
    scores = trained.predict_proba(splits["test"])
    test = metrics_for(splits["test"], scores)
    point = {"size": size, "train_sentences": trained.stats["train_sentences"],
             **{key: test[key] for key in SCORES},
             "f1_ci": bootstrap_f1_interval(data.labels(splits["test"]), [scores]),
             "fingerprint": expected}
    write_json(path, point)
    log.info("scaling: %s on %d sentences: F1 %.4f, ROC AUC %.4f", name, point["train_sentences"],
             point["f1"], point["roc_auc"] or 0)
    return point, True
