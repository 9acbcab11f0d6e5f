"""Scoring paragraphs with a saved model: what ``citeworth predict`` and ``citeworth check`` share.

- ``load_model``: a model folder, exported (``citeworth model export``: ONNX Runtime, no torch) or
  written by the train stage (torch), or a clear error saying how to get one.
- ``best_model``: the pipeline's best model by dev F1, read from the report stage's ``metrics/models.json``.
- ``model_folder``: what ``--model`` names: a folder, a model of this checkout (``context``), a
  params profile's build (``study``: its best by dev F1; ``study/context``: that model) or an
  installed model package (``study-sentence``); with none, the checkout's best, else the newest
  installed package.
- ``score_paragraphs``: records of the dataset shape (``samples`` of ``text``) in, one array of
  P(cite-worthy) per record out, in chunks so batches stay full and memory stays flat.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from citeworth.core.schema import NOT_CITE_WORTHY

MODELS_SUMMARY = Path("metrics/models.json")  # written by the report stage
MODELS_DIR = Path("models")  # train.models_dir: one folder per model name
CHUNK = 256  # paragraphs scored together
HOW_TO_TRAIN = (
    "install a model package (`pip install citeworth_model_<name>-<version>-py3-none-any.whl`, made by "
    "`citeworth model package`), or train one in a checkout of citeworth (`make demo`, or `make study` "
    "for the study's model), or pass --model DIR (an exported model or a models/<name> folder)"
)


class NoModel(FileNotFoundError):
    """No trained model where one was expected; the message says how to get one."""


def load_model(directory: Path, batch_size: int | None = None):
    """The model saved in ``directory``: an exported one (scored by ONNX Runtime) or a ``TrainedModel``
    (torch); ``batch_size`` overrides its inference batch."""
    from citeworth.models.exported import is_exported, load_exported

    if not Path(directory).exists():
        raise NoModel(f"no trained model at {directory}: {HOW_TO_TRAIN}")
    if is_exported(directory):
        return load_exported(directory, batch_size)
    from citeworth.models.base import SPEC_FILE, load_trained

    if not (Path(directory) / SPEC_FILE).exists():
        raise NoModel(f"{directory} is not a citeworth model: it has neither citeworth_export.json (a model "
                      f"exported by `citeworth model export`) nor {SPEC_FILE} (one the train stage saved)")
    try:
        model = load_trained(directory)
    except ImportError as exc:
        raise NoModel(f"{directory} is a model as the train stage saves it, scored with torch, which this "
                      f"install lacks ({exc.name} is missing): export it where the pipeline is installed "
                      f"(`citeworth model export {directory} --out DIR`) or install the pipeline "
                      "(`pip install 'citeworth[pipeline]'`)") from None
    if batch_size and model.spec.optim is not None:
        model.spec.optim.eval_batch_size = batch_size
    return model


def model_folder(name: Path | str | None, root: Path = Path(".")) -> Path:
    """The model folder ``name`` stands for, in the project at ``root``: a folder (absolute, or
    relative to ``root``), a ``models/<name>`` folder of the project, a profile whose build has its
    own workspace (``study``: that build's best model by dev F1; ``study/<model>``: that model), or
    None: the project's best model by dev F1. NoModel says what there is."""
    from citeworth.core.workspaces import profile_workspace
    from citeworth.models.package import installed_models, newest_installed

    if name is None:
        try:
            return best_model(root / MODELS_SUMMARY, root / MODELS_DIR)
        except NoModel:
            if newest := newest_installed():
                return newest.path
            raise
    for folder in (root / name, root / MODELS_DIR / name):
        if folder.is_dir():
            return folder
    profile, _, model = str(name).partition("/")
    workspace = profile_workspace(root.resolve(), profile)
    if profile and workspace.is_dir():
        if model:
            return load_model_folder(workspace / MODELS_DIR / model)
        return best_model(workspace / MODELS_SUMMARY, workspace / MODELS_DIR)
    installed = {model.name: model.path for model in installed_models()}
    if str(name) in installed:
        return installed[str(name)]
    raise NoModel(f"--model {name}: no such folder, no {MODELS_DIR / str(name)} here ({root.resolve()}), "
                  "no profile build of that name (make study builds 'study') and no installed model package "
                  f"of that name (installed: {', '.join(installed) or 'none'}); {HOW_TO_TRAIN}")


def load_model_folder(folder: Path) -> Path:
    """``folder`` if it exists, else NoModel naming the models beside it."""
    if not folder.is_dir():
        parent = folder.parent
        beside = sorted(p.name for p in parent.iterdir() if p.is_dir()) if parent.is_dir() else []
        raise NoModel(f"no trained model at {folder}; trained there: {', '.join(beside) or 'none'}")
    return folder


def best_model(summary: Path = MODELS_SUMMARY, models_dir: Path = MODELS_DIR) -> Path:
    """The folder of the model with the highest dev F1 in ``summary`` among those saved in
    ``models_dir`` (ties: the first name in sorted order)."""
    if not summary.exists():
        raise NoModel(f"no model: no installed model package, and {summary} does not exist here "
                      f"({Path.cwd()}); {HOW_TO_TRAIN}")
    rows = json.loads(summary.read_text(encoding="utf-8"))
    if any("dev_f1" not in row for row in rows.values()):
        raise NoModel(f"{summary} has no dev_f1 (written by an older report stage): rerun "
                      "`citeworth run report`, or pass --model DIR")
    saved = {name: row for name, row in rows.items() if (models_dir / name).is_dir()}
    if not saved:
        raise NoModel(f"{summary} names {sorted(rows)} but none is saved under {models_dir}/; {HOW_TO_TRAIN}")
    name = max(sorted(saved), key=lambda n: saved[n]["dev_f1"])
    return models_dir / name


def score_paragraphs(model, paragraphs: Iterable[dict], chunk: int = CHUNK,
                     progress: Callable[[int], object] | None = None) -> Iterator[tuple[dict, np.ndarray]]:
    """Each record with the scores of its samples, in order. ``model`` is anything with the
    ``TrainedModel.predict_proba`` interface; ``progress(n)`` is told of every chunk's sentences."""
    for records in _chunks(paragraphs, chunk):
        scores = model.predict_proba([labelled_for_scoring(record) for record in records])
        position = 0
        for record in records:
            count = len(record["samples"])
            yield record, np.asarray(scores[position:position + count], dtype=float)
            position += count
        if progress is not None:
            progress(position)


def labelled_for_scoring(record: dict) -> dict:
    """The record with a placeholder label where a sample has none (models read labels, unused here)."""
    samples = [{"label": NOT_CITE_WORTHY, **sample} for sample in record["samples"]]
    return {**record, "samples": samples}


def _chunks(items: Iterable[dict], size: int) -> Iterator[list[dict]]:
    chunk: list[dict] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
