"""``citeworth`` command line: ``citeworth run STAGE`` and the tools around the dataset.

A tool (``check``, ``lsp``, ``model`` ...) is handed its arguments before anything of the pipeline
is imported: an author's install (no pipeline) runs them, and starts fast."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from citeworth.core import knobs

# Subcommands contributed by library modules: name -> "module:function(argv) -> int".
TOOLS: dict[str, tuple[str, str]] = {
    "predict": ("citeworth.models.predict:main",
                "score sentences of text/paragraphs/JSONL for cite-worthiness"),
    "table3": ("citeworth.curate.annotation:main", "export / score the blind Table 3 annotation sheet"),
    "airflow": ("citeworth.orchestration.airflow_setup:main",
                "`citeworth airflow setup`: prepare an Airflow installation for the DAGs (pool, unpause)"),
    "cluster": ("citeworth.orchestration.cluster:main",
                "`citeworth cluster up|down|status --dir DIR`: a native multi-host Airflow cluster"),
    "profile": ("citeworth.orchestration.profiles:main",
                "a params profile's own build (`make study`): its workspace and its branch runs/<name>"),
    "promote": ("citeworth.orchestration.experiments:main",
                "make an orchestrated run's experiment (branch runs/<run id>) the defaults"),
    "check": ("citeworth.check.command:main",
              "lint a draft (.tex / .md / .txt): flag sentences that may need a citation"),
    "lsp": ("citeworth.lsp.command:main",
            "a language server for editors: check's flags, citation suggestions, \\cite{} completion"),
    "suggest-index": ("citeworth.suggest.corpus:main",
                      "write the paper index `check --suggest --corpus` suggests papers from"),
    "model": ("citeworth.models.commands:main",
              "`citeworth model export|package|list`: a trained model as a wheel an author installs"),
}


def _parser(stage_help: str = "") -> argparse.ArgumentParser:
    """``stage_help``: the epilog of ``run`` (the parameters of the stage its --help was asked for)."""
    from citeworth.stages import STAGES

    parser = argparse.ArgumentParser(
        prog="citeworth",
        description="Build cite-worthiness datasets from scientific papers and train models on them.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="run one pipeline stage with its params.yaml section",
        description="Run one stage. Parameters come from the stage's section of params.yaml; "
        "-S key=value overrides one; the value is YAML (-S seeds=[1,2] -S 'models=[tfidf_lr]') and a "
        "key path sets one nested key, its siblings kept (-S rules.min_sentences=2), as dvc exp run "
        "-S and the Airflow form's overrides do. `citeworth run STAGE --help` lists the stage's parameters. "
        "--workers is no parameter: how many processes run changes no output.",
        epilog=stage_help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("stage", choices=list(STAGES), help="the stage to run")
    run.add_argument("--params", type=Path, default=Path("params.yaml"),
                     help="params file (default: %(default)s)")
    run.add_argument("-S", "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a parameter of the stage's section (repeatable)")
    run.add_argument("--workers", type=_worker_count, metavar="N",
                     help="how much of the stage's work runs at once (download: files, pdf2tei: PDFs, "
                     "curate: shard processes, train: model processes), for this run; default: "
                     f"${knobs.WORKERS_ENV}, else the stage's own")
    for name, (_, help_text) in TOOLS.items():
        tool = sub.add_parser(name, help=help_text, add_help=False)
        tool.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def _worker_count(text: str) -> int:
    try:
        return knobs.worker_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _stage_help(argv: list[str]) -> str:
    """The parameters of the stage in ``citeworth run STAGE --help`` ("" for any other command)."""
    if argv[:1] != ["run"] or not {"-h", "--help"} & set(argv):
        return ""
    from citeworth.stages import STAGES, params_help

    stage = next((arg for arg in argv[1:] if arg in STAGES), None)
    if stage is None:
        return ""
    params = argv[argv.index("--params") + 1] if "--params" in argv[:-1] else "params.yaml"
    return params_help(stage, Path(params))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from citeworth.download.redaction import install_log_redaction

    install_log_redaction()  # before any logging: -v shows botocore's and urllib3's request details
    # Tools own their argument parsing (and --help); hand them the rest of the line untouched.
    if argv and argv[0] in TOOLS:
        import importlib

        module, _, attr = TOOLS[argv[0]][0].partition(":")
        return getattr(importlib.import_module(module), attr)(argv[1:])
    return _run(argv)


def _run(argv: list[str]) -> int:
    """``citeworth run STAGE``: the pipeline's door (its install: ``pip install 'citeworth[pipeline]'``)."""
    from citeworth.core.errors import InputError, StageFailed
    from citeworth.core.params import ParamsError, parse_assignments
    from citeworth.core.processes import LOG_FORMAT
    from citeworth.stages import UnknownStage, run_stage

    args = _parser(_stage_help(argv)).parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format=LOG_FORMAT,
    )
    try:
        overrides = parse_assignments(args.overrides)
        if args.workers is not None:
            os.environ[knobs.WORKERS_ENV] = str(args.workers)
        summary = run_stage(args.stage, overrides, args.params)
    except (ParamsError, UnknownStage, InputError) as exc:
        print(f"citeworth: {exc}", file=sys.stderr)
        return 2
    except StageFailed as exc:
        print(f"citeworth: stage {args.stage} failed: {exc}", file=sys.stderr)
        return 1
    if summary is not None:
        print(json.dumps(summary, indent=2, sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
