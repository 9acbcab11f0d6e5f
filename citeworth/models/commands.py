"""``citeworth model export|package|list``: from a trained model to a wheel an author installs.

    citeworth model export study --out exported/study      # the study's best model, ONNX int8 + card
    citeworth model package exported/study --dist dist      # dist/citeworth_model_study_sentence-1.0.0-...whl
    pip install dist/citeworth_model_study_sentence-1.0.0-py3-none-any.whl
    citeworth model list                                    # installed packages and this checkout's models

``export`` needs the pipeline's install (torch, ONNX); ``package`` and ``list`` run anywhere.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

from citeworth.models.exported import ExportError

EXIT_USAGE = 2
PROBE_PARAGRAPHS = 64  # test paragraphs the export checks its fp32 graph on, beside its own probes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citeworth model", description=__doc__.split("\n\n")[0],
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    export = sub.add_parser(
        "export", help="write a trained model as one folder: ONNX graph, settings, card",
        description="Write the model MODEL names (any name `citeworth check --model` takes: a folder, a "
        "model of this checkout such as context, a profile's build such as study or study/context) as one "
        "self-contained folder: its weights and tokenizer (Hugging Face layout), an ONNX graph of its "
        "network, the settings its scorer needs and a model card made from the project's metrics and "
        "data. The fp32 graph must score probe paragraphs as torch does, else nothing is written.")
    export.add_argument("model", help="the trained model (see above)")
    export.add_argument("--out", type=Path, required=True, help="the folder to write (replaced whole)")
    export.add_argument("--precision", choices=("int8", "fp32"), default="int8",
                        help="the graph's weights: int8 (dynamic quantization: a quarter of the size, "
                        "faster on a CPU; benchmarks/results/author.json measures its agreement) or fp32 "
                        "(default: %(default)s)")
    export.add_argument("--name", help="the name of its model package (default: the profile and the model, "
                        "e.g. study-sentence, or the model's name)")
    package = sub.add_parser(
        "package", help="turn an exported folder into a wheel (citeworth-model-<name>)",
        description="Build the wheel citeworth-model-<name> from an exported folder: pip installs it, and "
        "citeworth check and lsp use it without --model (entry point group citeworth.models).")
    package.add_argument("folder", type=Path, help="a folder written by `citeworth model export`")
    package.add_argument("--dist", type=Path, default=Path("dist"),
                         help="where the wheel goes (default: %(default)s)")
    package.add_argument("--version", default="1.0.0", help="the package's version (default: %(default)s)")
    package.add_argument("--name", help="the package's name (default: the one export recorded)")
    listing = sub.add_parser("list", help="the installed model packages and this checkout's models",
                             description="Installed model packages (newest first: the default when this "
                             "folder has no trained model) and the models under models/ here.")
    listing.add_argument("--json", action="store_true", help="one JSON object instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.action == "export":
            return _export(args)
        if args.action == "package":
            return _package(args)
        return _list(args)
    except (ExportError, FileNotFoundError, ValueError) as exc:
        print(f"citeworth model {args.action}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _export(args) -> int:
    try:
        from citeworth.models.card import card_facts, render
        from citeworth.models.export import export_model
        from citeworth.models.scoring import model_folder
    except ImportError as exc:
        print(f"citeworth model export: error: exporting needs the pipeline's install ({exc.name} is "
              "missing): pip install 'citeworth[pipeline]'", file=sys.stderr)
        return EXIT_USAGE
    source = model_folder(args.model)
    facts = card_facts(source)
    name = args.name or _package_name(args.model, source)
    command = f"citeworth model export {args.model} --precision {args.precision}"  # where it went: no matter
    settings = export_model(source, args.out, lambda exported: render(facts, exported, command),
                            args.precision, _probe(facts), name)
    shown = ("name", "package", "kind", "precision", "agreement")
    print(json.dumps({key: settings[key] for key in shown}, indent=2))
    print(f"citeworth model export: {source} -> {args.out} (card: {args.out / 'README.md'}); "
          f"next: citeworth model package {args.out}", file=sys.stderr)
    return 0


def _package_name(reference: str, source: Path) -> str:
    """study -> study-<its best model>; study/context -> study-context; context or a folder -> its name."""
    profile, _, model = str(reference).partition("/")
    if Path(reference).is_dir() or source.name == str(reference):
        return source.name
    return f"{profile}-{model or source.name}"


def _probe(facts: dict) -> list[dict]:
    from citeworth.core.io import read_jsonl
    from citeworth.core.params import load_section

    train = load_section("train", facts["root"] / "params.yaml")
    return list(islice(read_jsonl(facts["root"] / train["data_dir"] / "test.jsonl"), PROBE_PARAGRAPHS))


def _package(args) -> int:
    from citeworth.models.package import package_model

    wheel = package_model(args.folder, args.dist, args.version, args.name)
    print(wheel)
    print(f"citeworth model package: install it with `pip install {wheel}`; `citeworth check` then uses it "
          "where no trained model is in the current folder", file=sys.stderr)
    return 0


def _list(args) -> int:
    from citeworth.core.workspaces import profile_workspace
    from citeworth.models.base import SPEC_FILE
    from citeworth.models.exported import SETTINGS_FILE
    from citeworth.models.package import installed_models
    from citeworth.models.scoring import MODELS_DIR

    installed = sorted(installed_models(), key=lambda m: -m.installed_at)
    best = _best_name(Path("."))
    here = sorted(p.parent.name for name in (SPEC_FILE, SETTINGS_FILE) for p in MODELS_DIR.glob(f"*/{name}"))
    builds = {}  # a params profile's build (make study): --model <profile> names its best
    for profile in sorted(p.stem for p in Path("params").glob("*.yaml")):
        workspace = profile_workspace(Path.cwd(), profile)
        if workspace.is_dir():
            builds[profile] = _best_name(workspace)
    default = f"{MODELS_DIR / best}" if best else (str(installed[0].path) if installed else None)
    if args.json:
        print(json.dumps({"installed": [{"name": m.name, "distribution": m.distribution, "version": m.version,
                                         "path": str(m.path), "installed_at": _when(m.installed_at)}
                                        for m in installed],
                          "checkout": here, "checkout_best": best, "profile_builds": builds,
                          "default": default}, indent=2))
        return 0
    print("installed model packages (newest first):")
    for model in installed:
        print(f"  {model.name:24} {model.distribution} {model.version}  {model.path}  "
              f"({_when(model.installed_at)})")
    if not installed:
        print("  none (pip install a wheel made by `citeworth model package`)")
    print(f"this checkout's models ({MODELS_DIR.resolve()}):")
    for name in here:
        print(f"  {name}" + ("  (best by dev F1)" if name == best else ""))
    if not here:
        print("  none")
    for profile, name in builds.items():
        print(f"profile build {profile!r} (--model {profile}): best {name or 'none yet'}")
    print(f"default for citeworth check: {default or 'none'}")
    return 0


def _best_name(root: Path) -> str | None:
    """The name of the best model by dev F1 of the project at ``root``, if it has one."""
    from citeworth.models.scoring import MODELS_DIR, MODELS_SUMMARY, NoModel, best_model

    try:
        return best_model(root / MODELS_SUMMARY, root / MODELS_DIR).name
    except NoModel:
        return None


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")
